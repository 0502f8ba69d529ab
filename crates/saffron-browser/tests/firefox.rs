//! Firefox over WebDriver BiDi: the same actions as in Chromium, performed through the same
//! locator ladder, actionability checks and assertions, against the demo app.

use crate::common;

use common::{Scenario, run_in};
use saffron_browser::{Engine, FailureKind};
use saffron_demo::DemoConfig;
use saffron_recording::Tier;
use serde_json::json;

#[test]
fn firefox_signs_in_and_fills_through_the_same_ladder() {
    run_in(Engine::Firefox, |browser| async move {
        let version = browser.version().await.unwrap_or_default();
        let major: u32 = version.split('.').next().and_then(|major| major.parse().ok()).unwrap_or(0);
        assert!(major >= 128, "a Firefox that speaks WebDriver BiDi: {version}");
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        let search = json!({ "role": "searchbox", "name": "Search orders" });
        let found = s.ok(json!({ "type": "fill", "target": search, "value": "grace" })).await;
        assert_eq!(found.tier, Some(Tier::Role), "the role tier fires in Firefox's accessibility tree");
        s.ok(json!({ "type": "expectValue", "target": search, "value": "grace" })).await;
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Quantity" }, "value": "3" })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "order-total" }, "text": "Total: €13.50" })).await;
        let failure = s
            .fails(json!({ "type": "fill", "target": { "label": "Gift wrap" }, "value": "yes", "timeoutMs": 2000 }))
            .await;
        assert!(matches!(failure.kind, FailureKind::NotActionable { .. }), "{failure}");
        s.close().await;
    });
}

/// A desktop profile is emulated in Firefox as in Chromium, in every tab of the context: the
/// page sees its viewport, pixel ratio and user agent, and a click is the mouse's (in Firefox's
/// own order of pointer and mouse events).
#[test]
fn firefox_emulates_a_desktop_profile_in_every_tab() {
    let config = saffron_browser::BrowserConfig {
        engine: Engine::Firefox,
        device: Some(saffron_browser::device("Desktop Firefox HiDPI").expect("a known device")),
        ..saffron_browser::BrowserConfig::default()
    };
    let browser = common::runtime().block_on(saffron_browser::Browser::launch(config)).expect("Firefox starts");
    common::runtime().block_on(async {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        let reads = |id: &str, text: &str| json!({ "type": "expectText", "target": { "testId": id }, "text": text });
        s.ok(json!({ "type": "goto", "url": "/lab/device" })).await;
        s.ok(reads("width", "1280")).await;
        s.ok(reads("ratio", "2")).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "agent" }, "textRegex": "rv:112\\.0\\) Gecko/20100101 Firefox/112\\.0$" }))
            .await;
        s.ok(json!({ "type": "goto", "url": "/lab/events" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Go" } })).await;
        s.ok(reads(
            "log-go",
            "pointerover pointerenter pointermove mouseover mouseenter mousemove pointerdown mousedown focus pointerup \
             mouseup click",
        ))
        .await;
        // A tab the page opens is the same device.
        s.sign_in().await;
        s.ok(json!({ "type": "click", "target": { "role": "link", "name": "Open invoice of #1001" } })).await;
        let switch = common::act(json!({ "type": "switchTab", "urlPattern": "/invoices/1001$" }));
        s.context.perform(&switch, Some(std::time::Duration::from_secs(5))).await.expect("the invoice's tab");
        s.ok(json!({ "type": "goto", "url": "/lab/device" })).await;
        s.ok(reads("ratio", "2")).await;
        s.close().await;
    });
    common::runtime().block_on(browser.close());
}
