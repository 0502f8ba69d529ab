//! A context emulates the device of the browser's configuration (`--device`): the page sees
//! the device's viewport, pixel ratio, user agent and touch screen, and a click on a touch
//! screen is a tap (touch events, then the click the browser makes of them). Without a device
//! the page sees a desktop window and a mouse. `/lab/device` shows what the page sees;
//! `/lab/events` logs the events a control receives.

use std::time::Duration;

use saffron_browser::{Browser, BrowserConfig, device};
use saffron_demo::DemoConfig;
use serde_json::json;

use crate::common::{Scenario, act, run};

impl Scenario {
    /// The element with this test id shows exactly `text`.
    async fn reads(&mut self, test_id: &str, text: &str) {
        self.ok(json!({ "type": "expectText", "target": { "testId": test_id }, "text": text })).await;
    }
}

fn on_device(name: &str) -> Browser {
    let config = BrowserConfig { device: Some(device(name).expect("a known device")), ..BrowserConfig::default() };
    crate::common::runtime().block_on(Browser::launch(config)).expect("Chromium starts")
}

#[test]
fn a_context_on_a_phone_is_the_phone_and_its_clicks_are_taps() {
    let browser = on_device("iPhone 15");
    crate::common::runtime().block_on(async {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/device" })).await;
        s.reads("width", "393").await;
        s.reads("ratio", "3").await;
        s.reads("pointer", "coarse").await;
        s.reads("touch", "5").await;
        s.ok(
            json!({ "type": "expectText", "target": { "testId": "agent" }, "textRegex": "^Mozilla/5\\.0 \\(iPhone; " }),
        )
        .await;
        // A tap, as on a phone: the touch's pointer and touch events, then the mouse events
        // the browser makes of it for compatibility, and the click.
        s.ok(json!({ "type": "goto", "url": "/lab/events" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Go" } })).await;
        s.reads(
            "log-go",
            "pointerover pointerenter pointerdown touchstart pointerup pointerout pointerleave touchend mouseover \
             mouseenter mousemove mousedown focus mouseup click",
        )
        .await;
        s.close().await;
    });
    crate::common::runtime().block_on(browser.close());
}

#[test]
fn without_a_device_the_page_sees_a_desktop_window_and_its_clicks_are_the_mouse() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/device" })).await;
        // (Headless Chromium reports a coarse pointer and one touch point of its own, whatever
        // the machine: those say nothing about a desktop, so only the window and the events
        // a click makes are read here.)
        s.reads("width", "1280").await;
        s.ok(json!({ "type": "goto", "url": "/lab/events" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Go" } })).await;
        // The mouse's events, no touch (Firefox sends `pointermove` before `mouseover`).
        let events = match crate::common::is_firefox(&browser) {
            true => "pointerover pointerenter pointermove mouseover mouseenter mousemove",
            false => "pointerover pointerenter mouseover mouseenter pointermove mousemove",
        };
        s.reads("log-go", &format!("{events} pointerdown mousedown focus pointerup mouseup click")).await;
        s.close().await;
    });
}

#[test]
fn a_tab_the_page_opens_is_the_same_device() {
    let browser = on_device("Pixel 7");
    crate::common::runtime().block_on(async {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        // The invoice opens in a new tab.
        s.ok(json!({ "type": "click", "target": { "role": "link", "name": "Open invoice of #1001" } })).await;
        let switch = act(json!({ "type": "switchTab", "urlPattern": "/invoices/1001$" }));
        s.context.perform(&switch, Some(Duration::from_secs(5))).await.expect("the invoice's tab");
        s.ok(json!({ "type": "goto", "url": "/lab/device" })).await;
        s.reads("width", "412").await;
        s.reads("pointer", "coarse").await;
        s.close().await;
    });
    crate::common::runtime().block_on(browser.close());
}

#[test]
fn a_desktop_profile_sets_the_window_the_pixel_ratio_and_the_user_agent() {
    let browser = on_device("Desktop Chrome HiDPI");
    crate::common::runtime().block_on(async {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/device" })).await;
        s.reads("width", "1280").await;
        s.reads("ratio", "2").await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "agent" }, "textRegex": "Chrome/113\\.0\\.5672\\.53 Safari/537\\.36$" }))
            .await;
        s.close().await;
    });
    crate::common::runtime().block_on(browser.close());
}
