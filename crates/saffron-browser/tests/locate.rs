//! Target resolution against the demo app: each tier firing, drift when the demo's drift
//! switches take the sturdier locators away, ambiguity, and what a miss reports.

use crate::common;

use common::{Scenario, drift_lines, run};
use saffron_browser::FailureKind;
use saffron_demo::{DemoConfig, Drift};
use saffron_recording::Tier;
use serde_json::json;

fn with_drift(drift: Drift) -> DemoConfig {
    let mut config = DemoConfig::default();
    config.drift.insert(drift);
    config
}

#[test]
fn role_tier_uses_the_accessible_name() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        let performed = s
            .ok(json!({ "type": "expectVisible",
                "target": { "role": "button", "name": "Sign in", "testId": "sign-in", "tier": "role" } }))
            .await;
        assert_eq!(performed.tier, Some(Tier::Role));
        assert!(performed.drift.is_empty(), "{:?}", performed.drift);
        // The name comes from the <label for>, as assistive technology computes it.
        let performed =
            s.ok(json!({ "type": "expectVisible", "target": { "role": "textbox", "name": "Email" } })).await;
        assert_eq!(performed.tier, Some(Tier::Role));
        s.close().await;
    });
}

#[test]
fn label_placeholder_test_id_text_and_css_tiers_fire() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        let cases = [
            (json!({ "label": "Search orders", "tier": "label" }), Tier::Label),
            (json!({ "placeholder": "Customer name", "tier": "placeholder" }), Tier::Placeholder),
            (json!({ "testId": "search", "tier": "testId" }), Tier::TestId),
            (json!({ "text": "Open invoice of #1001", "tier": "text" }), Tier::Text),
            (json!({ "css": ["#search"], "tier": "css" }), Tier::Css),
        ];
        for (target, tier) in cases {
            let performed = s.ok(json!({ "type": "expectVisible", "target": target })).await;
            assert_eq!(performed.tier, Some(tier), "{target}");
            assert!(performed.drift.is_empty(), "{target}: {:?}", performed.drift);
        }
        // CSS fallbacks are tried in order; an ambiguous one gives way to the next.
        let performed = s.ok(json!({ "type": "click", "target": { "css": ["button", "#export"] } })).await;
        assert_eq!(performed.tier, Some(Tier::Css));
        s.close().await;
    });
}

#[test]
fn exact_label_match_keeps_note_and_notes_apart() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "goto", "url": "/orders/1001" })).await;
        // "Notes" labels the list (aria-label), "Note" the textarea: both are exact matches
        // of different texts, so neither is ambiguous.
        let performed = s.ok(json!({ "type": "fill", "target": { "label": "Note" }, "value": "Ring twice" })).await;
        assert_eq!(performed.tier, Some(Tier::Label));
        s.ok(json!({ "type": "expectValue", "target": { "css": ["#note"] }, "value": "Ring twice" })).await;
        // The empty list has no box: hidden until a note is added.
        s.ok(json!({ "type": "expectHidden", "target": { "label": "Notes" } })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Add note" } })).await;
        let performed = s.ok(json!({ "type": "expectVisible", "target": { "label": "Notes" } })).await;
        assert_eq!(performed.tier, Some(Tier::Label));
        let performed =
            s.ok(json!({ "type": "expectText", "target": { "label": "Notes" }, "text": "Ring twice" })).await;
        assert_eq!(performed.tier, Some(Tier::Label));
        s.close().await;
    });
}

#[test]
fn renamed_label_drifts_from_role_to_test_id() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, with_drift(Drift::RenamedLabel)).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        let performed = s
            .ok(json!({ "type": "fill", "value": "demo@saffron.test",
                "target": { "role": "textbox", "name": "Email", "label": "Email", "testId": "email", "tier": "role" } }))
            .await;
        assert_eq!(performed.tier, Some(Tier::TestId));
        // Role → testId is drift, and so is every signal the rename changed.
        assert_eq!(
            drift_lines(&performed),
            [
                r#"found by testId "email" (recorded: role textbox "Email")"#,
                r#"role textbox "Email" → textbox "E-mail address""#,
                r#"label "Email" → "E-mail address""#,
            ]
        );
        s.ok(json!({ "type": "expectValue", "target": { "role": "textbox", "name": "E-mail address" },
            "value": "demo@saffron.test" }))
            .await;
        s.close().await;
    });
}

#[test]
fn confirm_step_sends_rows_found_by_a_search_to_the_confirmation_too() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, with_drift(Drift::ConfirmStep)).await;
        s.sign_in().await;
        // The search re-renders the rows in the page's script, not on the server.
        s.ok(json!({ "type": "fill", "target": { "role": "searchbox", "name": "Search orders" }, "value": "Ada" }))
            .await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Search" } })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "result-count" }, "text": "2 orders" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "link", "name": "#1002" } })).await;
        s.ok(json!({ "type": "expectUrl", "url": "/orders/1002/confirm" })).await;
        s.ok(json!({ "type": "expectVisible", "target": { "role": "heading", "name": "Open order #1002?" } })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Continue" } })).await;
        s.ok(json!({ "type": "expectUrl", "url": "/orders/1002" })).await;
        s.ok(json!({ "type": "expectVisible", "target": { "role": "heading", "name": "Order #1002" } })).await;
        s.close().await;
    });
}

#[test]
fn removed_test_id_drifts_to_css() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, with_drift(Drift::RemovedTestId)).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        let performed = s
            .ok(json!({ "type": "expectVisible",
                "target": { "testId": "sign-in", "css": ["#login-form button[type=submit]"], "tier": "testId" } }))
            .await;
        assert_eq!(performed.tier, Some(Tier::Css));
        assert_eq!(
            drift_lines(&performed),
            [
                r##"found by css "#login-form button[type=submit]" (recorded: testId "sign-in")"##,
                r#"testId "sign-in" → none"#
            ]
        );
        // Recorded at a weaker tier than the one that fired now is not drift.
        let performed = s
            .ok(json!({ "type": "expectVisible",
                "target": { "role": "button", "name": "Sign in", "css": ["#login-form button"], "tier": "css" } }))
            .await;
        assert_eq!(performed.tier, Some(Tier::Role));
        assert!(performed.drift.is_empty(), "{:?}", performed.drift);
        s.close().await;
    });
}

#[test]
fn several_matches_are_ambiguous_and_fall_through_to_the_next_tier() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        let failure = s.fails(json!({ "type": "click", "target": { "text": "Delete" }, "timeoutMs": 400 })).await;
        assert_eq!(failure.kind, FailureKind::Ambiguous, "{failure}");
        assert!(failure.message.contains(r#"text "Delete": 4 matches (ambiguous)"#), "{failure}");
        let performed = s
            .ok(json!({ "type": "expectVisible",
                "target": { "text": "Delete", "css": ["button[aria-label='Delete order #1002']"], "tier": "text" } }))
            .await;
        assert_eq!(performed.tier, Some(Tier::Css));
        // The element still says "Delete": only the tier drifted (the text is no longer unique).
        assert_eq!(
            drift_lines(&performed),
            [r#"found by css "button[aria-label='Delete order #1002']" (recorded: text "Delete")"#]
        );
        // nameRegex filters the role's nodes by their names.
        let failure =
            s.fails(json!({ "type": "expectVisible", "target": { "role": "link", "nameRegex": "^#100[12]$" }, "timeoutMs": 300 }))
                .await;
        assert_eq!(failure.kind, FailureKind::Ambiguous, "{failure}");
        assert!(failure.message.contains("role link /^#100[12]$/: 2 matches (ambiguous)"), "{failure}");
        let performed =
            s.ok(json!({ "type": "expectVisible", "target": { "role": "link", "nameRegex": "^#1003$" } })).await;
        assert_eq!(performed.tier, Some(Tier::Role));
        s.close().await;
    });
}

#[test]
fn not_found_lists_what_every_tier_found() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        let started = std::time::Instant::now();
        let failure = s
            .fails(json!({ "type": "click", "timeoutMs": 500,
                "target": { "role": "button", "name": "Log in", "label": "Log in", "placeholder": "Log in",
                            "testId": "log-in", "text": "Log in", "css": ["#log-in", "form > a"] } }))
            .await;
        assert!(started.elapsed() >= std::time::Duration::from_millis(500), "waited for the element");
        assert_eq!(failure.kind, FailureKind::NotFound);
        for line in [
            r#"role button "Log in": 0 matches"#,
            r#"label "Log in": 0 matches"#,
            r#"placeholder "Log in": 0 matches"#,
            r#"testId "log-in": 0 matches"#,
            r#"text "Log in": 0 matches"#,
            r##"css "#log-in": 0 matches"##,
            r#"css "form > a": 0 matches"#,
        ] {
            assert!(failure.message.contains(line), "missing {line:?} in {failure}");
        }
        assert!(failure.message.starts_with(r#"click button "Log in": no element matched within 0.5 s"#), "{failure}");
        s.close().await;
    });
}

#[test]
fn hidden_elements_are_not_in_the_role_tier() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        // The tooltip is display:none until hovered: not in the accessibility tree.
        let failure =
            s.fails(json!({ "type": "expectVisible", "target": { "role": "tooltip" }, "timeoutMs": 300 })).await;
        assert_eq!(failure.kind, FailureKind::NotFound, "{failure}");
        let failure =
            s.fails(json!({ "type": "click", "target": { "css": ["#nav"], "tier": "css" }, "timeoutMs": 200 })).await;
        assert_eq!(failure.kind, FailureKind::NotFound);
        let failure = s.fails(json!({ "type": "click", "target": { "css": ["#["] }, "timeoutMs": 200 })).await;
        assert!(failure.message.contains("invalid CSS selector"), "{failure}");
        s.close().await;
    });
}

/// A name is compared as a person reads it: Chromium's space where a path may break and a
/// zero-width space inside a label do not make the name another one. A name that matches
/// nothing says which names of that role are near it.
#[test]
fn names_match_as_shown_and_a_miss_offers_the_nearest_names() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/names" })).await;
        let log = json!({ "role": "status" });
        for (name, clicked) in [("GET /pets/{petId}", "path"), ("get/pets", "short"), ("Save", "save")] {
            let performed = s.ok(json!({ "type": "click", "target": { "role": "button", "name": name } })).await;
            assert_eq!(performed.tier, Some(Tier::Role), "{name}");
            assert!(performed.drift.is_empty(), "{name}: {:?}", drift_lines(&performed));
            s.ok(json!({ "type": "expectText", "target": log, "text": format!("Clicked {clicked}") })).await;
        }
        // Two buttons read as the same name: the role tier is ambiguous, and the element CSS
        // finds still has the recorded name, so only the test id drifted.
        let performed = s
            .ok(json!({ "type": "expectVisible",
                "target": { "role": "button", "name": "Open /orders/{id}", "testId": "gone",
                            "css": ["[data-log=orders-break]"], "tier": "role" } }))
            .await;
        if crate::common::is_firefox(&browser) {
            // Firefox puts no space at `<wbr>`, so the two names differ there and the role
            // tier finds one (docs/browsers.md).
            assert_eq!(performed.tier, Some(Tier::Role));
            assert_eq!(drift_lines(&performed), [r#"testId "gone" → none"#]);
        } else {
            assert_eq!(performed.tier, Some(Tier::Css));
            assert_eq!(
                drift_lines(&performed),
                [
                    r#"found by css "[data-log=orders-break]" (recorded: role button "Open /orders/{id}")"#,
                    r#"testId "gone" → none"#
                ]
            );
        }
        let failure = s
            .fails(json!({ "type": "click", "timeoutMs": 300, "target": { "role": "button", "name": "Save drfat" } }))
            .await;
        assert_eq!(failure.kind, FailureKind::NotFound);
        assert!(
            failure.message.ends_with(r#"role button "Save drfat": 0 matches (the nearest names: "Save draft")"#),
            "{}",
            failure.message
        );
        s.close().await;
    });
}

/// A page built with web components keeps its controls in open shadow roots. Every tier looks
/// inside them (as Playwright's locators do), a scope's text is the text a person sees there,
/// and acting on them works as on any element: focus, hit test, checkbox state.
#[test]
fn elements_in_open_shadow_roots_are_found_by_every_tier_and_acted_on() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/shadow" })).await;
        let status = json!({ "role": "status" });
        let cases = [
            (json!({ "type": "fill", "target": { "label": "Task" }, "value": "Buy bread" }), Tier::Label),
            (json!({ "type": "fill", "target": { "label": "Due in days" }, "value": "3" }), Tier::Label),
            (
                json!({ "type": "expectValue", "target": { "placeholder": "What needs doing?" }, "value": "Buy bread" }),
                Tier::Placeholder,
            ),
            (json!({ "type": "click", "target": { "testId": "add-task" } }), Tier::TestId),
        ];
        for (action, tier) in cases {
            let performed = s.ok(action.clone()).await;
            assert_eq!(performed.tier, Some(tier), "{action}");
        }
        s.ok(json!({ "type": "expectText", "target": status, "text": "Added Buy bread due in 3 days" })).await;
        // Rows whose text is in their shadow tree: a scope filters on what a person reads.
        let row = |title: &str| json!({ "role": "listitem", "hasText": title });
        s.ok(json!({ "type": "check", "target": { "role": "checkbox", "within": row("Pay the rent") } })).await;
        s.ok(json!({ "type": "expectText", "target": status, "text": "Done: Pay the rent" })).await;
        let performed =
            s.ok(json!({ "type": "click", "target": { "css": ["button"], "within": row("Water the plants") } })).await;
        assert_eq!(performed.tier, Some(Tier::Css));
        s.ok(json!({ "type": "expectText", "target": status, "text": "Deleted Water the plants" })).await;
        let performed = s.ok(json!({ "type": "expectVisible", "target": { "text": "Buy bread" } })).await;
        assert_eq!(performed.tier, Some(Tier::Text));
        s.ok(json!({ "type": "expectCount", "target": { "role": "listitem" }, "count": 2 })).await;
        // A CSS fallback inside a shadow root still selects the element alone: no drift.
        let performed = s
            .ok(json!({ "type": "expectVisible",
                "target": { "label": "Task", "placeholder": "What needs doing?", "testId": "task-title",
                            "css": ["#title", "form input[data-testid=task-title]"], "tier": "label" } }))
            .await;
        assert!(performed.drift.is_empty(), "{:?}", drift_lines(&performed));
        s.close().await;
    });
}

/// Components draw their own controls. A button's text slotted into its shadow button is part
/// of that button, and a click on the box a checkbox draws over its hidden input, inside its
/// label, reaches the checkbox (the browser forwards it), unless the box is a link.
#[test]
fn a_components_own_button_and_drawn_checkbox_take_real_clicks() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/shadow" })).await;
        let status = json!({ "role": "status" });
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Archive" } })).await;
        s.ok(json!({ "type": "expectText", "target": status, "text": "Archived" })).await;
        let reminders = json!({ "role": "checkbox", "name": "Send me reminders" });
        s.ok(json!({ "type": "check", "target": reminders })).await;
        s.ok(json!({ "type": "expectText", "target": status, "text": "Checked reminders" })).await;
        s.ok(json!({ "type": "uncheck", "target": reminders })).await;
        s.ok(json!({ "type": "expectText", "target": status, "text": "Unchecked reminders" })).await;
        let failure = s
            .fails(json!({ "type": "check", "timeoutMs": 300,
                "target": { "role": "checkbox", "name": "I accept the terms" } }))
            .await;
        assert!(failure.message.contains(r#"<a class="box"> intercepts pointer events"#), "{}", failure.message);
        s.close().await;
    });
}
