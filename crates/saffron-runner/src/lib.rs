//! The runner: selects scenarios, replays their recordings in Chromium and gives each a
//! verdict. A recording is replayed only when it is fresh (made for the scenario's current
//! steps); without an agent, a stale or missing one is red with "needs recording", never a
//! silent skip. A runner failure (no browser) is `blocked`, never a verdict about the app.

pub mod config;
mod execute;
pub mod hooks;
mod plan;
mod report;
mod resolve;
mod secrets;
pub mod session;
pub mod tags;

pub use execute::{RunOptions, run, run_with_progress};
pub use plan::{Execution, Selection, line_target, plan};
pub use report::{MergeError, RunReport, html, junit, markdown, merge_reports, write_reports};
pub use secrets::masker_for;
pub use session::{RunRequest, Session, SessionError};
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
    #[serde(flatten)]
    pub verdict: Verdict,
    /// One line per recorded signal that no longer describes the element found (a lower tier
    /// than recorded, a renamed label, placeholder, ...): the page drifted, the replay passed.
    pub drift: Vec<String>,
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
}

impl ScenarioResult {
    pub fn is_green(&self) -> bool {
        matches!(self.verdict, Verdict::Green)
    }

    /// Green, or yellow: the app did what the scenario says.
    pub fn passed(&self) -> bool {
        matches!(self.verdict, Verdict::Green | Verdict::Yellow { .. })
    }
}
