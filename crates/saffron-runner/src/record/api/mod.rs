//! Recording an `@api` scenario: one agent session with request tools on the HTTP medium (no
//! browser), its recording proof-replayed on a fresh execution, and saved only when the proof
//! is green. The flow around it (refine, evidence, saving, verdicts) is the browser's.
//!
//! - [`gateway`]: the tools, performed and recorded, with the guards against a dishonest
//!   recording.
//! - [`tools`]: their inputs.
//! - [`prompt`]: what the agent is told.

pub(crate) mod gateway;
pub(crate) mod prompt;
pub(crate) mod tools;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use saffron_agent::{AgentDriver, Message};
use saffron_recording::{Masker, Recording};

use self::gateway::ApiGateway;
use super::recorder::{self, StepSource};
use super::{Recorder, Tally, finish_verdict, record_with, values_for};
use crate::medium::http::{HttpMedium, Services};
use crate::orchestrator::run::RunOptions;
use crate::plan::Execution;
use crate::record::gateway::Values;
use crate::{ScenarioResult, Verdict};

/// What recording an `@api` execution left.
pub(crate) struct ApiRecorded {
    /// Masked.
    pub result: ScenarioResult,
    pub recording: Option<Recording>,
    /// The values its last proof replay kept, and the masker that knows its credentials: what a
    /// Fixture leaves its scenarios.
    pub captured: Vec<(String, String)>,
    pub masker: Masker,
}

/// Records `execution` (the first row of an Outline, or a Fixture) on the HTTP medium, with the
/// values a Fixture captured as `seeds`.
pub(crate) async fn record(
    http: &HttpMedium,
    execution: &Execution,
    options: &RunOptions,
    driver: &Arc<dyn AgentDriver>,
    mut masker: Masker,
    seeds: &[(String, String)],
) -> ApiRecorded {
    let started = Instant::now();
    let values = Arc::new(values_for(execution, options, &mut masker, Vec::new()));
    let mut recorder = ApiRecorder { http, values, seeds, captured: Vec::new() };
    let (mut result, masker, recording) = record_with(&mut recorder, execution, options, driver, masker, 0).await;
    result.duration_ms = started.elapsed().as_millis() as u64;
    let result = crate::orchestrator::run::masked(result, &masker);
    ApiRecorded { result, recording, captured: recorder.captured, masker }
}

/// The request tools a browser session gets beside its page, with `seeds` kept already: in a
/// project with an API (a service configured, or the application's contract pinned), or for a
/// scenario whose recording sends requests. `None` elsewhere: a browser-only project's agent
/// is not told of requests.
pub(crate) fn requests_beside_page(
    execution: &Execution,
    options: &RunOptions,
    values: &Arc<Values>,
    seeds: &[(String, String)],
) -> Option<gateway::Requests> {
    let services = &options.services;
    let has_api = services
        .by_name
        .iter()
        .any(|(name, service)| name != crate::medium::http::APP_SERVICE || service.contract.is_file());
    let sends = [execution.committed.as_ref(), execution.recording.as_ref().ok()]
        .into_iter()
        .flatten()
        .any(|recording| recording.steps.iter().flat_map(|step| &step.actions).any(|action| action.is_http()));
    if !has_api && !sends {
        return None;
    }
    let live = HttpMedium::new(Arc::clone(services)).open_beside_page_for_agent();
    Some(gateway::Requests::new(live, execution, options, Arc::clone(values), seeds))
}

/// The services as the agent is told of them, when it has request tools.
pub(crate) fn services_told(requests: &Option<gateway::Requests>, options: &RunOptions) -> Vec<(String, String, bool)> {
    match requests {
        Some(_) => service_lines(&options.services),
        None => Vec::new(),
    }
}

/// Each service as the agent is told of it: name, base URL, whether its contract is pinned.
pub(crate) fn service_lines(services: &Services) -> Vec<(String, String, bool)> {
    services
        .by_name
        .iter()
        .map(|(name, service)| (name.clone(), service.base_url.to_string(), service.contract.is_file()))
        .collect()
}

/// The digest of each pinned contract the recording's schema checks read, by service.
pub(crate) fn contract_digests(services: &Services, recording: &Recording) -> BTreeMap<String, String> {
    recording
        .schema_checked_services()
        .into_iter()
        .filter_map(|name| {
            let bytes = std::fs::read(&services.by_name.get(&name)?.contract).ok()?;
            Some((name, crate::contract::digest(&bytes)))
        })
        .collect()
}

/// Why an `@api` recording no longer holds for the project's contracts: the first service
/// whose pinned contract is not the one its schema checks were recorded against, or is gone.
pub(crate) fn changed_contract(
    services: &Services,
    recording: &Recording,
    digests: &mut ContractDigests,
) -> Option<String> {
    recording.api_contracts.iter().find_map(|(name, recorded)| {
        let Some(service) = services.by_name.get(name) else {
            return Some(format!("its schema checks read service `{name}`, which [api.services] no longer names"));
        };
        match digests.of(name, &service.contract) {
            Some(current) if current == recorded => None,
            Some(_) => Some(format!("the pinned contract of service `{name}` changed since it was recorded")),
            None => Some(format!(
                "the pinned contract of service `{name}` ({}) is missing (`saffron api pin {name}` writes it)",
                service.contract.display()
            )),
        }
    })
}

/// What freshness reads of a project's pinned contracts outside a run (`saffron status`): why a
/// recording's schema checks no longer hold, as a run would say it. `None` from [`new`] for a
/// project with no API (no service configured, no `contracts/` folder): nothing to read.
///
/// [`new`]: PinnedContracts::new
pub struct PinnedContracts {
    services: Services,
    digests: ContractDigests,
}

impl PinnedContracts {
    pub fn new(root: &std::path::Path, config: &crate::config::Config) -> Option<PinnedContracts> {
        if config.api.services.is_empty() && !root.join("contracts").is_dir() {
            return None;
        }
        // Only the contracts' paths matter here: the application's address is a stand-in.
        let services = Services::from_config(root, &config.api, &[], "http://127.0.0.1/").ok()?;
        Some(PinnedContracts { services, digests: ContractDigests::default() })
    }

    /// Why `recording` is stale for the project's contracts, or `None` when it is not.
    pub fn changed(&mut self, recording: &Recording) -> Option<String> {
        changed_contract(&self.services, recording, &mut self.digests)
    }
}

/// The SHA-256 of each service's pinned contract file, read once however many recordings ask
/// (`None`: the file cannot be read).
#[derive(Default)]
pub(crate) struct ContractDigests(BTreeMap<String, Option<String>>);

impl ContractDigests {
    fn of(&mut self, service: &str, path: &std::path::Path) -> Option<&String> {
        self.0
            .entry(service.to_owned())
            .or_insert_with(|| std::fs::read(path).ok().map(|bytes| crate::contract::digest(&bytes)))
            .as_ref()
    }
}

struct ApiRecorder<'a> {
    http: &'a HttpMedium,
    values: Arc<Values>,
    seeds: &'a [(String, String)],
    /// What the last proof replay kept.
    captured: Vec<(String, String)>,
}

impl Recorder for ApiRecorder<'_> {
    async fn attempt(
        &mut self,
        execution: &Execution,
        options: &RunOptions,
        driver: &Arc<dyn AgentDriver>,
        masker: &mut Masker,
        tally: &mut Tally,
        refine: Option<String>,
    ) -> Result<(Recording, Vec<Message>), Verdict> {
        let live = self.http.open_for_recording();
        let mut gateway =
            ApiGateway::new(live, execution, options, Arc::clone(&self.values), masker.clone(), self.seeds);
        let feature = execution.file.to_string_lossy().replace('\\', "/");
        let services = service_lines(self.http.services());
        let seed_names: Vec<&str> = self.seeds.iter().map(|(name, _)| name.as_str()).collect();
        let task = prompt::task(&prompt::Task {
            feature: &feature,
            scenario: &execution.template_name,
            steps: &execution.template_steps,
            services: &services,
            params: execution.params.iter().map(|(name, _)| name.as_str()).collect(),
            secret_names: &self.values.secret_names,
            captured: &seed_names,
            refine,
        });
        let session_masker = gateway.masker().clone();
        let report = driver.run(&mut gateway, &session_masker, prompt::SYSTEM, &task).await;
        tally.usage += &report.usage;
        tally.sessions += 1;
        *masker = gateway.masker().clone();
        if let Some(cause) = report.outcome.cause() {
            return Err(Verdict::Blocked { cause: format!("the recording agent: {cause}") });
        }
        finish_verdict(gateway.finish().cloned(), execution)?;
        let sources = vec![StepSource::Agent; execution.template_steps.len()];
        let actions = recorder::step_actions(&sources, gateway.entries());
        let mut recording = recorder::build(&feature, &execution.template_name, &execution.template_steps, actions);
        recording.api_contracts = contract_digests(self.http.services(), &recording);
        Ok((recording, report.conversation))
    }

    async fn proof(
        &mut self,
        execution: &Execution,
        options: &RunOptions,
        recording: &Recording,
        masker: Masker,
        _agent: crate::trace::AgentTrace,
    ) -> ScenarioResult {
        let proof = match super::proof_of(execution, options, recording).await {
            Ok(proof) => proof,
            Err(blocked) => return *blocked,
        };
        let mode = crate::orchestrator::run::ReplayMode::default();
        let mut proven =
            crate::orchestrator::replay::replay_in(self.http, &proof, options, masker, mode, self.seeds).await;
        let exchanges = std::mem::take(&mut proven.exchanges);
        crate::transcript::keep(options, &mut proven.outcome, exchanges, &proven.masker);
        self.captured = proven.captured;
        proven.outcome
    }
}
