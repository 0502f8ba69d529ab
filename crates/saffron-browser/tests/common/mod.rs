//! Shared scaffolding: one Chromium per test binary, one demo app and one context per test.
//!
//! The browser lives on a static runtime (a `#[tokio::test]` runtime dies with its test, and
//! the browser's connection task with it). Tests lease it; the last lease to end closes it,
//! after a short grace in which a test starting on another thread takes it over instead. So the
//! suite pays for one launch, and no Chromium outlives the binary.

#![allow(dead_code)] // each test binary uses its own subset of the helpers

use std::future::Future;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use saffron_browser::{ActionFailure, Browser, BrowserConfig, Context, ContextOptions, Engine, Performed};
use saffron_demo::{DEFAULT_PASSWORD, DEMO_EMAIL, DemoConfig, DemoServer, RequestLog};
use saffron_recording::Action;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

pub(crate) fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a Tokio runtime for the tests")
    })
}

#[derive(Default)]
struct Pool {
    browser: Option<Browser>,
    active: usize,
}

/// One pool per engine: Chromium's, Firefox's.
static POOLS: [Mutex<Pool>; 2] =
    [Mutex::new(Pool { browser: None, active: 0 }), Mutex::new(Pool { browser: None, active: 0 })];
static POOL_CHANGED: Condvar = Condvar::new();

fn pool(engine: Engine) -> MutexGuard<'static, Pool> {
    let index = Engine::ALL.iter().position(|known| *known == engine).unwrap_or(0);
    POOLS[index].lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Returned to the pool when a test ends, even by panicking.
struct Lease(Engine);

impl Drop for Lease {
    fn drop(&mut self) {
        let mut guard = pool(self.0);
        guard.active -= 1;
        POOL_CHANGED.notify_all();
        if guard.active > 0 {
            return;
        }
        // Another test thread may be about to start; give it the browser rather than
        // relaunching.
        let (mut guard, _) = POOL_CHANGED
            .wait_timeout_while(guard, Duration::from_millis(500), |pool| pool.active == 0)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if guard.active == 0
            && let Some(browser) = guard.browser.take()
        {
            drop(guard);
            runtime().block_on(browser.close());
        }
    }
}

fn lease(engine: Engine) -> (Browser, Lease) {
    let mut guard = pool(engine);
    if guard.browser.is_none() {
        // Launched under the lock, so concurrent tests wait for this one launch. A missing
        // browser fails the test with the install hint; nothing is skipped.
        let browser = runtime()
            .block_on(Browser::launch(BrowserConfig { engine, ..BrowserConfig::default() }))
            .unwrap_or_else(|error| panic!("these tests need {engine}: {error}"));
        guard.browser = Some(browser);
    }
    guard.active += 1;
    let browser = guard.browser.clone().expect("launched above");
    (browser, Lease(engine))
}

/// Runs a test body with the shared Chromium (or `$SAFFRON_TEST_ENGINE`'s browser).
pub fn run<F, Fut>(test: F)
where
    F: FnOnce(Browser) -> Fut,
    Fut: Future<Output = ()>,
{
    // SAFFRON_TEST_ENGINE=firefox runs the whole suite in Firefox, to see where it differs.
    let engine = std::env::var("SAFFRON_TEST_ENGINE").ok().and_then(|name| Engine::parse(&name));
    run_in(engine.unwrap_or(Engine::Chromium), test);
}

/// Whether `browser` is Firefox, for what it does otherwise (each such place says why).
pub fn is_firefox(browser: &Browser) -> bool {
    browser.config().engine == Engine::Firefox
}

/// Runs a test body with the shared browser of `engine`.
pub fn run_in<F, Fut>(engine: Engine, test: F)
where
    F: FnOnce(Browser) -> Fut,
    Fut: Future<Output = ()>,
{
    let (browser, lease) = lease(engine);
    runtime().block_on(test(browser));
    drop(lease);
}

/// An action from its recording JSON, as recordings hold them.
/// Each drift line of a performed action, as reports write it.
pub fn drift_lines(performed: &Performed) -> Vec<String> {
    performed.drift.iter().map(ToString::to_string).collect()
}

pub fn act(value: Value) -> Action {
    serde_json::from_value(value.clone()).unwrap_or_else(|error| panic!("invalid action {value}: {error}"))
}

/// One test's demo app and browser context.
pub struct Scenario {
    pub server: DemoServer,
    pub context: Context,
}

impl Scenario {
    pub async fn start(browser: &Browser, config: DemoConfig) -> Scenario {
        let server = DemoServer::start(config).await.expect("the demo app starts");
        let context =
            browser.new_context(ContextOptions { base_url: server.url() }).await.expect("a fresh browser context");
        Scenario { server, context }
    }

    /// Performs the action and expects it to succeed.
    pub async fn ok(&mut self, action: Value) -> Performed {
        let parsed = act(action.clone());
        match self.context.perform(&parsed, None).await {
            Ok(performed) => performed,
            Err(failure) => panic!("{action} failed: {failure} ({failure:?})"),
        }
    }

    /// Expects the element with this test id to show the text.
    pub async fn shows(&mut self, test_id: &str, text: &str) {
        self.ok(json!({ "type": "expectText", "target": { "testId": test_id }, "text": text, "timeoutMs": 2000 }))
            .await;
    }

    /// Performs the action and expects it to fail.
    pub async fn fails(&mut self, action: Value) -> ActionFailure {
        let parsed = act(action.clone());
        match self.context.perform(&parsed, None).await {
            Ok(performed) => panic!("{action} should have failed, but passed: {performed:?}"),
            Err(failure) => failure,
        }
    }

    /// Signs in as the demo user through the login form and lands on the orders page.
    pub async fn sign_in(&mut self) {
        self.ok(json!({ "type": "goto", "url": "/login" })).await;
        self.ok(json!({ "type": "fill", "target": { "role": "textbox", "name": "Email" }, "value": DEMO_EMAIL })).await;
        self.ok(json!({ "type": "fill", "target": { "label": "Password" }, "value": DEFAULT_PASSWORD })).await;
        self.ok(json!({ "type": "click", "target": { "role": "button", "name": "Sign in" } })).await;
        self.ok(json!({ "type": "expectUrl", "url": "/orders" })).await;
    }

    /// The demo's request log, filtered to one method and path.
    pub fn requests(&self, method: &str, path: &str) -> Vec<RequestLog> {
        self.server.requests().into_iter().filter(|request| request.method == method && request.path == path).collect()
    }

    pub async fn close(self) {
        self.context.close().await;
        self.server.shutdown().await.expect("the demo app stops");
    }
}
