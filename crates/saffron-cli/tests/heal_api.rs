//! An `@api` recording repaired mid-run, through the real binary, on the demo shop's JSON API
//! with a scripted model on the fake Anthropic wire. The demo's `renamed-api-field` drift makes
//! `POST /api/orders` read its quantity from `count`: the replay fails on that request, the
//! agent takes over the execution from there (its session still signed in), sends the order
//! the new way, and the repair is proven from scratch, filed, replayed as pending at zero model
//! requests, and accepted. Adversarial scripts prove the rules: a repair that drops a step's
//! value is refused, one that calls another operation is held for a person, and a failed Then
//! step never reaches the agent.

use std::process::{Command, Output};

use saffron_agent::testing::FakeServer;
use saffron_demo::{Defect, DemoConfig, DemoServer, Drift};
use serde_json::{Value, json};

use crate::record_api::{MADE, Project, WITH_FIXTURE, actions, call, done, field, fixture_plans, made_plan, step};
use crate::support::agent::{CallPlans, LAST_ID, Seen, errors_told, runtime, scripted_reading_ids, text};

fn demo_with(runtime: &tokio::runtime::Runtime, config: DemoConfig) -> DemoServer {
    runtime.block_on(DemoServer::start(config)).expect("demo")
}

/// The project's agent is now the one `server` plays, with `extra` configuration.
fn use_agent(project: &Project, server: &FakeServer, extra: &str) {
    let config = format!(
        "[browser]\npath = \"no-such-chromium\"\n[agent]\nprovider = \"anthropic\"\nmodel = \"fake-model\"\n\
         base_url = \"{}\"\napi_key_env = \"\"\n{extra}",
        server.base_url()
    );
    std::fs::write(project.root.join("saffron.toml"), config).expect("config");
}

fn saffron(project: &Project, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(args)
        .current_dir(&project.root)
        .env_remove("DEMO_PASSWORD")
        .output()
        .expect("saffron runs")
}

fn proposal_path(project: &Project) -> std::path::PathBuf {
    project
        .root
        .join(".saffron/proposals")
        .join(saffron_recording::feature_slug("features/orders_api.feature"))
        .join(format!("{}.json", saffron_recording::scenario_slug(MADE)))
}

/// The repair of the order step under `renamed-api-field`: the order sent with `count` (and
/// `body` as the script wants it), its id kept, every later step performed and verified.
fn repair_plan(service: Option<&str>, body: Value) -> Vec<(String, Value)> {
    let mut order = json!({ "method": "POST", "path": "/api/orders", "body": body });
    if let Some(service) = service {
        order["service"] = json!(service);
    }
    vec![
        step(2),
        call("saffron_request", order),
        call("saffron_extract", json!({ "name": "order", "pointer": "/id" })),
        step(3),
        field("/total_cents", json!(900)),
        step(4),
        call("saffron_request", json!({ "method": "GET", "path": format!("/api/orders/{LAST_ID}") })),
        field("/lines/0/quantity", json!(2)),
        field("/lines/0/product", json!("Tea")),
        done(true),
    ]
}

/// A project whose "made" scenario was recorded green on the demo without drift.
fn recorded(name: &str, runtime: &tokio::runtime::Runtime) -> (Project, String) {
    let demo = demo_with(runtime, DemoConfig::default());
    let password = demo.config().password.clone();
    let plans: CallPlans = [(MADE.to_owned(), made_plan())].into();
    let server = scripted_reading_ids(runtime, plans, Seen::default());
    let project = Project::new(name, &server, &password);
    let output = project.run_made(&demo.url());
    assert_eq!(output.status.code(), Some(0), "recorded: {}", text(&output));
    let _ = runtime.block_on(demo.shutdown());
    (project, password)
}

#[test]
fn a_request_the_api_now_reads_differently_is_repaired_proven_filed_and_accepted() {
    let runtime = runtime();
    let (project, password) = recorded("heal", &runtime);
    let committed = project.recording(MADE).expect("recorded");
    let drifted = demo_with(&runtime, DemoConfig { drift: [Drift::RenamedApiField].into(), ..DemoConfig::default() });

    // Without an agent the replay fails at the order, on the answer it got.
    std::fs::write(project.root.join("saffron.toml"), "[browser]\npath = \"no-such-chromium\"\n").expect("config");
    let said = text(&project.run_made(&drifted.url()));
    assert!(said.contains("Quantity is required (the field is `count` now)"), "{said}");
    assert!(said.contains("1 red"), "{said}");

    let seen = Seen::default();
    let body = json!({ "customer": "Lin", "count": 2, "product": "Tea" });
    let plans: CallPlans = [(MADE.to_owned(), repair_plan(None, body))].into();
    let server = scripted_reading_ids(&runtime, plans, seen.clone());
    use_agent(&project, &server, "");
    let output = project.run_made(&drifted.url());
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "yellow exits 0: {said}\n{}", errors_told(&seen));
    assert!(said.contains("1 yellow"), "{said}");

    // The agent was told where and why the replay failed, and what the API answered.
    let task = seen.all().first().and_then(|request| request.messages.first().map(|message| message.text()));
    let task = task.expect("the agent was asked");
    assert!(seen.all()[0].system.starts_with("You repair an API test"), "the API repair's rules");
    assert!(task.contains("Replay failed at step 2"), "{task}");
    assert!(task.contains("1. Given the API client has signed in as the demo user (replayed, passed)"), "{task}");
    assert!(task.contains("the field is `count` now"), "the response is shown: {task}");
    for request in seen.all() {
        assert!(!format!("{:?}", request.messages).contains(&password), "the model read the password");
    }

    // Filed: the order sent the new way, its id kept; the checks and the Then steps as committed.
    let filed: Value =
        serde_json::from_str(&std::fs::read_to_string(proposal_path(&project)).expect("filed")).expect("json");
    let repaired = &filed["recording"];
    assert_eq!(actions(repaired, 2)[0]["body"]["count"], 2, "{filed:#}");
    assert_eq!(actions(repaired, 2)[0]["extract"], json!([{ "name": "order", "pointer": "/id" }]));
    assert_eq!(actions(repaired, 2)[1], json!({ "type": "expectSchema" }), "the committed check is kept");
    assert_eq!(actions(repaired, 1), actions(&committed, 1));
    assert_eq!(actions(repaired, 3), actions(&committed, 3));
    assert_eq!(actions(repaired, 4), actions(&committed, 4));
    assert_eq!(project.recording(MADE).as_ref(), Some(&committed), "the committed recording is untouched");
    project.assert_password_nowhere();

    // Pending: replayed at zero model requests, still yellow.
    let asked = seen.all().len();
    let said = text(&project.run_made(&drifted.url()));
    assert!(said.contains("1 yellow"), "{said}");
    assert_eq!(seen.all().len(), asked, "a pending proposal replays without the model");

    // Accepted (replayed green first): the scenario is green at zero requests.
    let shown = proposal_path(&project).strip_prefix(&project.root).expect("inside").to_string_lossy().into_owned();
    let accept = saffron(&project, &["accept", &shown, "--base-url", &drifted.url()]);
    assert_eq!(accept.status.code(), Some(0), "{}", text(&accept));
    assert!(text(&accept).contains("Proven"), "{}", text(&accept));
    let said = text(&project.run_made(&drifted.url()));
    assert!(said.contains("1 green"), "{said}");
    assert_eq!(seen.all().len(), asked);
    assert_eq!(actions(&project.recording(MADE).expect("accepted"), 2)[0]["body"]["count"], 2);
    let _ = runtime.block_on(drifted.shutdown());
}

#[test]
fn a_repair_that_drops_a_value_or_calls_another_operation_is_never_green_and_a_failed_then_never_reaches_it() {
    let runtime = runtime();
    let (project, _) = recorded("heal-hostile", &runtime);
    let drifted = demo_with(&runtime, DemoConfig { drift: [Drift::RenamedApiField].into(), ..DemoConfig::default() });

    // Another customer: the step's value "Lin" is no longer sent. Refused, nothing filed.
    let seen = Seen::default();
    let body = json!({ "customer": "Ada", "count": 2, "product": "Tea" });
    let plans: CallPlans = [(MADE.to_owned(), repair_plan(None, body))].into();
    let server = scripted_reading_ids(&runtime, plans, seen.clone());
    use_agent(&project, &server, "");
    let output = project.run_made(&drifted.url());
    let said = text(&output);
    assert_ne!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("the repair was refused, nothing was filed"), "{said}\n{}", errors_told(&seen));
    assert!(said.contains("\"Lin\""), "{said}");
    assert!(!proposal_path(&project).exists(), "nothing was filed");

    // The same order sent to another service: it passes its proof, and is filed for a person,
    // red meanwhile; the next run replays the committed recording and names it, at zero tokens.
    let seen = Seen::default();
    let body = json!({ "customer": "Lin", "count": 2, "product": "Tea" });
    let plans: CallPlans = [(MADE.to_owned(), repair_plan(Some("mirror"), body))].into();
    let server = scripted_reading_ids(&runtime, plans, seen.clone());
    let mirror =
        format!("[api.services.mirror]\nbase_url = \"{}\"\ncontract = \"contracts/app.openapi.json\"\n", drifted.url());
    use_agent(&project, &server, &mirror);
    let output = project.run_made(&drifted.url());
    let said = text(&output);
    assert_ne!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("another operation"), "{said}\n{}", errors_told(&seen));
    assert!(said.contains("filed for review"), "{said}");
    assert!(proposal_path(&project).exists());
    let asked = seen.all().len();
    let said = text(&project.run_made(&drifted.url()));
    assert!(said.contains("waits for review"), "{said}");
    assert_eq!(seen.all().len(), asked, "a held repair is not repaired again");
    let shown = proposal_path(&project).strip_prefix(&project.root).expect("inside").to_string_lossy().into_owned();
    let rejected = saffron(&project, &["reject", &shown]);
    assert_eq!(rejected.status.code(), Some(0), "{}", text(&rejected));

    // A Then step that fails (the total is wrong) is red, and the agent is never asked.
    let wrong = demo_with(&runtime, DemoConfig { defects: [Defect::WrongTotal].into(), ..DemoConfig::default() });
    let said = text(&project.run_made(&wrong.url()));
    assert!(said.contains("1 red") && said.contains("/total_cents"), "{said}");
    assert_eq!(seen.all().len(), asked, "a failed Then step is never repaired");
    let _ = runtime.block_on(wrong.shutdown());
    let _ = runtime.block_on(drifted.shutdown());
}

/// A Fixture is repaired as a scenario is: its proven proposal makes the feature's green
/// scenario yellow, and the order its proof made is the one the scenario reads.
#[test]
fn a_fixture_whose_request_the_api_now_reads_differently_is_repaired_and_seeds_its_scenarios() {
    let runtime = runtime();
    let demo = demo_with(&runtime, DemoConfig::default());
    let password = demo.config().password.clone();
    let server = scripted_reading_ids(&runtime, fixture_plans(), Seen::default());
    let project = Project::new("heal-fixture", &server, &password);
    std::fs::remove_file(project.root.join("features/orders_api.feature")).expect("only the Fixture's feature");
    std::fs::write(project.root.join("features/one_order.saffron"), WITH_FIXTURE).expect("feature");
    let output = project.run(&demo.url());
    assert_eq!(output.status.code(), Some(0), "recorded: {}", text(&output));
    let _ = runtime.block_on(demo.shutdown());

    let drifted = demo_with(&runtime, DemoConfig { drift: [Drift::RenamedApiField].into(), ..DemoConfig::default() });
    let seen = Seen::default();
    let repair = vec![
        step(2),
        call(
            "saffron_request",
            json!({ "method": "POST", "path": "/api/orders", "body": { "customer": "Zelda", "count": 2, "product": "Tea" } }),
        ),
        call("saffron_extract", json!({ "name": "order", "pointer": "/id" })),
        done(true),
    ];
    let plans: CallPlans = [("an order to read".to_owned(), repair)].into();
    let server = scripted_reading_ids(&runtime, plans, seen.clone());
    use_agent(&project, &server, "");
    let output = project.run(&drifted.url());
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}\n{}", errors_told(&seen));
    assert!(said.contains("1 scenario(s): 0 green, 1 yellow"), "the Fixture's proposal is its floor: {said}");
    let filed = project
        .root
        .join(".saffron/proposals")
        .join(saffron_recording::feature_slug("features/one_order.saffron"))
        .join("an-order-to-read.json");
    let filed: Value = serde_json::from_str(&std::fs::read_to_string(filed).expect("filed")).expect("json");
    assert_eq!(actions(&filed["recording"], 2)[0]["body"]["count"], 2, "{filed:#}");
    assert_eq!(actions(&filed["recording"], 2)[1], json!({ "type": "expectSchema" }));
    // Sent in order: the failed replay's order (400), the repair's and its proof's (201); the
    // scenario then reads the order the proof made, whose id the proof kept.
    let log = drifted.requests();
    let orders: Vec<u16> = log
        .iter()
        .filter(|entry| entry.method == "POST" && entry.path == "/api/orders")
        .map(|entry| entry.status)
        .collect();
    assert_eq!(orders, [400, 201, 201], "{log:?}");
    let read: Vec<&str> = log
        .iter()
        .filter(|entry| entry.method == "GET" && entry.path.starts_with("/api/orders/"))
        .map(|entry| entry.path.as_str())
        .collect();
    // A fresh demo numbers new orders from #1005: the repair's, then the proof's.
    assert_eq!(read, ["/api/orders/1006"], "{log:?}");
    let _ = runtime.block_on(drifted.shutdown());
}
