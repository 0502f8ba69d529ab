//! Every assertion type: retried until its timeout, then failing with what was expected and
//! what was found.

use crate::common;

use std::time::{Duration, Instant};

use common::{Scenario, run};
use saffron_browser::FailureKind;
use saffron_demo::{DemoConfig, Fault};
use saffron_recording::Tier;
use serde_json::json;

#[test]
fn expect_visible_and_hidden() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "expectVisible", "target": { "role": "heading", "name": "Orders" } })).await;
        let tip = json!({ "css": ["#help-tip"] });
        let failure = s.fails(json!({ "type": "expectVisible", "target": tip, "timeoutMs": 300 })).await;
        assert_eq!(failure.kind, FailureKind::AssertionFailed);
        assert_eq!(failure.message, r##"expectVisible css "#help-tip": expected visible, found hidden (after 0.3 s)"##);
        assert_eq!((failure.expected.as_deref(), failure.found.as_deref()), (Some("visible"), Some("hidden")));
        let hidden = s.ok(json!({ "type": "expectHidden", "target": tip })).await;
        assert_eq!(hidden.tier, Some(Tier::Css));
        // Absent counts as hidden.
        let absent = s.ok(json!({ "type": "expectHidden", "target": { "text": "No such text anywhere" } })).await;
        assert_eq!(absent.tier, None);
        let failure = s
            .fails(
                json!({ "type": "expectHidden", "target": { "role": "heading", "name": "Orders" }, "timeoutMs": 300 }),
            )
            .await;
        assert_eq!(failure.found.as_deref(), Some("visible"), "{failure}");
        s.close().await;
    });
}

#[test]
fn expect_text_exact_or_by_pattern_says_what_it_found() {
    let mut config = DemoConfig::default();
    config.faults.insert(Fault::ServerError);
    run(|browser| async move {
        let mut s = Scenario::start(&browser, config).await;
        s.sign_in().await;
        // Whitespace is normalized on both sides.
        s.ok(json!({ "type": "expectText", "target": { "testId": "result-count" }, "text": "  4   orders " })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "result-count" }, "textRegex": "^\\d+ orders$" }))
            .await;
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Customer" }, "value": "Barbara Liskov" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Save order" } })).await;
        let started = Instant::now();
        let failure = s
            .fails(
                json!({ "type": "expectText", "target": { "role": "alert" }, "text": "Order saved", "timeoutMs": 800 }),
            )
            .await;
        assert!(started.elapsed() >= Duration::from_millis(800), "retried until the timeout");
        assert_eq!(failure.kind, FailureKind::AssertionFailed);
        assert!(
            failure.message.contains(r#"expected text "Order saved", found "Could not save the order""#),
            "{failure}"
        );
        assert_eq!(failure.expected.as_deref(), Some(r#"text "Order saved""#));
        assert_eq!(failure.found.as_deref(), Some(r#""Could not save the order""#));
        let failure = s
            .fails(
                json!({ "type": "expectText", "target": { "role": "alert" }, "textRegex": "^Order", "timeoutMs": 200 }),
            )
            .await;
        assert!(failure.message.contains("expected text matching /^Order/"), "{failure}");
        s.close().await;
    });
}

#[test]
fn expect_text_waits_for_the_page_to_change() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Export orders" } })).await;
        let performed = s
            .ok(json!({ "type": "expectText", "target": { "testId": "export-status" }, "text": "Export ready: 4 orders" }))
            .await;
        assert!(performed.duration >= Duration::from_millis(500), "the export takes about a second: {performed:?}");
        s.close().await;
    });
}

#[test]
fn expect_value_and_url() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "expectUrl", "url": "/orders" })).await;
        s.ok(json!({ "type": "expectUrl", "url": format!("{}/orders", s.server.url()) })).await;
        s.ok(json!({ "type": "click", "target": { "role": "link", "name": "#1003" } })).await;
        s.ok(json!({ "type": "expectUrl", "urlRegex": "^/orders/\\d+$" })).await;
        let failure = s.fails(json!({ "type": "expectUrl", "url": "/orders", "timeoutMs": 300 })).await;
        assert_eq!(failure.kind, FailureKind::AssertionFailed);
        assert_eq!(failure.message, r#"expectUrl: expected URL "/orders", found "/orders/1003" (after 0.3 s)"#);
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        s.ok(json!({ "type": "expectValue", "target": { "label": "Quantity" }, "value": "1" })).await;
        s.ok(json!({ "type": "expectValue", "target": { "label": "Product" }, "value": "Tea" })).await;
        let failure = s
            .fails(json!({ "type": "expectValue", "target": { "label": "Quantity" }, "value": "2", "timeoutMs": 200 }))
            .await;
        assert_eq!((failure.expected.as_deref(), failure.found.as_deref()), (Some(r#"value "2""#), Some(r#""1""#)));
        s.close().await;
    });
}

#[test]
fn expect_state_of_every_kind() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        let save = json!({ "role": "button", "name": "Save order" });
        let customer = json!({ "label": "Customer" });
        s.ok(json!({ "type": "expectState", "target": save, "state": { "kind": "class", "token": "btn-primary" } }))
            .await;
        s.ok(json!({ "type": "expectState", "target": save, "state": { "kind": "enabled" } })).await;
        s.ok(json!({ "type": "expectState", "target": save, "state": { "kind": "attribute", "name": "type", "value": "submit" } }))
            .await;
        s.ok(json!({ "type": "expectState", "target": customer, "state": { "kind": "attribute", "name": "aria-required" } }))
            .await;
        s.ok(json!({ "type": "expectState", "target": { "css": ["#customer-error"] }, "state": { "kind": "css", "property": "display", "value": "none" } }))
            .await;
        // Saving with no customer marks the field invalid and focuses it.
        s.ok(json!({ "type": "click", "target": save })).await;
        s.ok(json!({ "type": "expectState", "target": customer, "state": { "kind": "attribute", "name": "aria-invalid", "value": "true" } }))
            .await;
        s.ok(json!({ "type": "expectState", "target": customer, "state": { "kind": "focused" } })).await;
        s.ok(json!({ "type": "expectState", "target": { "label": "Gift wrap" }, "state": { "kind": "unchecked" } }))
            .await;
        let failure = s
            .fails(json!({ "type": "expectState", "target": save, "state": { "kind": "class", "token": "btn-danger" }, "timeoutMs": 200 }))
            .await;
        assert_eq!(failure.kind, FailureKind::AssertionFailed);
        assert!(failure.message.contains(r#"expected class "btn-danger", found class="btn btn-primary""#), "{failure}");
        let failure = s
            .fails(json!({ "type": "expectState", "target": save, "state": { "kind": "disabled" }, "timeoutMs": 200 }))
            .await;
        assert_eq!(failure.found.as_deref(), Some("enabled"));
        s.close().await;
    });
}

#[test]
fn expect_response_audits_the_whole_scenario() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.context.begin_step();
        s.ok(json!({ "type": "expectResponse", "response": { "urlRegex": "^/api/session$", "method": "POST", "status": "200" } }))
            .await;
        // Redirects are responses too: `/` answers 302.
        s.ok(json!({ "type": "goto", "url": "/" })).await;
        s.ok(json!({ "type": "expectResponse", "response": { "urlRegex": "^/$", "status": "3xx" } })).await;
        let failure = s
            .fails(json!({ "type": "expectResponse", "timeoutMs": 300,
                "response": { "urlRegex": "^/api/session$", "method": "DELETE" } }))
            .await;
        assert_eq!(failure.kind, FailureKind::Timeout);
        assert!(failure.message.contains("during the scenario"), "{failure}");
        assert!(failure.message.contains("POST /api/session → 200"), "{failure}");
        s.close().await;
    });
}

#[test]
fn console_errors_are_detected() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "expectNoConsoleErrors" })).await;
        // Both scripts run before the load event that ends the goto.
        s.ok(json!({ "type": "goto", "url": "/__demo/console-errors" })).await;
        let failure = s.fails(json!({ "type": "expectNoConsoleErrors" })).await;
        assert_eq!(failure.kind, FailureKind::AssertionFailed);
        assert!(failure.message.contains("console.error: boom 42"), "{failure}");
        assert!(failure.message.contains("uncaught exception: Error: kaboom"), "{failure}");
        s.close().await;
    });
}

#[test]
fn failed_loads_logged_by_the_browser_are_console_errors() {
    let mut config = DemoConfig::default();
    config.faults.insert(Fault::ServerError);
    run(|browser| async move {
        let mut s = Scenario::start(&browser, config).await;
        s.sign_in().await;
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Customer" }, "value": "Frances Allen" })).await;
        s.context.begin_step();
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Save order" } })).await;
        s.ok(json!({ "type": "waitForResponse", "response": { "urlRegex": "^/api/orders$", "status": "500" } })).await;
        if crate::common::is_firefox(&browser) {
            // Firefox logs no console error for a failed load (docs/browsers.md).
            s.ok(json!({ "type": "expectNoConsoleErrors" })).await;
            return s.close().await;
        }
        // Chromium logs the failed load on a channel of its own, not always before the round
        // trip that ends the response's wait: look until it is there (each look is a round
        // trip to the tab), then the assertion must report it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !s.context.console_errors().await.iter().any(|error| error.contains("Failed to load resource")) {
            assert!(std::time::Instant::now() < deadline, "the failed load was never logged");
        }
        let failure = s.fails(json!({ "type": "expectNoConsoleErrors" })).await;
        assert!(failure.message.contains("network error: Failed to load resource"), "{failure}");
        assert!(failure.message.contains("500"), "{failure}");
        s.close().await;
    });
}

#[test]
fn expect_count_counts_at_the_sturdiest_tier() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        let order_links = json!({ "role": "link", "nameRegex": "^#\\d+$", "css": ["a"] });
        let performed = s.ok(json!({ "type": "expectCount", "target": order_links, "count": 4 })).await;
        assert_eq!(performed.tier, Some(Tier::Role));
        s.ok(json!({ "type": "expectCount", "target": { "text": "Delete" }, "count": 4 })).await;
        s.ok(json!({ "type": "expectCount", "target": { "text": "Nothing like this" }, "count": 0 })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Search orders" }, "value": "ada" })).await;
        s.ok(json!({ "type": "press", "target": { "label": "Search orders" }, "key": "Enter" })).await;
        // Retried until the search has re-rendered the rows.
        s.ok(json!({ "type": "expectCount", "target": order_links, "count": 2 })).await;
        let failure =
            s.fails(json!({ "type": "expectCount", "target": order_links, "count": 3, "timeoutMs": 200 })).await;
        assert_eq!(failure.kind, FailureKind::AssertionFailed);
        assert!(failure.message.contains("expected 3 elements, found 2"), "{failure}");
        s.close().await;
    });
}
