//! A context's signed-in state carries into another context: after a sign-in in one, a context
//! that restores its state is signed in without performing the sign-in, on the page the first
//! ended on, with the origin's `localStorage` as the first left it. A context that restores
//! nothing is not. The state's `Debug` shows no value.

use saffron_browser::ContextOptions;
use saffron_demo::DemoConfig;
use serde_json::json;

use crate::common::{Scenario, run};

#[test]
fn a_restored_state_is_signed_in_where_the_first_context_ended() {
    run(|browser| async move {
        let mut first = Scenario::start(&browser, DemoConfig::default()).await;
        first.ok(json!({ "type": "goto", "url": "/lab/storage" })).await;
        first.ok(json!({ "type": "click", "target": { "role": "button", "name": "Remember me" } })).await;
        first.sign_in().await;
        let state = first.context.storage_state().await.expect("the state");
        assert!(state.url().ends_with("/orders"), "{state:?}");
        let shown = format!("{state:?}");
        let values: Vec<&str> = state
            .cookies()
            .chain(state.local_storage())
            .map(|(_, value)| value)
            .filter(|value| !value.is_empty())
            .collect();
        assert!(!values.is_empty(), "the session cookie is in it");
        assert!(values.iter().all(|value| !shown.contains(value)), "Debug shows a value: {shown}");

        // A second context, restored: signed in, where the first ended, without a sign-in.
        let mut second = browser.new_context(ContextOptions { base_url: first.server.url() }).await.expect("context");
        let sessions_before = first.requests("POST", "/api/session").len();
        second.restore_storage_state(&state).await.expect("restored");
        assert!(second.url().await.expect("url").ends_with("/orders"));
        let heading = saffron_recording::Action::ExpectVisible {
            target: serde_json::from_value(json!({ "role": "heading", "name": "Orders" })).expect("target"),
            timeout_ms: None,
        };
        second.perform(&heading, None).await.expect("the orders page, signed in");
        assert_eq!(first.requests("POST", "/api/session").len(), sessions_before, "no sign-in was sent");
        let lab = saffron_recording::Action::Goto { url: "/lab/storage".into(), timeout_ms: None };
        second.perform(&lab, None).await.expect("the lab page");
        let remembered = serde_json::from_value(json!({ "type": "expectText", "target": { "testId": "greeting" },
            "text": "remembered by the first context" }))
        .expect("action");
        second.perform(&remembered, None).await.expect("the first context's localStorage");
        second.close().await;

        // A context that restores nothing is sent to the sign-in page.
        let mut third = browser.new_context(ContextOptions { base_url: first.server.url() }).await.expect("context");
        let orders = saffron_recording::Action::Goto { url: "/orders".into(), timeout_ms: None };
        third.perform(&orders, None).await.expect("goto");
        assert!(third.url().await.expect("url").contains("/login"), "a fresh context is not signed in");
        third.close().await;
        first.close().await;
    });
}
