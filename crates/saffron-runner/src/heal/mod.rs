//! Repairing a replay mid-run: when a recorded action fails after its waits, the agent takes
//! over on the live page at that step; the repair is merged mechanically ([`merge`]), replayed
//! from scratch at zero AI in a fresh context (the proof), and filed as a proposal ([`file`])
//! for a person to accept or reject. The scenario is yellow only when the proof passed.
//!
//! - A failed Then step never reaches here: replay re-runs it as recorded and it is red.
//! - A proof that fails gets one refine session from the proof's failure; a second failure
//!   files the proposal marked unverified and the scenario is red.
//! - An agent or provider that dies mid-repair gets one retry (a fresh replay to the failure);
//!   a second death leaves the scenario blocked, with nothing filed.
//! - The agent's word decides nothing: its "success" only leads to the proof.

pub(crate) mod api;
pub(crate) mod file;
pub(crate) mod interruption;
pub(crate) mod merge;
pub(crate) mod prompt;

use std::sync::Arc;
use std::time::{Duration, Instant};

use saffron_agent::{AgentDriver, Cost, Usage};
use saffron_browser::Browser;
use saffron_index::repair_rules;
use saffron_recording::{Date, Masker, Recording, Secret};

use self::merge::MergeInput;
use crate::orchestrator::run::{REPAIR_PROOF, ReplayMode, Replayed, RunOptions, Stopped, masked, replay_live};
use crate::plan::Execution;
use crate::record::gateway::{Account, Finish, Gateway, Values};
use crate::record::page::ContextPage;
use crate::record::recorder::{self, StepSource};
use crate::trace::TraceKind;
use crate::{AgentRun, ScenarioResult, Verdict};

/// A merged repair, not yet proven.
pub(crate) struct Repair {
    pub recording: Recording,
    /// Adaptation notes of the merge.
    pub notes: Vec<String>,
    pub account: Account,
    /// The 0-based step the session took over at.
    pub from_step: usize,
    /// What the rules of repairs find in it against the committed recording, judged once.
    pub review: repair_rules::RepairReview,
    /// The handler it amounts to when what it met was an interruption (see [`interruption`]).
    pub interruption: Option<saffron_recording::Handler>,
}

enum SessionEnd {
    Repaired(Box<Repair>),
    /// The session settled the scenario (a defect the agent found, an unverified end, a lost
    /// browser).
    Verdict(Verdict),
    /// The agent or its provider failed: worth one retry.
    AgentFailed(String),
}

#[derive(Default)]
struct Tally {
    usage: Usage,
    sessions: u32,
    fragile: Vec<String>,
    /// Every session's conversation, in order, for the proof replay's trace.
    conversation: Vec<saffron_agent::Message>,
    /// The traces kept so far: the failed replay's, then each proof's.
    traces: Vec<String>,
}

/// The replay mode of a scenario that may be repaired: the live page kept on a failure, and a
/// failed Then re-run as recorded. A scenario that starts with a sign-in restores a kept
/// session, so the repair works on the page as the replay left it, signed in.
pub(crate) const ESCALATING: ReplayMode =
    ReplayMode { keep_live: true, rerun_failed_then: true, trace: TraceKind::Replay, sign_in_once: true };

/// What a repair came to: the scenario's result (masked), and what other scenarios of the run
/// may use without asking the agent again.
pub(crate) struct Healed {
    pub result: ScenarioResult,
    /// The proven recording of a yellow repair, for the other rows of the scenario.
    pub recording: Option<Recording>,
    /// The proven handler of an interruption the repair met, filed for review, for every other
    /// scenario the same interruption stops.
    pub handler: Option<crate::interrupt::LoadedHandler>,
}

/// Repairs the scenario `first` stopped on: yellow with a verified proposal (a recording, or a
/// handler when what it met was an interruption), red (a defect, an unverified repair), or
/// blocked.
pub(crate) async fn heal(
    browser: &Browser,
    execution: &Execution,
    options: &RunOptions,
    driver: &Arc<dyn AgentDriver>,
    first: Replayed,
) -> Healed {
    let (result, recording, handler) = heal_inner(browser, execution, options, driver, first).await;
    Healed { result, recording, handler }
}

type Outcome = (ScenarioResult, Option<Recording>, Option<crate::interrupt::LoadedHandler>);

async fn heal_inner(
    browser: &Browser,
    execution: &Execution,
    options: &RunOptions,
    driver: &Arc<dyn AgentDriver>,
    first: Replayed,
) -> Outcome {
    let started = Instant::now();
    let Replayed { outcome: failed, mut masker, stopped, .. } = first;
    let (Some(stopped), Ok(replayed)) = (stopped, execution.recording.clone()) else {
        return (masked(failed, &masker), None, None);
    };
    let committed = execution.committed.clone().unwrap_or_else(|| replayed.clone());
    let secret_names = crate::record::secret_names(execution, options);
    for name in &secret_names {
        if let Some(value) = (options.env)(name) {
            masker.add(&Secret { name: name.clone(), value });
        }
    }
    let mut tally = Tally { traces: failed.traces.clone(), ..Tally::default() };
    let context = Context { browser, execution, options, driver, secret_names: &secret_names };

    // The repair on the live page; after an agent failure, once more from a fresh replay.
    let mut live = Some((stopped, failed));
    let mut agent_failure: Option<String> = None;
    let (repair, failed_replay) = loop {
        let (stop, failed) = match live.take() {
            Some(live) => live,
            None => {
                let mut again =
                    replay_live(Some(browser.clone()), execution.clone(), options.clone(), masker.clone(), ESCALATING)
                        .await;
                crate::trace::keep(options, &mut again.outcome, again.trace.take(), &again.masker);
                tally.traces.append(&mut again.outcome.traces);
                masker = again.masker;
                match again.stopped {
                    Some(stop) => (stop, again.outcome),
                    // It passed this time, or failed where no repair may go: that is the verdict.
                    None => {
                        return (finished(&context, &tally, again.outcome, None, None, &masker, started), None, None);
                    }
                }
            }
        };
        let step = Some(stop.step);
        match context.session(stop, &failed, &replayed, &committed, false, &mut masker, &mut tally).await {
            SessionEnd::Repaired(repair) => break (*repair, failed),
            SessionEnd::Verdict(verdict) => {
                let outcome = ScenarioResult { verdict, ..failed };
                return (finished(&context, &tally, outcome, None, step, &masker, started), None, None);
            }
            SessionEnd::AgentFailed(cause) => match agent_failure {
                None => agent_failure = Some(cause),
                Some(first) => {
                    let verdict = Verdict::Blocked {
                        cause: format!("the repairing agent failed twice, nothing was filed: {cause} (first: {first})"),
                    };
                    let outcome = ScenarioResult { verdict, ..failed };
                    return (finished(&context, &tally, outcome, None, step, &masker, started), None, None);
                }
            },
        }
    };
    let first_step = repair.from_step;
    if repair.account.rewrites.is_empty() && interruption::changes_nothing(&committed, &repair.recording) {
        // A repair that changes nothing is not a repair: the same actions passed when the agent
        // did them, so the failure did not come back. The replay's failure stands.
        let verdict = match failed_replay.verdict.clone() {
            Verdict::Red { step, step_text, message } => Verdict::Red {
                step,
                step_text,
                message: format!(
                    "{message} (the repairing agent did what the recording does and it passed: nothing changed, so \
                     nothing was filed; the scenario is flaky here)"
                ),
            },
            other => other,
        };
        let outcome = ScenarioResult { verdict, ..failed_replay };
        return (finished(&context, &tally, outcome, None, Some(first_step), &masker, started), None, None);
    }
    if let Some(handler) = repair.interruption.clone() {
        return context.handler_repair(handler, failed_replay, &replayed, &tally, &masker, first_step, started).await;
    }
    if let Some(refused) = refusal(&repair) {
        let outcome = ScenarioResult { verdict: refused, ..failed_replay };
        return (finished(&context, &tally, outcome, None, Some(first_step), &masker, started), None, None);
    }

    // The proof, and one refine from its failure.
    let proof = context.proof(&repair.recording, &masker, &mut tally).await;
    let (repair, proof) = match (&proof.outcome.verdict, proof.stopped) {
        (Verdict::Green, _) => (repair, proof.outcome),
        (Verdict::Red { .. }, Some(stop)) => {
            let proof_outcome = proof.outcome;
            match context
                .session(stop, &proof_outcome, &repair.recording, &committed, true, &mut masker, &mut tally)
                .await
            {
                SessionEnd::Repaired(mut refined) => {
                    refined.notes.splice(0..0, repair.notes.iter().cloned());
                    refined.from_step = first_step;
                    if let Some(refused) = refusal(&refined) {
                        let outcome = ScenarioResult { verdict: refused, ..proof_outcome };
                        return (
                            finished(&context, &tally, outcome, None, Some(first_step), &masker, started),
                            None,
                            None,
                        );
                    }
                    let second = context.proof(&refined.recording, &masker, &mut tally).await;
                    if let Some(stop) = second.stopped {
                        stop.context.close().await;
                    }
                    (*refined, second.outcome)
                }
                SessionEnd::Verdict(Verdict::Blocked { cause }) | SessionEnd::AgentFailed(cause) => {
                    let verdict = Verdict::Blocked {
                        cause: format!("the repair's refine could not finish, nothing was filed: {cause}"),
                    };
                    let outcome = ScenarioResult { verdict, ..proof_outcome };
                    return (finished(&context, &tally, outcome, None, Some(first_step), &masker, started), None, None);
                }
                // The agent ended the refine another way (a defect, unverified): the repair stays
                // unproven.
                SessionEnd::Verdict(_) => (repair, proof_outcome),
            }
        }
        (Verdict::Red { .. }, None) => (repair, proof.outcome),
        // The proof could not run (the browser went away): no verdict about the repair.
        _ => return (finished(&context, &tally, proof.outcome, None, Some(first_step), &masker, started), None, None),
    };

    let cost = Cost::of(&tally.usage, driver.prices());
    let judged = judge(options, execution, &repair, &replayed, &tally.usage, &cost, proof, &masker);
    let proven = judged.proven.then_some(repair.recording);
    (finished(&context, &tally, judged.outcome, judged.proposal, Some(first_step), &masker, started), proven, None)
}

/// What a repair's proof came to, before what the agent did is added to it.
pub(crate) struct Judged {
    pub outcome: ScenarioResult,
    /// Where the repair was filed, if it was.
    pub proposal: Option<String>,
    /// It passed its proof and was filed for review: the scenario is yellow, and the other
    /// rows of its Outline may replay it.
    pub proven: bool,
}

/// Files `repair` by what its `proof` came to: green, a proposal and yellow (red when it acts
/// on a different control: filed for a person, and not replayed until one accepts it); red,
/// kept unverified; a proof that could not run, nothing.
#[allow(clippy::too_many_arguments)]
pub(crate) fn judge(
    options: &RunOptions,
    execution: &Execution,
    repair: &Repair,
    replayed: &Recording,
    usage: &Usage,
    cost: &Cost,
    proof: ScenarioResult,
    masker: &Masker,
) -> Judged {
    let first_step = repair.from_step;
    let different_controls = &repair.review.different_controls;
    match proof.verdict.clone() {
        // It works, and it changes what a step acts on: filed for a person, and red meanwhile
        // (yellow exits 0, and a defect the repair worked around would pass in CI).
        Verdict::Green if !different_controls.is_empty() => {
            let filed = file::file(options, execution, repair, replayed, usage, cost, None, masker);
            let kept = match &filed {
                Ok(path) => format!(
                    "filed for review, and not replayed until a person accepts it (saffron diff, then saffron accept \
                     --different-control or saffron reject): {path}"
                ),
                Err(error) => format!("the proposal could not be filed: {error}"),
            };
            let step = Some(first_step + 1);
            let step_text = execution.template_steps.get(first_step).map(|step| step.text.clone());
            let message = format!(
                "the repair passed its proof but acts on a different control, which changes what the step does: {}; \
                 {kept}",
                different_controls.join("; ")
            );
            let outcome = ScenarioResult { verdict: Verdict::Red { step, step_text, message }, ..proof };
            Judged { outcome, proposal: filed.ok(), proven: false }
        }
        Verdict::Green => match file::file(options, execution, repair, replayed, usage, cost, None, masker) {
            Ok(path) => {
                let outcome = ScenarioResult { verdict: Verdict::Yellow { proposal: path.clone() }, ..proof };
                Judged { outcome, proposal: Some(path), proven: true }
            }
            Err(error) => {
                let cause = format!("the repair passed its proof but cannot be filed: {error}");
                let outcome = ScenarioResult { verdict: Verdict::Blocked { cause }, ..proof };
                Judged { outcome, proposal: None, proven: false }
            }
        },
        Verdict::Red { step, step_text, message } => {
            let failure = match (step, &step_text) {
                (Some(step), Some(text)) => format!("step {step} \"{text}\": {message}"),
                _ => message.clone(),
            };
            let unverified = Some(failure.clone());
            let filed = file::file(options, execution, repair, replayed, usage, cost, unverified, masker);
            let kept = match &filed {
                Ok(path) => format!("the proposal is kept for review, unverified: {path}"),
                Err(error) => format!("the proposal could not be kept: {error}"),
            };
            let message = format!("the repair did not pass its proof replay ({failure}); {kept}");
            let outcome = ScenarioResult { verdict: Verdict::Red { step, step_text, message }, ..proof };
            Judged { outcome, proposal: filed.ok(), proven: false }
        }
        _ => Judged { outcome: proof, proposal: None, proven: false },
    }
}

/// How a repair session ended, unless the agent ended it in success: a defect it diagnosed, an
/// unverified end, a lost medium, or no end at all (worth a retry).
fn session_ended(
    finish: Option<Finish>,
    steps: &[saffron_recording::StepSpec],
    failed_step: usize,
    failed_action: &saffron_recording::Action,
    failure: &str,
) -> Result<(), SessionEnd> {
    let step_text = steps.get(failed_step).map(|step| step.text.clone());
    match finish {
        Some(Finish::Success) => Ok(()),
        Some(Finish::Failure(narrative)) => Err(SessionEnd::Verdict(Verdict::Red {
            step: Some(failed_step + 1),
            step_text,
            message: format!(
                "`{failed_action}`: {failure}; the repairing agent diagnosed an application defect: {narrative}"
            ),
        })),
        Some(Finish::Unverified(unverified)) => {
            let list: Vec<String> =
                unverified.iter().map(|index| format!("{} \"{}\"", index + 1, steps[*index].text)).collect();
            Err(SessionEnd::Verdict(Verdict::Red {
                step: Some(failed_step + 1),
                step_text,
                message: format!(
                    "`{failed_action}`: {failure}; the repair ended without a verified check of Then step(s) {}, \
                     nothing was filed",
                    list.join(", ")
                ),
            }))
        }
        Some(Finish::BrowserLost(cause)) => Err(SessionEnd::Verdict(Verdict::Blocked { cause })),
        None => Err(SessionEnd::AgentFailed("the repairing agent ended without finishing".into())),
    }
}

/// The red verdict of a repair that changes what no repair may (a check, a step's value), or
/// `None` when the rules let it be proven.
fn refusal(repair: &Repair) -> Option<Verdict> {
    let refused = &repair.review.refused;
    if refused.is_empty() {
        return None;
    }
    Some(Verdict::Red {
        step: Some(repair.from_step + 1),
        step_text: repair.recording.steps.get(repair.from_step).map(|step| step.text.clone()),
        message: format!("the repair was refused, nothing was filed: {}", refused.join("; ")),
    })
}

struct Context<'a> {
    browser: &'a Browser,
    execution: &'a Execution,
    options: &'a RunOptions,
    driver: &'a Arc<dyn AgentDriver>,
    secret_names: &'a [String],
}

impl Context<'_> {
    /// One agent session on the page `stop` left open, from the step it failed at; the result
    /// merged onto `replayed`.
    #[allow(clippy::too_many_arguments)]
    async fn session(
        &self,
        stop: Stopped,
        failed: &ScenarioResult,
        replayed: &Recording,
        committed: &Recording,
        refine: bool,
        masker: &mut Masker,
        tally: &mut Tally,
    ) -> SessionEnd {
        let Stopped { step: failed_step, action: performed, context, unique_seed, failure: failure_kind } = stop;
        let execution = self.execution;
        let steps = &execution.template_steps;
        let url = context.url().await.unwrap_or_default();
        // In a run a person watches, they may take the browser from the repairing agent too.
        let wired = match &self.options.takeover {
            Some(takeover) => match crate::record::takeover::wire(&context, takeover).await {
                Ok(wired) => Some(wired),
                Err(error) => {
                    context.close().await;
                    let cause = format!("the takeover bar cannot be added: {error}");
                    return SessionEnd::Verdict(Verdict::Blocked { cause });
                }
            },
            None => None,
        };
        let mut page = match ContextPage::start(context, self.browser.clone()) {
            Ok(page) => page,
            Err(cause) => return SessionEnd::Verdict(Verdict::Blocked { cause: cause.to_string() }),
        };
        let values = Arc::new(Values {
            params: execution.params.clone(),
            unique_seed,
            today: Date::today_utc(),
            env: self.options.env.clone(),
            tables: execution.steps.iter().map(|step| step.table.clone()).collect(),
            secret_names: self.secret_names.to_vec(),
            secret_origins: self.options.secret_guard_origins(),
            root: self.options.root.clone(),
            upload_files: crate::record::fixtures::fixture_files(&self.options.root),
        });
        use crate::record::page::LivePage as _;
        page.begin_step();
        let requests = crate::record::api::requests_beside_page(execution, self.options, &values, &[]);
        let services = crate::record::api::services_told(&requests, self.options);
        let mut gateway = Gateway::new(
            page,
            steps.clone(),
            failed_step..steps.len(),
            self.options.base_url.clone(),
            values,
            masker.clone(),
            Duration::from_millis(self.options.timeouts.action_ms),
            Duration::from_millis(self.options.timeouts.navigation_ms),
        )
        .announcing_first()
        .with_lease(wired.as_ref().map(|wired| wired.lease.clone()))
        .with_requests(requests);
        let snapshot = match gateway.snapshot_text().await {
            Ok(text) => text,
            Err(error) => format!("(no snapshot: {error:?})"),
        };
        let replayed_step = replayed.steps.get(failed_step);
        let done_before: Vec<_> =
            replayed_step.map(|step| step.actions.iter().take(performed).cloned().collect()).unwrap_or_default();
        let Some(failed_action) = replayed_step.and_then(|step| step.actions.get(performed)).cloned() else {
            gateway.into_page().close().await;
            return SessionEnd::Verdict(failed.verdict.clone());
        };
        let failure = match &failed.verdict {
            Verdict::Red { message, .. } => message.clone(),
            other => other.name().to_string(),
        };
        let feature = execution.file.to_string_lossy().replace('\\', "/");
        let task = prompt::task(&prompt::Task {
            feature: &feature,
            scenario: &execution.template_name,
            steps,
            failed_step,
            performed: &done_before,
            failed_action: &failed_action,
            failure: &masker.mask(&failure),
            url: &masker.mask(&url),
            params: execution.params.iter().map(|(name, _)| name.as_str()).collect(),
            secret_names: self.secret_names,
            services: &services,
            snapshot: &snapshot,
            refine,
        });
        let session_masker = gateway.masker().clone();
        let report = self.driver.run(&mut gateway, &session_masker, prompt::SYSTEM, &task).await;
        tally.usage += &report.usage;
        tally.sessions += 1;
        tally.conversation.extend(report.conversation.iter().cloned());
        *masker = gateway.masker().clone();
        let finish = gateway.finish().cloned();
        let account = gateway.account().clone();
        let segment = failed_step..steps.len();
        let entries: Vec<_> = gateway
            .entries()
            .iter()
            .filter(|entry| entry.step.is_some_and(|step| segment.contains(&step)))
            .cloned()
            .collect();
        gateway.into_page().close().await;
        if let Some(cause) = report.outcome.cause() {
            return SessionEnd::AgentFailed(format!("the repairing agent: {cause}"));
        }
        if let Err(end) = session_ended(finish, steps, failed_step, &failed_action, &failure) {
            return end;
        }
        let sources = vec![StepSource::Agent; steps.len()];
        let agent = recorder::step_actions(&sources, &entries);
        let (merged, notes) = merge::merge(&MergeInput { replayed, committed, failed_step, performed, agent: &agent });
        for line in recorder::fragile_lines(&entries, &merged) {
            if !tally.fragile.contains(&line) {
                tally.fragile.push(line);
            }
        }
        let mut recording = recorder::build(&feature, &execution.template_name, steps, merged);
        // What is proven is what is filed: a recording without the secrets the page showed.
        masker.scrub_recording(&mut recording);
        let review = repair_rules::review_repair(committed, &recording);
        let interruption = interruption::as_handler(&interruption::Met {
            change: account.change,
            replayed,
            repaired: &recording,
            committed,
            failed_step,
            performed,
            failure: &failure_kind,
            url: &url,
            base_url: &self.options.base_url,
        });
        SessionEnd::Repaired(Box::new(Repair {
            recording,
            notes,
            account,
            from_step: failed_step,
            review,
            interruption,
        }))
    }

    /// The repair met an interruption: the handler it amounts to is proven by replaying the
    /// scenario as committed, from scratch at zero AI, with the handler; proven, it is filed for
    /// review (the scenario's recording is not touched) and the scenario is yellow.
    #[allow(clippy::too_many_arguments)]
    async fn handler_repair(
        &self,
        handler: saffron_recording::Handler,
        failed: ScenarioResult,
        replayed: &Recording,
        tally: &Tally,
        masker: &Masker,
        first_step: usize,
        started: Instant,
    ) -> Outcome {
        let repaired = Some(first_step);
        let slug = saffron_recording::scenario_slug(&handler.name);
        let relative = saffron_recording::layout::handler_proposal(&slug);
        let shown = relative.to_string_lossy().replace('\\', "/");
        let refused = |message: String| {
            let step = Some(first_step + 1);
            let step_text = self.execution.template_steps.get(first_step).map(|step| step.text.clone());
            Verdict::Red { step, step_text, message }
        };
        if handler.detect.url_regex.as_deref().is_some_and(|pattern| masker.find(pattern).is_some()) {
            let verdict =
                refused("the repair met an interruption at an address that holds a secret; nothing was filed".into());
            let outcome = ScenarioResult { verdict, ..failed };
            return (finished(self, tally, outcome, None, repaired, masker, started), None, None);
        }
        let loaded = match crate::interrupt::loaded_handler(handler.clone(), relative.clone()) {
            Ok(loaded) => loaded,
            Err(error) => {
                let outcome = ScenarioResult { verdict: refused(error), ..failed };
                return (finished(self, tally, outcome, None, repaired, masker, started), None, None);
            }
        };
        let mut options = self.options.clone();
        let mut handlers = (*options.handlers).clone();
        handlers.list.push(loaded.clone());
        options.handlers = Arc::new(handlers);
        let proof = match crate::orchestrator::run::before_proof(&options).await {
            Ok(()) => {
                let mut proof = self.execution.clone();
                proof.recording = Ok(replayed.clone());
                proof.pending_proposal = None;
                proof.needs_recording = false;
                let mode = ReplayMode { trace: TraceKind::Repair, ..ReplayMode::default() };
                let mut proven = replay_live(Some(self.browser.clone()), proof, options, masker.clone(), mode).await;
                let agent = crate::trace::agent_trace(self.driver.as_ref(), &tally.conversation);
                crate::trace::keep_proof(self.options, &mut proven.outcome, proven.trace.take(), agent, masker);
                proven.outcome
            }
            Err(cause) => {
                let verdict = Verdict::Blocked { cause: cause.to_string() };
                crate::orchestrator::run::result(self.execution, verdict, Instant::now())
            }
        };
        match proof.verdict.clone() {
            Verdict::Green => {
                let store = saffron_recording::Store::open(&self.options.root);
                let written =
                    store.and_then(|store| store.lock()?.write_handler(&self.options.root.join(&relative), &handler));
                match written {
                    Ok(()) => {
                        let outcome = ScenarioResult { verdict: Verdict::Yellow { proposal: shown.clone() }, ..proof };
                        (finished(self, tally, outcome, Some(shown), repaired, masker, started), None, Some(loaded))
                    }
                    Err(error) => {
                        let cause =
                            format!("the handler the repair amounts to passed its proof but cannot be filed: {error}");
                        let outcome = ScenarioResult { verdict: Verdict::Blocked { cause }, ..proof };
                        (finished(self, tally, outcome, None, repaired, masker, started), None, None)
                    }
                }
            }
            Verdict::Red { step, step_text, message } => {
                let failure = match (step, &step_text) {
                    (Some(step), Some(text)) => format!("step {step} \"{text}\": {message}"),
                    _ => message,
                };
                let message = format!(
                    "the repair met an interruption (\"{}\"), and the handler it amounts to did not pass its proof \
                     ({failure}); nothing was filed",
                    handler.name
                );
                let outcome = ScenarioResult { verdict: refused(message), ..proof };
                (finished(self, tally, outcome, None, repaired, masker, started), None, None)
            }
            _ => (finished(self, tally, proof, None, repaired, masker, started), None, None),
        }
    }

    /// Replays `recording` from scratch at zero AI in a fresh context, after the
    /// `before_proof` hooks.
    async fn proof(&self, recording: &Recording, masker: &Masker, tally: &mut Tally) -> Replayed {
        if let Err(cause) = crate::orchestrator::run::before_proof(self.options).await {
            let outcome = crate::orchestrator::run::result(
                self.execution,
                Verdict::Blocked { cause: cause.to_string() },
                Instant::now(),
            );
            return Replayed { outcome, masker: masker.clone(), stopped: None, refreshes: Vec::new(), trace: None };
        }
        let mut proof = self.execution.clone();
        proof.recording = Ok(recording.clone());
        proof.pending_proposal = None;
        proof.needs_recording = false;
        let mut proven =
            replay_live(Some(self.browser.clone()), proof, self.options.clone(), masker.clone(), REPAIR_PROOF).await;
        let agent = crate::trace::agent_trace(self.driver.as_ref(), &tally.conversation);
        crate::trace::keep_proof(self.options, &mut proven.outcome, proven.trace.take(), agent, masker);
        tally.traces.append(&mut proven.outcome.traces);
        proven
    }
}

/// The scenario's result with what the agent did, masked.
fn finished(
    context: &Context<'_>,
    tally: &Tally,
    outcome: ScenarioResult,
    proposal: Option<String>,
    repaired_step: Option<usize>,
    masker: &Masker,
    started: Instant,
) -> ScenarioResult {
    let agent = (context.driver.as_ref(), context.execution);
    with_agent_run(agent, tally, outcome, proposal, repaired_step, masker, started)
}

/// `outcome` with what the agent did (`agent`: the repairing driver, and the execution it
/// repaired) and the traces kept so far, masked.
fn with_agent_run(
    (driver, execution): (&dyn AgentDriver, &Execution),
    tally: &Tally,
    mut outcome: ScenarioResult,
    proposal: Option<String>,
    repaired_step: Option<usize>,
    masker: &Masker,
    started: Instant,
) -> ScenarioResult {
    let run = AgentRun::of(driver, &tally.usage, execution.template_steps.len(), tally.sessions, tally.fragile.clone());
    if tally.sessions > 0 {
        outcome.agent = Some(AgentRun { proposal, repaired_from_step: repaired_step.map(|step| step + 1), ..run });
    }
    outcome.duration_ms = started.elapsed().as_millis() as u64;
    // The failed replay's and the proofs' traces, then any the outcome holds besides.
    let mut traces = tally.traces.clone();
    traces.extend(outcome.traces.drain(..).filter(|trace| !tally.traces.contains(trace)));
    outcome.traces = traces;
    masked(outcome, masker)
}
