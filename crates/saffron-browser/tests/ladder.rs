//! The selector ladder: for the element behind a snapshot ref, the sturdiest target replay
//! finds it by, checked by performing an action with that target and watching the page react.

use crate::common;

use common::{Scenario, run};
use saffron_browser::{LadderTarget, PageSnapshot};
use saffron_demo::DemoConfig;
use saffron_recording::{Action, Scope, Target, Tier};
use serde_json::json;

/// The ref on the first line of the snapshot that contains `needle` (the `nth` ref of it).
fn ref_on_line(snapshot: &PageSnapshot, needle: &str, nth: usize) -> String {
    let line = snapshot
        .text
        .lines()
        .find(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{}", snapshot.text));
    let reference = line.split("[ref=").nth(nth + 1).and_then(|rest| rest.split(']').next());
    reference.unwrap_or_else(|| panic!("no ref {nth} on {line:?}")).to_owned()
}

/// The ladder's target for the element on the line holding `needle`.
async fn ladder(s: &mut Scenario, needle: &str, nth: usize) -> LadderTarget {
    let snapshot = s.context.snapshot().await.expect("a snapshot");
    let reference = ref_on_line(&snapshot, needle, nth);
    s.context
        .target_for_ref(&reference)
        .await
        .unwrap_or_else(|error| panic!("{needle} ({reference}): {error}\n{}", snapshot.text))
}

/// Clicks with the recorded target, then expects the status line to say `reaction`.
async fn click_and_expect(s: &mut Scenario, target: &Target, reaction: &str) {
    let click = Action::Click { target: target.clone(), timeout_ms: None };
    let performed = s.context.perform(&click, None).await.unwrap_or_else(|failure| panic!("{target}: {failure}"));
    assert_eq!(performed.tier, target.tier, "found by the recorded tier: {performed:?}");
    assert!(performed.drift.is_empty(), "a fresh recording has no drift: {:?}", performed.drift);
    s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": reaction })).await;
}

async fn open_ladder_lab(browser: &saffron_browser::Browser) -> Scenario {
    let mut s = Scenario::start(browser, DemoConfig::default()).await;
    s.ok(json!({ "type": "goto", "url": "/lab/ladder" })).await;
    s
}

#[test]
fn a_named_button_is_recorded_by_role_and_name_with_its_other_signals() {
    run(|browser| async move {
        let mut s = open_ladder_lab(&browser).await;
        let found = ladder(&mut s, r#"button "Save""#, 0).await;
        assert!(!found.fragile);
        assert_eq!(found.target.tier, Some(Tier::Role));
        assert_eq!((found.target.role.as_deref(), found.target.name.as_deref()), (Some("button"), Some("Save")));
        // Every other signal that finds it alone is kept, for drift and fallback.
        assert_eq!(found.target.test_id.as_deref(), Some("save"));
        assert_eq!(found.target.text.as_deref(), Some("Save"));
        assert_eq!(
            (found.element.role.as_str(), found.element.name.as_str(), found.element.tag.as_str()),
            ("button", "Save", "button")
        );
        click_and_expect(&mut s, &found.target, "Clicked save").await;
        s.close().await;
    });
}

#[test]
fn fields_named_alike_are_recorded_by_their_label() {
    run(|browser| async move {
        let mut s = open_ladder_lab(&browser).await;
        // Both fields are `textbox "Quantity"`: the second one's label tells it apart.
        let found = ladder(&mut s, r#"textbox "Quantity""#, 0).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        let second = snapshot.text.lines().filter(|line| line.contains(r#"textbox "Quantity""#)).nth(1).expect("two");
        let second_ref = second.split("[ref=").nth(1).and_then(|rest| rest.split(']').next()).expect("a ref");
        let mugs = s.context.target_for_ref(second_ref).await.expect("a target");
        assert_eq!(found.target.label.as_deref(), Some("Quantity of tea"));
        assert_eq!(mugs.target.tier, Some(Tier::Label));
        assert_eq!(mugs.target.label.as_deref(), Some("Quantity of mugs"));
        assert_eq!(mugs.target.role, None, "role + name is not unique, so it is not kept");
        assert_eq!(mugs.target.css, vec!["#mug-quantity".to_owned()]);
        assert!(!mugs.fragile);
        let fill = Action::Fill { target: mugs.target.clone(), value: "3".into(), timeout_ms: None };
        s.context.perform(&fill, None).await.expect("the fill");
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Typed 3 into mug quantity" }))
            .await;
        s.close().await;
    });
}

#[test]
fn a_field_only_its_placeholder_names_is_recorded_by_placeholder() {
    run(|browser| async move {
        let mut s = open_ladder_lab(&browser).await;
        let found = ladder(&mut s, r#"textbox "Coupon code""#, 0).await;
        assert_eq!(found.target.tier, Some(Tier::Placeholder), "{:?}", found.target);
        assert_eq!(found.target.placeholder.as_deref(), Some("Coupon code"));
        // The role and the name the placeholder gives are kept too, as a second signal.
        assert_eq!(
            (found.target.role.as_deref(), found.target.name.as_deref()),
            (Some("textbox"), Some("Coupon code")),
            "{:?}",
            found.target
        );
        let fill = Action::Fill { target: found.target.clone(), value: "SPRING".into(), timeout_ms: None };
        s.context.perform(&fill, None).await.expect("the fill");
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Typed SPRING into coupon" })).await;
        s.close().await;
    });
}

#[test]
fn every_signal_the_ladder_verified_is_kept_so_a_redesign_is_drift_not_a_failure() {
    run(|browser| async move {
        let mut s = open_ladder_lab(&browser).await;
        let coupon = ladder(&mut s, r#"textbox "Coupon code""#, 0).await;
        let clear = ladder(&mut s, r#"button "Clear completed""#, 0).await;
        // The author's class is a CSS fallback the rename does not touch.
        assert_eq!(clear.target.css, vec!["button.clear-completed".to_owned()], "{:?}", clear.target);
        assert_eq!(clear.target.text.as_deref(), Some("Clear completed"));
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Redesign" } })).await;
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Redesigned" })).await;
        // The placeholder moved into an aria-label: the role and name still find the field.
        let fill = Action::Fill { target: coupon.target.clone(), value: "AUTUMN".into(), timeout_ms: None };
        let performed = s.context.perform(&fill, None).await.unwrap_or_else(|failure| panic!("{failure}"));
        assert_eq!(performed.tier, Some(Tier::Role));
        let drift: Vec<String> = performed.drift.iter().map(ToString::to_string).collect();
        assert_eq!(drift, vec![r#"placeholder "Coupon code" → "Voucher code""#.to_owned()]);
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Typed AUTUMN into coupon" })).await;
        // Renamed: neither role and name nor text finds the button, its class does.
        let click = Action::Click { target: clear.target.clone(), timeout_ms: None };
        let performed = s.context.perform(&click, None).await.unwrap_or_else(|failure| panic!("{failure}"));
        assert_eq!(performed.tier, Some(Tier::Css));
        assert!(performed.drift.len() >= 2, "the name and the text are reported: {:?}", performed.drift);
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Clicked clear completed" })).await;
        s.close().await;
    });
}

#[test]
fn a_table_row_is_found_by_the_value_its_step_names_and_reads_its_cells_apart() {
    run(|browser| async move {
        let mut s = open_ladder_lab(&browser).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        let reference = ref_on_line(&snapshot, "INV-2291", 0);
        let prefer = ["a payment".to_owned(), "INV-2291".to_owned()];
        let row = s.context.target_for_ref_preferring(&reference, &prefer).await.expect("a target");
        assert_eq!(row.target.role.as_deref(), Some("row"), "{:?}", row.target);
        assert_eq!(row.target.has_text.as_deref(), Some("INV-2291"), "{:?}", row.target);
        assert_eq!(row.target.css, vec!["tr".to_owned()], "{:?}", row.target);
        assert_eq!(row.target.name, None, "not the whole row's text: {:?}", row.target);
        assert_eq!(row.target.text, None, "not the whole row's text: {:?}", row.target);
        // With no value to go by, its first cell, which is what usually identifies a row.
        let plain = s.context.target_for_ref(&reference).await.expect("a target");
        assert_eq!(plain.target.has_text.as_deref(), Some("04/12/2026"), "{:?}", plain.target);
        assert_eq!(plain.target.text, None, "{:?}", plain.target);
        for target in [row.target, plain.target] {
            let check = Action::ExpectVisible { target, timeout_ms: None };
            s.context.perform(&check, None).await.unwrap_or_else(|failure| panic!("{failure}"));
        }
        s.close().await;
    });
}

#[test]
fn a_nameless_button_with_a_test_id_is_recorded_by_test_id() {
    run(|browser| async move {
        let mut s = open_ladder_lab(&browser).await;
        // The nameless buttons, in page order: test id, id, then two told apart by place only.
        let found = ladder(&mut s, "button [ref=", 0).await;
        assert_eq!(found.target.tier, Some(Tier::TestId), "{:?}", found.target);
        assert_eq!(found.target.test_id.as_deref(), Some("close-banner"));
        assert!(!found.fragile);
        click_and_expect(&mut s, &found.target, "Clicked close banner").await;
        s.close().await;
    });
}

#[test]
fn text_identifies_a_clickable_card() {
    run(|browser| async move {
        let mut s = open_ladder_lab(&browser).await;
        s.context.snapshot().await.expect("a snapshot");
        // The card is no element of the accessibility tree's own (a div): its text line is.
        let found = ladder(&mut s, "Gift card", 0).await;
        assert_eq!(found.target.tier, Some(Tier::Text), "{:?}", found.target);
        assert_eq!(found.target.text.as_deref(), Some("Gift card"));
        click_and_expect(&mut s, &found.target, "Clicked gift card").await;
        s.close().await;
    });
}

#[test]
fn an_id_is_the_last_sturdy_resort_and_position_is_fragile() {
    run(|browser| async move {
        let mut s = open_ladder_lab(&browser).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        let nameless: Vec<&str> =
            snapshot.text.lines().filter(|line| line.trim_start().starts_with("button [ref=")).collect();
        assert_eq!(nameless.len(), 4, "{}", snapshot.text);
        let reference =
            |line: &str| line.split("[ref=").nth(1).and_then(|rest| rest.split(']').next()).expect("a ref").to_owned();

        let refresh = s.context.target_for_ref(&reference(nameless[1])).await.expect("a target");
        assert_eq!(refresh.target.tier, Some(Tier::Css));
        assert_eq!(refresh.target.css, vec!["#refresh".to_owned()]);
        assert!(!refresh.fragile, "a hand-written id is not fragile");
        click_and_expect(&mut s, &refresh.target, "Clicked refresh").await;

        let second_tool = s.context.target_for_ref(&reference(nameless[3])).await.expect("a target");
        assert_eq!(second_tool.target.tier, Some(Tier::Css));
        assert!(second_tool.fragile, "only its position identifies it: {:?}", second_tool.target);
        assert_eq!(second_tool.target.css.len(), 1);
        assert!(second_tool.target.css[0].contains("nth-of-type(2)"), "{:?}", second_tool.target.css);
        click_and_expect(&mut s, &second_tool.target, "Clicked second tool").await;
        s.close().await;
    });
}

#[test]
fn nameless_row_checkboxes_are_recorded_within_their_row() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/rows" })).await;
        let checkbox = ladder(&mut s, "Order 1002", 1).await;
        let expected_scope = Scope {
            container: Target { role: Some("listitem".into()), ..Target::default() },
            has_text: Some("Order 1002".into()),
            has_text_regex: None,
        };
        assert_eq!(checkbox.target.within.as_deref(), Some(&expected_scope), "{:?}", checkbox.target);
        assert_eq!(checkbox.target.tier, Some(Tier::Role));
        assert_eq!(checkbox.target.role.as_deref(), Some("checkbox"));
        assert!(!checkbox.fragile);
        // The row itself: its text is its span's, so the text tier would find the span, not it.
        let row = ladder(&mut s, "Order 1002", 0).await;
        assert_eq!(row.target.text, None, "{:?}", row.target);
        let delete = ladder(&mut s, "Order 1002", 2).await;
        assert_eq!(delete.target.within.as_deref(), Some(&expected_scope));
        assert_eq!(delete.target.role.as_deref(), Some("button"));

        // The rows move; the recorded targets still find row 1002's own controls.
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Insert an order at the top" } })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Reverse the list" } })).await;
        let check = Action::Check { target: checkbox.target.clone(), timeout_ms: None };
        s.context.perform(&check, None).await.expect("the check");
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Selected: Order 1002" })).await;
        let click = Action::Click { target: delete.target.clone(), timeout_ms: None };
        s.context.perform(&click, None).await.expect("the click");
        s.ok(json!({ "type": "expectText", "target": { "css": ["#deleted"] }, "text": "Deleted: Order 1002" })).await;
        s.close().await;
    });
}

#[test]
fn a_demo_sign_in_recorded_through_the_ladder_replays() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        let email = ladder(&mut s, r#"textbox "Email""#, 0).await;
        let password = ladder(&mut s, r#"textbox "Password""#, 0).await;
        let sign_in = ladder(&mut s, r#"button "Sign in""#, 0).await;
        assert_eq!(email.target.tier, Some(Tier::Role));
        assert_eq!(email.target.label.as_deref(), Some("Email"));
        assert_eq!(email.target.test_id.as_deref(), Some("email"));
        assert_eq!(email.target.css, vec!["#email".to_owned(), r#"input[name="email"]"#.to_owned()]);
        assert_eq!(sign_in.target.test_id.as_deref(), Some("sign-in"));
        // "Sign in" is also the heading's text: the text tier is not unique, so not kept.
        assert_eq!(sign_in.target.text, None);
        for (target, value) in
            [(&email.target, saffron_demo::DEMO_EMAIL), (&password.target, saffron_demo::DEFAULT_PASSWORD)]
        {
            let fill = Action::Fill { target: target.clone(), value: value.into(), timeout_ms: None };
            s.context.perform(&fill, None).await.expect("the fill");
        }
        let click = Action::Click { target: sign_in.target.clone(), timeout_ms: None };
        s.context.perform(&click, None).await.expect("the click");
        s.ok(json!({ "type": "expectUrl", "url": "/orders" })).await;
        s.close().await;
    });
}

#[test]
fn a_date_field_shows_as_one_field_and_is_recorded_by_its_label() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/events" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        // Not its day, month and year parts, which live in the browser's own shadow tree.
        assert!(!snapshot.text.contains("spinbutton"), "{}", snapshot.text);
        let found = ladder(&mut s, r#"textbox "Delivery date""#, 0).await;
        // The field itself has no role in the accessibility tree: its label is the sturdiest.
        assert_eq!(found.target.tier, Some(Tier::Label), "{:?}", found.target);
        assert_eq!(found.target.label.as_deref(), Some("Delivery date"));
        assert_eq!(found.target.css, vec!["#when".to_owned()]);
        let fill = Action::Fill { target: found.target.clone(), value: "2026-12-01".into(), timeout_ms: None };
        s.context.perform(&fill, None).await.expect("the fill");
        s.ok(json!({ "type": "expectValue", "target": { "label": "Delivery date" }, "value": "2026-12-01" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        assert!(snapshot.text.contains(r#"textbox "Delivery date" [ref="#), "{}", snapshot.text);
        assert!(snapshot.text.contains("]: 2026-12-01"), "{}", snapshot.text);
        s.close().await;
    });
}

#[test]
fn a_checkbox_alone_in_its_grid_cell_is_recorded_within_its_row() {
    run(|browser| async move {
        let mut s = open_ladder_lab(&browser).await;
        // The row line: `row [ref=eA]: checkbox [ref=eB] | Parcel B`.
        let found = ladder(&mut s, "Parcel B", 1).await;
        let scope = found.target.within.as_deref().unwrap_or_else(|| panic!("no scope: {:?}", found.target));
        assert_eq!(scope.container.role.as_deref(), Some("row"), "the cell has no text to tell it apart");
        assert_eq!(scope.has_text.as_deref(), Some("Parcel B"));
        assert_eq!(found.target.role.as_deref(), Some("checkbox"));
        assert!(!found.fragile);
        let check = Action::Check { target: found.target.clone(), timeout_ms: None };
        s.context.perform(&check, None).await.expect("the check");
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Checked parcel B" })).await;
        s.close().await;
    });
}

#[test]
fn a_checkbox_in_a_components_shadow_root_is_recorded_within_its_row() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/shadow" })).await;
        let checkbox = ladder(&mut s, "Pay the rent", 1).await;
        let scope = checkbox.target.within.as_deref().unwrap_or_else(|| panic!("no scope: {:?}", checkbox.target));
        assert_eq!(scope.container.role.as_deref(), Some("listitem"));
        assert_eq!(scope.has_text.as_deref(), Some("Pay the rent"));
        assert_eq!(checkbox.target.role.as_deref(), Some("checkbox"));
        // A component's button that reflects an unset name as `name=""` gets no selector by it.
        let archive = ladder(&mut s, r#"button "Archive""#, 0).await;
        assert!(!archive.target.css.iter().any(|css| css.contains("[name=")), "{:?}", archive.target);
        let field = ladder(&mut s, r#"textbox "Task""#, 0).await;
        assert_eq!(field.target.tier, Some(Tier::Role));
        assert_eq!(field.target.placeholder.as_deref(), Some("What needs doing?"));
        assert_eq!(field.target.test_id.as_deref(), Some("task-title"));
        assert!(!field.target.css.is_empty(), "{:?}", field.target);
        // Replayed, each finds its element by the recorded tier, with no drift.
        let check = Action::Check { target: checkbox.target.clone(), timeout_ms: None };
        let performed = s.context.perform(&check, None).await.expect("the check");
        assert!(performed.drift.is_empty(), "{:?}", performed.drift);
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Done: Pay the rent" })).await;
        let fill = Action::Fill { target: field.target.clone(), value: "Sweep".into(), timeout_ms: None };
        let performed = s.context.perform(&fill, None).await.expect("the fill");
        assert!(performed.drift.is_empty(), "{:?}", performed.drift);
        s.close().await;
    });
}

#[test]
fn a_list_item_is_found_by_the_text_it_holds_not_by_its_position() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/todos" })).await;
        for todo in ["Buy milk", "Walk the dog"] {
            s.ok(json!({ "type": "fill", "target": { "label": "New todo" }, "value": todo })).await;
            s.ok(json!({ "type": "press", "target": { "label": "New todo" }, "key": "Enter" })).await;
        }
        let found = ladder(&mut s, "listitem", 0).await;
        assert!(!found.fragile, "{:?}", found.target);
        assert_eq!(found.target.role.as_deref(), Some("listitem"), "{:?}", found.target);
        assert_eq!(found.target.has_text.as_deref(), Some("Buy milk"), "{:?}", found.target);
        assert!(found.target.css.iter().all(|css| !css.contains("nth-of-type")), "{:?}", found.target);
        // A new todo on top moves it down: still the same item.
        s.ok(json!({ "type": "click", "target": { "role": "checkbox", "name": "Toggle Walk the dog" } })).await;
        let check = Action::ExpectVisible { target: found.target.clone(), timeout_ms: None };
        let performed = s.context.perform(&check, None).await.unwrap_or_else(|failure| panic!("{failure}"));
        assert!(performed.drift.is_empty(), "{:?}", performed.drift);
        s.close().await;
    });
}
