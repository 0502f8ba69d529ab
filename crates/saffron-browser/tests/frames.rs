//! Targets inside iframes, on the frames lab page: a payment provider's card form on another
//! site (localhost against the page's 127.0.0.1), the bank's check in a frame inside it, and a
//! gift card form in a frame below the fold. Typing and clicking reach the frame's elements as
//! a person's would; a frame that something covers is not clicked through; a frame that is not
//! there, or is not a frame, fails saying so.

use crate::common;

use common::{Scenario, drift_lines, run};
use saffron_browser::FailureKind;
use saffron_demo::DemoConfig;
use saffron_recording::Tier;
use serde_json::{Value, json};

const CARD: &str = "#card";

/// `target` (a JSON object) looked for in the frame `frame` finds (itself a target).
fn in_frame(mut target: Value, frame: Value) -> Value {
    target["frame"] = frame;
    target
}

fn card(target: Value) -> Value {
    in_frame(target, json!({ "css": [CARD] }))
}

#[test]
fn typing_and_clicking_reach_a_cross_site_frame() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/frames" })).await;
        let number = card(json!({ "role": "textbox", "name": "Card number" }));
        let performed = s.ok(json!({ "type": "fill", "target": number, "value": "4000 0000 0000 4242" })).await;
        assert_eq!(performed.tier, Some(Tier::Role));
        assert_eq!(performed.locator.as_deref(), Some(r##"role textbox "Card number" in frame css "#card""##));
        // Inserted as Playwright's fill inserts text: one input event, in the provider's page.
        s.ok(json!({ "type": "expectText", "target": card(json!({ "css": ["#typed"] })), "text": "Typed: 1 input events" }))
            .await;
        s.ok(json!({ "type": "expectValue", "target": number, "value": "4000 0000 0000 4242" })).await;
        s.ok(json!({ "type": "click", "target": card(json!({ "role": "button", "name": "Pay" })) })).await;
        // The provider told the page, from its own site.
        let port = s.server.addr().port();
        s.ok(json!({ "type": "expectText", "target": { "role": "status" },
            "text": format!("Paid with the card ending 4242 (localhost:{port})") }))
            .await;
        // The page itself has no such button: the frame is another document.
        let failure =
            s.fails(json!({ "type": "click", "target": { "role": "button", "name": "Pay" }, "timeoutMs": 300 })).await;
        assert_eq!(failure.kind, FailureKind::NotFound, "{failure}");
        s.close().await;
    });
}

#[test]
fn a_frame_inside_a_frame_and_a_frame_below_the_fold() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/frames" })).await;
        let bank = json!({ "css": ["iframe[title=\"Bank check\"]"], "frame": { "css": [CARD] } });
        let performed = s.ok(json!({ "type": "click", "target": in_frame(json!({ "role": "button", "name": "Verify" }), bank.clone()) })).await;
        assert_eq!(
            performed.locator.as_deref(),
            Some(r##"role button "Verify" in frame css "iframe[title=\"Bank check\"]" in frame css "#card""##)
        );
        s.ok(json!({ "type": "expectVisible", "target": in_frame(json!({ "role": "button", "name": "Verified" }), bank) }))
            .await;
        // 1,600 pixels down: the page scrolls to the frame, the frame to its button.
        let gift = json!({ "css": ["iframe[title=\"Gift card\"]"] });
        s.ok(
            json!({ "type": "click", "target": in_frame(json!({ "role": "button", "name": "Redeem" }), gift.clone()) }),
        )
        .await;
        s.ok(json!({ "type": "expectText", "target": in_frame(json!({ "css": ["p"] }), gift.clone()), "text": "Redeemed" }))
            .await;
        s.ok(json!({ "type": "expectCount", "target": in_frame(json!({ "role": "button" }), gift), "count": 1 })).await;
        s.close().await;
    });
}

#[test]
fn a_covered_frame_is_not_clicked_through() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/frames?banner" })).await;
        let pay = card(json!({ "role": "button", "name": "Pay" }));
        let failure = s.fails(json!({ "type": "click", "target": pay, "timeoutMs": 500 })).await;
        assert!(matches!(failure.kind, FailureKind::NotActionable { .. }), "{failure}");
        assert!(
            failure
                .message
                .contains(r#"<div id="banner"> intercepts pointer events (it covers the frame <iframe id="card">)"#),
            "{failure}"
        );
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Accept cookies" } })).await;
        s.ok(json!({ "type": "fill", "target": card(json!({ "label": "Card number" })), "value": "5555 4444" })).await;
        s.ok(json!({ "type": "click", "target": pay })).await;
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "textRegex": "^Paid with the card ending 4444 " }))
            .await;
        s.close().await;
    });
}

#[test]
fn a_missing_frame_or_an_element_that_is_no_frame_fails_saying_so() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/frames" })).await;
        let failure = s
            .fails(json!({ "type": "click", "timeoutMs": 300,
                "target": in_frame(json!({ "role": "button", "name": "Pay" }), json!({ "css": ["#nope"] })) }))
            .await;
        assert_eq!(failure.kind, FailureKind::NotFound, "{failure}");
        assert!(failure.message.contains(r##"frame css "#nope": css "#nope": 0 matches"##), "{failure}");
        let failure = s
            .fails(json!({ "type": "click", "timeoutMs": 300,
                "target": in_frame(json!({ "role": "button", "name": "Pay" }), json!({ "css": ["h1"] })) }))
            .await;
        assert!(
            failure.message.contains(r#"frame css "h1": found <h1> by css "h1", which is not a frame"#),
            "{failure}"
        );
        s.close().await;
    });
}

#[test]
fn a_frame_found_by_a_fallback_is_drift_of_the_frame() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/frames" })).await;
        // Recorded when the provider's frame had a test id; it has only its id now.
        let frame = json!({ "testId": "card-frame", "css": ["#card"], "tier": "testId" });
        let pay = in_frame(json!({ "role": "button", "name": "Pay", "tier": "role" }), frame.clone());
        let performed = s.ok(json!({ "type": "expectVisible", "target": pay })).await;
        assert_eq!(
            drift_lines(&performed),
            [
                r##"frame: found by css "#card" (recorded: testId "card-frame")"##,
                r#"frame: testId "card-frame" → none"#
            ]
        );
        assert_eq!(performed.locator.as_deref(), Some(r##"role button "Pay" in frame css "#card""##));
        // The element itself is what was recorded: nothing of its own drifted.
        assert!(performed.drift.iter().all(|drift| drift.frame == 1), "{:?}", performed.drift);
        s.close().await;
    });
}
