//! `saffron run --refresh-drift` with the real binary in headless Chromium: a replay that found
//! its elements through drifted signals files a zero-token proposal that says what the page has
//! now, leaves every assertion's expected value as it was, and `accept --propagate` carries the
//! change to the other recordings that hold the same target.

use crate::support;

use std::path::Path;

use saffron_demo::{DemoConfig, DemoServer, Drift};
use saffron_recording::{Action, Proposal, Recording, parse_recording};
use support::example_project;

const NEEDS_A_CUSTOMER: &str = "features/new_order.saffron:25";
const RECORDING: &str = ".saffron/cache/new-order/an-order-needs-a-customer.json";
const PROPOSAL: &str = ".saffron/proposals/new-order/an-order-needs-a-customer.json";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime")
}

fn saffron(project: &Path, server: &DemoServer, args: &[&str]) -> (Option<i32>, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(args)
        .current_dir(project)
        .env("DEMO_PASSWORD", server.config().password)
        .env("SAFFRON_BASE_URL", server.url())
        .output()
        .expect("saffron runs");
    let all = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), all)
}

fn recording(project: &Path, path: &str) -> Recording {
    parse_recording(&std::fs::read_to_string(project.join(path)).expect("a recording")).expect("valid")
}

/// Every action of a recording with its target taken out: what the steps do and expect.
fn without_targets(recording: &Recording) -> Vec<Action> {
    let mut actions: Vec<Action> = recording.steps.iter().flat_map(|step| step.actions.clone()).collect();
    for action in &mut actions {
        if let Some(target) = action.target_mut() {
            *target = saffron_recording::Target::default();
        }
    }
    actions
}

#[test]
fn a_drifted_replay_proposes_its_signals_as_the_page_has_them_and_accept_propagates_them() {
    let runtime = runtime();
    let project = example_project("refresh-drift");
    let config = DemoConfig { drift: [Drift::RenamedLabel].into(), ..DemoConfig::default() };
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let committed = recording(&project, RECORDING);

    // Without the switch: green with drift, forever, and nothing filed.
    let (code, all) = saffron(&project, &server, &["run", NEEDS_A_CUSTOMER]);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains(r#"role textbox "Email" → textbox "E-mail address""#), "the drift is reported: {all}");
    assert!(!project.join(PROPOSAL).exists(), "nothing is filed without --refresh-drift");

    let (code, all) = saffron(&project, &server, &["run", "--refresh-drift", NEEDS_A_CUSTOMER]);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("1 yellow"), "{all}");
    let text = std::fs::read_to_string(project.join(PROPOSAL)).expect("a proposal is filed");
    let proposal: Proposal = serde_json::from_str(&text).expect("a proposal");
    assert_eq!(proposal.usage, None, "no model took part");
    let change = r#"role textbox "Email" → textbox "E-mail address""#;
    assert!(proposal.adaptations.iter().any(|line| line.contains(change)), "{text}");
    let names: Vec<&str> = proposal
        .recording
        .steps
        .iter()
        .flat_map(|step| &step.actions)
        .filter_map(|action| action.target()?.name.as_deref())
        .collect();
    assert!(names.contains(&"E-mail address") && !names.contains(&"Email"), "{names:?}");
    // Only targets changed: every action, every expected value, every step is as committed.
    assert_eq!(without_targets(&proposal.recording), without_targets(&committed));
    assert_eq!(
        proposal.recording.steps.iter().map(|step| &step.text).collect::<Vec<_>>(),
        committed.steps.iter().map(|step| &step.text).collect::<Vec<_>>()
    );

    // Pending, the proposal replays yellow and its signals no longer drift.
    let (code, all) = saffron(&project, &server, &["run", NEEDS_A_CUSTOMER]);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("1 yellow") && !all.contains(r#"textbox "Email" →"#), "{all}");

    let (code, said) = saffron(&project, &server, &["accept", "new-order/an-order-needs-a-customer", "--propagate"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("propagated to .saffron/cache/"), "the other sign-ins hold the same target: {said}");

    // Every scenario that signs in now replays green without that drift.
    let (code, all) = saffron(&project, &server, &["run", "features", "--tags", "not @wip"]);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("0 yellow") && !all.contains(r#"textbox "Email" →"#), "{all}");
    assert!(all.contains(r#"textbox "Customer" → textbox "Customer name""#), "another target's drift stays: {all}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}
