//! A repair made in CI reaches a reviewer as a heal bundle: real git (a local bare repository as
//! `origin`, a "CI" clone and a "reviewer" clone), the real binary, real Chromium, the demo
//! with `--drift relocated-save`, and a scripted agent on the fake Anthropic server.
//!
//! The CI clone's run repairs the scenario and files a proposal; `saffron export` (with GitHub
//! Actions' environment) writes the bundle. The reviewer imports it (twice: the second changes
//! nothing), sees where it came from, accepts it, and the next run there is green at zero
//! provider requests. A clone where the scenario changed gets it named stale and not copied; a
//! checkout of another repository refuses the bundle whole and writes nothing.

use crate::support;

use serde_json::Value;
use support::agent::{configure_agent, scenario_at, text};
use support::ci::{ACTIONS_PUSH, NEEDS_CUSTOMER, PROPOSAL, Repaired, TIMEOUTS, git, saffron, written_by_import};

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{error}: {}", text(output)))
}

#[test]
fn a_repair_made_in_ci_is_exported_imported_accepted_and_green_at_zero_requests() {
    let repaired = Repaired::new();
    let (ci, origin, demo) = (&repaired.ci, &repaired.origin, &repaired.demo);
    let password = repaired.password();
    let tested = git(ci, &["rev-parse", "HEAD"]);

    let bundles = tempfile::tempdir().expect("a folder");
    let bundle = bundles.path().join("saffron-bundle.zip");
    let export = saffron(ci, &["export", "--out", &bundle.display().to_string()], &ACTIONS_PUSH);
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
    assert_eq!(bundled, repaired.proposal, "the proposal travels byte for byte");
    assert!(archive.by_name("report.json").is_ok(), "the run's report travels");

    // The reviewer imports it: the proposal is filed as it was, the report is the CI run's.
    let reviewer = origin.clone("reviewer", &password);
    let import = saffron(&reviewer, &["import", &bundle.display().to_string()], &[]);
    let said = text(&import);
    assert_eq!(import.status.code(), Some(0), "{said}");
    assert!(said.contains("imported   .saffron/proposals/new-order/an-order-needs-a-customer.json"), "{said}");
    assert!(said.contains("CI run 4242 (attempt 1) on main"), "{said}");
    assert_eq!(std::fs::read(reviewer.join(PROPOSAL)).expect("filed"), repaired.proposal);
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
    let listed = json_of(&saffron(&reviewer, &["proposals", "--format", "json"], &[]));
    assert_eq!(listed["proposals"][0]["importedFrom"]["run"]["id"], "4242", "{listed:#}");
    assert!(text(&saffron(&reviewer, &["proposals"], &[])).contains("imported from CI run 4242"));

    // CI's run history reached the reviewer: the repaired scenario's run, yellow.
    let history = json_of(&saffron(&reviewer, &["history", "--format", "json"], &[]));
    let repaired_history = history["scenarios"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == NEEDS_CUSTOMER))
        .expect("the scenario's history came along")
        .clone();
    assert_eq!(repaired_history["strip"], "~", "{history:#}");

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
    configure_agent(&reviewer, "anthropic", &repaired.server, TIMEOUTS);
    let requests = repaired.server.requests().len();
    let target = scenario_at(&reviewer, "features/new_order.saffron", NEEDS_CUSTOMER);
    let run = saffron(&reviewer, &["run", "--base-url", &demo.url(), &target], &[]);
    assert!(text(&run).contains("1 scenario(s): 1 green"), "{}", text(&run));
    assert_eq!(repaired.server.requests().len(), requests, "the replay asked the agent");

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
}

/// `saffron runs --json` lists the branch's runs through gh with the proposals from each still
/// pending here; `saffron import --run ID` downloads the run's bundles into a private folder,
/// imports them and deletes the download. Without gh, both say what to do, as JSON too.
#[test]
fn runs_are_listed_through_gh_and_a_run_is_imported_by_its_id() {
    let repaired = Repaired::new();
    let tools = tempfile::tempdir().expect("a folder");
    let bundle = tools.path().join("made-in-ci.zip");
    let export = saffron(&repaired.ci, &["export", "--out", &bundle.display().to_string()], &ACTIONS_PUSH);
    assert_eq!(export.status.code(), Some(0), "{}", text(&export));
    let runs = tools.path().join("runs.json");
    std::fs::write(
        &runs,
        serde_json::to_string(&serde_json::json!([
            { "databaseId": 4242, "displayTitle": "Fix the cart", "workflowName": "e2e", "number": 17, "status": "completed",
              "conclusion": "success", "event": "push", "headBranch": "main", "headSha": "abc", "url": "https://github.example/acme/shop/actions/runs/4242" },
            { "databaseId": 4241, "displayTitle": "Fix the cart", "workflowName": "e2e", "number": 16, "status": "in_progress",
              "conclusion": "", "event": "push", "headBranch": "main", "headSha": "abd", "url": "https://github.example/acme/shop/actions/runs/4241" }
        ]))
        .expect("json"),
    )
    .expect("runs");
    let (bin, log) = support::ci::stand_in_gh(tools.path());
    let path = support::ci::path_with(&bin);
    let (runs_file, bundle_file) = (runs.display().to_string(), bundle.display().to_string());
    let env = [("PATH", path.as_str()), ("GH_RUNS", runs_file.as_str()), ("GH_BUNDLE", bundle_file.as_str())];
    let reviewer = repaired.origin.clone("reviewer", &repaired.password());

    let listed = json_of(&saffron(&reviewer, &["runs", "--json"], &env));
    assert_eq!(listed["branch"], "main");
    assert_eq!(listed["runs"][0]["id"], "4242", "{listed:#}");
    assert_eq!(listed["runs"][0]["conclusion"], "success");
    assert_eq!(listed["runs"][1]["status"], "in_progress");
    assert_eq!(listed["runs"][0]["pending"], serde_json::json!([]), "nothing imported yet");

    let import = saffron(&reviewer, &["import", "--run", "4242"], &env);
    assert_eq!(import.status.code(), Some(0), "{}", text(&import));
    assert_eq!(std::fs::read(reviewer.join(PROPOSAL)).expect("filed"), repaired.proposal);
    let asked = std::fs::read_to_string(&log).expect("gh was called");
    assert!(asked.contains("run\ndownload\n4242\n--pattern\nsaffron-bundle*\n--dir\n"), "{asked}");
    let download = std::fs::read_to_string(format!("{}.dir", log.display())).expect("the download folder");
    assert!(!std::path::Path::new(download.trim()).exists(), "the download is deleted once imported");

    let listed = json_of(&saffron(&reviewer, &["runs", "--json"], &env));
    assert_eq!(listed["runs"][0]["pending"], serde_json::json!([PROPOSAL]), "{listed:#}");
    assert_eq!(listed["runs"][1]["pending"], serde_json::json!([]));

    // A run id is digits: anything else never reaches gh.
    let hostile = saffron(&reviewer, &["import", "--run", "42;rm -rf ~"], &env);
    assert_eq!(hostile.status.code(), Some(2), "{}", text(&hostile));
    // No gh: a problem an editor can show, with exit 2.
    let no_gh = saffron(&reviewer, &["runs", "--json"], &[("PATH", "/usr/bin:/bin")]);
    assert_eq!(no_gh.status.code(), Some(2), "{}", text(&no_gh));
    assert_eq!(json_of(&no_gh)["problem"]["kind"], "no-gh");
}
