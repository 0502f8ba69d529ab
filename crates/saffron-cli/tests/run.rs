//! `saffron run` and `saffron demo` end to end: the real binary replays the example project's
//! recordings in headless Chromium against the demo app.

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use saffron_demo::{Defect, DemoConfig, DemoServer, Drift, Fault};
use support::copy_dir;

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn saffron(args: &[&str], password: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(args)
        .current_dir(repository())
        .env("DEMO_PASSWORD", password)
        .output()
        .expect("saffron runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime")
}

#[test]
fn the_demo_replays_every_example_scenario_green() {
    let output =
        Command::new(env!("CARGO_BIN_EXE_saffron")).arg("demo").current_dir(repository()).output().expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("18 scenario(s): 18 green, 0 yellow, 0 red, 0 blocked"), "{all}");
    // Every recorded signal of the example recordings still describes the demo.
    assert!(!all.contains("drift:"), "{all}");
    let reports = repository().join(".saffron/reports");
    let latest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("latest.json")).expect("latest.json"))
            .expect("json");
    assert_eq!(latest["green"], 18);
    let junit = std::fs::read_to_string(reports.join("junit.xml")).expect("junit.xml");
    assert_eq!(junit.matches("<testcase ").count(), 18);
    assert!(junit.contains("failures=\"0\""));
    assert!(std::fs::read_to_string(reports.join("report.md")).expect("md").contains("**18 green**"));
    assert!(std::fs::read_to_string(reports.join("report.html")).expect("html").contains("18 green"));
}

#[test]
fn a_wrong_total_is_red_never_green() {
    let runtime = runtime();
    let config = DemoConfig { defects: [Defect::WrongTotal].into(), ..DemoConfig::default() };
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let output = saffron(&["run", "--base-url", &server.url(), "features/new_order.saffron"], &password);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("✗ red") && all.contains("the saved total is"), "{all}");
    assert!(all.contains("expected text \"Total: €13.50\""), "{all}");
    // The secret never reaches the output.
    assert!(!all.contains(&password), "{all}");
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn a_renamed_label_passes_through_a_lower_tier_and_reports_drift() {
    let runtime = runtime();
    let config = DemoConfig { drift: [Drift::RenamedLabel].into(), ..DemoConfig::default() };
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let output = saffron(&["run", "--base-url", &server.url(), "features/sign_in.feature:5"], &password);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("✓ green") && all.contains("drift:"), "{all}");
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn a_missing_browser_is_blocked_not_a_verdict() {
    let runtime = runtime();
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/sign_in.feature"])
        .current_dir(repository())
        .env("SAFFRON_CHROMIUM", "/nonexistent/chromium")
        .output()
        .expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("! blocked") && all.contains("apt-get install chromium"), "{all}");
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn an_unrecorded_scenario_without_an_agent_is_blocked_with_needs_recording() {
    let runtime = runtime();
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let output = saffron(&["run", "--base-url", &server.url(), "--tags", "@wip"], "unused");
    let all = text(&output);
    // Not a verdict about the application: blocked, exit 2.
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("! blocked") && all.contains("Refund an order") && all.contains("needs recording"), "{all}");
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn secrets_come_from_the_project_env_file() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let project = std::env::temp_dir().join(format!("saffron-dotenv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    copy_dir(&repository().join("features"), &project.join("features"));
    copy_dir(&repository().join(".saffron/cache"), &project.join(".saffron/cache"));
    std::fs::write(project.join(".env"), format!("# the demo account\nDEMO_PASSWORD=\"{password}\"\n")).expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/sign_in.feature:5"])
        .current_dir(&project)
        .env_remove("DEMO_PASSWORD")
        .output()
        .expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

fn project_copy(name: &str) -> std::path::PathBuf {
    let project = std::env::temp_dir().join(format!("saffron-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    copy_dir(&repository().join("features"), &project.join("features"));
    copy_dir(&repository().join(".saffron/cache"), &project.join(".saffron/cache"));
    project
}

#[test]
fn hooks_run_around_the_run_and_a_failed_setup_stops_it() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let project = project_copy("hooks");
    std::fs::write(
        project.join("saffron.toml"),
        format!(
            "base_url = \"{}\"\n[hooks]\nsetup = \"echo $SAFFRON_BASE_URL > setup.txt\"\nteardown = [\"touch teardown.txt\"]\n",
            server.url()
        ),
    )
    .expect("write");
    let run = |project: &Path| {
        Command::new(env!("CARGO_BIN_EXE_saffron"))
            .args(["run", "features/sign_in.feature:11"])
            .current_dir(project)
            .env("DEMO_PASSWORD", &password)
            .output()
            .expect("runs")
    };
    let output = run(&project);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let setup = std::fs::read_to_string(project.join("setup.txt")).expect("setup ran");
    assert_eq!(setup.trim(), server.url(), "the base URL from saffron.toml reached the hook");
    assert!(project.join("teardown.txt").exists());

    std::fs::remove_file(project.join("teardown.txt")).expect("remove");
    std::fs::write(project.join("saffron.toml"), "[hooks]\nsetup = \"exit 7\"\nteardown = \"touch teardown.txt\"\n")
        .expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/sign_in.feature"])
        .current_dir(&project)
        .output()
        .expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("setup failed, no scenario was run") && !all.contains("green"), "{all}");
    assert!(project.join("teardown.txt").exists(), "teardown runs after a failed setup");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn shards_split_the_suite_without_overlap() {
    let runtime = runtime();
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let names = |shard: &str| {
        let output = saffron(
            &["run", "--base-url", &server.url(), "--shard", shard, "--format", "json", "--tags", "@wip or @auth"],
            "unused",
        );
        let results: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
        results
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r["name"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    let (first, second) = (names("1/2"), names("2/2"));
    assert_eq!(first.len() + second.len(), 3, "{first:?} {second:?}");
    assert!(first.iter().all(|name| !second.contains(name)));
    let bad = saffron(&["run", "--base-url", &server.url(), "--shard", "3/2"], "unused");
    assert_eq!(bad.status.code(), Some(2));
    let _ = runtime.block_on(server.shutdown());
}

/// Replays `targets` of the repository's project against `server`; the output and the
/// requests the app saw.
fn run_against(server: &DemoServer, password: &str, targets: &[&str]) -> (Output, Vec<saffron_demo::RequestLog>) {
    let mut args = vec!["run", "--workers", "3", "--base-url"];
    let url = server.url();
    args.push(&url);
    args.extend_from_slice(targets);
    let output = saffron(&args, password);
    (output, server.requests())
}

fn posts_of_orders(requests: &[saffron_demo::RequestLog]) -> usize {
    requests.iter().filter(|r| r.method == "POST" && r.path == "/api/orders").count()
}

#[test]
fn every_drift_switch_passes_through_a_lower_tier_and_reports_drift() {
    let runtime = runtime();
    // The others need a heal: tests/drift_needs_heal.rs.
    for drift in Drift::ALL.iter().filter(|drift| !drift.needs_heal()) {
        let config = DemoConfig { drift: [*drift].into(), ..DemoConfig::default() };
        let password = config.password.clone();
        let server = runtime.block_on(DemoServer::start(config)).expect("demo");
        let (output, _) = run_against(&server, &password, &["--tags", "not @wip"]);
        let all = text(&output);
        assert_eq!(output.status.code(), Some(0), "{drift}: {all}");
        assert!(all.contains("18 scenario(s): 18 green"), "{drift}: {all}");
        assert!(
            all.contains("found by ") && all.contains(" (recorded: "),
            "{drift} reports the tier that fired: {all}"
        );
        let _ = runtime.block_on(server.shutdown());
    }
}

#[test]
fn every_defect_and_a_failing_save_are_red_and_the_save_is_never_sent_twice() {
    let runtime = runtime();
    let cases = [
        (DemoConfig { defects: [Defect::WrongTotal].into(), ..DemoConfig::default() }, "found \"Total: €14.50\""),
        (
            DemoConfig { defects: [Defect::MissingConfirmation].into(), ..DemoConfig::default() },
            "I see the confirmation \"Order saved\"",
        ),
        (
            DemoConfig { defects: [Defect::SaveFails].into(), ..DemoConfig::default() },
            "the orders list shows an order for",
        ),
        (DemoConfig { faults: [Fault::ServerError].into(), ..DemoConfig::default() }, "found POST /api/orders → 500"),
    ];
    for (config, expected) in cases {
        let name = format!("{:?}{:?}", config.defects, config.faults);
        let password = config.password.clone();
        let server = runtime.block_on(DemoServer::start(config)).expect("demo");
        // The Outline's two rows each save one order.
        let (output, requests) = run_against(&server, &password, &["features/new_order.saffron"]);
        let all = text(&output);
        assert_eq!(output.status.code(), Some(1), "{name}: {all}");
        let verdicts =
            |prefix: &str| all.lines().filter(|l| l.starts_with(prefix) && l.contains("Create an order")).count();
        assert_eq!((verdicts("✗ red"), verdicts("✓ green")), (2, 0), "{name}: {all}");
        assert!(all.contains(expected), "{name}: {all}");
        if name.contains("ServerError") {
            // What the page logged is shown with the failure: here the save's 500.
            assert!(all.contains("the page logged "), "{name}: {all}");
            assert!(
                all.contains("Failed to load resource: the server responded with a status of 500"),
                "{name}: {all}"
            );
        }
        assert_eq!(posts_of_orders(&requests), 2, "{name}: one POST per row, never repeated");
        let _ = runtime.block_on(server.shutdown());
    }
}

#[test]
fn slow_responses_are_waited_out_and_a_slow_save_is_not_repeated() {
    let runtime = runtime();
    // Every API answer is slow, and the export's first status request always finds it running:
    // at least one not-ready answer must be let pass.
    let config = DemoConfig { faults: [Fault::Latency].into(), latency_ms: 250, ..DemoConfig::default() };
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let (output, requests) =
        run_against(&server, &password, &["features/new_order.saffron:22", "features/orders.saffron:30"]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("2 scenario(s): 2 green"), "{all}");
    assert_eq!(posts_of_orders(&requests), 1, "{all}");
    // The export is polled until READY: the wait let the not-ready answers pass by.
    let polls = requests.iter().filter(|r| r.method == "GET" && r.path.starts_with("/api/exports/")).count();
    assert!(polls >= 2, "polled {polls} time(s)");
    let _ = runtime.block_on(server.shutdown());
}

/// Files a proposal for "A wrong password is refused" in `project` whose recording is the
/// working one, after breaking the committed recording: what a healed run leaves behind.
fn file_pending_proposal(project: &Path) -> std::path::PathBuf {
    let store = saffron_recording::Store::open(project).expect("store");
    let cache = project.join(".saffron/cache/sign-in/a-wrong-password-is-refused.json");
    let working = store.read_recording(&cache).expect("recording");
    // The sign-in button as an older page named it: every signal misses.
    let broken_json = std::fs::read_to_string(&cache).expect("read").replace(
        "\"role\": \"button\",\n            \"name\": \"Sign in\",\n            \"testId\": \"sign-in\",\n            \"css\": [\n              \"form button[type=submit]\"\n            ]",
        "\"role\": \"button\",\n            \"name\": \"Log in\",\n            \"testId\": \"log-in\",\n            \"css\": [\n              \"#log-in\"\n            ]",
    );
    assert!(broken_json.contains("Log in"), "the committed recording is broken: {broken_json}");
    std::fs::write(&cache, broken_json).expect("write");
    let broken = store.read_recording(&cache).expect("recording");
    let proposal = saffron_recording::Proposal::file(
        saffron_recording::ProposalDraft {
            scenario: saffron_recording::ScenarioRef {
                feature: "features/sign_in.feature".into(),
                name: "A wrong password is refused".into(),
                cache_path: ".saffron/cache/sign-in/a-wrong-password-is-refused.json".into(),
            },
            recording: working,
            feature_edits: Vec::new(),
            narrative: "The error message is checked as the page shows it.".into(),
            adaptations: Vec::new(),
            usage: None,
            filed_at: None,
            unverified: None,
        },
        Some(&broken),
    );
    let path = project.join(".saffron/proposals/sign-in/a-wrong-password-is-refused.json");
    store.write_proposal(&path, &proposal).expect("write proposal");
    path
}

#[test]
fn a_pass_through_a_pending_proposal_is_yellow_and_strict_fails_it() {
    let runtime = runtime();
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let project = project_copy("yellow");
    let proposal = file_pending_proposal(&project);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--base-url"];
        let url = server.url();
        args.push(&url);
        args.extend_from_slice(extra);
        args.push("features/sign_in.feature:11");
        Command::new(env!("CARGO_BIN_EXE_saffron")).args(&args).current_dir(&project).output().expect("runs")
    };
    let output = run(&[]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("~ yellow") && all.contains("pending proposal .saffron/proposals/sign-in/"), "{all}");
    assert!(all.contains("--strict fails the run"), "{all}");
    let latest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".saffron/reports/latest.json")).expect("latest.json"),
    )
    .expect("json");
    assert_eq!((latest["yellow"].as_u64(), latest["green"].as_u64()), (Some(1), Some(0)));

    let strict = run(&["--strict"]);
    assert_eq!(strict.status.code(), Some(1), "{}", text(&strict));

    // A proposal edited after it was filed proves nothing: the committed (broken) recording runs.
    let edited = std::fs::read_to_string(&proposal)
        .expect("read")
        .replace("\"text\": \"Email or password is wrong\"", "\"text\": \"Email or password is wrong!\"");
    std::fs::write(&proposal, edited).expect("write");
    let stale = run(&[]);
    let all = text(&stale);
    assert_eq!(stale.status.code(), Some(1), "{all}");
    assert!(all.contains("✗ red") && all.contains("click button \"Log in\""), "{all}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn an_interrupted_run_still_runs_the_teardown_hooks() {
    use std::io::BufRead;
    let runtime = runtime();
    // Slow enough that the run is still replaying when the signal arrives.
    let config = DemoConfig { faults: [Fault::Latency].into(), latency_ms: 3000, ..DemoConfig::default() };
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let project = project_copy("interrupt");
    std::fs::write(project.join("saffron.toml"), "[hooks]\nteardown = \"touch teardown.txt\"\n").expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/orders.saffron"])
        .current_dir(&project)
        .env("DEMO_PASSWORD", &password)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let announced = lines.by_ref().map_while(Result::ok).any(|line| line.starts_with("replaying "));
    assert!(announced, "the run announces itself before replaying");
    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(killed.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("exits");
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(rest.iter().any(|line| line.contains("interrupted")), "{rest:?}");
    assert!(project.join("teardown.txt").exists(), "teardown ran after the interrupt");
    assert!(!project.join(".saffron/reports/latest.json").exists(), "no report of a run cut short");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

/// A project whose feature has a Fixture that saves an order its scenario then looks for.
fn project_with_a_fixture(name: &str) -> std::path::PathBuf {
    let project = std::env::temp_dir().join(format!("saffron-fixture-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(project.join("features")).expect("mkdir");
    std::fs::copy(repository().join("features/shared.steps.saffron"), project.join("features/shared.steps.saffron"))
        .expect("copy");
    std::fs::write(
        project.join("features/seeded.saffron"),
        "Feature: Seeded orders\n\n  Fixture: an order for Ada Fixture\n    StepSet signed in as the demo user\n    \
         When I save an order for \"Ada Fixture\"\n\n  Scenario: The seeded order is listed\n    \
         StepSet signed in as the demo user\n    Then the orders list shows an order for \"Ada Fixture\"\n",
    )
    .expect("write");
    // Both recordings are made of the example project's own recorded actions.
    let example: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repository().join(".saffron/cache/new-order/create-an-order-for-customer.json"))
            .expect("read"),
    )
    .expect("json");
    let step = |index: usize| example["steps"][index].clone();
    let signed_in: Vec<serde_json::Value> = (0..3).map(step).collect();
    let mut save = serde_json::json!({
        "kind": "action",
        "text": "I save an order for \"Ada Fixture\"",
        "actions": [{ "type": "goto", "url": "/orders/new" }],
    });
    let mut fill_customer = step(6)["actions"][0].clone();
    fill_customer["value"] = "Ada Fixture".into();
    for action in [fill_customer, step(7)["actions"][0].clone(), step(7)["actions"][1].clone()] {
        save["actions"].as_array_mut().expect("array").push(action);
    }
    let mut listed = step(11);
    listed["text"] = "the orders list shows an order for \"Ada Fixture\"".into();
    let listed_json = listed.to_string().replace("<customer>", "Ada Fixture");
    listed = serde_json::from_str(&listed_json).expect("json");
    let store = saffron_recording::Store::open(&project).expect("store");
    let feature = "features/seeded.saffron";
    for (name, last) in [("an order for Ada Fixture", save), ("The seeded order is listed", listed)] {
        let steps: Vec<saffron_recording::RecordedStep> = signed_in
            .iter()
            .cloned()
            .chain([last])
            .map(|value| serde_json::from_value(value).expect("a recorded step"))
            .collect();
        let recording = saffron_recording::Recording::new(feature, name, steps);
        let path =
            store.recording_path(&saffron_recording::feature_slug(feature), &saffron_recording::scenario_slug(name));
        store.write_recording(&path, &recording).expect("write recording");
    }
    project
}

#[test]
fn a_fixture_runs_once_before_its_scenarios_and_its_failure_is_their_floor() {
    let runtime = runtime();
    let project = project_with_a_fixture("floor");
    let run = |server: &DemoServer, password: &str| {
        Command::new(env!("CARGO_BIN_EXE_saffron"))
            .args(["run", "--base-url", &server.url(), "features/seeded.saffron"])
            .current_dir(&project)
            .env("DEMO_PASSWORD", password)
            .output()
            .expect("runs")
    };
    let status =
        Command::new(env!("CARGO_BIN_EXE_saffron")).arg("status").current_dir(&project).output().expect("status");
    assert!(text(&status).contains("2 fresh"), "{}", text(&status));

    // The scenario finds the order only the Fixture saved: the Fixture ran first, once.
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let output = run(&server, &password);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("1 scenario(s): 1 green"), "the Fixture has no row of its own: {all}");
    assert_eq!(posts_of_orders(&server.requests()), 1);
    let _ = runtime.block_on(server.shutdown());

    // The Fixture's save fails: the scenario is red with the Fixture's reason and never runs.
    let config = DemoConfig { faults: [Fault::ServerError].into(), ..DemoConfig::default() };
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let output = run(&server, &password);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("the Fixture \"an order for Ada Fixture\" failed at step 4"), "{all}");
    assert!(all.contains("so the scenario did not run"), "{all}");
    assert_eq!(posts_of_orders(&server.requests()), 1, "the Fixture's save was not retried");
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&project);
}

/// A browser Fixture is repaired as a scenario is: under drift that no locator survives, the
/// agent saves the order with the button the page has now, the repair is proven and filed, and
/// its proposal makes the feature's green scenario yellow.
#[test]
fn a_browser_fixture_broken_by_drift_is_repaired_and_its_proposal_is_the_scenarios_floor() {
    use support::agent::{Plans, Seen, click, configure_agent, repaired, scripted, step, wait};
    let runtime = runtime();
    let project = project_with_a_fixture("repaired");
    let mut config = DemoConfig::default();
    config.drift.insert(Drift::RelocatedSave);
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let mut plans = Plans::new();
    plans.insert(
        "an order for Ada Fixture (repair)".into(),
        vec![step(4), click("button \"Place order\""), wait("^/api/orders$", "POST", "201"), repaired("locator", &[])],
    );
    let seen = Seen::default();
    let server = runtime.block_on(scripted(saffron_agent::testing::Wire::Anthropic, plans, seen.clone()));
    // The repair saved an order on the live app, and its proof saves one again: the demo's data
    // is put back before the proof, as a project whose scenarios make records does.
    configure_agent(&project, "anthropic", &server, crate::heal::TIMEOUTS_AND_RESET);
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &demo.url(), "features/seeded.saffron"])
        .current_dir(&project)
        .env("DEMO_PASSWORD", &password)
        .output()
        .expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}\n{}", support::agent::errors_told(&seen));
    assert!(all.contains("1 scenario(s): 0 green, 1 yellow"), "{all}");
    let proposal = project.join(".saffron/proposals/seeded/an-order-for-ada-fixture.json");
    let filed = std::fs::read_to_string(&proposal).expect("the Fixture's repair is filed");
    assert!(filed.contains("Place order"), "{filed}");
    assert!(all.contains(".saffron/proposals/seeded/an-order-for-ada-fixture.json"), "the floor names it: {all}");
    let _ = runtime.block_on(demo.shutdown());
    let _ = std::fs::remove_dir_all(&project);
}

/// A desktop recording replays on a phone (`--device`), and fails where the page really
/// differs: on a phone's screen the orders page has no "New order" link but a "+" button, so
/// "An order needs a customer" is red at "When I open the new order form", while signing in
/// passes. An unknown device is refused before any browser starts, with the list.
#[test]
fn a_desktop_recording_replays_on_a_phone_and_fails_where_the_page_differs() {
    let runtime = runtime();
    let project = project_copy("device");
    std::fs::write(project.join("saffron.toml"), "[timeouts]\naction_ms = 1500\nassertion_ms = 1500\n")
        .expect("config");
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let needs_customer =
        support::agent::line_of(&project, "features/new_order.saffron", "Scenario: An order needs a customer");
    let run = |device: &str| {
        Command::new(env!("CARGO_BIN_EXE_saffron"))
            .args(["run", "--base-url", &server.url(), "--device", device, "features/sign_in.feature", &needs_customer])
            .current_dir(&project)
            .env("DEMO_PASSWORD", &password)
            .output()
            .expect("runs")
    };
    let output = run("iPhone 15");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("3 scenario(s): 2 green, 0 yellow, 1 red"), "{all}");
    assert!(all.contains("step 5 \"I open the new order form\""), "{all}");
    assert!(all.contains("link \"New order\""), "{all}");
    // The same recordings on the desktop: green.
    let desktop = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/sign_in.feature", &needs_customer])
        .current_dir(&project)
        .env("DEMO_PASSWORD", &password)
        .output()
        .expect("runs");
    assert!(text(&desktop).contains("3 scenario(s): 3 green"), "{}", text(&desktop));
    let unknown = run("Nokia 3310");
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown));
    assert!(
        text(&unknown).contains("there is no device \"Nokia 3310\"; the devices are: iPhone 15,"),
        "{}",
        text(&unknown)
    );
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&project);
}

/// A base URL that is not an http(s) address is refused before any browser starts: no
/// Chromium is needed to get the error, and the run never waits for a page.
#[test]
fn base_urls_that_are_not_web_addresses_are_refused_before_a_browser_starts() {
    let project = project_copy("bad-base-url");
    let run = |base_url: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_saffron"));
        command.args(["run", "features/sign_in.feature"]).current_dir(&project);
        if let Some(base_url) = base_url {
            command.args(["--base-url", base_url]);
        }
        command.env("SAFFRON_CHROMIUM", "/nonexistent/chromium").env_remove("SAFFRON_BASE_URL").output().expect("runs")
    };
    for (base_url, expected) in [
        ("not a url", "is not an absolute URL"),
        ("", "the base URL is empty"),
        ("ftp://files.example", "must be http:// or https://, not ftp:"),
        ("javascript:alert(1)", "not javascript:"),
        ("file:///etc", "not file:"),
    ] {
        let output = run(Some(base_url));
        let all = text(&output);
        assert_eq!(output.status.code(), Some(2), "{base_url:?}: {all}");
        assert!(all.contains("invalid base URL") && all.contains(expected), "{base_url:?}: {all}");
        assert!(!all.contains("blocked"), "no browser was asked for: {all}");
    }
    std::fs::write(project.join("saffron.toml"), "base_url = \"file:///etc/passwd\"\n").expect("write");
    let output = run(None);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("invalid base URL") && all.contains("not file:"), "{all}");
    let _ = std::fs::remove_dir_all(&project);
}

#[test]
fn unknown_keys_in_saffron_toml_are_warnings_and_the_run_goes_on() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let project = project_copy("unknown-keys");
    let toml = format!("base_url = \"{}\"\nbase_ur = \"typo\"\n[browsr]\nheadless = false\n", server.url());
    std::fs::write(project.join("saffron.toml"), toml).expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "features/sign_in.feature:11"])
        .current_dir(&project)
        .env("DEMO_PASSWORD", &password)
        .output()
        .expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("saffron.toml:2:1: warning: unknown key `base_ur` in saffron.toml"), "{all}");
    assert!(all.contains("  hint: did you mean `base_url`?"), "{all}");
    assert!(all.contains("saffron.toml:3:2: warning: unknown key `browsr`") && all.contains("did you mean `browser`?"));
    assert!(all.contains("✓ green"), "{all}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn control_characters_in_names_are_escaped_in_the_run_output() {
    let runtime = runtime();
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let project = project_copy("run-controls");
    std::fs::write(
        project.join("features/controls.feature"),
        "Feature: Controls\n  Scenario: Clear \u{1b}[2J\u{7f}\u{9b} the screen\n    Given I am on the sign-in page\n",
    )
    .expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/controls.feature"])
        .current_dir(&project)
        .output()
        .expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("Clear \\u{1b}[2J\\u{7f}\\u{9b} the screen") && all.contains("needs recording"), "{all}");
    assert!(!all.chars().any(|c| c.is_control() && c != '\n'), "a control reached the terminal: {all:?}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

/// `saffron run 2>&1 | head -1`: its output is closed under it. The run ends cleanly, not with
/// a panic: the reports are written, the exit status is the verdicts', and the browser is gone
/// with its profile folder.
#[test]
fn a_run_whose_output_is_closed_ends_cleanly_with_its_reports() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = support::example_project("closed-output");
    let temporary = tempfile::Builder::new().prefix("saffron-closed-output-").tempdir().expect("a temporary directory");
    let (reader, writer) = std::io::pipe().expect("a pipe");
    let mut child = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/sign_in.feature"])
        .current_dir(&root)
        .env("DEMO_PASSWORD", &password)
        .env("TMPDIR", temporary.path())
        .stdout(writer.try_clone().expect("a second writer"))
        .stderr(writer)
        .spawn()
        .expect("saffron starts");
    // `head -1`: read one line, then close the pipe while the run goes on.
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(&reader), &mut first).expect("a first line");
    drop(reader);
    let status = child.wait().expect("it ends");
    assert_eq!(status.code(), Some(0), "{first}");
    assert!(first.starts_with("replaying 2 scenario(s)"), "{first}");
    let latest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".saffron/reports/latest.json")).expect("the reports are written"),
    )
    .expect("json");
    assert_eq!(latest["green"], 2, "{latest:#}");
    let left: Vec<_> = std::fs::read_dir(temporary.path()).expect("read").flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(server.shutdown());
}
