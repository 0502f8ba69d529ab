//! Every validator rule, as a table of invalid snippets and the exact message each gets.

use serde_json::{Value, json};

use super::*;
use crate::action::{Action, ElementState, ResponseMatcher};
use crate::model::{RecordedStep, StepKind, StepSpec};
use crate::proposal::{FeatureEdit, ProposalDraft, ScenarioRef, Usage};
use crate::target::{Target, Tier};

fn target(role: &str, name: &str) -> Target {
    Target::role(role, name)
}

// Step 0: goto. Step 1: fill, click, waitForResponse. Step 2: one of every other type, in
// the order of `ACTION_TYPES`, so each rule below can address its action by index.
fn base_recording() -> Recording {
    let field = target("textbox", "Email");
    let response = ResponseMatcher {
        url_regex: "^/api/session$".into(),
        method: Some("POST".into()),
        status: Some("2xx".into()),
        body_regex: None,
    };
    let steps = vec![
        RecordedStep::new(
            StepSpec::new(StepKind::Context, "I am on the shop"),
            vec![Action::Goto { url: "/".into(), timeout_ms: None }],
        ),
        RecordedStep::new(
            StepSpec {
                kind: StepKind::Action,
                text: "I sign in as <user>".into(),
                table: Some(vec![
                    vec!["Email".into(), "<user>@example.com".into()],
                    vec!["Password".into(), "{env:PASSWORD}".into()],
                ]),
                doc_string: None,
            },
            vec![
                Action::Fill { target: field.clone(), value: "<table:Email>".into(), timeout_ms: None },
                Action::Click { target: target("button", "Sign in"), timeout_ms: Some(5000) },
                Action::WaitForResponse { response: response.clone(), timeout_ms: None },
                Action::Upload {
                    target: target("button", "Photo"),
                    files: vec!["fixtures/<photo>".into()],
                    timeout_ms: None,
                },
            ],
        ),
        RecordedStep::new(
            StepSpec::new(StepKind::Outcome, "I see my account"),
            vec![
                Action::Select { target: target("combobox", "Country"), values: vec!["NL".into()], timeout_ms: None },
                Action::Press { target: Some(field.clone()), key: "Enter".into(), timeout_ms: None },
                Action::Check { target: target("checkbox", "Remember me"), timeout_ms: None },
                Action::Uncheck { target: target("checkbox", "News"), timeout_ms: None },
                Action::Hover { target: target("link", "Help"), timeout_ms: None },
                Action::SwitchTab { index: Some(0), url_pattern: None, timeout_ms: None },
                Action::Dialog { accept: true, prompt_text: Some("yes".into()), timeout_ms: None },
                Action::ExpectVisible { target: target("heading", "Account"), timeout_ms: None },
                Action::ExpectHidden { target: target("dialog", "Sign in"), timeout_ms: None },
                Action::ExpectText {
                    target: target("heading", "Account"),
                    text: Some("Hello <user>".into()),
                    text_regex: None,
                    timeout_ms: None,
                },
                Action::ExpectValue { target: field.clone(), value: "<user>@example.com".into(), timeout_ms: None },
                Action::ExpectUrl { url: None, url_regex: Some("^/account/\\d+$".into()), timeout_ms: None },
                Action::ExpectState {
                    target: Target {
                        test_id: Some("menu".into()),
                        css: vec!["#menu".into()],
                        tier: Some(Tier::TestId),
                        ..Target::default()
                    },
                    state: ElementState::Class { token: "open".into() },
                    timeout_ms: None,
                },
                Action::ExpectResponse { response, timeout_ms: None },
                Action::ExpectNoConsoleErrors { timeout_ms: None },
                Action::ExpectCount { target: target("listitem", "Order"), count: 2, timeout_ms: None },
                Action::ExpectDownload {
                    file_name: Some("orders-<user>.csv".into()),
                    file_name_regex: None,
                    contains: Some("<user>@example.com".into()),
                    timeout_ms: None,
                },
                Action::Drag { target: target("listitem", "Order"), to: target("region", "Archive"), timeout_ms: None },
                Action::TypeText { target: target("combobox", "City"), text: "Ams".into(), timeout_ms: None },
            ],
        ),
    ];
    Recording::new("features/account.feature", "Sign in as <user>", steps)
}

fn base() -> Value {
    serde_json::to_value(base_recording()).expect("serializes")
}

// Set (or, with `None`, remove) the value at a JSON pointer, creating object keys as needed.
fn edit(mut value: Value, pointer: &str, new: Option<Value>) -> Value {
    let (parent, last) = pointer.rsplit_once('/').expect("pointer has a slash");
    let parent = if parent.is_empty() { &mut value } else { value.pointer_mut(parent).expect("parent exists") };
    match (parent, new) {
        (Value::Object(map), Some(new)) => {
            map.insert(last.to_string(), new);
        }
        (Value::Object(map), None) => {
            map.remove(last);
        }
        (Value::Array(items), Some(new)) => {
            items[last.parse::<usize>().expect("index")] = new;
        }
        (Value::Array(items), None) => {
            items.remove(last.parse::<usize>().expect("index"));
        }
        _ => panic!("cannot edit {pointer}"),
    }
    value
}

fn set(pointer: &str, new: Value) -> Value {
    edit(base(), pointer, Some(new))
}

fn without(pointer: &str) -> Value {
    edit(base(), pointer, None)
}

/// `value` with the steps digest its steps and actions have.
fn redigested(value: Value) -> Value {
    let recording: Recording = serde_json::from_value(value.clone()).expect("a recording");
    let digest = recording.digest_for(&recording.step_specs());
    edit(value, "/stepsDigest", Some(json!(digest)))
}

// Every case's problem is the expected one; all differences are listed at once.
fn assert_problems(cases: &[(Value, &str)], problem: impl Fn(&Value) -> String) {
    let mut failures = Vec::new();
    for (value, expected) in cases {
        let actual = problem(value);
        if actual != *expected {
            failures.push(format!("expected: {expected}\n  actual: {actual}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn problem(value: &Value) -> String {
    match validate_recording(value) {
        Ok(_) => "valid".to_string(),
        Err(error) => error.to_string(),
    }
}

#[test]
fn the_base_recording_is_valid_and_reads_back_equal() {
    assert_eq!(validate_recording(&base()), Ok(base_recording()));
}

#[test]
fn every_recording_rule_names_its_path() {
    // A digest mismatch names the digest the steps have, so a hand edit can be completed.
    let mismatch = |value: &Value| {
        let recording: Recording = serde_json::from_value(value.clone()).expect("a recording");
        format!(
            "stepsDigest: does not match the steps in this file, whose digest is {}: if you edited the steps on \
             purpose, write that value here",
            recording.digest_for(&recording.step_specs())
        )
    };
    let wrong_digest = mismatch(&set("/stepsDigest", json!("0".repeat(64))));
    let edited_steps = mismatch(&set("/steps/0/text", json!("I am somewhere else")));
    let missing_digest = format!(
        "stepsDigest: a recording needs its steps digest: the steps in this file have {} (`saffron skeleton` writes \
         a recording with it)",
        base_recording().digest_for(&base_recording().step_specs())
    );
    const S1: &str = "/steps/1/actions";
    const S2: &str = "/steps/2/actions";
    let cases: Vec<(Value, &str)> = vec![
        (json!([]), "expected a recording (a JSON object), found an array"),
        (json!(null), "expected a recording (a JSON object), found null"),
        (without("/version"), "version: a recording needs a version"),
        (
            set("/version", json!(2)),
            "version: this recording is version 2, newer than this saffron understands: update saffron",
        ),
        (
            edit(set("/version", json!(7)), "/steps", Some(json!("garbage"))),
            "version: this recording is version 7, newer than this saffron understands: update saffron",
        ),
        (set("/version", json!("1")), "version: expected version 1, found \"1\""),
        (set("/version", json!(0)), "version: expected version 1, found 0"),
        (set("/version", json!(1.5)), "version: expected version 1, found 1.5"),
        (without("/feature"), "feature: a recording needs its feature file's path"),
        (set("/feature", json!(3)), "feature: expected a string, found 3"),
        (
            set("/feature", json!("/home/me/x.feature")),
            "feature: must be relative to the project root, with / separators",
        ),
        (
            set("/feature", json!("features\\x.feature")),
            "feature: must be relative to the project root, with / separators",
        ),
        (set("/feature", json!("C:x.feature")), "feature: must be relative to the project root, with / separators"),
        (set("/scenario", json!("")), "scenario: must not be empty"),
        (without("/steps"), "steps: a recording needs steps"),
        (set("/steps", json!({})), "steps: expected an array, found an object"),
        (set("/steps/0", json!(1)), "steps[0]: expected a step (a JSON object), found 1"),
        (
            set("/steps/0/kind", json!("given")),
            "steps[0].kind: unknown step kind \"given\": expected context, action or outcome",
        ),
        (without("/steps/0/kind"), "steps[0].kind: a step needs a kind"),
        (without("/steps/0/text"), "steps[0].text: a step needs its text"),
        (set("/steps/0/text", json!("")), "steps[0].text: must not be empty"),
        (
            set("/steps/1/table", json!([["a", "b"], ["c"]])),
            "steps[1].table[1]: this row has 1 cell where the first row has 2 cells",
        ),
        (set("/steps/1/table/0/1", json!(5)), "steps[1].table[0][1]: expected a string, found 5"),
        (
            set("/steps/1/table/0", json!("a|b")),
            "steps[1].table[0]: expected a row (an array of cells), found a string",
        ),
        (set("/steps/0/docString", json!(1)), "steps[0].docString: expected a string, found 1"),
        (without("/steps/0/actions"), "steps[0].actions: a step needs its list of actions"),
        (
            set("/steps/0/actions/0", json!("goto")),
            "steps[0].actions[0]: expected an action (a JSON object), found a string",
        ),
        (without("/steps/0/actions/0/type"), "steps[0].actions[0].type: an action needs a type"),
        (set("/steps/0/actions/0/type", json!(3)), "steps[0].actions[0].type: expected a string, found 3"),
        (
            set("/steps/0/actions/0/type", json!("tap")),
            "steps[0].actions[0]: unknown action type \"tap\": update saffron",
        ),
        (
            set("/steps/0/actions/0/timeoutMs", json!(0)),
            "steps[0].actions[0].timeoutMs: must be a positive number of milliseconds",
        ),
        (
            set("/steps/0/actions/0/timeoutMs", json!(-5)),
            "steps[0].actions[0].timeoutMs: expected a whole number, 0 or more, found -5",
        ),
        (
            set("/steps/0/actions/0/timeoutMs", json!(1.5)),
            "steps[0].actions[0].timeoutMs: expected a whole number, 0 or more, found 1.5",
        ),
        (without("/steps/0/actions/0/url"), "steps[0].actions[0].url: a goto needs a url"),
        (set("/steps/0/actions/0/url", json!("")), "steps[0].actions[0].url: must not be empty"),
        (
            set("/steps/0/actions/0/url", json!("file:///etc/passwd")),
            "steps[0].actions[0].url: a replay opens only http and https pages, not file: URLs",
        ),
        (
            set("/steps/0/actions/0/url", json!("JavaScript:alert(1)")),
            "steps[0].actions[0].url: a replay opens only http and https pages, not javascript: URLs",
        ),
        (
            set("/steps/0/actions/0/url", json!("/x/{unique}")),
            "steps[0].actions[0].url: {unique}: needs a name: {unique:name}",
        ),
        // Targets.
        (without(&format!("{S1}/1/target")), "steps[1].actions[1].target: a click needs a target"),
        (
            set(&format!("{S1}/1/target"), json!({})),
            "steps[1].actions[1].target: a target needs at least one of role, label, placeholder, text, testId or css",
        ),
        (
            set(&format!("{S1}/1/target"), json!({"css": []})),
            "steps[1].actions[1].target: a target needs at least one of role, label, placeholder, text, testId or css",
        ),
        (
            set(&format!("{S1}/1/target"), json!("button")),
            "steps[1].actions[1].target: expected a target (a JSON object), found a string",
        ),
        (
            set(&format!("{S1}/1/target"), json!({"name": "Save"})),
            "steps[1].actions[1].target.name: name qualifies a role: add the role",
        ),
        (
            set(&format!("{S1}/1/target"), json!({"label": "x", "nameRegex": "S"})),
            "steps[1].actions[1].target.nameRegex: nameRegex qualifies a role: add the role",
        ),
        (
            set(&format!("{S1}/1/target/nameRegex"), json!("^Sign")),
            "steps[1].actions[1].target.nameRegex: name and nameRegex are exclusive: keep one",
        ),
        (
            set(&format!("{S1}/1/target"), json!({"role": "button", "nameRegex": "(Save"})),
            "steps[1].actions[1].target.nameRegex: invalid regex: unclosed group",
        ),
        (set(&format!("{S1}/1/target/role"), json!("")), "steps[1].actions[1].target.role: must not be empty"),
        (
            set(&format!("{S1}/1/target/role"), json!(true)),
            "steps[1].actions[1].target.role: expected a string, found true",
        ),
        (
            set(&format!("{S1}/1/target/css"), json!(["#ok", ""])),
            "steps[1].actions[1].target.css[1]: must not be empty",
        ),
        (
            set(&format!("{S1}/1/target/css"), json!("#save")),
            "steps[1].actions[1].target.css: expected an array, found a string",
        ),
        (
            set(&format!("{S1}/1/target/css"), json!([1])),
            "steps[1].actions[1].target.css[0]: expected a string, found 1",
        ),
        (
            set(&format!("{S1}/1/target/tier"), json!("xpath")),
            "steps[1].actions[1].target.tier: unknown tier \"xpath\": expected role, label, placeholder, testId, text or css",
        ),
        (
            set(&format!("{S1}/1/target/tier"), json!("testId")),
            "steps[1].actions[1].target.tier: the target has no testId, so it cannot have been found by it",
        ),
        (
            set(&format!("{S1}/1/target/tier"), json!("css")),
            "steps[1].actions[1].target.tier: the target has no css, so it cannot have been found by it",
        ),
        (
            set(&format!("{S1}/1/target/label"), json!("{evn:X}")),
            "steps[1].actions[1].target.label: unknown token {evn:X}: tokens are <param>, <table:key>, {env:NAME}, {unique:name}, {date+N}, {date-N:format} or {captured:name}",
        ),
        // Scopes.
        (
            set(&format!("{S1}/1/target/within"), json!("row")),
            "steps[1].actions[1].target.within: expected a scope (a JSON object), found a string",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"hasText": "Order 1002"})),
            "steps[1].actions[1].target.within: a scope needs at least one of role, label, placeholder, text, testId or css",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"role": "row", "hasText": "1002", "hasTextRegex": "^1002"})),
            "steps[1].actions[1].target.within.hasTextRegex: hasText and hasTextRegex are exclusive: keep one",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"role": "row", "hasTextRegex": "Order (1002"})),
            "steps[1].actions[1].target.within.hasTextRegex: invalid regex: unclosed group",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"role": "row", "hasText": ""})),
            "steps[1].actions[1].target.within.hasText: must not be empty",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"role": "row", "hasText": 1002})),
            "steps[1].actions[1].target.within.hasText: expected a string, found 1002",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"role": "row", "hasText": "{evn:ORDER}"})),
            "steps[1].actions[1].target.within.hasText: unknown token {evn:ORDER}: tokens are <param>, <table:key>, {env:NAME}, {unique:name}, {date+N}, {date-N:format} or {captured:name}",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"name": "Orders", "hasText": "1002"})),
            "steps[1].actions[1].target.within.name: name qualifies a role: add the role",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"css": ["tr"], "tier": "role", "hasText": "1002"})),
            "steps[1].actions[1].target.within.tier: the scope has no role, so it cannot have been found by it",
        ),
        (
            set(
                &format!("{S1}/1/target/within"),
                json!({"role": "row", "within": {"role": "table", "within": {"testId": "x", "within": {"role": "dialog"}}}}),
            ),
            "steps[1].actions[1].target.within.within.within.within: scopes nest at most 3 deep: a row of a table of a dialog",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"role": "row", "within": {"role": "table", "hasText": ""}})),
            "steps[1].actions[1].target.within.within.hasText: must not be empty",
        ),
        // Frames.
        (
            set(&format!("{S1}/1/target/frame"), json!("iframe")),
            "steps[1].actions[1].target.frame: expected a target (a JSON object), found a string",
        ),
        (
            set(&format!("{S1}/1/target/frame"), json!({})),
            "steps[1].actions[1].target.frame: a frame needs at least one of role, label, placeholder, text, testId or css",
        ),
        (
            set(&format!("{S1}/1/target/frame"), json!({"css": ["iframe"], "tier": "testId"})),
            "steps[1].actions[1].target.frame.tier: the frame has no testId, so it cannot have been found by it",
        ),
        (
            set(
                &format!("{S1}/1/target/frame"),
                json!({"css": ["iframe"], "frame": {"css": ["#outer"], "frame": {"css": ["#a"], "frame": {"css": ["#b"]}}}}),
            ),
            "steps[1].actions[1].target.frame.frame.frame.frame: frames nest at most 3 deep: a provider's form inside an embedded widget",
        ),
        (
            set(&format!("{S1}/1/target/within"), json!({"role": "row", "frame": {"css": ["iframe"]}})),
            "steps[1].actions[1].target.within.frame: a scope is looked for in its target's frame: put frame on the target",
        ),
        (
            set(&format!("{S1}/1/target/frame"), json!({"css": ["iframe"], "label": "{evn:X}"})),
            "steps[1].actions[1].target.frame.label: unknown token {evn:X}: tokens are <param>, <table:key>, {env:NAME}, {unique:name}, {date+N}, {date-N:format} or {captured:name}",
        ),
        (
            set(&format!("{S1}/1/target/hasTextRegex"), json!("Order \\d+")),
            "steps[1].actions[1].target.hasTextRegex: hasTextRegex narrows a scope: put it in within, next to the container's locators (a target itself filters by the text it holds, hasText)",
        ),
        // fill, select, press.
        (without(&format!("{S1}/0/value")), "steps[1].actions[0].value: a fill needs a value"),
        (set(&format!("{S1}/0/value"), json!(5)), "steps[1].actions[0].value: expected a string, found 5"),
        (
            set(&format!("{S1}/0/value"), json!("{date+1:%Q}")),
            "steps[1].actions[0].value: {date+1:%Q}: unknown date directive %Q: use %Y %y %m %-m %d %-d %b %B %a %A %j %%",
        ),
        (without(&format!("{S2}/0/values")), "steps[2].actions[0].values: a select needs values"),
        (set(&format!("{S2}/0/values"), json!([1])), "steps[2].actions[0].values[0]: expected a string, found 1"),
        (without(&format!("{S1}/3/files")), "steps[1].actions[3].files: an upload needs files"),
        (set(&format!("{S1}/3/files"), json!([""])), "steps[1].actions[3].files[0]: must not be empty"),
        (
            set(&format!("{S1}/3/files"), json!(["fixtures/a.png", "/etc/passwd"])),
            "steps[1].actions[3].files[1]: must be relative to the project folder (the folder of saffron.toml), not \
             absolute",
        ),
        (
            set(&format!("{S1}/3/files"), json!(["fixtures/../../.env"])),
            "steps[1].actions[3].files[0]: may not leave the project folder (no `..`)",
        ),
        (without(&format!("{S2}/1/key")), "steps[2].actions[1].key: a press needs a key"),
        (set(&format!("{S2}/1/key"), json!("")), "steps[2].actions[1].key: must not be empty"),
        (
            set(&format!("{S2}/1/target"), json!({})),
            "steps[2].actions[1].target: a target needs at least one of role, label, placeholder, text, testId or css",
        ),
        (without(&format!("{S2}/2/target")), "steps[2].actions[2].target: a check needs a target"),
        (without(&format!("{S2}/3/target")), "steps[2].actions[3].target: an uncheck needs a target"),
        (without(&format!("{S2}/4/target")), "steps[2].actions[4].target: a hover needs a target"),
        // switchTab and dialog.
        (without(&format!("{S2}/5/index")), "steps[2].actions[5].index: a switchTab needs index or urlPattern"),
        (
            set(&format!("{S2}/5/urlPattern"), json!("/checkout")),
            "steps[2].actions[5].urlPattern: index and urlPattern are exclusive: keep one",
        ),
        (
            set(&format!("{S2}/5/index"), json!(-1)),
            "steps[2].actions[5].index: expected a whole number, 0 or more, found -1",
        ),
        (
            edit(without(&format!("{S2}/5/index")), &format!("{S2}/5/urlPattern"), Some(json!("["))),
            "steps[2].actions[5].urlPattern: invalid regex: unclosed character class",
        ),
        (without(&format!("{S2}/6/accept")), "steps[2].actions[6].accept: a dialog needs accept (true or false)"),
        (
            set(&format!("{S2}/6/accept"), json!("yes")),
            "steps[2].actions[6].accept: expected true or false, found a string",
        ),
        (
            set(&format!("{S2}/6/promptText"), json!(["yes"])),
            "steps[2].actions[6].promptText: expected a string, found an array",
        ),
        // Downloads.
        (
            set(&format!("{S2}/16/fileNameRegex"), json!("^orders")),
            "steps[2].actions[16].fileNameRegex: fileName and fileNameRegex are exclusive: keep one",
        ),
        (
            edit(without(&format!("{S2}/16/fileName")), &format!("{S2}/16/fileNameRegex"), Some(json!("("))),
            "steps[2].actions[16].fileNameRegex: invalid regex: unclosed group",
        ),
        (set(&format!("{S2}/16/contains"), json!("")), "steps[2].actions[16].contains: must not be empty"),
        (
            set(&format!("{S2}/16/fileName"), json!("exports/orders.csv")),
            "steps[2].actions[16].fileName: a file's name as the browser suggests it, without folders",
        ),
        (without(&format!("{S2}/17/to")), "steps[2].actions[17].to: a drag needs to: the element it is dropped on"),
        (
            set(&format!("{S2}/17/to"), json!({ "name": "Archive" })),
            "steps[2].actions[17].to.name: name qualifies a role: add the role",
        ),
        (
            set(&format!("{S2}/18/text"), json!("")),
            "steps[2].actions[18].text: must not be empty: clear a field with a fill of \"\"",
        ),
        (without(&format!("{S2}/18/text")), "steps[2].actions[18].text: a typeText needs a text"),
        // Response matchers.
        (without(&format!("{S1}/2/response")), "steps[1].actions[2].response: a waitForResponse needs a response"),
        (
            without(&format!("{S1}/2/response/urlRegex")),
            "steps[1].actions[2].response.urlRegex: a response matcher needs a urlRegex",
        ),
        (
            set(&format!("{S1}/2/response/urlRegex"), json!("")),
            "steps[1].actions[2].response.urlRegex: must not be empty",
        ),
        (
            set(&format!("{S1}/2/response/urlRegex"), json!("https://shop.test/api")),
            "steps[1].actions[2].response.urlRegex: match the path only, without scheme and host: they differ between environments",
        ),
        (
            set(&format!("{S1}/2/response/method"), json!("post")),
            "steps[1].actions[2].response.method: expected an HTTP method in capitals such as GET, found \"post\"",
        ),
        (
            set(&format!("{S1}/2/response/status"), json!("600")),
            "steps[1].actions[2].response.status: expected an exact status such as \"200\" or a class such as \"2xx\", found \"600\"",
        ),
        (
            set(&format!("{S1}/2/response/status"), json!("2XX")),
            "steps[1].actions[2].response.status: expected an exact status such as \"200\" or a class such as \"2xx\", found \"2XX\"",
        ),
        (
            set(&format!("{S1}/2/response/status"), json!(200)),
            "steps[1].actions[2].response.status: expected a string, found 200",
        ),
        (
            set(&format!("{S1}/2/response/bodyRegex"), json!("[READY")),
            "steps[1].actions[2].response.bodyRegex: invalid regex: unclosed character class",
        ),
        (
            set(&format!("{S2}/13/response"), json!("/api")),
            "steps[2].actions[13].response: expected a response matcher (a JSON object), found a string",
        ),
        // Assertions.
        (without(&format!("{S2}/7/target")), "steps[2].actions[7].target: an expectVisible needs a target"),
        (without(&format!("{S2}/8/target")), "steps[2].actions[8].target: an expectHidden needs a target"),
        (without(&format!("{S2}/9/text")), "steps[2].actions[9].text: an expectText needs text or textRegex"),
        (
            set(&format!("{S2}/9/textRegex"), json!("^Hello")),
            "steps[2].actions[9].textRegex: text and textRegex are exclusive: keep one",
        ),
        (
            edit(without(&format!("{S2}/9/text")), &format!("{S2}/9/textRegex"), Some(json!("a{2,1}"))),
            "steps[2].actions[9].textRegex: invalid regex: invalid repetition count range, the start must be <= the end",
        ),
        (without(&format!("{S2}/10/value")), "steps[2].actions[10].value: an expectValue needs a value"),
        (without(&format!("{S2}/11/urlRegex")), "steps[2].actions[11].url: an expectUrl needs url or urlRegex"),
        (
            set(&format!("{S2}/11/url"), json!("/account")),
            "steps[2].actions[11].urlRegex: url and urlRegex are exclusive: keep one",
        ),
        (
            edit(without(&format!("{S2}/11/urlRegex")), &format!("{S2}/11/url"), Some(json!(""))),
            "steps[2].actions[11].url: must not be empty",
        ),
        (without(&format!("{S2}/12/state")), "steps[2].actions[12].state: an expectState needs a state"),
        (
            set(&format!("{S2}/12/state"), json!({"kind": "visible"})),
            "steps[2].actions[12].state.kind: unknown state kind \"visible\": expected class, attribute, css, checked, unchecked, disabled, enabled or focused",
        ),
        (
            set(&format!("{S2}/12/state"), json!({"token": "open"})),
            "steps[2].actions[12].state.kind: a state needs a kind",
        ),
        (
            set(&format!("{S2}/12/state"), json!({"kind": "class"})),
            "steps[2].actions[12].state.token: a class state needs a token",
        ),
        (
            set(&format!("{S2}/12/state"), json!({"kind": "class", "token": "a b"})),
            "steps[2].actions[12].state.token: one class token, without spaces: use one expectState per class",
        ),
        (
            set(&format!("{S2}/12/state"), json!({"kind": "attribute"})),
            "steps[2].actions[12].state.name: an attribute state needs a name",
        ),
        (
            set(&format!("{S2}/12/state"), json!({"kind": "css", "property": "opacity"})),
            "steps[2].actions[12].state.value: a css state needs a value",
        ),
        (
            set(&format!("{S2}/12/state"), json!({"kind": "css", "value": "0"})),
            "steps[2].actions[12].state.property: a css state needs a property",
        ),
        (without(&format!("{S2}/15/count")), "steps[2].actions[15].count: an expectCount needs a count"),
        (
            set(&format!("{S2}/15/count"), json!(1.5)),
            "steps[2].actions[15].count: expected a whole number, 0 or more, found 1.5",
        ),
        (
            set(&format!("{S2}/15/count"), json!(5_000_000_000_u64)),
            "steps[2].actions[15].count: must be at most 4294967295",
        ),
        // The digest and the optional metadata.
        (without("/stepsDigest"), &missing_digest),
        (set("/stepsDigest", json!("abc")), "stepsDigest: expected a SHA-256 digest, 64 lowercase hex digits"),
        (set("/stepsDigest", json!("0".repeat(64))), &wrong_digest),
        (set("/steps/0/text", json!("I am somewhere else")), &edited_steps),
        (set("/recordedAt", json!(5)), "recordedAt: expected a string, found 5"),
        (set("/baseUrl", json!({})), "baseUrl: expected a string, found an object"),
    ];
    assert_problems(&cases, problem);
}

#[test]
fn valid_variations_stay_valid() {
    let unknown_everywhere = {
        let value = set("/futureField", json!({"anything": [1, 2]}));
        let value = edit(value, "/steps/0/futureStepField", Some(json!(true)));
        let value = edit(value, "/steps/0/actions/0/futureOperand", Some(json!("x")));
        edit(value, "/steps/1/actions/1/target/altText", Some(json!("future tier")))
    };
    let cases = [
        unknown_everywhere,
        // The fill no longer reads the table's Email value, so the value is back in the digest.
        redigested(set("/steps/1/actions/0/value", json!(""))),
        set("/steps/2/actions/9/text", json!("")),
        set("/steps/2/actions/1/target", Value::Null),
        set("/recordedAt", Value::Null),
        set("/steps/2/actions/0/values", json!([])),
        set("/steps/0/actions/0/timeoutMs", json!(1)),
        set("/steps/2/actions/12/state", json!({"kind": "attribute", "name": "aria-busy"})),
        set("/steps/2/actions/12/state", json!({"kind": "focused"})),
        set("/steps/2/actions/15/count", json!(0)),
        set("/steps/2/actions/1/key", json!("Control+A")),
        set("/steps/2/actions/9/target/name", json!("Hello <user> {captured:id}")),
        set("/steps/1/actions/2/response/urlRegex", json!("^/api/orders/<order>$")),
        set("/steps/1/actions/1/target", json!({"css": ["#sign-in"], "tier": "css"})),
        set(
            "/steps/1/actions/1/target",
            json!({"role": "checkbox", "within": {"role": "row", "css": ["tr"], "hasText": "Order <order>", "tier": "role"}}),
        ),
        set("/steps/1/actions/1/target", json!({"css": ["input"], "within": {"testId": "cart"}})),
        // A target filtered by the text it holds (the list item that says "Buy milk").
        set(
            "/steps/1/actions/1/target",
            json!({"role": "listitem", "hasText": "Buy milk", "css": ["li"], "tier": "role"}),
        ),
        set(
            "/steps/1/actions/1/target",
            json!({"role": "button", "within": {"role": "row", "hasTextRegex": "(?i)^order 10\\d2", "within": {"role": "table"}}}),
        ),
    ];
    for (i, value) in cases.iter().enumerate() {
        assert_eq!(problem(value), "valid", "case {i}");
    }
    let empty_step = {
        let mut recording = base_recording();
        recording.steps[0].actions.clear();
        serde_json::to_value(&recording).expect("serializes")
    };
    assert_eq!(problem(&empty_step), "valid");
}

#[test]
fn the_first_problem_is_named() {
    let value = set("/steps/0/actions/0/type", json!("tap"));
    let value = edit(value, "/steps/2/actions/0/values", None);
    assert_eq!(problem(&value), "steps[0].actions[0]: unknown action type \"tap\": update saffron");
    let value = edit(base(), "/steps/1/actions/1/target", None);
    let value = edit(value, "/stepsDigest", Some(json!("bad")));
    assert_eq!(problem(&value), "steps[1].actions[1].target: a click needs a target");
}

#[test]
fn parse_reports_json_syntax_with_line_and_column() {
    let error = parse_recording("{\n  \"version\": 1,\n  oops\n}").expect_err("not JSON");
    match &error {
        ValidationError::Syntax { line, column, .. } => assert_eq!((*line, *column), (3, 3)),
        other => panic!("expected a syntax error, got {other:?}"),
    }
    assert_eq!(error.to_string(), "invalid JSON at 3:3: key must be a string");
    let error = parse_recording("").expect_err("empty");
    assert!(error.to_string().starts_with("invalid JSON at 1:0: EOF"), "{error}");
    let text = String::from_utf8(crate::store::to_json_bytes(&base_recording()).expect("json")).expect("utf-8");
    assert_eq!(parse_recording(&text), Ok(base_recording()));
    assert_eq!(
        parse_recording("[1]").map_err(|error| error.to_string()),
        Err("expected a recording (a JSON object), found an array".to_string())
    );
}

// ---- proposals -------------------------------------------------------------------------

fn base_proposal() -> Proposal {
    let committed = base_recording();
    let mut healed = committed.clone();
    if let Some(target) = healed.steps[1].actions[1].target_mut() {
        target.name = Some("Log in".into());
    }
    Proposal::file(
        ProposalDraft {
            scenario: ScenarioRef {
                feature: "features/account.feature".into(),
                name: "Sign in as <user>".into(),
                cache_path: ".saffron/cache/account/sign-in-as-user.json".into(),
            },
            recording: healed,
            feature_edits: vec![FeatureEdit {
                file: "features/account.feature".into(),
                line: 4,
                before: "    When I sign in as <user>".into(),
                after: "    When I log in as <user>".into(),
                from_set: None,
            }],
            narrative: "The button was renamed to Log in.".into(),
            adaptations: vec!["locator or label: Sign in → Log in".into()],
            usage: Some(Usage { input_tokens: Some(10), output_tokens: None, cost_usd: Some(0.5) }),
            filed_at: Some("2026-11-29T10:00:00Z".into()),
            unverified: None,
        },
        Some(&committed),
    )
}

fn proposal_problem(value: &Value) -> String {
    match validate_proposal(value) {
        Ok(_) => "valid".to_string(),
        Err(error) => error.to_string(),
    }
}

#[test]
fn every_proposal_rule_names_its_path() {
    let valid = serde_json::to_value(base_proposal()).expect("serializes");
    assert_eq!(validate_proposal(&valid), Ok(base_proposal()));
    let set = |pointer: &str, new: Value| edit(valid.clone(), pointer, Some(new));
    let without = |pointer: &str| edit(valid.clone(), pointer, None);
    let cases: Vec<(Value, &str)> = vec![
        (json!("x"), "expected a proposal (a JSON object), found a string"),
        (
            set("/version", json!(3)),
            "version: this proposal is version 3, newer than this saffron understands: update saffron",
        ),
        (without("/scenario"), "scenario: a proposal needs its scenario"),
        (set("/scenario", json!([])), "scenario: expected a scenario reference (a JSON object), found an array"),
        (without("/scenario/cachePath"), "scenario.cachePath: a scenario reference needs the recording's path"),
        (set("/scenario/name", json!("")), "scenario.name: must not be empty"),
        (without("/recording"), "recording: a proposal needs its recording"),
        (
            set("/recording/version", json!(2)),
            "recording.version: this recording is version 2, newer than this saffron understands: update saffron",
        ),
        (
            set("/recording/steps/0/actions/0/type", json!("tap")),
            "recording.steps[0].actions[0]: unknown action type \"tap\": update saffron",
        ),
        (set("/diff", json!({})), "diff: expected an array, found an object"),
        (
            set("/diff/0/changes/0/change", json!("moved")),
            "diff[0].changes[0].change: unknown change \"moved\": expected added, removed or changed",
        ),
        (without("/diff/0/changes/0/after/target"), "diff[0].changes[0].after.target: a click needs a target"),
        (
            without("/diff/0/changes/0/beforeIndex"),
            "diff[0].changes[0].beforeIndex: a changed change needs beforeIndex",
        ),
        (
            set("/diff/0/changes/0", json!({"change": "added", "index": 0})),
            "diff[0].changes[0].action: an added change needs action",
        ),
        (set("/diff/0/before", json!(-1)), "diff[0].before: expected a whole number, 0 or more, found -1"),
        (set("/featureEdits/0/line", json!(0)), "featureEdits[0].line: lines count from 1"),
        (without("/featureEdits/0/after"), "featureEdits[0].after: a feature edit needs the line as proposed"),
        (
            set("/featureEdits/0/file", json!("/etc/passwd")),
            "featureEdits[0].file: must be relative to the project root, with / separators",
        ),
        (set("/narrative", json!(1)), "narrative: expected a string, found 1"),
        (set("/adaptations", json!([1])), "adaptations[0]: expected a string, found 1"),
        (set("/usage/costUsd", json!(-1)), "usage.costUsd: must be 0 or more"),
        (
            set("/usage/inputTokens", json!("many")),
            "usage.inputTokens: expected a whole number, 0 or more, found a string",
        ),
        (without("/binding"), "binding: a proposal needs its binding: file it again with this saffron"),
        (without("/binding/stepsDigest"), "binding.stepsDigest: a binding needs stepsDigest"),
        (
            set("/binding/contentDigest", json!("x")),
            "binding.contentDigest: expected a SHA-256 digest, 64 lowercase hex digits",
        ),
    ];
    assert_problems(&cases, proposal_problem);
    for optional in ["/diff", "/featureEdits", "/narrative", "/adaptations", "/usage"] {
        assert_eq!(proposal_problem(&without(optional)), "valid", "{optional}");
    }
    assert_eq!(proposal_problem(&without("/binding/contractDigest")), "valid");
}

#[test]
fn problems_inside_actions_states_changes_and_scopes_are_placed_at_their_path() {
    // serde places nothing inside an internally tagged enum or a flattened struct by itself.
    const S1: &str = "/steps/1/actions";
    const S2: &str = "/steps/2/actions";
    let cases: Vec<(Value, &str)> = vec![
        (
            set(&format!("{S1}/1/target/within"), json!({"role": 5, "hasText": "x"})),
            "steps[1].actions[1].target.within.role: expected a string, found 5",
        ),
        (
            set(&format!("{S2}/12/state"), json!({"kind": "attribute", "name": false})),
            "steps[2].actions[12].state.name: expected a string, found false",
        ),
        (
            set(&format!("{S2}/12/state"), json!({"kind": "css", "property": "opacity", "value": 0})),
            "steps[2].actions[12].state.value: expected a string, found 0",
        ),
        // Two alike problems: the first is named.
        (
            set(&format!("{S2}/0/values"), json!(["NL", 1, 2])),
            "steps[2].actions[0].values[1]: expected a string, found 1",
        ),
        (
            set(&format!("{S1}/1/target"), json!({"label": 1, "role": 2})),
            "steps[1].actions[1].target.label: expected a string, found 1",
        ),
        (
            set(&format!("{S2}/12/target/css/0"), json!([])),
            "steps[2].actions[12].target.css[0]: expected a string, found an array",
        ),
        // null stands for an absent optional field only, not for an empty list.
        (
            set(&format!("{S1}/1/target/css"), Value::Null),
            "steps[1].actions[1].target.css: expected an array, found null",
        ),
        (
            set(&format!("{S2}/12"), json!(["expectVisible"])),
            "steps[2].actions[12]: expected an action (a JSON object), found an array",
        ),
    ];
    assert_problems(&cases, problem);
    let proposal = serde_json::to_value(base_proposal()).expect("serializes");
    let broken = edit(proposal, "/diff/0/changes/0/after/target/role", Some(json!(true)));
    assert_eq!(proposal_problem(&broken), "diff[0].changes[0].after.target.role: expected a string, found true");
}

/// A Then step that asserts nothing would pass whatever the page shows: no reader takes it. A
/// skeleton, written to be filled in, may have such steps; only its writer validates it so.
#[test]
fn a_then_step_must_check_something_except_in_a_skeleton() {
    // The base's Then step without its assertions: the actions before them remain.
    let mut recording = base_recording();
    recording.steps[2].actions.retain(|action| !action.is_assertion());
    assert!(!recording.steps[2].actions.is_empty());
    let unchecked = serde_json::to_value(&recording).expect("json");
    assert_eq!(
        problem(&unchecked),
        "steps[2].actions: the Then step `I see my account` checks nothing: it needs at least one expect* action \
         (expectText, expectVisible, ...), or it would pass whatever the page shows"
    );
    assert_eq!(validate_skeleton(&unchecked), Ok(recording.clone()));
    // Empty, as a skeleton writes it.
    recording.steps[2].actions.clear();
    let empty = serde_json::to_value(&recording).expect("json");
    assert!(problem(&empty).starts_with("steps[2].actions: the Then step `I see my account` checks nothing"));
    assert_eq!(validate_skeleton(&empty), Ok(recording.clone()));
    // One assertion is enough; Given and When steps may hold none.
    recording.steps[2].actions.push(Action::ExpectNoConsoleErrors { timeout_ms: None });
    recording.steps[0].actions.clear();
    recording.steps[1].actions.clear();
    // (The digest counts the `<table:key>` the When step's actions read.)
    assert_eq!(problem(&redigested(serde_json::to_value(&recording).expect("json"))), "valid");
    // A proposal's recording is a recording.
    let mut proposal = serde_json::to_value(base_proposal()).expect("json");
    proposal["recording"] = unchecked.clone();
    assert!(proposal_problem(&proposal).starts_with("recording.steps[2].actions: the Then step"), "{proposal}");
    // The skeleton check is the recording check in every other way.
    let mut broken = recording.clone();
    broken.steps_digest = "0".repeat(64);
    let broken = serde_json::to_value(&broken).expect("json");
    let (as_skeleton, as_recording) = (validate_skeleton(&broken), validate_recording(&broken));
    assert!(as_skeleton.is_err());
    assert_eq!(as_skeleton, as_recording);
}

#[test]
fn a_request_and_its_checks_are_validated_by_path() {
    let request = json!({
        "type": "request", "service": "shop", "method": "POST", "path": "/orders",
        "body": { "seats": { "$value": "3", "$type": "number" } },
        "extract": [{ "name": "order", "pointer": "/id" }],
    });
    let with = |action: Value| redigested(set("/steps/0/actions/0", action));
    let changed = |pointer: &str, value: Value| with(edit(request.clone(), pointer, Some(value)));
    assert_eq!(problem(&with(request.clone())), "valid");
    assert_eq!(problem(&with(json!({ "type": "expectStatus", "status": "4xx" }))), "valid");
    assert_eq!(problem(&with(json!({ "type": "expectField", "pointer": "/total", "value": 13 }))), "valid");
    assert_eq!(problem(&with(json!({ "type": "expectSchema" }))), "valid");
    const A: &str = "steps[0].actions[0]";
    let cases: Vec<(Value, String)> = vec![
        (
            changed("/method", json!("FETCH")),
            format!("{A}.method: one of GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE, in capitals"),
        ),
        (
            changed("/path", json!("https://shop.example/orders")),
            format!(
                "{A}.path: a path relative to the service's base URL, starting with / (the host is the configuration's)"
            ),
        ),
        (
            changed("/service", json!("")),
            format!("{A}.service: the name of a service of [api.services] (letters, digits, _ - .)"),
        ),
        (
            changed("/extract", json!([{ "name": "order id", "pointer": "/id" }])),
            format!("{A}.extract[0].name: the name {{captured:name}} reads (letters, digits, _ - .)"),
        ),
        (
            changed("/extract", json!([{ "name": "order", "pointer": "id" }])),
            format!("{A}.extract[0].pointer: a JSON Pointer into the body, such as /id"),
        ),
        (
            with(json!({ "type": "expectStatus", "status": "20" })),
            format!("{A}.status: a status code such as \"201\", or a class such as \"4xx\""),
        ),
        (
            with(json!({ "type": "expectField", "pointer": "/total" })),
            format!("{A}.value: an expectField needs value or pattern"),
        ),
    ];
    let cases: Vec<(Value, &str)> = cases.iter().map(|(value, expected)| (value.clone(), expected.as_str())).collect();
    assert_problems(&cases, problem);
}
