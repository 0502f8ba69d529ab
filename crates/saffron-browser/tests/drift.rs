//! Drift by every recorded signal, on the renamed lab page: each renamed signal is reported as
//! recorded → now while the action still passes, a target without `tier` reports drift too,
//! and a failure after a fallback names the fallback.

use crate::common;

use common::{Scenario, drift_lines, run};
use saffron_browser::{FailureKind, Signal};
use saffron_demo::DemoConfig;
use saffron_recording::Tier;
use serde_json::{Value, json};

/// The search field with every signal it had when it was recorded.
fn search_field() -> Value {
    json!({ "role": "searchbox", "name": "Search orders", "label": "Search orders", "placeholder": "Search…",
            "testId": "search", "css": ["#q", "form[role=search] input"], "tier": "role" })
}

fn search_button() -> Value {
    json!({ "role": "button", "name": "Search", "text": "Search", "testId": "go", "css": ["#go"], "tier": "role" })
}

/// Fills and submits the search on `/lab/renamed?renamed=<renamed>`: the drift of the fill
/// and of the click, after checking the search still happened.
fn search_with(renamed: &str) -> (Vec<String>, Vec<String>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let renamed = renamed.to_owned();
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": format!("/lab/renamed?renamed={renamed}") })).await;
        let fill = s.ok(json!({ "type": "fill", "target": search_field(), "value": "1002" })).await;
        let click = s.ok(json!({ "type": "click", "target": search_button() })).await;
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "text": "Searched for \"1002\"" })).await;
        s.close().await;
        tx.send((drift_lines(&fill), drift_lines(&click))).expect("sent");
    });
    rx.recv().expect("the test ran")
}

#[test]
fn a_recording_that_still_fits_reports_no_drift() {
    let (fill, click) = search_with("none");
    assert!(fill.is_empty(), "{fill:?}");
    assert!(click.is_empty(), "{click:?}");
}

#[test]
fn each_renamed_signal_is_reported_as_recorded_then_now() {
    let cases: [(&str, &[&str], &[&str]); 5] = [
        ("placeholder", &[r#"placeholder "Search…" → "Find orders…""#], &[]),
        ("testid", &[r#"testId "search" → "find""#], &[r#"testId "go" → "find-go""#]),
        ("id", &[r##"css "#q" → selects no element"##], &[r##"css "#go" → selects no element"##]),
        (
            "label",
            &[
                r#"found by placeholder "Search…" (recorded: role searchbox "Search orders")"#,
                r#"role searchbox "Search orders" → searchbox "Find orders""#,
                r#"label "Search orders" → "Find orders""#,
            ],
            &[],
        ),
        (
            "text",
            &[],
            &[
                r#"found by testId "go" (recorded: role button "Search")"#,
                r#"role button "Search" → button "Find""#,
                r#"text "Search" → "Find""#,
            ],
        ),
    ];
    for (renamed, fill_drift, click_drift) in cases {
        let (fill, click) = search_with(renamed);
        assert_eq!(fill, fill_drift, "fill drift with ?renamed={renamed}");
        assert_eq!(click, click_drift, "click drift with ?renamed={renamed}");
    }
}

#[test]
fn drift_is_structured_and_a_target_without_tier_derives_it() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/renamed?renamed=placeholder" })).await;
        // No `tier`: the placeholder is the sturdiest signal it has, so CSS firing is drift.
        let performed =
            s.ok(json!({ "type": "fill", "target": { "placeholder": "Search…", "css": ["#q"] }, "value": "x" })).await;
        assert_eq!(performed.tier, Some(Tier::Css));
        assert_eq!(performed.locator.as_deref(), Some(r##"css "#q""##));
        assert_eq!(
            drift_lines(&performed),
            [r##"found by css "#q" (recorded: placeholder "Search…")"##, r#"placeholder "Search…" → "Find orders…""#]
        );
        let placeholder = &performed.drift[1];
        assert_eq!(placeholder.signal, Signal::Placeholder);
        assert_eq!((placeholder.recorded.as_str(), placeholder.now.as_deref()), ("Search…", Some("Find orders…")));
        assert_eq!(placeholder.scope, 0);
        s.close().await;
    });
}

#[test]
fn a_failure_after_a_fallback_names_the_fallback() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/renamed?renamed=text" })).await;
        // The renamed button is found by its CSS fallback, and it is disabled.
        let failure = s
            .fails(json!({ "type": "click", "timeoutMs": 300,
                "target": { "role": "button", "name": "Archive", "css": ["#archive"], "tier": "role" } }))
            .await;
        assert!(matches!(failure.kind, FailureKind::NotActionable { .. }), "{failure:?}");
        assert_eq!(
            failure.message,
            r##"click button "Archive" (found by css "#archive"): not actionable after 0.3 s: the element is disabled"##
        );
        assert_eq!(failure.found_by.as_deref(), Some(r##"css "#archive""##));
        let failure = s
            .fails(json!({ "type": "expectText", "timeoutMs": 300,
                "target": { "testId": "outcome", "css": ["#missing", "#result"] }, "text": "Searched" }))
            .await;
        assert_eq!(
            failure.message,
            r##"expectText test id "outcome" (found by css "#result"): expected text "Searched", found "No search yet" (after 0.3 s)"##
        );
        // Found by the recorded locator: the message names it once, as before.
        let failure = s
            .fails(json!({ "type": "click", "timeoutMs": 300, "target": { "css": ["#archive"], "tier": "css" } }))
            .await;
        assert_eq!(failure.message, r##"click css "#archive": not actionable after 0.3 s: the element is disabled"##);
        assert_eq!(failure.found_by, None);
        s.close().await;
    });
}

/// A fallback may find a restyled element for an assertion, but never another one: an element
/// whose own text or accessible name is not the recorded one is not what the Then step checks,
/// so the check does not hold (a note "Old note" is not the note the step expects).
#[test]
fn an_assertion_never_passes_on_another_element_than_the_recorded_one() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "goto", "url": "/orders/1001" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Note" }, "value": "Old note" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Add note" } })).await;
        s.ok(json!({ "type": "expectVisible", "target": { "text": "Old note" } })).await;
        // The only note is found by the list's selector, and it is another note.
        let failure = s
            .fails(json!({ "type": "expectVisible", "timeoutMs": 300,
                "target": { "text": "Deliver before noon", "css": ["[aria-label=Notes] li"], "tier": "text" } }))
            .await;
        assert_eq!(failure.kind, FailureKind::AssertionFailed);
        assert_eq!(
            failure.message,
            r#"expectVisible text "Deliver before noon" (found by css "[aria-label=Notes] li"): expected an element with text "Deliver before noon", found text "Old note" (after 0.3 s)"#
        );
        assert_eq!(failure.found_by.as_deref(), Some(r#"css "[aria-label=Notes] li""#));

        // A renamed button is another button to an assertion, found by its test id all the same.
        s.ok(json!({ "type": "goto", "url": "/lab/renamed?renamed=text" })).await;
        let failure = s.fails(json!({ "type": "expectVisible", "timeoutMs": 300, "target": search_button() })).await;
        assert_eq!(
            failure.message,
            r#"expectVisible button "Search" (found by testId "go"): expected an element with role button "Search", found role button "Find" (after 0.3 s)"#
        );
        // A restyled one is the same element: a renamed label, placeholder or test id is drift.
        s.ok(json!({ "type": "goto", "url": "/lab/renamed?renamed=label,placeholder,testid" })).await;
        let field = json!({ "label": "Search orders", "placeholder": "Search…", "testId": "search", "css": ["#q"],
                            "tier": "label" });
        let performed = s.ok(json!({ "type": "expectVisible", "target": field })).await;
        assert_eq!(performed.tier, Some(Tier::Css));
        assert_eq!(performed.drift.len(), 4, "{:?}", drift_lines(&performed));
        s.close().await;
    });
}

/// An element whose role changed but whose name a person reads as the recorded one is the
/// recorded element to an assertion: the role is drift, as a label is. Chromium names the first
/// button "GET /pets /{petId}" (a space where `<wbr>` allows a break), the recording has no space.
#[test]
fn an_assertion_holds_when_only_the_role_changed_under_the_same_name() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/names" })).await;
        let by_name =
            json!({ "role": "link", "name": "GET /pets/{petId}", "css": ["[data-log=path]"], "tier": "role" });
        let performed = s.ok(json!({ "type": "expectVisible", "target": by_name })).await;
        // Firefox puts no space where `<wbr>` allows a break (docs/browsers.md).
        let now = if crate::common::is_firefox(&browser) { "GET /pets/{petId}" } else { "GET /pets /{petId}" };
        assert_eq!(drift_lines(&performed)[1], format!(r#"role link "GET /pets/{{petId}}" → button "{now}""#));
        let by_pattern =
            json!({ "role": "link", "nameRegex": "^Save draft$", "css": ["[data-log=draft]"], "tier": "role" });
        let performed = s.ok(json!({ "type": "expectVisible", "target": by_pattern })).await;
        assert_eq!(drift_lines(&performed)[1], r#"role link /^Save draft$/ → button "Save draft""#);
        // Another name is another element, whatever the role.
        let renamed = json!({ "role": "link", "name": "Save", "css": ["[data-log=draft]"], "tier": "role" });
        let failure = s.fails(json!({ "type": "expectVisible", "timeoutMs": 300, "target": renamed })).await;
        assert_eq!(failure.kind, FailureKind::AssertionFailed, "{failure:?}");
        s.close().await;
    });
}

/// A list filled by a fetch may gain its new entry between two tiers' queries: the text tier
/// looks a moment too early, the CSS fallback a moment later. That is not drift: the element
/// has its recorded text, so the text tier looks again and finds it.
#[test]
fn an_element_that_appears_between_two_tiers_is_found_by_the_recorded_one() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/late" })).await;
        let performed = s
            .ok(json!({ "type": "expectVisible",
                "target": { "text": "Deliver before noon", "css": ["[aria-label=Notes] li"], "tier": "text" } }))
            .await;
        assert_eq!(performed.tier, Some(Tier::Text), "{performed:?}");
        assert_eq!(performed.locator.as_deref(), Some(r#"text "Deliver before noon""#));
        assert!(performed.drift.is_empty(), "{:?}", drift_lines(&performed));
        s.close().await;
    });
}
