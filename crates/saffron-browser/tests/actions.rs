//! Every action type against the demo app, with its waits and its at-most-once dispatch.

use crate::common;

use std::time::{Duration, Instant};

use common::{Scenario, run};
use saffron_browser::FailureKind;
use saffron_demo::{DemoConfig, Fault};
use saffron_recording::Tier;
use serde_json::json;

fn with_fault(fault: Fault) -> DemoConfig {
    let mut config = DemoConfig::default();
    config.faults.insert(fault);
    config
}

#[test]
fn goto_resolves_against_the_base_url_and_reports_network_errors() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        // `/` redirects to the login page.
        s.ok(json!({ "type": "goto", "url": "/" })).await;
        s.ok(json!({ "type": "expectUrl", "url": "/login" })).await;
        s.ok(json!({ "type": "goto", "url": "/login?expired=1" })).await;
        s.ok(json!({ "type": "expectText", "target": { "role": "alert" }, "text": "Your session expired" })).await;
        assert_eq!(s.context.url().await.expect("a URL"), format!("{}/login?expired=1", s.server.url()));
        let failure = s.fails(json!({ "type": "goto", "url": "http://127.0.0.1:9/nowhere", "timeoutMs": 3000 })).await;
        assert_eq!(failure.kind, FailureKind::Navigation, "{failure}");
        // Each browser names the error its own way.
        let error = if crate::common::is_firefox(&browser) { "deniedPortAccess" } else { "ERR_" };
        assert!(failure.message.contains(error), "{failure}");
        s.close().await;
    });
}

#[test]
fn fill_types_and_an_empty_value_clears() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        let search = json!({ "role": "searchbox", "name": "Search orders" });
        s.ok(json!({ "type": "fill", "target": search, "value": "grace" })).await;
        s.ok(json!({ "type": "expectValue", "target": search, "value": "grace" })).await;
        // Fill replaces, it does not append.
        s.ok(json!({ "type": "fill", "target": search, "value": "ada" })).await;
        s.ok(json!({ "type": "expectValue", "target": search, "value": "ada" })).await;
        s.ok(json!({ "type": "fill", "target": search, "value": "" })).await;
        s.ok(json!({ "type": "expectValue", "target": search, "value": "" })).await;
        // Typing fires `input`: the live total follows the quantity.
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Quantity" }, "value": "3" })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "order-total" }, "text": "Total: €13.50" })).await;
        let failure = s
            .fails(json!({ "type": "fill", "target": { "label": "Gift wrap" }, "value": "yes", "timeoutMs": 2000 }))
            .await;
        assert!(matches!(failure.kind, FailureKind::NotActionable { .. }), "{failure}");
        assert!(failure.message.contains("is not a text field"), "{failure}");
        s.close().await;
    });
}

#[test]
fn select_by_label_or_value_fires_change() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        let product = json!({ "role": "combobox", "name": "Product" });
        s.ok(json!({ "type": "select", "target": product, "values": ["Saffron"] })).await;
        s.ok(json!({ "type": "expectValue", "target": product, "value": "Saffron" })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "order-total" }, "text": "Total: €12.00" })).await;
        s.ok(json!({ "type": "select", "target": { "label": "Product" }, "values": ["Mugs"] })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "order-total" }, "text": "Total: €7.00" })).await;
        let failure =
            s.fails(json!({ "type": "select", "target": product, "values": ["Coffee"], "timeoutMs": 300 })).await;
        assert!(failure.message.contains(r#"no option "Coffee" (options: "Tea", "Mugs", "Saffron")"#), "{failure}");
        s.close().await;
    });
}

#[test]
fn press_keys_on_a_target_or_the_page() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        let search = json!({ "label": "Search orders" });
        s.ok(json!({ "type": "fill", "target": search, "value": "ada" })).await;
        s.ok(json!({ "type": "press", "target": search, "key": "Enter" })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "result-count" }, "text": "2 orders" })).await;
        s.ok(json!({ "type": "press", "target": search, "key": "Control+A" })).await;
        s.ok(json!({ "type": "press", "key": "Backspace" })).await;
        s.ok(json!({ "type": "expectValue", "target": search, "value": "" })).await;
        s.ok(json!({ "type": "press", "key": "Shift+a" })).await;
        s.ok(json!({ "type": "expectValue", "target": search, "value": "A" })).await;
        // Tab moves the focus to the Search button.
        s.ok(json!({ "type": "press", "key": "Tab" })).await;
        s.ok(json!({ "type": "expectState", "target": { "testId": "search-button" }, "state": { "kind": "focused" } }))
            .await;
        let failure = s.fails(json!({ "type": "press", "key": "Control+Entr" })).await;
        assert_eq!(failure.kind, FailureKind::Invalid, "{failure}");
        s.close().await;
    });
}

#[test]
fn check_and_uncheck_click_only_when_needed() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        let gift = json!({ "role": "checkbox", "name": "Gift wrap" });
        s.ok(json!({ "type": "check", "target": gift })).await;
        s.ok(json!({ "type": "expectState", "target": gift, "state": { "kind": "checked" } })).await;
        // Already checked: no click, so it stays checked.
        s.ok(json!({ "type": "check", "target": gift })).await;
        s.ok(json!({ "type": "expectState", "target": gift, "state": { "kind": "checked" } })).await;
        s.ok(json!({ "type": "uncheck", "target": { "label": "Gift wrap" } })).await;
        s.ok(json!({ "type": "expectState", "target": gift, "state": { "kind": "unchecked" } })).await;
        s.ok(json!({ "type": "uncheck", "target": gift })).await;
        s.ok(json!({ "type": "expectState", "target": gift, "state": { "kind": "unchecked" } })).await;
        let failure = s.fails(json!({ "type": "check", "target": { "role": "button", "name": "Save order" } })).await;
        assert!(failure.message.contains("is not a checkbox or radio"), "{failure}");
        s.close().await;
    });
}

#[test]
fn hover_moves_the_pointer() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        let tooltip =
            json!({ "role": "tooltip", "name": "Search by customer name", "css": ["#help-tip"], "tier": "role" });
        let hidden = s.ok(json!({ "type": "expectHidden", "target": tooltip })).await;
        assert_eq!(hidden.tier, Some(Tier::Css), "a hidden element is not in the accessibility tree");
        assert!(hidden.drift.is_empty(), "which is not drift");
        s.ok(json!({ "type": "hover", "target": { "role": "button", "name": "Help" } })).await;
        let performed = s.ok(json!({ "type": "expectVisible", "target": tooltip })).await;
        assert_eq!(performed.tier, Some(Tier::Role));
        s.ok(json!({ "type": "hover", "target": { "role": "heading", "name": "Orders" } })).await;
        s.ok(json!({ "type": "expectHidden", "target": tooltip })).await;
        s.close().await;
    });
}

#[test]
fn a_new_tab_is_switched_to_by_index_or_url() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "click", "target": { "role": "link", "name": "Open invoice of #1001" } })).await;
        // The click does not change tabs by itself, and the opener, now behind the new tab, is
        // brought back to the front to be acted on (a background tab holds input for seconds).
        s.ok(json!({ "type": "expectUrl", "url": "/orders" })).await;
        let hovered = s.ok(json!({ "type": "hover", "target": { "role": "button", "name": "Export orders" } })).await;
        assert!(hovered.duration < Duration::from_secs(2), "{hovered:?}");
        s.ok(json!({ "type": "switchTab", "index": 1 })).await;
        s.ok(json!({ "type": "expectText", "target": { "role": "heading", "level": 1, "name": "Invoice #1001" },
            "text": "Invoice #1001" }))
            .await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "invoice-total" }, "text": "Total: €9.00" })).await;
        s.ok(json!({ "type": "expectUrl", "url": "/invoices/1001" })).await;
        s.ok(json!({ "type": "switchTab", "urlPattern": "^/orders$" })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "result-count" }, "text": "4 orders" })).await;
        s.ok(json!({ "type": "switchTab", "urlPattern": "/invoices/\\d+" })).await;
        s.ok(json!({ "type": "expectUrl", "urlRegex": "^/invoices/1001$" })).await;
        let started = Instant::now();
        let failure = s.fails(json!({ "type": "switchTab", "index": 2, "timeoutMs": 300 })).await;
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(failure.kind, FailureKind::Timeout, "{failure}");
        assert!(failure.message.contains("1: /invoices/1001"), "{failure}");
        s.close().await;
    });
}

#[test]
fn an_accepted_confirm_deletes_the_order_and_a_dismissed_one_does_not() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "dialog", "accept": false })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Delete order #1002" } })).await;
        s.ok(
            json!({ "type": "expectCount", "target": { "role": "button", "nameRegex": "^Delete order" }, "count": 4 }),
        )
        .await;

        s.ok(json!({ "type": "dialog", "accept": true })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Delete order #1001" } })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "flash" }, "text": "Order #1001 deleted" })).await;
        s.ok(json!({ "type": "expectHidden", "target": { "role": "link", "name": "#1001" } })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "result-count" }, "text": "3 orders" })).await;
        assert_eq!(s.requests("DELETE", "/api/orders/1001").len(), 1);
        // By now a DELETE sent for the dismissed dialog would have arrived too.
        assert!(s.requests("DELETE", "/api/orders/1002").is_empty(), "dismissed: nothing deleted");

        // No answer armed: the dialog is dismissed and the run is told.
        let clicked =
            s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Delete order #1003" } })).await;
        let checked =
            s.ok(json!({ "type": "expectText", "target": { "testId": "result-count" }, "text": "3 orders" })).await;
        let notes = [clicked.notes, checked.notes].concat();
        assert!(
            notes.iter().any(|note| note.contains(r#"unexpected confirm dialog "Delete order #1003?" was dismissed"#)),
            "{notes:?}"
        );
        assert!(s.requests("DELETE", "/api/orders/1003").is_empty());
        s.close().await;
    });
}

#[test]
fn wait_for_response_polls_until_the_export_is_ready() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.context.begin_step();
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Export orders" } })).await;
        let ready = json!({ "type": "waitForResponse",
            "response": { "urlRegex": "^/api/exports/\\d+$", "method": "GET", "status": "2xx", "bodyRegex": "\"status\":\"READY\"" } });
        s.ok(ready.clone()).await;
        // The body had READY, so the page has (or is about to) show it.
        s.ok(
            json!({ "type": "expectText", "target": { "testId": "export-status" }, "text": "Export ready: 4 orders" }),
        )
        .await;
        let polls = s.server.requests().into_iter().filter(|request| request.path.starts_with("/api/exports/")).count();
        assert!(polls >= 2, "RUNNING was answered first, then READY: {polls} polls");

        // A new step does not see the old responses.
        s.context.begin_step();
        let mut late = ready.clone();
        late["timeoutMs"] = json!(400);
        let failure = s.fails(late).await;
        assert_eq!(failure.kind, FailureKind::Timeout, "{failure}");
        assert!(failure.message.contains("since the step began"), "{failure}");
        // Whereas the scenario-wide assertion does.
        s.ok(json!({ "type": "expectResponse", "response": { "urlRegex": "^/api/exports$", "method": "POST", "status": "202" } }))
            .await;
        s.close().await;
    });
}

#[test]
fn wait_for_response_times_out_naming_what_came() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.context.begin_step();
        s.ok(json!({ "type": "fill", "target": { "label": "Search orders" }, "value": "ada" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Search" } })).await;
        let failure = s
            .fails(json!({ "type": "waitForResponse", "timeoutMs": 500,
                "response": { "urlRegex": "^/api/orders", "status": "5xx" } }))
            .await;
        assert_eq!(failure.kind, FailureKind::Timeout);
        assert!(failure.message.contains("GET /api/orders?q=ada → 200"), "{failure}");
        s.ok(
            json!({ "type": "waitForResponse", "response": { "urlRegex": "^/api/orders\\?q=ada$", "status": "200" } }),
        )
        .await;
        s.close().await;
    });
}

#[test]
fn a_covering_dialog_makes_the_click_wait_then_fail_naming_it() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, with_fault(Fault::Interstitial)).await;
        s.sign_in().await;
        let export =
            json!({ "type": "click", "target": { "role": "button", "name": "Export orders" }, "timeoutMs": 1000 });
        let started = Instant::now();
        let failure = s.fails(export.clone()).await;
        assert!(started.elapsed() >= Duration::from_millis(1000), "it waited for the overlay to go");
        match &failure.kind {
            FailureKind::NotActionable { reason } => {
                assert!(reason.contains(r#"role="dialog" aria-label="Cookie consent""#), "{reason}");
                assert!(reason.contains("intercepts pointer events"), "{reason}");
            }
            other => panic!("expected NotActionable, got {other:?}: {failure}"),
        }
        assert!(s.requests("POST", "/api/exports").is_empty(), "the covered button was never clicked");
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Accept cookies" } })).await;
        s.ok(export).await;
        s.ok(
            json!({ "type": "expectText", "target": { "testId": "export-status" }, "text": "Export ready: 4 orders" }),
        )
        .await;
        assert_eq!(s.requests("POST", "/api/exports").len(), 1);
        s.close().await;
    });
}

#[test]
fn a_click_is_sent_once_even_when_the_answer_is_slow() {
    run(|browser| async move {
        let mut config = with_fault(Fault::Latency);
        config.latency_ms = 1200;
        let mut s = Scenario::start(&browser, config).await;
        s.sign_in().await;
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Customer" }, "value": "Edsger Dijkstra" })).await;
        s.context.begin_step();
        // The click's own timeout is far shorter than the server's answer: it is over once
        // dispatched, and is never sent again.
        let clicked = s
            .ok(json!({ "type": "click", "target": { "role": "button", "name": "Save order" }, "timeoutMs": 300 }))
            .await;
        assert!(clicked.duration < Duration::from_millis(1200), "the click did not wait for the answer: {clicked:?}");
        s.ok(json!({ "type": "waitForResponse", "response": { "urlRegex": "^/api/orders$", "method": "POST", "status": "201" } }))
            .await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "confirmation" }, "text": "Order saved" })).await;
        assert_eq!(s.requests("POST", "/api/orders").len(), 1, "exactly one POST /api/orders");
        s.close().await;
    });
}

/// A click that follows a link ends once the page it opens commits, as Playwright's actions
/// do: that page answers only after `SLOW_PAGE_MS`, so the click takes at least that long, and
/// what follows it acts on the new page.
#[test]
fn a_click_that_navigates_ends_when_the_new_page_commits() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/slow-page" })).await;
        let clicked = s.ok(json!({ "type": "click", "target": { "role": "link", "name": "Slow page" } })).await;
        let answered = Duration::from_millis(saffron_demo::SLOW_PAGE_MS);
        assert!(clicked.duration >= answered, "the click ended before the page it opened: {clicked:?}");
        s.ok(json!({ "type": "expectText", "target": { "role": "heading" }, "text": "Arrived", "timeoutMs": 0 })).await;
        s.close().await;
    });
}

#[test]
fn a_disabled_button_is_waited_for() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Export orders" } })).await;
        // Disabled while the export runs (about a second), then enabled again: the second
        // click waits for that instead of failing or clicking a disabled button.
        s.ok(json!({ "type": "expectState", "target": { "role": "button", "name": "Export orders" }, "state": { "kind": "disabled" } }))
            .await;
        s.context.begin_step();
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Export orders" } })).await;
        s.ok(json!({ "type": "waitForResponse", "response": { "urlRegex": "^/api/exports$", "method": "POST" } }))
            .await;
        assert_eq!(s.requests("POST", "/api/exports").len(), 2);
        let failure = s
            .fails(
                json!({ "type": "click", "target": { "role": "button", "name": "Export orders" }, "timeoutMs": 200 }),
            )
            .await;
        assert_eq!(
            failure.kind,
            FailureKind::NotActionable { reason: "the element is disabled".to_owned() },
            "{failure}"
        );
        s.close().await;
    });
}

/// The stable check waits for an element that moves every frame to stand still: the click
/// lands once, at rest (`/lab/moving` says which), never while it moves.
#[test]
fn a_moving_button_is_clicked_once_it_stands_still() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/moving" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Start" } })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Catch me" } })).await;
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Clicked at rest", "timeoutMs": 1000 }))
            .await;
        s.close().await;
    });
}

/// A `goto` leaves for no page that is not on the web, whatever its tokens resolved to: local
/// files would end up in screenshots and reports.
#[test]
fn goto_refuses_schemes_that_are_not_http() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        for url in ["file:///etc/passwd", "javascript:alert(1)", "data:text/html,<h1>x</h1>", "ftp://example.test/"] {
            let failure = s.fails(json!({ "type": "goto", "url": url })).await;
            assert!(failure.message.contains("refused: a replay opens only http and https pages"), "{failure}");
        }
        s.ok(json!({ "type": "expectUrl", "url": "about:blank" })).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        s.close().await;
    });
}
