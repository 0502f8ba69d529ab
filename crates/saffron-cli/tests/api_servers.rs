//! `@api` scenarios recorded and replayed against API servers nobody on the team wrote, from
//! npm (`tests/servers/package.json`, installed by `.ci/run`): `json-server` 0.17.4, a REST
//! server over a JSON file (create, read, delete, a 404), and Stoplight's Prism 5.16.0, a mock
//! that validates requests against an OpenAPI contract (a 422 for an invalid body, a response
//! checked against the pinned contract). The agent is a script on the fake Anthropic wire that
//! reads the id each answer gives.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use saffron_agent::testing::FakeServer;
use serde_json::{Value, json};

use crate::support::agent::{
    CallPlans, LAST_ID, REPAIR, Seen, errors_told, runtime, scripted_reading_ids, text, tool_call,
};

const ID: &str = LAST_ID;

type Plans = CallPlans;

fn call(tool: &str, input: Value) -> (String, Value) {
    tool_call(tool, input)
}

fn step(number: usize) -> (String, Value) {
    call("saffron_step", json!({ "step": number }))
}

fn request(method: &str, path: &str, body: Option<Value>) -> (String, Value) {
    let mut input = json!({ "service": "todos", "method": method, "path": path });
    if let Some(body) = body {
        input["body"] = body;
    }
    call("saffron_request", input)
}

fn keep_id() -> (String, Value) {
    call("saffron_extract", json!({ "name": "todo", "pointer": "/id" }))
}

fn done() -> (String, Value) {
    call("saffron_done", json!({ "success": true, "narrative": "as the steps say" }))
}

/// A server from `tests/servers/node_modules`, stopped when dropped.
struct NpmServer {
    child: Child,
    port: u16,
    _folder: tempfile::TempDir,
}

impl NpmServer {
    /// Starts `program` with `args` (`{port}` replaced) in a fresh folder holding `files`, and
    /// waits for the line of its output that says it listens.
    fn start(program: &str, args: &[&str], files: &[(&str, &str)], ready: &str) -> NpmServer {
        let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/servers/node_modules/.bin").join(program);
        assert!(bin.exists(), "{} is missing: run `npm ci --prefix tests/servers` (.ci/run does)", bin.display());
        let folder = tempfile::tempdir().expect("a folder");
        for (name, content) in files {
            std::fs::write(folder.path().join(name), content).expect("a server file");
        }
        let port = TcpListener::bind("127.0.0.1:0").and_then(|listener| listener.local_addr()).expect("a port").port();
        let args: Vec<String> = args.iter().map(|arg| arg.replace("{port}", &port.to_string())).collect();
        let mut child = Command::new(&bin)
            .args(&args)
            .current_dir(folder.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdout = child.stdout.take().expect("stdout");
        let (lines, said) = mpsc::channel();
        let ready = ready.to_owned();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains(&ready) {
                    let _ = lines.send(());
                }
            }
        });
        said.recv_timeout(Duration::from_secs(90)).expect("the server said it listens");
        NpmServer { child, port, _folder: folder }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for NpmServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn json_server(read_only: bool) -> NpmServer {
    let mut args = vec!["--host", "127.0.0.1", "--port", "{port}"];
    if read_only {
        args.push("--read-only");
    }
    args.push("db.json");
    NpmServer::start("json-server", &args, &[("db.json", r#"{ "todos": [] }"#)], "Home")
}

struct Project {
    root: tempfile::TempDir,
}

impl Project {
    fn new(feature: &str, api_url: &str, agent: &FakeServer) -> Project {
        let root = tempfile::tempdir().expect("a project");
        std::fs::create_dir_all(root.path().join("features")).expect("mkdir");
        std::fs::write(root.path().join("features/todos.feature"), feature).expect("feature");
        let config = format!(
            "base_url = \"http://127.0.0.1:9\"\n[browser]\npath = \"no-such-chromium\"\n\
             [api.services.todos]\nbase_url = \"{api_url}\"\n\
             [agent]\nprovider = \"anthropic\"\nmodel = \"fake-model\"\nbase_url = \"{}\"\napi_key_env = \"\"\n",
            agent.base_url()
        );
        std::fs::write(root.path().join("saffron.toml"), config).expect("config");
        Project { root }
    }

    fn path(&self) -> &Path {
        self.root.path()
    }

    /// `saffron run`, one scenario at a time: json-server gives a deleted record's id to the
    /// next one it creates, so a scenario that deletes and then reads its record would read
    /// another scenario's new one if they ran side by side.
    fn run(&self, extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_saffron"))
            .args(["run", "--workers", "1"])
            .args(extra)
            .current_dir(self.path())
            .output()
            .expect("saffron runs")
    }

    fn recording(&self, scenario: &str) -> Value {
        let path: PathBuf = self
            .path()
            .join(".saffron/cache")
            .join(saffron_recording::feature_slug("features/todos.feature"))
            .join(format!("{}.json", saffron_recording::scenario_slug(scenario)));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} was saved", path.display()));
        serde_json::from_str(&text).expect("json")
    }
}

const TODOS: &str = "\
@api
Feature: Todos on a json-server

  Scenario: A todo created through the API reads back
    When the client creates the todo \"Buy milk\"
    Then the todo read back is titled \"Buy milk\"

  Scenario: A deleted todo is gone
    Given the client has created the todo \"Walk the dog\"
    When the client deletes that todo
    Then reading that todo answers 404 Not Found

  Scenario: A todo is marked done
    Given the client has created the todo \"Water the plants\"
    When the client marks that todo done
    Then the todo read back is done
";

#[test]
fn json_server_crud_is_recorded_replayed_at_zero_requests_and_red_when_the_server_refuses_writes() {
    let runtime = runtime();
    let server = json_server(false);
    let seen = Seen::default();
    let plans: Plans = [
        (
            "A todo created through the API reads back".to_owned(),
            vec![
                step(1),
                request("POST", "/todos", Some(json!({ "title": "Buy milk", "completed": false }))),
                keep_id(),
                step(2),
                request("GET", &format!("/todos/{ID}"), None),
                call("saffron_assert", json!({ "check": "field", "pointer": "/title", "value": "Buy milk" })),
                done(),
            ],
        ),
        (
            "A deleted todo is gone".to_owned(),
            vec![
                step(1),
                request("POST", "/todos", Some(json!({ "title": "Walk the dog", "completed": false }))),
                keep_id(),
                step(2),
                request("DELETE", &format!("/todos/{ID}"), None),
                step(3),
                request("GET", &format!("/todos/{ID}"), None),
                call("saffron_assert", json!({ "check": "status", "status": "404" })),
                done(),
            ],
        ),
        (
            "A todo is marked done".to_owned(),
            vec![
                step(1),
                request("POST", "/todos", Some(json!({ "title": "Water the plants", "completed": false }))),
                keep_id(),
                step(2),
                request("PATCH", &format!("/todos/{ID}"), Some(json!({ "completed": true }))),
                step(3),
                request("GET", &format!("/todos/{ID}"), None),
                call("saffron_assert", json!({ "check": "field", "pointer": "/completed", "value": true })),
                done(),
            ],
        ),
    ]
    .into();
    let mut plans = plans;
    // Asked to repair a scenario the read-only server breaks, the agent diagnoses a defect.
    let scenarios: Vec<String> = plans.keys().cloned().collect();
    for scenario in scenarios {
        plans.insert(format!("{REPAIR}{scenario}"), vec![defect("the server answers 403 Forbidden to every write")]);
    }
    let agent = scripted_reading_ids(&runtime, plans, seen.clone());
    let project = Project::new(TODOS, &server.url(), &agent);
    let output = project.run(&[]);
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}\n{}", errors_told(&seen));
    assert!(said.contains("3 scenario(s): 3 green"), "{said}");
    let deleted = project.recording("A deleted todo is gone");
    let paths: Vec<&str> = deleted["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .flat_map(|step| step["actions"].as_array().expect("actions"))
        .filter_map(|action| action["path"].as_str())
        .collect();
    assert_eq!(paths, ["/todos", "/todos/{captured:todo}", "/todos/{captured:todo}"]);

    // Replay: green, no model request, against the same server whose ids moved on.
    let before = seen.all().len();
    let output = project.run(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(seen.all().len(), before, "a replay asks the model nothing");

    // The same recordings against a json-server that refuses writes: red at the first write,
    // with the status the server gave.
    let read_only = json_server(true);
    let output = project.run(&["--api-url", &format!("todos={}", read_only.url())]);
    let said = text(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("3 red"), "{said}");
    assert!(said.contains("POST /todos was answered 403 Forbidden ("), "{said}");
    assert!(said.contains("and no step expects that status"), "{said}");
    // Each failed at a When step's write, so the agent was asked to repair it, and said why it
    // would not: red, nothing recorded again, nothing filed.
    assert_eq!(said.matches("the repairing agent diagnosed an application defect").count(), 3, "{said}");
    assert!(!project.path().join(".saffron/proposals").exists(), "nothing was filed");
    let repairs = seen.all()[before..].iter().filter(|request| request.answers_so_far() == 0).count();
    assert_eq!(repairs, 3, "one repair session per scenario, no recording");
}

/// The agent's end of a repair that finds the application at fault.
fn defect(narrative: &str) -> (String, Value) {
    call("saffron_done", json!({ "success": false, "narrative": narrative }))
}

const CONTRACT: &str = r##"{
  "openapi": "3.0.3",
  "info": { "title": "Todos", "version": "1.0.0" },
  "paths": {
    "/todos": {
      "post": {
        "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/NewTodo" } } } },
        "responses": {
          "201": { "description": "created", "content": { "application/json": {
            "schema": { "$ref": "#/components/schemas/Todo" },
            "example": { "id": 7, "title": "Buy milk", "completed": false } } } },
          "422": { "description": "the body is not a todo" }
        }
      }
    }
  },
  "components": {
    "schemas": {
      "NewTodo": { "type": "object", "required": ["title"], "additionalProperties": false,
                   "properties": { "title": { "type": "string", "minLength": 1 }, "completed": { "type": "boolean" } } },
      "Todo": { "type": "object", "required": ["id", "title", "completed"],
                "properties": { "id": { "type": "integer" }, "title": { "type": "string" }, "completed": { "type": "boolean" } } }
    }
  }
}
"##;

const VALIDATED: &str = "\
@api
Feature: Todos on a mock of their contract

  Scenario: A todo without a title is refused
    When the client creates a todo without a title
    Then the API answers 422 Unprocessable Entity

  Scenario: A created todo is what the contract says
    When the client creates the todo \"Buy milk\"
    Then the answer is a todo titled \"Buy milk\"
";

#[test]
fn prism_refuses_an_invalid_body_and_a_contract_pinned_again_makes_the_schema_checked_scenario_stale() {
    let runtime = runtime();
    let prism = NpmServer::start(
        "prism",
        &["mock", "-h", "127.0.0.1", "-p", "{port}", "todos.openapi.json"],
        &[("todos.openapi.json", CONTRACT)],
        "Prism is listening",
    );
    let seen = Seen::default();
    let plans: Plans = [
        (
            "A todo without a title is refused".to_owned(),
            vec![
                step(1),
                request("POST", "/todos", Some(json!({ "completed": true }))),
                step(2),
                call("saffron_assert", json!({ "check": "status", "status": "422" })),
                done(),
            ],
        ),
        (
            "A created todo is what the contract says".to_owned(),
            vec![
                step(1),
                request("POST", "/todos", Some(json!({ "title": "Buy milk" }))),
                call("saffron_assert", json!({ "check": "schema" })),
                step(2),
                call("saffron_assert", json!({ "check": "field", "pointer": "/title", "value": "Buy milk" })),
                done(),
            ],
        ),
    ]
    .into();
    let mut plans = plans;
    plans.insert(
        format!("{REPAIR}A created todo is what the contract says"),
        vec![defect("the created todo has no `completed`, which the contract requires")],
    );
    let agent = scripted_reading_ids(&runtime, plans, seen.clone());
    let project = Project::new(VALIDATED, &prism.url(), &agent);
    std::fs::create_dir_all(project.path().join("contracts")).expect("mkdir");
    std::fs::write(project.path().join("contracts/todos.openapi.json"), CONTRACT).expect("the pinned contract");
    let output = project.run(&[]);
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}\n{}", errors_told(&seen));
    assert!(said.contains("2 scenario(s): 2 green"), "{said}");
    let refused = project.recording("A todo without a title is refused");
    assert_eq!(refused["steps"][1]["actions"], json!([{ "type": "expectStatus", "status": "422" }]));
    assert!(refused.get("apiContracts").is_none(), "no schema check, no contract: {refused}");
    let created = project.recording("A created todo is what the contract says");
    assert_eq!(created["apiContracts"]["todos"], saffron_runner::contract::digest(CONTRACT.as_bytes()));

    let before = seen.all().len();
    let output = project.run(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(seen.all().len(), before, "a replay asks the model nothing");

    // A server that leaves out a field the pinned contract requires: the schema check is red
    // and names it; the other scenario, which checks no schema, stays green.
    let broken = NpmServer::start(
        "prism",
        &["mock", "-h", "127.0.0.1", "-p", "{port}", "todos.openapi.json"],
        &[("todos.openapi.json", &CONTRACT.replace(r#", "completed": false }"#, " }"))],
        "Prism is listening",
    );
    let output = project.run(&["--api-url", &format!("todos={}", broken.url())]);
    let said = text(&output);
    assert!(said.contains("1 green") && said.contains("1 red"), "{said}");
    assert!(said.contains("\"completed\" is a required property"), "{said}");
    // The schema check is in the When step: the agent was asked, and found the server at fault.
    assert!(said.contains("the repairing agent diagnosed an application defect"), "{said}");
    let asked: Vec<String> = seen.all()[before..]
        .iter()
        .filter(|request| request.answers_so_far() == 0)
        .map(|request| request.messages[0].text())
        .collect();
    assert_eq!(asked.len(), 1, "one repair session, nothing recorded again");
    assert!(asked[0].contains("Scenario: A created todo is what the contract says"), "{}", asked[0]);

    // The contract pinned again, different: the schema-checked scenario needs recording, the
    // other still replays.
    let changed = CONTRACT.replace(r#""required": ["id", "title", "completed"]"#, r#""required": ["id", "title"]"#);
    std::fs::write(project.path().join("contracts/todos.openapi.json"), changed).expect("pinned again");
    let config = std::fs::read_to_string(project.path().join("saffron.toml")).expect("config");
    let without_agent = &config[..config.find("[agent]").expect("agent section")];
    std::fs::write(project.path().join("saffron.toml"), without_agent).expect("config");
    let said = text(&project.run(&[]));
    assert!(said.contains("1 green") && said.contains("1 blocked"), "{said}");
    assert!(said.contains("the pinned contract of service `todos` changed since it was recorded"), "{said}");
}
