//! The runner: selects scenarios, replays their recordings in Chromium and gives each a
//! verdict. A recording is replayed only when it is fresh (made for the scenario's current
//! steps); a stale or missing one is recorded by the agent (`record`), and without an agent it
//! is blocked with "needs recording", never a silent skip. A runner failure (no browser, no
//! agent, a provider down) is `blocked`, never a verdict about the app.

pub mod author;
pub mod config;
pub mod contract;
mod heal;
pub mod hooks;
pub mod interrupt;
mod medium;
mod orchestrator;
mod plan;
mod record;
mod refresh;
mod report;
mod resolve;
mod secrets;
pub mod seed;
pub mod session;
pub mod sign_in_once;
pub mod tags;
pub mod trace;
pub mod transcript;

pub use medium::http::Services;
pub use orchestrator::run::{RunOptions, run, run_with_progress};
pub use record::api::PinnedContracts;

/// A person takes the browser over from the recording agent in a run they watch, and gives it
/// back (see `docs/agent.md`, "A person can take over").
pub mod takeover {
    pub use crate::record::lease::{Holder, Lease};
    pub use crate::record::takeover::Takeover;
}
pub use plan::{Execution, NotReplayable, Selection, line_target, plan};
pub use report::history;
pub use report::{
    AgentTotals, ImportedRun, MergeError, RunFolder, RunReport, ShardOf, VerdictCounts, html, junit, markdown,
    merge_reports, write_imported_reports, write_reports, write_reports_in,
};
pub use secrets::masker_for;
pub use session::{Proof, RunRequest, Session, SessionError};
pub use sign_in_once::SessionSteps;
pub use tags::{TagExpression, TagExpressionError};

use saffron_recording::{StepKind, Tier};
use serde::{Deserialize, Serialize};

/// What happened to one scenario (one Examples row of an Outline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", tag = "verdict")]
pub enum Verdict {
    /// Replayed as recorded.
    Green,
    /// Passed by replaying a proposal that waits for review (`proposal` is its path): the
    /// committed recording no longer works. Exit 0 with a warning; `--strict` fails it.
    Yellow { proposal: String },
    /// Failed: the step, what was expected and what was found.
    Red { step: Option<usize>, step_text: Option<String>, message: String },
    /// The runner could not do its job (no browser...): not a verdict about the app.
    Blocked { cause: String },
}

impl Verdict {
    /// One character for lists: `✓`, `~`, `✗` or `!`.
    pub fn symbol(&self) -> &'static str {
        match self {
            Verdict::Green => "✓",
            Verdict::Yellow { .. } => "~",
            Verdict::Red { .. } => "✗",
            Verdict::Blocked { .. } => "!",
        }
    }

    /// `green`, `yellow`, `red` or `blocked`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Green => "green",
            Verdict::Yellow { .. } => "yellow",
            Verdict::Red { .. } => "red",
            Verdict::Blocked { .. } => "blocked",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioResult {
    pub file: String,
    pub line: u32,
    pub name: String,
    /// The browser of a matrix run (`chromium`, `firefox`); `None` in a run with one browser.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<String>,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// One line per recorded signal that no longer describes the element found (a lower tier
    /// than recorded, a renamed label, placeholder, ...): the page drifted, the replay passed.
    pub drift: Vec<String>,
    /// One line per interruption a handler cleared, e.g. `step 4 "I open the new order form":
    /// cleared: Cookie consent`: not drift, and the verdict stays what the checks say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared: Vec<String>,
    pub duration_ms: u64,
    /// PNG of the page when the scenario failed.
    #[serde(skip)]
    pub screenshot: Option<Vec<u8>>,
    /// Each recorded step as it replayed: its actions, how each found its element, its time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepResult>,
    /// Where the screenshot was saved, relative to the project root (set by the report writer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot_file: Option<String>,
    pub url: Option<String>,
    /// What the page had logged as errors when the scenario failed (console errors, uncaught
    /// exceptions, loads that failed), oldest first, at most [`CONSOLE_ERRORS_KEPT`]: a
    /// script that did not load or threw is often why an element never came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub console_errors: Vec<String>,
    /// What the agent did for the scenario in this run (it had no fresh recording).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentRun>,
    /// Why each earlier attempt failed, when the scenario was run again (`--retries`): a red
    /// replay is run anew from the start in a fresh context before any repair is tried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retried: Vec<String>,
    /// Passed on a retry after failing: flaky, as Playwright says. It passes (exit 0) and every
    /// report says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flaky: bool,
    /// The trace files kept of this scenario's attempts, relative to the project root, in
    /// order (see `saffron trace`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<String>,
    /// The trace viewer page of those traces, relative to the project root (set by the report
    /// writer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_viewer: Option<String>,
    /// The transcript of an `@api` scenario's requests, relative to the project root, when
    /// `[api] transcript` keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// That transcript's exchanges, masked, for the HTML report of this run (not in the JSON
    /// report: the file is).
    #[serde(skip)]
    pub exchanges: Vec<transcript::Exchange>,
    /// What the scenario did with the sign-in it starts with, when it starts with one (see
    /// [`sign_in_once`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionUse>,
}

impl ScenarioResult {
    /// The scenario's name without the browser a matrix adds to it (`Search orders [firefox]`).
    pub fn bare_name(&self) -> &str {
        let suffix = self.browser.as_deref().map(|browser| format!(" [{browser}]"));
        suffix.and_then(|suffix| self.name.strip_suffix(suffix.as_str())).unwrap_or(&self.name)
    }

    /// Where the report keeps the scenario's recent verdicts: `file:line`, and the browser in
    /// a matrix (`file:line [firefox]`).
    pub fn history_key(&self) -> String {
        match &self.browser {
            Some(browser) => format!("{}:{} [{browser}]", self.file, self.line),
            None => format!("{}:{}", self.file, self.line),
        }
    }
}

/// How a scenario that starts with a sign-in (a StepSet tagged `@session`, `[session] steps`)
/// went about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionUse {
    /// The StepSet's name, or the first step's text.
    pub name: String,
    /// Whether the steps were performed (and the session they left kept for later scenarios)
    /// or a kept session was restored instead.
    pub restored: bool,
    /// A restored session that was stale: why it was judged so. The scenario was then run again
    /// from the start, performing the steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<String>,
}

/// What recording a scenario took: the agent's sessions, what they used, what was saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRun {
    /// The agent, as its driver describes it (`anthropic claude-sonnet-4-5`, a command).
    pub agent: String,
    pub usage: AgentUsage,
    /// US dollars, when prices are configured or the vendor reported them; `None` reads "cost
    /// not reported", never $0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// `configured prices` or `reported by the provider`, with `cost_usd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_source: Option<String>,
    /// Steps whose actions came from recordings of other scenarios (zero tokens), of `steps`.
    pub seeded_steps: usize,
    pub steps: usize,
    /// Agent sessions held: one per recorded segment, plus a refine after a failed proof.
    pub sessions: u32,
    /// Targets that only CSS or position identifies, one line each: fragile on the next change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fragile_targets: Vec<String>,
    /// The recording written, relative to the project root; `None` when nothing was saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<String>,
    /// Where the evidence of a recording that was not saved is kept, relative to the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
    /// The proposal a repair filed, relative to the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
    /// Set for a repair: the 1-based step replay failed at, where the agent took over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repaired_from_step: Option<usize>,
}

/// What the agent's model calls used (zero for an agent that reports nothing).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub calls: u32,
    pub model_time_ms: u64,
}

impl From<&saffron_agent::Usage> for AgentUsage {
    fn from(usage: &saffron_agent::Usage) -> AgentUsage {
        AgentUsage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            calls: usage.calls,
            model_time_ms: usage.model_time.as_millis() as u64,
        }
    }
}

/// How far a step got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StepOutcome {
    Passed,
    Failed,
    /// Not reached: an earlier step failed.
    Skipped,
}

/// One recorded step of a replay, for the reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepResult {
    pub kind: StepKind,
    pub text: String,
    pub outcome: StepOutcome,
    pub duration_ms: u64,
    pub actions: Vec<ActionResult>,
    /// The interruptions cleared during the step, by their handlers' names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared: Vec<String>,
    /// Passed without performing its actions: a session it signs in was restored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restored: bool,
}

/// One replayed action, for the reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    /// The action as recorded (tokens, never their values), e.g. `click button "Save"`.
    pub action: String,
    pub passed: bool,
    /// The tier that found its element, and the locator (scope included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
    pub duration_ms: u64,
    /// Recorded signals the element no longer has (one line each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<String>,
    /// What happened on the way that did not fail it (a dialog dismissed...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How many times the element was looked for before it would do (0 for an action that
    /// looks for none, and then not written).
    #[serde(default, skip_serializing_if = "never")]
    pub attempts: u32,
    /// What the action waited for meanwhile, each reason once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waited: Vec<String>,
    /// The response a network wait or check matched, e.g. `POST /api/orders → 201`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
}

fn never(attempts: &u32) -> bool {
    *attempts == 0
}

/// How many of a failed scenario's console errors its result keeps.
pub const CONSOLE_ERRORS_KEPT: usize = 20;

impl ScenarioResult {
    /// The scenario at `file:line` with `verdict` and nothing else yet: no steps, drift or
    /// evidence, no time. Callers set what they know with struct update syntax.
    pub fn new(file: impl Into<String>, line: u32, name: impl Into<String>, verdict: Verdict) -> ScenarioResult {
        ScenarioResult {
            browser: None,
            file: file.into(),
            line,
            name: name.into(),
            verdict,
            drift: Vec::new(),
            cleared: Vec::new(),
            duration_ms: 0,
            screenshot: None,
            steps: Vec::new(),
            screenshot_file: None,
            url: None,
            console_errors: Vec::new(),
            agent: None,
            retried: Vec::new(),
            flaky: false,
            traces: Vec::new(),
            trace_viewer: None,
            transcript: None,
            exchanges: Vec::new(),
            session: None,
        }
    }

    pub fn is_green(&self) -> bool {
        matches!(self.verdict, Verdict::Green)
    }

    /// Green, or yellow: the app did what the scenario says.
    pub fn passed(&self) -> bool {
        matches!(self.verdict, Verdict::Green | Verdict::Yellow { .. })
    }
}
