//! A run's flow: its executions on parallel workers, in one shared Chromium (the browser
//! medium) today.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use saffron_agent::AgentDriver;
use saffron_browser::{Browser, BrowserConfig};
use saffron_recording::{Action, Masker, Recording};

use crate::plan::Execution;
use crate::{ScenarioResult, Verdict};

/// Looks up `{env:NAME}` values (the environment, then `.env`).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

#[derive(Clone)]
pub struct RunOptions {
    pub base_url: String,
    pub timeouts: crate::config::Timeouts,
    pub browser: BrowserConfig,
    pub workers: usize,
    pub env: EnvLookup,
    /// The agent that records scenarios without a fresh recording, or why there is none (said
    /// in the blocked verdict of each such scenario).
    pub agent: Result<Arc<dyn AgentDriver>, String>,
    /// Scenarios recorded at once (at least 1), each in its own browser context.
    pub agent_workers: usize,
    /// The project root: new recordings are saved under it, evidence under `.saffron/artifacts/`.
    pub root: std::path::PathBuf,
    /// Names of the secrets the project declares (its `.env`): the recording agent may type
    /// them as `{env:NAME}` and is told their names, never their values.
    pub secret_names: Vec<String>,
    /// `[secrets] origins`: where a secret may go besides the base URL's origin.
    pub secret_origins: Vec<String>,
    /// `[hooks] before_proof`, run before each proof replay of the agent's work, and the hooks'
    /// timeout.
    pub before_proof: Vec<String>,
    pub hook_timeout: std::time::Duration,
    /// The project's interruption handlers (`.saffron/handlers/`), as
    /// [`crate::interrupt::load_handlers`] reads them (a session loads them for its run).
    pub handlers: Arc<crate::interrupt::Handlers>,
    /// A replay that found elements through drifted signals files a zero-token proposal that
    /// updates them (`--refresh-drift`, see [`crate::refresh`]).
    pub refresh_drift: bool,
    /// How many times a red replay is run again, from the start in a fresh context, before a
    /// repair is tried (`--retries`, `[run] retries`).
    pub retries: u32,
    /// Set when a person may take the browser from the agent (`saffron run --headed`): each
    /// live page the agent records or repairs on shows the takeover bar, and its lease joins
    /// this handle (the terminal's key acts on it). `None`: nothing is added to any page.
    pub takeover: Option<crate::takeover::Takeover>,
    /// When a scenario's trace is kept (`--trace`, `[trace] mode`).
    pub trace: crate::trace::TraceMode,
    /// This run's artifacts folder: traces are written into it as scenarios finish, the
    /// screenshots and reports when the run ends (see [`crate::write_reports_in`]).
    pub artifacts: Arc<crate::RunFolder>,
    /// `[api.services]`, with `--api-url` applied: where `@api` scenarios send their requests.
    pub services: Arc<crate::medium::http::Services>,
    /// `[api] transcript`: what is kept of each exchange.
    pub transcript: crate::config::TranscriptMode,
    /// `[session] steps` and the sessions the run's sign-ins saved (see
    /// [`crate::sign_in_once`]).
    pub signed_in: Arc<crate::sign_in_once::SignedIn>,
}

impl RunOptions {
    /// The guard of an action whose values hold `secrets`: they may go only to the base URL's
    /// origin and the configured ones. An origin that cannot be read refuses every secret.
    pub(crate) fn secret_guard(&self, secrets: &[saffron_recording::Secret]) -> saffron_browser::Guard {
        if secrets.is_empty() {
            return saffron_browser::Guard::default();
        }
        saffron_browser::Guard {
            secret_origins: Some(self.secret_guard_origins()),
            ..saffron_browser::Guard::default()
        }
    }

    /// Where a secret may go: the base URL's origin and the configured ones.
    pub(crate) fn secret_guard_origins(&self) -> saffron_browser::SecretOrigins {
        saffron_browser::SecretOrigins::new(&self.base_url, &self.secret_origins)
            .or_else(|_| saffron_browser::SecretOrigins::new(&self.base_url, &[]))
            .unwrap_or_else(|_| saffron_browser::SecretOrigins::none())
    }
}

/// Why the agent's work could not be proven: the `before_proof` hooks did not get it ready.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProofHookError {
    #[error("the before_proof hooks did not run: {0}")]
    NotRun(tokio::task::JoinError),
    #[error("the before_proof hook `{command}` failed ({reason}), so the agent's work could not be proven")]
    Failed { command: String, reason: String },
}

/// Runs the `before_proof` hooks; the first failure.
pub(crate) async fn before_proof(options: &RunOptions) -> Result<(), ProofHookError> {
    if options.before_proof.is_empty() {
        return Ok(());
    }
    let (commands, root, base_url, timeout) =
        (options.before_proof.clone(), options.root.clone(), options.base_url.clone(), options.hook_timeout);
    let runs = tokio::task::spawn_blocking(move || {
        crate::hooks::run_hooks(
            &commands,
            &root,
            &base_url,
            timeout,
            crate::hooks::HookPhase::BeforeProof,
            &crate::hooks::Interrupt::new(),
        )
    })
    .await
    .map_err(ProofHookError::NotRun)?;
    match runs.iter().find(|run| !run.succeeded()) {
        None => Ok(()),
        Some(failed) => Err(ProofHookError::Failed {
            command: failed.command.clone(),
            reason: failed.error.clone().unwrap_or_else(|| format!("exit code {:?}", failed.exit_code)),
        }),
    }
}

/// Replays every execution; results come back in the order of `executions`.
pub async fn run(executions: Vec<Execution>, options: &RunOptions) -> Vec<ScenarioResult> {
    run_with_progress(executions, options, |_| {}).await
}

/// Why a Firefox run neither records nor repairs.
pub const FIREFOX_REPLAYS_ONLY: &str = "Firefox replays only: a scenario is recorded and repaired in Chromium (run --browser chromium first, or both: \
     --browser chromium --browser firefox)";

/// [`run`], calling `on_result` as each scenario finishes (in finishing order), for a
/// progress display.
pub async fn run_with_progress(
    executions: Vec<Execution>,
    options: &RunOptions,
    mut on_result: impl FnMut(&ScenarioResult),
) -> Vec<ScenarioResult> {
    // Whoever resolved the agent, a Firefox run has none: it replays only.
    let replay_only;
    let options = if options.browser.engine == saffron_browser::Engine::Firefox {
        replay_only = RunOptions { agent: Err(FIREFOX_REPLAYS_ONLY.to_owned()), takeover: None, ..options.clone() };
        &replay_only
    } else {
        options
    };
    // An `@api` scenario (and its Fixture) needs no browser.
    let needs_browser = executions.iter().any(|e| {
        (!e.api && (e.recording.is_ok() || (e.needs_recording && options.agent.is_ok())))
            || e.fixture
                .as_ref()
                .is_some_and(|f| !f.api && (f.recording.is_ok() || (f.needs_recording && options.agent.is_ok())))
    });
    let browser = if needs_browser {
        match Browser::start(options.browser.clone()).await {
            Ok(browser) => Some(browser),
            Err(error) => {
                let cause = error.to_string();
                let results: Vec<ScenarioResult> = executions.iter().map(|e| blocked(e, &cause)).collect();
                results.iter().for_each(&mut on_result);
                return results;
            }
        }
    } else {
        None
    };
    let executions = with_contracts_checked(executions, &options.services);
    let masker = crate::secrets::masker_for(&executions, options);
    // One HTTP medium for the run's `@api` executions (the contracts they read are the run's, in `Services`).
    let http = &crate::medium::http::HttpMedium::new(Arc::clone(&options.services));
    let repairs = Repairs::default();
    // Each feature's Fixture once, before any scenario: their verdicts are the scenarios' floors.
    let mut fixtures: Vec<Arc<Execution>> = Vec::new();
    for fixture in executions.iter().filter_map(|e| e.fixture.clone()) {
        if !fixtures.iter().any(|f| f.recording_path == fixture.recording_path) {
            fixtures.push(fixture);
        }
    }
    let fixture_runs = fixtures.iter().map(|fixture| {
        let browser = browser.clone();
        let options = options.clone();
        let fixture = Execution::clone(fixture);
        let masker = masker.clone();
        let repairs = repairs.clone();
        async move {
            let (result, seeds) = match &options.agent {
                // A Fixture without a fresh recording is recorded first, as a scenario is.
                Ok(driver) if fixture.needs_recording => {
                    let media = Media { browser: browser.as_ref(), http };
                    record_fixture(media, &fixture, &options, driver, masker).await
                }
                // As a scenario that needs recording: no verdict about the application.
                Err(why) if fixture.needs_recording => {
                    let cause = format!("{}, and no agent can record it: {why}", needs_recording(&fixture));
                    (blocked(&fixture, &cause), FixtureSeeds::default())
                }
                _ if fixture.api => {
                    replay_api(http, &fixture, &options, masker, &FixtureSeeds::default(), Some(&repairs)).await
                }
                // A browser Fixture is repaired as a scenario is: its proposal is the floor.
                _ => {
                    let result = replay_or_repair(browser, fixture.clone(), options, masker, repairs).await;
                    (result, FixtureSeeds::default())
                }
            };
            (fixture.recording_path.clone(), (result, seeds))
        }
    });
    let fixture_results: Vec<(std::path::PathBuf, (ScenarioResult, FixtureSeeds))> =
        futures::stream::iter(fixture_runs).buffer_unordered(options.workers.max(1)).collect().await;
    // The workers are futures driven together on this task: CDP calls wait on I/O, so they
    // overlap, and nothing has to be `Send` across threads.
    let runs = executions.iter().cloned().enumerate().map(|(index, execution)| {
        let browser = browser.clone();
        let options = options.clone();
        let repairs = repairs.clone();
        let fixture_run = execution
            .fixture
            .as_ref()
            .and_then(|f| fixture_results.iter().find(|(path, _)| *path == f.recording_path))
            .map(|(_, run)| run.clone());
        let (floor, seeds) = match fixture_run {
            Some((result, seeds)) => (Some(result), seeds),
            None => (None, FixtureSeeds::default()),
        };
        let masker = masker.clone();
        async move {
            let result = match &floor {
                Some(fixture) if !fixture.passed() => Some(fixture_failed(&execution, &fixture.verdict)),
                _ if execution.needs_recording => match &options.agent {
                    // Recorded after the replays, on the agent workers.
                    Ok(_) => None,
                    Err(why) => Some(blocked(
                        &execution,
                        &format!("{}, and no agent can record it: {why}", needs_recording(&execution)),
                    )),
                },
                _ if execution.api => {
                    let (result, _) = replay_api(http, &execution, &options, masker, &seeds, Some(&repairs)).await;
                    Some(with_fixture_floor(result, floor.as_ref()))
                }
                _ => Some(with_fixture_floor(
                    replay_or_repair(browser, execution, options, masker, repairs).await,
                    floor.as_ref(),
                )),
            };
            (index, result, floor, seeds)
        }
    });
    let mut finished = futures::stream::iter(runs).buffer_unordered(options.workers.max(1));
    let mut results: Vec<Option<ScenarioResult>> = vec![None; executions.len()];
    let mut to_record: Vec<(usize, Option<ScenarioResult>, FixtureSeeds)> = Vec::new();
    while let Some((index, result, floor, seeds)) = finished.next().await {
        match result {
            Some(result) => {
                on_result(&result);
                results[index] = Some(result);
            }
            None => to_record.push((index, floor, seeds)),
        }
    }
    drop(finished);
    if let Ok(driver) = &options.agent {
        to_record.sort_by_key(|(index, ..)| *index);
        // An Outline's rows share one recording: the first row is recorded, the others replay it.
        let mut groups: Vec<Vec<(usize, Option<ScenarioResult>, FixtureSeeds)>> = Vec::new();
        for (index, floor, seeds) in to_record {
            match groups
                .iter_mut()
                .find(|group| executions[group[0].0].recording_path == executions[index].recording_path)
            {
                Some(group) => group.push((index, floor, seeds)),
                None => groups.push(vec![(index, floor, seeds)]),
            }
        }
        let recordings = groups.into_iter().map(|group| {
            let executions = &executions;
            let masker = masker.clone();
            let media = Media { browser: browser.as_ref(), http };
            async move { record_group(media, executions, group, options, driver, masker).await }
        });
        let mut recorded = futures::stream::iter(recordings).buffer_unordered(options.agent_workers.max(1));
        while let Some(group) = recorded.next().await {
            for (index, result) in group {
                on_result(&result);
                results[index] = Some(result);
            }
        }
    }
    if let Some(browser) = browser {
        browser.close().await;
    }
    results
        .into_iter()
        .zip(&executions)
        .map(|(result, execution)| result.unwrap_or_else(|| blocked(execution, "the worker running it crashed")))
        .collect()
}

/// The executions with each `@api` recording whose pinned contract changed since it was
/// recorded made stale (their Fixtures' too): its schema checks hold for the old contract only.
fn with_contracts_checked(executions: Vec<Execution>, services: &crate::medium::http::Services) -> Vec<Execution> {
    let mut digests = crate::record::api::ContractDigests::default();
    let mut checked = |execution: Execution| -> Execution {
        let changed = match (&execution.recording, &execution.pending_proposal) {
            (Ok(recording), None) if execution.api => {
                crate::record::api::changed_contract(services, recording, &mut digests)
            }
            _ => None,
        };
        match changed {
            Some(why) => Execution {
                recording: Err(crate::plan::NotReplayable::ContractChanged(why)),
                needs_recording: true,
                ..execution
            },
            None => execution,
        }
    };
    executions
        .into_iter()
        .map(|execution| {
            let fixture = execution.fixture.clone().map(|fixture| Arc::new(checked(Execution::clone(&fixture))));
            Execution { fixture, ..checked(execution) }
        })
        .collect()
}

/// What an `@api` Fixture left for its feature's scenarios: the values it captured (read-only
/// seeds of each scenario's execution) and the masker that knows its credentials.
#[derive(Clone, Default)]
struct FixtureSeeds {
    captured: Vec<(String, String)>,
    masker: Option<Masker>,
}

/// Replays an `@api` execution on the HTTP medium, and a red one again from the start up to
/// `options.retries` times (a new execution, with fresh `{unique}` values: its writes are its
/// own). With an agent and `repairs` (the run's repairs so far), a replay that still fails on
/// an action a repair may take over is repaired (see [`crate::heal::api`]). The result comes
/// back masked, with what a Fixture leaves its scenarios.
async fn replay_api(
    medium: &crate::medium::http::HttpMedium,
    execution: &Execution,
    options: &RunOptions,
    masker: Masker,
    seeds: &FixtureSeeds,
    repairs: Option<&Repairs>,
) -> (ScenarioResult, FixtureSeeds) {
    let repairing = match (&options.agent, repairs) {
        (Ok(driver), Some(repairs)) if execution.held_for_review.is_none() => Some((driver, repairs)),
        _ => None,
    };
    let mode = if repairing.is_some() { crate::heal::api::ESCALATING } else { ReplayMode::default() };
    // A credential the Fixture captured stays masked in every scenario.
    let masker = seeds.masker.clone().unwrap_or(masker);
    let replay =
        |masker| crate::orchestrator::replay::replay_in(medium, execution, options, masker, mode, &seeds.captured);
    let mut replayed = replay(masker).await;
    let mut retried = Vec::new();
    // Every attempt's exchanges, each marked with its attempt: a retry that passed still shows
    // what the failed one sent.
    let mut exchanges = Vec::new();
    let mut keep_exchanges = |replayed: &mut crate::orchestrator::replay::Replay<_>, attempt: usize| {
        exchanges.extend(
            std::mem::take(&mut replayed.exchanges)
                .into_iter()
                .map(|exchange| crate::transcript::Exchange { attempt: attempt as u32, ..exchange }),
        );
    };
    while retried.len() < options.retries as usize
        && let Some(attempt) = red_attempt(retried.len() + 1, &replayed.outcome.verdict)
    {
        retried.push(attempt);
        keep_exchanges(&mut replayed, retried.len());
        replayed = replay(replayed.masker.clone()).await;
    }
    let attempts = retried.len() + 1;
    keep_exchanges(&mut replayed, attempts);
    replayed.outcome.flaky = !retried.is_empty() && !matches!(replayed.outcome.verdict, Verdict::Red { .. });
    replayed.outcome.retried = retried;
    crate::trace::keep(options, &mut replayed.outcome, replayed.trace.take(), &replayed.masker);
    if let (Some((driver, repairs)), Some(_)) = (repairing, &replayed.stopped) {
        let mut proven = repairs.lock().await;
        // Another row of the scenario was repaired in this run: its proven repair is replayed.
        if let Some((recording, proposal)) = proven.recordings.get(&execution.recording_path).cloned() {
            drop(proven);
            let again =
                Execution { recording: Ok(recording), pending_proposal: Some(proposal.into()), ..execution.clone() };
            return Box::pin(replay_api(medium, &again, options, replayed.masker, seeds, None)).await;
        }
        let healed =
            crate::heal::api::heal(medium, execution, options, driver, replayed, &seeds.captured, attempts as u32)
                .await;
        if let (Some(recording), Verdict::Yellow { proposal }) = (&healed.recording, &healed.result.verdict) {
            proven.recordings.insert(execution.recording_path.clone(), (recording.clone(), proposal.clone()));
        }
        let mut result = healed.result;
        exchanges.extend(healed.exchanges);
        crate::transcript::keep(options, &mut result, exchanges, &healed.masker);
        let left = FixtureSeeds { captured: healed.captured, masker: Some(healed.masker) };
        return (result, left);
    }
    crate::transcript::keep(options, &mut replayed.outcome, exchanges, &replayed.masker);
    let left = FixtureSeeds { captured: replayed.captured, masker: Some(replayed.masker.clone()) };
    let outcome = match &execution.held_for_review {
        Some(held) => held_for_review(replayed.outcome, held),
        None => replayed.outcome,
    };
    (masked(outcome, &replayed.masker), left)
}

/// Where a run's scenarios are performed: the browser (when one was started) and the HTTP
/// medium.
#[derive(Clone, Copy)]
struct Media<'a> {
    browser: Option<&'a Browser>,
    http: &'a crate::medium::http::HttpMedium,
}

/// Records a Fixture that has no fresh recording: on the HTTP medium its proof's captured
/// values seed the feature's scenarios; in the browser it leaves nothing but its verdict.
async fn record_fixture(
    media: Media<'_>,
    fixture: &Execution,
    options: &RunOptions,
    driver: &Arc<dyn AgentDriver>,
    masker: Masker,
) -> (ScenarioResult, FixtureSeeds) {
    if fixture.api {
        let recorded = crate::record::api::record(media.http, fixture, options, driver, masker, &[]).await;
        let seeds = FixtureSeeds { captured: recorded.captured, masker: Some(recorded.masker) };
        return (recorded.result, seeds);
    }
    let result = match media.browser {
        Some(browser) => crate::record::record(browser, fixture, options, driver, masker).await.0,
        None => blocked(fixture, "no browser was started to record it"),
    };
    (result, FixtureSeeds::default())
}

/// Records the first execution of `group` (the rows of one scenario), then replays the others
/// with the new recording; without a saved recording they share the first row's verdict.
async fn record_group(
    media: Media<'_>,
    executions: &[Execution],
    group: Vec<(usize, Option<ScenarioResult>, FixtureSeeds)>,
    options: &RunOptions,
    driver: &Arc<dyn AgentDriver>,
    masker: Masker,
) -> Vec<(usize, ScenarioResult)> {
    let mut results = Vec::with_capacity(group.len());
    let mut rows = group.into_iter();
    let Some((first, floor, seeds)) = rows.next() else { return results };
    let execution = &executions[first];
    let (outcome, recording) = match media.browser {
        _ if execution.api => {
            let masker = seeds.masker.clone().unwrap_or_else(|| masker.clone());
            let recorded =
                crate::record::api::record(media.http, execution, options, driver, masker, &seeds.captured).await;
            (recorded.result, recorded.recording)
        }
        Some(browser) => crate::record::record(browser, execution, options, driver, masker.clone()).await,
        None => (blocked(execution, "no browser was started to record it"), None),
    };
    let first_name = executions[first].name.clone();
    let verdict = outcome.verdict.clone();
    results.push((first, with_fixture_floor(outcome, floor.as_ref())));
    for (index, floor, seeds) in rows {
        let execution = executions[index].clone();
        let result = match &recording {
            Some(recording) => {
                let execution = Execution { recording: Ok(recording.clone()), needs_recording: false, ..execution };
                if execution.api {
                    replay_api(media.http, &execution, options, masker.clone(), &seeds, None).await.0
                } else {
                    replay(media.browser.cloned(), execution, options.clone(), masker.clone()).await
                }
            }
            None => {
                let verdict = match &verdict {
                    Verdict::Red { message, .. } => Verdict::Red {
                        step: None,
                        step_text: None,
                        message: format!("not run: recording the scenario with \"{first_name}\" failed: {message}"),
                    },
                    other => other.clone(),
                };
                masked(result(&execution, verdict, Instant::now()), &masker)
            }
        };
        results.push((index, with_fixture_floor(result, floor.as_ref())));
    }
    results
}

/// Why a scenario needs recording: what stands in for its recording.
fn needs_recording(execution: &Execution) -> String {
    execution.recording.as_ref().err().map_or_else(|| "needs recording".to_string(), ToString::to_string)
}

/// A scenario whose Fixture failed: not run, red (or blocked) with the Fixture's reason.
fn fixture_failed(execution: &Execution, fixture: &Verdict) -> ScenarioResult {
    let name = execution.fixture.as_ref().map_or("", |f| f.name.as_str());
    let verdict = match fixture {
        Verdict::Red { step, step_text, message } => {
            let at = match (step, step_text) {
                (Some(step), Some(text)) => format!(" at step {step} \"{text}\""),
                _ => String::new(),
            };
            Verdict::Red {
                step: None,
                step_text: None,
                message: format!("the Fixture \"{name}\" failed{at}, so the scenario did not run: {message}"),
            }
        }
        // Blocked stays blocked: the runner failed, not the app.
        other => other.clone(),
    };
    result(execution, verdict, Instant::now())
}

/// A green scenario whose Fixture passed only through a pending proposal is yellow too.
fn with_fixture_floor(mut outcome: ScenarioResult, fixture: Option<&ScenarioResult>) -> ScenarioResult {
    if let (Verdict::Green, Some(Verdict::Yellow { proposal })) = (&outcome.verdict, fixture.map(|f| &f.verdict)) {
        outcome.verdict = Verdict::Yellow { proposal: proposal.clone() };
    }
    if let Some(fixture) = fixture {
        outcome.drift.extend(fixture.drift.iter().map(|drift| format!("Fixture: {drift}")));
    }
    outcome
}

pub(crate) fn result(execution: &Execution, verdict: Verdict, started: Instant) -> ScenarioResult {
    ScenarioResult {
        duration_ms: started.elapsed().as_millis() as u64,
        ..ScenarioResult::new(execution.file.display().to_string(), execution.line, &execution.name, verdict)
    }
}

fn blocked(execution: &Execution, cause: &str) -> ScenarioResult {
    result(execution, Verdict::Blocked { cause: cause.to_string() }, Instant::now())
}

/// Every text of `result` masked: a page's text or URL may quote a secret in any spelling.
pub(crate) fn masked(mut result: ScenarioResult, masker: &Masker) -> ScenarioResult {
    if masker.is_empty() {
        return result;
    }
    result.name = masker.mask(&result.name);
    result.verdict = match result.verdict {
        Verdict::Red { step, step_text, message } => {
            Verdict::Red { step, step_text: step_text.map(|text| masker.mask(&text)), message: masker.mask(&message) }
        }
        Verdict::Blocked { cause } => Verdict::Blocked { cause: masker.mask(&cause) },
        other => other,
    };
    result.drift = result.drift.iter().map(|drift| masker.mask(drift)).collect();
    result.cleared = result.cleared.iter().map(|line| masker.mask(line)).collect();
    result.retried = result.retried.iter().map(|line| masker.mask(line)).collect();
    result.url = result.url.map(|url| masker.mask(&url));
    if let Some(stale) = result.session.as_mut().and_then(|session| session.stale.as_mut()) {
        *stale = masker.mask(stale);
    }
    result.console_errors = result.console_errors.iter().map(|error| masker.mask(error)).collect();
    for step in &mut result.steps {
        step.text = masker.mask(&step.text);
        for action in &mut step.actions {
            action.action = masker.mask(&action.action);
            action.locator = action.locator.as_ref().map(|locator| masker.mask(locator));
            action.drift = action.drift.iter().map(|line| masker.mask(line)).collect();
            action.notes = action.notes.iter().map(|note| masker.mask(note)).collect();
            action.waited = action.waited.iter().map(|reason| masker.mask(reason)).collect();
            action.matched = action.matched.as_ref().map(|matched| masker.mask(matched));
        }
    }
    result
}

/// Repairs already proven in this run. Repairs run one at a time (an agent works on one live
/// page, and the rows of an Outline share one recording): a row that fails after another row's
/// repair was proven replays that repair instead of asking the agent again, and any scenario
/// that fails after a handler was proven replays with it first.
type Repairs = Arc<futures::lock::Mutex<Proven>>;

#[derive(Default)]
struct Proven {
    /// By recording path: the recording and its proposal.
    recordings: std::collections::HashMap<std::path::PathBuf, (Recording, String)>,
    /// Handlers of interruptions, filed for review, with where each is filed.
    handlers: Vec<(crate::interrupt::LoadedHandler, String)>,
}

/// Replays one execution and, with an agent, repairs a replay that fails on an action no
/// fallback found (see `heal`).
async fn replay_or_repair(
    browser: Option<Browser>,
    execution: Execution,
    options: RunOptions,
    masker: Masker,
    repairs: Repairs,
) -> ScenarioResult {
    if let Some(held) = execution.held_for_review.clone() {
        return held_for_review(replay(browser, execution, options, masker).await, &held);
    }
    let (Ok(driver), Some(live_browser)) = (&options.agent, &browser) else {
        let replayed = replay_with_retries(&browser, &execution, &options, masker, REPLAY).await;
        if !options.refresh_drift {
            return masked(replayed.outcome, &replayed.masker);
        }
        return refresh_drift(&execution, &options, replayed, &repairs).await;
    };
    let replayed = replay_with_retries(&browser, &execution, &options, masker, crate::heal::ESCALATING).await;
    if replayed.stopped.is_none() {
        return refresh_drift(&execution, &options, replayed, &repairs).await;
    }
    let mut proven = repairs.lock().await;
    if let Some((recording, proposal)) = proven.recordings.get(&execution.recording_path).cloned() {
        drop(proven);
        if let Some(stopped) = replayed.stopped {
            stopped.context.close().await;
        }
        let again = Execution { recording: Ok(recording), pending_proposal: Some(proposal.into()), ..execution };
        return replay(browser, again, options, replayed.masker).await;
    }
    let mut replayed = replayed;
    if !proven.handlers.is_empty() {
        // Another scenario's repair met an interruption and its handler was proven: this
        // scenario may have met the same one. Replayed with those handlers, it needs no agent.
        if let Some(stopped) = replayed.stopped.take() {
            stopped.context.close().await;
        }
        let mut with = options.clone();
        let mut handlers = (*with.handlers).clone();
        handlers.list.extend(proven.handlers.iter().map(|(handler, _)| handler.clone()));
        with.handlers = Arc::new(handlers);
        let mut again =
            replay_live(browser.clone(), execution.clone(), with, replayed.masker.clone(), crate::heal::ESCALATING)
                .await;
        crate::trace::keep(&options, &mut again.outcome, again.trace.take(), &again.masker);
        again.outcome.traces.splice(0..0, replayed.outcome.traces.drain(..));
        let used: Vec<&String> = proven
            .handlers
            .iter()
            .filter(|(handler, _)| {
                again.outcome.cleared.iter().any(|line| line.ends_with(&format!(": {}", handler.name)))
            })
            .map(|(_, path)| path)
            .collect();
        if again.stopped.is_none() && again.outcome.is_green() && !used.is_empty() {
            let mut outcome = again.outcome;
            outcome.verdict = Verdict::Yellow { proposal: used[0].clone() };
            return masked(outcome, &again.masker);
        }
        replayed = again;
        if replayed.stopped.is_none() {
            return masked(replayed.outcome, &replayed.masker);
        }
    }
    let healed = crate::heal::heal(live_browser, &execution, &options, driver, replayed).await;
    if let (Some(recording), Verdict::Yellow { proposal }) = (healed.recording, &healed.result.verdict) {
        proven.recordings.insert(execution.recording_path.clone(), (recording, proposal.clone()));
    }
    if let (Some(handler), Verdict::Yellow { proposal }) = (healed.handler, &healed.result.verdict) {
        proven.handlers.push((handler, proposal.clone()));
    }
    healed.result
}

/// Replays `execution`, and runs a red replay again from the start in a fresh context, up to
/// `options.retries` times, before anything else (a repair) is tried: a flake is not drift. A
/// retry is a new run of the scenario, as a person re-running the test would make it; it never
/// repeats an action inside one. A scenario that passes on a retry is flaky; each earlier
/// attempt's failure is kept, in words.
async fn replay_with_retries(
    browser: &Option<Browser>,
    execution: &Execution,
    options: &RunOptions,
    masker: Masker,
    mode: ReplayMode,
) -> Replayed {
    let mut replayed = replay_live(browser.clone(), execution.clone(), options.clone(), masker, mode).await;
    let mut retried = Vec::new();
    let mut traces = Vec::new();
    while retried.len() < options.retries as usize
        && let Some(attempt) = red_attempt(retried.len() + 1, &replayed.outcome.verdict)
    {
        retried.push(attempt);
        if let Some(stopped) = replayed.stopped.take() {
            stopped.context.close().await;
        }
        crate::trace::keep(options, &mut replayed.outcome, replayed.trace.take(), &replayed.masker);
        traces.append(&mut replayed.outcome.traces);
        let masker = replayed.masker.clone();
        replayed = replay_live(browser.clone(), execution.clone(), options.clone(), masker, mode).await;
        if let Some(trace) = replayed.trace.as_mut() {
            trace.attempt = retried.len() as u32 + 1;
        }
    }
    crate::trace::keep(options, &mut replayed.outcome, replayed.trace.take(), &replayed.masker);
    traces.append(&mut replayed.outcome.traces);
    replayed.outcome.traces = traces;
    replayed.outcome.flaky = !retried.is_empty() && !matches!(replayed.outcome.verdict, Verdict::Red { .. });
    replayed.outcome.retried = retried;
    replayed
}

/// `attempt 1: step 3 "…": <why>` for a red attempt that is run again; `None` for any other.
fn red_attempt(number: usize, verdict: &Verdict) -> Option<String> {
    let Verdict::Red { step, step_text, message } = verdict else { return None };
    let at = match (step, step_text) {
        (Some(step), Some(text)) => format!("step {step} \"{text}\": "),
        _ => String::new(),
    };
    Some(format!("attempt {number}: {at}{message}"))
}

/// A replay that ended: green with drift files the refreshed recording as a proposal, once per
/// recording in a run (an Outline's other rows replay it), and is yellow.
async fn refresh_drift(
    execution: &Execution,
    options: &RunOptions,
    replayed: Replayed,
    repairs: &Repairs,
) -> ScenarioResult {
    let Replayed { mut outcome, masker, refreshes, .. } = replayed;
    let committed = match (&execution.committed, &execution.recording) {
        (Some(committed), Ok(replayed)) if committed == replayed && execution.pending_proposal.is_none() => committed,
        _ => return masked(outcome, &masker),
    };
    if refreshes.is_empty() || !outcome.is_green() {
        return masked(outcome, &masker);
    }
    let mut proven = repairs.lock().await;
    if proven.recordings.contains_key(&execution.recording_path) {
        return masked(outcome, &masker);
    }
    let mut recording = committed.clone();
    let mut adaptations = Vec::new();
    for refresh in &refreshes {
        if let Some(action) =
            recording.steps.get_mut(refresh.step).and_then(|step| step.actions.get_mut(refresh.action))
        {
            *action = refresh.action_now.clone();
            for change in &refresh.changes {
                adaptations.push(format!("step {} `{}`: {change}", refresh.step + 1, refresh.action_before));
            }
        }
    }
    masker.scrub_recording(&mut recording);
    match crate::heal::file::file_refresh(options, execution, recording.clone(), &adaptations, &masker) {
        Ok(path) => {
            proven.recordings.insert(execution.recording_path.clone(), (recording, path.clone()));
            outcome.verdict = Verdict::Yellow { proposal: path };
        }
        Err(error) => outcome.drift.push(format!("the refreshed recording could not be filed: {error}")),
    }
    masked(outcome, &masker)
}

/// A replay of a scenario whose repair waits for a person: its red says where that repair is.
fn held_for_review(mut result: ScenarioResult, proposal: &std::path::Path) -> ScenarioResult {
    if let Verdict::Red { message, .. } = &mut result.verdict {
        message.push_str(&format!(
            " (a repair that acts on a different control waits for review, and is not replayed or repaired again \
             until a person decides: {}; `saffron diff` shows it)",
            proposal.display()
        ));
    }
    result
}

/// Replays one execution; `masker` holds the run's secrets (more are added as they are
/// substituted), and the result comes back masked: this is the one place a result's texts are
/// masked, once, with every secret the replay may have used.
async fn replay(browser: Option<Browser>, execution: Execution, options: RunOptions, masker: Masker) -> ScenarioResult {
    let (outcome, masker) = replay_unmasked(browser, execution, options, masker).await;
    masked(outcome, &masker)
}

pub(crate) async fn replay_unmasked(
    browser: Option<Browser>,
    execution: Execution,
    options: RunOptions,
    masker: Masker,
) -> (ScenarioResult, Masker) {
    let mut replayed = replay_live(browser, execution, options.clone(), masker, REPLAY).await;
    crate::trace::keep(&options, &mut replayed.outcome, replayed.trace.take(), &replayed.masker);
    (replayed.outcome, replayed.masker)
}

/// How a replay treats a failed action.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ReplayMode {
    /// Keep the browser context open when an action fails after its waits (not a lost browser,
    /// not an unresolvable token), and hand it back: a repair continues on that page.
    pub keep_live: bool,
    /// A failed Then step is re-run exactly as recorded on the live page before the replay
    /// gives up: if it passes the replay goes on, if it fails again the scenario is red and
    /// the failure is never handed to a repair.
    pub rerun_failed_then: bool,
    /// What a kept trace says this replay was.
    pub trace: crate::trace::TraceKind,
    /// A scenario that starts with a sign-in restores the session an earlier one kept, or
    /// keeps the one it signs in (a run's replays; a proof performs every step it proves).
    pub sign_in_once: bool,
}

/// A run's replay of a scenario, with nothing to escalate to.
pub(crate) const REPLAY: ReplayMode = ReplayMode {
    keep_live: false,
    rerun_failed_then: false,
    trace: crate::trace::TraceKind::Replay,
    sign_in_once: true,
};

/// The proof replay of a repair (either medium's): zero AI, from scratch, every step performed;
/// its execution is kept for one refine.
pub(crate) const REPAIR_PROOF: ReplayMode = ReplayMode {
    keep_live: true,
    rerun_failed_then: false,
    trace: crate::trace::TraceKind::Repair,
    sign_in_once: false,
};

/// A replay that stopped on an action, with its page still open.
pub(crate) struct Stopped {
    /// 0-based step and action indices.
    pub step: usize,
    pub action: usize,
    pub context: saffron_browser::Context,
    /// The unique seed the replay filled `{unique}` with: the page holds data made with it.
    pub unique_seed: String,
    /// Why the action failed (an element covered, not found, ...).
    pub failure: saffron_browser::FailureKind,
}

pub(crate) struct Replayed {
    pub outcome: ScenarioResult,
    pub masker: Masker,
    /// Set when the replay stopped on an action a repair may take over.
    pub stopped: Option<Stopped>,
    /// With `refresh_drift`: each drifted action's target as the page has it now.
    pub refreshes: Vec<Refresh>,
    /// The attempt's trace, unless traces are off; not written yet (see [`crate::trace::keep`]).
    pub trace: Option<crate::trace::Trace>,
}

/// A recorded action whose target `--refresh-drift` updates.
pub(crate) struct Refresh {
    /// 0-based step and action indices.
    pub step: usize,
    pub action: usize,
    /// The action as recorded, described.
    pub action_before: String,
    /// The action with its refreshed target (tokens kept).
    pub action_now: Action,
    pub changes: Vec<String>,
}

/// Replays `execution` in a fresh context of `browser` (see [`crate::orchestrator::replay`]).
pub(crate) async fn replay_live(
    browser: Option<Browser>,
    execution: Execution,
    options: RunOptions,
    masker: Masker,
    mode: ReplayMode,
) -> Replayed {
    let medium = crate::medium::browser::BrowserMedium::new(browser);
    let mut replay = crate::orchestrator::replay::replay_in(&medium, &execution, &options, masker, mode, &[]).await;
    // The requests a browser scenario sent beside its page.
    let exchanges = std::mem::take(&mut replay.exchanges);
    crate::transcript::keep(&options, &mut replay.outcome, exchanges, &replay.masker);
    Replayed {
        outcome: replay.outcome,
        masker: replay.masker,
        stopped: replay.stopped.map(|stop| Stopped {
            step: stop.step,
            action: stop.action,
            context: stop.live.into_context(),
            unique_seed: stop.unique_seed,
            failure: stop.detail,
        }),
        refreshes: replay.refreshes,
        trace: replay.trace,
    }
}
