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
    runtime.block_on(server.shutdown()).expect("the demo stops");
}

#[test]
fn firefox_replays_only_and_blocks_what_needs_recording() {
    let (runtime, server, password) = support::demo();
    let root = support::example_project("firefox-replays-only");
    std::fs::write(
        root.join("features/unrecorded.feature"),
        "Feature: Unrecorded\n\n  Scenario: A step nobody recorded\n    Given I open the order archive\n",
    )
    .expect("a feature");
    // An agent is configured: Firefox still never asks it.
    std::fs::write(root.join("saffron.toml"), "[agent]\ncommand = [\"false\"]\n").expect("a config");
    let output = saffron(&root, &server, &password, &["--browser", "firefox", "features/unrecorded.feature"]);
    let scenarios = report_of(&output);
    assert_eq!(scenarios.len(), 1, "{scenarios:#?}");
    assert_eq!(scenarios[0]["verdict"], "blocked", "{scenarios:#?}");
    let cause = scenarios[0]["cause"].as_str().unwrap_or_default();
    assert!(cause.contains("Firefox replays only"), "{cause}");
    runtime.block_on(server.shutdown()).expect("the demo stops");
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
