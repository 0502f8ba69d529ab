//! The HTML report in a real browser: its verdict filters show one verdict's scenarios at a
//! time, by click or from the address (`report.html#red`); the flaky filter shows the scenarios
//! that passed on a retry; the search box keeps the scenarios whose name or file holds its words.

use saffron_browser::{Browser, BrowserConfig, Context, ContextOptions};
use saffron_recording::{Action, Masker};
use saffron_runner::{RunReport, ScenarioResult, Verdict, write_reports};
use serde_json::json;

fn scenario(name: &str, line: u32, verdict: Verdict) -> ScenarioResult {
    ScenarioResult { duration_ms: 900, ..ScenarioResult::new("features/shop.feature", line, name, verdict) }
}

async fn ok(context: &mut Context, action: serde_json::Value) {
    let parsed: Action = serde_json::from_value(action.clone()).expect("a valid action");
    if let Err(failure) = context.perform(&parsed, None).await {
        panic!("{action} failed: {failure}");
    }
}

#[test]
fn verdict_filters_show_one_verdict_at_a_time() {
    let project = tempfile::tempdir().expect("temp dir");
    let report = RunReport::new(
        "http://127.0.0.1:1",
        4000,
        vec![
            ScenarioResult {
                flaky: true,
                retried: vec!["attempt 1: boom".into()],
                ..scenario("Pay by card", 3, Verdict::Green)
            },
            scenario("Refund an order", 9, Verdict::Red { step: None, step_text: None, message: "boom".into() }),
            scenario("Export the orders", 15, Verdict::Blocked { cause: "no browser".into() }),
        ],
    );
    write_reports(project.path(), &report, &Masker::new()).expect("reports");
    let page = std::fs::read_to_string(project.path().join(".saffron/reports/report.html")).expect("html");
    let base_url = saffron_browser::testing::serve_page(page);

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let browser = Browser::launch(BrowserConfig::default()).await.expect("these tests need Chromium");
        let mut context = browser.new_context(ContextOptions { base_url }).await.expect("a context");
        let c = &mut context;
        ok(c, json!({ "type": "goto", "url": "/" })).await;
        for name in ["Pay by card", "Refund an order", "Export the orders"] {
            ok(c, json!({ "type": "expectVisible", "target": { "text": name } })).await;
        }
        ok(c, json!({ "type": "click", "target": { "role": "button", "name": "✗ red (1)" } })).await;
        ok(c, json!({ "type": "expectVisible", "target": { "text": "Refund an order" } })).await;
        ok(c, json!({ "type": "expectHidden", "target": { "text": "Pay by card" } })).await;
        ok(c, json!({ "type": "expectHidden", "target": { "text": "Export the orders" } })).await;
        ok(c, json!({ "type": "expectUrl", "urlRegex": "#red$" })).await;
        ok(c, json!({ "type": "click", "target": { "role": "button", "name": "all (3)" } })).await;
        ok(c, json!({ "type": "expectVisible", "target": { "text": "Pay by card" } })).await;
        // A link to the report with a verdict opens it filtered.
        ok(c, json!({ "type": "goto", "url": "/?blocked#blocked" })).await;
        ok(c, json!({ "type": "expectVisible", "target": { "text": "Export the orders" } })).await;
        ok(c, json!({ "type": "expectHidden", "target": { "text": "Refund an order" } })).await;
        ok(c, json!({ "type": "click", "target": { "role": "button", "name": "≈ flaky (1)" } })).await;
        ok(c, json!({ "type": "expectVisible", "target": { "text": "Pay by card" } })).await;
        ok(c, json!({ "type": "expectHidden", "target": { "text": "Export the orders" } })).await;
        ok(c, json!({ "type": "click", "target": { "role": "button", "name": "all (3)" } })).await;
        // The search box: every word must be in the scenario's name or file.
        ok(c, json!({ "type": "fill", "target": { "role": "searchbox" }, "value": "ORDER refund" })).await;
        ok(c, json!({ "type": "expectVisible", "target": { "text": "Refund an order" } })).await;
        ok(c, json!({ "type": "expectHidden", "target": { "text": "Export the orders" } })).await;
        ok(c, json!({ "type": "expectHidden", "target": { "text": "Pay by card" } })).await;
        ok(c, json!({ "type": "fill", "target": { "role": "searchbox" }, "value": "" })).await;
        ok(c, json!({ "type": "expectVisible", "target": { "text": "Export the orders" } })).await;
        context.close().await;
        browser.close().await;
    });
}
