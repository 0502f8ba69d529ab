//! One run of a project, as `saffron run` and the MCP server's `run` tool both perform it:
//! `saffron.toml`, `{env:NAME}` values from the environment and the project's `.env`, the plan
//! (selection and shard), setup and teardown hooks around the replay. Printing, progress and
//! signals stay with the caller.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use saffron_browser::BrowserConfig;
use saffron_index::Snapshot;

use crate::config::{Config, Hooks, UnknownKey};
use crate::hooks::{HookPhase, HookRun, Interrupt, run_hooks};
use crate::{Execution, RunOptions, ScenarioResult, Selection, TagExpression};

/// What the caller asks for; everything else comes from `saffron.toml`.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Files, folders or `FILE:LINE` (relative to the project root); empty for all.
    pub targets: Vec<String>,
    pub tags: Option<TagExpression>,
    /// Scenarios replayed at once (at least 1).
    pub workers: usize,
    /// Wins over `$SAFFRON_BASE_URL` and `base_url` in `saffron.toml`.
    pub base_url: Option<String>,
    pub headed: bool,
    /// Shard I of N (1-based).
    pub shard: Option<(usize, usize)>,
    /// Whether the setup and teardown hooks run.
    pub hooks: bool,
    /// A remote browser's DevTools endpoint; wins over `[browser] url` in `saffron.toml`.
    pub browser_url: Option<String>,
    /// Scenarios recorded at once; wins over `[agent] workers` in `saffron.toml` (default 1).
    pub agent_workers: Option<usize>,
    /// File a zero-token proposal for each replay that drifted (or `[run] refresh_drift`).
    pub refresh_drift: bool,
    /// How many times a red scenario is run again (`None`: `[run] retries`).
    pub retries: Option<u32>,
    /// `--trace`: overrides `[trace] mode`.
    pub trace: Option<crate::trace::TraceMode>,
    /// `--api-url NAME=URL`: a service's base URL for this run, over `[api.services]`.
    pub api_urls: Vec<(String, String)>,
    /// `--device NAME`: the device every browser context emulates, over `[browser] device`.
    pub device: Option<String>,
    /// `--browser` (repeatable): the browsers to replay in, over `[browser] engines`.
    pub browsers: Vec<saffron_browser::Engine>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: {reason}")]
    Config { path: String, reason: String },
    #[error("no base URL: pass one (--base-url), set SAFFRON_BASE_URL, or set base_url in saffron.toml")]
    NoBaseUrl,
    #[error("invalid base URL: {0}")]
    InvalidBaseUrl(String),
    #[error("invalid browser URL: {0}")]
    InvalidBrowserUrl(String),
    #[error("{0}")]
    UnknownDevice(#[from] saffron_browser::UnknownDevice),
    #[error("{0}")]
    Browsers(String),
    #[error("no scenario matches the selection")]
    NoScenario,
    #[error("{0}")]
    Handlers(String),
    #[error("[api.services]: {0}")]
    Api(String),
    #[error("setup failed, no scenario was run: `{command}` {reason}")]
    SetupFailed { command: String, reason: String },
    #[error("interrupted during setup, no scenario was run; the teardown hooks ran")]
    SetupInterrupted,
}

/// A planned run: what is replayed, how, and the hooks around it.
pub struct Session {
    pub root: PathBuf,
    pub executions: Vec<Execution>,
    pub options: RunOptions,
    /// The browsers to replay in, in order (see [`engines_of`]); `options` is for the first.
    pub engines: Vec<saffron_browser::Engine>,
    hooks: Hooks,
    selection: Selection,
    firefox_path: Option<PathBuf>,
}

/// The project's saffron.toml, or the defaults when there is none.
pub fn load_config(root: &Path) -> Result<Config, SessionError> {
    load_config_checked(root).map(|(config, _)| config)
}

/// The project's saffron.toml and the keys in it that nothing reads (warnings: the caller
/// shows them and goes on).
pub fn load_config_checked(root: &Path) -> Result<(Config, Vec<UnknownKey>), SessionError> {
    let path = root.join("saffron.toml");
    let config_error = |reason: String| SessionError::Config { path: path.display().to_string(), reason };
    match std::fs::read_to_string(&path) {
        Ok(text) => Config::parse_checked(&text).map_err(|error| config_error(error.to_string())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok((Config::default(), Vec::new())),
        Err(error) => Err(config_error(format!("cannot be read: {error}"))),
    }
}

/// Run options whose `{env:NAME}` lookup reads `overrides`, then the environment, then the
/// project's `.env` (read now; a `.env` that cannot be read or parsed adds nothing).
pub fn options_with_env(root: &Path, overrides: Vec<(String, String)>) -> RunOptions {
    let dotenv: Vec<(String, String)> = dotenvy::from_path_iter(root.join(".env"))
        .map(|entries| entries.filter_map(Result::ok).collect())
        .unwrap_or_default();
    let mut secret_names: Vec<String> = overrides.iter().map(|(name, _)| name.clone()).collect();
    secret_names
        .extend(dotenv.iter().map(|(name, _)| name.clone()).filter(|name| !overrides.iter().any(|(n, _)| n == name)));
    let lookup = move |name: &str| {
        overrides
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
            .or_else(|| std::env::var(name).ok())
            .or_else(|| dotenv.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone()))
    };
    RunOptions {
        base_url: String::new(),
        timeouts: crate::config::Timeouts::default(),
        browser: BrowserConfig::default(),
        workers: 1,
        env: Arc::new(lookup),
        agent: Err(crate::record::agent_unavailable(&saffron_agent::AgentConfigError::NotConfigured)),
        agent_workers: 1,
        root: root.to_path_buf(),
        secret_names,
        secret_origins: Vec::new(),
        before_proof: Vec::new(),
        hook_timeout: std::time::Duration::from_millis(crate::config::Hooks::default().timeout_ms),
        handlers: Arc::default(),
        refresh_drift: false,
        retries: 0,
        takeover: None,
        trace: crate::trace::TraceMode::default(),
        artifacts: Arc::new(crate::RunFolder::new(root)),
        services: Arc::default(),
        transcript: crate::config::TranscriptMode::default(),
        signed_in: Arc::default(),
    }
}

/// The project's interruption handlers (`.saffron/handlers/`), for any run of it: a handler's
/// StepSet may be recorded by any scenario of the project, selected or not.
pub fn project_handlers(root: &Path, snapshot: &Snapshot) -> Result<crate::interrupt::Handlers, String> {
    crate::interrupt::load_handlers(root, &crate::plan(snapshot, &Selection::default()))
}

/// Scenarios recorded at once: the request's, else `[agent] workers`, else 1 (0 reads as 1).
fn agent_workers(requested: Option<usize>, agent: Option<&saffron_agent::AgentConfig>) -> usize {
    requested.or_else(|| agent.and_then(|agent| agent.workers)).unwrap_or(1).max(1)
}

/// Builds the driver of an external agent program (`command` in `[agent]`): the caller's, since
/// serving the gateway to a program is the MCP layer's work, not the runner's.
pub type ExternalDrivers<'a> = &'a dyn Fn(saffron_agent::ExternalAgent) -> Arc<dyn saffron_agent::AgentDriver>;

/// Sets [`RunOptions::agent`] to the agent `[agent]` describes: a built-in provider's driver,
/// an external program's (made by `external`), or why there is none (the problem and the hint
/// that fixes it), said in the blocked verdict of each scenario that needs recording. The key is
/// read with the run's env lookup (environment, `.env`), and its variable is taken off the
/// secrets the agent may type: the model's key must never be typed into the application.
pub fn resolve_agent(
    config: Option<&saffron_agent::AgentConfig>,
    options: &mut RunOptions,
    external: Option<ExternalDrivers<'_>>,
) {
    let config = config.cloned().unwrap_or_default();
    let env = options.env.clone();
    options.agent = match config.resolve(&|name| env(name)) {
        Ok(saffron_agent::AgentSetup::BuiltIn(agent)) => {
            options.secret_names.retain(|name| Some(name) != agent.key_env.as_ref());
            saffron_agent::ProviderDriver::connect(&agent, &saffron_agent::HttpSettings::default())
                .map(|driver| Arc::new(driver) as Arc<dyn saffron_agent::AgentDriver>)
                .map_err(|error| error.to_string())
        }
        Ok(saffron_agent::AgentSetup::External(agent)) => match external {
            Some(external) => Ok(external(agent)),
            None => Err("`command` in [agent] runs an external agent program, which this caller cannot serve; \
                         run `saffron run` from a terminal"
                .into()),
        },
        Err(error) => Err(crate::record::agent_unavailable(&error)),
    };
}

/// The device a run's contexts emulate: `--device`, else `[browser] device`, else none (a
/// desktop window).
pub fn device_of(
    requested: Option<&str>,
    config: &Config,
) -> Result<Option<&'static saffron_browser::Device>, SessionError> {
    let name = requested.or(Some(config.browser.device.as_str())).map(str::trim).filter(|name| !name.is_empty());
    Ok(name.map(saffron_browser::device).transpose()?)
}

/// The plan of a matrix's later browser (see [`Session::replanned`]).
pub fn later_browser_plan(snapshot: &Snapshot, selection: &Selection) -> Vec<Execution> {
    crate::plan(snapshot, selection).into_iter().filter(|execution| !execution.api_only()).collect()
}

/// The browsers a run replays in: `--browser` (repeatable), else `[browser] engines`, else
/// Chromium; each once, Chromium first (it alone records and repairs). A matrix runs them one
/// after the other, so it cannot be a shard of a run split across machines, and Firefox takes
/// no device profile.
pub fn engines_of(
    requested: &[saffron_browser::Engine],
    config: &Config,
    shard: Option<(usize, usize)>,
    device: Option<&saffron_browser::Device>,
) -> Result<Vec<saffron_browser::Engine>, SessionError> {
    use saffron_browser::Engine;
    let mut engines: Vec<Engine> = if requested.is_empty() {
        let mut named = Vec::new();
        for name in &config.browser.engines {
            named.push(Engine::parse(name).ok_or_else(|| {
                SessionError::Browsers(format!("[browser] engines: unknown browser {name:?} (chromium, firefox)"))
            })?);
        }
        named
    } else {
        requested.to_vec()
    };
    engines.sort();
    engines.dedup();
    if engines.is_empty() {
        engines.push(Engine::Chromium);
    }
    if engines.len() > 1 && shard.is_some() {
        return Err(SessionError::Browsers(
            "--shard splits one browser's run across machines, and a matrix runs its browsers here one after the \
             other: in CI, run one job per browser (--browser firefox --shard 1/2)"
                .to_owned(),
        ));
    }
    // A desktop profile is emulated in Firefox as in Chromium; a phone or tablet is not.
    if let Some(device) = device.filter(|device| engines.contains(&Engine::Firefox) && (device.mobile || device.touch))
    {
        return Err(SessionError::Browsers(format!(
            "Firefox with a mobile device profile times out on every click (it has no touch emulation over \
             WebDriver BiDi): replay {:?} in Chromium (--browser chromium), and Firefox without --device or with a \
             desktop profile (\"Desktop Firefox\")",
            device.name
        )));
    }
    Ok(engines)
}

/// Where a run's browser goes and which browser it is: the base URL (`--base-url`, else
/// `SAFFRON_BASE_URL`, else `base_url` in `saffron.toml`) and the browser's settings, with
/// `--browser-url` and `--headed` over `[browser]`. Checked before any browser starts: a run may
/// open web pages only, never local files, and a typo in a browser URL is the user's to fix.
pub fn browser_setup(
    root: &Path,
    config: &Config,
    base_url: Option<String>,
    browser_url: Option<String>,
    headed: bool,
) -> Result<(String, BrowserConfig), SessionError> {
    let base_url = base_url
        .or_else(|| std::env::var("SAFFRON_BASE_URL").ok())
        .or(config.base_url.clone())
        .ok_or(SessionError::NoBaseUrl)?;
    if let Some(problem) = saffron_recording::navigation::base_url_problem(&base_url) {
        return Err(SessionError::InvalidBaseUrl(problem));
    }
    let browser_url = browser_url.or_else(|| Some(config.browser.url.clone()).filter(|url| !url.is_empty()));
    let browser_url = browser_url
        .map(|url| {
            saffron_browser::Endpoint::parse(&url)
                .map_err(|error| SessionError::InvalidBrowserUrl(error.to_string()))?;
            Ok::<_, SessionError>(url.trim().to_owned())
        })
        .transpose()?;
    let mut browser =
        BrowserConfig { headless: config.browser.headless && !headed, url: browser_url, ..Default::default() };
    if !config.browser.path.trim().is_empty() {
        browser.executable = Some(root.join(config.browser.path.trim()));
    }
    Ok((base_url.trim().to_owned(), browser))
}

/// How a proposed recording fared when replayed before it is accepted.
#[derive(Debug, Clone)]
pub enum Proof {
    /// Each of the scenario's rows (this many) replayed it green.
    Passed(usize),
    /// A row did not: the result says where and why.
    Failed(Box<ScenarioResult>),
    /// The proof could not be run, and why.
    Unchecked(String),
}

/// Why the application at `base_url` cannot be proven against now: its host does not accept
/// a connection within a second. `None` when it does.
async fn unreachable(base_url: &str) -> Option<String> {
    let Ok(url) = url::Url::parse(base_url) else { return Some(format!("the base URL {base_url} cannot be read")) };
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return Some(format!("the base URL {base_url} names no host"));
    };
    let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
    let connect = tokio::net::TcpStream::connect((host, port));
    match tokio::time::timeout(Duration::from_secs(1), connect).await {
        Ok(Ok(_)) => None,
        Ok(Err(error)) => Some(format!("the application at {base_url} does not answer ({error})")),
        Err(_) => Some(format!("the application at {base_url} does not answer within a second")),
    }
}

impl Session {
    /// Reads the config and plans the run against `snapshot` (the project's index).
    pub fn prepare(root: &Path, snapshot: &Snapshot, request: RunRequest) -> Result<Session, SessionError> {
        let config = load_config(root)?;
        // An address that is wrong is said first, whatever the plan holds; a missing base URL
        // only once the plan says whether one is needed.
        let device = device_of(request.device.as_deref(), &config)?;
        let engines = engines_of(&request.browsers, &config, request.shard, device)?;
        let setup = match browser_setup(root, &config, request.base_url, request.browser_url, request.headed) {
            Err(SessionError::NoBaseUrl) => None,
            setup => Some(setup?),
        };
        let selection = Selection { targets: request.targets, tags: request.tags };
        let mut executions = crate::plan(snapshot, &selection);
        if let Some((_, browser)) = &setup
            && browser.url.is_some()
            && engines.contains(&saffron_browser::Engine::Firefox)
        {
            return Err(SessionError::Browsers(
                "a remote browser (--browser-url, [browser] url) is Chromium over DevTools: Firefox is launched by \
                 Saffron, so drop the remote browser or --browser firefox"
                    .to_owned(),
            ));
        }
        if let Some((index, count)) = request.shard {
            // The plan's order is the same on every machine, so shards never overlap.
            executions = executions
                .into_iter()
                .enumerate()
                .filter(|(n, _)| n % count.max(1) == index.saturating_sub(1))
                .map(|(_, execution)| execution)
                .collect();
        }
        // A run of `@api` scenarios only, in a project that names its services, talks to no
        // application page: it needs no base URL.
        let api_only =
            !executions.is_empty() && !config.api.services.is_empty() && executions.iter().all(Execution::api_only);
        let (base_url, browser) = match setup {
            Some(setup) => setup,
            None if api_only => (String::new(), BrowserConfig::default()),
            None => return Err(SessionError::NoBaseUrl),
        };
        if executions.is_empty() {
            return Err(SessionError::NoScenario);
        }
        let mut options = options_with_env(root, Vec::new());
        options.base_url = base_url;
        options.workers = request.workers.max(1);
        options.agent_workers = agent_workers(request.agent_workers, config.agent.as_ref());
        options.browser = BrowserConfig { device, engine: engines[0], ..browser };
        options.timeouts = config.timeouts.clone();
        options.refresh_drift = request.refresh_drift || config.run.refresh_drift;
        options.retries = request.retries.unwrap_or(config.run.retries);
        options.trace = request.trace.unwrap_or(config.trace.mode);
        options.services = Arc::new(
            crate::medium::http::Services::from_config(root, &config.api, &request.api_urls, &options.base_url)
                .map_err(SessionError::Api)?,
        );
        options.transcript = config.api.transcript;
        options.signed_in = Arc::new(crate::sign_in_once::SignedIn::new(config.session.steps.clone()));
        if !options.base_url.is_empty() {
            saffron_browser::SecretOrigins::new(&options.base_url, &config.secrets.origins).map_err(|reason| {
                SessionError::Config {
                    path: root.join("saffron.toml").display().to_string(),
                    reason: format!("[secrets] origins: {reason}"),
                }
            })?;
        }
        options.secret_origins = config.secrets.origins.clone();
        options.handlers = Arc::new(project_handlers(root, snapshot).map_err(SessionError::Handlers)?);
        let hooks = if request.hooks {
            config.hooks
        } else {
            Hooks { timeout_ms: config.hooks.timeout_ms, ..Hooks::default() }
        };
        options.before_proof = hooks.before_proof.list();
        options.hook_timeout = Duration::from_millis(hooks.timeout_ms);
        let firefox_path = Some(config.browser.firefox_path.trim()).filter(|path| !path.is_empty()).map(PathBuf::from);
        let first = engines[0];
        let mut session =
            Session { root: root.to_path_buf(), executions, options, engines, hooks, selection, firefox_path };
        session.options = session.options_for(first);
        Ok(session)
    }

    /// The run's options for `engine`: Firefox gets its own executable (and, in the run, no
    /// agent: see [`crate::run_with_progress`]).
    pub fn options_for(&self, engine: saffron_browser::Engine) -> RunOptions {
        let mut options = self.options.clone();
        options.browser.engine = engine;
        if engine == saffron_browser::Engine::Firefox {
            options.browser.executable = self.firefox_path.clone();
        }
        options
    }

    /// The run's browser scenarios planned again from `snapshot`: a later browser of a matrix
    /// replays the recordings and proposals the first one saved. `@api` scenarios, which no
    /// browser runs, are run once, by the first.
    pub fn replanned(&self, snapshot: &Snapshot) -> Vec<Execution> {
        later_browser_plan(snapshot, &self.selection)
    }

    /// A masker for every secret the planned scenarios may substitute: mask every output of
    /// the run with it.
    pub fn masker(&self) -> saffron_recording::Masker {
        crate::masker_for(&self.executions, &self.options)
    }

    fn hook_timeout(&self) -> Duration {
        Duration::from_millis(self.hooks.timeout_ms)
    }

    /// Runs the setup hooks and returns what each did. When one fails, or the run is
    /// interrupted during setup, the teardown hooks run at once (setup may have half-built
    /// something): the error comes back with every hook's run, setup's and teardown's.
    pub fn setup(&self, interrupt: &Interrupt) -> Result<Vec<HookRun>, (SessionError, Vec<HookRun>)> {
        let mut runs = run_hooks(
            &self.hooks.setup.list(),
            &self.root,
            &self.options.base_url,
            self.hook_timeout(),
            HookPhase::Setup,
            interrupt,
        );
        let error = if interrupt.is_triggered() {
            SessionError::SetupInterrupted
        } else {
            match runs.iter().find(|run| !run.succeeded()) {
                None => return Ok(runs),
                Some(failed) => SessionError::SetupFailed {
                    command: failed.command.clone(),
                    reason: failed.error.clone().unwrap_or_else(|| format!("exited with {:?}", failed.exit_code)),
                },
            }
        };
        runs.extend(self.teardown());
        Err((error, runs))
    }

    /// Replays every planned scenario; `on_result` sees each as it finishes.
    pub async fn replay(&self, on_result: impl FnMut(&ScenarioResult)) -> Vec<ScenarioResult> {
        crate::run_with_progress(self.executions.clone(), &self.options, on_result).await
    }

    /// Proves `recording` for the scenario whose recording lives at `recording_path` (relative
    /// to the root): after the `before_proof` hooks, each of its rows replays it at zero tokens
    /// in a fresh context, as `saffron run` would once it is accepted. `Unchecked` says why the
    /// proof could not be run at all (no such scenario, the app does not answer, no browser):
    /// that is no verdict about the recording.
    pub async fn prove(&self, recording_path: &Path, recording: &saffron_recording::Recording) -> Proof {
        let executions: Vec<Execution> = self
            .executions
            .iter()
            .filter(|execution| execution.recording_path == recording_path)
            .cloned()
            .map(|mut execution| {
                execution.recording = Ok(recording.clone());
                execution.pending_proposal = None;
                execution.held_for_review = None;
                execution.needs_recording = false;
                execution
            })
            .collect();
        if executions.is_empty() {
            return Proof::Unchecked(format!("no scenario of the project records to {}", recording_path.display()));
        }
        if let Some(why) = unreachable(&self.options.base_url).await {
            return Proof::Unchecked(why);
        }
        if let Err(error) = crate::orchestrator::run::before_proof(&self.options).await {
            return Proof::Unchecked(error.to_string());
        }
        // No agent: a proof that fails is the answer, never something to repair.
        let mut options = self.options.clone();
        options.agent = Err("a proof replays without an agent".into());
        options.refresh_drift = false;
        let results = crate::run(executions, &options).await;
        if let Some(blocked) = results.iter().find_map(|result| match &result.verdict {
            crate::Verdict::Blocked { cause } => Some(cause.clone()),
            _ => None,
        }) {
            return Proof::Unchecked(blocked);
        }
        match results.iter().find(|result| !result.is_green()) {
            Some(failed) => Proof::Failed(Box::new(failed.clone())),
            None => Proof::Passed(results.len()),
        }
    }

    /// Runs every teardown hook (a failed one does not stop the rest, nor does an
    /// interruption); returns what each did.
    pub fn teardown(&self) -> Vec<HookRun> {
        run_hooks(
            &self.hooks.teardown.list(),
            &self.root,
            &self.options.base_url,
            self.hook_timeout(),
            HookPhase::Teardown,
            &Interrupt::new(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_is_the_flags_else_the_configs_else_none() {
        let config = Config::parse("[browser]\ndevice = \"Pixel 7\"\n").expect("valid");
        let name = |device: Option<&saffron_browser::Device>| device.map(|device| device.name);
        assert_eq!(name(device_of(Some("iphone 15"), &config).expect("known")), Some("iPhone 15"));
        assert_eq!(name(device_of(None, &config).expect("known")), Some("Pixel 7"));
        assert_eq!(name(device_of(None, &Config::default()).expect("none")), None);
        let unknown = device_of(None, &Config::parse("[browser]\ndevice = \"Nokia 3310\"\n").expect("valid"));
        assert!(matches!(unknown, Err(SessionError::UnknownDevice(_))), "{unknown:?}");
    }

    #[test]
    fn agent_workers_come_from_the_request_then_the_config_then_one() {
        let configured = crate::config::Config::parse("[agent]\nworkers = 3\n").expect("valid").agent;
        assert_eq!(agent_workers(Some(2), configured.as_ref()), 2);
        assert_eq!(agent_workers(None, configured.as_ref()), 3);
        assert_eq!(agent_workers(None, None), 1);
        let zero = crate::config::Config::parse("[agent]\nworkers = 0\n").expect("valid").agent;
        assert_eq!(agent_workers(None, zero.as_ref()), 1);
    }

    #[test]
    fn a_prepared_session_records_on_the_requested_agent_workers() {
        let root = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(root.path().join("features")).expect("mkdir");
        std::fs::write(root.path().join("features/a.feature"), "Feature: A\n  Scenario: S\n    Given x\n")
            .expect("feature");
        std::fs::write(root.path().join("saffron.toml"), "base_url = \"http://127.0.0.1:1\"\n[agent]\nworkers = 4\n")
            .expect("config");
        let (host, _) = saffron_index::IndexHost::load(root.path());
        let snapshot = host.snapshot();
        let request = RunRequest { workers: 1, ..RunRequest::default() };
        let session = Session::prepare(root.path(), &snapshot, request.clone()).expect("prepared");
        assert_eq!(session.options.agent_workers, 4);
        let request = RunRequest { agent_workers: Some(2), ..request };
        let session = Session::prepare(root.path(), &snapshot, request).expect("prepared");
        assert_eq!(session.options.agent_workers, 2);
    }

    #[test]
    fn the_agent_is_resolved_from_the_env_file_and_its_key_is_no_secret_the_agent_may_type() {
        let project = tempfile::tempdir().expect("temp dir");
        std::fs::write(project.path().join(".env"), "DEMO_PASSWORD=pw-123\nANTHROPIC_API_KEY=sk-test\n")
            .expect("write");
        let mut options = options_with_env(project.path(), Vec::new());
        assert_eq!(options.secret_names, ["DEMO_PASSWORD", "ANTHROPIC_API_KEY"]);
        let Err(why) = &options.agent else { panic!("no agent before one is resolved") };
        assert!(why.contains("no agent is configured") && why.contains("add an [agent] table"), "{why}");
        let config = saffron_agent::AgentConfig {
            provider: Some("anthropic".into()),
            model: Some("m".into()),
            base_url: Some("http://127.0.0.1:9".into()),
            ..saffron_agent::AgentConfig::default()
        };
        resolve_agent(Some(&config), &mut options, None);
        assert!(options.agent.is_ok());
        assert_eq!(options.secret_names, ["DEMO_PASSWORD"]);
        resolve_agent(Some(&saffron_agent::AgentConfig { model: None, ..config }), &mut options, None);
        assert!(
            options.agent.as_ref().is_err_and(|why| why.contains("no model")),
            "{:?}",
            options.agent.as_ref().err()
        );
    }
}
