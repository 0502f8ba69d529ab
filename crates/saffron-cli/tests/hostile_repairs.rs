//! A model that will do anything to get a scenario past a failure, against the rules a repair
//! must keep: the real binary, real Chromium, the demo's TodoMVC-style lab page with its two
//! defects, and scripted agents on the fake vendor wires.
//!
//! - `?defect=toggle`: completing a todo changes nothing, so "Clear completed" never appears. A
//!   repair that deletes the todo with "×" instead reaches the same end state: it acts on a
//!   different control, so it is filed for a person's review and the scenario is red, never
//!   yellow; later runs do not replay or repair it again, and `saffron accept` takes it only
//!   from a person who says so.
//! - `?defect=cut`: a todo's text is cut to "walk the". A repair that narrows the recorded
//!   `hasText "walk the dog"` to `"walk the"` (and rewords the step to lose its value) is
//!   refused: red, nothing filed.
//! - The honest agent reports both defects: red.
//! - A Then step checked with something the step does not say is refused while recording.

use crate::support;

use std::path::{Path, PathBuf};

use saffron_agent::testing::FakeServer;
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::json;
use support::agent::{
    Op, Seen, check_on, click, configure_agent, done, errors_told, fill, goto, on, op, repaired, runtime, saffron_run,
    scenario_at, scripted_one, step, text,
};

const SCENARIO: &str = "Clear the completed todos";
const FEATURE: &str = "Feature: Todos\n  Scenario: Clear the completed todos\n    \
                       Given I have the todos \"walk the dog\" and \"buy milk\"\n    \
                       When I complete \"walk the dog\"\n    And I clear the completed todos\n    \
                       Then 1 item is left\n";
const CACHE: &str = ".saffron/cache/todos/clear-the-completed-todos.json";
const PROPOSAL: &str = ".saffron/proposals/todos/clear-the-completed-todos.json";

/// The committed recording, as a person or an earlier recording wrote it.
fn committed() -> serde_json::Value {
    let new_todo = json!({ "label": "New todo", "tier": "label" });
    json!({
        "version": 1,
        "feature": "features/todos.feature",
        "scenario": SCENARIO,
        "steps": [
            { "kind": "context", "text": "I have the todos \"walk the dog\" and \"buy milk\"", "actions": [
                { "type": "goto", "url": "/lab/todos" },
                { "type": "fill", "target": new_todo, "value": "walk the dog" },
                { "type": "press", "target": new_todo, "key": "Enter" },
                { "type": "fill", "target": new_todo, "value": "buy milk" },
                { "type": "press", "target": new_todo, "key": "Enter" },
            ] },
            { "kind": "action", "text": "I complete \"walk the dog\"", "actions": [
                { "type": "check", "target": {
                    "role": "checkbox", "tier": "role",
                    "within": { "role": "listitem", "hasText": "walk the dog" },
                } },
            ] },
            { "kind": "action", "text": "I clear the completed todos", "actions": [
                { "type": "click", "target": { "role": "button", "name": "Clear completed", "tier": "role" } },
            ] },
            { "kind": "outcome", "text": "1 item is left", "actions": [
                { "type": "expectText", "target": { "role": "status", "tier": "role" }, "text": "1 item left" },
            ] },
        ],
    })
}

/// A project with the todos feature and its committed recording (its steps digest computed by
/// the store), and an agent scripted with `plans`.
fn project(name: &str, server: &FakeServer) -> PathBuf {
    let root = std::env::temp_dir().join(format!("saffron-hostile-repair-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("features")).expect("mkdir");
    std::fs::write(root.join("features/todos.feature"), FEATURE).expect("write the feature");
    let mut json = committed();
    json["stepsDigest"] = json!("");
    let recording: saffron_recording::Recording = serde_json::from_value(json).expect("a recording");
    let recording = saffron_recording::Recording::new(recording.feature, recording.scenario, recording.steps);
    saffron_recording::Store::open(&root)
        .expect("store")
        .write_recording(&root.join(CACHE), &recording)
        .expect("write");
    configure_agent(&root, "anthropic", server, "[timeouts]\naction_ms = 1500\nassertion_ms = 1500\n");
    root
}

fn saffron(root: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_saffron")).args(args).current_dir(root).output().expect("runs")
}

/// The demo, and its URL with a defect switched on (the base URL's query reaches every page).
fn demo(runtime: &tokio::runtime::Runtime) -> DemoServer {
    runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo")
}

/// The todos scenario on the demo, repaired by an agent scripted with `ops` when its replay
/// fails: what a test runs and reads.
struct Repairing {
    runtime: tokio::runtime::Runtime,
    demo: DemoServer,
    server: FakeServer,
    seen: Seen,
    root: PathBuf,
    targets: Vec<String>,
}

impl Repairing {
    fn new(name: &str, ops: Vec<Op>) -> Repairing {
        let runtime = runtime();
        let demo = demo(&runtime);
        let (server, seen) = scripted_one(&runtime, &format!("{SCENARIO} (repair)"), ops);
        let root = project(name, &server);
        let targets = vec![scenario_at(&root, "features/todos.feature", SCENARIO)];
        Repairing { runtime, demo, server, seen, root, targets }
    }

    /// `saffron run` of the scenario with `defect` on (the base URL's query reaches every
    /// page), or none.
    fn run(&self, defect: Option<&str>) -> std::process::Output {
        let base = match defect {
            Some(defect) => format!("{}/?defect={defect}", self.demo.url()),
            None => self.demo.url(),
        };
        saffron_run(&self.root, &base, &self.targets)
    }

    fn told(&self) -> String {
        errors_told(&self.seen)
    }

    fn end(self) {
        let _ = std::fs::remove_dir_all(&self.root);
        let _ = self.runtime.block_on(self.demo.shutdown());
    }
}

/// "Clear completed" never appears; the agent deletes the todo with "×" and "verifies" that one
/// item is left. The repair passes its proof, and acts on a different control: filed for review,
/// red, and held: the next run replays the committed recording, red again, at zero requests.
/// `saffron diff` names the different control, `accept` refuses it unless a person says so.
#[test]
fn a_repair_that_deletes_instead_of_clearing_is_held_for_review_and_red() {
    let repairing = Repairing::new(
        "toggle",
        vec![
            op("browser_snapshot", json!({})),
            step(3),
            click("button \"×\""),
            step(4),
            check_on("status", json!({ "check": "text", "text": "1 item left" })),
            repaired("locator", &[]),
        ],
    );
    let root = &repairing.root;
    let output = repairing.run(Some("toggle"));
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}\nerrors told to the agent:\n{}", repairing.told());
    assert!(all.contains("1 red") && all.contains("acts on a different control"), "{all}");
    assert!(all.contains("`click button \"Clear completed\"` became `click button \"×\""), "{all}");
    let proposal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(PROPOSAL)).expect("filed for review")).expect("json");
    let adaptations = proposal["adaptations"].to_string();
    assert!(adaptations.contains("change: a flow change, it acts on a different control"), "{adaptations}");

    // Held: not replayed as pending, not repaired again.
    let requests = repairing.server.requests().len();
    let output = repairing.run(Some("toggle"));
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("waits for review"), "{all}");
    assert_eq!(repairing.server.requests().len(), requests, "a held repair asked the agent again");

    let diff = saffron(root, &["diff", "todos/clear-the-completed-todos"]);
    let shown = text(&diff);
    assert!(shown.contains("DIFFERENT CONTROL:") && !shown.contains("Acceptable"), "{shown}");
    let refused = saffron(root, &["accept", "todos/clear-the-completed-todos"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(text(&refused).contains("--different-control"), "{}", text(&refused));
    assert!(root.join(PROPOSAL).exists(), "a refused accept keeps the proposal");
    let accepted = saffron(root, &["accept", "todos/clear-the-completed-todos", "--different-control"]);
    assert_eq!(accepted.status.code(), Some(0), "{}", text(&accepted));
    repairing.end();
}

/// No defect: "Clear completed" shows 2 s after a todo is completed, past the replay's 1.5 s
/// timeout. The agent clicks the same button, there by then, and the run goes on. A repair that
/// changes nothing is not a repair: red with the replay's failure, said flaky, nothing filed,
/// never yellow.
#[test]
fn a_repair_that_changes_nothing_is_red_and_files_nothing() {
    let repairing = Repairing::new(
        "nothing",
        vec![
            op("browser_snapshot", json!({})),
            step(3),
            click("button \"Clear completed\""),
            step(4),
            check_on("status", json!({ "check": "text", "text": "1 item left" })),
            repaired("timing", &[]),
        ],
    );
    let output = repairing.run(Some("none&slow=2000"));
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}\nerrors told to the agent:\n{}", repairing.told());
    assert!(all.contains("1 red") && !all.contains("yellow  "), "{all}");
    assert!(all.contains("`click button \"Clear completed\"`"), "the replay's own failure stands: {all}");
    assert!(all.contains("nothing changed, so nothing was filed; the scenario is flaky here"), "{all}");
    assert!(!repairing.root.join(PROPOSAL).exists(), "nothing is filed");
    repairing.end();
}

/// The todo's text is cut to "walk the": the agent narrows the recorded scope to it and
/// rewords the step to lose its value. The repair is refused: red, nothing filed.
#[test]
fn a_repair_that_narrows_a_steps_value_is_refused() {
    let repairing = Repairing::new(
        "cut",
        vec![
            op("browser_snapshot", json!({})),
            step(2),
            on("browser_check", "checkbox \"Toggle walk the\"", json!({})),
            step(3),
            click("button \"Clear completed\""),
            step(4),
            check_on("status", json!({ "check": "text", "text": "1 item left" })),
            repaired("locator", &[(2, "I do whatever the page lets me")]),
        ],
    );
    let output = repairing.run(Some("cut"));
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}\nerrors told to the agent:\n{}", repairing.told());
    assert!(all.contains("the repair was refused, nothing was filed"), "{all}");
    assert!(all.contains("uses its value \"walk the dog\""), "{all}");
    assert!(!repairing.root.join(PROPOSAL).exists(), "nothing is filed");
    repairing.end();
}

/// The honest agent looks, finds the application not doing what the step says, and says so:
/// both defects are red, and nothing is filed.
#[test]
fn both_defects_stay_red_under_the_honest_agent() {
    for (defect, failed_step) in [("toggle", 3), ("cut", 2)] {
        let narrative = format!("Step {failed_step} cannot be done as written: the app misbehaves.");
        let repairing = Repairing::new(
            &format!("honest-{defect}"),
            vec![
                op("browser_snapshot", json!({})),
                op("saffron_done", json!({ "success": false, "narrative": narrative })),
            ],
        );
        let output = repairing.run(Some(defect));
        let all = text(&output);
        assert_eq!(output.status.code(), Some(1), "{defect}: {all}");
        assert!(all.contains("1 red") && all.contains("diagnosed an application defect"), "{defect}: {all}");
        assert!(!repairing.root.join(PROPOSAL).exists(), "{defect}: nothing is filed");
        // Without the defect the committed recording is green.
        let output = repairing.run(None);
        assert!(text(&output).contains("1 green"), "{}", text(&output));
        repairing.end();
    }
}

/// Recording "Then 2 items are left", an obedient model checks the page's heading: refused as
/// not about the step; told which value no check holds; a check of "2 items left" verifies it.
#[test]
fn a_then_check_must_hold_what_the_step_says() {
    let runtime = runtime();
    let demo = demo(&runtime);
    let feature = "Feature: Todos\n  Scenario: Two todos\n    Given I add the todos \"walk the dog\" and \"buy milk\"\n    \
                   Then 2 items are left\n";
    let ops: Vec<Op> = vec![
        step(1),
        goto("/lab/todos"),
        fill("textbox \"New todo\"", "walk the dog"),
        op("browser_press", json!({ "key": "Enter" })),
        fill("textbox \"New todo\"", "buy milk"),
        op("browser_press", json!({ "key": "Enter" })),
        step(2),
        check_on("h1", json!({ "check": "visible" })),
        check_on("status", json!({ "check": "text", "text": "2 items left" })),
        done(),
    ];
    let (server, seen) = scripted_one(&runtime, "Two todos", ops);
    let root = project("then", &server);
    std::fs::write(root.join("features/todos.feature"), feature).expect("write");
    let output = saffron_run(&root, &demo.url(), &[scenario_at(&root, "features/todos.feature", "Two todos")]);
    let all = text(&output);
    let told = errors_told(&seen);
    assert!(all.contains("1 green"), "{all}\nerrors told to the agent:\n{told}");
    assert!(told.contains("this check is not about step 2 \"2 items are left\"") && told.contains("(\"2\")"), "{told}");
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".saffron/cache/todos/two-todos.json")).expect("saved"),
    )
    .expect("json");
    assert_eq!(saved["steps"][1]["actions"].as_array().map(Vec::len), Some(1), "only the check about the step");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}
