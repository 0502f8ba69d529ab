//! `saffron run` repairs a replay that fails on an action no fallback finds: the real binary,
//! real Chromium, the demo app, and a scripted agent on the fake vendor servers. The repair is
//! proven by a replay at zero AI, filed as a proposal, and the run is yellow; Then steps are
//! never repaired, and an agent's word never makes a scenario pass.

use crate::support;

use std::path::Path;

use saffron_agent::testing::{FakeServer, Wire};
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::json;
use support::agent::{
    Op, Plans, Seen, check_on, click, configure_agent, errors_told, repaired, runtime, saffron_run, scenario_at,
    scripted, step, text,
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

const TIMEOUTS: &str = "[timeouts]\naction_ms = 2000\nassertion_ms = 2000\nnavigation_ms = 10000\n";

/// `TIMEOUTS`, and hooks that put the demo's data back as the scenario starts: before the run
/// (`setup`), and before each proof (`before_proof`: the repair saved an order or a note on the
/// live app, and its proof would save a second one).
pub(crate) const TIMEOUTS_AND_RESET: &str = "[timeouts]\naction_ms = 2000\nassertion_ms = 2000\nnavigation_ms = 10000\n\
[hooks]\nsetup = \"python3 -c \\\"import os, urllib.request; urllib.request.urlopen(urllib.request.Request(\
os.environ['SAFFRON_BASE_URL'] + '/__demo/reset', method='POST'))\\\"\"\n\
before_proof = \"python3 -c \\\"import os, urllib.request; urllib.request.urlopen(urllib.request.Request(\
os.environ['SAFFRON_BASE_URL'] + '/__demo/reset', method='POST'))\\\"\"\n";

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
    // Two traces: the replay that failed (where the button was not found), and the repair's
    // proof, with the conversation that led to the proposal.
    let latest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(".saffron/reports/latest.json")).expect("latest"))
            .expect("json");
    let traces: Vec<serde_json::Value> = latest["scenarios"][0]["traces"]
        .as_array()
        .expect("traces")
        .iter()
        .map(|file| {
            serde_json::from_slice(&std::fs::read(root.join(file.as_str().expect("path"))).expect("trace"))
                .expect("json")
        })
        .collect();
    let kinds: Vec<&str> = traces.iter().filter_map(|trace| trace["kind"].as_str()).collect();
    assert_eq!(kinds, ["replay", "repair"], "{latest:#}");
    assert_eq!(traces[0]["outcome"]["verdict"], "red");
    assert!(traces[0]["failure"]["snapshot"]["html"].as_str().is_some_and(|html| html.contains("Save order")));
    assert_eq!(traces[1]["outcome"]["verdict"], "green");
    let turns = traces[1]["agent"]["turns"].as_array().expect("the repair's conversation");
    assert!(
        turns.iter().any(|turn| turn.to_string().contains("Replay failed at step 7")),
        "the task as the agent saw it"
    );

    // The next run replays the pending proposal: yellow, no request.
    let requests = server.requests().len();
    let output = saffron_run(&root, &demo.url(), std::slice::from_ref(&target));
    let all = text(&output);
    assert!(all.contains("1 yellow"), "{all}");
    assert_eq!(server.requests().len(), requests, "a replay of the proposal asked the agent");

    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

const CREATE: &str = "Create an order for <customer>";
const CREATE_CACHE: &str = ".saffron/cache/new-order/create-an-order-for-customer.json";
const CREATE_PROPOSAL: &str = ".saffron/proposals/new-order/create-an-order-for-customer.json";

/// The Outline's committed recording with a save button the app does not have.
fn missing_save_button(root: &Path) -> serde_json::Value {
    let mut recording = recording_of(root, CREATE_CACHE);
    recording["steps"][7]["actions"][0]["target"] =
        json!({ "role": "button", "name": "Submit the order", "testId": "submit-order", "css": ["#submit-order"] });
    write_json(root, CREATE_CACHE, &recording);
    recording
}

/// A repair of the save step whose Then checks are `then_checks` (per Then step 9 to 12); it
/// claims success twice, as an agent does when its first claim is refused.
fn save_then(then_checks: [Op; 4]) -> Vec<Op> {
    let [confirmation, total, sent, listed] = then_checks;
    vec![
        step(8),
        click("button \"Save order\""),
        support::agent::wait("^/api/orders$", "POST", "201"),
        op_snapshot(),
        step(9),
        confirmation,
        step(10),
        total,
        step(11),
        sent,
        step(12),
        support::agent::goto("/orders"),
        listed,
        repaired("locator", &[]),
        repaired("locator", &[]),
    ]
}

/// A check that holds on any page of the shop: an agent happy to pass at any price.
fn anything() -> Op {
    support::agent::check(json!({ "check": "url", "pattern": "/" }))
}

/// Checks of what Then steps 9 to 12 say, for Margaret Hamilton's order, that hold only on a
/// page that shows it: an agent that verifies what the steps say.
fn what_the_steps_say() -> [Op; 4] {
    let shown = |line: &str, text: &str| check_on(line, json!({ "check": "text", "text": text }));
    [
        shown("Order saved", "Order saved"),
        // The page shows the row's total as its token, as the model reads it.
        shown("Total: <total>", "Total: <total>"),
        anything(),
        support::agent::check(json!({ "check": "count", "role": "cell", "name": "Margaret Hamilton", "count": 1 })),
    ]
}

fn margaret(root: &Path) -> String {
    support::agent::line_of(root, "features/new_order.saffron", "| Margaret Hamilton")
}

fn demo_with(runtime: &tokio::runtime::Runtime, defects: &[saffron_demo::Defect]) -> DemoServer {
    let mut config = DemoConfig::default();
    config.defects.extend(defects.iter().copied());
    runtime.block_on(DemoServer::start(config)).expect("demo")
}

/// A failed Then step is re-run as recorded on the live page; failing again it is red, and the
/// agent is never asked.
#[test]
fn a_failed_then_is_rerun_as_recorded_and_red_without_asking_the_agent() {
    let runtime = runtime();
    let demo = demo_with(&runtime, &[saffron_demo::Defect::WrongTotal]);
    let root = project("then-rerun", &demo.config().password);
    let mut plans = Plans::new();
    plans.insert(format!("{CREATE} (repair)"), save_then([anything(), anything(), anything(), anything()]));
    let server = runtime.block_on(scripted(Wire::Anthropic, plans, Seen::default()));
    configure_agent(&root, "anthropic", &server, TIMEOUTS);

    let output = saffron_run(&root, &demo.url(), &[margaret(&root)]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("1 red"), "{all}");
    assert!(all.contains("step 10") && all.contains("re-run as recorded"), "{all}");
    assert_eq!(server.requests().len(), 0, "a failed Then reached the agent");
    assert!(!root.join(CREATE_PROPOSAL).exists());
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// The agent repairs the save step and then "verifies" the wrong total the defect shows: its
/// check does not hold the step's value ("€13.50"), so it is refused as not about the step; the
/// repair ends unverified and red, nothing is filed, and no weakened check is on disk.
#[test]
fn a_repair_that_records_the_wrong_total_is_red_and_the_committed_check_stays() {
    let runtime = runtime();
    let demo = demo_with(&runtime, &[saffron_demo::Defect::WrongTotal]);
    let root = project("wrong-total", &demo.config().password);
    let committed = missing_save_button(&root);
    let wrong_total = check_on("Total: €14.50", json!({ "check": "text", "text": "Total: €14.50" }));
    let [confirmation, _, sent, listed] = what_the_steps_say();
    let mut plans = Plans::new();
    plans.insert(format!("{CREATE} (repair)"), save_then([confirmation, wrong_total, sent, listed]));
    let seen = Seen::default();
    let server = runtime.block_on(scripted(Wire::OpenAi, plans, seen.clone()));
    configure_agent(&root, "openai", &server, TIMEOUTS);

    let output = saffron_run(&root, &demo.url(), &[margaret(&root)]);
    let all = text(&output);
    let told = errors_told(&seen);
    assert_eq!(output.status.code(), Some(1), "{all}\nerrors told to the agent:\n{told}");
    assert!(all.contains("1 red") && all.contains("without a verified check of Then step(s) 10"), "{all}");
    // The step's value is named by its token: the model never reads it.
    assert!(told.contains("this check is not about step 10") && told.contains("(\"<total>\")"), "{told}");
    assert!(!told.contains("€13.50"), "{told}");
    assert!(!root.join(CREATE_PROPOSAL).exists(), "nothing is filed");
    assert_eq!(recording_of(&root, CREATE_CACHE), committed);
    let mut files = Vec::new();
    support::agent::every_file(&root.join(".saffron"), &mut files);
    for file in files.iter().filter(|file| file.extension().is_some_and(|e| e == "json")) {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        assert!(!text.contains("\"Total: €14.50\""), "{} holds the weakened check", file.display());
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// Every defect switch, with the save button changed so the agent is called, and an agent that
/// checks what each Then step says: no defect ends green or yellow, and the same agent on the
/// healthy app gets a yellow. An agent happy to "verify" each Then with a check that holds on any
/// page, or with a pattern that names the step's value and matches without it, is refused and
/// red even on the healthy app: a check must be about its step.
#[test]
fn no_defect_ends_green_or_yellow_with_a_heal_happy_agent() {
    let runtime = runtime();
    let mut plans = Plans::new();
    plans.insert(format!("{CREATE} (repair)"), save_then(what_the_steps_say()));
    plans.insert(format!("{CREATE} (repair refine)"), save_then(what_the_steps_say()));
    let seen = Seen::default();
    let server = runtime.block_on(scripted(Wire::Anthropic, plans, seen.clone()));
    let mut cases: Vec<Option<saffron_demo::Defect>> = saffron_demo::Defect::ALL.iter().copied().map(Some).collect();
    cases.push(None);
    for defect in cases {
        let demo = demo_with(&runtime, defect.as_slice());
        let root = project(&format!("happy-{}", defect.map_or("none", |d| d.as_str())), &demo.config().password);
        missing_save_button(&root);
        configure_agent(&root, "anthropic", &server, TIMEOUTS_AND_RESET);
        let output = saffron_run(&root, &demo.url(), &[margaret(&root)]);
        let all = text(&output);
        match defect {
            Some(defect) => {
                assert!(all.contains("1 red"), "{defect}: {all}");
                assert_eq!(output.status.code(), Some(1), "{defect}: {all}");
                let kept = std::fs::read_to_string(root.join(CREATE_PROPOSAL)).unwrap_or_default();
                assert!(kept.is_empty() || kept.contains("\"unverified\""), "{defect}: a verified proposal: {kept}");
            }
            None => assert!(all.contains("1 yellow"), "healthy app: {all}\n{}", errors_told(&seen)),
        }
        let _ = std::fs::remove_dir_all(&root);
        let _ = runtime.block_on(demo.shutdown());
    }

    // The happy agent, on the healthy app.
    let gaming = |value: &str| support::agent::check(json!({ "check": "url", "pattern": format!("/|{value}") }));
    for (checks, refusal) in [
        ([anything(), anything(), anything(), anything()], "this check is not about step 9"),
        (
            [gaming("Order saved"), gaming("€13\\.50"), anything(), gaming("Margaret Hamilton")],
            "this check holds whether or not the page shows the values of step 9",
        ),
    ] {
        let mut plans = Plans::new();
        plans.insert(format!("{CREATE} (repair)"), save_then(checks));
        let seen = Seen::default();
        let server = runtime.block_on(scripted(Wire::Anthropic, plans, seen.clone()));
        let demo = demo_with(&runtime, &[]);
        let root = project("happy-anything", &demo.config().password);
        missing_save_button(&root);
        configure_agent(&root, "anthropic", &server, TIMEOUTS_AND_RESET);
        let output = saffron_run(&root, &demo.url(), &[margaret(&root)]);
        let all = text(&output);
        let told = errors_told(&seen);
        assert!(
            all.contains("1 red") && all.contains("without a verified check of Then step(s) 9 \""),
            "{all}\n{told}"
        );
        assert!(told.contains(refusal), "{told}");
        assert!(!root.join(CREATE_PROPOSAL).exists(), "nothing is filed");
        let _ = std::fs::remove_dir_all(&root);
        let _ = runtime.block_on(demo.shutdown());
    }
}

/// An agent that skips a Then step is told once, then the session ends unverified: red, and
/// nothing is filed.
#[test]
fn a_repair_that_skips_a_then_is_red_and_files_nothing() {
    let runtime = runtime();
    let demo = demo_with(&runtime, &[]);
    let root = project("skip-then", &demo.config().password);
    let mut plans = Plans::new();
    plans.insert(
        format!("{NEEDS_CUSTOMER} (repair)"),
        vec![step(7), click("button \"Save order\""), repaired("locator", &[]), repaired("locator", &[])],
    );
    let cache = ".saffron/cache/new-order/an-order-needs-a-customer.json";
    let mut recording = recording_of(&root, cache);
    recording["steps"][6]["actions"][0]["target"] = json!({ "role": "button", "name": "Submit the order" });
    write_json(&root, cache, &recording);
    let server = runtime.block_on(scripted(Wire::Anthropic, plans, Seen::default()));
    configure_agent(&root, "anthropic", &server, TIMEOUTS);

    let output = saffron_run(&root, &demo.url(), &[scenario_at(&root, "features/new_order.saffron", NEEDS_CUSTOMER)]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("without a verified check of Then step(s) 8"), "{all}");
    assert!(!root.join(".saffron/proposals/new-order/an-order-needs-a-customer.json").exists());
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// A committed check in the When step that the repair cannot make true: the live session ends
/// in "success", the proof fails on the check, the one refine claims success again, the second
/// proof fails too: red, the proposal kept unverified, the check still as committed.
#[test]
fn success_claimed_after_a_failed_proof_gets_one_refine_then_red_unverified() {
    let runtime = runtime();
    let demo = demo_with(&runtime, &[]);
    let root = project("claims-success", &demo.config().password);
    let cache = ".saffron/cache/new-order/an-order-needs-a-customer.json";
    let mut recording = recording_of(&root, cache);
    recording["steps"][6]["actions"] = json!([
        { "type": "click", "target": { "role": "button", "name": "Submit the order" } },
        { "type": "expectVisible", "target": { "role": "heading", "name": "Order accepted" } }
    ]);
    write_json(&root, cache, &recording);
    let mut plans = Plans::new();
    plans.insert(format!("{NEEDS_CUSTOMER} (repair)"), save_repair());
    plans.insert(format!("{NEEDS_CUSTOMER} (repair refine)"), save_repair());
    let seen = Seen::default();
    let server = runtime.block_on(scripted(Wire::Anthropic, plans, seen.clone()));
    configure_agent(&root, "anthropic", &server, TIMEOUTS);

    let output = saffron_run(&root, &demo.url(), &[scenario_at(&root, "features/new_order.saffron", NEEDS_CUSTOMER)]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("did not pass its proof replay"), "{all}");
    let tasks: Vec<String> = seen
        .all()
        .iter()
        .filter(|request| request.messages.len() == 1)
        .map(|request| request.messages[0].text())
        .collect();
    assert_eq!(tasks.len(), 2, "one repair and one refine: {tasks:#?}");
    assert!(tasks[1].contains("replayed from the start without you"), "{}", tasks[1]);
    let proposal: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".saffron/proposals/new-order/an-order-needs-a-customer.json"))
            .expect("kept"),
    )
    .expect("json");
    assert!(proposal["unverified"].is_string(), "{proposal:#}");
    let step7 = &proposal["recording"]["steps"][6]["actions"];
    assert_eq!(step7.as_array().and_then(|actions| actions.last()), recording["steps"][6]["actions"].get(1));

    // An unverified proposal is never replayed as pending: the next run replays the committed
    // recording and repairs it again.
    let requests = server.requests().len();
    let output = saffron_run(&root, &demo.url(), &[scenario_at(&root, "features/new_order.saffron", NEEDS_CUSTOMER)]);
    let all = text(&output);
    assert!(all.contains("1 red") && !all.contains("pending proposal"), "{all}");
    assert!(server.requests().len() > requests, "the committed recording was not repaired again");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// A provider that fails mid-repair: one retry from a fresh replay, then blocked with its
/// cause, nothing filed.
#[test]
fn an_agent_that_dies_mid_repair_is_retried_once_then_blocked_with_nothing_filed() {
    let runtime = runtime();
    let demo = demo_with(&runtime, &[]);
    let root = project("agent-dies", &demo.config().password);
    let cache = ".saffron/cache/new-order/an-order-needs-a-customer.json";
    let mut recording = recording_of(&root, cache);
    recording["steps"][6]["actions"][0]["target"] = json!({ "role": "button", "name": "Submit the order" });
    write_json(&root, cache, &recording);
    let server = runtime
        .block_on(FakeServer::start(Wire::Anthropic, |_: &saffron_agent::Request| {
            saffron_agent::testing::Reply::garbage()
        }))
        .expect("fake server");
    configure_agent(&root, "anthropic", &server, TIMEOUTS);

    let output = saffron_run(&root, &demo.url(), &[scenario_at(&root, "features/new_order.saffron", NEEDS_CUSTOMER)]);
    let all = text(&output);
    assert!(all.contains("1 blocked") && all.contains("failed twice"), "{all}");
    assert_eq!(server.requests().len(), 2, "one session and one retry");
    assert!(!root.join(".saffron/proposals/new-order/an-order-needs-a-customer.json").exists());
    assert_eq!(recording_of(&root, cache), recording);
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

fn saffron(root: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(args)
        .current_dir(root)
        .env_remove("DEMO_PASSWORD")
        .output()
        .expect("saffron runs")
}

fn demo_with_switches(
    runtime: &tokio::runtime::Runtime,
    drift: &[saffron_demo::Drift],
    faults: &[saffron_demo::Fault],
) -> DemoServer {
    let mut config = DemoConfig::default();
    config.drift.extend(drift.iter().copied());
    config.faults.extend(faults.iter().copied());
    runtime.block_on(DemoServer::start(config)).expect("demo")
}

/// `relocated-save`: the save button renamed, re-identified and moved, so no recorded signal
/// finds it. Repaired yellow with its proof passed; `saffron accept --propagate` also rewrites
/// the Outline that saves an order; then both replay green with zero provider requests.
#[test]
fn relocated_save_is_repaired_accepted_and_propagated_then_green_at_zero_requests() {
    let runtime = runtime();
    let demo = demo_with_switches(&runtime, &[saffron_demo::Drift::RelocatedSave], &[]);
    let root = project("relocated-save", &demo.config().password);
    let mut plans = Plans::new();
    plans.insert(format!("{NEEDS_CUSTOMER} (repair)"), support::ci::relocated_save_repair());
    let seen = Seen::default();
    let server = runtime.block_on(scripted(Wire::Anthropic, plans, seen.clone()));
    configure_agent(&root, "anthropic", &server, TIMEOUTS);
    let needs_customer = scenario_at(&root, "features/new_order.saffron", NEEDS_CUSTOMER);

    let output = saffron_run(&root, &demo.url(), std::slice::from_ref(&needs_customer));
    let all = text(&output);
    assert!(all.contains("1 yellow"), "{all}\nerrors told to the agent:\n{}", errors_told(&seen));
    let proposals = saffron(&root, &["proposals", "--format", "json"]);
    let listed: serde_json::Value = serde_json::from_slice(&proposals.stdout).expect("json");
    assert_eq!(listed["proposals"].as_array().map(Vec::len), Some(1), "{listed:#}");

    let accept = saffron(&root, &["accept", "new-order/an-order-needs-a-customer", "--propagate"]);
    let said = text(&accept);
    assert_eq!(accept.status.code(), Some(0), "{said}");
    assert!(said.contains("propagated to .saffron/cache/new-order/create-an-order-for-customer.json"), "{said}");

    let requests = server.requests().len();
    let every = vec![
        needs_customer,
        support::agent::line_of(&root, "features/new_order.saffron", "| Margaret Hamilton"),
        support::agent::line_of(&root, "features/new_order.saffron", "| Katherine Johnson"),
    ];
    let output = saffron_run(&root, &demo.url(), &every);
    let all = text(&output);
    assert!(all.contains("3 scenario(s): 3 green"), "{all}");
    assert_eq!(server.requests().len(), requests, "a replay after accept asked the agent");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

const ADD_NOTE: &str = "Add a note to an order";

/// The steps of "Add a note to an order" from step 5 on, as the agent performs them.
fn add_the_note() -> Vec<Op> {
    vec![
        step(5),
        support::agent::fill("textbox \"Note\"", "Deliver before noon, please."),
        click("button \"Add note\""),
        support::agent::wait("^/api/orders/1001/notes$", "POST", "2xx"),
        step(6),
        support::agent::check(json!({ "check": "visible", "text": "Deliver before noon, please." })),
    ]
}

/// A project whose agent repairs "Add a note to an order" at step 4 with `at_step_4` and then
/// does the rest of it and `done`, on a demo with the given switches. Returns the project, the
/// server, what the server saw and the demo; nothing has run yet.
fn repairing_add_note(
    runtime: &tokio::runtime::Runtime,
    name: &str,
    drift: &[saffron_demo::Drift],
    faults: &[saffron_demo::Fault],
    at_step_4: Vec<Op>,
    done: Op,
) -> (std::path::PathBuf, FakeServer, Seen, DemoServer) {
    let demo = demo_with_switches(runtime, drift, faults);
    let root = project(name, &demo.config().password);
    let mut plan = vec![step(4)];
    plan.extend(at_step_4);
    plan.extend(add_the_note());
    plan.push(done);
    let mut plans = Plans::new();
    plans.insert(format!("{ADD_NOTE} (repair)"), plan);
    let seen = Seen::default();
    let server = runtime.block_on(scripted(Wire::OpenAi, plans, seen.clone()));
    configure_agent(&root, "openai", &server, TIMEOUTS_AND_RESET);
    (root, server, seen, demo)
}

/// Repairs "Add a note to an order" at step 4 with `at_step_4`, on a demo with the given
/// switches: yellow with its proof passed. Returns the project, the server and the demo.
fn repaired_add_note(
    runtime: &tokio::runtime::Runtime,
    name: &str,
    drift: &[saffron_demo::Drift],
    faults: &[saffron_demo::Fault],
    at_step_4: Vec<Op>,
    done: Op,
) -> (std::path::PathBuf, FakeServer, DemoServer) {
    let (root, server, seen, demo) = repairing_add_note(runtime, name, drift, faults, at_step_4, done);
    let output = saffron_run(&root, &demo.url(), &[scenario_at(&root, "features/orders.saffron", ADD_NOTE)]);
    let all = text(&output);
    assert!(all.contains("1 yellow"), "{name}: {all}\nerrors told to the agent:\n{}", errors_told(&seen));
    assert!(all.contains("repaired from step 4"), "{name}: {all}");
    (root, server, demo)
}

/// `confirm-step`: a confirmation page inserted before an order opens. The repair clicks
/// "Continue" after the recorded click, rewords the Given step, and the flow change is noted;
/// `saffron accept --with-feature-edit` edits the feature and the recording together, and the
/// next run is green at zero requests.
#[test]
fn an_inserted_confirmation_page_is_repaired_with_a_feature_edit_then_green_after_accept() {
    let runtime = runtime();
    let reworded = "I open the order \"#1001\" and continue";
    let (root, server, demo) = repaired_add_note(
        &runtime,
        "confirm-step",
        &[saffron_demo::Drift::ConfirmStep],
        &[],
        vec![click("button \"Continue\"")],
        repaired("page-added", &[(4, reworded)]),
    );
    let proposal: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".saffron/proposals/orders/add-a-note-to-an-order.json")).expect("filed"),
    )
    .expect("json");
    let adaptations = proposal["adaptations"].to_string();
    assert!(adaptations.contains("change: a page was added to the flow"), "{adaptations}");
    assert!(adaptations.contains("flow change:") && adaptations.contains("Continue"), "{adaptations}");
    let edit = &proposal["featureEdits"][0];
    assert_eq!(edit["file"], "features/orders.saffron", "{proposal:#}");
    assert!(edit["after"].as_str().is_some_and(|after| after.ends_with(reworded)), "{proposal:#}");
    let step4 = &proposal["recording"]["steps"][3]["actions"];
    let types: Vec<&str> = step4.as_array().into_iter().flatten().filter_map(|a| a["type"].as_str()).collect();
    assert_eq!(types, ["click", "click", "expectVisible"], "{step4:#}");

    let accept =
        saffron(&root, &["accept", ".saffron/proposals/orders/add-a-note-to-an-order.json", "--with-feature-edit"]);
    assert_eq!(accept.status.code(), Some(0), "{}", text(&accept));
    let feature = std::fs::read_to_string(root.join("features/orders.saffron")).expect("feature");
    assert!(feature.contains(&format!("Given {reworded}")), "{feature}");
    let requests = server.requests().len();
    let output = saffron_run(&root, &demo.url(), &[scenario_at(&root, "features/orders.saffron", ADD_NOTE)]);
    let all = text(&output);
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");
    assert_eq!(server.requests().len(), requests);
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// `confirm-step` again, with an agent that rewords the Given step so that it loses its value
/// ("#1001"): the repair is filed and yellow, without that rewording, which is named as refused.
#[test]
fn a_rewording_that_drops_a_steps_value_is_not_proposed() {
    let runtime = runtime();
    let (root, _server, demo) = repaired_add_note(
        &runtime,
        "rewording-drops-value",
        &[saffron_demo::Drift::ConfirmStep],
        &[],
        vec![click("button \"Continue\"")],
        repaired("page-added", &[(4, "I open an order and continue")]),
    );
    let proposal: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".saffron/proposals/orders/add-a-note-to-an-order.json")).expect("filed"),
    )
    .expect("json");
    assert_eq!(proposal["featureEdits"].as_array().map(Vec::len).unwrap_or(0), 0, "{proposal:#}");
    let adaptations = proposal["adaptations"].to_string();
    assert!(
        adaptations.contains("rewording of step 4 refused: it drops the step's value(s) \\\"#1001\\\""),
        "{adaptations}"
    );
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// The `interstitial` fault: a cookie-consent dialog covers the orders list. The repair accepts
/// it before the recorded click: that is an interruption, so a handler is filed for review (its
/// detector the button the happy path never shows), never a flow change in the scenario; proven
/// and yellow. Accepted, it changes nothing in a run where no dialog shows, and clears the dialog
/// where one does, both at zero requests.
#[test]
fn a_consent_interstitial_is_repaired_as_a_handler_that_never_breaks_a_run_without_it() {
    let runtime = runtime();
    let (root, server, demo) = repaired_add_note(
        &runtime,
        "interstitial",
        &[],
        &[saffron_demo::Fault::Interstitial],
        vec![click("Accept cookies"), click("link \"#1001\"")],
        repaired("page-added", &[]),
    );
    assert!(!root.join(".saffron/proposals/orders/add-a-note-to-an-order.json").exists(), "no flow change filed");
    let proposed = root.join(".saffron/handlers/proposed/cookie-consent.json");
    let handler: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&proposed).expect("a handler is proposed")).expect("json");
    assert_eq!(handler["name"], "Cookie consent", "{handler:#}");
    assert_eq!(handler["detect"]["target"]["name"], "Accept cookies", "{handler:#}");
    assert_eq!(handler["actions"].as_array().map(Vec::len), Some(1), "{handler:#}");
    let listed = text(&saffron(&root, &["proposals"]));
    assert!(listed.contains(".saffron/handlers/proposed/cookie-consent.json  handler \"Cookie consent\""), "{listed}");

    let accept = saffron(&root, &["accept", "handlers/cookie-consent"]);
    assert_eq!(accept.status.code(), Some(0), "{}", text(&accept));
    assert!(root.join(".saffron/handlers/cookie-consent.json").exists() && !proposed.exists());
    let requests = server.requests().len();
    let scenario = scenario_at(&root, "features/orders.saffron", ADD_NOTE);
    for faults in [vec![], vec![saffron_demo::Fault::Interstitial]] {
        let cleared = !faults.is_empty();
        let mut config = demo.config();
        config.faults = faults.into_iter().collect();
        demo.set_config(config);
        let output = saffron_run(&root, &demo.url(), std::slice::from_ref(&scenario));
        let all = text(&output);
        assert!(all.contains("1 scenario(s): 1 green"), "{all}");
        assert_eq!(all.contains("cleared: Cookie consent"), cleared, "{all}");
    }
    assert_eq!(server.requests().len(), requests, "the agent was not asked again");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// An adversarial repair under `fault`: it clears the interruption with `clearing`, then also
/// clicks something on the page behind it ("Delete order #1004"), and calls it all the
/// interruption. Filed as a handler, that click would run in every scenario the interruption
/// shows in. The handler's proof refuses it (a handler acts only inside its interruption, while
/// it shows): red, nothing filed.
fn a_harmful_action_in_a_handler_is_refused(name: &str, fault: saffron_demo::Fault, clearing: Vec<Op>) {
    let runtime = runtime();
    let mut at_step_4 = clearing;
    at_step_4.extend([click("button \"Delete order #1004\""), click("link \"#1001\"")]);
    let done = repaired("page-added", &[]);
    let (root, _server, seen, demo) = repairing_add_note(&runtime, name, &[], &[fault], at_step_4, done);
    let output = saffron_run(&root, &demo.url(), &[scenario_at(&root, "features/orders.saffron", ADD_NOTE)]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{name}: {all}\nerrors told to the agent:\n{}", errors_told(&seen));
    assert!(all.contains("1 red") && all.contains("did not pass its proof"), "{name}: {all}");
    assert!(all.contains("a handler acts only"), "{name}: the refusal says why: {all}");
    assert!(!root.join(".saffron/handlers/proposed").exists(), "{name}: no handler is filed");
    assert!(!root.join(".saffron/proposals/orders/add-a-note-to-an-order.json").exists(), "{name}: no flow change");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

#[test]
fn a_harmful_action_slipped_into_a_consent_handler_is_refused_and_nothing_is_filed() {
    a_harmful_action_in_a_handler_is_refused(
        "harmful-consent",
        saffron_demo::Fault::Interstitial,
        vec![click("Accept cookies")],
    );
}

#[test]
fn a_harmful_action_slipped_into_a_sign_in_handler_is_refused_and_nothing_is_filed() {
    a_harmful_action_in_a_handler_is_refused(
        "harmful-sign-in",
        saffron_demo::Fault::SessionExpiry,
        vec![
            support::agent::fill("textbox \"Email\"", "demo@saffron.test"),
            support::agent::fill("textbox \"Password\"", "{env:DEMO_PASSWORD}"),
            click("button \"Sign in\""),
            support::agent::wait("^/api/session$", "POST", "2xx"),
        ],
    );
}

/// The `session-expiry` fault: opening the order lands on the sign-in page. The repair signs in
/// again (the password as its token) and opens the order: the page was sent back to the sign-in
/// page at another address, so a handler is filed that signs in and returns to the page, proven
/// in a fresh browser and yellow, and it holds no password.
#[test]
fn an_expired_session_is_repaired_as_a_handler_that_signs_in_again() {
    let runtime = runtime();
    let (root, _server, demo) = repaired_add_note(
        &runtime,
        "session-expiry",
        &[],
        &[saffron_demo::Fault::SessionExpiry],
        vec![
            support::agent::fill("textbox \"Email\"", "demo@saffron.test"),
            support::agent::fill("textbox \"Password\"", "{env:DEMO_PASSWORD}"),
            click("button \"Sign in\""),
            support::agent::wait("^/api/session$", "POST", "2xx"),
            click("link \"#1001\""),
        ],
        repaired("page-added", &[]),
    );
    assert!(!root.join(".saffron/proposals/orders/add-a-note-to-an-order.json").exists(), "no flow change filed");
    let proposed = std::fs::read_to_string(root.join(".saffron/handlers/proposed/sent-back-to-login-expired-1.json"))
        .expect("a handler is proposed");
    let handler: serde_json::Value = serde_json::from_str(&proposed).expect("json");
    assert_eq!(handler["detect"]["urlRegex"], "^/login\\?expired=1$", "{handler:#}");
    assert_eq!(handler["resume"], "returnToPage", "{handler:#}");
    let types: Vec<&str> =
        handler["actions"].as_array().into_iter().flatten().filter_map(|a| a["type"].as_str()).collect();
    assert_eq!(types, ["fill", "fill", "click", "waitForResponse"], "the step's own click is not in it: {handler:#}");
    assert!(proposed.contains("{env:DEMO_PASSWORD}") && !proposed.contains(&demo.config().password), "{proposed}");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// Two scenarios the consent dialog stops, one worker: the first is repaired, and its handler is
/// proven; the second replays with that handler and is yellow on it without asking the agent.
#[test]
fn a_handler_proven_in_a_run_clears_the_same_interruption_in_the_next_scenario_at_zero_requests() {
    let runtime = runtime();
    let at_step_4 = vec![click("Accept cookies"), click("link \"#1001\"")];
    let done = repaired("page-added", &[]);
    let interstitial = [saffron_demo::Fault::Interstitial];
    let (root, _server, seen, demo) =
        repairing_add_note(&runtime, "interstitial-twice", &[], &interstitial, at_step_4, done);
    let first = scenario_at(&root, "features/orders.saffron", ADD_NOTE);
    let second = scenario_at(&root, "features/orders.saffron", "Delete an order after confirming");
    let output = saffron_run(&root, &demo.url(), &["--workers".into(), "1".into(), first, second]);
    let all = text(&output);
    assert!(
        all.contains("2 scenario(s): 0 green, 2 yellow"),
        "{all}\nerrors told to the agent:\n{}",
        errors_told(&seen)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".saffron/reports/latest.json")).expect("report"))
            .expect("json");
    let delete =
        report["scenarios"].as_array().into_iter().flatten().find(|s| s["name"] == "Delete an order after confirming");
    let delete = delete.expect("the second scenario is reported");
    assert_eq!(delete["verdict"], "yellow", "{delete:#}");
    assert_eq!(delete["proposal"], ".saffron/handlers/proposed/cookie-consent.json", "{delete:#}");
    assert!(delete["agent"].is_null(), "the agent was not asked for the second: {delete:#}");
    assert!(!root.join(".saffron/proposals").exists(), "no flow change filed: {all}");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}
