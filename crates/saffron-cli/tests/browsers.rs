//! More than one browser: `--browser chromium --browser firefox` replays the example's
//! Chromium recordings in both, Chromium first, each result named and keyed by its browser;
//! Firefox replays only (a scenario that needs recording is blocked, no agent is asked); and
//! what cannot work is refused before any browser starts.

use std::path::Path;
use std::process::{Command, Output};

use saffron_demo::DemoServer;
use serde_json::Value;

use crate::support;

fn saffron(root: &Path, server: &DemoServer, password: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "--format", "json"])
        .args(args)
        .current_dir(root)
        .env("DEMO_PASSWORD", password)
        .output()
        .expect("saffron runs")
}

fn report_of(output: &Output) -> Vec<Value> {
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "no JSON report ({error}): {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    report.as_array().cloned().expect("the scenarios")
}

/// The "needs a customer" recording's save button becomes one the app no longer has.
fn lose_the_save_button(root: &Path) {
    let cache = root.join(".saffron/cache/new-order/an-order-needs-a-customer.json");
    let mut recording: Value = serde_json::from_slice(&std::fs::read(&cache).expect("recording")).expect("json");
    recording["steps"][6]["actions"][0]["target"] =
        serde_json::json!({ "role": "button", "name": "Submit the order", "css": ["#submit-order"] });
    std::fs::write(&cache, serde_json::to_vec_pretty(&recording).expect("json")).expect("write");
}

/// A scripted agent's repair of that button: the Save button found again, the Then step's
/// alert checked (as `heal.rs` repairs it in Chromium).
fn repair_of_the_save_button() -> Vec<support::agent::Op> {
    use support::agent::{check_on, click, repaired, step};
    vec![
        step(7),
        click("button \"Save order\""),
        step(8),
        check_on("alert", serde_json::json!({ "check": "text", "text": "Customer is required" })),
        repaired("locator", &[]),
    ]
}

#[test]
fn a_matrix_replays_the_chromium_recordings_in_firefox_keyed_by_browser() {
    let (runtime, server, password) = support::demo();
    let root = support::example_project("browser-matrix");
    // Scenarios that change nothing in the shop, so that both browsers see the same one; the
    // search fills, presses and waits for the list, the sign-in ones read an alert.
    let targets = ["features/sign_in.feature", "features/orders.saffron:8", "features/orders.saffron:13"];
    let mut args = vec!["--browser", "firefox", "--browser", "chromium", "--workers", "2"];
    args.extend(targets);
    let output = saffron(&root, &server, &password, &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let scenarios = report_of(&output);
    assert_eq!(output.status.code(), Some(0), "{scenarios:#?}\n{stderr}");
    let browsers: Vec<&str> = scenarios.iter().map(|s| s["browser"].as_str().unwrap_or("none")).collect();
    assert_eq!(browsers, ["chromium"; 4].into_iter().chain(["firefox"; 4]).collect::<Vec<_>>(), "Chromium first");
    assert!(scenarios.iter().all(|s| s["verdict"] == "green"), "{scenarios:#?}");
    assert!(scenarios.iter().all(|s| {
        s["name"].as_str().unwrap_or_default().ends_with(&format!("[{}]", s["browser"].as_str().unwrap_or_default()))
    }));
    // The same recorded steps ran in both: the same targets, the same tiers.
    let tiers = |browser: &str| -> Vec<String> {
        scenarios
            .iter()
            .filter(|s| s["browser"] == browser)
            .flat_map(|s| s["steps"].as_array().cloned().unwrap_or_default())
            .flat_map(|step| step["actions"].as_array().cloned().unwrap_or_default())
            .map(|action| format!("{} {}", action["action"], action["tier"]))
            .collect()
    };
    assert!(!tiers("chromium").is_empty());
    assert_eq!(tiers("chromium"), tiers("firefox"));
    assert!(stderr.contains("in Firefox"), "{stderr}");
    // The history keeps each browser's runs apart, under the scenario's own name, so that a
    // matrix run and a Chromium-only run add to one Chromium history.
    let history = std::fs::read_to_string(root.join(".saffron/reports/history.jsonl")).expect("the history");
    let lines: Vec<Value> = history.lines().map(|line| serde_json::from_str(line).expect("a history line")).collect();
    let keyed = |browser: &str| -> Vec<String> {
        let mut keys: Vec<String> = lines
            .iter()
            .filter(|line| line["browser"] == browser)
            .map(|line| format!("{}:{} {}", line["file"], line["line"], line["name"]))
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(keyed("chromium").len(), 4, "{history}");
    assert_eq!(keyed("chromium"), keyed("firefox"), "the same scenarios, under the same names");
    assert!(lines.iter().all(|line| !line["name"].as_str().unwrap_or_default().contains('[')), "{history}");
    let latest: Value =
        serde_json::from_slice(&std::fs::read(root.join(".saffron/reports/latest.json")).expect("latest"))
            .expect("json");
    let strips = latest["history"].as_object().cloned().unwrap_or_default();
    assert_eq!(strips.len(), 8, "a strip for each scenario in each browser: {strips:?}");
    assert!(strips.keys().filter(|key| key.ends_with(" [firefox]")).count() == 4, "{strips:?}");
    let summaries = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["history", "--format", "json"])
        .current_dir(&root)
        .output()
        .expect("saffron history runs");
    let summaries: Value = serde_json::from_slice(&summaries.stdout).expect("json");
    let browsers: Vec<&str> =
        summaries["scenarios"].as_array().into_iter().flatten().filter_map(|s| s["browser"].as_str()).collect();
    assert_eq!(browsers.iter().filter(|b| **b == "firefox").count(), 4, "{summaries:#}");
    assert_eq!(browsers.len(), 8, "{summaries:#}");
    runtime.block_on(server.shutdown()).expect("the demo stops");
}

/// A repair Chromium makes in a matrix run is filed as a proposal, and Firefox, which plans the
/// run again from disk, replays that proposal: yellow in both, every Firefox step passed.
#[test]
fn firefox_replays_the_proposal_chromium_filed_in_the_same_run() {
    use support::agent::{Plans, Seen, configure_agent, scripted};

    let (runtime, server, password) = support::demo();
    let root = support::example_project("matrix-proposal");
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect("write .env");
    lose_the_save_button(&root);
    let mut plans = Plans::new();
    plans.insert("An order needs a customer (repair)".to_owned(), repair_of_the_save_button());
    let agent = runtime.block_on(scripted(saffron_agent::testing::Wire::Anthropic, plans, Seen::default()));
    configure_agent(&root, "anthropic", &agent, "[timeouts]\naction_ms = 2000\nassertion_ms = 2000\n");
    let target = support::agent::scenario_at(&root, "features/new_order.saffron", "An order needs a customer");
    let output = saffron(&root, &server, &password, &["--browser", "chromium", "--browser", "firefox", &target]);
    let scenarios = report_of(&output);
    let verdicts: Vec<(String, String)> = scenarios
        .iter()
        .map(|s| (s["browser"].as_str().unwrap_or("none").to_owned(), s["verdict"].as_str().unwrap_or("").to_owned()))
        .collect();
    assert_eq!(
        verdicts,
        [("chromium".to_owned(), "yellow".to_owned()), ("firefox".to_owned(), "yellow".to_owned())],
        "{scenarios:#?}"
    );
    let proposals: Vec<String> = scenarios.iter().map(|s| s["proposal"].as_str().unwrap_or("").to_owned()).collect();
    assert!(!proposals[0].is_empty() && proposals[0] == proposals[1], "the same proposal: {proposals:?}");
    assert!(root.join(&proposals[0]).is_file(), "{proposals:?}");
    let firefox_steps = scenarios[1]["steps"].as_array().cloned().unwrap_or_default();
    assert!(firefox_steps.iter().all(|step| step["outcome"] == "passed"), "{firefox_steps:#?}");
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}

/// An adversarial agent, scripted to do in Firefox what it does in Chromium (record a new
/// step, repair a lost control: both proven in `sign_in_once.rs` and `heal.rs`), is never
/// asked: the scenario that needs recording is blocked, the one whose control is gone is red,
/// no recording and no proposal is saved, and the vendor server sees no request.
#[test]
fn firefox_replays_only_and_never_asks_an_agent_that_would_record_or_repair() {
    use support::agent::{Plans, Seen, check_on, configure_agent, done, scripted, step};

    let (runtime, server, password) = support::demo();
    let root = support::example_project("firefox-replays-only");
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect("write .env");
    support::agent::add_to_orders(&root, support::agent::SEARCH_THEN_HEADING);
    lose_the_save_button(&root);
    let mut plans = Plans::new();
    plans.insert(
        "Search, then read the heading".to_owned(),
        vec![step(6), check_on("h1", serde_json::json!({ "check": "text", "text": "Orders" })), done()],
    );
    plans.insert("An order needs a customer (repair)".to_owned(), repair_of_the_save_button());
    let seen = Seen::default();
    let agent = runtime.block_on(scripted(saffron_agent::testing::Wire::Anthropic, plans, seen.clone()));
    configure_agent(&root, "anthropic", &agent, "[timeouts]\naction_ms = 2000\nassertion_ms = 2000\n");
    let targets = [
        support::agent::scenario_at(&root, "features/orders.saffron", "Search, then read the heading"),
        support::agent::scenario_at(&root, "features/new_order.saffron", "An order needs a customer"),
    ];
    let mut args = vec!["--browser", "firefox"];
    args.extend(targets.iter().map(String::as_str));
    let output = saffron(&root, &server, &password, &args);
    let scenarios = report_of(&output);
    let verdict_of = |name: &str| scenarios.iter().find(|s| s["name"] == name).cloned().unwrap_or_default();
    let unrecorded = verdict_of("Search, then read the heading");
    assert_eq!(unrecorded["verdict"], "blocked", "{scenarios:#?}");
    assert_eq!(verdict_of("An order needs a customer")["verdict"], "red", "{scenarios:#?}");
    assert_eq!(scenarios.len(), 2, "{scenarios:#?}");
    let cause = unrecorded["cause"].as_str().unwrap_or_default();
    assert!(cause.contains("Firefox replays only"), "{cause}");
    assert!(seen.all().is_empty(), "Firefox asked the agent");
    assert!(agent.requests().is_empty(), "the vendor server was reached");
    assert!(!root.join(".saffron/cache/orders/search-then-read-the-heading.json").exists(), "a recording was saved");
    assert!(!root.join(".saffron/proposals").exists(), "a proposal was filed");
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_matrix_refuses_a_shard_and_firefox_refuses_a_mobile_device() {
    let (runtime, server, password) = support::demo();
    let root = support::example_project("browser-refusals");
    let sharded =
        saffron(&root, &server, &password, &["--browser", "chromium", "--browser", "firefox", "--shard", "1/2"]);
    let said = String::from_utf8_lossy(&sharded.stderr);
    assert_eq!(sharded.status.code(), Some(2), "{said}");
    assert!(said.contains("--shard") && said.contains("one job per browser"), "{said}");
    let mobile = saffron(&root, &server, &password, &["--browser", "firefox", "--device", "iPhone 15"]);
    let said = String::from_utf8_lossy(&mobile.stderr);
    assert_eq!(mobile.status.code(), Some(2), "{said}");
    assert!(said.contains("mobile device profile"), "{said}");
    // Refused before any browser started: the shop saw nothing.
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    runtime.block_on(server.shutdown()).expect("the demo stops");
}
