//! Repairing an `@api` scenario or Fixture whose replay failed on a request or check of a step
//! that is not a Then step (a path moved, a field renamed, a header now required). The agent
//! takes over the execution the replay stopped in, its sessions' cookies and latest responses
//! kept, with the request tools from the failed step on. The rest is the browser repair's:
//! the mechanical merge, the rules of repairs, the proof from scratch at zero AI with one
//! refine, and the proposal a person accepts or rejects.
//!
//! A proof is a second execution: its writes are its own (`{unique:…}` values), and it reads
//! the Fixture's values as the run did.

use std::sync::Arc;
use std::time::Instant;

use saffron_agent::{AgentDriver, Cost};
use saffron_index::repair_rules;
use saffron_recording::{Masker, Recording};

use super::merge::{self, MergeInput};
use super::{Repair, SessionEnd, Tally, judge, refusal, session_ended, with_agent_run};
use crate::medium::http::{HttpLive, HttpMedium};
use crate::orchestrator::replay::{Replay, Stop, replay_in};
use crate::orchestrator::run::{REPAIR_PROOF, ReplayMode, RunOptions};
use crate::plan::Execution;
use crate::record::api::gateway::ApiGateway;
use crate::record::api::{contract_digests, prompt, service_lines};
use crate::record::gateway::Values;
use crate::record::recorder::{self, StepSource};
use crate::trace::TraceKind;
use crate::transcript::Exchange;
use crate::{ScenarioResult, Verdict};

/// A replay kept open where it failed, for a repair.
pub(crate) const ESCALATING: ReplayMode =
    ReplayMode { keep_live: true, rerun_failed_then: false, trace: TraceKind::Replay, sign_in_once: false };

/// What repairing an `@api` execution came to.
pub(crate) struct ApiHealed {
    /// Masked.
    pub result: ScenarioResult,
    /// The proven recording of a yellow repair, for the other rows of the scenario.
    pub recording: Option<Recording>,
    /// The values the last execution kept (a Fixture leaves them to its scenarios), and the
    /// masker that knows every secret and credential met.
    pub captured: Vec<(String, String)>,
    pub masker: Masker,
    /// The repair sessions' and proofs' exchanges, numbered as attempts after `first_attempt`.
    pub exchanges: Vec<Exchange>,
}

/// Repairs the `@api` execution `first` stopped in. `seeds` are its Fixture's values;
/// `attempts` is how many replays ran before (their exchanges are numbered 1 to it).
pub(crate) async fn heal(
    http: &HttpMedium,
    execution: &Execution,
    options: &RunOptions,
    driver: &Arc<dyn AgentDriver>,
    first: Replay<HttpLive>,
    seeds: &[(String, String)],
    attempts: u32,
) -> ApiHealed {
    let started = Instant::now();
    let Replay { outcome: failed, mut masker, stopped, captured, .. } = first;
    let (Some(stop), Ok(replayed)) = (stopped, execution.recording.clone()) else {
        let result = crate::orchestrator::run::masked(failed, &masker);
        return ApiHealed { result, recording: None, captured, masker, exchanges: Vec::new() };
    };
    let committed = execution.committed.clone().unwrap_or_else(|| replayed.clone());
    let mut values = crate::record::values_for(execution, options, &mut masker, Vec::new());
    // The application holds what the replay made with its `{unique}` values.
    values.unique_seed.clone_from(&stop.unique_seed);
    let mut repairing = Repairing {
        http,
        execution,
        options,
        driver,
        values: Arc::new(values),
        seeds,
        tally: Tally { traces: failed.traces.clone(), ..Tally::default() },
        exchanges: Vec::new(),
        attempt: attempts,
        captured,
        masker,
        started,
    };

    // The repair on the execution the replay kept; after an agent failure, once more from a
    // fresh replay.
    let mut live = Some((stop, failed));
    let mut agent_failure: Option<String> = None;
    let (repair, failed) = loop {
        let (stop, failed) = match live.take() {
            Some(live) => live,
            None => {
                let again = repairing.replay(execution, ESCALATING).await;
                repairing.captured = again.captured;
                repairing.masker = again.masker;
                match again.stopped {
                    Some(stop) => (stop, again.outcome),
                    // It passed this time, or failed where no repair may go: that is the verdict.
                    None => return repairing.ended(again.outcome, None, None, None),
                }
            }
        };
        let step = Some(stop.step);
        match repairing.session(stop, &failed, &replayed, &committed, false).await {
            SessionEnd::Repaired(repair) => break (*repair, failed),
            SessionEnd::Verdict(verdict) => {
                return repairing.ended(ScenarioResult { verdict, ..failed }, None, step, None);
            }
            SessionEnd::AgentFailed(cause) => match agent_failure {
                None => agent_failure = Some(cause),
                Some(first) => {
                    let verdict = Verdict::Blocked {
                        cause: format!("the repairing agent failed twice, nothing was filed: {cause} (first: {first})"),
                    };
                    return repairing.ended(ScenarioResult { verdict, ..failed }, None, step, None);
                }
            },
        }
    };
    let first_step = repair.from_step;
    if repair.account.rewrites.is_empty() && super::interruption::changes_nothing(&committed, &repair.recording) {
        // The same requests passed when the agent sent them: the failure did not come back.
        let verdict = match failed.verdict.clone() {
            Verdict::Red { step, step_text, message } => Verdict::Red {
                step,
                step_text,
                message: format!(
                    "{message} (the repairing agent sent what the recording sends and it passed: nothing changed, \
                     so nothing was filed; the scenario is flaky here)"
                ),
            },
            other => other,
        };
        return repairing.ended(ScenarioResult { verdict, ..failed }, None, Some(first_step), None);
    }
    if let Some(refused) = refusal(&repair) {
        return repairing.ended(ScenarioResult { verdict: refused, ..failed }, None, Some(first_step), None);
    }

    // The proof, and one refine from its failure.
    let proof = repairing.proof(&repair.recording).await;
    // What the proof kept is what a Fixture leaves its scenarios (and what a refine starts from).
    repairing.captured = proof.captured;
    let (repair, proof) = match (&proof.outcome.verdict, proof.stopped) {
        (Verdict::Green, _) => (repair, proof.outcome),
        (Verdict::Red { .. }, Some(stop)) => {
            let proof_outcome = proof.outcome;
            match repairing.session(stop, &proof_outcome, &repair.recording, &committed, true).await {
                SessionEnd::Repaired(mut refined) => {
                    refined.notes.splice(0..0, repair.notes.iter().cloned());
                    refined.from_step = first_step;
                    if let Some(refused) = refusal(&refined) {
                        let outcome = ScenarioResult { verdict: refused, ..proof_outcome };
                        return repairing.ended(outcome, None, Some(first_step), None);
                    }
                    let second = repairing.proof(&refined.recording).await;
                    repairing.captured = second.captured;
                    (*refined, second.outcome)
                }
                SessionEnd::Verdict(Verdict::Blocked { cause }) | SessionEnd::AgentFailed(cause) => {
                    let verdict = Verdict::Blocked {
                        cause: format!("the repair's refine could not finish, nothing was filed: {cause}"),
                    };
                    return repairing.ended(ScenarioResult { verdict, ..proof_outcome }, None, Some(first_step), None);
                }
                // The agent ended the refine another way (a defect, unverified): the repair
                // stays unproven.
                SessionEnd::Verdict(_) => (repair, proof_outcome),
            }
        }
        (_, _) => (repair, proof.outcome),
    };
    let cost = Cost::of(&repairing.tally.usage, driver.prices());
    let judged = judge(options, execution, &repair, &replayed, &repairing.tally.usage, &cost, proof, &repairing.masker);
    let proven = judged.proven.then_some(repair.recording);
    repairing.ended(judged.outcome, judged.proposal, Some(first_step), proven)
}

/// One repair of an `@api` execution under way.
struct Repairing<'a> {
    http: &'a HttpMedium,
    execution: &'a Execution,
    options: &'a RunOptions,
    driver: &'a Arc<dyn AgentDriver>,
    /// Its `{unique}` seed is the failed replay's.
    values: Arc<Values>,
    seeds: &'a [(String, String)],
    tally: Tally,
    exchanges: Vec<Exchange>,
    /// The number of the latest execution or session whose exchanges are kept.
    attempt: u32,
    /// What the latest execution kept, for the session that takes it over.
    captured: Vec<(String, String)>,
    masker: Masker,
    started: Instant,
}

impl Repairing<'_> {
    /// The repair's result: `outcome` with what the agent did, masked.
    fn ended(
        self,
        outcome: ScenarioResult,
        proposal: Option<String>,
        repaired_step: Option<usize>,
        recording: Option<Recording>,
    ) -> ApiHealed {
        let agent = (self.driver.as_ref(), self.execution);
        let result = with_agent_run(agent, &self.tally, outcome, proposal, repaired_step, &self.masker, self.started);
        ApiHealed { result, recording, captured: self.captured, masker: self.masker, exchanges: self.exchanges }
    }

    /// Keeps `exchanges` as the next attempt's.
    fn keep(&mut self, exchanges: Vec<Exchange>) {
        self.attempt += 1;
        let attempt = self.attempt;
        self.exchanges.extend(exchanges.into_iter().map(|exchange| Exchange { attempt, ..exchange }));
    }

    /// Replays `execution` from the start on a new execution, its exchanges and trace kept.
    async fn replay(&mut self, execution: &Execution, mode: ReplayMode) -> Replay<HttpLive> {
        let mut replayed = replay_in(self.http, execution, self.options, self.masker.clone(), mode, self.seeds).await;
        let exchanges = std::mem::take(&mut replayed.exchanges);
        self.keep(exchanges);
        replayed
    }

    /// The proof of `recording`: from scratch at zero AI, after the `before_proof` hooks.
    async fn proof(&mut self, recording: &Recording) -> Replay<HttpLive> {
        let proof = match crate::record::proof_of(self.execution, self.options, recording).await {
            Ok(proof) => proof,
            Err(blocked) => return Replay::ended(*blocked, self.masker.clone()),
        };
        let mut proven = self.replay(&proof, REPAIR_PROOF).await;
        let agent = crate::trace::agent_trace(self.driver.as_ref(), &self.tally.conversation);
        crate::trace::keep_proof(self.options, &mut proven.outcome, proven.trace.take(), agent, &proven.masker);
        self.tally.traces.append(&mut proven.outcome.traces);
        self.masker = proven.masker.clone();
        proven
    }

    /// One agent session on the execution `stop` kept, from the step it failed at; the result
    /// merged onto `replayed`.
    async fn session(
        &mut self,
        stop: Stop<HttpLive>,
        failed: &ScenarioResult,
        replayed: &Recording,
        committed: &Recording,
        refine: bool,
    ) -> SessionEnd {
        let Stop { step: failed_step, action: performed, live, .. } = stop;
        let execution = self.execution;
        let steps = &execution.template_steps;
        let replayed_step = replayed.steps.get(failed_step);
        let done_before: Vec<_> =
            replayed_step.map(|step| step.actions.iter().take(performed).cloned().collect()).unwrap_or_default();
        let Some(failed_action) = replayed_step.and_then(|step| step.actions.get(performed)).cloned() else {
            return SessionEnd::Verdict(failed.verdict.clone());
        };
        let mut gateway = ApiGateway::repairing(
            live.for_repair(),
            execution,
            self.options,
            Arc::clone(&self.values),
            self.masker.clone(),
            &self.captured,
            failed_step,
        );
        let failure = match &failed.verdict {
            Verdict::Red { message, .. } => self.masker.mask(message),
            other => other.name().to_string(),
        };
        let feature = execution.file.to_string_lossy().replace('\\', "/");
        let services = service_lines(self.http.services());
        let captured: Vec<&str> = self.captured.iter().map(|(name, _)| name.as_str()).collect();
        let response = gateway.latest_shown(failed_action.session());
        let task = prompt::repair_task(&prompt::RepairTask {
            feature: &feature,
            scenario: &execution.template_name,
            steps,
            services: &services,
            failed_step,
            performed: &done_before,
            failed_action: &failed_action,
            failure: &failure,
            response: response.as_deref(),
            params: execution.params.iter().map(|(name, _)| name.as_str()).collect(),
            secret_names: &self.values.secret_names,
            captured: &captured,
            refine,
        });
        let session_masker = gateway.masker().clone();
        let report = self.driver.run(&mut gateway, &session_masker, prompt::REPAIR_SYSTEM, &task).await;
        self.tally.usage += &report.usage;
        self.tally.sessions += 1;
        self.tally.conversation.extend(report.conversation.iter().cloned());
        self.masker = gateway.masker().clone();
        self.keep(gateway.own_exchanges());
        if let Some(cause) = report.outcome.cause() {
            return SessionEnd::AgentFailed(format!("the repairing agent: {cause}"));
        }
        if let Err(end) = session_ended(gateway.finish().cloned(), steps, failed_step, &failed_action, &failure) {
            return end;
        }
        let segment = failed_step..steps.len();
        let entries: Vec<_> = gateway
            .entries()
            .iter()
            .filter(|entry| entry.step.is_some_and(|step| segment.contains(&step)))
            .cloned()
            .collect();
        let sources = vec![StepSource::Agent; steps.len()];
        let agent = recorder::step_actions(&sources, &entries);
        let (merged, notes) = merge::merge(&MergeInput { replayed, committed, failed_step, performed, agent: &agent });
        let mut recording = recorder::build(&feature, &execution.template_name, steps, merged);
        self.masker.scrub_recording(&mut recording);
        recording.api_contracts = contract_digests(self.http.services(), &recording);
        let review = repair_rules::review_repair(committed, &recording);
        SessionEnd::Repaired(Box::new(Repair {
            recording,
            notes,
            account: gateway.account().clone(),
            from_step: failed_step,
            review,
            interruption: None,
        }))
    }
}
