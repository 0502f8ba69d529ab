//! Firefox over WebDriver BiDi, the engine's first layer: the real `firefox-esr` starts headless
//! with a fresh profile, each context is isolated (a cookie one page sets is not another
//! context's), pages load and scripts run, and closing ends Firefox and removes its profile.

use saffron_browser::firefox::{Firefox, FirefoxConfig};
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::json;

#[test]
fn firefox_starts_loads_pages_in_isolated_contexts_and_leaves_nothing_behind() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let server = DemoServer::start(DemoConfig::default()).await.expect("demo");
        let firefox =
            Firefox::launch(&FirefoxConfig::default()).await.expect("firefox-esr starts (apt-get install firefox-esr)");
        let major: u32 = firefox.version().split('.').next().and_then(|major| major.parse().ok()).unwrap_or(0);
        assert!(major >= 128, "a Firefox that speaks WebDriver BiDi: {}", firefox.version());
        let profile = firefox.profile().to_path_buf();
        assert!(profile.is_dir());

        let first = firefox.new_context(&server.url()).await.expect("a context");
        let second = firefox.new_context(&server.url()).await.expect("another context");
        let landed = first.goto("/login").await.expect("loads");
        assert_eq!(landed, format!("{}/login", server.url()));
        let heading = first.evaluate("document.querySelector('h1').textContent").await.expect("evaluates");
        assert_eq!(heading, json!("Sign in"));
        first.evaluate("document.cookie = 'seen=first; path=/'").await.expect("sets a cookie");
        // A signed-out context is sent to the sign-in page, as in Chromium.
        assert!(second.goto("/orders").await.expect("loads").ends_with("/login"));
        let first_cookies = first.cookies().await.expect("cookies");
        assert!(first_cookies.contains(&("seen".to_string(), "first".to_string())), "{first_cookies:?}");
        assert!(second.cookies().await.expect("cookies").is_empty(), "contexts share no cookie");
        let thrown = first.evaluate("(() => { throw new Error('boom') })()").await.expect_err("an exception");
        assert!(thrown.to_string().contains("boom"), "{thrown}");

        first.close().await;
        second.close().await;
        assert_eq!(firefox.lost_connection(), None);
        firefox.close().await;
        assert!(!profile.exists(), "the profile is removed with Firefox");
        let _ = server.shutdown().await;
    });
}
