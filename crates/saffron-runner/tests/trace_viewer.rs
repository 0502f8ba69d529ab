//! The trace viewer in a real browser: it opens on the failed action with its reason and the
//! page's DOM snapshot at the failure; clicking an action shows its pictures and exactly the
//! requests it made; the arrow keys and the filmstrip move the selection; text from the trace
//! (console lines, addresses, names) is shown as text, never read as markup; the attempt
//! buttons switch between the attempts of a scenario.
//!
//! The sample traces under `tests/fixtures/trace/` are read with the trace model itself, and
//! must say exactly what the model writes back: they double as a check of the schema.

use saffron_browser::{Browser, BrowserConfig, Context, ContextOptions};
use saffron_recording::Action;
use saffron_runner::trace::{ConsoleLine, Request, Trace, viewer_html};
use saffron_runner::transcript::Exchange;
use serde_json::{Value, json};

const RED: &str = include_str!("fixtures/trace/red.trace.json");
const GREEN: &str = include_str!("fixtures/trace/green.trace.json");

/// A sample trace, read as `saffron trace` reads one, after checking that the model writes
/// back every field of the file: a misspelt or unknown field would be dropped silently.
fn sample(text: &str) -> Trace {
    let trace: Trace = serde_json::from_str(text).expect("a sample trace the model reads");
    let written = serde_json::to_value(&trace).expect("a trace as JSON");
    let file: Value = serde_json::from_str(text).expect("JSON");
    assert_same(&file, &written, "$");
    trace
}

/// `file` and `written` hold the same fields and values (numbers compared as numbers: the
/// model writes `800.0` where the file says `800`).
fn assert_same(file: &Value, written: &Value, path: &str) {
    match (file, written) {
        (Value::Object(file), Value::Object(written)) => {
            let mut keys: Vec<&String> = file.keys().chain(written.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                match (file.get(key), written.get(key)) {
                    (Some(file), Some(written)) => assert_same(file, written, &format!("{path}.{key}")),
                    (Some(_), None) => panic!("{path}.{key} is in the sample but not in the model"),
                    (None, Some(_)) => panic!("{path}.{key} is written by the model but missing in the sample"),
                    (None, None) => unreachable!(),
                }
            }
        }
        (Value::Array(file), Value::Array(written)) => {
            assert_eq!(file.len(), written.len(), "{path}: as many items");
            for (index, (file, written)) in file.iter().zip(written).enumerate() {
                assert_same(file, written, &format!("{path}[{index}]"));
            }
        }
        (Value::Number(file), Value::Number(written)) => {
            assert_eq!(file.as_f64(), written.as_f64(), "{path}");
        }
        (file, written) => assert_eq!(file, written, "{path}"),
    }
}

/// Opens the viewer of `traces` in headless Chromium and runs `checks` on it.
fn in_viewer(traces: &[Trace], checks: impl AsyncFnOnce(&mut Context)) {
    let base_url = saffron_browser::testing::serve_page(viewer_html(traces));
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let browser = Browser::launch(BrowserConfig::default()).await.expect("these tests need Chromium");
        let mut context = browser.new_context(ContextOptions { base_url }).await.expect("a context");
        ok(&mut context, json!({ "type": "goto", "url": "/" })).await;
        checks(&mut context).await;
        context.close().await;
        browser.close().await;
    });
}

async fn ok(context: &mut Context, action: Value) {
    let parsed: Action = serde_json::from_value(action.clone()).expect("a valid action");
    if let Err(failure) = context.perform(&parsed, None).await {
        panic!("{action} failed: {failure}");
    }
}

fn css(selector: &str) -> Value {
    json!({ "css": [selector] })
}

/// The row of action `index` (0-based, as in the trace) is the selected one.
fn selected(index: usize) -> Value {
    json!({
        "type": "expectState",
        "target": css(&format!("[data-action=\"{index}\"]")),
        "state": { "kind": "attribute", "name": "aria-selected", "value": "true" },
    })
}

fn attribute(target: Value, name: &str, value: &str) -> Value {
    json!({ "type": "expectState", "target": target, "state": { "kind": "attribute", "name": name, "value": value } })
}

fn text_matching(target: Value, pattern: &str) -> Value {
    json!({ "type": "expectText", "target": target, "textRegex": pattern })
}

/// `text` as a pattern that matches it literally.
fn literal(text: &str) -> String {
    text.chars().fold(String::new(), |mut pattern, char| {
        if "\\.+*?()|[]{}^$".contains(char) {
            pattern.push('\\');
        }
        pattern.push(char);
        pattern
    })
}

fn count(selector: &str, count: u32) -> Value {
    json!({ "type": "expectCount", "target": css(selector), "count": count })
}

#[test]
fn the_sample_traces_are_what_the_model_writes() {
    let red = sample(RED);
    assert_eq!(red.actions.len(), 7);
    assert!(red.failure.as_ref().is_some_and(|failure| failure.snapshot.is_some() && failure.screenshot.is_some()));
    assert!(red.agent.is_some());
    let green = sample(GREEN);
    assert!(green.failure.is_none() && green.agent.is_none());
}

#[test]
fn it_opens_on_the_failed_action_with_its_reason_and_the_page_at_the_failure() {
    let red = sample(RED);
    let message = red.failure.as_ref().map(|failure| failure.message.clone()).expect("a failure");
    in_viewer(&[red], async |c| {
        ok(c, json!({ "type": "expectText", "target": css("#verdict"), "text": "✗ red" })).await;
        ok(c, json!({ "type": "expectText", "target": css("#scenario-file"), "text": "features/checkout.feature:12" }))
            .await;
        ok(c, selected(6)).await;
        ok(c, json!({ "type": "expectVisible", "target": css("#failure-reason") })).await;
        // The kind, the message, what was expected and what was found.
        let reason =
            format!("^assertion-failed {} expected Total: \\$10\\.80 found Total: \\$12\\.00 page ", literal(&message));
        ok(c, text_matching(css("#failure-reason"), &reason)).await;
        // The page's DOM at the failure is on show without a click, inert in its sandbox.
        ok(c, attribute(json!({ "role": "tab", "name": "DOM snapshot" }), "aria-selected", "true")).await;
        ok(c, json!({ "type": "expectVisible", "target": css("#snapshot") })).await;
        ok(c, attribute(css("#snapshot"), "sandbox", "")).await;
        ok(
            c,
            json!({
                "type": "expectText",
                "target": { "css": ["#total"], "frame": css("#snapshot") },
                "text": "Total: $12.00",
            }),
        )
        .await;
        ok(c, json!({ "type": "expectVisible", "target": css("#at-failure img") })).await;
        ok(c, attribute(css("#after img"), "data-frame", "6")).await;
        // The tab chosen by hand stays chosen away from the failure.
        ok(c, json!({ "type": "click", "target": { "role": "tab", "name": "Console" } })).await;
        ok(c, json!({ "type": "click", "target": css("[data-action=\"1\"]") })).await;
        ok(c, json!({ "type": "expectVisible", "target": css("#console") })).await;
        ok(c, json!({ "type": "expectHidden", "target": css("#failure-reason") })).await;
    });
}

#[test]
fn an_action_shows_its_pictures_and_exactly_its_requests() {
    let red = sample(RED);
    let after = format!("data:image/jpeg;base64,{}", red.frames[4].jpeg);
    in_viewer(&[red], async |c| {
        let place_order = json!({ "css": ["[data-action]"], "hasText": "click button \"Place order\"" });
        ok(c, json!({ "type": "click", "target": place_order })).await;
        ok(c, selected(4)).await;
        ok(c, attribute(css("#after img"), "data-frame", "4")).await;
        ok(c, attribute(css("#after img"), "src", &after)).await;
        ok(c, attribute(css("#before img"), "data-frame", "3")).await;
        ok(c, json!({ "type": "expectVisible", "target": css("#after .box") })).await;
        ok(c, json!({ "type": "expectVisible", "target": css("#network") })).await;
        ok(c, count("#network [data-request]", 2)).await;
        let orders = json!({ "css": ["#network [data-request]"], "hasText": "/api/orders" });
        ok(
            c,
            json!({ "type": "expectText", "target": orders, "textRegex": r"^POST http://[^ ]+/api/orders 201 fetch" }),
        )
        .await;
        ok(c, json!({ "type": "expectHidden", "target": css("#failure-reason") })).await;

        // Filling the coupon made no request.
        ok(c, json!({ "type": "click", "target": css("[data-action=\"3\"]") })).await;
        ok(c, count("#network [data-request]", 0)).await;
        ok(c, json!({ "type": "expectHidden", "target": orders })).await;
        ok(c, json!({ "type": "expectText", "target": css("#network"), "text": "No request during this action." }))
            .await;
        ok(c, attribute(css("#after img"), "data-frame", "3")).await;

        // Every request is under "All network".
        ok(c, json!({ "type": "click", "target": { "role": "tab", "name": "All network" } })).await;
        ok(c, count("#all-network [data-request]", 8)).await;

        // The arrow keys move the selection; a picture of the filmstrip selects its action.
        ok(c, json!({ "type": "press", "key": "ArrowDown" })).await;
        ok(c, selected(4)).await;
        ok(c, json!({ "type": "press", "key": "ArrowUp" })).await;
        ok(c, json!({ "type": "press", "key": "ArrowUp" })).await;
        ok(c, selected(2)).await;
        ok(c, json!({ "type": "click", "target": css("#filmstrip [data-frame=\"1\"]") })).await;
        ok(c, selected(1)).await;
    });
}

#[test]
fn text_from_the_trace_is_shown_as_text_never_as_markup() {
    let markup = r#"<img src=x onerror="document.body.dataset.pwned=1"><b>bold</b>"#;
    let mut green = sample(GREEN);
    green.scenario.name = format!("Search {markup}");
    green.actions[0].action = format!("go to {markup}");
    green.console.push(ConsoleLine {
        at_ms: 700,
        level: "error".into(),
        text: format!("bad product name {markup}"),
        source: Some(markup.into()),
        action: Some(0),
    });
    green.network.push(Request {
        method: "GET".into(),
        url: format!("http://127.0.0.1:4173/search?q={markup}"),
        status: Some(404),
        resource_type: "fetch".into(),
        mime_type: None,
        start_ms: 100,
        end_ms: Some(120),
        encoded_bytes: None,
        failed: None,
        body: Some(markup.into()),
        action: Some(0),
        tab: 0,
    });
    in_viewer(&[green], async |c| {
        ok(c, json!({ "type": "expectText", "target": css("#scenario-name"), "text": format!("Search {markup}") }))
            .await;
        ok(c, json!({ "type": "expectVisible", "target": { "css": ["#network td"], "hasText": "onerror=" } })).await;
        ok(c, json!({ "type": "click", "target": { "role": "tab", "name": "Console" } })).await;
        let line = json!({ "css": ["#console [data-console]"], "hasText": "bad product name" });
        ok(c, json!({ "type": "expectVisible", "target": line })).await;
        ok(c, json!({ "type": "expectText", "target": line, "textRegex": "bad product name <img src=x onerror=" }))
            .await;
        // No element was made of the markup: every picture on the page is one of the trace's.
        ok(c, count("img:not([src^=\"data:image/\"])", 0)).await;
        ok(c, count("#scenario-name *, #action-title *, #console pre *, #network td *", 0)).await;
        ok(c, count("[data-pwned]", 0)).await;
    });
}

#[test]
fn the_attempt_buttons_switch_between_the_attempts() {
    let red = sample(RED);
    let mut green = sample(GREEN);
    green.scenario = red.scenario.clone();
    green.attempt = 2;
    in_viewer(&[red, green], async |c| {
        // The last attempt comes first.
        ok(c, attribute(json!({ "role": "button", "name": "attempt 2" }), "aria-pressed", "true")).await;
        ok(c, json!({ "type": "expectText", "target": css("#verdict"), "text": "✓ green" })).await;
        ok(c, count("#actions [data-action]", 3)).await;
        ok(c, json!({ "type": "expectHidden", "target": css("#failure-reason") })).await;
        ok(c, json!({ "type": "expectHidden", "target": { "role": "tab", "name": "DOM snapshot" } })).await;

        ok(c, json!({ "type": "click", "target": { "role": "button", "name": "attempt 1" } })).await;
        ok(c, attribute(json!({ "role": "button", "name": "attempt 1" }), "aria-pressed", "true")).await;
        ok(c, json!({ "type": "expectText", "target": css("#verdict"), "text": "✗ red" })).await;
        ok(c, count("#actions [data-action]", 7)).await;
        ok(c, selected(6)).await;
        ok(c, text_matching(css("#failure-reason .message"), r#"found "Total: \$12\.00"$"#)).await;
        ok(c, json!({ "type": "expectVisible", "target": css("#snapshot") })).await;

        ok(c, json!({ "type": "click", "target": { "role": "button", "name": "attempt 2" } })).await;
        ok(c, json!({ "type": "expectText", "target": css("#verdict"), "text": "✓ green" })).await;
        ok(c, count("#snapshot", 0)).await;
    });
}

fn exchange(method: &str, path: &str, status: u16, request_body: Option<&str>, response_body: &str) -> Exchange {
    Exchange {
        attempt: 1,
        step: 1,
        service: "app".into(),
        session: None,
        method: method.into(),
        url: format!("http://127.0.0.1:8080{path}"),
        request_headers: vec![("content-type".into(), "application/json".into())],
        request_body: request_body.map(str::to_owned),
        status: Some(status),
        response_headers: vec![("content-type".into(), "application/json".into())],
        response_body: Some(response_body.into()),
        error: None,
        duration_ms: 12,
    }
}

/// An `@api` attempt has no page: the viewer opens on its requests (the API tab), each row
/// unfolding into its headers and bodies, an error status marked; a browser attempt without
/// requests of Saffron's own shows no API tab.
#[test]
fn the_api_tab_shows_the_requests_of_an_api_attempt_with_their_bodies() {
    let mut api = sample(GREEN);
    api.network.clear();
    api.frames.clear();
    for action in &mut api.actions {
        action.frame = None;
    }
    api.exchanges = vec![
        exchange("POST", "/api/orders", 201, Some(r#"{"quantity":2}"#), r#"{"id":1001,"total_cents":900}"#),
        exchange("GET", "/api/orders/1002", 404, None, r#"{"error":"order #1002 not found"}"#),
    ];
    in_viewer(&[api], async |c| {
        ok(c, attribute(css("#tab-api"), "aria-selected", "true")).await;
        ok(c, count("[data-exchange]", 2)).await;
        ok(c, attribute(css("[data-exchange=\"1\"]"), "class", "err")).await;
        ok(c, json!({ "type": "click", "target": css("[data-exchange=\"0\"]") })).await;
        ok(c, text_matching(css("#api .expanded"), &literal(r#"{"quantity":2}"#))).await;
        ok(c, text_matching(css("#api .expanded"), &literal(r#"{"id":1001,"total_cents":900}"#))).await;
    });
    in_viewer(&[sample(GREEN)], async |c| {
        ok(c, json!({ "type": "expectHidden", "target": css("#tab-api") })).await;
    });
}
