//! The end-to-end recording tests' helpers: the scripted agent (shared with the recording
//! benchmark), a copy of the example project without recordings, and `saffron run` on it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use saffron_agent::Request;
use saffron_agent::testing::{FakeServer, Reply, Wire};
pub use saffron_benches::agent_script::*;

/// A fake vendor server on the Anthropic wire that plays one plan, `ops` for the session named
/// `name` (a scenario, or `<scenario> (repair)`), and the requests it saw.
pub fn scripted_one(runtime: &tokio::runtime::Runtime, name: &str, ops: Vec<Op>) -> (FakeServer, Seen) {
    let mut plans = Plans::new();
    plans.insert(name.to_string(), ops);
    let seen = Seen::default();
    (runtime.block_on(scripted(Wire::Anthropic, plans, seen.clone())), seen)
}

/// A fake vendor server on `wire` that plays `plans` and keeps every request in `seen`.
pub async fn scripted(wire: Wire, plans: Plans, seen: Seen) -> FakeServer {
    FakeServer::start(wire, move |request: &Request| {
        seen.push(request);
        reply(&plans, request)
    })
    .await
    .expect("fake server")
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime")
}

pub fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The example project's features without any recording, the demo password in its `.env`.
pub fn project(name: &str, password: &str) -> PathBuf {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = std::env::temp_dir().join(format!("saffron-record-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    super::copy_dir(&repository.join("features"), &root.join("features"));
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect("write .env");
    root
}

pub fn configure_agent(root: &Path, provider: &str, server: &FakeServer, extra: &str) {
    let toml = format!(
        "[agent]\nprovider = \"{provider}\"\nmodel = \"fake-model\"\nbase_url = \"{}\"\napi_key_env = \"\"\n{extra}",
        server.base_url()
    );
    std::fs::write(root.join("saffron.toml"), toml).expect("write saffron.toml");
}

pub fn saffron_run(root: &Path, base_url: &str, targets: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", base_url])
        .args(targets)
        .current_dir(root)
        .env_remove("DEMO_PASSWORD")
        .output()
        .expect("saffron runs")
}

/// A scenario for `features/orders.saffron` whose first five steps (the Background's sign-in and
/// a search) other recordings perform, and whose last is new: the agent records only that gap.
pub const SEARCH_THEN_HEADING: &str = "\n  Scenario: Search, then read the heading\n    When I search orders for \"Ada \
                                       Lovelace\"\n    Then the orders table shows 2 orders\n    And I see the page \
                                       heading \"Orders\"\n";

/// Appends `scenarios` (Gherkin, indented as in the file) to the project's
/// `features/orders.saffron`.
pub fn add_to_orders(root: &Path, scenarios: &str) {
    let orders = root.join("features/orders.saffron");
    let mut source = std::fs::read_to_string(&orders).expect("orders.saffron");
    source.push_str(scenarios);
    std::fs::write(&orders, source).expect("write orders.saffron");
}

/// `FILE:LINE` of the scenario named `name` in the project's `file`.
pub fn scenario_at(root: &Path, file: &str, name: &str) -> String {
    line_of(root, file, &format!(": {name}"))
}

/// `FILE:LINE` of the first line of `file` that holds `text` (an Examples row selects its row).
pub fn line_of(root: &Path, file: &str, text: &str) -> String {
    let source = std::fs::read_to_string(root.join(file)).expect("feature");
    let line = source.lines().position(|line| line.contains(text)).expect("line");
    format!("{file}:{}", line + 1)
}

pub fn every_file(root: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            every_file(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// Tool calls by scenario name, for a script that reads ids from what the tools answered.
pub type CallPlans = std::collections::HashMap<String, Vec<(String, serde_json::Value)>>;

/// The prefix of a plan's key that a repair session of the scenario plays (`repair: NAME`).
pub const REPAIR: &str = "repair: ";

/// Stands in a call's input for the last id a tool answered with (`"id": 3`).
pub const LAST_ID: &str = "$LAST_ID";

pub fn tool_call(tool: &str, input: serde_json::Value) -> (String, serde_json::Value) {
    (tool.to_owned(), input)
}

/// A fake vendor server on the Anthropic wire that plays each scenario's calls, each
/// [`LAST_ID`] in them replaced by the last id the tools answered with so far. A repair session
/// plays the scenario's [`REPAIR`] plan when it has one.
pub fn scripted_reading_ids(runtime: &tokio::runtime::Runtime, plans: CallPlans, seen: Seen) -> FakeServer {
    let pattern = regex::Regex::new(r#""id": (\d+)"#).expect("pattern");
    runtime
        .block_on(FakeServer::start(Wire::Anthropic, move |request: &Request| {
            seen.push(request);
            let task = request.messages.first().map(|message| message.text()).unwrap_or_default();
            let scenario = task.lines().find_map(|line| line.strip_prefix("Scenario: ")).unwrap_or_default();
            // A repair session plays `repair: <scenario>` when there is one.
            let repair = request.system.starts_with("You repair").then(|| plans.get(&format!("{REPAIR}{scenario}")));
            let Some(plan) = repair.flatten().or_else(|| plans.get(scenario)) else {
                return Reply::text("I have no plan for this scenario.");
            };
            let index = request.answers_so_far();
            let Some((tool, input)) = plan.get(index) else { return Reply::text("I am finished.") };
            let last_id = tool_results(request)
                .iter()
                .rev()
                .find_map(|(content, _)| Some(pattern.captures_iter(content).last()?[1].to_owned()))
                .unwrap_or_default();
            let input = input.to_string().replace(LAST_ID, &last_id);
            Reply::call(&format!("call-{index}"), tool, serde_json::from_str(&input).expect("json"))
        }))
        .expect("fake server")
}

/// What went wrong in the agent's conversations, for a failing assertion's message.
pub fn errors_told(seen: &Seen) -> String {
    let mut errors: Vec<String> = Vec::new();
    for request in seen.all() {
        for (content, is_error) in tool_results(&request) {
            if is_error && !errors.contains(&content) {
                errors.push(content);
            }
        }
    }
    if std::env::var_os("SAFFRON_TEST_DUMP").is_some()
        && let Some(last) =
            seen.all().iter().rev().find(|request| tool_results(request).iter().any(|(_, error)| *error)).cloned()
    {
        for (content, _) in tool_results(&last) {
            errors.push(format!("RESULT: {content}"));
        }
    }
    errors.join("\n---\n")
}
