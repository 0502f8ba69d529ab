//! What a trace file holds: one attempt of one scenario, written as it ran.
//!
//! Times are milliseconds from the attempt's start. Indices that point into another list
//! (`action`, `frame`) are 0-based positions in that list; `step` is the 1-based step number a
//! person reads in the report.

use saffron_recording::{StepKind, Tier};
use serde::{Deserialize, Serialize};

use crate::{StepOutcome, Verdict};

/// The format of a trace file; a reader refuses a later one.
pub const TRACE_FORMAT: u32 = 1;

/// One attempt of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trace {
    /// [`TRACE_FORMAT`]; also what tells a trace file from any other JSON.
    pub saffron_trace: u32,
    pub scenario: TraceScenario,
    /// 1 for the first run of the scenario, 2 for its first retry, ...
    pub attempt: u32,
    /// `chromium`.
    pub browser: String,
    /// The policy that kept this trace.
    pub mode: TraceMode,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub base_url: String,
    pub duration_ms: u64,
    /// How the attempt ended (for a recording or a repair: how its proof replay ended).
    pub outcome: Verdict,
    /// What this attempt was: a replay, the proof replay of a recording, of a repair.
    pub kind: TraceKind,
    pub steps: Vec<TraceStep>,
    pub actions: Vec<TraceAction>,
    /// Small JPEG pictures of the page, one after each action (with `--trace on`).
    #[serde(default)]
    pub frames: Vec<Frame>,
    #[serde(default)]
    pub network: Vec<Request>,
    #[serde(default)]
    pub console: Vec<ConsoleLine>,
    #[serde(default)]
    pub tabs: Vec<TabEvent>,
    /// What the page was like when an action failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The agent's conversation, when the agent recorded or repaired the scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentTrace>,
    /// The requests Saffron's HTTP client sent (an `@api` scenario's, or a browser scenario's
    /// beside its page), as its transcript has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exchanges: Vec<crate::transcript::Exchange>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceScenario {
    pub file: String,
    pub line: u32,
    pub name: String,
}

/// When a scenario's trace is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TraceMode {
    /// Never recorded.
    Off,
    /// Every attempt's trace is kept, with a picture after each action.
    On,
    /// Recorded without pictures, and kept only for an attempt that did not pass plainly (red,
    /// blocked, or a scenario the agent recorded or repaired).
    #[default]
    RetainOnFailure,
}

impl TraceMode {
    /// `on`, `off`, `retain-on-failure`.
    pub fn name(self) -> &'static str {
        match self {
            TraceMode::Off => "off",
            TraceMode::On => "on",
            TraceMode::RetainOnFailure => "retain-on-failure",
        }
    }
}

impl std::str::FromStr for TraceMode {
    type Err = String;

    fn from_str(text: &str) -> Result<TraceMode, String> {
        match text {
            "off" => Ok(TraceMode::Off),
            "on" => Ok(TraceMode::On),
            "retain-on-failure" => Ok(TraceMode::RetainOnFailure),
            other => Err(format!("unknown trace mode `{other}` (expected on, off or retain-on-failure)")),
        }
    }
}

/// What the traced attempt was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceKind {
    #[default]
    Replay,
    /// The proof replay of what the agent recorded.
    Recording,
    /// The proof replay of what the agent repaired.
    Repair,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceStep {
    pub kind: StepKind,
    pub text: String,
    pub outcome: StepOutcome,
    pub start_ms: u64,
    pub duration_ms: u64,
    /// Interruptions cleared during the step, by their handlers' names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared: Vec<String>,
}

/// One performed action or check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceAction {
    /// 1-based step number.
    pub step: usize,
    /// The action as recorded (tokens, never their values), e.g. `click button "Save"`.
    pub action: String,
    /// The action's type, e.g. `click`, `expectText`.
    #[serde(rename = "type")]
    pub kind: String,
    pub start_ms: u64,
    pub duration_ms: u64,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
    /// The element's box in the page's viewport (CSS pixels), when one was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// How many times the element was looked for (1 when it was ready at once).
    pub attempts: u32,
    /// What each wait was for, in order, each reason once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waited: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The response a network wait or check matched, e.g. `POST /api/orders → 201`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    /// The active tab's address after the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The picture taken after the action, in `frames`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TraceError>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceError {
    /// `not-found`, `ambiguous`, `not-actionable`, `assertion-failed`, `timeout`, ...
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
}

/// A picture of the viewport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Frame {
    pub at_ms: u64,
    /// The viewport it shows, in CSS pixels (the picture is smaller): a box scales by
    /// picture width / `width`.
    pub width: f64,
    pub height: f64,
    /// Base64 of the JPEG.
    pub jpeg: String,
}

/// One network request of the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub method: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `document`, `fetch`, `xhr`, `script`, `stylesheet`, `image`, ...
    pub resource_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    pub start_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ms: Option<u64>,
    /// Bytes received over the wire, headers included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoded_bytes: Option<u64>,
    /// Why the load failed (`net::ERR_CONNECTION_REFUSED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// The response body, only where a check read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The action during which it started (or the last one before it), in `actions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<usize>,
    /// The tab, in opening order (0 is the first).
    pub tab: usize,
}

/// A console message or an uncaught exception.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleLine {
    pub at_ms: u64,
    /// `log`, `info`, `warning`, `error`, `debug`, ..., or `exception` for an uncaught one.
    pub level: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<usize>,
}

/// A tab opened, made active or closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TabEvent {
    pub at_ms: u64,
    /// `opened`, `switched` or `closed`.
    pub event: String,
    /// In opening order (0 is the first).
    pub tab: usize,
    pub url: String,
}

/// The page when an action failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// The failed action, in `actions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<usize>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Base64 of a PNG of the viewport, secrets covered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// The page's DOM, from the browser's MHTML snapshot, as one HTML document with its
    /// stylesheets and pictures inlined and its scripts removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<DomSnapshot>,
    /// Why there is no snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomSnapshot {
    pub html: String,
    /// The size of the MHTML the browser gave.
    pub mhtml_bytes: usize,
}

/// The agent's side of a recording or a repair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentTrace {
    /// The agent, as its driver describes it.
    pub agent: String,
    /// The conversation in order, as the agent saw it: `{role, content: [{text} | {toolUse:
    /// {id, name, input}} | {toolResult: {id, content, isError}}]}`.
    pub turns: Vec<serde_json::Value>,
}
