//! One scenario's browser context: its tabs and what they observed.
//!
//! A watcher task follows `Target.targetCreated` for the context, so tabs opened by the page
//! (`target=_blank`, `window.open`) are known in opening order. Each tab gets:
//! - a network task recording every request and response (and reading JSON bodies early,
//!   before a navigation lets Chromium drop them);
//! - a dialog task answering JavaScript dialogs at once (an open dialog blocks the page's
//!   scripts and therefore every one of our calls), with the armed answer or by dismissing;
//! - console streams drained on demand, so an `expectNoConsoleErrors` right after an action
//!   sees every error logged before it (see [`Context::console_errors_now`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::page::Page;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::log::EventEntryAdded;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::{EventJavascriptDialogOpening, EventWindowOpen};
use chromiumoxide::cdp::browser_protocol::target::{
    CreateTargetParams, EventTargetCreated, EventTargetDestroyed, TargetId,
};
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown, RemoteObject};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::page::ScreenshotParams;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::browser::Browser;
use crate::cdp::{self, CdpFail};
use crate::downloads::{Download, DownloadReports};
use crate::error::BrowserError;
use crate::lock;
use crate::network::{Body, NetEntry};

/// How to open a context.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextOptions {
    /// The base URL recorded URLs are relative to (a prefix: origin, path and default query).
    pub base_url: String,
}

/// How long a new tab may take to be attached before it is given up on.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(10);

/// Bodies larger than this are not read ahead of need.
const EAGER_BODY_LIMIT: f64 = 2.0 * 1024.0 * 1024.0;

/// The answer armed for the next JavaScript dialog.
#[derive(Debug, Clone)]
pub(crate) struct DialogAnswer {
    pub accept: bool,
    pub prompt_text: Option<String>,
}

/// The console streams of one tab, drained when errors are asked for.
pub(crate) struct ConsoleStreams {
    api: EventStream<EventConsoleApiCalled>,
    exceptions: EventStream<EventExceptionThrown>,
    log: EventStream<EventEntryAdded>,
}

/// One tab of the context.
pub(crate) struct Tab {
    pub target_id: String,
    /// Set once attached.
    pub page: Option<Page>,
    pub closed: bool,
    /// Attached and observed: safe to act on.
    pub ready: bool,
    /// The address the tab was opened for, as the browser announced it (a tab opened by a
    /// link: the link's address, asked for before its network log began).
    pub opened_for: String,
    /// The tab that opened this one.
    pub opener: Option<String>,
    /// The address this tab last opened a window for (`Page.windowOpen`): a new tab is
    /// announced as `about:blank`, and its first request comes before its log begins.
    pub window_opened: Option<String>,
    console: Option<ConsoleStreams>,
    /// When the tab was seen to open, and to close.
    pub opened_at: SystemTime,
    pub closed_at: Option<SystemTime>,
}

#[derive(Default)]
pub(crate) struct State {
    /// In opening order.
    pub tabs: Vec<Tab>,
    pub net: Vec<NetEntry>,
    /// (target id, request id) → index in `net` of the request's latest hop.
    pub(crate) current: HashMap<(String, String), usize>,
    /// Next response sequence number.
    pub next_seq: u64,
    pub console_errors: Vec<String>,
    /// Every console message and uncaught exception drained so far, oldest first, at most
    /// [`CONSOLE_LOG_KEPT`].
    pub console_log: Vec<crate::observed::ConsoleRecord>,
    /// Every download seen to begin, in order (other contexts' too, marked not ours).
    pub downloads: Vec<Download>,
    pub notes: Vec<String>,
    pub dialog: Option<DialogAnswer>,
    /// Set when the context shows the takeover bar (see [`crate::takeover`]).
    pub(crate) takeover: Option<crate::takeover::Wiring>,
    pub(crate) tasks: Vec<JoinHandle<()>>,
    /// Firefox: the navigation each browsing context (tab or frame) has started and not yet
    /// committed or stopped, by browsing context. Chromium's are followed through its own events
    /// (see `perform/commit.rs`).
    pub(crate) navigating: HashMap<String, Navigating>,
    /// Firefox: how many navigations were seen to start, so that an action counts only its own.
    pub(crate) navigations_started: u64,
    /// Firefox: the browsing contexts whose document has opened a file chooser. Headless Firefox
    /// never closes one, and opens no second one for the same document.
    pub(crate) chooser_opened: std::collections::HashSet<String>,
}

/// A navigation under way in one browsing context.
#[derive(Debug, Clone)]
pub(crate) struct Navigating {
    /// The tab the browsing context is in.
    pub tab: String,
    /// The browser's id for the navigation.
    pub id: String,
    /// Its place in [`State::navigations_started`].
    pub started: u64,
}

impl Tab {
    /// A tab seen to open. With its `page` it is ready at once (Firefox's tabs are observed
    /// from the moment they are announced); without, once attached (Chromium's, see `attach`).
    pub(crate) fn opened(target_id: String, page: Option<Page>, opened_for: String, opener: Option<String>) -> Tab {
        Tab {
            target_id,
            ready: page.is_some(),
            page,
            closed: false,
            opened_for,
            opener,
            window_opened: None,
            console: None,
            opened_at: SystemTime::now(),
            closed_at: None,
        }
    }
}

impl State {
    /// Adds a tab seen to open, unless it is known already.
    pub(crate) fn tab_opened(&mut self, tab: Tab) {
        if !self.tabs.iter().any(|known| known.target_id == tab.target_id) {
            self.tabs.push(tab);
        }
    }

    /// A navigation started in `context` (of `tab`): it stands for any earlier one there, which
    /// it replaces.
    pub(crate) fn navigation_started(&mut self, context: &str, tab: &str, id: &str) {
        self.navigations_started += 1;
        let navigating = Navigating { tab: tab.to_owned(), id: id.to_owned(), started: self.navigations_started };
        self.navigating.insert(context.to_owned(), navigating);
    }

    /// The navigation `id` in `context` committed or stopped (`None`: whichever it was).
    pub(crate) fn navigation_ended(&mut self, context: &str, id: Option<&str>) {
        if self.navigating.get(context).is_some_and(|navigating| id.is_none_or(|id| navigating.id == id)) {
            self.navigating.remove(context);
        }
    }

    /// Whether a navigation started in `tab` after the `mark`th is still under way.
    pub(crate) fn navigating_since(&self, tab: &str, mark: u64) -> bool {
        self.navigating.values().any(|navigating| navigating.tab == tab && navigating.started > mark)
    }

    /// Marks the tab closed, at its first report.
    pub(crate) fn tab_closed(&mut self, target_id: &str) {
        if let Some(tab) = self.tabs.iter_mut().find(|tab| tab.target_id == target_id) {
            tab.closed = true;
            tab.closed_at.get_or_insert_with(SystemTime::now);
        }
    }
}

/// State shared with the context's background tasks. `changed` wakes every waiter after each
/// update, so waits are event-driven rather than polled.
pub(crate) struct Shared {
    pub state: Mutex<State>,
    pub changed: Notify,
}

impl Shared {
    pub(crate) fn new() -> Shared {
        Shared { state: Mutex::new(State::default()), changed: Notify::new() }
    }

    pub(crate) fn update<R>(&self, change: impl FnOnce(&mut State) -> R) -> R {
        let result = change(&mut lock(&self.state));
        self.changed.notify_waiters();
        result
    }

    pub(crate) fn read<R>(&self, look: impl FnOnce(&State) -> R) -> R {
        look(&lock(&self.state))
    }
}

/// One scenario: an isolated browser context with its tabs, network log, console errors and
/// the dialog answer armed for the next dialog.
pub struct Context {
    pub(crate) browser: Browser,
    pub(crate) context_id: String,
    pub(crate) base_url: String,
    pub(crate) shared: Arc<Shared>,
    /// Target id of the tab actions go to.
    pub(crate) active: String,
    /// Responses with a sequence number from here on happened "since the step began".
    pub(crate) step_mark: u64,
    pub(crate) default_timeout: Duration,
    pub(crate) group_counter: u64,
    /// The refs snapshots gave out, and the DOM nodes behind them.
    pub(crate) refs: crate::snapshot::RefBook,
    /// Where the context's downloads are saved; `None` on a remote browser.
    pub(crate) download_folder: Option<tempfile::TempDir>,
    /// The guards of the action being performed (see [`Context::perform_guarded`]).
    pub(crate) guard: crate::guard::Guard,
    /// The interruptions waiting actions look for (see [`Context::watch_for`]).
    pub(crate) watch: crate::interruption::Watch,
    /// An action whose element drifted also reads the element's target as the ladder would
    /// record it now (see [`Context::refresh_drift`]).
    pub(crate) refresh_drift: bool,
    /// How the action being performed, or the last one, went (see [`Context::last_trail`]).
    pub(crate) trail: Mutex<crate::observed::ActionTrail>,
    pub(crate) watcher: Option<JoinHandle<()>>,
    pub(crate) closed: bool,
    /// Firefox: the last event the context's task has handled (see [`Context::caught_up`]).
    pub(crate) events_seen: Option<Arc<std::sync::atomic::AtomicU64>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("context_id", &self.context_id).field("base_url", &self.base_url).finish()
    }
}

pub(crate) fn protocol(error: CdpFail) -> BrowserError {
    match error {
        CdpFail::Dead(message) => BrowserError::Closed(message),
        other => BrowserError::Protocol(other.to_string()),
    }
}

impl Context {
    pub(crate) async fn open(browser: Browser, options: ContextOptions) -> Result<Context, BrowserError> {
        if browser.inner.firefox.is_some() {
            return crate::firefox::open_context(browser, options).await;
        }
        let _timed = crate::timing::lone_span("context open");
        let shared = Arc::new(Shared::new());
        let (created, destroyed, download_reports) = {
            let guard = browser.inner.browser.read().await;
            let chromium = guard.as_ref().ok_or_else(|| BrowserError::Closed("the browser was closed".to_owned()))?;
            // Listen before creating anything, so the first tab's creation is seen too.
            let created = chromium.event_listener::<EventTargetCreated>().await.map_err(|e| protocol(e.into()))?;
            let destroyed = chromium.event_listener::<EventTargetDestroyed>().await.map_err(|e| protocol(e.into()))?;
            let download_reports = DownloadReports::subscribe(chromium).await.map_err(|e| protocol(e.into()))?;
            (created, destroyed, download_reports)
        };
        // Disposed by the browser itself when our connection ends, however it ends: a remote
        // browser keeps nothing of a run that was killed before it could close its contexts.
        let created_context = crate::timing::lone_span("context open: Target.createBrowserContext");
        let answer =
            browser.call("Target.createBrowserContext", json!({ "disposeOnDetach": true })).await.map_err(protocol)?;
        drop(created_context);
        let context_id = answer
            .get("browserContextId")
            .and_then(Value::as_str)
            .ok_or_else(|| BrowserError::Protocol("Target.createBrowserContext returned no id".to_owned()))?
            .to_owned();
        let watcher =
            tokio::spawn(watch_targets(browser.clone(), context_id.clone(), created, destroyed, shared.clone()));
        let mut context = Context::new(browser, context_id, options.base_url, shared, watcher);
        let mut params = CreateTargetParams::new("about:blank");
        params.browser_context_id = Some(BrowserContextId::from(context.context_id.clone()));
        // Told while the first tab opens (on about:blank, which downloads nothing), instead of
        // before: a call ahead of the tab's creation made it slower.
        let downloads = crate::downloads::save_in_own_folder(&context.browser, &context.context_id);
        let first = async {
            let _timed = crate::timing::lone_span("context open: new page (create, attach, init)");
            let guard = context.browser.inner.browser.read().await;
            let chromium = guard.as_ref().ok_or_else(|| BrowserError::Closed("the browser was closed".to_owned()))?;
            tokio::time::timeout(ATTACH_TIMEOUT, chromium.new_page(params))
                .await
                .map_err(|_| BrowserError::Protocol("the first tab did not open within 10 s".to_owned()))?
                .map_err(|e| protocol(e.into()))
        };
        let (folder, first) = tokio::join!(downloads, first);
        let (folder, first) = (folder.map_err(BrowserError::Protocol)?, Page::from(first?));
        if let Some(device) = context.browser.inner.config.device {
            emulate(&first, device).await.map_err(protocol)?;
        }
        let shared = context.shared.clone();
        let task = tokio::spawn(crate::downloads::watch(download_reports, folder.path().to_owned(), shared.clone()));
        shared.update(|state| state.tasks.push(task));
        context.download_folder = Some(folder);
        context.active = first.target_id();
        let deadline = Instant::now() + ATTACH_TIMEOUT;
        let target = context.active.clone();
        let _timed = crate::timing::lone_span("context open: observed");
        let ready =
            context.wait_for(deadline, |state| state.tabs.iter().any(|tab| tab.target_id == target && tab.ready)).await;
        if !ready {
            return Err(BrowserError::Protocol("the first tab was not attached within 10 s".to_owned()));
        }
        Ok(context)
    }

    /// A context of `browser` with no tab yet, its state observed by `watcher`.
    pub(crate) fn new(
        browser: Browser,
        context_id: String,
        base_url: String,
        shared: Arc<Shared>,
        watcher: JoinHandle<()>,
    ) -> Context {
        Context {
            default_timeout: browser.inner.config.default_timeout,
            browser,
            context_id,
            base_url,
            shared,
            active: String::new(),
            step_mark: 0,
            group_counter: 0,
            guard: crate::guard::Guard::default(),
            watch: crate::interruption::Watch::default(),
            refresh_drift: false,
            trail: Mutex::new(crate::observed::ActionTrail::default()),
            refs: crate::snapshot::RefBook::default(),
            download_folder: None,
            watcher: Some(watcher),
            closed: false,
            events_seen: None,
        }
    }

    /// Waits until `condition` holds (re-checked after every update of the shared state) or the
    /// deadline passes; says which.
    pub(crate) async fn wait_for(&self, deadline: Instant, condition: impl Fn(&State) -> bool) -> bool {
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            // Registered before the check, so an update between check and wait is not missed.
            notified.as_mut().enable();
            if self.shared.read(&condition) {
                return true;
            }
            if tokio::time::timeout_at(deadline.into(), notified).await.is_err() {
                return self.shared.read(&condition);
            }
        }
    }

    /// Marks the start of a step: `waitForResponse` matches responses observed from here on.
    pub fn begin_step(&mut self) {
        self.step_mark = self.shared.read(|state| state.next_seq);
    }

    /// The tab actions go to.
    pub(crate) fn active_page(&self) -> Result<Page, BrowserError> {
        self.shared.read(|state| {
            let tab = state.tabs.iter().find(|tab| tab.target_id == self.active);
            match tab {
                Some(Tab { closed: true, .. }) => Err(BrowserError::Closed("the active tab was closed".to_owned())),
                Some(Tab { page: Some(page), .. }) => Ok(page.clone()),
                _ => Err(BrowserError::Closed("the active tab is not attached".to_owned())),
            }
        })
    }

    /// A PNG screenshot of the active tab's viewport.
    pub async fn screenshot(&self) -> Result<Vec<u8>, BrowserError> {
        let page = self.active_page()?;
        capture(&page).await
    }

    /// A PNG screenshot of the active tab's viewport in which no field shows any of `secrets`
    /// (whatever the field's type) and no text holding one is visible: they are blanked for
    /// the picture and put back after, in the page and in every frame. Fails closed: when they
    /// cannot be hidden (a frame this session cannot reach, on a remote browser that keeps it
    /// in another process), there is no picture.
    pub async fn screenshot_hiding(&self, secrets: &[&str]) -> Result<Vec<u8>, BrowserError> {
        let page = self.active_page()?;
        self.hiding(&page, secrets, || capture(&page)).await
    }

    /// Takes a picture with `capture` while no field or text of the page shows any of
    /// `secrets` (see [`Context::screenshot_hiding`]).
    pub(crate) async fn hiding<F>(
        &self,
        page: &Page,
        secrets: &[&str],
        capture: impl FnOnce() -> F,
    ) -> Result<Vec<u8>, BrowserError>
    where
        F: Future<Output = Result<Vec<u8>, BrowserError>>,
    {
        if secrets.is_empty() {
            return capture().await;
        }
        let not_hidden = |error: CdpFail| {
            BrowserError::Protocol(format!("no screenshot: the fields holding secrets could not be hidden ({error})"))
        };
        let secrets = Value::Array(secrets.iter().map(|secret| json!(secret)).collect());
        // Hidden frame by frame, the page first; put back in the opposite order.
        let mut hidden = Vec::new();
        let mut failure = None;
        match isolated_worlds(page).await {
            Ok(worlds) => {
                for world in worlds {
                    hidden.push(world.clone());
                    if let Err(error) =
                        cdp::call_in_world(page, &world, crate::js::HIDE_SECRETS, std::slice::from_ref(&secrets)).await
                    {
                        failure = Some(error);
                        break;
                    }
                }
            }
            Err(error) => failure = Some(error),
        }
        let picture = match failure {
            Some(error) => Err(not_hidden(error)),
            None => capture().await,
        };
        let mut restored = Ok(Value::Null);
        for world in hidden.into_iter().rev() {
            let outcome = cdp::call_in_world(page, &world, crate::js::RESTORE_SECRETS, &[]).await;
            if outcome.is_err() && restored.is_ok() {
                restored = outcome;
            }
        }
        match (picture, restored) {
            (Ok(png), Ok(_)) => Ok(png),
            (Err(error), _) => Err(error),
            (Ok(_), Err(error)) => Err(BrowserError::Protocol(format!(
                "the fields hidden for the screenshot could not be put back: {error}"
            ))),
        }
    }

    /// The folder this context's downloads are saved in, removed when the context closes (a
    /// remote browser reaches it only when it shares this machine's file system).
    pub fn download_folder(&self) -> Option<&std::path::Path> {
        self.download_folder.as_ref().map(tempfile::TempDir::path)
    }

    /// The active tab's URL.
    pub async fn url(&self) -> Result<String, BrowserError> {
        let page = self.active_page()?;
        Ok(page.url().await.map_err(protocol)?.unwrap_or_else(|| "about:blank".to_owned()))
    }

    /// Every console error, uncaught exception and error log entry of the context so far.
    pub async fn console_errors(&self) -> Vec<String> {
        self.console_errors_now().await
    }

    /// Drains the console streams after a round trip to every tab: events are delivered in
    /// order before a command's answer, so everything logged before this call is counted.
    pub(crate) async fn console_errors_now(&self) -> Vec<String> {
        let _timed = crate::timing::span("console errors");
        if self.browser.inner.firefox.is_some() {
            self.caught_up().await;
            return self.shared.read(|state| state.console_errors.clone());
        }
        let pages: Vec<Page> = self
            .shared
            .read(|state| state.tabs.iter().filter(|tab| !tab.closed).filter_map(|tab| tab.page.clone()).collect());
        for page in pages {
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                cdp::call(&page, "Runtime.evaluate", json!({ "expression": "0" })),
            )
            .await;
        }
        self.shared.update(|state| {
            drain_all_consoles(state);
            state.console_errors.clone()
        })
    }

    /// Closes the context and all its tabs.
    pub async fn close(mut self) {
        let _timed = crate::timing::lone_span("context close");
        self.shutdown_tasks();
        let _ =
            tokio::time::timeout(Duration::from_secs(5), dispose(self.browser.clone(), self.context_id.clone())).await;
        self.closed = true;
    }

    fn shutdown_tasks(&mut self) {
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
        for task in lock(&self.shared.state).tasks.drain(..) {
            task.abort();
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        self.shutdown_tasks();
        if !self.closed
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            // Dropped without `close` (a panicking test, a cancelled run): still free the tabs.
            runtime.spawn(dispose(self.browser.clone(), self.context_id.clone()));
        }
    }
}

/// Ends the context in its browser, with its tabs and everything it stored.
async fn dispose(browser: Browser, context_id: String) {
    match &browser.inner.firefox {
        Some(firefox) => {
            let _ = firefox.bidi.call("browser.removeUserContext", json!({ "userContext": context_id })).await;
        }
        None => {
            let _ = browser.call("Target.disposeBrowserContext", json!({ "browserContextId": context_id })).await;
        }
    }
}

/// Follows the context's page targets as they open and close.
async fn watch_targets(
    browser: Browser,
    context_id: String,
    mut created: EventStream<EventTargetCreated>,
    mut destroyed: EventStream<EventTargetDestroyed>,
    shared: Arc<Shared>,
) {
    loop {
        // Biased, like the network log: a tab's creation is queued before its destruction, so
        // a tab that closes at once (a popup that shuts itself) is still seen closed.
        tokio::select! {
            biased;
            Some(event) = created.next() => {
                let info = &event.target_info;
                let ours = info.browser_context_id.as_ref().is_some_and(|id| id.as_ref() == context_id);
                if info.r#type != "page" || !ours {
                    continue;
                }
                let target_id = info.target_id.as_ref().to_owned();
                let opened_for = info.url.clone();
                let opener = info.opener_id.as_ref().map(|id| id.as_ref().to_owned());
                shared.update(|state| state.tab_opened(Tab::opened(target_id.clone(), None, opened_for, opener)));
                let task = tokio::spawn(attach(browser.clone(), target_id, shared.clone()));
                shared.update(|state| state.tasks.push(task));
            }
            Some(event) = destroyed.next() => {
                let target_id = event.target_id.as_ref();
                shared.update(|state| {
                    state.tab_closed(target_id);
                });
            }
            else => break,
        }
    }
}

/// Gets the tab's page once chromiumoxide has attached to it, then starts observing it.
async fn attach(browser: Browser, target_id: String, shared: Arc<Shared>) {
    let deadline = Instant::now() + ATTACH_TIMEOUT;
    let page = loop {
        let page = {
            let guard = browser.inner.browser.read().await;
            let Some(chromium) = guard.as_ref() else { return };
            chromium.get_page(TargetId::from(target_id.clone())).await.ok().map(Page::from)
        };
        if let Some(page) = page {
            break page;
        }
        if Instant::now() >= deadline {
            shared.update(|state| state.notes.push(format!("a new tab ({target_id}) could not be attached")));
            return;
        }
        // chromiumoxide attaches new targets on its own; this only waits for it to finish.
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // A tab the page opens is the same device; it is emulated once attached (its first
    // request may have gone out as the desktop browser's).
    if let Some(device) = browser.inner.config.device
        && let Err(error) = emulate(&page, device).await
    {
        shared.update(|state| state.notes.push(format!("tab {target_id} could not emulate {}: {error}", device.name)));
    }
    match observe(&page, &target_id, &shared).await {
        Ok(console) => {
            shared.update(|state| {
                if let Some(tab) = state.tabs.iter_mut().find(|tab| tab.target_id == target_id) {
                    tab.page = Some(page);
                    tab.console = Some(console);
                    tab.ready = true;
                }
            });
            crate::takeover::on_attached(&target_id, &shared).await;
        }
        Err(error) => {
            shared.update(|state| state.notes.push(format!("tab {target_id} could not be observed: {error}")))
        }
    }
}

/// Makes `page` the device: its viewport and scale, its user agent, and its touch screen.
async fn emulate(page: &Page, device: &crate::Device) -> Result<(), CdpFail> {
    let metrics = json!({
        "width": device.width,
        "height": device.height,
        "deviceScaleFactor": device.scale_factor,
        "mobile": device.mobile,
        "screenWidth": device.width,
        "screenHeight": device.height,
    });
    cdp::call(page, "Emulation.setDeviceMetricsOverride", metrics).await?;
    cdp::call(page, "Emulation.setUserAgentOverride", json!({ "userAgent": device.user_agent })).await?;
    if device.touch {
        cdp::call(page, "Emulation.setTouchEmulationEnabled", json!({ "enabled": true, "maxTouchPoints": 5 })).await?;
    }
    Ok(())
}

/// Subscribes to the tab's events and starts its network and dialog tasks.
async fn observe(page: &Page, target_id: &str, shared: &Arc<Shared>) -> Result<ConsoleStreams, CdpFail> {
    let page = page.chromium("observing a tab over DevTools")?;
    let requests = page.event_listener::<EventRequestWillBeSent>().await?;
    let responses = page.event_listener::<EventResponseReceived>().await?;
    let finished = page.event_listener::<EventLoadingFinished>().await?;
    let failed = page.event_listener::<EventLoadingFailed>().await?;
    let dialogs = page.event_listener::<EventJavascriptDialogOpening>().await?;
    let console = ConsoleStreams {
        api: page.event_listener::<EventConsoleApiCalled>().await?,
        exceptions: page.event_listener::<EventExceptionThrown>().await?,
        log: page.event_listener::<EventEntryAdded>().await?,
    };
    let network = tokio::spawn(record_network(
        Page::from(page.clone()),
        target_id.to_owned(),
        NetStreams { requests, responses, finished, failed },
        shared.clone(),
    ));
    let dialog = tokio::spawn(answer_dialogs(Page::from(page.clone()), dialogs, shared.clone()));
    let opens = page.event_listener::<EventWindowOpen>().await?;
    let opens = tokio::spawn(note_window_opens(target_id.to_owned(), opens, shared.clone()));
    shared.update(|state| state.tasks.extend([network, dialog, opens]));
    Ok(console)
}

/// Keeps the address each window the tab opens was opened for.
async fn note_window_opens(target_id: String, mut opens: EventStream<EventWindowOpen>, shared: Arc<Shared>) {
    while let Some(event) = opens.next().await {
        shared.update(|state| {
            if let Some(tab) = state.tabs.iter_mut().find(|tab| tab.target_id == target_id) {
                tab.window_opened = Some(event.url.clone());
            }
        });
    }
}

struct NetStreams {
    requests: EventStream<EventRequestWillBeSent>,
    responses: EventStream<EventResponseReceived>,
    finished: EventStream<EventLoadingFinished>,
    failed: EventStream<EventLoadingFailed>,
}

/// Keeps the network log of one tab.
async fn record_network(page: Page, target_id: String, mut streams: NetStreams, shared: Arc<Shared>) {
    // Bodies worth reading before a navigation drops them: what scripts fetched.
    let mut eager: HashMap<String, bool> = HashMap::new();
    loop {
        // Biased, in the order Chromium sends them: each kind has its own channel, and a
        // request is always in its channel before its response is in the other, so taking
        // requests first keeps every request's events in order.
        tokio::select! {
            biased;
            Some(event) = streams.requests.next() => {
                let request_id = event.request_id.as_ref().to_owned();
                shared.update(|state| {
                    let key = (target_id.clone(), request_id.clone());
                    if let (Some(redirect), Some(&index)) = (&event.redirect_response, state.current.get(&key)) {
                        let seq = state.next_seq;
                        state.next_seq += 1;
                        let hop = &mut state.net[index];
                        hop.url = redirect.url.clone();
                        hop.status = u16::try_from(redirect.status).ok();
                        hop.seq = Some(seq);
                        hop.finished = true;
                        hop.ended = Some(SystemTime::now());
                        hop.body = Body::Unavailable("a redirect has no body".to_owned());
                    }
                    state.net.push(NetEntry {
                        target_id: target_id.clone(),
                        request_id: request_id.clone(),
                        method: event.request.method.clone(),
                        url: event.request.url.clone(),
                        status: None,
                        seq: None,
                        finished: false,
                        body: Body::Unread,
                        // A page target's main frame has the target's id.
                        document: event.r#type == Some(ResourceType::Document)
                            && event.frame_id.as_ref().is_some_and(|frame| frame.as_ref() == target_id),
                        started: SystemTime::now(),
                        ended: None,
                        responded: None,
                        resource_type: event.r#type.as_ref().map_or("Other", |kind| kind.as_ref()).to_owned(),
                        mime_type: None,
                        encoded_bytes: None,
                        failure: None,
                        checked: false,
                    });
                    let index = state.net.len() - 1;
                    state.current.insert(key, index);
                });
            }
            Some(event) = streams.responses.next() => {
                let request_id = event.request_id.as_ref().to_owned();
                eager.insert(request_id.clone(), matches!(event.r#type, ResourceType::Xhr | ResourceType::Fetch));
                shared.update(|state| {
                    if let Some(&index) = state.current.get(&(target_id.clone(), request_id)) {
                        let seq = state.next_seq;
                        state.next_seq += 1;
                        let entry = &mut state.net[index];
                        entry.url = event.response.url.clone();
                        entry.status = u16::try_from(event.response.status).ok();
                        entry.seq = Some(seq);
                        entry.mime_type = Some(event.response.mime_type.clone());
                        entry.responded = Some(SystemTime::now());
                    }
                });
            }
            Some(event) = streams.finished.next() => {
                let request_id = event.request_id.as_ref().to_owned();
                let read_now = eager.remove(&request_id).unwrap_or(false) && event.encoded_data_length <= EAGER_BODY_LIMIT;
                let body = if read_now { Some(read_body(&page, &request_id).await) } else { None };
                shared.update(|state| {
                    if let Some(&index) = state.current.get(&(target_id.clone(), request_id)) {
                        let entry = &mut state.net[index];
                        entry.finished = true;
                        entry.ended = Some(SystemTime::now());
                        entry.encoded_bytes = Some(event.encoded_data_length.max(0.0) as u64);
                        if let Some(body) = body {
                            entry.body = body;
                        }
                    }
                });
            }
            Some(event) = streams.failed.next() => {
                let request_id = event.request_id.as_ref().to_owned();
                eager.remove(&request_id);
                shared.update(|state| {
                    if let Some(&index) = state.current.get(&(target_id.clone(), request_id)) {
                        let entry = &mut state.net[index];
                        entry.finished = true;
                        entry.ended = Some(SystemTime::now());
                        entry.failure = Some(event.error_text.clone());
                        if entry.body == Body::Unread {
                            entry.body = Body::Unavailable(format!("the load failed: {}", event.error_text));
                        }
                    }
                });
            }
            else => break,
        }
    }
}

/// Brings the tab to the front if it is not there. Only the front tab of a window renders: a
/// background tab (the opener, once a link opened a new tab) gets no animation frames, holds
/// input events for seconds and its accessibility queries wait for a frame that never comes.
/// Checked on every attempt, since a tab opened by the previous action may take the front at
/// any moment.
pub(crate) async fn ensure_front(page: &Page) -> Result<(), CdpFail> {
    let _timed = crate::timing::span("front");
    let visibility = cdp::evaluate(page, "document.visibilityState", "saffron", true).await?;
    if visibility.value.as_ref().and_then(Value::as_str) == Some("visible") {
        return Ok(());
    }
    match page {
        Page::Firefox(tab) => tab.activate().await,
        Page::Chromium(_) => cdp::call(page, "Page.bringToFront", json!({})).await.map(drop),
    }
}

impl Context {
    /// [`ensure_front`], unless the context has a single tab: one tab alone is the front tab of
    /// its window, and the check is a round trip on every attempt of every action.
    pub(crate) async fn front(&self, page: &Page) -> Result<(), CdpFail> {
        let alone = self.shared.read(|state| state.tabs.iter().filter(|tab| !tab.closed).count() <= 1);
        if alone {
            return Ok(());
        }
        ensure_front(page).await
    }
}

/// `Network.getResponseBody`, as text.
pub(crate) async fn read_body(page: &Page, request_id: &str) -> Body {
    if let Page::Firefox(tab) = page {
        return tab.response_body(request_id).await;
    }
    let answer = tokio::time::timeout(
        Duration::from_secs(5),
        cdp::call(page, "Network.getResponseBody", json!({ "requestId": request_id })),
    )
    .await;
    match answer {
        Ok(Ok(answer)) => {
            if answer.get("base64Encoded").and_then(Value::as_bool).unwrap_or(false) {
                Body::Unavailable("the body is binary".to_owned())
            } else {
                Body::Text(answer.get("body").and_then(Value::as_str).unwrap_or_default().to_owned())
            }
        }
        Ok(Err(error)) => Body::Unavailable(error.to_string()),
        Err(_) => Body::Unavailable("reading the body timed out".to_owned()),
    }
}

/// How to answer a dialog of `kind` (`alert`, `confirm`, `prompt`, `beforeunload`) that just
/// opened: with the answer armed for it (taken), else by dismissing it, and a note that says
/// so. Dismissing "leave this page?" would silently cancel the navigation the scenario asked
/// for, so an unexpected one is accepted.
pub(crate) fn dialog_answer(shared: &Shared, kind: &str, message: &str) -> (DialogAnswer, Option<String>) {
    match shared.update(|state| state.dialog.take()) {
        Some(answer) => (answer, None),
        None if kind == "beforeunload" => (
            DialogAnswer { accept: true, prompt_text: None },
            Some(format!("an unexpected beforeunload dialog {message:?} was accepted")),
        ),
        None => (
            DialogAnswer { accept: false, prompt_text: None },
            Some(format!("an unexpected {kind} dialog {message:?} was dismissed")),
        ),
    }
}

/// Answers every JavaScript dialog of one tab as soon as it opens.
async fn answer_dialogs(page: Page, mut dialogs: EventStream<EventJavascriptDialogOpening>, shared: Arc<Shared>) {
    while let Some(event) = dialogs.next().await {
        let kind = event.r#type.as_ref().to_owned();
        let (answer, note) = dialog_answer(&shared, &kind, &event.message);
        let mut params = json!({ "accept": answer.accept });
        if let Some(text) = &answer.prompt_text {
            params["promptText"] = json!(text);
        }
        let result = cdp::call(&page, "Page.handleJavaScriptDialog", params).await;
        shared.update(|state| {
            if let Some(note) = note {
                state.notes.push(note);
            }
            if let Err(error) = result {
                state.notes.push(format!("the {kind} dialog {:?} could not be answered: {error}", event.message));
            }
        });
    }
}

fn remote_text(object: &RemoteObject) -> String {
    match &object.value {
        Some(Value::String(text)) => text.clone(),
        Some(value) => value.to_string(),
        None => object.description.clone().unwrap_or_else(|| object.r#type.as_ref().to_owned()),
    }
}

/// How many console messages a context keeps for its trace; errors are kept apart, all of them.
pub(crate) const CONSOLE_LOG_KEPT: usize = 2_000;

/// Moves what waits in every tab's console streams into the state: errors into
/// `console_errors`, every message into `console_log`.
pub(crate) fn drain_all_consoles(state: &mut State) {
    let mut found = Vec::new();
    let mut log = Vec::new();
    for (tab, streams) in
        state.tabs.iter_mut().enumerate().filter_map(|(index, tab)| Some((index, tab.console.as_mut()?)))
    {
        drain_console(streams, tab, &mut found, &mut log);
    }
    state.console_errors.extend(found);
    let room = CONSOLE_LOG_KEPT.saturating_sub(state.console_log.len());
    log.truncate(room);
    state.console_log.extend(log);
}

/// A DevTools timestamp (milliseconds since the epoch) as a time.
fn epoch_millis(timestamp: f64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs_f64((timestamp / 1000.0).max(0.0))
}

/// Moves the console messages waiting in one tab's streams out: its errors into `found`, every
/// message into `log`.
fn drain_console(
    streams: &mut ConsoleStreams,
    tab: usize,
    found: &mut Vec<String>,
    log: &mut Vec<crate::observed::ConsoleRecord>,
) {
    use crate::observed::ConsoleRecord;
    while let Some(Some(event)) = streams.api.next().now_or_never() {
        let kind = event.r#type.as_ref();
        let text = event.args.iter().map(remote_text).collect::<Vec<_>>().join(" ");
        if kind == "error" || kind == "assert" {
            found.push(format!("console.{kind}: {text}"));
        }
        let source = event
            .stack_trace
            .as_ref()
            .and_then(|stack| stack.call_frames.first())
            .map(|frame| format!("{}:{}", frame.url, frame.line_number + 1));
        log.push(ConsoleRecord {
            at: epoch_millis(*event.timestamp.inner()),
            level: kind.to_owned(),
            text,
            source,
            tab,
        });
    }
    while let Some(Some(event)) = streams.exceptions.next().now_or_never() {
        let details = &event.exception_details;
        let description = details.exception.as_ref().and_then(|exception| exception.description.clone());
        let text = description.unwrap_or_else(|| details.text.clone());
        found.push(format!("uncaught exception: {text}"));
        let source = details.url.as_ref().map(|url| format!("{url}:{}", details.line_number + 1));
        log.push(ConsoleRecord {
            at: epoch_millis(*event.timestamp.inner()),
            level: "exception".to_owned(),
            text,
            source,
            tab,
        });
    }
    while let Some(Some(event)) = streams.log.next().now_or_never() {
        let entry = &event.entry;
        let unasked = unasked_icon(entry.source.as_ref(), entry.url.as_deref());
        if entry.level.as_ref() == "error" && !unasked {
            let at = entry.url.as_deref().map(|url| format!(" ({url})")).unwrap_or_default();
            found.push(format!("{} error: {}{at}", entry.source.as_ref(), entry.text));
        }
        if !unasked {
            log.push(ConsoleRecord {
                at: epoch_millis(*entry.timestamp.inner()),
                level: entry.level.as_ref().to_owned(),
                text: format!("{} ({})", entry.text, entry.source.as_ref()),
                source: entry.url.clone(),
                tab,
            });
        }
    }
}

/// A failed load of `/favicon.ico`, which the browser fetches on its own for every site: no
/// page asked for it and nobody sees it fail, yet a site without one (Python's `http.server`,
/// most small apps) would fail every `expectNoConsoleErrors`.
fn unasked_icon(source: &str, url: Option<&str>) -> bool {
    source == "network" && url.and_then(|url| url::Url::parse(url).ok()).is_some_and(|url| url.path() == "/favicon.ico")
}

async fn capture(page: &Page) -> Result<Vec<u8>, BrowserError> {
    let page = match page {
        Page::Chromium(page) => page,
        Page::Firefox(tab) => return tab.screenshot().await.map_err(protocol),
    };
    let params = ScreenshotParams::builder()
        .format(chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat::Png)
        .build();
    tokio::time::timeout(Duration::from_secs(10), page.screenshot(params))
        .await
        .map_err(|_| BrowserError::Protocol("the screenshot took longer than 10 s".to_owned()))?
        .map_err(|e| protocol(e.into()))
}

/// An isolated world in every frame of the page, the main frame first: the page's scripts see
/// none of what is done there.
pub(crate) async fn isolated_worlds(page: &Page) -> Result<Vec<cdp::World>, CdpFail> {
    if let Page::Firefox(tab) = page {
        return Ok(tab.frames().await?.into_iter().map(cdp::World::Frame).collect());
    }
    let frames = crate::frame_tree::frames(page).await?;
    let mut worlds = Vec::with_capacity(frames.len());
    for frame in frames {
        let world =
            cdp::call(page, "Page.createIsolatedWorld", json!({ "frameId": frame.id, "worldName": "saffron" })).await?;
        worlds.push(cdp::World::Context(
            world
                .get("executionContextId")
                .and_then(Value::as_i64)
                .ok_or_else(|| CdpFail::Protocol("Page.createIsolatedWorld returned no context".to_owned()))?,
        ));
    }
    Ok(worlds)
}

#[cfg(test)]
mod tests {
    use super::unasked_icon;

    #[test]
    fn only_a_failed_load_of_the_sites_favicon_is_left_out() {
        assert!(unasked_icon("network", Some("http://127.0.0.1:8000/favicon.ico")));
        assert!(unasked_icon("network", Some("http://127.0.0.1:8000/favicon.ico?v=2")));
        // Anything else a page loads, or logs, is its own error.
        assert!(!unasked_icon("network", Some("http://127.0.0.1:8000/app.js")));
        assert!(!unasked_icon("network", Some("http://127.0.0.1:8000/static/favicon.ico.js")));
        assert!(!unasked_icon("javascript", Some("http://127.0.0.1:8000/favicon.ico")));
        assert!(!unasked_icon("network", None));
    }
}
