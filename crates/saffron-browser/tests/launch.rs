//! Finding and launching Chromium, and what a missing one says.

use crate::common;

use std::path::Path;

use common::run;
use saffron_browser::{Browser, BrowserConfig, BrowserError, ContextOptions, find_chromium};
use saffron_recording::Action;

#[test]
fn a_missing_chromium_names_the_install_command() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let missing = Path::new("/nonexistent/chromium");
    let error = runtime.block_on(find_chromium(Some(missing))).expect_err("no Chromium there");
    assert!(matches!(&error, BrowserError::NotFound { searched } if searched == &[missing.to_path_buf()]));
    let message = error.to_string();
    assert!(message.contains("apt-get install chromium"), "{message}");
    assert!(message.contains("/nonexistent/chromium"), "{message}");
    assert!(message.contains("SAFFRON_CHROMIUM"), "{message}");
    // Launching with it fails the same way, before anything is started.
    let config = BrowserConfig { executable: Some(missing.to_path_buf()), ..BrowserConfig::default() };
    let error = runtime.block_on(Browser::launch(config)).expect_err("nothing to launch");
    assert!(error.to_string().contains("apt-get install chromium"), "{error}");
}

#[test]
fn a_configured_executable_is_used_as_is() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let found = runtime.block_on(find_chromium(Some(Path::new("/bin/sh")))).expect("an executable");
    assert_eq!(found, Path::new("/bin/sh"));
    // A directory or a plain file is not an executable.
    assert!(runtime.block_on(find_chromium(Some(Path::new("/tmp")))).is_err());
}

#[test]
fn a_program_that_is_not_chromium_fails_to_launch() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let config = BrowserConfig { executable: Some("/bin/false".into()), ..BrowserConfig::default() };
    let error = runtime.block_on(Browser::launch(config)).expect_err("/bin/false opens no DevTools endpoint");
    assert!(matches!(error, BrowserError::Launch { .. }), "{error}");
    assert!(error.to_string().contains("/bin/false"), "{error}");
}

#[test]
fn contexts_are_isolated_and_closable() {
    run(|browser| async move {
        assert!(browser.process_id().is_some());
        let server = saffron_demo::DemoServer::start(saffron_demo::DemoConfig::default()).await.expect("demo");
        let options = ContextOptions { base_url: server.url() };
        let mut first = browser.new_context(options.clone()).await.expect("a context");
        let mut second = browser.new_context(options).await.expect("another context");
        let sign_in: Vec<Action> = serde_json::from_value(serde_json::json!([
            { "type": "goto", "url": "/login" },
            { "type": "fill", "target": { "label": "Email" }, "value": saffron_demo::DEMO_EMAIL },
            { "type": "fill", "target": { "label": "Password" }, "value": saffron_demo::DEFAULT_PASSWORD },
            { "type": "click", "target": { "role": "button", "name": "Sign in" } },
            { "type": "expectUrl", "url": "/orders" }
        ]))
        .expect("actions");
        for action in &sign_in {
            first.perform(action, None).await.expect("signed in");
        }
        // The second context has its own cookies: still signed out.
        let orders: Action =
            serde_json::from_value(serde_json::json!({ "type": "goto", "url": "/orders" })).expect("goto");
        second.perform(&orders, None).await.expect("navigates");
        assert_eq!(second.url().await.expect("url"), format!("{}/login", server.url()));
        let png = first.screenshot().await.expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
        first.close().await;
        second.close().await;
        server.shutdown().await.expect("demo stops");
    });
}
