//! `@api` scenarios on the HTTP medium, through the real binary against the demo shop's JSON
//! API: a recording written by hand (the agent does not record `@api` scenarios yet) replays
//! green with no browser, its typed body sends a number for a number, a value kept from one
//! response reaches the next request, and a wrong total or an order that was never saved is
//! red.

mod support;

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
        let recording = recording();
        let cache = root
            .join(".saffron/cache")
            .join(saffron_recording::feature_slug("features/orders_api.feature"))
            .join(format!("{}.json", saffron_recording::scenario_slug(&recording.scenario)));
        std::fs::create_dir_all(cache.parent().expect("parent")).expect("mkdir");
        std::fs::write(&cache, saffron_recording::to_json_bytes(&recording).expect("json")).expect("recording");
        Project { root }
    }

    fn run(&self, extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_saffron"))
            .arg("run")
            .args(extra)
            .current_dir(&self.root)
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
    let mut files = Vec::new();
    support::agent::every_file(&project.root.join(".saffron"), &mut files);
    for file in files {
        let content = String::from_utf8_lossy(&std::fs::read(&file).expect("read")).into_owned();
        assert!(!content.contains(&password), "{} holds the password", file.display());
    }
    let _ = runtime.block_on(demo.shutdown());

    let (runtime, demo, password) = demo_with(&[Defect::SaveFails]);
    let project = Project::new("save-fails", &format!("{}/api", demo.url()), &password);
    let said = text(&project.run(&[]));
    assert!(said.contains("2 red"), "{said}");
    assert!(said.contains("expected status 200, found 404"), "{said}");
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
