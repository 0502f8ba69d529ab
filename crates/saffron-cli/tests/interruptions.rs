//! Interruptions cleared by the project's handlers: the real binary, real Chromium, the demo.
//!
//! - The example project ships its handlers: with the demo's `interstitial` or
//!   `session-expiry` fault, all 17 browser scenarios are green, each cleared interruption named on its
//!   step, and an agent configured for the run is never asked anything.
//! - Without the handlers the same faults are red, and the message suggests one.
//! - With the handlers and no fault, nothing is cleared: a handler never changes a run where its
//!   interruption does not show.
//! - The lab ledger interrupts a payment *after* the server accepted it (a notice page; a
//!   session that ends with the post): the run clears it and carries on, and the payment exists
//!   exactly once.

use crate::support;

use std::path::{Path, PathBuf};

use saffron_agent::testing::Wire;
use saffron_demo::{DemoConfig, DemoServer, Fault};
use saffron_recording::{Recording, Store};
use serde_json::{Value, json};
use support::agent::{Plans, Seen, configure_agent, saffron_run, scripted};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

fn text(output: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The example project with its handlers, its `.env` holding the demo's password.
fn example_with_handlers(name: &str, password: &str) -> PathBuf {
    let root = support::example_project(&format!("interruptions-{name}"));
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    support::copy_dir(&repository.join(".saffron/handlers"), &root.join(".saffron/handlers"));
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect("write .env");
    root
}

/// The scenarios `saffron demo` replays: `@wip` has never been recorded.
fn not_wip() -> [String; 2] {
    ["--tags".to_owned(), "not @wip".to_owned()]
}

/// The browser scenarios among them: the faults here are a page's interruptions, which the
/// handlers clear in a browser; an `@api` scenario meets an expired session as the API's 401,
/// and no handler clears an HTTP answer.
fn browser_scenarios() -> [String; 2] {
    ["--tags".to_owned(), "not @wip and not @api".to_owned()]
}

fn demo_with(runtime: &tokio::runtime::Runtime, faults: &[Fault]) -> DemoServer {
    let mut config = DemoConfig::default();
    config.faults.extend(faults.iter().copied());
    runtime.block_on(DemoServer::start(config)).expect("demo")
}

fn latest(root: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join(".saffron/reports/latest.json")).expect("latest.json"))
        .expect("json")
}

/// Every scenario green with `fault` on, each interruption cleared by `handler`, and not one
/// request to the configured agent.
fn seventeen_green_at_zero_requests(fault: Fault, handler: &str) {
    let runtime = runtime();
    let demo = demo_with(&runtime, &[fault]);
    let root = example_with_handlers(fault.as_str(), &demo.config().password);
    let server = runtime.block_on(scripted(Wire::OpenAi, Plans::new(), Seen::default()));
    configure_agent(&root, "openai", &server, "");

    let output = saffron_run(&root, &demo.url(), &browser_scenarios());
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("17 scenario(s): 17 green, 0 yellow, 0 red"), "{all}");
    assert!(all.contains(&format!("cleared: {handler}")), "{all}");
    assert_eq!(server.requests().len(), 0, "the agent was asked: {all}");
    let report = latest(&root);
    let cleared: Vec<&Value> = report["scenarios"].as_array().into_iter().flatten().map(|s| &s["cleared"]).collect();
    assert!(cleared.iter().filter(|lines| lines.as_array().is_some_and(|l| !l.is_empty())).count() >= 10, "{report:#}");
    assert!(report.to_string().contains(&format!("\"cleared\":[\"{handler}\"]")), "a step names it: {report:#}");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

#[test]
fn a_consent_dialog_is_cleared_by_its_handler_in_every_scenario() {
    seventeen_green_at_zero_requests(Fault::Interstitial, "Cookie consent");
}

#[test]
fn an_expired_session_signs_in_again_with_the_sign_in_step_set_and_carries_on() {
    seventeen_green_at_zero_requests(Fault::SessionExpiry, "Session expired");
}

#[test]
fn without_handlers_the_faults_are_red_with_a_hint_and_with_them_a_normal_run_clears_nothing() {
    let runtime = runtime();
    for (fault, scenario) in
        [(Fault::Interstitial, "features/orders.saffron:17"), (Fault::SessionExpiry, "features/orders.saffron:17")]
    {
        let demo = demo_with(&runtime, &[fault]);
        let root = support::example_project(&format!("interruptions-none-{}", fault.as_str()));
        std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={}\n", demo.config().password)).expect(".env");
        std::fs::write(root.join("saffron.toml"), "[timeouts]\naction_ms = 1500\nassertion_ms = 1500\n").expect("toml");
        let output = saffron_run(&root, &demo.url(), &[scenario.to_owned()]);
        let all = text(&output);
        assert!(all.contains("1 red"), "{fault:?}: {all}");
        assert!(all.contains("add a handler for it under .saffron/handlers/"), "{fault:?}: {all}");
        let _ = std::fs::remove_dir_all(&root);
        let _ = runtime.block_on(demo.shutdown());
    }

    let demo = demo_with(&runtime, &[]);
    let root = example_with_handlers("no-fault", &demo.config().password);
    let output = saffron_run(&root, &demo.url(), &not_wip());
    let all = text(&output);
    assert!(all.contains("18 scenario(s): 18 green"), "{all}");
    assert!(!all.contains("cleared"), "{all}");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

// ---- the ledger: an interruption after the server accepted a payment ---------------------

const LEDGER_FEATURE: &str = "Feature: Ledger\n  Scenario: Post a payment\n    Given I am signed in to the ledger\n    \
                              When I post 125.50 to \"ACME\"\n    Then I see the payment posted\n";

fn sign_in_actions() -> Vec<Value> {
    vec![
        json!({ "type": "goto", "url": "/lab/ledger/login" }),
        json!({ "type": "fill", "target": { "label": "User" }, "value": "clerk" }),
        json!({ "type": "fill", "target": { "label": "Password" }, "value": "secret" }),
        json!({ "type": "click", "target": { "role": "button", "name": "Sign in" } }),
        json!({ "type": "expectVisible", "target": { "role": "heading", "name": "Post a payment" } }),
    ]
}

fn ledger_recording() -> Recording {
    let value = json!({
        "version": 1,
        "feature": "features/ledger.feature",
        "scenario": "Post a payment",
        "stepsDigest": "",
        "steps": [
            { "kind": "context", "text": "I am signed in to the ledger", "actions": sign_in_actions() },
            { "kind": "action", "text": "I post 125.50 to \"ACME\"", "actions": [
                { "type": "fill", "target": { "label": "Payee" }, "value": "ACME" },
                { "type": "fill", "target": { "label": "Amount" }, "value": "125.50" },
                { "type": "click", "target": { "role": "button", "name": "Post payment" } },
                { "type": "expectVisible", "target": { "role": "heading", "nameRegex": "^Payment \\d+ posted$" } },
            ] },
            { "kind": "outcome", "text": "I see the payment posted", "actions": [
                { "type": "expectText", "target": { "css": ["h1"] }, "text": "Payment 1 posted" },
            ] },
        ],
    });
    let parsed: Recording = serde_json::from_value(value).expect("a recording");
    Recording::new(parsed.feature, parsed.scenario, parsed.steps)
}

fn ledger_project() -> PathBuf {
    let root = std::env::temp_dir().join(format!("saffron-interruptions-ledger-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("features")).expect("mkdir");
    std::fs::create_dir_all(root.join(".saffron/handlers")).expect("mkdir");
    std::fs::write(root.join("features/ledger.feature"), LEDGER_FEATURE).expect("feature");
    std::fs::write(root.join("saffron.toml"), "[timeouts]\naction_ms = 3000\nassertion_ms = 3000\n").expect("toml");
    let store = Store::open(&root).expect("store");
    store.write_recording(&root.join(".saffron/cache/ledger/post-a-payment.json"), &ledger_recording()).expect("rec");
    let notice = json!({
        "version": 1,
        "name": "Maintenance notice",
        "detect": { "target": { "role": "heading", "name": "Scheduled maintenance" } },
        "actions": [ { "type": "click", "target": { "role": "link", "name": "Continue" } } ],
    });
    let session = json!({
        "version": 1,
        "name": "Ledger session expired",
        "detect": { "urlRegex": "^/lab/ledger/login\\?expired=1$" },
        "actions": sign_in_actions(),
        "resume": "returnToPage",
    });
    for (name, handler) in [("maintenance-notice", notice), ("ledger-session", session)] {
        let path = root.join(format!(".saffron/handlers/{name}.json"));
        std::fs::write(path, serde_json::to_string_pretty(&handler).expect("json")).expect("handler");
    }
    root
}

#[test]
fn an_interruption_after_the_server_accepted_a_payment_never_posts_it_twice() {
    let runtime = runtime();
    let demo = demo_with(&runtime, &[]);
    let root = ledger_project();
    let check = saffron_run_check(&root);
    assert!(check.status.success(), "the handlers are valid: {}", text(&check));
    for (notice, expire, cleared) in [
        (true, false, "Maintenance notice"),
        (false, true, "Ledger session expired"),
        (true, true, "Maintenance notice"),
    ] {
        demo.set_ledger_switches(notice, expire);
        let output = saffron_run(&root, &demo.url(), &[]);
        let all = text(&output);
        assert!(all.contains("1 scenario(s): 1 green"), "notice {notice}, expire {expire}: {all}");
        assert!(all.contains(&format!("cleared: {cleared}")), "{all}");
        assert_eq!(
            demo.ledger_payments(),
            [("ACME".to_owned(), "125.50".to_owned())],
            "notice {notice}, expire {expire}: the payment is posted exactly once: {all}"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

fn saffron_run_check(root: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_saffron")).arg("check").current_dir(root).output().expect("check")
}

#[test]
fn saffron_check_names_a_broken_handler_at_its_line_and_an_unknown_step_set() {
    let root = std::env::temp_dir().join(format!("saffron-interruptions-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join(".saffron/handlers")).expect("mkdir");
    std::fs::write(root.join("saffron.toml"), "").expect("toml");
    std::fs::write(root.join("a.saffron"), "Feature: A\n  StepSet: signed in\n    Given I sign in\n").expect("feature");
    let broken = "{\n  \"version\": 1,\n  \"name\": \"N\",\n  \"detect\": {},\n  \"actions\": []\n}\n";
    std::fs::write(root.join(".saffron/handlers/broken.json"), broken).expect("handler");
    let unknown = r#"{ "version": 1, "name": "S", "detect": { "urlRegex": "^/x" }, "stepSet": "signed on" }"#;
    std::fs::write(root.join(".saffron/handlers/unknown.json"), unknown).expect("handler");
    let known = r#"{ "version": 1, "name": "S", "detect": { "urlRegex": "^/x" }, "stepSet": "signed in" }"#;
    std::fs::write(root.join(".saffron/handlers/known.json"), known).expect("handler");

    let output = saffron_run_check(&root);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains(".saffron/handlers/broken.json:4:3: error: detect: a detector needs a target"), "{all}");
    assert!(
        all.contains(".saffron/handlers/unknown.json:1:") && all.contains("no StepSet is named \"signed on\""),
        "{all}"
    );
    assert!(all.contains("did you mean \"signed in\"?"), "{all}");
    assert!(!all.contains("/known.json:"), "{all}");
    assert!(all.contains("3 handler(s): 2 error(s)"), "{all}");
    let _ = std::fs::remove_dir_all(&root);
}

// ---- the Meridian back office: a session that expires inside a frame ---------------------

const MERIDIAN_FEATURE: &str = "Feature: Meridian\n  Scenario: Post a payment in the back office\n    \
                                When I post 80.00 to \"ACME\" for member 100234\n    Then the payment gets a reference\n";

fn in_main(target: Value) -> Value {
    let mut target = target;
    target["frame"] = json!({ "css": ["frame[name=\"main\"]"] });
    target
}

fn meridian_project(with_handler: bool) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("saffron-interruptions-meridian-{with_handler}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("features")).expect("mkdir");
    std::fs::write(root.join("features/meridian.feature"), MERIDIAN_FEATURE).expect("feature");
    std::fs::write(root.join("saffron.toml"), "[timeouts]\naction_ms = 3000\nassertion_ms = 3000\n").expect("toml");
    let recording = json!({
        "version": 1,
        "feature": "features/meridian.feature",
        "scenario": "Post a payment in the back office",
        "stepsDigest": "",
        "steps": [
            { "kind": "action", "text": "I post 80.00 to \"ACME\" for member 100234", "actions": [
                { "type": "goto", "url": "/lab/meridian" },
                { "type": "click", "target": in_main(json!({ "role": "link", "name": "Post a payment" })) },
                { "type": "fill", "target": in_main(json!({ "css": ["#ctl00_MainContent_txtMember"] })), "value": "100234" },
                { "type": "fill", "target": in_main(json!({ "css": ["#ctl00_MainContent_txtPayee"] })), "value": "ACME" },
                { "type": "fill", "target": in_main(json!({ "css": ["#ctl00_MainContent_txtAmount"] })), "value": "80.00" },
                { "type": "click", "target": in_main(json!({ "role": "button", "name": "Post" })) },
            ] },
            { "kind": "outcome", "text": "the payment gets a reference", "actions": [
                { "type": "expectText", "target": in_main(json!({ "css": ["#ctl00_MainContent_lblRef"] })),
                  "textRegex": "^PAY-\\d{4}$" },
            ] },
        ],
    });
    let parsed: Recording = serde_json::from_value(recording).expect("a recording");
    let recording = Recording::new(parsed.feature, parsed.scenario, parsed.steps);
    let store = Store::open(&root).expect("store");
    store
        .write_recording(&root.join(".saffron/cache/meridian/post-a-payment-in-the-back-office.json"), &recording)
        .expect("rec");
    if with_handler {
        std::fs::create_dir_all(root.join(".saffron/handlers")).expect("mkdir");
        // Detected by its button in the main frame; it logs in there, and the frame goes back to
        // the page it was sent away from.
        let handler = json!({
            "version": 1,
            "name": "Meridian log-in",
            "detect": { "target": in_main(json!({ "role": "button", "name": "Log in" })) },
            "actions": [
                { "type": "fill", "target": in_main(json!({ "css": ["#ctl00_MainContent_txtUser"] })), "value": "clerk" },
                { "type": "fill", "target": in_main(json!({ "css": ["#ctl00_MainContent_txtPassword"] })), "value": "secret" },
                { "type": "click", "target": in_main(json!({ "role": "button", "name": "Log in" })) },
            ],
        });
        let path = root.join(".saffron/handlers/meridian-log-in.json");
        std::fs::write(path, serde_json::to_string_pretty(&handler).expect("json")).expect("handler");
    }
    root
}

/// `session-expiry` on the Meridian back office: the payment page is sent to a log-in page in
/// the main frame (the page's own address does not change). The handler, detected by the log-in
/// button in that frame, logs in there; the frame returns to the payment page and the fill that
/// waited goes on. Without the handler the same replay is red; without the fault, the handler
/// never runs.
#[test]
fn a_session_that_expires_inside_a_frame_is_cleared_by_a_handler_in_that_frame() {
    let runtime = runtime();
    let demo = demo_with(&runtime, &[Fault::SessionExpiry]);
    let root = meridian_project(true);
    let check = saffron_run_check(&root);
    assert!(check.status.success(), "the handler is valid: {}", text(&check));
    let output = saffron_run(&root, &demo.url(), &[]);
    let all = text(&output);
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");
    assert!(all.contains("cleared: Meridian log-in"), "{all}");

    let bare = meridian_project(false);
    let output = saffron_run(&bare, &demo.url(), &[]);
    let all = text(&output);
    assert!(all.contains("1 red"), "without the handler: {all}");
    assert!(all.contains("#ctl00_MainContent_txtMember"), "the fill that waited is named: {all}");

    let mut config = demo.config();
    config.faults.clear();
    demo.set_config(config);
    let output = saffron_run(&root, &demo.url(), &[]);
    let all = text(&output);
    assert!(all.contains("1 scenario(s): 1 green") && !all.contains("cleared:"), "{all}");
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&bare);
    let _ = runtime.block_on(demo.shutdown());
}

/// `saffron demo` loads the example's handlers as `saffron run` loads a project's: with the
/// consent fault on, every scenario is green and the dialog is cleared by its handler.
#[test]
fn the_demo_clears_the_interruptions_of_its_faults_with_the_examples_handlers() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["demo", "--fault", "interstitial"])
        .current_dir(&repository)
        .output()
        .expect("saffron demo runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("18 scenario(s): 18 green"), "{all}");
    assert!(all.contains("cleared: Cookie consent"), "{all}");
}
