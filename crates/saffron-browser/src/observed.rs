//! What a context saw, for a trace: its network, its console, its tabs, how each action went
//! (attempts, waits, the element's box, the response a wait matched), small pictures of the
//! page and its DOM as MHTML.
//!
//! Reading any of it costs nothing while the scenario runs: the context keeps these records
//! anyway (the network log serves the response waits, the console the error checks), and the
//! trail of an action is a few counters. Pictures and the DOM are taken only when asked for.

use std::time::{Duration, SystemTime};

use crate::page::Page;
use serde_json::{Value, json};

use crate::cdp;
use crate::context::Context;
use crate::error::BrowserError;
use crate::lock;
use crate::network::Body;

/// A console message or an uncaught exception.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleRecord {
    /// When it was logged.
    pub at: SystemTime,
    /// `log`, `info`, `warning`, `error`, `debug`, ..., `exception` for an uncaught one.
    pub level: String,
    /// The message, its arguments joined by spaces.
    pub text: String,
    /// `url:line` of the script that logged it, when known.
    pub source: Option<String>,
    /// The tab, in opening order.
    pub tab: usize,
}

/// One request of the context.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkRecord {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The address (the last hop's, after redirects).
    pub url: String,
    /// The response's status, once it came.
    pub status: Option<u16>,
    /// Chromium's resource type, lower-cased: `document`, `fetch`, `xhr`, `script`, ...
    pub resource_type: String,
    /// The response's MIME type.
    pub mime_type: Option<String>,
    /// When the request was seen to start.
    pub started: SystemTime,
    /// When it loaded, failed or was redirected.
    pub ended: Option<SystemTime>,
    /// Bytes received, headers included.
    pub encoded_bytes: Option<u64>,
    /// Why the load failed.
    pub failure: Option<String>,
    /// The body, only when a check read it.
    pub body: Option<String>,
    /// The tab, in opening order.
    pub tab: usize,
}

/// A tab of the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabRecord {
    /// When the tab was seen to open.
    pub opened_at: SystemTime,
    /// When it closed.
    pub closed_at: Option<SystemTime>,
    /// The address it was opened for.
    pub url: String,
}

/// Everything the context observed so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// Every request, in the order they started.
    pub network: Vec<NetworkRecord>,
    /// Console messages and uncaught exceptions, oldest first.
    pub console: Vec<ConsoleRecord>,
    /// The tabs, in opening order.
    pub tabs: Vec<TabRecord>,
}

/// A box in the page's viewport, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width and height.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// How the last action went on its way: how often its element was looked for, what it waited
/// for, where the element was, the response a wait matched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActionTrail {
    /// Looks at the page (1 when the element was ready at once; 0 for an action that looks
    /// for no element).
    pub attempts: u32,
    /// Why each look did not do, in order, a reason once however often it came back in a row.
    pub waited: Vec<String>,
    /// Where the element was when it was acted on.
    pub bounds: Option<Bounds>,
    /// The response a network wait or check matched, e.g. `POST /api/orders → 201`.
    pub matched: Option<String>,
}

impl ActionTrail {
    pub(crate) fn waited_for(&mut self, reason: String) {
        if self.waited.last() != Some(&reason) && self.waited.len() < 20 {
            self.waited.push(reason);
        }
    }
}

/// A small JPEG of the viewport.
#[derive(Debug, Clone, PartialEq)]
pub struct FramePicture {
    /// The picture.
    pub jpeg: Vec<u8>,
    /// The viewport it shows, in CSS pixels.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// Film-strip pictures are this fraction of the viewport's size.
const FRAME_SCALE: f64 = 0.5;
const FRAME_QUALITY: u32 = 55;

impl Context {
    /// The network, console and tabs so far (the console streams are drained first, without a
    /// round trip: a message still in flight is left for the next look).
    pub fn observed(&self) -> Observed {
        self.shared.update(|state| {
            crate::context::drain_all_consoles(state);
            let tab_of = |target: &str| state.tabs.iter().position(|tab| tab.target_id == target).unwrap_or(0);
            let network = state
                .net
                .iter()
                .map(|entry| NetworkRecord {
                    method: entry.method.clone(),
                    url: entry.url.clone(),
                    status: entry.status,
                    resource_type: entry.resource_type.to_ascii_lowercase(),
                    mime_type: entry.mime_type.clone(),
                    started: entry.started,
                    ended: entry.ended.or(entry.responded),
                    encoded_bytes: entry.encoded_bytes,
                    failure: entry.failure.clone(),
                    body: match (&entry.body, entry.checked) {
                        (Body::Text(text), true) => Some(text.clone()),
                        _ => None,
                    },
                    tab: tab_of(&entry.target_id),
                })
                .collect();
            let tabs = state
                .tabs
                .iter()
                .map(|tab| TabRecord {
                    opened_at: tab.opened_at,
                    closed_at: tab.closed_at,
                    url: tab.opened_for.clone(),
                })
                .collect();
            Observed { network, console: state.console_log.clone(), tabs }
        })
    }

    /// The trail of the last action performed (successful or not).
    pub fn last_trail(&self) -> ActionTrail {
        lock(&self.trail).clone()
    }

    /// The active tab in opening order.
    pub fn active_tab(&self) -> usize {
        self.shared.read(|state| state.tabs.iter().position(|tab| tab.target_id == self.active).unwrap_or(0))
    }

    /// A small JPEG of the active tab's viewport, with the same covering of `secrets` as
    /// [`Context::screenshot_hiding`] (no picture when they cannot be hidden).
    pub async fn frame_picture(&self, secrets: &[&str]) -> Result<FramePicture, BrowserError> {
        let page = self.active_page()?;
        let (width, height) = viewport(&page).await?;
        let params = json!({
            "format": "jpeg",
            "quality": FRAME_QUALITY,
            "optimizeForSpeed": true,
            "clip": { "x": 0, "y": 0, "width": width, "height": height, "scale": FRAME_SCALE },
        });
        let jpeg = self.hiding(&page, secrets, || capture_with(&page, params.clone())).await?;
        Ok(FramePicture { jpeg, width, height })
    }

    /// The active tab's page as MHTML (`Page.captureSnapshot`): its DOM as it is now, with its
    /// stylesheets and pictures.
    pub async fn dom_snapshot(&self) -> Result<String, BrowserError> {
        let page = self.active_page()?;
        let answer = tokio::time::timeout(
            Duration::from_secs(10),
            cdp::call(&page, "Page.captureSnapshot", json!({ "format": "mhtml" })),
        )
        .await
        .map_err(|_| BrowserError::Protocol("the DOM snapshot took longer than 10 s".to_owned()))?
        .map_err(|error| BrowserError::Protocol(error.to_string()))?;
        answer
            .get("data")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| BrowserError::Protocol("Page.captureSnapshot returned no data".to_owned()))
    }
}

/// The layout viewport's size in CSS pixels.
async fn viewport(page: &Page) -> Result<(f64, f64), BrowserError> {
    let metrics = cdp::call(page, "Page.getLayoutMetrics", json!({}))
        .await
        .map_err(|error| BrowserError::Protocol(error.to_string()))?;
    let size = |name: &str| metrics.pointer(&format!("/cssLayoutViewport/{name}")).and_then(Value::as_f64);
    match (size("clientWidth"), size("clientHeight")) {
        (Some(width), Some(height)) if width > 0.0 && height > 0.0 => Ok((width, height)),
        _ => Err(BrowserError::Protocol("the viewport has no size".to_owned())),
    }
}

async fn capture_with(page: &Page, params: Value) -> Result<Vec<u8>, BrowserError> {
    use base64::Engine as _;
    let answer = tokio::time::timeout(Duration::from_secs(10), cdp::call(page, "Page.captureScreenshot", params))
        .await
        .map_err(|_| BrowserError::Protocol("the picture took longer than 10 s".to_owned()))?
        .map_err(|error| BrowserError::Protocol(error.to_string()))?;
    let data = answer
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| BrowserError::Protocol("Page.captureScreenshot returned no data".to_owned()))?;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|error| BrowserError::Protocol(format!("Page.captureScreenshot returned bad base64: {error}")))
}
