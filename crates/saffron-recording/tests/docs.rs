//! The user docs stay true to the code: the committed JSON Schemas in `docs/schema/` are
//! generated from the types (run with `UPDATE_SCHEMA=1` to rewrite them after changing a
//! type), and the example recording in `docs/recording-format.md` validates.

use std::path::PathBuf;

use saffron_recording::{SchemaKind, parse_handler, parse_recording};

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

fn check(kind: SchemaKind) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema").join(kind.file_name());
    let generated = kind.json();
    assert!(generated.starts_with(b"{"), "{}", String::from_utf8_lossy(&generated));
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|value| value == "1") {
        saffron_recording::write_atomic(&path, &generated).expect("writes the schema");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with the types: run `UPDATE_SCHEMA=1 cargo test -p saffron-recording \
         --test docs` and commit the result",
        path.display()
    );
}

#[test]
fn recording_schema_is_up_to_date() {
    check(SchemaKind::Recording);
}

#[test]
fn proposal_schema_is_up_to_date() {
    check(SchemaKind::Proposal);
}

#[test]
fn handler_schema_is_up_to_date() {
    check(SchemaKind::Handler);
}

#[test]
fn the_documented_handlers_are_valid() {
    let text = std::fs::read_to_string(docs().join("handlers.md")).expect("the doc exists");
    let mut found = 0;
    for (_, after_marker) in text.match_indices("<!-- example-handler -->").map(|(at, _)| text.split_at(at)) {
        let (_, block) = after_marker.split_once("```json\n").expect("a json block follows the marker");
        let (json, _) = block.split_once("```").expect("the block is closed");
        if let Err(error) = parse_handler(json) {
            panic!("an example handler in docs/handlers.md is invalid: {error}\n{json}");
        }
        found += 1;
    }
    assert!(found >= 2, "docs/handlers.md marks its examples");
}

#[test]
fn schemas_name_every_action_type() {
    let value: serde_json::Value = serde_json::from_slice(&SchemaKind::Recording.json()).expect("JSON");
    let schema = value.to_string();
    for action in [
        "goto",
        "click",
        "dblclick",
        "upload",
        "fill",
        "typeText",
        "select",
        "press",
        "check",
        "uncheck",
        "hover",
        "drag",
        "switchTab",
        "dialog",
        "waitForResponse",
        "expectVisible",
        "expectHidden",
        "expectText",
        "expectValue",
        "expectUrl",
        "expectState",
        "expectResponse",
        "expectDownload",
        "expectNoConsoleErrors",
        "expectCount",
    ] {
        assert!(schema.contains(&format!("\"const\":\"{action}\"")), "{action}");
    }
}

#[test]
fn the_documented_example_recording_is_valid() {
    let text = std::fs::read_to_string(docs().join("recording-format.md")).expect("the doc exists");
    let (_, after_marker) = text.split_once("<!-- example-recording").expect("the doc marks its example");
    let (_, block) = after_marker.split_once("```json\n").expect("a json block follows the marker");
    let (json, _) = block.split_once("```").expect("the block is closed");
    let recording = match parse_recording(json) {
        Ok(recording) => recording,
        // The error names the digest the steps have.
        Err(error) => panic!("the example in docs/recording-format.md is invalid: {error}"),
    };
    assert_eq!(recording.steps.len(), 3);
    assert!(recording.steps.iter().flat_map(|step| &step.actions).any(|action| action.is_assertion()));
}
