//! Scoped targets and drift by every signal, end to end: the real binary replays hand-written
//! recordings of the demo's lab pages, a scoped one green, and a renamed placeholder shows as
//! a drift line in the terminal and in `latest.json`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use saffron_demo::{DemoConfig, DemoServer};
use saffron_recording::{
    Action, RecordedStep, Recording, StepKind, StepSpec, feature_slug, scenario_slug, to_json_bytes,
};

const FEATURE: &str = "\
Feature: Lab

  Scenario: Ship the right order
    Given the orders to ship are shuffled
    When I select order 1002
    Then order 1002 is selected

  Scenario: Search for an order
    When I search for order 1002
    Then the search ran
";

fn actions(json: &str) -> Vec<Action> {
    serde_json::from_str(json).expect("actions")
}

fn write_recording(project: &Path, scenario: &str, steps: Vec<RecordedStep>) {
    let feature = "features/lab.feature";
    let path =
        project.join(".saffron/cache").join(feature_slug(feature)).join(format!("{}.json", scenario_slug(scenario)));
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
    let recording = Recording::new(feature, scenario, steps);
    std::fs::write(path, to_json_bytes(&recording).expect("json")).expect("write");
}

fn project() -> PathBuf {
    let project = std::env::temp_dir().join(format!("saffron-targets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(project.join("features")).expect("mkdir");
    std::fs::write(project.join("features/lab.feature"), FEATURE).expect("write");
    write_recording(
        &project,
        "Ship the right order",
        vec![
            RecordedStep::new(
                StepSpec::new(StepKind::Context, "the orders to ship are shuffled"),
                actions(
                    r#"[{ "type": "goto", "url": "/lab/rows" },
                        { "type": "click", "target": { "role": "button", "name": "Insert an order at the top", "tier": "role" } },
                        { "type": "click", "target": { "role": "button", "name": "Reverse the list", "tier": "role" } }]"#,
                ),
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Action, "I select order 1002"),
                actions(
                    r##"[{ "type": "check", "target": { "role": "checkbox", "tier": "role",
                          "within": { "role": "listitem", "css": ["#orders > li"], "hasText": "Order 1002", "tier": "role" } } }]"##,
                ),
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Outcome, "order 1002 is selected"),
                actions(
                    r#"[{ "type": "expectText", "target": { "role": "status", "tier": "role" }, "text": "Selected: Order 1002" }]"#,
                ),
            ),
        ],
    );
    write_recording(
        &project,
        "Search for an order",
        vec![
            RecordedStep::new(
                StepSpec::new(StepKind::Action, "I search for order 1002"),
                actions(
                    r##"[{ "type": "goto", "url": "/lab/renamed" },
                         { "type": "fill", "value": "1002", "target": { "role": "searchbox", "name": "Search orders",
                           "placeholder": "Search…", "testId": "search", "css": ["#q"], "tier": "role" } },
                         { "type": "press", "key": "Enter" }]"##,
                ),
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Outcome, "the search ran"),
                actions(
                    r#"[{ "type": "expectText", "target": { "role": "status" }, "text": "Searched for \"1002\"" }]"#,
                ),
            ),
        ],
    );
    project
}

fn run(project: &Path, base_url: &str) -> (Output, serde_json::Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", base_url, "features/lab.feature"])
        .current_dir(project)
        .output()
        .expect("saffron runs");
    let latest = std::fs::read_to_string(project.join(".saffron/reports/latest.json")).expect("latest.json");
    (output, serde_json::from_str(&latest).expect("json"))
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn a_scoped_recording_replays_green_and_a_renamed_placeholder_is_drift() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let project = project();

    let (output, latest) = run(&project, &server.url());
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("2 scenario(s): 2 green"), "{all}");
    assert!(!all.contains("drift"), "a recording that fits reports no drift: {all}");
    assert_eq!(latest["green"], 2, "{latest}");

    // The same recordings against the variant of the page whose placeholder was renamed.
    let (output, latest) = run(&project, &format!("{}/?renamed=placeholder", server.url()));
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "the replay still passes: {all}");
    let line = r#"step 1 `fill searchbox "Search orders" with "1002"`: placeholder "Search…" → "Find orders…" (found by role searchbox "Search orders")"#;
    assert!(all.contains(line), "{all}");
    let search = latest["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|scenario| scenario["name"] == "Search for an order")
        .unwrap_or_else(|| panic!("the scenario is reported: {latest}"));
    assert_eq!(search["drift"], serde_json::json!([line]), "{latest}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}
