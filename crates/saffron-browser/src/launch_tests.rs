//! What Chromium opens at launch: nothing. Here rather than in `tests/`, since it asks the
//! browser for its targets over a call the crate keeps to itself.

use serde_json::{Value, json};

use crate::browser::{Browser, BrowserConfig};

/// Without `--no-startup-window` Chromium opens a new-tab page at launch, which the run never
/// uses and which costs the first scenario about a second of browser work.
#[test]
fn a_launched_browser_has_no_page_until_a_context_opens_one() {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
    let pages = runtime.block_on(async {
        let browser = Browser::launch(BrowserConfig::default()).await.expect("Chromium launches");
        let targets = browser.call("Target.getTargets", json!({})).await;
        browser.close().await;
        let targets = targets.expect("the browser lists its targets");
        let infos = targets.get("targetInfos").and_then(Value::as_array).cloned().unwrap_or_default();
        infos
            .iter()
            .filter(|info| info.get("type").and_then(Value::as_str) == Some("page"))
            .map(|info| info.get("url").and_then(Value::as_str).unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    });
    assert!(pages.is_empty(), "pages open at launch: {pages:?}");
}
