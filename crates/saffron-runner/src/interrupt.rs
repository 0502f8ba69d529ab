//! Interruptions cleared at runtime: the project's handlers (`.saffron/handlers/`), loaded for
//! a run, and what replay does when one of their detectors shows while an action waits.
//!
//! The browser stops a waiting action as soon as a detector shows, before anything is
//! dispatched. The handler's actions then clear the interruption, and the run carries on:
//! where the handler left the page (an overlay is gone), or back on the page the run was on
//! (an expired session signed in again), taking the interrupted step up where nothing it
//! already did is done again. Assertions are retried; actions are never performed twice.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use saffron_browser::{Context, FailureKind};
use saffron_recording::{Action, Handler, Masker, RecordedStep, Resume, StepKind, Store};

use crate::orchestrator::run::RunOptions;
use crate::plan::Execution;
use crate::resolve::{ExecutionValues, resolve_action};

/// How many times one step may be interrupted before the run stops: a handler that does not
/// keep its interruption away would otherwise loop.
pub(crate) const MAX_CLEARS_PER_STEP: usize = 3;

/// How long a check takes to say whether an interrupted action already took effect: the page
/// is loaded by then, so the check holds at once or not at all.
const TOOK_EFFECT_LOOK: Duration = Duration::from_millis(500);

/// One handler, ready for a run.
#[derive(Debug, Clone)]
pub struct LoadedHandler {
    pub name: String,
    /// Relative to the project root, for messages.
    pub file: PathBuf,
    /// What clears it, or why it cannot be worked out (a StepSet no recorded scenario
    /// invokes): said when the interruption shows, and only then.
    pub actions: Result<Vec<Action>, String>,
    pub resume: Resume,
    pub detector: saffron_browser::Detector,
    /// It clears with a StepSet of the project's own scenarios (a sign-in), reviewed as those
    /// scenarios are: its steps may leave the interruption's page on the way.
    pub from_step_set: bool,
}

/// The project's handlers, in file order.
#[derive(Debug, Clone, Default)]
pub struct Handlers {
    pub list: Vec<LoadedHandler>,
}

impl Handlers {
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn detectors(&self) -> Vec<saffron_browser::Detector> {
        self.list.iter().map(|handler| handler.detector.clone()).collect()
    }
}

/// Reads the handlers in `root`'s `.saffron/handlers/`. A handler that names a StepSet takes
/// the actions recorded for that set's steps in the first of `executions` that has them; when
/// none has, the handler still watches, and says so if its interruption shows. An unreadable
/// handler is an error naming the file: a run must not go on without a handler the project
/// committed.
pub fn load_handlers(root: &Path, executions: &[Execution]) -> Result<Handlers, String> {
    let store = Store::open(root).map_err(|error| error.to_string())?;
    let scan = store.load_handlers();
    if let Some((path, error)) = scan.unreadable.first() {
        return Err(format!("the handler {} cannot be read: {error}", shown(root, path)));
    }
    let mut list = Vec::with_capacity(scan.found.len());
    for (path, handler) in scan.found {
        let file = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        list.push(loaded(handler, file, executions)?);
    }
    Ok(Handlers { list })
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

/// A handler with its own actions, ready for a run (`file` names it in messages).
pub(crate) fn loaded_handler(handler: Handler, file: PathBuf) -> Result<LoadedHandler, String> {
    loaded(handler, file, &[])
}

fn loaded(handler: Handler, file: PathBuf, executions: &[Execution]) -> Result<LoadedHandler, String> {
    let actions = match &handler.step_set {
        Some(set) => step_set_actions(set, executions).ok_or_else(|| {
            format!(
                "it clears with the StepSet \"{set}\", which no recorded scenario invokes: record a scenario that \
                 invokes it, or write the handler's actions"
            )
        }),
        None => Ok(handler.actions),
    };
    let detector = saffron_browser::Detector::new(handler.detect.target, handler.detect.url_regex.as_deref())
        .map_err(|error| format!("the handler {}: detect.urlRegex: {error}", file.display()))?;
    let from_step_set = handler.step_set.is_some();
    Ok(LoadedHandler { name: handler.name, file, actions, resume: handler.resume, detector, from_step_set })
}

/// The actions recorded for the steps a StepSet expands to, from the first recording of
/// `executions` whose steps came from it.
fn step_set_actions(set: &str, executions: &[Execution]) -> Option<Vec<Action>> {
    executions.iter().find_map(|execution| {
        let recording = execution.recording.as_ref().ok()?;
        if execution.step_origins.len() != recording.steps.len() {
            return None;
        }
        let from_set: Vec<&RecordedStep> = recording
            .steps
            .iter()
            .zip(&execution.step_origins)
            .skip_while(|(_, origin)| origin.from_set.as_deref() != Some(set))
            .take_while(|(_, origin)| origin.from_set.as_deref() == Some(set))
            .map(|(step, _)| step)
            .collect();
        (!from_set.is_empty()).then(|| from_set.iter().flat_map(|step| step.actions.iter().cloned()).collect())
    })
}

/// What clearing an interruption decided.
pub(crate) struct Cleared {
    /// The handler's name, for the step's report.
    pub name: String,
    /// The action of the step to take up next.
    pub next: usize,
}

/// Everything about the interrupted step that deciding where to carry on needs.
pub(crate) struct Interrupted<'a> {
    pub step: &'a RecordedStep,
    /// The step after it, whose checks say whether the interrupted one already took effect.
    pub next_step: Option<&'a RecordedStep>,
    pub table: Option<&'a Vec<Vec<String>>>,
    /// The action that was waiting when the interruption showed.
    pub action: usize,
    /// Where the page was before each action of the step that was performed (`None` for an
    /// action not performed yet, or one that cannot have had an effect).
    pub urls_before: &'a [Option<String>],
}

/// Clears interruption `detector` and says which action of the step to take up next, or why
/// the run cannot go on (the message of a red step).
pub(crate) async fn clear(
    context: &mut Context,
    handlers: &Handlers,
    detector: usize,
    interrupted: Interrupted<'_>,
    values: &ExecutionValues<'_>,
    options: &RunOptions,
    masker: &mut Masker,
) -> Result<Cleared, String> {
    let Some(handler) = handlers.list.get(detector) else {
        return Err(format!("an interruption showed that no handler of this run clears (detector {detector})"));
    };
    context.pause_watch(true);
    let cleared = async {
        let back_to = match handler.resume {
            Resume::ReturnToPage => context.page_before_interruption(&handler.detector).await,
            Resume::Here => None,
        };
        run_actions(context, handler, values, options, masker).await?;
        gone(context, handler, detector, options).await?;
        if handler.resume == Resume::Here {
            return Ok(interrupted.action);
        }
        if let Some(url) = back_to
            && context.url().await.ok().as_deref() != Some(url.as_str())
        {
            let goto = Action::Goto { url: url.clone(), timeout_ms: None };
            let timeout = options.timeouts.for_action(&goto);
            context.perform(&goto, Some(timeout)).await.map_err(|failure| {
                format!("the handler \"{}\" cleared, but going back to {url} failed: {}", handler.name, failure.message)
            })?;
        }
        taken_up_at(context, &interrupted, values).await
    }
    .await;
    context.pause_watch(false);
    cleared.map(|next| Cleared { name: handler.name.clone(), next })
}

async fn run_actions(
    context: &mut Context,
    handler: &LoadedHandler,
    values: &ExecutionValues<'_>,
    options: &RunOptions,
    masker: &mut Masker,
) -> Result<(), String> {
    let failed = |action: &Action, why: String| {
        format!(
            "the page showed \"{}\", and its handler ({}) failed at `{action}`: {why}",
            handler.name,
            handler.file.display()
        )
    };
    let actions = handler.actions.as_ref().map_err(|why| {
        format!("the page showed \"{}\", and its handler ({}) cannot run: {why}", handler.name, handler.file.display())
    })?;
    // The page the handler's own last `goto` opened, where it may act too.
    let mut own_page: Option<String> = None;
    for action in actions {
        let (resolved, secrets) = resolve_action(action, values, None).map_err(|error| failed(action, error))?;
        masker.add_all(&secrets);
        let timeout = options.timeouts.for_action(&resolved);
        let mut guard = options.secret_guard(&secrets);
        // A handler clears its interruption and does nothing else: what it acts on is inside
        // the interruption, while it shows, or on the page its own `goto` opened (a sign-in
        // page it went to). An action anywhere else (a click on the page behind a dismissed
        // dialog, on the app after signing in) would change what the scenario does, on every run
        // the interruption shows in; it is refused, undone. The browser asks that of the element
        // an input acts on, right before acting; an input with no element (a `goto`, a key
        // pressed on the page) is asked here. Waiting for a response, arming a dialog's answer
        // and checks touch nothing.
        if !handler.from_step_set && !resolved.is_assertion() {
            guard.inside =
                Some(saffron_browser::HandlerBounds { detector: handler.detector.clone(), own_page: own_page.clone() });
            let elementless = matches!(resolved, Action::Goto { .. } | Action::Press { target: None, .. });
            let shows = || async { context.interruption_shows_now(&handler.detector).await == Some(true) };
            if elementless && !shows().await && (own_page.is_none() || context.url().await.ok() != own_page) {
                return Err(failed(
                    action,
                    "refused: the interruption no longer shows, and a handler acts only while its interruption \
                     shows or on the page its own goto opened (an action anywhere else is the scenario's, not the \
                     handler's)"
                        .to_owned(),
                ));
            }
        }
        let is_goto = matches!(resolved, Action::Goto { .. });
        context
            .perform_guarded(&resolved, Some(timeout), guard)
            .await
            .map_err(|failure| failed(action, failure.message))?;
        if is_goto {
            own_page = context.url().await.ok();
        }
    }
    Ok(())
}

/// Waits until the interruption no longer shows: a handler that ran but left it in place
/// cleared nothing.
async fn gone(context: &Context, handler: &LoadedHandler, detector: usize, options: &RunOptions) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_millis(options.timeouts.action_ms);
    let mut pause = Duration::from_millis(20);
    loop {
        if context.interruption_shows(detector).await != Some(true) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the page showed \"{}\", and it still shows after its handler ({}) ran",
                handler.name,
                handler.file.display()
            ));
        }
        tokio::time::sleep(pause.min(deadline.saturating_duration_since(Instant::now()))).await;
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

/// Back on the page the run was on: which action of the interrupted step to take up. The
/// step's inputs are redone when its page was loaded again; an action that may have been
/// accepted (a click, a key press) is done again only when the step shows it did not take
/// effect: the response the step waits for after it was not seen, the page is not where it
/// led, and the step's checkpoint does not hold. When nothing in the step can tell, the run
/// stops rather than risk doing it twice.
async fn taken_up_at(
    context: &mut Context,
    interrupted: &Interrupted<'_>,
    values: &ExecutionValues<'_>,
) -> Result<usize, String> {
    let actions = &interrupted.step.actions;
    let Some(effect) = (0..interrupted.action).rev().find(|&i| !actions[i].may_repeat()) else {
        // Nothing that may have been accepted: the step starts again on the page.
        return Ok(0);
    };
    let before = interrupted.urls_before.get(effect).cloned().flatten();
    let now = context.url().await.ok();
    if before.is_some() && now.is_some() && before != now {
        return Ok(interrupted.action);
    }
    let waits: Vec<&Action> =
        actions[effect + 1..].iter().filter(|action| matches!(action, Action::WaitForResponse { .. })).collect();
    let checks: Vec<&Action> = actions[effect + 1..]
        .iter()
        .chain(
            interrupted.next_step.filter(|step| step.kind == StepKind::Outcome).map_or(&[][..], |step| &step.actions),
        )
        .filter(|action| action.is_assertion())
        .collect();
    if waits.is_empty() && checks.is_empty() {
        return Err(format!(
            "the step was interrupted after `{}`, and nothing in it tells whether that took effect (no response it \
             waits for, no check after it), so it is not done again: record a waitForResponse after it",
            actions[effect]
        ));
    }
    for wait in &waits {
        if holds(context, wait, interrupted.table, values).await {
            return Ok(interrupted.action);
        }
    }
    if !checks.is_empty() {
        let mut all = true;
        for check in &checks {
            if !holds(context, check, interrupted.table, values).await {
                all = false;
                break;
            }
        }
        if all {
            return Ok(interrupted.action);
        }
    }
    Ok(0)
}

/// Whether `action` (a wait or a check) holds on the page now.
async fn holds(
    context: &mut Context,
    action: &Action,
    table: Option<&Vec<Vec<String>>>,
    values: &ExecutionValues<'_>,
) -> bool {
    let Ok((resolved, _)) = resolve_action(action, values, table) else { return false };
    context.perform(&resolved, Some(TOOK_EFFECT_LOOK)).await.is_ok()
}

/// Whether a failure is an interruption some handler clears.
pub(crate) fn interrupted_by(kind: &FailureKind) -> Option<usize> {
    match kind {
        FailureKind::Interrupted { detector } => Some(*detector),
        _ => None,
    }
}

/// A hint for a red that looks like an interruption when no handler clears it: something
/// covering the page, or a page the recording never went to.
pub(crate) fn suggestion(
    kind: &FailureKind,
    url: Option<&str>,
    base_url: &str,
    steps: &[RecordedStep],
) -> Option<String> {
    const HINT: &str = "if it is an interruption (a consent dialog, a notice, an expired session) and not a defect, \
                        add a handler for it under .saffron/handlers/ (docs/handlers.md)";
    if let FailureKind::NotActionable { reason } = kind
        && reason.contains("intercepts pointer events")
    {
        return Some(format!("something covers the page; {HINT}"));
    }
    let relative = saffron_browser::relativize_url(base_url, url?);
    (sent_back(steps, &relative)
        && matches!(kind, FailureKind::NotFound | FailureKind::AssertionFailed | FailureKind::Ambiguous))
    .then(|| format!("the page is at {relative}, where the recording never goes; {HINT}"))
}

/// Whether `relative` (an address relative to the base URL) is a page the recording's steps go
/// to, at another address (`/login?expired=1` where the recording signs in at `/login`): the
/// run was sent back there, as an expired session sends it.
pub(crate) fn sent_back(steps: &[RecordedStep], relative: &str) -> bool {
    let known: Vec<&String> = steps
        .iter()
        .flat_map(|step| &step.actions)
        .filter_map(|action| match action {
            Action::Goto { url, .. } | Action::ExpectUrl { url: Some(url), .. } => Some(url),
            _ => None,
        })
        .collect();
    let path = |url: &str| url.split(['?', '#']).next().unwrap_or_default().to_owned();
    !known.iter().any(|url| **url == relative) && known.iter().any(|url| path(url) == path(relative))
}
