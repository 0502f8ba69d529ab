//! A repair made in CI reaches a reviewer as a heal bundle: real git (a local bare repository as
//! `origin`, a "CI" clone and a "reviewer" clone), the real binary, real Chromium, the demo
//! with `--drift relocated-save`, and a scripted agent on the fake Anthropic server.
//!
//! The CI clone's run repairs the scenario and files a proposal; `saffron export` (with GitHub
//! Actions' environment) writes the bundle. The reviewer imports it (twice: the second changes
//! nothing), sees where it came from, accepts it, and the next run there is green at zero
//! provider requests. A clone where the scenario changed gets it named stale and not copied; a
//! checkout of another repository refuses the bundle whole and writes nothing.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use saffron_agent::testing::Wire;
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::{Value, json};
use support::agent::{
    Plans, Seen, check_on, click, configure_agent, repaired, runtime, scenario_at, scripted, step, text,
};

const NEEDS_CUSTOMER: &str = "An order needs a customer";
const PROPOSAL: &str = ".saffron/proposals/new-order/an-order-needs-a-customer.json";
const TIMEOUTS: &str = "[timeouts]\naction_ms = 2000\nassertion_ms = 2000\nnavigation_ms = 10000\n";

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Saffron Test")
        .env("GIT_AUTHOR_EMAIL", "test@saffron.invalid")
        .env("GIT_COMMITTER_NAME", "Saffron Test")
        .env("GIT_COMMITTER_EMAIL", "test@saffron.invalid")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

fn saffron(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_saffron"));
    command.args(args).current_dir(dir).env_remove("DEMO_PASSWORD");
    for name in ["GITHUB_ACTIONS", "GITHUB_RUN_ID", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_HEAD_REF"] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    command.output().expect("saffron runs")
}

/// A bare `origin` holding the example project, and clones of it by name.
struct Origin {
    folder: tempfile::TempDir,
}

impl Origin {
    fn new() -> Origin {
        let folder = tempfile::tempdir().expect("a folder");
        let seed = support::example_project("bundles-seed");
        git(folder.path(), &["init", "-q", "--bare", "-b", "main", "origin.git"]);
        git(&seed, &["init", "-q", "-b", "main"]);
        git(&seed, &["add", "-A"]);
        git(&seed, &["commit", "-q", "-m", "the example project"]);
        git(&seed, &["push", "-q", &self_path(folder.path()), "main"]);
        let _ = std::fs::remove_dir_all(&seed);
        Origin { folder }
    }

    fn url(&self) -> String {
        self_path(self.folder.path())
    }

    fn clone(&self, name: &str, password: &str) -> PathBuf {
        let path = self.folder.path().join(name);
        git(self.folder.path(), &["clone", "-q", &self.url(), name]);
        std::fs::write(path.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect("write .env");
        path
    }
}

fn self_path(folder: &Path) -> String {
    folder.join("origin.git").display().to_string()
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{error}: {}", text(output)))
}

/// Everything under `.saffron/` but the recordings: what an import may write.
fn written_by_import(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    support::agent::every_file(&root.join(".saffron"), &mut files);
    let mut names: Vec<String> = files
        .iter()
        .filter_map(|path| path.strip_prefix(root).ok().map(|p| p.to_string_lossy().into_owned()))
        .filter(|path| !path.starts_with(".saffron/cache/"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_repair_made_in_ci_is_exported_imported_accepted_and_green_at_zero_requests() {
    let runtime = runtime();
    let mut config = DemoConfig::default();
    config.drift.insert(saffron_demo::Drift::RelocatedSave);
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let password = demo.config().password.clone();
    let origin = Origin::new();

    // CI: the run repairs the relocated save button and files a proposal.
    let ci = origin.clone("ci", &password);
    let mut plans = Plans::new();
    plans.insert(
        format!("{NEEDS_CUSTOMER} (repair)"),
        vec![
            step(7),
            click("button \"Place order\""),
            step(8),
            check_on("alert", json!({ "check": "text", "text": "Customer is required" })),
            repaired("locator", &[]),
        ],
    );
    let seen = Seen::default();
    let server = runtime.block_on(scripted(Wire::Anthropic, plans, seen.clone()));
    configure_agent(&ci, "anthropic", &server, TIMEOUTS);
    let target = scenario_at(&ci, "features/new_order.saffron", NEEDS_CUSTOMER);
    let run = saffron(&ci, &["run", "--base-url", &demo.url(), &target], &[]);
    assert!(text(&run).contains("1 yellow"), "{}", text(&run));
    assert!(ci.join(PROPOSAL).is_file());
    let proposal_bytes = std::fs::read(ci.join(PROPOSAL)).expect("the proposal");
    let tested = git(&ci, &["rev-parse", "HEAD"]);

    let bundles = tempfile::tempdir().expect("a folder");
    let bundle = bundles.path().join("saffron-bundle.zip");
    let actions = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_RUN_ID", "4242"),
        ("GITHUB_RUN_ATTEMPT", "1"),
        ("GITHUB_SERVER_URL", "https://github.example"),
        ("GITHUB_REPOSITORY", "acme/shop"),
        ("GITHUB_EVENT_NAME", "push"),
        ("GITHUB_REF_TYPE", "branch"),
        ("GITHUB_REF_NAME", "main"),
    ];
    let export = saffron(&ci, &["export", "--out", &bundle.display().to_string()], &actions);
    assert_eq!(export.status.code(), Some(0), "{}", text(&export));
    assert!(text(&export).contains("exported 1 proposal(s)"), "{}", text(&export));

    // The manifest: where it came from, and the proposal's exact bytes by their digest.
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&bundle).expect("bundle")).expect("a zip");
    let manifest: Value = serde_json::from_reader(archive.by_name("manifest.json").expect("manifest")).expect("json");
    assert_eq!(manifest["repository"]["id"]["path"], origin.url().trim_end_matches(".git"), "{manifest:#}");
    assert_eq!(manifest["commit"], tested.as_str(), "{manifest:#}");
    assert_eq!(manifest["branch"], "main");
    assert_eq!(manifest["run"]["link"], "https://github.example/acme/shop/actions/runs/4242/attempts/1");
    let entry = &manifest["proposals"][0];
    assert_eq!(entry["path"], "proposals/new-order/an-order-needs-a-customer.json");
    let mut bundled = Vec::new();
    std::io::Read::read_to_end(
        &mut archive.by_name("proposals/new-order/an-order-needs-a-customer.json").expect("in it"),
        &mut bundled,
    )
    .expect("read");
    assert_eq!(bundled, proposal_bytes, "the proposal travels byte for byte");
    assert!(archive.by_name("report.json").is_ok(), "the run's report travels");

    // The reviewer imports it: the proposal is filed as it was, the report is the CI run's.
    let reviewer = origin.clone("reviewer", &password);
    let import = saffron(&reviewer, &["import", &bundle.display().to_string()], &[]);
    let said = text(&import);
    assert_eq!(import.status.code(), Some(0), "{said}");
    assert!(said.contains("imported   .saffron/proposals/new-order/an-order-needs-a-customer.json"), "{said}");
    assert!(said.contains("CI run 4242 (attempt 1) on main"), "{said}");
    assert_eq!(std::fs::read(reviewer.join(PROPOSAL)).expect("filed"), proposal_bytes);
    let latest: Value =
        serde_json::from_slice(&std::fs::read(reviewer.join(".saffron/reports/latest.json")).expect("latest"))
            .expect("json");
    assert_eq!(latest["imported"]["runId"], "4242", "{latest:#}");
    assert_eq!(latest["yellow"], 1, "{latest:#}");
    let html = std::fs::read_to_string(reviewer.join(".saffron/reports/report.html")).expect("report.html");
    assert!(html.contains("imported from CI run 4242"), "the HTML report says where it came from");
    let status = json_of(&saffron(&reviewer, &["status", "--format", "json"], &[]));
    let pending = status
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == NEEDS_CUSTOMER))
        .expect("the scenario")
        .clone();
    assert_eq!(pending["proposal"]["importedFrom"]["run"]["id"], "4242", "{pending:#}");
    assert_eq!(pending["proposal"]["importedFrom"]["commit"], tested.as_str(), "{pending:#}");

    // Twice: nothing is rewritten, and it says so.
    let before = written_by_import(&reviewer);
    let again = saffron(&reviewer, &["import", &bundle.display().to_string()], &[]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(text(&again).contains("unchanged  .saffron/proposals/new-order"), "{}", text(&again));
    assert!(text(&again).contains("nothing changed"), "{}", text(&again));
    assert_eq!(written_by_import(&reviewer), before);

    // Accepted with no agent at all; the next import says it is accepted already.
    let accept = saffron(&reviewer, &["accept", "new-order/an-order-needs-a-customer", "--base-url", &demo.url()], &[]);
    assert_eq!(accept.status.code(), Some(0), "{}", text(&accept));
    let after_accept = json_of(&saffron(&reviewer, &["import", "--json", &bundle.display().to_string()], &[]));
    assert_eq!(after_accept["proposals"][0]["outcome"], "already-accepted", "{after_accept:#}");
    assert!(!reviewer.join(PROPOSAL).exists(), "an accepted proposal is not filed again");

    // The reviewer's next run replays the accepted recording: green, no provider request.
    configure_agent(&reviewer, "anthropic", &server, TIMEOUTS);
    let requests = server.requests().len();
    let target = scenario_at(&reviewer, "features/new_order.saffron", NEEDS_CUSTOMER);
    let run = saffron(&reviewer, &["run", "--base-url", &demo.url(), &target], &[]);
    assert!(text(&run).contains("1 scenario(s): 1 green"), "{}", text(&run));
    assert_eq!(server.requests().len(), requests, "the replay asked the agent");

    // A clone where the scenario changed since: the proposal is named stale, not copied.
    let moved_on = origin.clone("moved-on", &password);
    let feature = moved_on.join("features/new_order.saffron");
    let changed = std::fs::read_to_string(&feature).expect("feature").replace(
        &format!("Scenario: {NEEDS_CUSTOMER}"),
        &format!("Scenario: {NEEDS_CUSTOMER}\n    Given nothing else"),
    );
    std::fs::write(&feature, changed).expect("edit the feature");
    let stale = saffron(&moved_on, &["import", &bundle.display().to_string()], &[]);
    assert_eq!(stale.status.code(), Some(0), "{}", text(&stale));
    assert!(text(&stale).contains("STALE      .saffron/proposals/new-order"), "{}", text(&stale));
    assert!(!moved_on.join(PROPOSAL).exists(), "a stale proposal is not copied");

    // Another repository's checkout: refused whole, nothing written.
    let other = origin.clone("other", &password);
    git(&other, &["remote", "set-url", "origin", "https://github.com/someone/else.git"]);
    let foreign = saffron(&other, &["import", &bundle.display().to_string()], &[]);
    assert_eq!(foreign.status.code(), Some(2), "{}", text(&foreign));
    assert!(text(&foreign).contains("no remote of this checkout is that repository"), "{}", text(&foreign));
    assert!(written_by_import(&other).is_empty(), "{:?}", written_by_import(&other));
    // Unless the bundle's repository is one of its remotes (a fork with an upstream remote).
    git(&other, &["remote", "add", "upstream", &origin.url()]);
    let fork = saffron(&other, &["import", &bundle.display().to_string()], &[]);
    assert_eq!(fork.status.code(), Some(0), "{}", text(&fork));

    let _ = runtime.block_on(demo.shutdown());
}
