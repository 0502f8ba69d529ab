//! Replaying one execution of a recording on a medium.
//!
//! What the orchestrator decides here, whatever the medium says: a recording that cannot be
//! replayed is red before the medium is asked; a failure is a Then step's when the recorded
//! step is a Then step (a medium cannot get a failed check repaired by calling it an action);
//! a failed Then step is run once more exactly as recorded and, failing again, makes the
//! scenario red; a medium that went away makes it blocked; a pending proposal that passes is
//! yellow, never green.

use std::time::Instant;

use saffron_recording::{Date, Masker, StepKind, new_unique_seed};

use crate::medium::{ActionAt, FailureClass, Live, Medium, Outcome};
use crate::orchestrator::run::{Refresh, ReplayMode, RunOptions, result};
use crate::plan::Execution;
use crate::resolve::{ExecutionValues, resolve_action};
use crate::sign_in_once::{Saved, SignIn};
use crate::trace::Trace;
use crate::{ActionResult, ScenarioResult, StepOutcome, StepResult, Verdict};

/// A replay that ended, its result not masked yet.
pub(crate) struct Replay<L: Live> {
    pub outcome: ScenarioResult,
    pub masker: Masker,
    /// Set when the replay stopped on an action a repair may take over, with the execution
    /// still open.
    pub stopped: Option<Stop<L>>,
    /// With `refresh_drift`: each drifted action's target as the application has it now.
    pub refreshes: Vec<Refresh>,
    /// The execution's trace, unless traces are off; not written yet.
    pub trace: Option<Trace>,
    /// The requests the medium sent, for the transcript; not written yet.
    pub exchanges: Vec<crate::transcript::Exchange>,
    /// The values kept from responses, the seeds included, as they were at the end.
    pub captured: Vec<(String, String)>,
    /// Set when the replay restored a session that turned out stale: why.
    stale: Option<String>,
}

/// The sign-in an execution starts with, and the session to restore instead of performing it.
struct SessionPlan<'a> {
    sign_in: &'a SignIn,
    restore: Option<&'a Saved>,
}

/// Where a replay stopped, on an execution kept open for a repair.
pub(crate) struct Stop<L: Live> {
    /// 0-based step and action indices.
    pub step: usize,
    pub action: usize,
    pub live: L,
    /// The unique seed the replay filled `{unique}` with: the application holds data made with
    /// it.
    pub unique_seed: String,
    /// The medium's account of the failure.
    pub detail: L::Detail,
}

impl<L: Live> Replay<L> {
    pub(crate) fn ended(outcome: ScenarioResult, masker: Masker) -> Replay<L> {
        Replay {
            outcome,
            masker,
            stopped: None,
            refreshes: Vec::new(),
            trace: None,
            exchanges: Vec::new(),
            captured: Vec::new(),
            stale: None,
        }
    }
}

/// Replays `execution` on `medium`; `masker` holds the run's secrets and gets those the replay
/// substitutes. `seeds` are values captured before it (its Fixture's), read-only copies: a
/// value the scenario captures under the same name shadows its copy.
///
/// With `mode.sign_in_once`, a scenario that starts with a sign-in restores the session an
/// earlier one saved instead of performing it, or performs it and saves the session for the
/// next. A restored session that turns out stale (see [`Live::signed_out`]) is forgotten, and
/// the scenario is run again from the start, performing the sign-in: a repair never sees the
/// stale page, so it never records a sign-in over a later step.
pub(crate) async fn replay_in<M: Medium>(
    medium: &M,
    execution: &Execution,
    options: &RunOptions,
    masker: Masker,
    mode: ReplayMode,
    seeds: &[(String, String)],
) -> Replay<M::Live> {
    let sign_in = if mode.sign_in_once { options.signed_in.sign_in_of(execution) } else { None };
    let Some(sign_in) = sign_in else {
        return replay_once(medium, execution, options, masker, mode, seeds, None).await;
    };
    let saved = options.signed_in.saved(&sign_in.key);
    let plan = SessionPlan { sign_in: &sign_in, restore: saved.as_ref() };
    let mut replay = replay_once(medium, execution, options, masker, mode, seeds, Some(plan)).await;
    let (Some(stale), Some(saved)) = (replay.stale.take(), &saved) else { return replay };
    options.signed_in.forget(&sign_in.key, &saved.state);
    let plan = SessionPlan { sign_in: &sign_in, restore: None };
    let mut again = replay_once(medium, execution, options, replay.masker, mode, seeds, Some(plan)).await;
    if let Some(session) = again.outcome.session.as_mut() {
        session.stale = Some(stale);
    }
    again
}

#[allow(clippy::too_many_arguments)]
async fn replay_once<M: Medium>(
    medium: &M,
    execution: &Execution,
    options: &RunOptions,
    mut masker: Masker,
    mode: ReplayMode,
    seeds: &[(String, String)],
    session: Option<SessionPlan<'_>>,
) -> Replay<M::Live> {
    let started = Instant::now();
    let recording = match &execution.recording {
        Ok(recording) => recording.clone(),
        Err(reason) => {
            let verdict = Verdict::Red { step: None, step_text: None, message: reason.to_string() };
            return Replay::ended(result(execution, verdict, started), masker);
        }
    };
    let mut live = match medium.open(execution, options, mode.trace).await {
        Ok(live) => live,
        Err(cause) => return Replay::ended(result(execution, Verdict::Blocked { cause }, started), masker),
    };
    let seed = new_unique_seed();
    let today = Date::today_utc();
    // Values kept from responses, for `{captured:name}`: a later one under a name replaces it.
    let mut captured: Vec<(String, String)> = seeds.to_vec();
    let mut outcome = result(execution, Verdict::Green, started);
    let mut refreshes = Vec::new();
    let mut failed = false;
    let mut stopped_at = None;
    let steps = recording.steps;
    // The steps a restored session stands for.
    let mut restored = 0;
    if let Some(plan) = &session {
        let sign_in = plan.sign_in;
        let name = sign_in.name.clone();
        outcome.session = Some(crate::SessionUse { name, restored: false, stale: None });
        if let Some(saved) = plan.restore
            && sign_in.steps <= steps.len()
        {
            match live.restore_session(saved).await {
                Ok(()) => {
                    crate::sign_in_once::mask_state(&mut masker, &saved.state);
                    restored = sign_in.steps;
                    if let Some(session) = outcome.session.as_mut() {
                        session.restored = true;
                    }
                }
                // Not taken any more (signed out, expired): forgotten, and this scenario signs in
                // and keeps the session it gets.
                Err(why) => {
                    options.signed_in.forget(&sign_in.key, &saved.state);
                    if let Some(session) = outcome.session.as_mut() {
                        session.stale = Some(why);
                    }
                }
            }
        }
    }
    for (index, step) in steps.iter().enumerate() {
        let mut report = StepResult {
            kind: step.kind,
            text: step.text.clone(),
            outcome: if failed { StepOutcome::Skipped } else { StepOutcome::Passed },
            duration_ms: 0,
            actions: Vec::new(),
            cleared: Vec::new(),
            restored: index < restored,
        };
        let step_mark = live.mark();
        if failed || index < restored {
            live.end_step(&report, step_mark);
            outcome.steps.push(report);
            continue;
        }
        let step_started = Instant::now();
        live.begin_step();
        let table = execution.steps.get(index).and_then(|spec| spec.table.as_ref());
        let is_then = step.kind == StepKind::Outcome;
        let mut action_index = 0;
        while let Some(action) = step.actions.get(action_index) {
            let values = ExecutionValues {
                params: &execution.params,
                unique_seed: &seed,
                today,
                env: options.env.clone(),
                root: &options.root,
                captured: &captured,
            };
            let (resolved, secrets) = match resolve_action(action, &values, table) {
                Ok(resolved) => resolved,
                Err(error) => {
                    outcome.verdict = Verdict::Red {
                        step: Some(index + 1),
                        step_text: Some(step.text.clone()),
                        message: format!("cannot resolve `{action}`: {error}"),
                    };
                    report.actions.push(failed_action(action, None, 0, format!("cannot resolve: {error}")));
                    failed = true;
                    break;
                }
            };
            masker.add_all(&secrets);
            let action_started = Instant::now();
            let at = ActionAt {
                execution,
                steps: &steps,
                step: index,
                action: action_index,
                recorded: action,
                resolved: &resolved,
                secrets: &secrets,
                table,
                values: &values,
                options,
                cleared: report.cleared.len(),
                may_clear: true,
            };
            let mut attempt = live.perform(&at, &mut masker).await;
            let mut rerun_note = None;
            // The Then guard: the recorded step decides, not the medium.
            if let Outcome::Failed(failure) = &attempt
                && failure.class != FailureClass::Interrupted
                && is_then
                && mode.rerun_failed_then
                && resolved.may_repeat()
                // The medium went away: nothing to run it again on.
                && medium.lost().await.is_none()
            {
                attempt = live.perform(&ActionAt { may_clear: false, ..at }, &mut masker).await;
                rerun_note = Some(match &attempt {
                    Outcome::Failed(_) => {
                        "failed again when re-run as recorded on the live page: a Then step is never \
                                           repaired"
                            .to_string()
                    }
                    _ => "failed once, passed when re-run as recorded".to_string(),
                });
            }
            match attempt {
                Outcome::Cleared { name, next } => {
                    outcome.cleared.push(format!("step {} \"{}\": cleared: {name}", index + 1, step.text));
                    report.cleared.push(name);
                    // Actions from `next` on are taken up again: their earlier results go.
                    report.actions.truncate(next.min(report.actions.len()));
                    action_index = next;
                }
                Outcome::Done(mut done) => {
                    for (name, value) in done.captured.drain(..) {
                        captured.retain(|(kept, _)| *kept != name);
                        captured.push((name, value));
                    }
                    refreshes.extend(done.refresh.take());
                    outcome.drift.extend(done.drift.iter().cloned());
                    done.report.notes.extend(rerun_note);
                    report.actions.push(done.report);
                    action_index += 1;
                }
                Outcome::Failed(failure) => {
                    // The medium went away under the action: that says nothing about the app.
                    if let Some(cause) = medium.lost().await {
                        outcome.verdict = Verdict::Blocked { cause: format!("step {} `{action}`: {cause}", index + 1) };
                        failed = true;
                        break;
                    }
                    let evidence = live.evidence(&at, &masker).await;
                    outcome.screenshot = evidence.screenshot.clone();
                    outcome.url = evidence.url.clone();
                    outcome.console_errors = evidence.console_errors.clone();
                    let found_by = &failure.found_by;
                    let reason = &failure.reason;
                    let message = match (&rerun_note, &evidence.hint) {
                        (Some(note), _) => format!("`{action}`{found_by}: {reason} ({note})"),
                        (None, Some(hint)) => format!("`{action}`{found_by}: {reason} ({hint})"),
                        (None, None) => format!("`{action}`{found_by}: {reason}"),
                    };
                    live.failed(&message, &evidence, &masker).await;
                    outcome.verdict =
                        Verdict::Red { step: Some(index + 1), step_text: Some(step.text.clone()), message };
                    let duration_ms = action_started.elapsed().as_millis() as u64;
                    let mut report_action = failed_action(
                        action,
                        failure.locator.clone(),
                        duration_ms,
                        format!("{}{reason}", found_by.trim_start()),
                    );
                    report_action.notes.extend(rerun_note);
                    report_action.attempts = failure.attempts;
                    report_action.waited = failure.waited;
                    report.actions.push(report_action);
                    // A failed Then is never handed to a repair: its check is what the scenario
                    // says. Nor is an action a guard refused (there is nothing to work around),
                    // or an interruption a handler could not clear (a repair would record it
                    // into the scenario).
                    if !is_then && failure.class == FailureClass::Application {
                        stopped_at = Some((index, action_index, failure.detail));
                    }
                    failed = true;
                    break;
                }
            }
        }
        if failed {
            report.outcome = StepOutcome::Failed;
        }
        report.duration_ms = step_started.elapsed().as_millis() as u64;
        live.end_step(&report, step_mark);
        outcome.steps.push(report);
        // The sign-in's steps passed: its session is kept for the scenarios after this one.
        if let Some(plan) = &session
            && restored == 0
            && !failed
            && index + 1 == plan.sign_in.steps
            && let Ok(saved) = live.save_session().await
        {
            crate::sign_in_once::mask_state(&mut masker, &saved.state);
            options.signed_in.keep(&plan.sign_in.key, saved);
        }
    }
    // A failure after a restored session may be the session's: the scenario is run again,
    // signing in, rather than repaired or judged on a stale session.
    let stale = match session.as_ref().and_then(|plan| plan.restore) {
        Some(saved) if restored > 0 && matches!(outcome.verdict, Verdict::Red { .. }) => live.signed_out(saved).await,
        _ => None,
    };
    if stale.is_some() {
        live.close().await;
        return Replay { stale, ..Replay::ended(outcome, masker) };
    }
    if let Some(proposal) = &execution.pending_proposal {
        let proposal = proposal.display().to_string();
        outcome.verdict = match outcome.verdict {
            Verdict::Green => Verdict::Yellow { proposal },
            Verdict::Red { step, step_text, message } => Verdict::Red {
                step,
                step_text,
                message: format!("{message} (replaying the pending proposal {proposal})"),
            },
            other => other,
        };
    }
    outcome.duration_ms = started.elapsed().as_millis() as u64;
    let trace = live.finish(&outcome.verdict, outcome.duration_ms);
    let exchanges = live.exchanges();
    let stopped = match stopped_at {
        Some((step, action, detail)) if mode.keep_live => Some(Stop { step, action, live, unique_seed: seed, detail }),
        _ => {
            live.close().await;
            None
        }
    };
    Replay { outcome, masker, stopped, refreshes, trace, exchanges, captured, stale: None }
}

/// An action that failed, for the reports: `note` says why.
pub(crate) fn failed_action(
    action: &saffron_recording::Action,
    locator: Option<String>,
    duration_ms: u64,
    note: String,
) -> ActionResult {
    ActionResult {
        action: action.to_string(),
        passed: false,
        tier: None,
        locator,
        duration_ms,
        drift: Vec::new(),
        notes: vec![note],
        attempts: 0,
        waited: Vec::new(),
        matched: None,
    }
}

#[cfg(test)]
mod tests;
