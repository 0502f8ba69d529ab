//! Replay produces the events a person's actions produce, and no others. Each test acts on
//! `/lab/events` in the demo app, whose controls log every event they receive, in order, and
//! mark `(synthetic)` the ones a script dispatched rather than the browser.

use crate::common;

use common::{Scenario, run};
use saffron_browser::Browser;
use saffron_demo::DemoConfig;
use serde_json::json;

/// A fresh context on the lab page.
async fn lab(browser: &Browser) -> Scenario {
    let mut s = Scenario::start(browser, DemoConfig::default()).await;
    s.ok(json!({ "type": "goto", "url": "/lab/events" })).await;
    s
}

impl Scenario {
    /// The events `control` received so far are exactly `events`, in this order.
    async fn events_are(&mut self, control: &str, events: &str) {
        self.ok(json!({ "type": "expectText", "target": { "testId": format!("log-{control}") }, "text": events }))
            .await;
    }

    async fn text_is(&mut self, test_id: &str, text: &str) {
        self.ok(json!({ "type": "expectText", "target": { "testId": test_id }, "text": text })).await;
    }
}

const TYPED: &str = "focus beforeinput:insertText input:insertText";

/// The events a click produces on a control the pointer was not over yet.
const CLICKED: &str = "pointerover pointerenter mouseover mouseenter pointermove mousemove \
    pointerdown mousedown focus pointerup mouseup click";

#[test]
fn fill_types_and_commits_nothing_until_the_field_is_left() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Coupon" }, "value": "SPRING" })).await;
        // The field listens only for `change`: typing alone applies nothing, as for a person.
        s.events_are("coupon", TYPED).await;
        s.text_is("coupon-status", "No coupon applied").await;
        // Leaving the field commits the value: the browser fires `change`, then `blur`.
        s.ok(json!({ "type": "press", "key": "Tab" })).await;
        s.events_are("coupon", &format!("{TYPED} keydown:Tab change blur")).await;
        s.text_is("coupon-status", "Applied SPRING").await;
        s.close().await;
    });
}

#[test]
fn enter_commits_the_value_and_submits_the_form() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let query = json!({ "label": "Query" });
        s.ok(json!({ "type": "fill", "target": query, "value": "ada" })).await;
        s.events_are("search", TYPED).await;
        s.text_is("search-status", "Not searched").await;
        // Chromium announces the line break (`beforeinput`) and, a single-line field taking
        // none, fires no `input`: it commits the value and submits the form instead.
        s.ok(json!({ "type": "press", "target": query, "key": "Enter" })).await;
        s.events_are(
            "search",
            &format!("{TYPED} keydown:Enter keypress:Enter beforeinput:insertLineBreak change submit keyup:Enter"),
        )
        .await;
        s.text_is("search-status", "Searched for ada").await;
        // Enter commits a field outside a form too.
        s.ok(json!({ "type": "fill", "target": { "label": "Coupon" }, "value": "SUMMER" })).await;
        s.text_is("coupon-status", "No coupon applied").await;
        s.ok(json!({ "type": "press", "target": { "label": "Coupon" }, "key": "Enter" })).await;
        s.events_are(
            "coupon",
            &format!("{TYPED} keydown:Enter keypress:Enter beforeinput:insertLineBreak change keyup:Enter"),
        )
        .await;
        s.text_is("coupon-status", "Applied SUMMER").await;
        s.close().await;
    });
}

#[test]
fn filling_the_next_field_commits_the_previous_one() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Coupon" }, "value": "SPRING" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Query" }, "value": "ada" })).await;
        // Focus moves on, as when a person clicks or tabs into the next field.
        s.events_are("coupon", &format!("{TYPED} change blur")).await;
        s.text_is("coupon-status", "Applied SPRING").await;
        s.events_are("search", TYPED).await;
        s.text_is("search-status", "Not searched").await;
        s.close().await;
    });
}

#[test]
fn fill_replaces_the_content_and_an_empty_value_deletes_it() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let coupon = json!({ "label": "Coupon" });
        s.ok(json!({ "type": "fill", "target": coupon, "value": "SPRING" })).await;
        s.ok(json!({ "type": "fill", "target": coupon, "value": "SUMMER" })).await;
        s.ok(json!({ "type": "expectValue", "target": coupon, "value": "SUMMER" })).await;
        s.ok(json!({ "type": "fill", "target": coupon, "value": "" })).await;
        s.ok(json!({ "type": "expectValue", "target": coupon, "value": "" })).await;
        s.events_are(
            "coupon",
            &format!(
                "{TYPED} beforeinput:insertText input:insertText \
                 keydown:Delete beforeinput:deleteContentForward input:deleteContentForward keyup:Delete"
            ),
        )
        .await;
        s.text_is("coupon-status", "No coupon applied").await;
        s.close().await;
    });
}

#[test]
fn fill_types_into_a_contenteditable() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let notes = json!({ "role": "textbox", "name": "Notes" });
        s.ok(json!({ "type": "fill", "target": notes, "value": "Hello" })).await;
        s.ok(json!({ "type": "expectText", "target": notes, "text": "Hello" })).await;
        s.ok(json!({ "type": "fill", "target": notes, "value": "Goodbye" })).await;
        s.ok(json!({ "type": "expectText", "target": notes, "text": "Goodbye" })).await;
        // A contenteditable never gets `change`, whoever types into it.
        s.events_are("notes", &format!("{TYPED} beforeinput:insertText input:insertText")).await;
        s.close().await;
    });
}

#[test]
fn fill_sets_a_date_and_fires_input_and_change_as_the_picker_would() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let when = json!({ "label": "Delivery date" });
        s.ok(json!({ "type": "fill", "target": when, "value": "2024-05-17" })).await;
        s.ok(json!({ "type": "expectValue", "target": when, "value": "2024-05-17" })).await;
        // No text can be typed into a date field: the value is set and the events a picker
        // fires are dispatched by the replay, the one documented exception.
        s.events_are("when", "focus input(synthetic) change(synthetic)").await;
        s.close().await;
    });
}

#[test]
fn select_focuses_the_select_and_fires_input_and_change_only_on_a_new_choice() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Coupon" }, "value": "SPRING" })).await;
        let size = json!({ "label": "Size" });
        s.ok(json!({ "type": "select", "target": size, "values": ["Medium"] })).await;
        s.ok(json!({ "type": "expectValue", "target": size, "value": "m" })).await;
        s.events_are("size", "focus input(synthetic) change(synthetic)").await;
        // Opening the select took the focus from the field, which committed it.
        s.events_are("coupon", &format!("{TYPED} change blur")).await;
        // Picking the option already chosen changes nothing, and fires nothing.
        s.ok(json!({ "type": "select", "target": size, "values": ["m"] })).await;
        s.events_are("size", "focus input(synthetic) change(synthetic)").await;
        s.ok(json!({ "type": "select", "target": size, "values": ["Large"] })).await;
        s.events_are("size", "focus input(synthetic) change(synthetic) input(synthetic) change(synthetic)").await;
        s.close().await;
    });
}

#[test]
fn check_and_uncheck_are_real_clicks() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let agree = json!({ "label": "I agree" });
        s.ok(json!({ "type": "check", "target": agree })).await;
        s.ok(json!({ "type": "expectState", "target": agree, "state": { "kind": "checked" } })).await;
        s.events_are("agree", &format!("{CLICKED} input change")).await;
        // Already checked: nothing is sent.
        s.ok(json!({ "type": "check", "target": agree })).await;
        s.events_are("agree", &format!("{CLICKED} input change")).await;
        s.ok(json!({ "type": "uncheck", "target": agree })).await;
        s.ok(json!({ "type": "expectState", "target": agree, "state": { "kind": "unchecked" } })).await;
        s.events_are("agree", &format!("{CLICKED} input change pointermove mousemove pointerdown mousedown pointerup mouseup click input change"))
            .await;
        s.close().await;
    });
}

#[test]
fn dblclick_is_two_real_clicks_then_dblclick() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        s.ok(json!({ "type": "dblclick", "target": { "role": "button", "name": "Go" } })).await;
        s.events_are("go", &format!("{CLICKED} pointerdown mousedown pointerup mouseup click dblclick")).await;
        // A click is one click: two in a row are not a double-click.
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Elsewhere" } })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Elsewhere" } })).await;
        s.events_are(
            "elsewhere",
            &format!("{CLICKED} pointermove mousemove pointerdown mousedown pointerup mouseup click"),
        )
        .await;
        s.close().await;
    });
}

#[test]
fn hover_and_click_move_a_real_pointer() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        s.ok(json!({ "type": "hover", "target": { "role": "button", "name": "Go" } })).await;
        s.events_are("go", "pointerover pointerenter mouseover mouseenter pointermove mousemove").await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Elsewhere" } })).await;
        s.events_are(
            "go",
            "pointerover pointerenter mouseover mouseenter pointermove mousemove \
             pointerout pointerleave mouseout mouseleave",
        )
        .await;
        s.events_are("elsewhere", CLICKED).await;
        s.close().await;
    });
}

/// Each character's key events, as a keyboard types it.
fn keyed(character: &str) -> String {
    format!("keydown:{character} keypress:{character} beforeinput:insertText input:insertText keyup:{character}")
}

#[test]
fn type_text_presses_a_key_per_character_where_fill_inserts_the_text() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let city = json!({ "label": "City" });
        // The suggestions come on `keyup`: a fill types no keys, so none come.
        s.ok(json!({ "type": "fill", "target": city, "value": "Am" })).await;
        s.events_are("city", TYPED).await;
        s.text_is("cities", "").await;
        s.ok(json!({ "type": "fill", "target": city, "value": "" })).await;

        let performed = s.ok(json!({ "type": "typeText", "target": city, "text": "Am" })).await;
        assert!(performed.drift.is_empty(), "{:?}", performed.drift);
        s.text_is("cities", "Amsterdam Ampthill").await;
        // Typed after what the field holds, one key at a time; no change until it is left.
        s.ok(json!({ "type": "typeText", "target": city, "text": "s" })).await;
        s.ok(json!({ "type": "expectValue", "target": city, "value": "Ams" })).await;
        s.text_is("cities", "Amsterdam").await;
        let filled =
            format!("{TYPED} keydown:Delete beforeinput:deleteContentForward input:deleteContentForward keyup:Delete");
        s.events_are("city", &format!("{filled} {} {} {}", keyed("A"), keyed("m"), keyed("s"))).await;
        s.close().await;
    });
}

#[test]
fn type_text_inserts_what_no_key_types() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let city = json!({ "label": "City" });
        s.ok(json!({ "type": "typeText", "target": city, "text": "Zü" })).await;
        s.ok(json!({ "type": "expectValue", "target": city, "value": "Zü" })).await;
        // No key of a US keyboard types "ü": it comes as text, as from an input method.
        s.events_are("city", &format!("focus {} beforeinput:insertText input:insertText", keyed("Z"))).await;
        s.close().await;
    });
}
