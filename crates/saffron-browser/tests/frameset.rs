//! A legacy back office built as a real `<frameset>` (the demo's Meridian lab): a role-tier
//! action in the main frame right after that frame navigated, again and again. Each click
//! navigates the frame, and the next action looks in the new document at once: the locator must
//! never hold on to the document, or the realm, the frame had before.

use crate::common;

use common::{Scenario, run};
use saffron_demo::DemoConfig;
use saffron_recording::Tier;
use serde_json::{Value, json};

fn in_main(target: Value) -> Value {
    let mut target = target;
    target["frame"] = json!({ "css": ["frame[name=\"main\"]"] });
    target
}

/// A hundred rounds, and forty more at once in a second context on a slowed-down app: the
/// stall this guards against (an accessibility query on the document a frame had just replaced,
/// which Chromium never answers) showed about once in a few hundred rounds under load.
#[test]
fn a_frame_that_navigates_is_acted_in_at_once_a_hundred_times() {
    run(|browser| async move {
        let rounds = |latency: bool, count: usize| {
            let browser = browser.clone();
            async move {
                let mut config = DemoConfig::default();
                if latency {
                    config.faults.insert(saffron_demo::Fault::Latency);
                }
                let mut s = Scenario::start(&browser, config).await;
                s.ok(json!({ "type": "goto", "url": "/lab/meridian" })).await;
                let post = in_main(json!({ "role": "link", "name": "Post a payment" }));
                let back = in_main(json!({ "role": "link", "name": "Back to menu" }));
                for round in 0..count {
                    // A short timeout: a stale document would hang every attempt until it ran out.
                    let forward = s.ok(json!({ "type": "click", "target": post, "timeoutMs": 3000 })).await;
                    assert_eq!(forward.tier, Some(Tier::Role), "round {round}");
                    let returned = s.ok(json!({ "type": "click", "target": back, "timeoutMs": 3000 })).await;
                    assert_eq!(returned.tier, Some(Tier::Role), "round {round}");
                }
                s.close().await;
            }
        };
        tokio::join!(rounds(false, 100), rounds(true, 40));
    });
}

/// Posting the frame's form, then at once a link that both the form and the page after it
/// have ("Back to menu"), with every page slowed down: the click must not land on the form's
/// page while the post is on its way (it would cancel the post), and every payment is posted.
#[test]
fn a_form_posted_in_a_frame_is_waited_for_before_the_next_action() {
    run(|browser| async move {
        let mut config = DemoConfig::default();
        config.faults.insert(saffron_demo::Fault::Latency);
        let mut s = Scenario::start(&browser, config).await;
        s.ok(json!({ "type": "goto", "url": "/lab/meridian" })).await;
        let post_link = in_main(json!({ "role": "link", "name": "Post a payment" }));
        let payee = in_main(json!({ "css": ["#ctl00_MainContent_txtPayee"] }));
        let post = in_main(json!({ "role": "button", "name": "Post" }));
        let back = in_main(json!({ "role": "link", "name": "Back to menu" }));
        let posted = in_main(json!({ "css": ["#ctl00_MainContent_lblRef"] }));
        for round in 1..=10 {
            s.ok(json!({ "type": "click", "target": post_link })).await;
            s.ok(json!({ "type": "fill", "target": payee, "value": format!("ACME {round}") })).await;
            s.ok(json!({ "type": "click", "target": post })).await;
            // No check in between: the form's page has a "Back to menu" link too.
            s.ok(json!({ "type": "click", "target": back })).await;
        }
        s.ok(json!({ "type": "click", "target": post_link })).await;
        s.ok(json!({ "type": "fill", "target": payee, "value": "last" })).await;
        s.ok(json!({ "type": "click", "target": post })).await;
        s.ok(json!({ "type": "expectText", "target": posted, "text": "PAY-0011" })).await;
        s.close().await;
    });
}
