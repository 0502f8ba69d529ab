//! Scoped targets on the rows lab page, whose checkboxes and delete buttons have no names: a
//! scope finds the row by its text, however the list was reordered; a positional selector does
//! not; an ambiguous or missing scope fails saying so.

use crate::common;

use common::{Scenario, drift_lines, run};
use saffron_browser::FailureKind;
use saffron_demo::DemoConfig;
use saffron_recording::Tier;
use serde_json::{Value, json};

/// The checkbox of the row that says `text`, as a recording holds it.
fn checkbox_in(text: &str) -> Value {
    json!({ "role": "checkbox", "within": { "role": "listitem", "hasText": text } })
}

async fn open_and_shuffle(s: &mut Scenario) {
    s.ok(json!({ "type": "goto", "url": "/lab/rows" })).await;
    s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Insert an order at the top" } })).await;
    s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Reverse the list" } })).await;
}

#[test]
fn a_scoped_target_acts_on_the_named_row_after_the_list_changed() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        open_and_shuffle(&mut s).await;
        let performed = s.ok(json!({ "type": "check", "target": checkbox_in("Order 1002") })).await;
        assert_eq!(performed.tier, Some(Tier::Role));
        assert_eq!(performed.locator.as_deref(), Some(r#"role checkbox within role listitem with text "Order 1002""#));
        assert!(performed.drift.is_empty(), "{:?}", performed.drift);
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Selected: Order 1002" })).await;
        // The delete button has no name at all: the row alone makes it unique.
        s.ok(json!({ "type": "click", "target": { "role": "button", "within": { "role": "listitem", "hasText": "Order 1003" } } }))
            .await;
        s.ok(json!({ "type": "expectText", "target": { "css": ["#deleted"] }, "text": "Deleted: Order 1003" })).await;
        s.ok(json!({ "type": "expectCount", "target": { "role": "listitem" }, "count": 3 })).await;
        // Counting inside a scope, and a CSS container narrowed by a pattern (case folded by
        // its inline flag) with a CSS inner target, the other tiers' path.
        s.ok(json!({ "type": "expectCount", "target": checkbox_in("Order 1002"), "count": 1 })).await;
        let performed = s
            .ok(json!({ "type": "check",
                "target": { "css": ["input[type=checkbox]"], "within": { "css": ["#orders > li"], "hasTextRegex": "(?i)^order 1001\\b" } } }))
            .await;
        assert_eq!(
            performed.locator.as_deref(),
            Some(r##"css "input[type=checkbox]" within css "#orders > li" with text /(?i)^order 1001\b/"##)
        );
        s.ok(
            json!({ "type": "expectText", "target": { "role": "status" }, "text": "Selected: Order 1002, Order 1001" }),
        )
        .await;
        s.close().await;
    });
}

#[test]
fn a_positional_selector_acts_on_the_wrong_row_once_the_list_changed() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/rows" })).await;
        // Recorded while Order 1002 was the second row...
        let positional = json!({ "css": ["#orders li:nth-child(2) input"] });
        s.ok(json!({ "type": "expectVisible", "target": { "css": ["#orders li:nth-child(2)"] } })).await;
        s.ok(json!({ "type": "expectText", "target": { "css": ["#orders li:nth-child(2) span"] }, "text": "Order 1002 · Grace Hopper" }))
            .await;
        // ...it replays on whatever row is second now: the wrong one, and nothing says so.
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Insert an order at the top" } })).await;
        let performed = s.ok(json!({ "type": "check", "target": positional })).await;
        assert!(performed.drift.is_empty());
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Selected: Order 1001" })).await;
        s.close().await;
    });
}

#[test]
fn ambiguous_and_missing_scopes_fail_with_what_the_scope_found() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/rows" })).await;
        let failure = s.fails(json!({ "type": "check", "target": checkbox_in("Order 100"), "timeoutMs": 300 })).await;
        assert_eq!(failure.kind, FailureKind::Ambiguous, "{failure}");
        assert_eq!(
            failure.message,
            r#"check checkbox within listitem with text "Order 100": no tier matched exactly one element within 0.3 s: scope listitem with text "Order 100": role listitem: 3 matches (ambiguous)"#
        );
        let failure = s.fails(json!({ "type": "check", "target": checkbox_in("Order 1009"), "timeoutMs": 300 })).await;
        assert_eq!(failure.kind, FailureKind::NotFound, "{failure}");
        assert!(
            failure.message.ends_with(r#"scope listitem with text "Order 1009": role listitem: 0 matches"#),
            "{failure}"
        );
        // Case matters to `hasText`.
        let failure = s.fails(json!({ "type": "check", "target": checkbox_in("order 1002"), "timeoutMs": 300 })).await;
        assert_eq!(failure.kind, FailureKind::NotFound, "{failure}");
        // The row is found, the element is not in it: the report says which row it looked in.
        let failure = s
            .fails(json!({ "type": "click", "timeoutMs": 300,
                "target": { "role": "link", "css": ["a"], "within": { "role": "listitem", "hasText": "Order 1002" } } }))
            .await;
        assert_eq!(failure.kind, FailureKind::NotFound, "{failure}");
        assert!(
            failure.message.ends_with(
                r#"scope listitem with text "Order 1002": found by role listitem with text "Order 1002"; role link: 0 matches; css "a": 0 matches"#
            ),
            "{failure}"
        );
        // The container itself is not inside itself.
        let failure = s
            .fails(json!({ "type": "expectVisible", "timeoutMs": 300,
                "target": { "role": "listitem", "within": { "role": "listitem", "hasText": "Order 1002" } } }))
            .await;
        assert_eq!(failure.kind, FailureKind::NotFound, "{failure}");
        s.close().await;
    });
}

#[test]
fn a_scope_reports_its_own_drift() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/rows" })).await;
        // Recorded when the rows were table rows; they are list items now, and the CSS
        // fallback of the container finds the row.
        let performed = s
            .ok(json!({ "type": "check", "target": { "role": "checkbox", "tier": "role",
                "within": { "role": "row", "css": ["#orders > li"], "hasText": "Order 1002", "tier": "role" } } }))
            .await;
        assert_eq!(
            performed.locator.as_deref(),
            Some(r##"role checkbox within css "#orders > li" with text "Order 1002""##)
        );
        // Firefox's accessibility tree names a list item by its text; Chromium's gives it no
        // name (docs/browsers.md).
        let now = match crate::common::is_firefox(&browser) {
            true => r#"scope: role row → listitem "Order 1002 · Grace Hopper""#,
            false => "scope: role row → listitem",
        };
        assert_eq!(
            drift_lines(&performed),
            [r##"scope: found by css "#orders > li" with text "Order 1002" (recorded: role row)"##, now]
        );
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Selected: Order 1002" })).await;
        s.close().await;
    });
}
