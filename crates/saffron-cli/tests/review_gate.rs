//! The review gate against a proposal edited by hand and a planted link: the real binary, and
//! for the proof before an accept, real Chromium against the demo's todos page.
//!
//! - A proposal whose Then check was swapped for one that always holds, its stored diff left
//!   harmless and its content digest recomputed (the digest is plain SHA-256): `saffron diff`
//!   shows the change worked out from the recordings and refuses it; `accept` writes nothing.
//! - An unverified proposal whose mark was deleted and digest recomputed: when the application
//!   answers, `accept` replays it first and refuses it; when it does not, `accept` says plainly
//!   that the proof could not be checked, and `--prove` refuses.
//! - `saffron reject` through a link out of `.saffron/` deletes nothing out there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use saffron_demo::{DemoConfig, DemoServer};
use saffron_recording::{Proposal, ProposalDraft, Recording, ScenarioRef, Store, content_digest};
use serde_json::{Value, json};

const FEATURE: &str = "Feature: Todos\n  Scenario: Add one\n    When I add \"walk the dog\"\n    Then 1 item is left\n";
const CACHE: &str = ".saffron/cache/todos/add-one.json";
const PROPOSAL: &str = ".saffron/proposals/todos/add-one.json";

fn saffron(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron")).args(args).current_dir(root).output().expect("saffron runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The recording of "Add one", with the new todo's field found by `field` and the Then step's
/// check `then`.
fn recording(field: Value, then: Value) -> Recording {
    let value = json!({
        "version": 1,
        "feature": "features/todos.feature",
        "scenario": "Add one",
        "stepsDigest": "",
        "steps": [
            { "kind": "action", "text": "I add \"walk the dog\"", "actions": [
                { "type": "goto", "url": "/lab/todos" },
                { "type": "fill", "target": field, "value": "walk the dog" },
                { "type": "press", "target": field, "key": "Enter" },
            ] },
            { "kind": "outcome", "text": "1 item is left", "actions": [then] },
        ],
    });
    let parsed: Recording = serde_json::from_value(value).expect("a recording");
    Recording::new(parsed.feature, parsed.scenario, parsed.steps)
}

fn label() -> Value {
    json!({ "label": "New todo", "tier": "label" })
}

fn one_left() -> Value {
    json!({ "type": "expectText", "target": { "role": "status", "tier": "role" }, "text": "1 item left" })
}

/// A project with "Add one" committed, and `proposed` filed against it as a heal files it.
fn project(name: &str, proposed: Recording, unverified: Option<&str>) -> (PathBuf, Store) {
    let root = std::env::temp_dir().join(format!("saffron-gate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("features")).expect("mkdir");
    std::fs::write(root.join("features/todos.feature"), FEATURE).expect("feature");
    std::fs::write(root.join("saffron.toml"), "[timeouts]\naction_ms = 1500\nassertion_ms = 1500\n").expect("config");
    let store = Store::open(&root).expect("store");
    let committed = recording(label(), one_left());
    store.write_recording(&root.join(CACHE), &committed).expect("committed");
    let draft = ProposalDraft {
        scenario: ScenarioRef {
            feature: "features/todos.feature".into(),
            name: "Add one".into(),
            cache_path: CACHE.into(),
        },
        recording: proposed,
        feature_edits: Vec::new(),
        narrative: "The field moved.".into(),
        adaptations: vec!["change: a control or label changed".into()],
        usage: None,
        filed_at: None,
        unverified: unverified.map(str::to_owned),
    };
    store.write_proposal(&root.join(PROPOSAL), &Proposal::file(draft, Some(&committed))).expect("proposal");
    (root, store)
}

/// Edits the proposal file as a person with a text editor would, then recomputes its content
/// digest so that it reads fresh.
fn tamper(root: &Path, store: &Store, edit: impl FnOnce(&mut Proposal)) {
    let mut proposal = store.read_proposal(&root.join(PROPOSAL)).expect("readable");
    edit(&mut proposal);
    proposal.binding.content_digest = content_digest(&proposal);
    std::fs::write(root.join(PROPOSAL), serde_json::to_string_pretty(&proposal).expect("json")).expect("write");
}

#[test]
fn a_then_check_swapped_by_hand_is_shown_as_it_is_and_refused() {
    let placeholder = json!({ "placeholder": "What needs to be done?", "tier": "placeholder" });
    let (root, store) = project("then", recording(placeholder, one_left()), None);
    let committed_before = std::fs::read_to_string(root.join(CACHE)).expect("committed");
    // The stored diff still says "a field found another way"; the Then check now always holds.
    tamper(&root, &store, |proposal| {
        proposal.recording.steps[1].actions = vec![
            serde_json::from_value(json!({ "type": "expectVisible", "target": { "css": ["body"] } })).expect("check"),
        ];
    });

    let diff = saffron(&root, &["diff", "todos/add-one"]);
    let shown = text(&diff);
    assert!(!shown.contains("Acceptable"), "{shown}");
    assert!(shown.contains("REFUSED: step 2 \"1 item is left\" is a Then step"), "{shown}");
    assert!(
        shown.contains("Then 1 item is left") && shown.contains("expectVisible"),
        "the diff shows the Then change: {shown}"
    );

    let accept = saffron(&root, &["accept", "todos/add-one"]);
    assert_eq!(accept.status.code(), Some(1), "{}", text(&accept));
    assert!(text(&accept).contains("changes what no repair may change"), "{}", text(&accept));
    assert_eq!(std::fs::read_to_string(root.join(CACHE)).expect("committed"), committed_before, "nothing was written");
    let listed: Value =
        serde_json::from_slice(&saffron(&root, &["proposals", "--format", "json"]).stdout).expect("json");
    assert_eq!(listed["proposals"][0]["acceptable"], false, "{listed:#}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_deleted_unverified_mark_is_caught_by_the_proof_before_accepting() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let demo = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    // A label that shares a word with the committed one: no rule of repairs tells it apart.
    let wrong = json!({ "label": "New task", "tier": "label" });
    let (root, store) = project("unverified", recording(wrong, one_left()), Some("step 1: no element matched"));
    let committed_before = std::fs::read_to_string(root.join(CACHE)).expect("committed");
    let refused = saffron(&root, &["accept", "todos/add-one", "--base-url", &demo.url()]);
    assert_eq!(refused.status.code(), Some(1), "an unverified proposal is refused: {}", text(&refused));
    tamper(&root, &store, |proposal| proposal.unverified = None);

    // The application answers: the proposal is replayed first, fails, and is refused.
    let accept = saffron(&root, &["accept", "todos/add-one", "--base-url", &demo.url()]);
    let said = text(&accept);
    assert_eq!(accept.status.code(), Some(1), "{said}");
    assert!(said.contains("replayed now before accepting") && said.contains("New task"), "{said}");
    assert_eq!(std::fs::read_to_string(root.join(CACHE)).expect("committed"), committed_before);

    // It does not answer: --prove refuses, and a plain accept says it is unproven.
    let nowhere = "http://127.0.0.1:9";
    let prove = saffron(&root, &["accept", "todos/add-one", "--prove", "--base-url", nowhere]);
    assert_eq!(prove.status.code(), Some(2), "{}", text(&prove));
    assert!(text(&prove).contains("its proof could not be checked"), "{}", text(&prove));
    assert!(root.join(PROPOSAL).exists());
    let unproven = saffron(&root, &["accept", "todos/add-one", "--base-url", nowhere]);
    assert_eq!(unproven.status.code(), Some(0), "{}", text(&unproven));
    assert!(text(&unproven).contains("Not proven: its proof could not be checked here"), "{}", text(&unproven));
    let _ = std::fs::remove_dir_all(&root);

    // An honest proposal (the same field, found by its placeholder now) is proven and accepted.
    let placeholder = json!({ "label": "New todo", "placeholder": "What needs to be done?", "tier": "placeholder" });
    let (root, _) = project("proven", recording(placeholder, one_left()), None);
    let accept = saffron(&root, &["accept", "todos/add-one", "--prove", "--base-url", &demo.url()]);
    assert_eq!(accept.status.code(), Some(0), "{}", text(&accept));
    assert!(text(&accept).contains("Proven: its recording replayed green against"), "{}", text(&accept));
    assert!(std::fs::read_to_string(root.join(CACHE)).expect("written").contains("What needs to be done?"));
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

#[cfg(unix)]
#[test]
fn reject_deletes_nothing_through_a_link_out_of_the_store() {
    for linked in ["proposals/victim", "proposals"] {
        let root = tempfile::tempdir().expect("project");
        let outside = tempfile::tempdir().expect("outside");
        std::fs::write(root.path().join("saffron.toml"), "").expect("config");
        std::fs::create_dir_all(root.path().join(".saffron")).expect("mkdir");
        let settings = outside.path().join("settings.json");
        std::fs::write(&settings, "{\"theme\": \"dark\"}").expect("write");
        let link = root.path().join(".saffron").join(linked);
        std::fs::create_dir_all(link.parent().expect("parent")).expect("mkdir");
        std::os::unix::fs::symlink(outside.path(), &link).expect("link out");
        let id = if linked == "proposals" { "settings" } else { "victim/settings" };
        let id = if linked == "proposals" { format!("{id}/x") } else { id.to_string() };
        if linked == "proposals" {
            std::fs::create_dir_all(outside.path().join("settings")).expect("mkdir");
            std::fs::write(outside.path().join("settings/x.json"), "{}").expect("write");
        }
        let output = saffron(root.path(), &["reject", &id]);
        assert_ne!(output.status.code(), Some(0), "{linked}: {}", text(&output));
        assert!(text(&output).contains(".saffron folder"), "{linked}: {}", text(&output));
        assert!(settings.exists(), "{linked}: a file outside the project was deleted");
        assert!(linked != "proposals" || outside.path().join("settings/x.json").exists(), "deleted through the link");
    }
}
