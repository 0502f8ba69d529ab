//! Signing in once: the example's StepSet "signed in as the demo user" tagged `@session` is
//! performed by the first scenario of the run and restored in every later one (the demo sees
//! one sign-in); a scenario that signs out kills the kept session, and the next scenario finds
//! it refused, signs in again and keeps the new one. `[session] steps` marks the same steps
//! without a tag. The kept session's cookie never reaches a report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use saffron_demo::DemoServer;
use serde_json::{Value, json};

use crate::support;

const SET: &str = "  StepSet: signed in as the demo user\n";

fn tagged_project(name: &str) -> PathBuf {
    let root = support::example_project(name);
    let shared = root.join("features/shared.steps.saffron");
    let text = std::fs::read_to_string(&shared).expect("shared steps");
    assert!(text.contains(SET), "the example's sign-in set moved");
    std::fs::write(&shared, text.replace(SET, &format!("  @session\n{SET}"))).expect("tag the set");
    root
}

fn run(root: &Path, server: &DemoServer, password: &str, targets: &[&str]) -> (Output, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "--workers", "1", "--format", "json", "--tags", "not @wip"])
        .args(targets)
        .current_dir(root)
        .env("DEMO_PASSWORD", password)
        .output()
        .expect("saffron runs");
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "no JSON report ({error}): {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output, report)
}

fn sign_ins(server: &DemoServer) -> usize {
    server.requests().iter().filter(|request| request.method == "POST" && request.path == "/api/session").count()
}

fn scenarios_of(report: &Value) -> Vec<&Value> {
    report.as_array().expect("the scenarios").iter().collect()
}

fn restored(scenario: &Value) -> bool {
    scenario["session"]["restored"] == json!(true)
}

/// The run of the ten orders scenarios passed, all green, with one sign-in on the server.
fn ten_green_with_one_sign_in<'r>(output: &Output, report: &'r Value, server: &DemoServer) -> Vec<&'r Value> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{report:#}\n{stderr}");
    let scenarios = scenarios_of(report);
    assert_eq!(scenarios.len(), 10, "{report:#}");
    assert!(scenarios.iter().all(|s| s["verdict"] == "green"), "{report:#}");
    assert_eq!(sign_ins(server), 1, "one sign-in for the whole run");
    scenarios
}

#[test]
fn a_tagged_sign_in_is_performed_once_and_restored_in_every_later_scenario() {
    let (runtime, server, password) = support::demo();
    let root = tagged_project("sign-in-once");
    let (output, report) = run(&root, &server, &password, &["features/orders.saffron"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let scenarios = ten_green_with_one_sign_in(&output, &report, &server);
    assert!(!restored(scenarios[0]), "the first scenario signs in: {:#}", scenarios[0]);
    assert!(scenarios[1..].iter().all(|s| restored(s)), "{report:#}");
    // A restored step passed, without actions, and says so.
    let step = &scenarios[1]["steps"][1];
    assert_eq!((&step["outcome"], &step["restored"], &step["actions"]), (&json!("passed"), &json!(true), &json!([])));
    assert!(stderr.contains("sessions: signed in 1 time(s), restored 9 time(s)"), "{stderr}");

    // The same suite, the set untagged: every scenario signs in.
    let untagged = support::example_project("sign-in-every-time");
    // Back to the seed data (an order was deleted), with no session and an empty log.
    server.reset();
    let (output, report) = run(&untagged, &server, &password, &["features/orders.saffron"]);
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    assert_eq!(sign_ins(&server), 10);
    assert!(scenarios_of(&report).iter().all(|s| s.get("session").is_none()));

    // `[session] steps` names the same steps without a tag.
    std::fs::write(
        untagged.join("saffron.toml"),
        "[session]\nsteps = [\"I am on the sign-in page\", \"I sign in with the demo account\", \"I see the orders page\"]\n",
    )
    .expect("config");
    server.reset();
    let (output, report) = run(&untagged, &server, &password, &["features/orders.saffron"]);
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    assert_eq!(sign_ins(&server), 1);
    assert!(scenarios_of(&report)[1..].iter().all(|s| restored(s)), "{report:#}");
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&untagged);
}

/// Firefox keeps and restores the session the same way (BiDi cookies and a preload script for
/// the `localStorage`): one sign-in for the ten orders scenarios.
#[test]
fn firefox_signs_in_once_too() {
    let (runtime, server, password) = support::demo();
    let root = tagged_project("sign-in-once-firefox");
    let (output, report) = run(&root, &server, &password, &["--browser", "firefox", "features/orders.saffron"]);
    let scenarios = ten_green_with_one_sign_in(&output, &report, &server);
    assert!(scenarios[1..].iter().all(|s| restored(s)), "{report:#}");
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}

/// A scenario that signs out ends the kept session on the server: the scenario after it is
/// sent to the sign-in page when it restores it, signs in itself, keeps the new session, and
/// the ones after restore that one. Everything stays green, with two sign-ins in all, and no
/// report holds the session's cookie.
#[test]
fn a_session_signed_out_by_one_scenario_is_replaced_by_the_next_scenario_signing_in() {
    let (runtime, server, password) = support::demo();
    let root = tagged_project("sign-out-stale");
    // "Sign out", second in the file: the Background's sign-in, then the shared "signed out".
    let orders = root.join("features/orders.saffron");
    let text = std::fs::read_to_string(&orders).expect("orders");
    let anchor = "  Scenario: Search by pressing Enter\n";
    let text = text.replace(anchor, &format!("  Scenario: Sign out\n    StepSet signed out\n\n{anchor}"));
    std::fs::write(&orders, text).expect("write");
    let line = support::agent::line_of(&root, "features/orders.saffron", "Scenario: Sign out");
    let skeleton = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["skeleton", &line])
        .current_dir(&root)
        .output()
        .expect("saffron runs");
    assert!(skeleton.status.success(), "{}", String::from_utf8_lossy(&skeleton.stderr));
    let recording_path = root.join(".saffron/cache/orders/sign-out.json");
    let mut recording: Value =
        serde_json::from_slice(&std::fs::read(&recording_path).expect("skeleton")).expect("json");
    let search: Value = serde_json::from_slice(
        &std::fs::read(root.join(".saffron/cache/orders/search-orders-by-customer.json")).expect("a recording"),
    )
    .expect("json");
    for step in 0..3 {
        recording["steps"][step]["actions"] = search["steps"][step]["actions"].clone();
    }
    recording["steps"][3]["actions"] = json!([{ "type": "goto", "url": "/sign-out" }]);
    recording["steps"][4]["actions"] =
        json!([{ "type": "expectVisible", "target": { "role": "heading", "name": "Sign in" } }]);
    std::fs::write(&recording_path, serde_json::to_vec_pretty(&recording).expect("json")).expect("write");

    let (output, report) = run(&root, &server, &password, &["features/orders.saffron"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{report:#}\n{stderr}");
    let scenarios = scenarios_of(&report);
    let names: Vec<&str> = scenarios.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names[..3], ["Search orders by customer", "Sign out", "Search by pressing Enter"]);
    assert!(scenarios.iter().all(|s| s["verdict"] == "green"), "{report:#}");
    assert!(restored(scenarios[1]), "sign out restored the kept session: {:#}", scenarios[1]);
    let after = &scenarios[2]["session"];
    assert_eq!(after["restored"], json!(false), "{after:#}");
    let stale = after["stale"].as_str().expect("said stale");
    assert!(stale.contains("sent the restored page to /login"), "{stale}");
    assert!(scenarios[3..].iter().all(|s| restored(s)), "{report:#}");
    assert_eq!(sign_ins(&server), 2);
    // The cookie the sessions carried is in no report.
    let cookies = server.issued_sessions();
    assert_eq!(cookies.len(), 2, "the demo handed out two sessions");
    let mut files = Vec::new();
    support::agent::every_file(&root.join(".saffron"), &mut files);
    for file in files {
        let bytes = std::fs::read(&file).expect("read");
        let text = String::from_utf8_lossy(&bytes);
        for cookie in &cookies {
            assert!(!text.contains(cookie.as_str()), "{} holds a session cookie", file.display());
        }
    }
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}

/// The recording agent starts where a replay would: a scenario that needs recording and starts
/// with the tagged sign-in (seeded from other recordings) restores the session the run kept,
/// so the agent signs in nobody; its proof replay performs every step, the sign-in included.
/// Two sign-ins in all (the replay's and the proof's) where performing it would make three,
/// and the saved recording holds the sign-in's actions, copied from the recordings they came
/// from.
#[test]
fn the_recording_agent_starts_from_the_kept_session_and_its_proof_signs_in() {
    use support::agent::{check_on, configure_agent, done, errors_told, scenario_at, step};

    let (runtime, server, password) = support::demo();
    let root = tagged_project("sign-in-once-recording");
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect("write .env");
    support::agent::add_to_orders(&root, support::agent::SEARCH_THEN_HEADING);
    let ops = vec![step(6), check_on("h1", json!({ "check": "text", "text": "Orders" })), done()];
    let (agent, seen) = support::agent::scripted_one(&runtime, "Search, then read the heading", ops);
    configure_agent(&root, "anthropic", &agent, "");
    let targets = [
        scenario_at(&root, "features/orders.saffron", "Search orders by customer"),
        scenario_at(&root, "features/orders.saffron", "Search, then read the heading"),
    ];
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "--workers", "1", "--format", "json"])
        .args(&targets)
        .current_dir(&root)
        .output()
        .expect("saffron runs");
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert_eq!(output.status.code(), Some(0), "{report:#}\nerrors told to the agent:\n{}", errors_told(&seen));
    let scenarios = scenarios_of(&report);
    assert!(scenarios.iter().all(|s| s["verdict"] == "green"), "{report:#}");
    assert_eq!(sign_ins(&server), 2, "the replay's sign-in and the proof's; the agent's page restored the session");
    // The agent saw the orders page it starts on, signed in.
    let task = seen.all()[0].messages[0].text();
    assert!(task.contains("Perform steps 6 to 6."), "{task}");
    assert!(task.contains("Orders"), "{task}");
    let saved: Value = serde_json::from_slice(
        &std::fs::read(root.join(".saffron/cache/orders/search-then-read-the-heading.json")).expect("saved"),
    )
    .expect("json");
    assert_eq!(saved["steps"][0]["actions"][0], json!({ "type": "goto", "url": "/login" }), "{saved:#}");
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}
