//! The agent records `@api` scenarios through the real binary, on the demo shop's JSON API, with
//! a scripted model on the fake Anthropic wire that reads what each tool answers (the id of the
//! order it made) and uses it: the recording is proved and saved, replays at zero model
//! requests and starts no browser. Adversarial scripts prove each guard: a browser tool, an
//! undeclared secret, an id copied by hand, a status the step does not name, a check that does
//! not hold or is not about its step, a pattern that holds anything, and a server error the
//! agent tries to pass off as the expected answer.

use crate::support;

use std::path::PathBuf;
use std::process::{Command, Output};

use saffron_agent::testing::FakeServer;
use saffron_demo::{DemoConfig, DemoServer, Fault};
use serde_json::{Value, json};
use support::agent::{
    CallPlans, LAST_ID, Seen, errors_told, every_file, runtime, scripted_reading_ids, text, tool_call,
};

pub(crate) const FEATURE: &str = "\
@api
Feature: Orders through the API

  Scenario: An order made through the API reads back
    Given the API client has signed in as the demo user
    When the API client orders 2 \"Tea\" for \"Lin\"
    Then the API answers that the order was made for 900 cents
    And the order read back through the API holds 2 \"Tea\"

  Scenario: An order that does not exist is not found
    Given the API client has signed in as the demo user
    When the API client reads the order \"999999\"
    Then the API answers 404 Not Found
";

pub(crate) const MADE: &str = "An order made through the API reads back";
const NOT_FOUND: &str = "An order that does not exist is not found";

const ORDER_ID: &str = LAST_ID;

type Plans = CallPlans;

pub(crate) fn call(tool: &str, input: Value) -> (String, Value) {
    tool_call(tool, input)
}

pub(crate) fn step(number: usize) -> (String, Value) {
    call("saffron_step", json!({ "step": number }))
}

pub(crate) fn sign_in() -> Vec<(String, Value)> {
    vec![
        step(1),
        call(
            "saffron_request",
            json!({ "method": "POST", "path": "/api/session",
                    "body": { "email": "demo@saffron.test", "password": "{env:DEMO_PASSWORD}" } }),
        ),
    ]
}

pub(crate) fn order_tea() -> (String, Value) {
    call(
        "saffron_request",
        json!({ "method": "POST", "path": "/api/orders", "body": { "customer": "Lin", "quantity": 2, "product": "Tea" } }),
    )
}

pub(crate) fn field(pointer: &str, value: Value) -> (String, Value) {
    call("saffron_assert", json!({ "check": "field", "pointer": pointer, "value": value }))
}

pub(crate) fn done(success: bool) -> (String, Value) {
    call("saffron_done", json!({ "success": success, "narrative": "as the steps say" }))
}

pub(crate) struct Project {
    pub(crate) root: PathBuf,
    password: String,
}

impl Project {
    pub(crate) fn new(name: &str, server: &FakeServer, password: &str) -> Project {
        let root = std::env::temp_dir().join(format!("saffron-record-api-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("features")).expect("mkdir");
        std::fs::write(root.join("features/orders_api.feature"), FEATURE).expect("feature");
        std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect(".env");
        // The demo's pinned contract, as the example project has it.
        let repository = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        std::fs::create_dir_all(root.join("contracts")).expect("mkdir");
        std::fs::copy(repository.join("contracts/app.openapi.json"), root.join("contracts/app.openapi.json"))
            .expect("the contract");
        // No browser is needed: a path Chromium cannot be at proves none is started.
        let config = format!(
            "[browser]\npath = \"no-such-chromium\"\n[agent]\nprovider = \"anthropic\"\nmodel = \"fake-model\"\n\
             base_url = \"{}\"\napi_key_env = \"\"\n",
            server.base_url()
        );
        std::fs::write(root.join("saffron.toml"), config).expect("config");
        Project { root, password: password.to_owned() }
    }

    pub(crate) fn run(&self, base_url: &str) -> Output {
        Command::new(env!("CARGO_BIN_EXE_saffron"))
            .args(["run", "--base-url", base_url])
            .current_dir(&self.root)
            .env_remove("DEMO_PASSWORD")
            .output()
            .expect("saffron runs")
    }

    /// Runs the first scenario only.
    pub(crate) fn run_made(&self, base_url: &str) -> Output {
        let line = FEATURE.lines().position(|line| line.contains(MADE)).expect("the scenario") + 1;
        Command::new(env!("CARGO_BIN_EXE_saffron"))
            .args(["run", "--base-url", base_url, &format!("features/orders_api.feature:{line}")])
            .current_dir(&self.root)
            .env_remove("DEMO_PASSWORD")
            .output()
            .expect("saffron runs")
    }

    pub(crate) fn recording(&self, scenario: &str) -> Option<Value> {
        let path = self
            .root
            .join(".saffron/cache")
            .join(saffron_recording::feature_slug("features/orders_api.feature"))
            .join(format!("{}.json", saffron_recording::scenario_slug(scenario)));
        let text = std::fs::read_to_string(path).ok()?;
        Some(serde_json::from_str(&text).expect("recording json"))
    }

    /// No file the run wrote holds the password.
    pub(crate) fn assert_password_nowhere(&self) {
        let mut files = Vec::new();
        every_file(&self.root.join(".saffron"), &mut files);
        for file in files {
            let content = String::from_utf8_lossy(&std::fs::read(&file).expect("read")).into_owned();
            assert!(!content.contains(&self.password), "{} holds the password", file.display());
        }
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

pub(crate) fn demo(faults: &[Fault]) -> (tokio::runtime::Runtime, DemoServer, String) {
    let runtime = runtime();
    let config = DemoConfig { faults: faults.iter().copied().collect(), ..DemoConfig::default() };
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    (runtime, demo, password)
}

/// The actions of step `number` (from 1).
pub(crate) fn actions(recording: &Value, number: usize) -> &Vec<Value> {
    recording["steps"][number - 1]["actions"].as_array().expect("actions")
}

pub(crate) fn made_plan() -> Vec<(String, Value)> {
    let mut plan = sign_in();
    plan.extend([
        step(2),
        order_tea(),
        call("saffron_assert", json!({ "check": "schema" })),
        call("saffron_extract", json!({ "name": "order", "pointer": "/id" })),
        step(3),
        field("/total_cents", json!(900)),
        step(4),
        // The id as the response gave it: Saffron writes it back as the value it kept.
        call("saffron_request", json!({ "method": "GET", "path": format!("/api/orders/{ORDER_ID}") })),
        field("/lines/0/quantity", json!(2)),
        field("/lines/0/product", json!("Tea")),
        done(true),
    ]);
    plan
}

fn not_found_plan() -> Vec<(String, Value)> {
    let mut plan = sign_in();
    plan.extend([
        step(2),
        call("saffron_request", json!({ "method": "GET", "path": "/api/orders/999999" })),
        step(3),
        call("saffron_assert", json!({ "check": "status", "status": "404" })),
        done(true),
    ]);
    plan
}

#[test]
fn the_agent_records_api_scenarios_that_replay_at_zero_requests_with_no_browser() {
    let (runtime, demo, password) = demo(&[]);
    let seen = Seen::default();
    let plans: Plans = [(MADE.to_owned(), made_plan()), (NOT_FOUND.to_owned(), not_found_plan())].into();
    let server = scripted_reading_ids(&runtime, plans, seen.clone());
    let project = Project::new("green", &server, &password);
    let output = project.run(&demo.url());
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}\n{}", errors_told(&seen));
    assert!(said.contains("2 scenario(s): 2 green"), "{said}");

    let made = project.recording(MADE).expect("the recording was saved");
    // The sign-in sends the secret's token; the order's quantity is a number, as sent.
    assert_eq!(actions(&made, 1)[0]["body"]["password"], "{env:DEMO_PASSWORD}");
    assert_eq!(actions(&made, 2)[0]["body"]["quantity"], 2);
    assert_eq!(actions(&made, 2)[0]["extract"], json!([{ "name": "order", "pointer": "/id" }]));
    // The id the agent copied is recorded as the value it kept, never as this run's number.
    assert_eq!(actions(&made, 4)[0]["path"], "/api/orders/{captured:order}");
    assert_eq!(actions(&made, 3), &vec![json!({ "type": "expectField", "pointer": "/total_cents", "value": 900 })]);
    let not_found = project.recording(NOT_FOUND).expect("saved");
    assert_eq!(actions(&not_found, 3), &vec![json!({ "type": "expectStatus", "status": "404" })]);
    // The model never read the password: every request to it is masked.
    for request in seen.all() {
        assert!(!format!("{:?}", request.messages).contains(&password), "the model read the password");
    }
    project.assert_password_nowhere();

    // Replay: green with no model request, and still no browser.
    let before = seen.all().len();
    let output = project.run(&demo.url());
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("2 scenario(s): 2 green"), "{said}");
    assert_eq!(seen.all().len(), before, "a replay asks the model nothing");

    // The schema check was recorded against the pinned contract, whose digest the recording
    // carries: a contract pinned again and different makes the unchanged scenario stale.
    let contract = project.root.join("contracts/app.openapi.json");
    let bytes = std::fs::read(&contract).expect("contract");
    assert_eq!(actions(&made, 2)[1], json!({ "type": "expectSchema" }));
    assert_eq!(made["apiContracts"]["app"], sha256(&bytes));
    let changed = String::from_utf8(bytes).expect("utf-8").replacen('{', "{\"x-note\": \"pinned again\", ", 1);
    std::fs::write(&contract, &changed).expect("contract");
    // `saffron status` says so too, as the run will.
    let status =
        Command::new(env!("CARGO_BIN_EXE_saffron")).arg("status").current_dir(&project.root).output().expect("status");
    let said = text(&status);
    assert!(
        said.lines()
            .any(|line| line.starts_with("stale") && line.contains(MADE) && line.contains("service `app` changed")),
        "{said}"
    );
    assert!(said.contains("2 scenario(s): 1 fresh, 1 stale"), "the 404 scenario checks no schema: {said}");
    let config = std::fs::read_to_string(project.root.join("saffron.toml")).expect("config");
    std::fs::write(project.root.join("saffron.toml"), "[browser]\npath = \"no-such-chromium\"\n").expect("config");
    let said = text(&project.run(&demo.url()));
    assert!(
        said.contains("needs recording: the pinned contract of service `app` changed since it was recorded"),
        "{said}"
    );
    assert!(said.contains("1 green") && said.contains("1 blocked"), "the 404 scenario has no schema check: {said}");
    std::fs::write(project.root.join("saffron.toml"), config).expect("config");
    let output = project.run(&demo.url());
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "recorded again: {said}");
    assert!(seen.all().len() > before, "the agent recorded it again");
    let made = project.recording(MADE).expect("saved");
    assert_eq!(made["apiContracts"]["app"], sha256(changed.as_bytes()));
    let _ = runtime.block_on(demo.shutdown());
}

fn sha256(bytes: &[u8]) -> String {
    saffron_runner::contract::digest(bytes)
}

#[test]
fn an_agent_that_cheats_is_refused_at_each_guard_and_the_recording_holds_none_of_it() {
    let (runtime, demo, password) = demo(&[]);
    let seen = Seen::default();
    let read = || call("saffron_request", json!({ "method": "GET", "path": format!("/api/orders/{ORDER_ID}") }));
    let mut plan = vec![
        call("browser_click", json!({ "ref": "e1" })),
        step(1),
        call(
            "saffron_request",
            json!({ "method": "POST", "path": "/api/session", "headers": { "X-Home": "{env:HOME}" },
                    "body": { "email": "demo@saffron.test", "password": "{env:DEMO_PASSWORD}" } }),
        ),
    ];
    plan.extend(sign_in().into_iter().skip(1));
    plan.extend([
        step(2),
        order_tea(),
        step(3),
        call("saffron_assert", json!({ "check": "status", "status": "201" })),
        field("/customer", json!("Lin")),
        field("/total_cents", json!("900")),
        call("saffron_assert", json!({ "check": "field", "pointer": "/total_cents", "pattern": "900|.*" })),
        field("/total_cents", json!(900)),
        step(4),
        // The order's id copied by hand, before it was kept: refused, nothing sent.
        read(),
        call("saffron_extract", json!({ "name": "order", "pointer": "/id" })),
        read(),
        field("/lines/0/quantity", json!(2)),
        field("/lines/0/product", json!("Tea")),
        done(true),
    ]);
    let plans: Plans = [(MADE.to_owned(), plan)].into();
    let server = scripted_reading_ids(&runtime, plans, seen.clone());
    let project = Project::new("cheats", &server, &password);
    let output = project.run_made(&demo.url());
    let said = text(&output);
    let told = errors_told(&seen);
    assert_eq!(output.status.code(), Some(0), "{said}\n{told}");
    for refusal in [
        "there is no tool `browser_click` in an @api scenario",
        "`{env:HOME}` is not a secret this project declares",
        "does not name status 201",
        "this check is not about step 3",
        "the check does not hold, so it is not recorded: field /total_cents is 900, expected \"900\"",
        "this pattern matches whether or not the field holds the values of step 3",
        "is the /id of the response to request 2 (POST /api/orders)",
    ] {
        assert!(told.contains(refusal), "refused with {refusal:?}:\n{told}");
    }
    let recording = serde_json::to_string(&project.recording(MADE).expect("saved")).expect("json");
    for absent in ["HOME", "\"900\"", "\"201\"", "/customer", "900|", "browser"] {
        assert!(!recording.contains(absent), "the recording holds {absent}: {recording}");
    }
    assert!(recording.contains("/api/orders/{captured:order}"), "{recording}");
    project.assert_password_nowhere();
    let _ = runtime.block_on(demo.shutdown());
}

#[test]
fn a_server_error_cannot_be_recorded_as_the_expected_answer_and_ends_red() {
    let (runtime, demo, password) = demo(&[Fault::ServerError]);
    let seen = Seen::default();
    let mut plan = sign_in();
    plan.extend([
        step(2),
        order_tea(),
        step(3),
        call("saffron_assert", json!({ "check": "status", "status": "500" })),
        call("saffron_assert", json!({ "check": "status", "status": "5xx" })),
        done(true),
        done(true),
        call("saffron_done", json!({ "success": false, "narrative": "the order was answered 500" })),
    ]);
    let plans: Plans = [(MADE.to_owned(), plan)].into();
    let server = scripted_reading_ids(&runtime, plans, seen.clone());
    let project = Project::new("server-error", &server, &password);
    let output = project.run_made(&demo.url());
    let said = text(&output);
    let told = errors_told(&seen);
    assert_eq!(output.status.code(), Some(1), "{said}\n{told}");
    assert!(said.contains("1 red"), "{said}");
    assert!(said.contains("the recording agent found the application failing: the order was answered 500"), "{said}");
    assert!(told.contains("does not name status 500"), "{told}");
    assert!(told.contains("does not name status 5xx"), "{told}");
    assert!(told.contains("not done: request 2 (POST /api/orders) was answered 500"), "{told}");
    assert!(project.recording(MADE).is_none(), "nothing is saved");
    let _ = runtime.block_on(demo.shutdown());
}

pub(crate) const WITH_FIXTURE: &str = "\
@api
Feature: One order for every scenario

  Fixture: an order to read
    Given the API client has signed in as the demo user
    And an order for \"Zelda\" of 2 \"Tea\" exists

  Scenario: The fixture's order reads back
    Given the API client has signed in as the demo user
    When the API client reads the order of the fixture
    Then it shows 2 \"Tea\"
";

/// The recordings of [`WITH_FIXTURE`]'s Fixture and scenario.
pub(crate) fn fixture_plans() -> Plans {
    let mut fixture = sign_in();
    fixture.extend([
        step(2),
        call(
            "saffron_request",
            json!({ "method": "POST", "path": "/api/orders", "body": { "customer": "Zelda", "quantity": 2, "product": "Tea" } }),
        ),
        call("saffron_assert", json!({ "check": "schema" })),
        call("saffron_extract", json!({ "name": "order", "pointer": "/id" })),
        done(true),
    ]);
    let mut scenario = sign_in();
    scenario.extend([
        step(2),
        call("saffron_request", json!({ "method": "GET", "path": "/api/orders/{captured:order}" })),
        step(3),
        field("/lines/0/quantity", json!(2)),
        field("/lines/0/product", json!("Tea")),
        done(true),
    ]);
    [("an order to read".to_owned(), fixture), ("The fixture's order reads back".to_owned(), scenario)].into()
}

/// A Fixture with no recording is recorded by the agent before its feature's scenarios (it
/// used to make them red), and the id it kept seeds the scenario the agent records next.
#[test]
fn an_unrecorded_fixture_is_recorded_first_and_what_it_kept_seeds_the_scenario() {
    let (runtime, demo, password) = demo(&[]);
    let seen = Seen::default();
    let plans = fixture_plans();
    let server = scripted_reading_ids(&runtime, plans, seen.clone());
    let project = Project::new("fixture", &server, &password);
    std::fs::remove_file(project.root.join("features/orders_api.feature")).expect("only the Fixture's feature");
    std::fs::write(project.root.join("features/one_order.saffron"), WITH_FIXTURE).expect("feature");
    let output = project.run(&demo.url());
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}\n{}", errors_told(&seen));
    assert!(said.contains("1 scenario(s): 1 green"), "{said}");
    let tasks: Vec<String> = seen
        .all()
        .iter()
        .filter(|request| request.answers_so_far() == 0)
        .map(|request| request.messages[0].text())
        .collect();
    assert_eq!(tasks.len(), 2, "one session for the Fixture, one for the scenario");
    assert!(tasks[0].contains("Scenario: an order to read"), "the Fixture first: {}", tasks[0]);
    assert!(tasks[1].contains("Kept by the feature's Fixture: {captured:order}"), "{}", tasks[1]);
    let cache = project.root.join(".saffron/cache").join(saffron_recording::feature_slug("features/one_order.saffron"));
    let mut saved: Vec<String> = std::fs::read_dir(&cache)
        .expect("the feature's recordings")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    saved.sort();
    assert_eq!(saved, ["an-order-to-read.json", "the-fixture-s-order-reads-back.json"]);

    // Replayed: the Fixture once, then the scenario with the id it kept, at zero model requests.
    let before = seen.all().len();
    let output = project.run(&demo.url());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(seen.all().len(), before);
    project.assert_password_nowhere();

    // The Fixture's schema check was recorded against the pinned contract: pinned again and
    // different, the Fixture needs recording, and without an agent its scenario is blocked.
    let contract = project.root.join("contracts/app.openapi.json");
    let pinned = std::fs::read_to_string(&contract).expect("contract");
    std::fs::write(&contract, pinned.replacen('{', "{\"x-note\": \"pinned again\", ", 1)).expect("contract");
    std::fs::write(project.root.join("saffron.toml"), "[browser]\npath = \"no-such-chromium\"\n").expect("config");
    let said = text(&project.run(&demo.url()));
    assert!(said.contains("1 blocked"), "{said}");
    assert!(said.contains("the pinned contract of service `app` changed since it was recorded"), "{said}");
    let _ = runtime.block_on(demo.shutdown());
}

const TWO_CLIENTS: &str = "\
@api
Feature: Two clients

  Scenario: Only the client that signed in reads the orders
    Given As \"alice\" the API client has signed in as the demo user
    Then As \"bob\" reading the orders answers 401 Unauthorized
    And As \"alice\" reading the orders lists them
";

/// Each session named in a step has its own client and cookies: the agent records the sessions
/// the steps name, and replay keeps them apart (bob, who never signed in, is refused).
#[test]
fn sessions_named_in_the_steps_are_recorded_and_replayed_with_their_own_cookies() {
    let (runtime, demo, password) = demo(&[]);
    let seen = Seen::default();
    let plan = vec![
        step(1),
        call(
            "saffron_request",
            json!({ "method": "POST", "path": "/api/session", "session": "alice",
                    "body": { "email": "demo@saffron.test", "password": "{env:DEMO_PASSWORD}" } }),
        ),
        step(2),
        call("saffron_request", json!({ "method": "GET", "path": "/api/orders", "session": "bob" })),
        call("saffron_assert", json!({ "check": "status", "status": "401", "session": "bob" })),
        step(3),
        call("saffron_request", json!({ "method": "GET", "path": "/api/orders", "session": "alice" })),
        call("saffron_assert", json!({ "check": "status", "status": "200", "session": "alice" })),
        call(
            "saffron_assert",
            json!({ "check": "field", "pointer": "/count", "pattern": "^[0-9]+$", "session": "alice" }),
        ),
        done(true),
    ];
    let scenario = "Only the client that signed in reads the orders";
    let server = scripted_reading_ids(&runtime, [(scenario.to_owned(), plan)].into(), seen.clone());
    let project = Project::new("sessions", &server, &password);
    std::fs::write(project.root.join("features/orders_api.feature"), TWO_CLIENTS).expect("feature");
    let output = project.run(&demo.url());
    let said = text(&output);
    let told = errors_told(&seen);
    assert_eq!(output.status.code(), Some(0), "{said}\n{told}");
    // Step 3 names no status: its 200 check was refused, and its Then stood on the field check.
    assert!(told.contains("does not name status 200"), "{told}");
    let recording = project.recording(scenario).expect("saved");
    let sessions: Vec<&str> = recording["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .flat_map(|step| step["actions"].as_array().expect("actions"))
        .map(|action| action["session"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(sessions, ["alice", "bob", "bob", "alice", "alice"]);
    let before = seen.all().len();
    let output = project.run(&demo.url());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(seen.all().len(), before);
    let _ = runtime.block_on(demo.shutdown());
}

const WITH_A_TOKEN: &str = "\
@api
Feature: A token for the API

  Scenario: The orders read with a token
    Given the API client has a token for the demo user
    Then the orders read with that token answer 200
";

/// A credential a response holds never reaches the model: the token the sign-in answers with
/// is hidden in what the agent reads, so the only way to send it again is to keep it, and the
/// recording sends `Bearer {captured:token}`. Copying what it read instead is refused before
/// anything is sent: the note names no value kept.
#[test]
fn a_token_a_response_holds_is_never_read_by_the_model_and_is_sent_as_the_value_kept() {
    let (runtime, demo, password) = demo(&[]);
    let seen = Seen::default();
    let sign_in = call(
        "saffron_request",
        json!({ "method": "POST", "path": "/api/token",
                "body": { "email": "demo@saffron.test", "password": "{env:DEMO_PASSWORD}" } }),
    );
    let orders = |authorization: &str| {
        call(
            "saffron_request",
            json!({ "method": "GET", "path": "/api/orders", "headers": { "Authorization": authorization } }),
        )
    };
    let plan = vec![
        step(1),
        sign_in,
        call("saffron_extract", json!({ "name": "token", "pointer": "/token" })),
        step(2),
        // What the agent read in place of the token, copied: refused, nothing sent.
        orders("Bearer (a credential, not shown: keep it with saffron_extract and send {captured:NAME})"),
        orders("Bearer {captured:token}"),
        call("saffron_assert", json!({ "check": "status", "status": "200" })),
        done(true),
    ];
    let plans: Plans = [("The orders read with a token".to_owned(), plan)].into();
    let server = scripted_reading_ids(&runtime, plans, seen.clone());
    let project = Project::new("token", &server, &password);
    std::fs::remove_file(project.root.join("features/orders_api.feature")).expect("only this feature");
    std::fs::write(project.root.join("features/token.feature"), WITH_A_TOKEN).expect("feature");
    let output = project.run(&demo.url());
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}\n{}", errors_told(&seen));
    let path = project
        .root
        .join(".saffron/cache")
        .join(saffron_recording::feature_slug("features/token.feature"))
        .join("the-orders-read-with-a-token.json");
    let recording: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("saved")).expect("json");
    assert_eq!(
        actions(&recording, 2),
        &vec![
            json!({ "type": "request", "service": "app", "method": "GET", "path": "/api/orders",
                    "headers": [{ "name": "Authorization", "value": "Bearer {captured:token}" }] }),
            json!({ "type": "expectStatus", "status": "200" }),
        ],
        "the refused request was not recorded, the kept one was"
    );
    // The demo's tokens are 32 hex digits: none reached the model, in any message.
    let token = regex::Regex::new(r"\b[0-9a-f]{32}\b").expect("pattern");
    for request in seen.all() {
        let messages = format!("{:?}", request.messages);
        assert!(!token.is_match(&messages), "the model read a token: {messages}");
        assert!(!messages.contains(&password), "the model read the password");
    }
    assert!(
        errors_told(&seen).contains("nothing named \"NAME\" was captured"),
        "the copied note is not a value, and nothing was sent: {}",
        errors_told(&seen)
    );
    project.assert_password_nowhere();
    // Replayed with a token of its own, at zero model requests.
    let before = seen.all().len();
    let output = project.run(&demo.url());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(seen.all().len(), before);
    let _ = runtime.block_on(demo.shutdown());
}
