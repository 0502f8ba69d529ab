//! `@api` scenarios on the HTTP medium, through the real binary against the demo shop's JSON
//! API, with recordings written by hand (`record_api.rs` has the agent record them): one replays
//! green with no browser, its typed body sends a number for a number, a value kept from one
//! response reaches the next request, and a wrong total or an order that was never saved is
//! red; contracts, transcripts, traces, Fixtures, and requests beside a browser scenario's page.

use crate::support;

use std::path::PathBuf;
use std::process::{Command, Output};

use saffron_demo::{Defect, DemoConfig, DemoServer};
use saffron_recording::http::{Extract, JsonTemplate};
use saffron_recording::{Action, RecordedStep, Recording, StepKind, StepSpec};
use serde_json::json;

const FEATURE: &str = "\
@api
Feature: Orders API

  Background:
    Given I am signed in to the API

  Scenario Outline: An order created through the API reads back
    When I order <quantity> \"<product>\" for \"<customer>\"
    Then the order is created with a total of <total>
    And reading it back shows <quantity> \"<product>\"

    Examples:
      | customer | quantity | product | total |
      | Ada      | 2        | Tea     | 900   |
      | Grace    | 3        | Mugs    | 2100  |
";

fn request(method: &str, path: &str, body: Option<serde_json::Value>, extract: Vec<Extract>) -> Action {
    Action::Request {
        service: "shop".into(),
        method: method.into(),
        path: path.into(),
        session: None,
        headers: Vec::new(),
        body: body.map(JsonTemplate),
        extract,
        idempotent: false,
        timeout_ms: None,
    }
}

fn field(pointer: &str, value: serde_json::Value) -> Action {
    Action::ExpectField {
        pointer: pointer.into(),
        value: Some(JsonTemplate(value)),
        pattern: None,
        session: None,
        timeout_ms: None,
    }
}

fn status(status: &str) -> Action {
    Action::ExpectStatus { status: status.into(), session: None, timeout_ms: None }
}

/// The recording a person would write for the Outline (its rows share it).
fn recording() -> Recording {
    let number = |param: &str| json!({ "$value": format!("<{param}>"), "$type": "number" });
    let sign_in = json!({ "email": "demo@saffron.test", "password": "{env:DEMO_PASSWORD}" });
    let steps = vec![
        RecordedStep::new(
            StepSpec::new(StepKind::Context, "I am signed in to the API"),
            vec![request("POST", "/session", Some(sign_in), Vec::new()), status("200")],
        ),
        RecordedStep::new(
            StepSpec::new(StepKind::Action, "I order <quantity> \"<product>\" for \"<customer>\""),
            vec![request(
                "POST",
                "/orders",
                Some(json!({ "customer": "<customer>", "quantity": number("quantity"), "product": "<product>" })),
                vec![Extract { name: "order".into(), pointer: "/id".into() }],
            )],
        ),
        RecordedStep::new(
            StepSpec::new(StepKind::Outcome, "the order is created with a total of <total>"),
            vec![status("201"), field("/total_cents", number("total"))],
        ),
        RecordedStep::new(
            StepSpec::new(StepKind::Outcome, "reading it back shows <quantity> \"<product>\""),
            vec![
                request("GET", "/orders/{captured:order}", None, Vec::new()),
                status("200"),
                field("/lines/0/quantity", number("quantity")),
                field("/lines/0/product", json!("<product>")),
            ],
        ),
    ];
    Recording::new("features/orders_api.feature", "An order created through the API reads back", steps)
}

struct Project {
    root: PathBuf,
}

/// Writes `recording` where the project's index looks for it.
fn save(root: &std::path::Path, feature: &str, recording: &Recording) {
    let cache = root
        .join(".saffron/cache")
        .join(saffron_recording::feature_slug(feature))
        .join(format!("{}.json", saffron_recording::scenario_slug(&recording.scenario)));
    std::fs::create_dir_all(cache.parent().expect("parent")).expect("mkdir");
    std::fs::write(&cache, saffron_recording::to_json_bytes(recording).expect("json")).expect("recording");
}

impl Project {
    fn new(name: &str, api_base: &str, password: &str) -> Project {
        let root = std::env::temp_dir().join(format!("saffron-api-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("features")).expect("mkdir");
        std::fs::write(root.join("features/orders_api.feature"), FEATURE).expect("feature");
        // No browser is needed: a path Chromium cannot be at proves none is started.
        let config = format!(
            "base_url = \"http://127.0.0.1:9\"\n[browser]\npath = \"no-such-chromium\"\n\
             [api.services.shop]\nbase_url = \"{api_base}\"\n"
        );
        std::fs::write(root.join("saffron.toml"), config).expect("config");
        std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect(".env");
        save(&root, "features/orders_api.feature", &recording());
        Project { root }
    }

    fn run(&self, extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_saffron"))
            .arg("run")
            .args(extra)
            .current_dir(&self.root)
            // The project's own configuration decides, not the environment of whoever runs this.
            .env_remove("SAFFRON_BASE_URL")
            .output()
            .expect("saffron runs")
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn demo_with(defects: &[Defect]) -> (tokio::runtime::Runtime, DemoServer, String) {
    let runtime = support::agent::runtime();
    let config = DemoConfig { defects: defects.iter().copied().collect(), ..DemoConfig::default() };
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    (runtime, demo, password)
}

#[test]
fn an_api_outline_replays_green_on_the_demo_with_typed_bodies_and_captured_ids_and_no_browser() {
    let (runtime, demo, password) = demo_with(&[]);
    let project = Project::new("green", &format!("{}/api", demo.url()), &password);
    let output = project.run(&[]);
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("2 scenario(s): 2 green"), "{said}");
    // The sign-in sent the password from .env; no output holds it.
    let mut files = Vec::new();
    support::agent::every_file(&project.root.join(".saffron"), &mut files);
    for file in files {
        let content = String::from_utf8_lossy(&std::fs::read(&file).expect("read")).into_owned();
        assert!(!content.contains(&password), "{} holds the password", file.display());
    }
    // A green scenario keeps no transcript by default; `[api] transcript = "on"` keeps each.
    assert!(!said.contains("transcript:"), "{said}");
    assert!(!project.root.join(".saffron/artifacts").exists() || !said.contains("transcripts/"));
    let config = std::fs::read_to_string(project.root.join("saffron.toml")).expect("config");
    std::fs::write(
        project.root.join("saffron.toml"),
        config.replace("[api.services.shop]", "[api]\ntranscript = \"on\"\n[api.services.shop]"),
    )
    .expect("config");
    let output = project.run(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let latest = std::fs::read_to_string(project.root.join(".saffron/reports/latest.json")).expect("latest");
    assert_eq!(latest.matches("transcripts/").count(), 2, "one per row: {latest}");
    // The quantity went as a number: the demo refuses `"3"` for a quantity (400), and the order
    // read back holds 3, which the recording compares as JSON.
    let _ = runtime.block_on(demo.shutdown());
}

#[test]
fn a_wrong_total_and_an_order_never_saved_are_red_at_their_check() {
    let (runtime, demo, password) = demo_with(&[Defect::WrongTotal]);
    let project = Project::new("wrong-total", &format!("{}/api", demo.url()), &password);
    let said = text(&project.run(&[]));
    assert!(said.contains("2 red"), "{said}");
    assert!(said.contains("field /total_cents is"), "the check names the field and what it found: {said}");
    // The red scenario's transcript: each exchange, its typed body, the password masked.
    let line = said.lines().find_map(|line| line.trim().strip_prefix("transcript: ")).expect("a transcript line");
    let transcript = std::fs::read_to_string(project.root.join(line)).expect("the transcript");
    let transcript: serde_json::Value = serde_json::from_str(&transcript).expect("json");
    let exchanges = transcript["exchanges"].as_array().expect("exchanges");
    assert_eq!(exchanges[0]["method"], "POST");
    assert_eq!(exchanges[0]["status"], 200, "the sign-in");
    assert!(exchanges[0]["requestBody"].as_str().is_some_and(|body| body.contains("{env:DEMO_PASSWORD}")));
    let order: serde_json::Value =
        serde_json::from_str(exchanges[1]["requestBody"].as_str().expect("body")).expect("json");
    assert!(order["quantity"].is_number(), "{order}");
    assert_eq!(exchanges[1]["status"], 201);
    let html = std::fs::read_to_string(project.root.join(".saffron/reports/report.html")).expect("html");
    assert!(html.contains("class=\"exchanges\"") && html.contains("/api/orders"), "the HTML report shows them");
    // The red attempt's trace carries the same exchanges, for the trace viewer's API tab.
    let latest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.root.join(".saffron/reports/latest.json")).expect("latest"),
    )
    .expect("json");
    let red = &latest["scenarios"][0];
    let trace_path = red["traces"][0].as_str().expect("a trace of the red attempt");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.root.join(trace_path)).expect("trace")).expect("json");
    assert_eq!(trace["exchanges"].as_array().map(Vec::len), exchanges.len().into(), "{trace}");
    assert!(trace["actions"].as_array().is_some_and(|actions| actions.iter().any(|action| action["passed"] == false)));
    let target = format!("{}:{}", red["file"].as_str().expect("file"), red["line"]);
    let viewer = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["trace", &target, "--no-open"])
        .current_dir(&project.root)
        .output()
        .expect("saffron trace");
    assert_eq!(viewer.status.code(), Some(0), "{}", text(&viewer));
    let page = std::fs::read_to_string(project.root.join(".saffron/reports/trace.html")).expect("the viewer");
    assert!(page.contains("\"exchanges\"") && !page.contains(&password), "the viewer holds them, masked");
    let mut files = Vec::new();
    support::agent::every_file(&project.root.join(".saffron"), &mut files);
    for file in files {
        let content = String::from_utf8_lossy(&std::fs::read(&file).expect("read")).into_owned();
        assert!(!content.contains(&password), "{} holds the password", file.display());
    }
    let _ = runtime.block_on(demo.shutdown());

    let (runtime, demo, password) = demo_with(&[Defect::SaveFails]);
    let project = Project::new("save-fails", &format!("{}/api", demo.url()), &password);
    let said = text(&project.run(&["--retries", "1"]));
    assert!(said.contains("2 red"), "{said}");
    assert!(said.contains("expected status 200, found 404"), "{said}");
    // Retried once: the transcript keeps both attempts' exchanges, each marked with its own.
    let line = said.lines().find_map(|line| line.trim().strip_prefix("transcript: ")).expect("a transcript line");
    let transcript: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.root.join(line)).expect("transcript")).expect("json");
    let attempts: Vec<u64> = transcript["exchanges"]
        .as_array()
        .expect("exchanges")
        .iter()
        .map(|exchange| exchange["attempt"].as_u64().unwrap_or(1))
        .collect();
    assert_eq!(attempts, [1, 1, 1, 2, 2, 2], "sign-in, order, read back, twice: {transcript}");
    let _ = runtime.block_on(demo.shutdown());
}

#[test]
fn api_url_overrides_the_configured_base_and_a_service_that_does_not_answer_is_red_with_a_short_cause() {
    let (runtime, demo, password) = demo_with(&[]);
    // The configuration names a port nothing listens on; --api-url gives the demo's.
    let project = Project::new("override", "http://127.0.0.1:9/api", &password);
    let said = text(&project.run(&[]));
    assert!(said.contains("2 red"), "{said}");
    assert!(
        said.contains("the service did not accept the connection (a request that may write is never sent twice)"),
        "{said}"
    );
    let api_url = format!("shop={}/api", demo.url());
    let output = project.run(&["--api-url", &api_url]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let said = text(&project.run(&["--api-url", "billing=http://127.0.0.1:1"]));
    assert!(said.contains("there is no service `billing` in [api.services]"), "{said}");
    let _ = runtime.block_on(demo.shutdown());
}

const FIXTURE_FEATURE: &str = "\
@api
Feature: One order for every scenario

  Fixture: an order to read
    Given I am signed in to the API
    And an order for \"Zelda\" of 2 \"Tea\" exists

  Scenario: The fixture's order reads back
    Given I am signed in to the API
    When I read the order of the fixture
    Then it shows 2 \"Tea\"

  Scenario: The fixture's order is in the list
    Given I am signed in to the API
    When I list the orders of \"Zelda\"
    Then the fixture's order is among them
";

/// A Fixture of an `@api` feature runs once, before its scenarios; the id it captured seeds
/// each of them as `{captured:order}`; a credential it captured (the signed-in session's
/// e-mail, kept as `session_email`) is masked in every scenario's transcript; a Fixture that
/// fails makes every scenario red without running them.
#[test]
fn an_api_fixture_runs_once_and_its_captured_values_seed_every_scenario() {
    let (runtime, demo, password) = demo_with(&[]);
    let project = Project::new("fixture", &format!("{}/api", demo.url()), &password);
    let file = "features/one_order.saffron";
    std::fs::write(project.root.join(file), FIXTURE_FEATURE).expect("feature");
    std::fs::remove_file(project.root.join("features/orders_api.feature")).expect("only this feature");
    let sign_in_body = json!({ "email": "demo@saffron.test", "password": "{env:DEMO_PASSWORD}" });
    let signed_in = || {
        RecordedStep::new(
            StepSpec::new(StepKind::Context, "I am signed in to the API"),
            vec![
                request(
                    "POST",
                    "/session",
                    Some(sign_in_body.clone()),
                    vec![Extract { name: "session_email".into(), pointer: "/email".into() }],
                ),
                status("200"),
            ],
        )
    };
    let order = json!({ "customer": "Zelda", "quantity": 2, "product": "Tea" });
    let fixture = Recording::new(
        file,
        "an order to read",
        vec![
            signed_in(),
            RecordedStep::new(
                StepSpec::new(StepKind::Context, "an order for \"Zelda\" of 2 \"Tea\" exists"),
                vec![request(
                    "POST",
                    "/orders",
                    Some(order),
                    vec![Extract { name: "order".into(), pointer: "/id".into() }],
                )],
            ),
        ],
    );
    let reads_back = Recording::new(
        file,
        "The fixture's order reads back",
        vec![
            signed_in(),
            RecordedStep::new(
                StepSpec::new(StepKind::Action, "I read the order of the fixture"),
                vec![request("GET", "/orders/{captured:order}", None, Vec::new())],
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Outcome, "it shows 2 \"Tea\""),
                vec![status("200"), field("/lines/0/quantity", json!(2)), field("/lines/0/product", json!("Tea"))],
            ),
        ],
    );
    let listed = Recording::new(
        file,
        "The fixture's order is in the list",
        vec![
            signed_in(),
            RecordedStep::new(
                StepSpec::new(StepKind::Action, "I list the orders of \"Zelda\""),
                vec![request("GET", "/orders?q=Zelda", None, Vec::new())],
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Outcome, "the fixture's order is among them"),
                // Once: one order of hers, and it is the Fixture's.
                vec![
                    status("200"),
                    field("/count", json!(1)),
                    field("/orders/0/id", json!({ "$value": "{captured:order}", "$type": "integer" })),
                ],
            ),
        ],
    );
    for recording in [&fixture, &reads_back, &listed] {
        save(&project.root, file, recording);
    }
    let config = std::fs::read_to_string(project.root.join("saffron.toml")).expect("config");
    let on = config.replace("[api.services.shop]", "[api]\ntranscript = \"on\"\n[api.services.shop]");
    std::fs::write(project.root.join("saffron.toml"), on).expect("config");
    let output = project.run(&[]);
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("2 scenario(s): 2 green"), "the Fixture has no row of its own: {said}");
    let latest = std::fs::read_to_string(project.root.join(".saffron/reports/latest.json")).expect("latest");
    let report: serde_json::Value = serde_json::from_str(&latest).expect("json");
    let transcripts: Vec<String> = report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter_map(|scenario| scenario["transcript"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(transcripts.len(), 2, "{latest}");
    for transcript in &transcripts {
        let text = std::fs::read_to_string(project.root.join(transcript)).expect("transcript");
        assert!(!text.contains("demo@saffron.test"), "the Fixture's credential is masked: {text}");
        assert!(text.contains("{captured:session_email}"), "{text}");
        assert!(!text.contains(&password));
    }

    // A Fixture that fails: every scenario red with its reason, none run.
    let broken = Recording::new(
        file,
        "an order to read",
        vec![
            signed_in(),
            RecordedStep::new(
                StepSpec::new(StepKind::Context, "an order for \"Zelda\" of 2 \"Tea\" exists"),
                vec![request("POST", "/orders", Some(json!({ "customer": "Zelda" })), Vec::new()), status("201")],
            ),
        ],
    );
    save(&project.root, file, &broken);
    let said = text(&project.run(&[]));
    assert!(said.contains("2 red"), "{said}");
    assert!(said.contains("the Fixture \"an order to read\" failed at step 2"), "{said}");
    let _ = runtime.block_on(demo.shutdown());
}

const SCHEMA_FEATURE: &str = "\
@api
Feature: The API keeps its contract

  Scenario: A new order is what the contract says
    Given I am signed in to the API
    When I order 2 \"Tea\" for \"Lin\"
    Then the answer is what the contract says
";

/// `saffron api pin` fetches the demo's OpenAPI document into the project; `expectSchema`
/// checks responses against it: green as served, red naming the field when the pinned contract
/// asks for one the server does not send, red with the way out when nothing is pinned.
#[test]
fn a_pinned_contract_checks_responses_and_a_broken_one_is_red_naming_the_field() {
    let (runtime, demo, password) = demo_with(&[]);
    let project = Project::new("contract", &format!("{}/api", demo.url()), &password);
    let file = "features/contract.feature";
    std::fs::write(project.root.join(file), SCHEMA_FEATURE).expect("feature");
    std::fs::remove_file(project.root.join("features/orders_api.feature")).expect("only this feature");
    let sign_in = json!({ "email": "demo@saffron.test", "password": "{env:DEMO_PASSWORD}" });
    let schema = Action::ExpectSchema { session: None, timeout_ms: None };
    let recording = Recording::new(
        file,
        "A new order is what the contract says",
        vec![
            RecordedStep::new(
                StepSpec::new(StepKind::Context, "I am signed in to the API"),
                vec![request("POST", "/session", Some(sign_in), Vec::new()), schema.clone()],
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Action, "I order 2 \"Tea\" for \"Lin\""),
                vec![request(
                    "POST",
                    "/orders",
                    Some(json!({ "customer": "Lin", "quantity": 2, "product": "Tea" })),
                    vec![Extract { name: "order".into(), pointer: "/id".into() }],
                )],
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Outcome, "the answer is what the contract says"),
                vec![
                    status("201"),
                    schema.clone(),
                    request("GET", "/orders/{captured:order}", None, Vec::new()),
                    schema,
                ],
            ),
        ],
    );
    save(&project.root, file, &recording);

    // Nothing pinned yet: red, saying how to pin it.
    let said = text(&project.run(&[]));
    assert!(said.contains("1 red") && said.contains("`saffron api pin shop` writes it"), "{said}");

    let config = std::fs::read_to_string(project.root.join("saffron.toml")).expect("config");
    let openapi = format!("openapi_url = \"{}/api/openapi.json\"\n", demo.url());
    std::fs::write(project.root.join("saffron.toml"), format!("{config}{openapi}")).expect("config");
    let pinned = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["api", "pin"])
        .current_dir(&project.root)
        .output()
        .expect("pin runs");
    let said = text(&pinned);
    assert_eq!(pinned.status.code(), Some(0), "{said}");
    assert!(said.contains("pinned shop: contracts/shop.openapi.json (5 operations, sha256 "), "{said}");
    let contract_file = project.root.join("contracts/shop.openapi.json");
    let served = include_str!("../../saffron-demo/src/openapi.json");
    assert_eq!(std::fs::read_to_string(&contract_file).expect("pinned"), served);

    let output = project.run(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));

    // The pinned contract asks for a field the server does not send: red, naming it.
    let mut contract: serde_json::Value = serde_json::from_str(served).expect("json");
    contract["components"]["schemas"]["Created"]["required"].as_array_mut().expect("required").push(json!("warehouse"));
    std::fs::write(&contract_file, contract.to_string()).expect("contract");
    let said = text(&project.run(&[]));
    assert!(said.contains("1 red"), "{said}");
    assert!(said.contains("POST /orders 201") && said.contains("\"warehouse\" is a required property"), "{said}");

    // A document served as YAML is pinned as the JSON it says, and checks the same.
    let served_json: serde_json::Value = serde_json::from_str(served).expect("json");
    let yaml_url = saffron_browser::testing::serve_page(block_yaml(&served_json, 0));
    let pinned = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["api", "pin", "shop", "--url", &yaml_url])
        .current_dir(&project.root)
        .output()
        .expect("pin runs");
    let said = text(&pinned);
    assert!(said.contains("(5 operations, sha256 ") && said.contains("; converted from YAML)"), "{said}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&contract_file).expect("pinned")).expect("JSON");
    assert_eq!(written, served_json);
    std::fs::write(&contract_file, served).expect("the served document again");

    // Pinning what is not an OpenAPI 3 document, or an unknown service, is refused.
    let refused = |args: &[&str]| {
        let output =
            Command::new(env!("CARGO_BIN_EXE_saffron")).args(args).current_dir(&project.root).output().expect("runs");
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        text(&output)
    };
    let a_page = format!("{}/login", demo.url());
    assert!(refused(&["api", "pin", "--url", &a_page]).contains("neither JSON nor YAML"));
    assert!(refused(&["api", "pin", "billing"]).contains("there is no service `billing`"));
    let _ = runtime.block_on(demo.shutdown());
}

/// `value` as block YAML: every mapping and sequence on lines of its own, every key and scalar
/// written as JSON writes it (a JSON scalar is a YAML flow scalar).
fn block_yaml(value: &serde_json::Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let nested = |item: &serde_json::Value| match item {
        serde_json::Value::Object(map) if !map.is_empty() => format!("\n{}", block_yaml(item, indent + 2)),
        serde_json::Value::Array(items) if !items.is_empty() => format!("\n{}", block_yaml(item, indent + 2)),
        scalar => format!(" {scalar}\n"),
    };
    match value {
        serde_json::Value::Object(map) => {
            map.iter().map(|(key, item)| format!("{pad}{}:{}", json!(key), nested(item))).collect()
        }
        serde_json::Value::Array(items) => items.iter().map(|item| format!("{pad}-{}", nested(item))).collect(),
        scalar => format!("{pad}{scalar}\n"),
    }
}

/// The example project's pinned contract is the demo's document as served: they never drift.
#[test]
fn the_example_contract_is_the_demos_document() {
    let repository = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pinned = std::fs::read_to_string(repository.join("contracts/app.openapi.json")).expect("the example's");
    assert_eq!(
        pinned,
        include_str!("../../saffron-demo/src/openapi.json"),
        "run `saffron api pin app` against the demo"
    );
}

const BESIDE_THE_PAGE: &str = "\
Feature: The shop's API beside its pages

  Scenario: Orders read through the API after signing in on the page
    Given I am on the sign-in page
    When I sign in with the demo account
    Then the page's session reads the orders through the API

  Scenario: The API reads no orders without a session
    Given I am on the sign-in page
    Then the page's session reads the orders through the API

  Scenario: The page is signed in by the API
    Given the API client signs in as the demo user
    When I open the orders page
    Then I see the orders page
";

fn actions(value: serde_json::Value) -> Vec<Action> {
    serde_json::from_value(value).expect("actions")
}

/// A browser scenario sends its requests with the browser context's cookies: after a sign-in
/// in the page the API answers as the signed-in user, without one it answers 401, and a cookie
/// the API sets signs the page in.
#[test]
fn a_browser_scenario_sends_requests_with_the_pages_session_and_keeps_the_cookies_they_set() {
    let (runtime, demo, password) = demo_with(&[]);
    let root = std::env::temp_dir().join(format!("saffron-api-beside-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("features")).expect("mkdir");
    let feature = "features/beside.feature";
    std::fs::write(root.join(feature), BESIDE_THE_PAGE).expect("feature");
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect(".env");
    std::fs::write(root.join("saffron.toml"), "[api]\ntranscript = \"on\"\n").expect("config");
    let on_sign_in = actions(json!([
        { "type": "goto", "url": "/login" },
        { "type": "expectVisible", "target": { "role": "heading", "name": "Sign in" } }
    ]));
    let sign_in = actions(json!([
        { "type": "fill", "target": { "testId": "email" }, "value": "demo@saffron.test" },
        { "type": "fill", "target": { "testId": "password" }, "value": "{env:DEMO_PASSWORD}" },
        { "type": "click", "target": { "testId": "sign-in" } },
        { "type": "waitForResponse", "response": { "urlRegex": "^/api/session$", "method": "POST", "status": "2xx" } }
    ]));
    let read_orders = actions(json!([
        { "type": "request", "service": "app", "method": "GET", "path": "/api/orders" },
        { "type": "expectField", "pointer": "/count", "pattern": "^[0-9]+$" }
    ]));
    let step = |kind, text: &str, actions: &Vec<Action>| RecordedStep::new(StepSpec::new(kind, text), actions.clone());
    let scenarios = [
        Recording::new(
            feature,
            "Orders read through the API after signing in on the page",
            vec![
                step(StepKind::Context, "I am on the sign-in page", &on_sign_in),
                step(StepKind::Action, "I sign in with the demo account", &sign_in),
                step(StepKind::Outcome, "the page's session reads the orders through the API", &read_orders),
            ],
        ),
        Recording::new(
            feature,
            "The API reads no orders without a session",
            vec![
                step(StepKind::Context, "I am on the sign-in page", &on_sign_in),
                step(StepKind::Outcome, "the page's session reads the orders through the API", &read_orders),
            ],
        ),
        Recording::new(
            feature,
            "The page is signed in by the API",
            vec![
                step(
                    StepKind::Context,
                    "the API client signs in as the demo user",
                    &actions(json!([{ "type": "request", "service": "app", "method": "POST", "path": "/api/session",
                        "body": { "email": "demo@saffron.test", "password": "{env:DEMO_PASSWORD}" } }])),
                ),
                step(
                    StepKind::Action,
                    "I open the orders page",
                    &actions(json!([{ "type": "goto", "url": "/orders" }])),
                ),
                step(
                    StepKind::Outcome,
                    "I see the orders page",
                    &actions(json!([
                        { "type": "expectUrl", "url": "/orders" },
                        { "type": "expectVisible", "target": { "role": "heading", "name": "Orders" } }
                    ])),
                ),
            ],
        ),
    ];
    for recording in &scenarios {
        save(&root, feature, recording);
    }
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &demo.url()])
        .current_dir(&root)
        .env_remove("DEMO_PASSWORD")
        .output()
        .expect("saffron runs");
    let said = text(&output);
    assert!(said.contains("3 scenario(s): 2 green, 0 yellow, 1 red"), "{said}");
    assert!(said.contains("GET /api/orders was answered 401 Unauthorized ("), "{said}");
    assert!(said.contains("and no step expects that status"), "{said}");
    // The signed-in scenario's transcript: the page's session went with the request, masked.
    let latest = std::fs::read_to_string(root.join(".saffron/reports/latest.json")).expect("latest");
    let latest: serde_json::Value = serde_json::from_str(&latest).expect("json");
    let signed_in = latest["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .find(|scenario| scenario["name"] == "Orders read through the API after signing in on the page")
        .expect("the scenario");
    let path = signed_in["transcript"].as_str().expect("a transcript");
    let transcript: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(path)).expect("transcript")).expect("json");
    let headers = transcript["exchanges"][0]["requestHeaders"].to_string();
    assert!(headers.contains("session={cookie:session}"), "{headers}");
    assert_eq!(transcript["exchanges"][0]["status"], 200);
    let mut files = Vec::new();
    support::agent::every_file(&root.join(".saffron"), &mut files);
    for file in files {
        let content = String::from_utf8_lossy(&std::fs::read(&file).expect("read")).into_owned();
        assert!(!content.contains(&password), "{} holds the password", file.display());
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// A project of `@api` scenarios only, which names its services, needs no base URL: there is no
/// application page to open. A browser scenario in the run still does.
#[test]
fn an_api_only_run_needs_no_base_url() {
    let (runtime, demo, password) = demo_with(&[]);
    let project = Project::new("no-base-url", &format!("{}/api", demo.url()), &password);
    let config = std::fs::read_to_string(project.root.join("saffron.toml")).expect("config");
    // The top-level base_url goes; the service's own stays.
    let without_base = config.replacen("base_url = \"http://127.0.0.1:9\"\n", "", 1);
    assert!(
        without_base.contains("[api.services.shop]\nbase_url") && !without_base.starts_with("base_url"),
        "{without_base}"
    );
    std::fs::write(project.root.join("saffron.toml"), &without_base).expect("config");
    let output = project.run(&[]);
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("against the API services shop") && said.contains("2 green"), "{said}");
    std::fs::write(
        project.root.join("features/pages.feature"),
        "Feature: Pages\n  Scenario: A page\n    Given I am on the sign-in page\n",
    )
    .expect("a browser feature");
    let output = project.run(&[]);
    assert!(text(&output).contains("no base URL"), "{}", text(&output));
    let _ = runtime.block_on(demo.shutdown());
}
