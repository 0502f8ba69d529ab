//! `saffron run` repairs a replay that fails on an action no fallback finds: the real binary,
//! real Chromium, the demo app, and a scripted agent on the fake vendor servers. The repair is
//! proven by a replay at zero AI, filed as a proposal, and the run is yellow; Then steps are
//! never repaired, and an agent's word never makes a scenario pass.

mod support;

use std::path::Path;

use saffron_agent::Request;
use saffron_agent::testing::{FakeServer, Wire};
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::json;
use support::agent::{
    Op, Plans, Seen, check_on, click, configure_agent, errors_told, repaired, reply, runtime, saffron_run, scenario_at,
    step, text,
};

const NEEDS_CUSTOMER: &str = "An order needs a customer";

/// A copy of the example project (features and recordings) with the demo password in `.env`.
fn project(name: &str, password: &str) -> std::path::PathBuf {
    let root = support::example_project(&format!("heal-{name}"));
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect("write .env");
    root
}

fn recording_of(root: &Path, relative: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(root.join(relative)).expect("recording")).expect("json")
}

fn write_json(root: &Path, relative: &str, value: &serde_json::Value) {
    std::fs::write(root.join(relative), serde_json::to_string_pretty(value).expect("json")).expect("write");
}

async fn scripted(wire: Wire, plans: Plans, seen: Seen) -> FakeServer {
    FakeServer::start(wire, move |request: &Request| {
        seen.push(request);
        reply(&plans, request)
    })
    .await
    .expect("fake server")
}

const TIMEOUTS: &str = "[timeouts]\naction_ms = 2000\nassertion_ms = 2000\nnavigation_ms = 10000\n";

fn save_repair() -> Vec<Op> {
    vec![
        op_snapshot(),
        step(7),
        click("button \"Save order\""),
        step(8),
        check_on("alert", json!({ "check": "text", "text": "Customer is required" })),
        repaired("locator", &[]),
    ]
}

fn op_snapshot() -> Op {
    support::agent::op("browser_snapshot", json!({}))
}

/// A committed recording whose save button is one the app no longer has (every signal
/// misses): replay fails at step 7, the agent repairs it on the live page, the proof passes,
/// the proposal is filed, the run is yellow; the next run replays the proposal at zero tokens.
#[test]
fn a_missing_control_is_repaired_proven_filed_and_replayed_yellow() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project("missing-control", &password);
    let cache = ".saffron/cache/new-order/an-order-needs-a-customer.json";
    let mut recording = recording_of(&root, cache);
    recording["steps"][6]["actions"][0]["target"] =
        json!({ "role": "button", "name": "Submit the order", "testId": "submit-order", "css": ["#submit-order"] });
    write_json(&root, cache, &recording);

    let mut plans = Plans::new();
    plans.insert(format!("{NEEDS_CUSTOMER} (repair)"), save_repair());
    let seen = Seen::default();
    let server = runtime.block_on(scripted(Wire::Anthropic, plans, seen.clone()));
    configure_agent(&root, "anthropic", &server, TIMEOUTS);
    let target = scenario_at(&root, "features/new_order.saffron", NEEDS_CUSTOMER);

    let output = saffron_run(&root, &demo.url(), std::slice::from_ref(&target));
    let all = text(&output);
    assert!(all.contains("1 yellow"), "{all}\nerrors told to the agent:\n{}", errors_told(&seen));
    assert_eq!(output.status.code(), Some(0), "{all}");
    let proposal_path = root.join(".saffron/proposals/new-order/an-order-needs-a-customer.json");
    let proposal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&proposal_path).expect("a proposal is filed")).expect("json");
    let repaired_target = &proposal["recording"]["steps"][6]["actions"][0]["target"];
    assert_eq!(repaired_target["name"], "Save order", "{proposal:#}");
    assert!(proposal.get("unverified").is_none(), "{proposal:#}");
    assert_eq!(proposal["diff"].as_array().map(Vec::len), Some(1), "{proposal:#}");
    // The committed recording is untouched until a person accepts.
    assert_eq!(recording_of(&root, cache), recording);
    // The task told the agent where replay stopped.
    let task = seen.all().first().and_then(|request| request.messages.first().map(|m| m.text())).unwrap_or_default();
    assert!(task.contains("Replay failed at step 7"), "{task}");

    // The next run replays the pending proposal: yellow, no request.
    let requests = server.requests().len();
    let output = saffron_run(&root, &demo.url(), std::slice::from_ref(&target));
    let all = text(&output);
    assert!(all.contains("1 yellow"), "{all}");
    assert_eq!(server.requests().len(), requests, "a replay of the proposal asked the agent");

    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}
