//! `--retries`: a red scenario is run again from the start in a fresh context, before any
//! repair, and one that passes on a retry is flaky: it passes (exit 0), and the terminal, the
//! JSON, Markdown, HTML and JUnit reports say so. The real binary, real Chromium, and the demo's
//! `flaky-once` fault (its first sign-in page answers 503, once per server).

use crate::support;

use saffron_demo::{DemoConfig, DemoServer};
use support::agent::{runtime, scenario_at, text};

const TIMEOUTS: &str = "[timeouts]\naction_ms = 2000\nassertion_ms = 2000\nnavigation_ms = 10000\n";

fn flaky_demo(runtime: &tokio::runtime::Runtime) -> DemoServer {
    let mut config = DemoConfig::default();
    config.faults.insert(saffron_demo::Fault::FlakyOnce);
    runtime.block_on(DemoServer::start(config)).expect("demo")
}

#[test]
fn a_scenario_that_fails_once_is_red_without_retries_and_flaky_with_one() {
    let runtime = runtime();
    let root = support::example_project("retries");
    std::fs::write(root.join("saffron.toml"), TIMEOUTS).expect("config");
    let target = scenario_at(&root, "features/sign_in.feature", "Sign in with the demo account");

    let demo = flaky_demo(&runtime);
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={}\n", demo.config().password)).expect(".env");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &demo.url(), &target])
        .current_dir(&root)
        .output()
        .expect("saffron runs");
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert!(text(&run).contains("1 scenario(s): 0 green, 0 yellow, 1 red"), "{}", text(&run));
    let _ = runtime.block_on(demo.shutdown());

    // A fresh server: its first sign-in page fails again, once.
    let demo = flaky_demo(&runtime);
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={}\n", demo.config().password)).expect(".env");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--retries", "1", "--base-url", &demo.url(), &target])
        .current_dir(&root)
        .output()
        .expect("saffron runs");
    let said = text(&run);
    assert_eq!(run.status.code(), Some(0), "a flaky scenario passes: {said}");
    assert!(said.contains("1 scenario(s): 1 green, 0 yellow, 0 red, 0 blocked"), "{said}");
    assert!(said.contains("flaky: passed on attempt 2 of 2"), "{said}");
    assert!(
        said.contains("retried: attempt 1: step 1 \"I am on the sign-in page\""),
        "the failed attempt is named: {said}"
    );
    assert!(said.contains("1 flaky: passed only on a retry"), "{said}");

    let reports = root.join(".saffron/reports");
    let latest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(reports.join("latest.json")).expect("latest")).expect("json");
    assert_eq!(latest["flaky"], 1, "{latest:#}");
    assert_eq!(latest["scenarios"][0]["flaky"], true);
    assert_eq!(latest["scenarios"][0]["retried"].as_array().map(Vec::len), Some(1));
    let junit = std::fs::read_to_string(reports.join("junit.xml")).expect("junit");
    assert!(junit.contains("<flakyFailure"), "JUnit marks the failed attempt as a flaky failure: {junit}");
    assert!(!junit.contains("<failure"), "and the test as passed: {junit}");
    let markdown = std::fs::read_to_string(reports.join("report.md")).expect("report.md");
    assert!(markdown.contains("✓ green (flaky)"), "{markdown}");
    let html = std::fs::read_to_string(reports.join("report.html")).expect("report.html");
    assert!(html.contains("data-flaky=\"true\"") && html.contains("retried after:"), "the HTML says so");
    let _ = runtime.block_on(demo.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}

/// Every run appends its scenarios to `.saffron/reports/history.jsonl`; after five runs that
/// alternate, `saffron history` shows the strip and the flips, and a retry's pass as flaky.
#[test]
fn history_after_five_runs_shows_the_flips() {
    let runtime = runtime();
    let root = support::example_project("history");
    std::fs::write(root.join("saffron.toml"), TIMEOUTS).expect("config");
    let target = scenario_at(&root, "features/sign_in.feature", "Sign in with the demo account");
    // green, red, green, red (the flake, unretried), then the flake retried: flaky.
    for (flaky, retries) in [(false, "0"), (true, "0"), (false, "0"), (true, "0"), (true, "1")] {
        let demo = if flaky {
            flaky_demo(&runtime)
        } else {
            runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo")
        };
        std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={}\n", demo.config().password)).expect(".env");
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
            .args(["run", "--retries", retries, "--base-url", &demo.url(), &target])
            .current_dir(&root)
            .output()
            .expect("saffron runs");
        assert!(run.status.code().is_some(), "{}", text(&run));
        let _ = runtime.block_on(demo.shutdown());
    }
    let lines = std::fs::read_to_string(root.join(".saffron/reports/history.jsonl")).expect("the history");
    assert_eq!(lines.lines().count(), 5, "{lines}");
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().expect("a line")).expect("json");
    assert_eq!((first["verdict"].as_str(), first["browser"].as_str()), (Some("green"), Some("chromium")));

    let history = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["history", "--format", "json", &target])
        .current_dir(&root)
        .output()
        .expect("saffron history");
    let json: serde_json::Value = serde_json::from_slice(&history.stdout).expect("json");
    let scenario = &json["scenarios"][0];
    assert_eq!(scenario["strip"], "✓✗✓✗≈", "{json:#}");
    assert_eq!(scenario["flips"], 4, "passing and failing alternate (a flaky pass is a pass): {json:#}");
    assert_eq!(scenario["flaky"], true);
    let text_output = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["history"])
        .current_dir(&root)
        .output()
        .expect("saffron history");
    let said = text(&text_output);
    assert!(
        said.contains("✓✗✓✗≈  features/sign_in.feature:5  Sign in with the demo account  4 flip(s), flaky"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
