//! `saffron steps` and `saffron status` on the example project (`features/` and its committed
//! recordings under `.saffron/cache`), run as a user runs them from the repository root.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::copy_dir;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn saffron(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron")).args(args).current_dir(cwd).output().expect("saffron runs")
}

fn json(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("json")
}

#[test]
fn steps_show_every_status_near_duplicates_and_behaviour_duplicates() {
    let steps = json(&saffron(&["steps", "--format", "json", "features"], &repository()));
    let steps = steps.as_array().expect("array");
    let find = |text: &str| steps.iter().find(|s| s["text"] == text).unwrap_or_else(|| panic!("no step {text:?}"));
    for status in ["recorded", "divergent", "unrecorded"] {
        assert!(steps.iter().any(|s| s["status"] == status), "no {status} step");
    }
    assert_eq!(find("I save the order")["status"], "divergent");
    assert_eq!(find("I sign out")["status"], "unrecorded");
    let seen = find("I see the orders page");
    assert_eq!(seen["status"], "recorded");
    assert_eq!(seen["nearDuplicates"], serde_json::json!(["I should see the orders page"]));
    assert_eq!(seen["sameBehaviourAs"], serde_json::json!(["I should see the orders page"]));
    // Written twice: once in a scenario, once in the StepSet (which counts once).
    assert_eq!(seen["count"], 2);
    let uses = seen["uses"].as_array().expect("uses");
    assert!(uses.iter().any(|u| u["file"] == "features/shared.steps.saffron" && u["line"] == 7), "{uses:?}");
    // Negation flips meaning: never a near-duplicate.
    assert_eq!(find("gift wrap is selected")["nearDuplicates"], serde_json::json!([]));
}

#[test]
fn snippets_turn_placeholders_and_quoted_values_into_tab_stops() {
    let snippets = json(&saffron(&["steps", "--format", "snippets"], &repository()));
    let snippet = &snippets["the saved total is \"<total>\""];
    assert_eq!(snippet["prefix"], "the saved total is \"<total>\"");
    assert_eq!(snippet["body"], serde_json::json!(["the saved total is \"${1:<total>}\""]));
    assert!(snippet["description"].as_str().is_some_and(|d| d.starts_with("✓ recorded")));
}

#[test]
fn status_reports_fresh_stale_unrecorded_per_scenario() {
    let repository = repository();
    let status = json(&saffron(&["status", "--format", "json"], &repository));
    let scenarios = status.as_array().expect("array");
    let state = |name: &str| {
        scenarios.iter().find(|s| s["name"] == name).map(|s| s["recording"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(state("Search orders by customer").as_deref(), Some("fresh"));
    assert_eq!(state("Refund an order").as_deref(), Some("unrecorded"));
    let outline = scenarios.iter().find(|s| s["name"] == "Create an order for <customer>").expect("outline");
    assert_eq!(outline["rows"], 2);
    assert_eq!(outline["recordingPath"], ".saffron/cache/new-order/create-an-order-for-customer.json");

    // A copy of the project where one scenario was edited since it was recorded.
    let copy = std::env::temp_dir().join(format!("saffron-status-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(&repository.join("features"), &copy.join("features"));
    copy_dir(&repository.join(".saffron/cache"), &copy.join(".saffron/cache"));
    let sign_in = copy.join("features/sign_in.feature");
    let text = std::fs::read_to_string(&sign_in).expect("read");
    std::fs::write(&sign_in, text.replace("And I see no console errors", "And I see no errors at all")).expect("write");
    let status = json(&saffron(&["status", "--format", "json"], &copy));
    let edited =
        status.as_array().and_then(|s| s.iter().find(|s| s["name"] == "Sign in with the demo account").cloned());
    assert_eq!(edited.map(|s| s["recording"].clone()), Some(Value::from("stale")));
    let _ = std::fs::remove_dir_all(&copy);
}

/// The action types of the recording schema: every `{"properties": {"type": {"const": T}}}`.
fn schema_action_types(value: &Value, out: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(kind) = map.get("properties").and_then(|p| p["type"]["const"].as_str()) {
                out.insert(kind.to_string());
            }
            map.values().for_each(|v| schema_action_types(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| schema_action_types(v, out)),
        _ => {}
    }
}

#[test]
fn the_example_recordings_use_every_action_type() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repository().join("docs/schema/recording.schema.json")).expect("schema"),
    )
    .expect("json");
    let mut expected = std::collections::BTreeSet::new();
    schema_action_types(&schema, &mut expected);
    assert!(expected.len() >= 20, "{expected:?}");
    let mut used = std::collections::BTreeSet::new();
    let mut folders = vec![repository().join(".saffron/cache")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("cache").flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let recording: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
            for step in recording["steps"].as_array().into_iter().flatten() {
                for action in step["actions"].as_array().into_iter().flatten() {
                    used.insert(action["type"].as_str().unwrap_or_default().to_string());
                }
            }
        }
    }
    let missing: Vec<&String> = expected.difference(&used).collect();
    assert!(missing.is_empty(), "no example scenario performs {missing:?}");
}

/// A project in a fresh folder (marked by `.saffron/`), named after the test.
fn scratch_project(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("saffron-vocabulary-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".saffron/cache")).expect("mkdir");
    dir
}

#[test]
fn steps_and_status_escape_control_characters_in_the_terminal() {
    let dir = scratch_project("controls");
    let controls = "\u{1b}]0;owned\u{7}\u{0}\u{7f}\u{85}";
    std::fs::write(
        dir.join("a.feature"),
        format!("Feature: A\n  Scenario: S{controls}\n    Given I am{controls} here\n    Given I am{controls} there\n"),
    )
    .expect("write");
    for command in ["steps", "status"] {
        let output = saffron(&[command], &dir);
        assert_eq!(output.status.code(), Some(0), "{command}");
        let raw = [&output.stdout[..], &output.stderr[..]].concat();
        let text = String::from_utf8_lossy(&raw);
        assert!(text.contains("\\u{1b}]0;owned\\u{7}\\u{0}\\u{7f}\\u{85}"), "{command}: {text}");
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{command} printed a control: {text:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn steps_and_status_name_unreadable_recordings_and_exit_1() {
    let project = support::example_project("unreadable-recordings");
    let cache = project.join(".saffron/cache/orders");
    std::fs::write(cache.join("export-the-orders.json"), "{\n  \"version\": 1,\n  oops\n}\n").expect("write");
    std::fs::write(cache.join("search-orders-by-customer.json"), "{\"version\": 1}\n").expect("write");
    for args in [&["status"][..], &["status", "--format", "json"], &["steps"], &["steps", "--format", "json"]] {
        let output = saffron(args, &project);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(
                ".saffron/cache/orders/export-the-orders.json:3:3: error: invalid JSON: key must be a string"
            ),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(".saffron/cache/orders/search-orders-by-customer.json:1:1: error: "), "{stderr}");
        assert!(stderr.contains("  hint: an unreadable recording is red and never recorded over"), "{stderr}");
        if args.contains(&"json") {
            serde_json::from_slice::<Value>(&output.stdout).expect("the JSON answer is still whole");
        }
    }
    let _ = std::fs::remove_dir_all(&project);
}

#[test]
fn status_reads_saffron_toml_and_reports_invalid_toml() {
    let dir = scratch_project("config");
    std::fs::write(dir.join("a.feature"), "Feature: A\n  Scenario: S\n    Given g\n").expect("write");
    std::fs::write(dir.join("saffron.toml"), "[timeouts]\naction = 5\n").expect("write");
    let output = saffron(&["status"], &dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("saffron.toml:2:1: warning: unknown key `timeouts.action`"), "{stderr}");
    assert!(stderr.contains("  hint: did you mean `action_ms`?"), "{stderr}");

    std::fs::write(dir.join("saffron.toml"), "[timeouts]\naction_ms = \"fast\"\n").expect("write");
    let output = saffron(&["status", "--format", "json"], &dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("saffron.toml:2:13: error: "), "{stderr}");
    serde_json::from_slice::<Value>(&output.stdout).expect("the scenarios are still listed");
    let _ = std::fs::remove_dir_all(&dir);
}
