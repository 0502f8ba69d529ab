//! Per-action overhead: many fills, clicks and assertions on one page, timed.
//! Run with `--nocapture` to see the numbers.

use crate::common;

use std::time::{Duration, Instant};

use common::{Scenario, act, run};
use saffron_demo::DemoConfig;
use serde_json::json;

const ROUNDS: u32 = 50;

#[test]
fn per_action_overhead() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        let cases = [
            (
                "fill (role)",
                json!({ "type": "fill", "target": { "role": "textbox", "name": "Customer" }, "value": "Ada" }),
            ),
            ("fill (label)", json!({ "type": "fill", "target": { "label": "Customer" }, "value": "Grace" })),
            // As recordings hold targets: every signal besides the one that fires is read back
            // and compared (drift), one page call more per action.
            (
                "fill (role, all signals)",
                json!({ "type": "fill", "value": "Ada",
                    "target": { "role": "textbox", "name": "Customer", "label": "Customer", "testId": "customer",
                                "css": ["#customer"], "tier": "role" } }),
            ),
            ("fill (testId)", json!({ "type": "fill", "target": { "testId": "customer" }, "value": "Alan" })),
            ("click (role)", json!({ "type": "click", "target": { "role": "checkbox", "name": "Gift wrap" } })),
            (
                "click (role, all signals)",
                json!({ "type": "click",
                    "target": { "role": "checkbox", "name": "Gift wrap", "testId": "gift", "css": ["#gift"], "tier": "role" } }),
            ),
            ("click (css)", json!({ "type": "click", "target": { "css": ["#gift"] } })),
            ("hover (css)", json!({ "type": "hover", "target": { "css": ["#gift"] } })),
            ("select (label)", json!({ "type": "select", "target": { "label": "Product" }, "values": ["Mugs"] })),
            ("press (page)", json!({ "type": "press", "key": "Shift" })),
            (
                "expectText (testId)",
                json!({ "type": "expectText", "target": { "testId": "order-total" }, "text": "Total: €7.00" }),
            ),
            (
                "expectVisible (role)",
                json!({ "type": "expectVisible", "target": { "role": "heading", "name": "New order" } }),
            ),
        ];
        let mut report = Vec::new();
        for (name, action) in cases {
            let action = act(action);
            let started = Instant::now();
            for _ in 0..ROUNDS {
                s.context.perform(&action, None).await.unwrap_or_else(|failure| panic!("{name}: {failure}"));
            }
            let each = started.elapsed() / ROUNDS;
            report.push(format!("{name}: {:.1} ms", each.as_secs_f64() * 1000.0));
            // Generous: this guards against a pathological regression (say, a fixed sleep per
            // action), not against a slow machine.
            assert!(each < Duration::from_millis(400), "{name} took {each:?} per action");
        }
        eprintln!("per-action overhead over {ROUNDS} rounds: {}", report.join(", "));
        s.close().await;
    });
}
