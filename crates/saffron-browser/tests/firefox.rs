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
