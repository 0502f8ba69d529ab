//! The seam between the orchestrator and a medium.
//!
//! The orchestrator owns a run's flow: whether a recording is fresh, which proposal is pending,
//! the Outline rows, retries, the escalation from a replay to a recording or a repair, the
//! guard that runs a failed Then step again as recorded and never hands it to a repair, the
//! proof replays, masking, filing and the verdicts. A medium owns the performance: a browser
//! today, HTTP next. The orchestrator drives it through two traits. A [`Medium`] opens
//! executions; a [`Live`] execution is one isolated performance of a scenario (the run, a
//! proof, a pending proposal's replay) that performs one resolved action at a time, keeps its
//! own evidence, and closes. Nothing in either names a page.
//!
//! - [`browser`]: Chromium over CDP, a fresh context per execution.
//! - [`http`]: `@api` scenarios, on Saffron's own HTTP client.

pub(crate) mod browser;
pub(crate) mod http;

use saffron_recording::{Action, Masker, RecordedStep, Secret};

use crate::ActionResult;
use crate::orchestrator::run::{Refresh, RunOptions};
use crate::plan::Execution;
use crate::resolve::ExecutionValues;
use crate::sign_in_once::Saved;
use crate::trace::{Trace, TraceKind};

/// Where a run's executions are performed.
pub(crate) trait Medium {
    type Live: Live;

    /// Opens one isolated execution of `execution`; the error is why the medium cannot (the
    /// scenario is blocked: the runner failed, not the application).
    async fn open(&self, execution: &Execution, options: &RunOptions, trace: TraceKind) -> Result<Self::Live, String>;

    /// Why the medium itself went away (a browser that died), if it did: a failure then says
    /// nothing about the application.
    async fn lost(&self) -> Option<String>;
}

/// One action to perform, where it stands in the recording, and what performing it may need.
pub(crate) struct ActionAt<'a> {
    pub execution: &'a Execution,
    /// The recording's steps (an interruption's handler reads the next step's checks).
    pub steps: &'a [RecordedStep],
    /// 0-based indices of the step and of the action in it.
    pub step: usize,
    pub action: usize,
    /// The action as recorded, and with its tokens filled in.
    pub recorded: &'a Action,
    pub resolved: &'a Action,
    /// The secrets that went into `resolved`: the medium keeps them where the guard allows.
    pub secrets: &'a [Secret],
    /// The step's data table, for `<table:key>`.
    pub table: Option<&'a Vec<Vec<String>>>,
    pub values: &'a ExecutionValues<'a>,
    pub options: &'a RunOptions,
    /// Interruptions already cleared in this step.
    pub cleared: usize,
    /// Whether an interruption that shows may be cleared (not when a Then step's check is run
    /// again as recorded).
    pub may_clear: bool,
}

/// How performing an action went.
pub(crate) enum Outcome<D> {
    Done(Box<Done>),
    /// An interruption was cleared by the handler `name`; the step is taken up again from its
    /// action `next` (the results of the actions from there on go).
    Cleared {
        name: String,
        next: usize,
    },
    Failed(Failure<D>),
}

/// An action performed.
pub(crate) struct Done {
    /// Its line in the report (passed).
    pub report: ActionResult,
    /// One line per drifted signal, for the scenario's drift list.
    pub drift: Vec<String>,
    /// With `--refresh-drift`: its target as the application has it now.
    pub refresh: Option<Refresh>,
    /// Values it kept (a response's fields), for later `{captured:name}`.
    pub captured: Vec<(String, String)>,
}

/// An action that failed after its waits. `D` is the medium's own account of it, for a repair.
pub(crate) struct Failure<D> {
    pub class: FailureClass,
    /// The medium's words for it, without the action they would name first.
    pub reason: String,
    /// ` (found by css "#save")` when the medium found an element the action then failed on.
    pub found_by: String,
    /// The locator that found that element, for the report.
    pub locator: Option<String>,
    pub attempts: u32,
    pub waited: Vec<String>,
    pub detail: D,
}

/// What a failure says about who may act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureClass {
    /// The application did not do what the recording expects: a repair may work around it
    /// (unless it is a Then step's check, which only the orchestrator decides).
    Application,
    /// A guard refused the action before anything was sent: nothing to work around.
    Refused,
    /// An interruption showed that no handler cleared: a repair would record it into the
    /// scenario.
    Interrupted,
}

/// What is kept of the state of the application when an action failed.
#[derive(Default)]
pub(crate) struct Evidence {
    pub screenshot: Option<Vec<u8>>,
    pub url: Option<String>,
    pub console_errors: Vec<String>,
    /// What to do about it, when the medium can tell (an interruption a handler would clear).
    pub hint: Option<String>,
}

/// One isolated execution of a scenario on a medium.
pub(crate) trait Live: Sized {
    /// The medium's own account of a failure, handed to a repair.
    type Detail: Clone;

    /// Milliseconds since the execution opened, to mark where a step begins in its trace.
    fn mark(&self) -> u64;

    /// A step begins (a step skipped after a failure does not).
    fn begin_step(&mut self);

    /// A step ended (or was skipped), reported as `report`, begun at `mark`.
    fn end_step(&mut self, report: &crate::StepResult, mark: u64);

    /// Performs one action. An action that passed is in the execution's trace already; a
    /// failure is traced by [`Live::evidence`] once the orchestrator has decided it stands.
    async fn perform(&mut self, at: &ActionAt<'_>, masker: &mut Masker) -> Outcome<Self::Detail>;

    /// The failure of `at` stands: it is traced, and what the application shows is kept.
    async fn evidence(&mut self, at: &ActionAt<'_>, masker: &Masker) -> Evidence;

    /// The scenario's verdict message for that failure, for the trace.
    async fn failed(&mut self, message: &str, evidence: &Evidence, masker: &Masker);

    /// The execution's trace, once its verdict is in (`None` when traces are off).
    fn finish(&mut self, verdict: &crate::Verdict, duration_ms: u64) -> Option<Trace>;

    /// The requests it sent and what came back, for the transcript (none for a medium that
    /// sends none itself).
    fn exchanges(&mut self) -> Vec<crate::transcript::Exchange> {
        Vec::new()
    }

    /// Puts a session a sign-in saved into the execution, instead of performing the sign-in's
    /// steps; why not, when the medium cannot.
    async fn restore_session(&mut self, _saved: &Saved) -> Result<(), String> {
        Err("this medium keeps no session".into())
    }

    /// The session the execution holds now that its sign-in's steps passed.
    async fn save_session(&mut self) -> Result<Saved, String> {
        Err("this medium keeps no session".into())
    }

    /// Why a failure after `saved` was restored says the session was stale (the page is one
    /// the sign-in went through, the application answered 401), if it does.
    async fn signed_out(&mut self, _saved: &Saved) -> Option<String> {
        None
    }

    /// Ends the execution.
    async fn close(self);
}
