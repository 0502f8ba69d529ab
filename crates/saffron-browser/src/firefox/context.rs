//! A Firefox context: a BiDi user context (its own cookies and storage) and its tabs, observed
//! into the same [`State`] a Chromium context keeps, so that everything above the engine
//! (network waits, dialogs, console errors, tabs, traces) reads one shape.
//!
//! One task follows the session's events for the context: tabs as they open and close (a
//! top-level browsing context of the user context), the frames in them, requests and responses,
//! JavaScript dialogs (answered at once, as in Chromium), and console and error log entries.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::bidi::{Bidi, Event};
use crate::browser::Browser;
use crate::context::{Context, ContextOptions, Shared, Tab as TabState};
use crate::downloads::{Download, Progress};
use crate::error::BrowserError;
use crate::network::{Body, NetEntry};
use crate::observed::ConsoleRecord;
use crate::page::Page;

use super::Tab;

/// How long the first tab may take to be announced.
const OPEN_PATIENCE: Duration = Duration::from_secs(10);

/// Opens a context in the browser's Firefox: a user context, its first tab at the configured
/// viewport, and the task that observes them.
pub(crate) async fn open_context(browser: Browser, options: ContextOptions) -> Result<Context, BrowserError> {
    let _timed = crate::timing::lone_span("context open");
    let Some(firefox) = &browser.inner.firefox else {
        return Err(BrowserError::Protocol("not a Firefox browser".to_owned()));
    };
    let bidi = Arc::clone(&firefox.bidi);
    let failed = |error: crate::bidi::BidiError| crate::context::protocol(super::fail(error));
    let answer = bidi.call("browser.createUserContext", json!({})).await.map_err(failed)?;
    let user_context = answer
        .get("userContext")
        .and_then(Value::as_str)
        .ok_or_else(|| BrowserError::Protocol("browser.createUserContext returned no id".to_owned()))?
        .to_owned();
    let shared = Arc::new(Shared::new());
    let seen = Arc::new(AtomicU64::new(bidi.events_sent()));
    let events = bidi.events();
    let watcher = tokio::spawn(follow(Arc::clone(&bidi), user_context.clone(), events, shared.clone(), seen.clone()));
    let mut context = Context::new(browser.clone(), user_context.clone(), options.base_url, shared, watcher);
    context.events_seen = Some(seen);
    // The window size, or the device's viewport, scale and user agent, for every tab of the
    // context (a tab the page opens too). A desktop profile only: a mobile one is refused at
    // start (see `saffron_runner::session`).
    let device = browser.inner.config.device;
    let (width, height) = device.map_or(browser.inner.config.window, |device| (device.width, device.height));
    let mut viewport = json!({ "userContexts": [user_context], "viewport": { "width": width, "height": height } });
    if let Some(device) = device {
        viewport["devicePixelRatio"] = json!(device.scale_factor);
        let agent = json!({ "userContexts": [user_context], "userAgent": device.user_agent });
        bidi.call("emulation.setUserAgentOverride", agent).await.map_err(failed)?;
    }
    bidi.call("browsingContext.setViewport", viewport).await.map_err(failed)?;
    let created = bidi
        // A window of its own, as each Chromium context's: a second tab of one window would be
        // a background tab, which Firefox throttles.
        .call("browsingContext.create", json!({ "type": "window", "userContext": user_context }))
        .await
        .map_err(failed)?;
    let tab = created
        .get("context")
        .and_then(Value::as_str)
        .ok_or_else(|| BrowserError::Protocol("browsingContext.create returned no context".to_owned()))?
        .to_owned();
    // The context's downloads go to a folder of its own, removed with it.
    let folder = tempfile::Builder::new()
        .prefix("downloads-")
        .tempdir_in(browser.downloads_parent())
        .map_err(|error| BrowserError::Protocol(format!("no folder for the context's downloads: {error}")))?;
    let behavior = json!({
        "downloadBehavior": { "type": "allowed", "destinationFolder": folder.path() },
        "userContexts": [user_context],
    });
    bidi.call("browser.setDownloadBehavior", behavior).await.map_err(failed)?;
    context.download_folder = Some(folder);
    context.active = tab.clone();
    let ready = context
        .wait_for(Instant::now() + OPEN_PATIENCE, |state| state.tabs.iter().any(|known| known.target_id == tab))
        .await;
    if !ready {
        return Err(BrowserError::Protocol("the first tab was not announced within 10 s".to_owned()));
    }
    Ok(context)
}

impl Context {
    /// Waits until the context's task has handled every event the browser sent before now: a
    /// console error logged before this call is then in the state.
    pub(crate) async fn caught_up(&self) {
        let (Some(firefox), Some(seen)) = (&self.browser.inner.firefox, &self.events_seen) else { return };
        // A round trip first: the browser sends what it logged before it answers.
        let _ = firefox.bidi.call("browsingContext.getTree", json!({ "maxDepth": 0 })).await;
        let wanted = firefox.bidi.events_sent();
        let seen = seen.clone();
        self.wait_for(Instant::now() + Duration::from_secs(2), move |_| seen.load(Ordering::SeqCst) >= wanted).await;
    }
}

/// Follows the session's events for one user context until the context closes.
async fn follow(
    bidi: Arc<Bidi>,
    user_context: String,
    mut events: broadcast::Receiver<Event>,
    shared: Arc<Shared>,
    seen: Arc<AtomicU64>,
) {
    // Every browsing context of the context (tabs and frames) → its tab.
    let mut tab_of: HashMap<String, String> = HashMap::new();
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                shared.update(|state| {
                    state.notes.push(format!("{missed} browser events were missed (too many at once)"))
                });
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => break,
        };
        handle(&bidi, &user_context, &event, &mut tab_of, &shared).await;
        seen.store(event.seq, Ordering::SeqCst);
        shared.changed.notify_waiters();
    }
}

fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

async fn handle(
    bidi: &Arc<Bidi>,
    user_context: &str,
    event: &Event,
    tab_of: &mut HashMap<String, String>,
    shared: &Arc<Shared>,
) {
    let params = &event.params;
    let context = text(params, "/context").unwrap_or_default().to_owned();
    match event.method.as_str() {
        "browsingContext.contextCreated" => match text(params, "/parent") {
            None if text(params, "/userContext") == Some(user_context) => {
                tab_of.insert(context.clone(), context.clone());
                let opener = text(params, "/originalOpener").map(str::to_owned);
                let page = Page::Firefox(Tab { bidi: Arc::clone(bidi), context: context.clone() });
                let opened_for = text(params, "/url").unwrap_or("about:blank").to_owned();
                shared.update(|state| {
                    state.tab_opened(TabState::opened(context.clone(), Some(page), opened_for, opener))
                });
            }
            Some(parent) => {
                if let Some(tab) = tab_of.get(parent).cloned() {
                    tab_of.insert(context, tab);
                }
            }
            None => {}
        },
        "browsingContext.contextDestroyed" => {
            shared.update(|state| {
                state.navigation_ended(&context, None);
                state.chooser_opened.remove(&context);
                if tab_of.get(&context) == Some(&context) {
                    state.tab_closed(&context);
                }
            });
            tab_of.remove(&context);
        }
        "browsingContext.navigationStarted" => {
            let (Some(tab), Some(id)) = (tab_of.get(&context), text(params, "/navigation")) else { return };
            shared.update(|state| state.navigation_started(&context, tab, id));
        }
        // Committed, failed, or not a new document after all (a fragment). A navigation that
        // becomes a download, or gets no document (204, 205, a failed load), ends below.
        "browsingContext.navigationCommitted" => {
            shared.update(|state| {
                state.navigation_ended(&context, text(params, "/navigation"));
                state.chooser_opened.remove(&context);
            });
        }
        "browsingContext.navigationFailed" | "browsingContext.fragmentNavigated" => {
            shared.update(|state| state.navigation_ended(&context, text(params, "/navigation")));
        }
        "input.fileDialogOpened" if tab_of.contains_key(&context) => {
            shared.update(|state| state.chooser_opened.insert(context.clone()));
        }
        "browsingContext.userPromptOpened" if tab_of.contains_key(&context) => {
            answer_prompt(bidi, &context, params, shared).await;
        }
        "network.beforeRequestSent" => {
            let Some(tab) = tab_of.get(&context).cloned() else { return };
            let request_id = text(params, "/request/request").unwrap_or_default().to_owned();
            let document = params.get("navigation").is_some_and(|navigation| !navigation.is_null()) && context == tab;
            let entry = NetEntry {
                target_id: tab.clone(),
                request_id: request_id.clone(),
                method: text(params, "/request/method").unwrap_or("GET").to_owned(),
                url: text(params, "/request/url").unwrap_or_default().to_owned(),
                status: None,
                seq: None,
                finished: false,
                body: Body::Unread,
                document,
                started: SystemTime::now(),
                ended: None,
                responded: None,
                resource_type: resource_type(params, document),
                mime_type: None,
                encoded_bytes: None,
                failure: None,
                checked: false,
            };
            shared.update(|state| {
                state.net.push(entry);
                let index = state.net.len() - 1;
                state.current.insert((tab, request_id), index);
            });
        }
        "network.responseCompleted" => {
            let Some(tab) = tab_of.get(&context).cloned() else { return };
            let request_id = text(params, "/request/request").unwrap_or_default().to_owned();
            let status = params.pointer("/response/status").and_then(Value::as_u64);
            shared.update(|state| {
                if let (Some(204 | 205), Some(navigation)) = (status, text(params, "/navigation")) {
                    state.navigation_ended(&context, Some(navigation));
                }
                let Some(&index) = state.current.get(&(tab, request_id)) else { return };
                let seq = state.next_seq;
                state.next_seq += 1;
                let now = SystemTime::now();
                let entry = &mut state.net[index];
                if let Some(url) = text(params, "/response/url") {
                    entry.url = url.to_owned();
                }
                entry.status = status.and_then(|status| u16::try_from(status).ok());
                entry.seq = Some(seq);
                entry.mime_type = text(params, "/response/mimeType").map(str::to_owned);
                entry.encoded_bytes = params.pointer("/response/bytesReceived").and_then(Value::as_u64);
                entry.finished = true;
                entry.responded = Some(now);
                entry.ended = Some(now);
            });
        }
        "network.fetchError" => {
            let Some(tab) = tab_of.get(&context).cloned() else { return };
            let request_id = text(params, "/request/request").unwrap_or_default().to_owned();
            let error = text(params, "/errorText").unwrap_or("the load failed").to_owned();
            shared.update(|state| {
                if let Some(navigation) = text(params, "/navigation") {
                    state.navigation_ended(&context, Some(navigation));
                }
                let Some(&index) = state.current.get(&(tab, request_id)) else { return };
                let entry = &mut state.net[index];
                entry.finished = true;
                entry.ended = Some(SystemTime::now());
                entry.body = Body::Unavailable(format!("the load failed: {error}"));
                entry.failure = Some(error);
            });
        }
        "browsingContext.downloadWillBegin" if tab_of.contains_key(&context) => {
            let id = text(params, "/navigation").unwrap_or_default().to_owned();
            let name = text(params, "/suggestedFilename").unwrap_or_default().to_owned();
            shared.update(|state| {
                state.navigation_ended(&context, Some(&id));
                state.downloads.push(Download::begun(&id, &name));
            });
        }
        "browsingContext.downloadEnd" => {
            let id = text(params, "/navigation").unwrap_or_default().to_owned();
            let saved = text(params, "/filepath").map(std::path::PathBuf::from);
            let size = match &saved {
                Some(path) => tokio::fs::metadata(path).await.map(|metadata| metadata.len()).unwrap_or(0),
                None => 0,
            };
            shared.update(|state| {
                let Some(download) = state.downloads.iter_mut().find(|download| download.is(&id)) else { return };
                (download.received_bytes, download.total_bytes) = (size, size);
                download.progress = match (text(params, "/status"), saved) {
                    (Some("complete"), Some(path)) => Progress::Saved(path),
                    _ => Progress::Canceled,
                };
            });
        }
        "log.entryAdded" => {
            let Some(source) = text(params, "/source/context") else { return };
            let Some(tab) = tab_of.get(source).cloned() else { return };
            record_log(params, &tab, shared);
        }
        _ => {}
    }
}

/// Chromium's name for what a request loads, as far as BiDi tells it.
fn resource_type(params: &Value, document: bool) -> String {
    if document {
        return "Document".to_owned();
    }
    match text(params, "/request/destination").unwrap_or_default() {
        "" => match text(params, "/request/initiatorType") {
            Some("fetch") => "Fetch",
            Some("xmlhttprequest") => "XHR",
            _ => "Other",
        },
        "document" | "iframe" | "frame" => "Document",
        "script" => "Script",
        "style" => "Stylesheet",
        "image" => "Image",
        "font" => "Font",
        _ => "Other",
    }
    .to_owned()
}

/// Keeps one log entry: an error one among the console errors, every one in the log.
fn record_log(params: &Value, tab: &str, shared: &Arc<Shared>) {
    let level = text(params, "/level").unwrap_or("info").to_owned();
    let kind = text(params, "/type").unwrap_or("console");
    let message = text(params, "/text").unwrap_or_default().to_owned();
    let source = params.pointer("/stackTrace/callFrames/0").map(|frame| {
        let url = text(frame, "/url").unwrap_or_default();
        let line = frame.get("lineNumber").and_then(Value::as_u64).unwrap_or(0) + 1;
        format!("{url}:{line}")
    });
    let at = params.get("timestamp").and_then(Value::as_f64).map_or_else(SystemTime::now, |millis| {
        SystemTime::UNIX_EPOCH + Duration::from_secs_f64(millis.max(0.0) / 1000.0)
    });
    shared.update(|state| {
        let index = state.tabs.iter().position(|known| known.target_id == tab).unwrap_or(0);
        if level == "error" {
            state.console_errors.push(match kind {
                "javascript" => format!("uncaught exception: {message}"),
                _ => format!("console.error: {message}"),
            });
        }
        if state.console_log.len() < crate::context::CONSOLE_LOG_KEPT {
            let level = if kind == "javascript" { "exception".to_owned() } else { level };
            state.console_log.push(ConsoleRecord { at, level, text: message, source, tab: index });
        }
    });
}

/// Answers a JavaScript dialog at once, as Chromium's context does (see
/// [`crate::context::dialog_answer`]).
async fn answer_prompt(bidi: &Arc<Bidi>, context: &str, params: &Value, shared: &Arc<Shared>) {
    let kind = text(params, "/type").unwrap_or("alert").to_owned();
    let message = text(params, "/message").unwrap_or_default().to_owned();
    let (answer, note) = crate::context::dialog_answer(shared, &kind, &message);
    let mut reply = json!({ "context": context, "accept": answer.accept });
    if let Some(text) = &answer.prompt_text {
        reply["userText"] = json!(text);
    }
    // Answered on its own task: the follower must not wait on the browser while it holds
    // events back.
    let bidi = Arc::clone(bidi);
    let shared = shared.clone();
    tokio::spawn(async move {
        let result = bidi.call("browsingContext.handleUserPrompt", reply).await;
        shared.update(|state| {
            if let Some(note) = note {
                state.notes.push(note);
            }
            if let Err(error) = result {
                state.notes.push(format!("the {kind} dialog {message:?} could not be answered: {error}"));
            }
        });
    });
}
