//! The demo's drift that no locator fallback survives (`relocated-save`, `confirm-step`), with
//! the real binary in headless Chromium: the committed recordings fail at the step the drift
//! breaks, where a heal has to take over; they pass with the drift off; and with the drift on
//! they pass again once the recording holds what a heal would record, so the drifted app still
//! does what it did.

use crate::support;

use std::path::Path;

use saffron_demo::{DemoConfig, DemoServer, Drift};
use saffron_recording::{StepKind, Target, Tier, parse_recording};
use serde_json::{Value, json};
use support::example_project;

const NEEDS_A_CUSTOMER: &str = "features/new_order.saffron:25";
const NEEDS_A_CUSTOMER_RECORDING: &str = "new-order/an-order-needs-a-customer.json";
const CREATE_ROWS: [&str; 2] = ["features/new_order.saffron:22", "features/new_order.saffron:23"];
const CREATE_RECORDING: &str = "new-order/create-an-order-for-customer.json";
const ADD_A_NOTE: &str = "features/orders.saffron:17";
const ADD_A_NOTE_RECORDING: &str = "orders/add-a-note-to-an-order.json";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime")
}

fn with_drift(drift: Drift) -> DemoConfig {
    DemoConfig { drift: [drift].into(), ..DemoConfig::default() }
}

/// Replays `targets` of `project` against `server`: the exit code and everything printed.
fn replay(project: &Path, server: &DemoServer, targets: &[&str]) -> (Option<i32>, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url()])
        .args(targets)
        .current_dir(project)
        .env("DEMO_PASSWORD", server.config().password)
        .output()
        .expect("saffron runs");
    let all = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), all)
}

/// The line naming the failed step, e.g. `step 7 "I save the order": ...`.
fn failed_step(all: &str) -> &str {
    all.lines()
        .map(str::trim_start)
        .find(|line| line.starts_with("step "))
        .unwrap_or_else(|| panic!("no failed step: {all}"))
}

fn recording_text(project: &Path, recording: &str) -> String {
    std::fs::read_to_string(project.join(".saffron/cache").join(recording)).expect("the committed recording")
}

/// Rewrites the actions of step `step` of a recording of `project`, as a heal would; the result
/// must still be a valid recording.
fn edit_step(project: &Path, recording: &str, step: &str, edit: impl FnOnce(&mut Vec<Value>)) {
    let mut json: Value = serde_json::from_str(&recording_text(project, recording)).expect("json");
    let steps = json["steps"].as_array_mut().expect("steps");
    let found = steps.iter_mut().find(|s| s["text"] == step).unwrap_or_else(|| panic!("no step {step:?}"));
    edit(found["actions"].as_array_mut().expect("actions"));
    let text = serde_json::to_string_pretty(&json).expect("serialize");
    parse_recording(&text).expect("the edited recording is valid");
    std::fs::write(project.join(".saffron/cache").join(recording), text).expect("write");
}

/// Every locator a target holds, as failure reports quote them: each CSS fallback on its own.
fn signals(target: &Target) -> Vec<String> {
    target
        .tiers()
        .into_iter()
        .flat_map(|tier| {
            let fallbacks = if tier == Tier::Css { target.css.len() } else { 1 };
            (0..fallbacks).map(move |index| target.describe_locator(tier, index))
        })
        .collect()
}

#[test]
fn relocated_save_misses_every_recorded_signal_of_the_save_button() {
    let runtime = runtime();
    let project = example_project("relocated-save-misses");
    let server = runtime.block_on(DemoServer::start(with_drift(Drift::RelocatedSave))).expect("demo");

    let (code, all) = replay(&project, &server, &[NEEDS_A_CUSTOMER]);
    assert_eq!(code, Some(1), "{all}");
    assert!(all.lines().any(|l| l.starts_with("✗ red") && l.contains("An order needs a customer")), "{all}");
    let failure = failed_step(&all);
    assert!(failure.starts_with(r#"step 7 "I save the order": `click button "Save order"`"#), "{all}");
    // Read from the committed recording, so a signal added to it later is checked too.
    let recording = parse_recording(&recording_text(&project, NEEDS_A_CUSTOMER_RECORDING)).expect("recording");
    let save = recording
        .steps
        .iter()
        .find(|step| step.text == "I save the order")
        .and_then(|step| step.actions.first())
        .and_then(|action| action.target())
        .expect("the recorded save click");
    let signals = signals(save);
    assert!(signals.len() >= 3, "role and name, test id and CSS at least: {signals:?}");
    for signal in &signals {
        assert!(failure.contains(&format!("{signal}: 0 matches")), "{signal} still finds something: {failure}");
    }

    server.set_config(DemoConfig::default());
    let (code, all) = replay(&project, &server, &[NEEDS_A_CUSTOMER]);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&project);
}

#[test]
fn relocated_save_still_saves_through_the_moved_button() {
    let runtime = runtime();
    let project = example_project("relocated-save-saves");
    edit_step(&project, CREATE_RECORDING, "I save the order", |actions| {
        actions[0] = json!({ "type": "click",
            "target": { "role": "button", "name": "Place order", "testId": "place-order", "tier": "role" } });
    });
    let server = runtime.block_on(DemoServer::start(with_drift(Drift::RelocatedSave))).expect("demo");
    // Each row checks "Order saved", its total from the server, the POST and the orders list.
    let (code, all) = replay(&project, &server, &CREATE_ROWS);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("2 scenario(s): 2 green"), "{all}");
    let saves: Vec<u16> =
        server.requests().iter().filter(|r| r.method == "POST" && r.path == "/api/orders").map(|r| r.status).collect();
    assert_eq!(saves, [201, 201]);
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&project);
}

#[test]
fn confirm_step_fails_the_given_step_that_opens_the_order() {
    let runtime = runtime();
    let project = example_project("confirm-step-fails");
    let server = runtime.block_on(DemoServer::start(with_drift(Drift::ConfirmStep))).expect("demo");

    let (code, all) = replay(&project, &server, &[ADD_A_NOTE]);
    assert_eq!(code, Some(1), "{all}");
    assert!(all.lines().any(|l| l.starts_with("✗ red") && l.contains("Add a note to an order")), "{all}");
    // The click on "#1001" went through; the check that the order opened is what fails.
    let failure = failed_step(&all);
    assert!(
        failure.starts_with(r##"step 4 "I open the order "#1001"": `expect heading "Order #1001" to be visible`"##),
        "{all}"
    );
    assert!(all.contains("/orders/1001/confirm"), "the page is the confirmation: {all}");
    // A Given step: a heal may take it over (a failed Then never is).
    let recording = parse_recording(&recording_text(&project, ADD_A_NOTE_RECORDING)).expect("recording");
    assert_eq!(recording.steps[3].text, "I open the order \"#1001\"");
    assert_eq!(recording.steps[3].kind, StepKind::Context);

    server.set_config(DemoConfig::default());
    let (code, all) = replay(&project, &server, &[ADD_A_NOTE]);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&project);
}

#[test]
fn confirm_step_is_passed_by_continuing() {
    let runtime = runtime();
    let project = example_project("confirm-step-continues");
    edit_step(&project, ADD_A_NOTE_RECORDING, "I open the order \"#1001\"", |actions| {
        actions
            .insert(1, json!({ "type": "click", "target": { "role": "button", "name": "Continue", "tier": "role" } }));
    });
    let server = runtime.block_on(DemoServer::start(with_drift(Drift::ConfirmStep))).expect("demo");
    let (code, all) = replay(&project, &server, &[ADD_A_NOTE]);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");
    let pages: Vec<String> =
        server.requests().into_iter().filter(|r| r.path.starts_with("/orders/1001")).map(|r| r.path).collect();
    assert_eq!(pages, ["/orders/1001/confirm", "/orders/1001"]);
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&project);
}
