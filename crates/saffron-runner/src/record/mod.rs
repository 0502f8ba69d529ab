//! Recording a scenario with the agent: a live browser context behind the [`Gateway`], one
//! agent session per segment of steps the agent records, the result proof-replayed at zero AI
//! in a fresh context, and only then saved. A failed proof gets one refine session; an agent
//! that reports a defect makes the scenario red; a provider that fails, a spent budget, an
//! agent that gives up or a browser that dies make it blocked. Nothing unproven is written.
//!
//! - [`gateway`]: the tools, performed on the live page and recorded.
//! - [`recorder`]: accepted calls to a recording.
//! - [`prompt`]: the rules and the task.
//! - [`page`]: the live page behind the gateway.
//! - [`evidence`]: what is kept of attempts that were not saved.

pub(crate) mod api;
pub(crate) mod evidence;
pub(crate) mod fixtures;
pub(crate) mod gateway;
pub(crate) mod lease;
pub(crate) mod ledger;
pub(crate) mod page;
pub(crate) mod prompt;
pub(crate) mod recorder;
pub(crate) mod takeover;
pub(crate) mod tools;

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use saffron_agent::{AgentConfigError, AgentDriver, Message, SessionReport, Usage};
use saffron_browser::{Browser, ContextOptions};
use saffron_recording::{Date, Masker, Recording, Secret, Store, TokenKind, new_unique_seed, tokenize};

use self::gateway::{Entry, Finish, Gateway, Values};
use self::page::{ContextPage, LivePage};
use self::recorder::StepSource;
use crate::orchestrator::run::RunOptions;
use crate::plan::Execution;
use crate::resolve::resolve_action;
use crate::{AgentRun, ScenarioResult, Verdict};

/// The blocked cause of a scenario that needs recording when no agent can record it: the
/// problem and the line that tells how to fix it.
pub fn agent_unavailable(error: &AgentConfigError) -> String {
    format!("{error}; {}", error.hint())
}

/// How many recordings a scenario gets: the first, and one refine after a failed proof.
const ATTEMPTS: usize = 2;

/// What one attempt left behind.
pub(crate) struct Attempt {
    recording: Option<Recording>,
    conversation: Vec<Message>,
    proof: Option<ScenarioResult>,
}

/// The bookkeeping of one scenario's recording, for [`AgentRun`].
pub(crate) struct Tally {
    usage: Usage,
    sessions: u32,
    fragile: Vec<String>,
    /// Steps whose actions came from other recordings.
    seeded: usize,
}

/// Records `execution` (the first row of an Outline) and returns its result: green with the
/// saved recording, red, or blocked. `masker` holds the run's secrets; the result comes back
/// masked.
pub(crate) async fn record(
    browser: &Browser,
    execution: &Execution,
    options: &RunOptions,
    driver: &Arc<dyn AgentDriver>,
    mut masker: Masker,
) -> (ScenarioResult, Option<Recording>) {
    let started = Instant::now();
    // Steps other recordings already perform are replayed between the agent's segments; more
    // than a few gaps, and the agent records the whole scenario (seeding says so).
    let sources: Vec<StepSource> = match execution.seeding.as_deref() {
        Some(seeding) if !seeding.whole_scenario && seeding.steps.len() == execution.template_steps.len() => seeding
            .steps
            .iter()
            .map(|seed| recorder::source_of(seed.as_ref().map(|seed| seed.actions.as_slice())))
            .collect(),
        _ => vec![StepSource::Agent; execution.template_steps.len()],
    };
    let values = Arc::new(values_for(execution, options, &mut masker, fixtures::fixture_files(&options.root)));
    let seeded = sources.iter().filter(|source| matches!(source, StepSource::Given(_))).count();
    let mut recorder = BrowserRecorder { browser, sources: &sources, values };
    let (mut result, masker, saved) = record_with(&mut recorder, execution, options, driver, masker, seeded).await;
    result.duration_ms = started.elapsed().as_millis() as u64;
    (crate::orchestrator::run::masked(result, &masker), saved)
}

/// How a scenario is recorded on one medium: an attempt of the agent's, and the proof replay
/// of what it recorded. The rest (the refine after a failed proof, saving, evidence, the
/// verdict) is [`record_with`]'s, the same for every medium.
pub(crate) trait Recorder {
    /// One recording attempt: the recording, or the verdict that ends the scenario.
    async fn attempt(
        &mut self,
        execution: &Execution,
        options: &RunOptions,
        driver: &Arc<dyn AgentDriver>,
        masker: &mut Masker,
        tally: &mut Tally,
        refine: Option<String>,
    ) -> Result<(Recording, Vec<Message>), Verdict>;

    /// Replays `recording` at zero AI, as `saffron run` will.
    async fn proof(
        &mut self,
        execution: &Execution,
        options: &RunOptions,
        recording: &Recording,
        masker: Masker,
        agent: crate::trace::AgentTrace,
    ) -> ScenarioResult;
}

/// The values a recording's tokens are filled with; the secrets its steps name join `masker`.
pub(crate) fn values_for(
    execution: &Execution,
    options: &RunOptions,
    masker: &mut Masker,
    upload_files: Vec<String>,
) -> Values {
    let secret_names = secret_names(execution, options);
    for name in &secret_names {
        if let Some(value) = (options.env)(name) {
            masker.add(&Secret { name: name.clone(), value });
        }
    }
    Values {
        params: execution.params.clone(),
        unique_seed: new_unique_seed(),
        today: Date::today_utc(),
        env: options.env.clone(),
        tables: execution.steps.iter().map(|step| step.table.clone()).collect(),
        secret_names,
        secret_origins: options.secret_guard_origins(),
        root: options.root.clone(),
        upload_files,
    }
}

/// The verdict of a session that ended as `finish`, unless it ended in success.
pub(crate) fn finish_verdict(finish: Option<Finish>, execution: &Execution) -> Result<(), Verdict> {
    match finish {
        Some(Finish::Success) => Ok(()),
        Some(Finish::Failure(narrative)) => Err(Verdict::Red {
            step: None,
            step_text: None,
            message: format!("the recording agent found the application failing: {narrative}"),
        }),
        Some(Finish::Unverified(steps)) => {
            let list: Vec<String> = steps
                .iter()
                .map(|index| format!("{} \"{}\"", index + 1, execution.template_steps[*index].text))
                .collect();
            Err(Verdict::Red {
                step: steps.first().map(|index| index + 1),
                step_text: steps.first().map(|index| execution.template_steps[*index].text.clone()),
                message: format!(
                    "unverified: the agent ended without a verified check of Then step(s) {}; nothing was saved",
                    list.join(", ")
                ),
            })
        }
        Some(Finish::BrowserLost(cause)) => Err(Verdict::Blocked { cause }),
        None => Err(Verdict::Blocked { cause: "the recording agent ended without finishing".into() }),
    }
}

/// Records with `recorder`: an attempt, its proof, one refine after a failed proof; saves what
/// passed its proof and nothing else.
pub(crate) async fn record_with(
    recorder: &mut impl Recorder,
    execution: &Execution,
    options: &RunOptions,
    driver: &Arc<dyn AgentDriver>,
    mut masker: Masker,
    seeded: usize,
) -> (ScenarioResult, Masker, Option<Recording>) {
    let mut tally = Tally { usage: Usage::default(), sessions: 0, fragile: Vec::new(), seeded };
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut refine: Option<String> = None;
    for _ in 0..ATTEMPTS {
        let attempt = recorder.attempt(execution, options, driver, &mut masker, &mut tally, refine.take()).await;
        let (mut recording, conversation) = match attempt {
            Ok(done) => done,
            Err(verdict) => {
                // A refine that ended without a recording: the first attempt's evidence is kept.
                let artifacts = (!attempts.is_empty())
                    .then(|| evidence::keep(&options.root, execution, &attempts, &masker).ok())
                    .flatten();
                return (finished(execution, driver, &tally, verdict, None, artifacts), masker, None);
            }
        };
        // What is proven is what is saved: a recording without the secrets the page showed.
        masker.scrub_recording(&mut recording);
        let agent = crate::trace::agent_trace(driver.as_ref(), &conversation);
        let proof = recorder.proof(execution, options, &recording, masker.clone(), agent).await;
        match &proof.verdict {
            Verdict::Green => {
                let path = options.root.join(&execution.recording_path);
                let saved = Store::open(&options.root).and_then(|store| store.write_recording(&path, &recording));
                let verdict = match saved {
                    Ok(()) => Verdict::Green,
                    Err(error) => Verdict::Blocked {
                        cause: format!("the recording passed its proof but cannot be saved: {error}"),
                    },
                };
                let saved = matches!(verdict, Verdict::Green).then(|| execution.recording_path.display().to_string());
                let mut result = finished(execution, driver, &tally, verdict, saved, None);
                result.traces = traces_of(&attempts, &proof);
                result.steps = proof.steps;
                result.drift = proof.drift;
                let saved = result.agent.as_ref().and_then(|agent| agent.saved.as_ref()).map(|_| recording);
                return (result, masker, saved);
            }
            Verdict::Red { step, step_text, message } => {
                refine = Some(match (step, step_text) {
                    (Some(step), Some(text)) => format!("step {step} \"{text}\": {message}"),
                    _ => message.clone(),
                });
                attempts.push(Attempt { recording: Some(recording), conversation, proof: Some(proof) });
            }
            // The proof could not run (the browser went away): no verdict about the recording.
            _ => return (finished(execution, driver, &tally, proof.verdict, None, None), masker, None),
        }
    }
    let failure = refine.unwrap_or_default();
    let artifacts = evidence::keep(&options.root, execution, &attempts, &masker);
    let message = format!(
        "the agent's recording did not pass its proof replay, twice (nothing was saved): {failure}{}",
        match &artifacts {
            Ok(path) => format!("; evidence in {path}"),
            Err(error) => format!("; the evidence cannot be kept: {error}"),
        }
    );
    let last = attempts.last().and_then(|attempt| attempt.proof.as_ref());
    let (step, step_text) = match last.map(|proof| &proof.verdict) {
        Some(Verdict::Red { step, step_text, .. }) => (*step, step_text.clone()),
        _ => (None, None),
    };
    let verdict = Verdict::Red { step, step_text, message };
    let mut result = finished(execution, driver, &tally, verdict, None, artifacts.ok());
    if let Some(proof) = last {
        result.steps = proof.steps.clone();
        result.screenshot = proof.screenshot.clone();
        result.url = proof.url.clone();
    }
    result.traces =
        attempts.iter().filter_map(|attempt| attempt.proof.as_ref()).flat_map(|proof| proof.traces.clone()).collect();
    (result, masker, None)
}

/// The traces of every proof replay so far, the last one's included.
fn traces_of(attempts: &[Attempt], last: &ScenarioResult) -> Vec<String> {
    let earlier = attempts.iter().filter_map(|attempt| attempt.proof.as_ref()).flat_map(|proof| proof.traces.iter());
    earlier.chain(last.traces.iter()).cloned().collect()
}

/// The scenario's result with what the agent did.
fn finished(
    execution: &Execution,
    driver: &Arc<dyn AgentDriver>,
    tally: &Tally,
    verdict: Verdict,
    saved: Option<String>,
    artifacts: Option<String>,
) -> ScenarioResult {
    let mut result = crate::orchestrator::run::result(execution, verdict, Instant::now());
    let run = AgentRun::of(
        driver.as_ref(),
        &tally.usage,
        execution.template_steps.len(),
        tally.sessions,
        tally.fragile.clone(),
    );
    result.agent = Some(AgentRun { seeded_steps: tally.seeded, saved, artifacts, ..run });
    result
}

/// The secrets the agent may type: those the scenario's steps name and those the project
/// declares. Their values are masked from the first snapshot on.
pub(crate) fn secret_names(execution: &Execution, options: &RunOptions) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for step in &execution.template_steps {
        let texts =
            std::iter::once(&step.text).chain(step.table.iter().flatten().flatten()).chain(step.doc_string.as_ref());
        for text in texts {
            for token in tokenize(text) {
                if let TokenKind::Env(name) = token.kind
                    && !names.iter().any(|known| known == name)
                {
                    names.push(name.to_owned());
                }
            }
        }
    }
    for name in &options.secret_names {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// Recording in the browser: each attempt in a new live context.
struct BrowserRecorder<'a> {
    browser: &'a Browser,
    sources: &'a [StepSource],
    values: Arc<Values>,
}

impl Recorder for BrowserRecorder<'_> {
    /// One recording attempt in a new live context: each agent segment in its own session, the
    /// given steps replayed between them.
    async fn attempt(
        &mut self,
        execution: &Execution,
        options: &RunOptions,
        driver: &Arc<dyn AgentDriver>,
        masker: &mut Masker,
        tally: &mut Tally,
        refine: Option<String>,
    ) -> Result<(Recording, Vec<Message>), Verdict> {
        let (browser, sources, values) = (self.browser, self.sources, &self.values);
        let context = match browser.new_context(ContextOptions { base_url: options.base_url.clone() }).await {
            Ok(context) => context,
            Err(error) => {
                let cause = browser.lost_connection().await.unwrap_or_else(|| error.to_string());
                return Err(Verdict::Blocked { cause });
            }
        };
        // In a run a person watches, they may take the browser over: the bar in the page and the
        // lease every agent call takes a ticket of.
        let wired = match &options.takeover {
            Some(takeover) => match takeover::wire(&context, takeover).await {
                Ok(wired) => Some(wired),
                Err(error) => {
                    context.close().await;
                    return Err(Verdict::Blocked { cause: format!("the takeover bar cannot be added: {error}") });
                }
            },
            None => None,
        };
        let lease = wired.as_ref().map(|wired| wired.lease.clone());
        let mut page = match ContextPage::start(context, browser.clone()) {
            Ok(page) => page,
            Err(cause) => return Err(Verdict::Blocked { cause: cause.to_string() }),
        };
        let mut entries: Vec<Entry> = Vec::new();
        let mut conversation: Vec<Message> = Vec::new();
        // A sign-in seeded from other recordings: the session a replay kept is restored, as it
        // would be in replay, so the agent starts where every later run will.
        let mut position = match sign_in_given(execution, options, sources) {
            Some(sign_in) => {
                match sign_in_for_recording(&mut page, execution, options, masker, sources, &sign_in, values, &lease)
                    .await
                {
                    Ok(()) => sign_in.steps,
                    Err(verdict) => {
                        page.close().await;
                        return Err(verdict);
                    }
                }
            }
            None => 0,
        };
        let outcome = loop {
            let Some(segment) = next_segment(sources, position) else { break Ok(()) };
            if let Err(verdict) = replay_given(
                &mut page,
                execution,
                options,
                masker,
                sources,
                position..segment.start,
                values,
                lease.as_ref(),
            )
            .await
            {
                break Err(verdict);
            }
            let (report, gateway) = session(
                page,
                execution,
                options,
                driver,
                masker,
                segment.clone(),
                values,
                refine.clone(),
                lease.clone(),
            )
            .await;
            tally.usage += &report.usage;
            tally.sessions += 1;
            conversation.extend(report.conversation.iter().cloned());
            *masker = gateway.masker().clone();
            let finish = gateway.finish().cloned();
            entries.extend(
                gateway
                    .entries()
                    .iter()
                    .filter(|entry| entry.step.is_some_and(|step| segment.contains(&step)))
                    .cloned(),
            );
            page = gateway.into_page();
            if let Some(cause) = report.outcome.cause() {
                break Err(Verdict::Blocked { cause: format!("the recording agent: {cause}") });
            }
            if let Err(verdict) = finish_verdict(finish, execution) {
                break Err(verdict);
            }
            position = segment.end;
        };
        page.close().await;
        drop(wired);
        outcome?;
        let actions = recorder::step_actions(sources, &entries);
        for line in recorder::fragile_lines(&entries, &actions) {
            if !tally.fragile.contains(&line) {
                tally.fragile.push(line);
            }
        }
        let feature = execution.file.to_string_lossy().replace('\\', "/");
        Ok((recorder::build(&feature, &execution.template_name, &execution.template_steps, actions), conversation))
    }

    async fn proof(
        &mut self,
        execution: &Execution,
        options: &RunOptions,
        recording: &Recording,
        masker: Masker,
        agent: crate::trace::AgentTrace,
    ) -> ScenarioResult {
        // After the `before_proof` hooks, in a fresh context, as `saffron run` will.
        let browser = self.browser;
        let proof = match proof_of(execution, options, recording).await {
            Ok(proof) => proof,
            Err(blocked) => return *blocked,
        };
        let mode =
            crate::orchestrator::run::ReplayMode { trace: crate::trace::TraceKind::Recording, ..Default::default() };
        let mut proven =
            crate::orchestrator::run::replay_live(Some(browser.clone()), proof, options.clone(), masker, mode).await;
        crate::trace::keep_proof(options, &mut proven.outcome, proven.trace.take(), agent, &proven.masker);
        proven.outcome
    }
}

/// The sign-in `execution` starts with, when other recordings give all its steps.
fn sign_in_given(
    execution: &Execution,
    options: &RunOptions,
    sources: &[StepSource],
) -> Option<crate::sign_in_once::SignIn> {
    let sign_in = options.signed_in.sign_in_of(execution)?;
    let given = sources.get(..sign_in.steps)?.iter().all(|source| matches!(source, StepSource::Given(_)));
    given.then_some(sign_in)
}

/// Restores the session kept for `sign_in`, or performs its given steps and keeps the session
/// they leave.
#[allow(clippy::too_many_arguments)]
async fn sign_in_for_recording(
    page: &mut ContextPage,
    execution: &Execution,
    options: &RunOptions,
    masker: &mut Masker,
    sources: &[StepSource],
    sign_in: &crate::sign_in_once::SignIn,
    values: &Values,
    lease: &Option<takeover::SharedLease>,
) -> Result<(), Verdict> {
    if let Some(saved) = options.signed_in.saved(&sign_in.key) {
        match page.restore_session(&saved).await {
            Ok(()) => {
                crate::sign_in_once::mask_state(masker, &saved.state);
                return Ok(());
            }
            Err(page::PageError::BrowserLost(cause)) => return Err(Verdict::Blocked { cause }),
            // Not taken any more: this recording signs in, and keeps the new session.
            Err(page::PageError::Refused(_)) => options.signed_in.forget(&sign_in.key, &saved.state),
        }
    }
    replay_given(page, execution, options, masker, sources, 0..sign_in.steps, values, lease.as_ref()).await?;
    if let Ok(saved) = page.save_session().await {
        crate::sign_in_once::mask_state(masker, &saved.state);
        options.signed_in.keep(&sign_in.key, saved);
    }
    Ok(())
}

/// The next run of steps the agent records, from `position` on.
fn next_segment(sources: &[StepSource], position: usize) -> Option<Range<usize>> {
    let start = (position..sources.len()).find(|&index| sources[index] == StepSource::Agent)?;
    let end = (start..sources.len()).find(|&index| sources[index] != StepSource::Agent).unwrap_or(sources.len());
    Some(start..end)
}

/// Performs the given steps of `range` on the live page, as replay would. Under a `lease`,
/// each action waits while a person holds the browser, and one a takeover stopped before it
/// dispatched anything is performed again after the give-back.
#[allow(clippy::too_many_arguments)]
async fn replay_given(
    page: &mut ContextPage,
    execution: &Execution,
    options: &RunOptions,
    masker: &mut Masker,
    sources: &[StepSource],
    range: Range<usize>,
    values: &Values,
    lease: Option<&takeover::SharedLease>,
) -> Result<(), Verdict> {
    let execution_values = values.execution(&[]);
    for index in range {
        let StepSource::Given(actions) = &sources[index] else { continue };
        page.begin_step();
        let table = execution.steps.get(index).and_then(|step| step.table.as_ref());
        for action in actions {
            let step_text = Some(execution.template_steps[index].text.clone());
            let (resolved, secrets) =
                resolve_action(action, &execution_values, table).map_err(|error| Verdict::Red {
                    step: Some(index + 1),
                    step_text: step_text.clone(),
                    message: format!("cannot resolve `{action}`: {error}"),
                })?;
            masker.add_all(&secrets);
            let timeout = options.timeouts.for_action(&resolved);
            let performed = loop {
                let Some(lease) = lease else {
                    break page.perform(&resolved, timeout, options.secret_guard(&secrets)).await;
                };
                let ticket = lease.acquire_keeping_news(gateway::HOLD_WAIT).await.map_err(|_| Verdict::Blocked {
                    cause: "a person took the browser from the agent and kept it".into(),
                })?;
                let guard =
                    saffron_browser::Guard { fence: Some(lease.fence(ticket)), ..options.secret_guard(&secrets) };
                let performed = page.perform(&resolved, timeout, guard).await;
                let overtaken = !lease.admits(ticket);
                lease.end(ticket);
                match performed {
                    // Stopped by the fence, before any input: performed once the person gives back.
                    Err(page::PageError::Refused(_)) if overtaken => continue,
                    performed => break performed,
                }
            };
            performed.map_err(|error| match error {
                page::PageError::BrowserLost(cause) => Verdict::Blocked { cause },
                page::PageError::Refused(message) => {
                    Verdict::Red { step: Some(index + 1), step_text, message: format!("`{action}`: {message}") }
                }
            })?;
        }
    }
    Ok(())
}

/// One agent session over `segment`, on `page`.
#[allow(clippy::too_many_arguments)]
async fn session(
    page: ContextPage,
    execution: &Execution,
    options: &RunOptions,
    driver: &Arc<dyn AgentDriver>,
    masker: &Masker,
    segment: Range<usize>,
    values: &Arc<Values>,
    refine: Option<String>,
    lease: Option<takeover::SharedLease>,
) -> (SessionReport, Gateway<ContextPage>) {
    let gateway = Gateway::new(
        page,
        execution.template_steps.clone(),
        segment.clone(),
        options.base_url.clone(),
        Arc::clone(values),
        masker.clone(),
        Duration::from_millis(options.timeouts.action_ms),
        Duration::from_millis(options.timeouts.navigation_ms),
    );
    let requests = api::requests_beside_page(execution, options, values, &[]);
    let services = api::services_told(&requests, options);
    let mut gateway = gateway.with_lease(lease).with_requests(requests);
    let snapshot = match gateway.snapshot_text().await {
        Ok(text) => text,
        Err(error) => format!("(no snapshot: {error:?})"),
    };
    let feature = execution.file.to_string_lossy().replace('\\', "/");
    let task = prompt::task(&prompt::Task {
        feature: &feature,
        scenario: &execution.template_name,
        steps: &execution.template_steps,
        segment,
        base_url: &options.base_url,
        params: execution.params.iter().map(|(name, _)| name.as_str()).collect(),
        secret_names: &values.secret_names,
        upload_files: &values.upload_files,
        services: &services,
        snapshot: &snapshot,
        refine,
    });
    let session_masker = gateway.masker().clone();
    let report = driver.run(&mut gateway, &session_masker, prompt::SYSTEM, &task).await;
    (report, gateway)
}

/// The execution that proves `recording`, once the `before_proof` hooks ran (the blocked
/// result when one failed).
pub(crate) async fn proof_of(
    execution: &Execution,
    options: &RunOptions,
    recording: &Recording,
) -> Result<Execution, Box<ScenarioResult>> {
    if let Err(cause) = crate::orchestrator::run::before_proof(options).await {
        let verdict = Verdict::Blocked { cause: cause.to_string() };
        return Err(Box::new(crate::orchestrator::run::result(execution, verdict, Instant::now())));
    }
    let mut proof = execution.clone();
    proof.recording = Ok(recording.clone());
    proof.pending_proposal = None;
    proof.needs_recording = false;
    Ok(proof)
}
