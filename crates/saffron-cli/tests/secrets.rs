//! A secret never reaches an output of a run, in any spelling: `saffron run` against the demo's
//! `/lab/echo` page, which echoes what was typed into it in every escaping an output may give it (raw, JSON, HTML, XML,
//! URL and form encoding, shell quoting, Rust's Debug) and puts it in its URL, then fails an
//! assertion that quotes all of it. Stdout (text and JSON) and the four reports must hold the
//! `{env:NAME}` token where the page showed the secret, and never the secret.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use saffron_demo::{DemoConfig, DemoServer};
use saffron_recording::{Action, RecordedStep, Recording, StepKind, StepSpec, Store, feature_slug, scenario_slugs};
use serde_json::json;

/// Every character some output escapes, around a core no escaping changes: wherever any
/// spelling of the secret is left, the core is there too.
const SECRET: &str = "pa\"ss\\Zq9hunter'<&>\t€ /x";
const CORE: &str = "Zq9hunter";
const TOKEN: &str = "{env:TRICKY}";

const FEATURE: &str = "Feature: Echo\n  Scenario: Show the secret\n    Given I open the echo page\n    \
                       When I type the secret and show it\n    Then nothing is echoed\n";

fn action(value: serde_json::Value) -> Action {
    serde_json::from_value(value).expect("a valid action")
}

/// A project with the echo scenario and its recording.
fn echo_project() -> PathBuf {
    let root = std::env::temp_dir().join(format!("saffron-secrets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("features")).expect("mkdir");
    std::fs::write(root.join("features/echo.feature"), FEATURE).expect("write the feature");
    std::fs::write(root.join("saffron.toml"), "[timeouts]\nassertion_ms = 300\n").expect("write the config");
    let recording = Recording::new(
        "features/echo.feature",
        "Show the secret",
        vec![
            RecordedStep::new(
                StepSpec::new(StepKind::Context, "I open the echo page"),
                vec![action(json!({ "type": "goto", "url": "/lab/echo" }))],
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Action, "I type the secret and show it"),
                vec![
                    action(json!({ "type": "fill", "target": { "label": "Secret" }, "value": TOKEN })),
                    action(json!({ "type": "click", "target": { "role": "button", "name": "Show" } })),
                ],
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Outcome, "nothing is echoed"),
                vec![action(json!({ "type": "expectText", "target": { "testId": "echo" }, "text": "nothing" }))],
            ),
        ],
    );
    let store = Store::open(&root).expect("the store");
    let slug = &scenario_slugs(&["Show the secret"])[0];
    store
        .write_recording(&store.recording_path(&feature_slug("features/echo.feature"), slug), &recording)
        .expect("write");
    root
}

fn run(root: &Path, base_url: &str, format: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", base_url, "--format", format])
        .current_dir(root)
        .env("TRICKY", SECRET)
        .output()
        .expect("saffron runs")
}

fn assert_masked(surface: &str, text: &str, at_least: usize) {
    assert!(!text.contains(CORE), "{surface} shows the secret:\n{text}");
    let tokens = text.matches(TOKEN).count();
    assert!(tokens >= at_least, "{surface} holds {tokens} tokens where the page showed the secret:\n{text}");
}

#[test]
fn a_secret_is_masked_in_every_spelling_on_stdout_and_in_every_report() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("the demo app");
    let base_url = server.url();
    let root = echo_project();

    let output = run(&root, &base_url, "text");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("✗ red") && stdout.contains("nothing is echoed"), "{stdout}{stderr}");
    // The eight spellings the page showed, each masked in the failure message, and its URL.
    for label in ["raw", "json", "html", "xml", "url", "form", "shell", "debug"] {
        assert!(stdout.contains(&format!("{label} ")), "the page's {label} line is quoted: {stdout}");
    }
    assert_masked("stdout (text)", &stdout, 9);
    assert_masked("stderr", &stderr, 0);

    let reports = root.join(".saffron/reports");
    for (name, at_least) in [("latest.json", 9), ("report.md", 8), ("junit.xml", 16), ("report.html", 9)] {
        let text = std::fs::read_to_string(reports.join(name)).expect("a report");
        assert_masked(name, &text, at_least);
    }
    let latest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("latest.json")).expect("json")).expect("valid JSON");
    let screenshot = latest["scenarios"][0]["screenshotFile"].as_str().expect("the failure's screenshot is named");
    assert!(root.join(screenshot).is_file(), "{screenshot}");

    let output = run(&root, &base_url, "json");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let results: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is valid JSON after masking");
    assert_eq!(results[0]["verdict"], "red");
    assert_masked("stdout (JSON)", &stdout, 9);
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(server.shutdown());
}
