//! `run`: replays scenarios in headless Chromium, as `saffron run` does (the same
//! `saffron.toml`, hooks and reports), and answers with each scenario's verdict. Messages
//! arrive masked by the runner: a `{env:NAME}` value never reaches the model.

use std::fmt::Write as _;

use saffron_runner::hooks::{HookPhase, Interrupt};
use saffron_runner::{
    RunReport, RunRequest, ScenarioResult, Session, TagExpression, Verdict, VerdictCounts, line_target,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Render, ToolError};
use crate::project::{Project, display_path, project_path};

/// More workers than this gain nothing on one machine's browser and starve the app.
/// The most retries a client may ask for: each is a whole new run of a scenario.
const MAX_RETRIES: u32 = 5;
const MAX_WORKERS: usize = 8;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunArgs {
    /// Feature files or folders relative to the project root, or `FILE:LINE` for one scenario
    /// or Examples row; empty or absent for the whole project.
    #[serde(default)]
    pub targets: Vec<String>,
    /// A Cucumber tag expression, e.g. `@smoke and not @wip`.
    #[serde(default)]
    pub tags: Option<String>,
    /// The application's base URL; default: $SAFFRON_BASE_URL, then `base_url` in saffron.toml.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Scenarios replayed at once (default 2, at most 8).
    #[serde(default)]
    pub workers: Option<usize>,
    /// A browser that runs already, replayed in instead of a launched Chromium: its DevTools
    /// endpoint (`ws://HOST:PORT/devtools/browser/ID` or `http://HOST:PORT`); default: `[browser]
    /// url` in saffron.toml.
    #[serde(default)]
    pub browser_url: Option<String>,
    /// File a zero-token proposal for each scenario that passed through drifted signals, which
    /// updates them to what the page has now (default: `[run] refresh_drift` in saffron.toml).
    #[serde(default)]
    pub refresh_drift: bool,
    /// Run a failed scenario again from the start up to this many times before any repair; one
    /// that passes on a retry is flaky (default: `[run] retries` in saffron.toml).
    #[serde(default)]
    pub retries: Option<u32>,
    /// Base URLs of `[api.services]` for this run, by service name, over saffron.toml's:
    /// `{"shop": "http://127.0.0.1:8080/api"}`.
    #[serde(default)]
    pub api_urls: std::collections::BTreeMap<String, String>,
    /// Emulate a device in every browser context: "iPhone 15", "Pixel 7", ... (default:
    /// `[browser] device` in saffron.toml, else a desktop window).
    #[serde(default)]
    pub device: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunOutput {
    #[serde(flatten)]
    pub counts: VerdictCounts,
    pub duration_ms: u64,
    pub scenarios: Vec<ScenarioVerdict>,
    /// The reports written, relative to the project root.
    pub reports: Vec<String>,
    /// Setup or teardown commands that failed.
    pub hook_failures: Vec<String>,
    /// What the recording agent used over the run (tokens, calls, model time, cost, seeded
    /// steps), when it recorded anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioVerdict {
    pub file: String,
    pub line: u32,
    pub name: String,
    /// `green` (replayed as recorded), `yellow` (passed by replaying a proposal pending
    /// review), `red` (failed) or `blocked` (the runner could not do its job).
    pub verdict: String,
    /// For red: the failing step (1-based) and its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_text: Option<String>,
    /// What went wrong (red, blocked) or what waits for review (yellow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Targets found at a lower locator tier than recorded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<String>,
    pub duration_ms: u64,
    /// What the recording agent did for the scenario, one line each: usage and cost, seeded
    /// steps, what was saved, fragile targets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agent: Vec<String>,
    /// The traces kept of its attempts (a red one's by default), relative to the root: what
    /// each action did, the network, the console, the DOM at the failure. `saffron trace
    /// FILE:LINE` opens them for the user.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<String>,
}

impl From<&ScenarioResult> for ScenarioVerdict {
    fn from(result: &ScenarioResult) -> ScenarioVerdict {
        let (step, step_text, message) = match &result.verdict {
            Verdict::Green => (None, None, None),
            Verdict::Yellow { proposal } => {
                (None, None, Some(format!("passed by replaying the pending proposal {proposal}")))
            }
            Verdict::Red { step, step_text, message } => (*step, step_text.clone(), Some(message.clone())),
            Verdict::Blocked { cause } => (None, None, Some(cause.clone())),
        };
        ScenarioVerdict {
            file: result.file.clone(),
            line: result.line,
            name: result.name.clone(),
            verdict: result.verdict.name().to_string(),
            step,
            step_text,
            message,
            drift: result.drift.clone(),
            duration_ms: result.duration_ms,
            agent: result.agent.as_ref().map(saffron_runner::AgentRun::lines).unwrap_or_default(),
            traces: result.traces.clone(),
        }
    }
}

/// Plans the run: quick, and every mistake in the arguments is reported before a browser starts.
pub fn prepare(project: &Project, args: RunArgs) -> Result<Session, ToolError> {
    let tags =
        args.tags.as_deref().map(TagExpression::parse).transpose().map_err(|error| {
            ToolError::new(format!("invalid tag expression: {error}"), "e.g. `@smoke and not @wip`")
        })?;
    let targets = args.targets.iter().map(|target| checked_target(target)).collect::<Result<Vec<_>, _>>()?;
    let request = RunRequest {
        targets,
        tags,
        workers: args.workers.unwrap_or(2).clamp(1, MAX_WORKERS),
        base_url: args.base_url,
        headed: false,
        shard: None,
        hooks: true,
        browser_url: args.browser_url,
        agent_workers: None,
        refresh_drift: args.refresh_drift,
        retries: args.retries.map(|retries| retries.min(MAX_RETRIES)),
        trace: None,
        api_urls: args.api_urls.into_iter().collect(),
        device: args.device,
        browsers: Vec::new(),
    };
    let mut session = Session::prepare(project.root(), &project.snapshot(), request).map_err(|error| {
        let hint = match error {
            saffron_runner::SessionError::NoBaseUrl => "pass baseUrl, the address the application under test runs on",
            saffron_runner::SessionError::InvalidBaseUrl(_) => {
                "pass baseUrl as the application's http:// or https:// address, e.g. http://127.0.0.1:3000"
            }
            saffron_runner::SessionError::InvalidBrowserUrl(_) => {
                "pass browserUrl as the browser's DevTools address, ws://HOST:PORT/devtools/browser/ID or \
                 http://HOST:PORT, or leave it out to launch Chromium"
            }
            saffron_runner::SessionError::NoScenario => {
                "call list_scenarios to see the scenarios, then pass their files or FILE:LINE"
            }
            saffron_runner::SessionError::UnknownDevice(_) => "pass device as one of the names the error lists",
            saffron_runner::SessionError::Api(_) => {
                "apiUrls names services of [api.services] in saffron.toml (or app), each with an http:// or https:// URL"
            }
            _ => "fix saffron.toml, or ask the user to",
        };
        ToolError::new(error.to_string(), hint)
    })?;
    // This tool replays and never spends the project's model tokens: recording is `saffron run`'s.
    session.options.agent =
        Err("this tool only replays; record it with `saffron run` in a terminal (it uses the agent of [agent] in \
         saffron.toml)"
            .into());
    Ok(session)
}

/// A target as given by the client, checked to stay inside the project as every tool's paths
/// are (an empty one names nothing: it is refused, not taken for the whole project).
fn checked_target(target: &str) -> Result<String, ToolError> {
    let hint = "name a feature file or folder relative to the project root, or FILE:LINE (features/orders.saffron:12), \
                without `..`; leave targets out (or pass []) to run the whole project";
    if target.trim().is_empty() {
        return Err(ToolError::new("an empty target names no scenario", hint));
    }
    let (file, line) = line_target(target);
    let Some(path) = file.to_str().and_then(project_path) else {
        return Err(ToolError::new(format!("`{target}` is not a path inside the project"), hint));
    };
    Ok(match line {
        Some(line) => format!("{}:{line}", display_path(&path)),
        None => display_path(&path),
    })
}

/// Runs a planned session to the end: hooks, replay, reports. Blocking: it starts its own
/// runtime, so call it off the server's async thread.
pub fn execute(session: Session) -> Result<RunOutput, ToolError> {
    // The MCP server is not interrupted by signals of its own: a client cancels by closing.
    let setup = match session.setup(&Interrupt::new()) {
        Ok(runs) => runs,
        Err((error, runs)) => {
            let mut message = error.to_string();
            for failed in runs.iter().filter(|run| run.phase == HookPhase::Teardown && !run.succeeded()) {
                let _ = write!(message, "; teardown `{}` failed too", failed.command);
            }
            return Err(ToolError::new(message, "fix the setup command in saffron.toml [hooks], or ask the user to"));
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|error| {
        ToolError::new(format!("cannot start the replay: {error}"), "retry; the machine may be out of threads")
    })?;
    let started = std::time::Instant::now();
    let results = runtime.block_on(session.replay(|_| {}));
    let teardown = session.teardown();
    let report = RunReport::new(&session.options.base_url, started.elapsed().as_millis() as u64, results)
        .with_hooks(setup.into_iter().chain(teardown.iter().cloned()).collect());
    // The model sees nothing the reports would not show: both are masked with every secret
    // the run may have substituted, in every spelling.
    let masker = session.masker();
    let reports = match saffron_runner::write_reports_in(&session.options.artifacts, &report, &masker) {
        Ok(paths) => {
            paths.iter().map(|path| path.strip_prefix(&session.root).unwrap_or(path).display().to_string()).collect()
        }
        Err(error) => vec![format!("(the reports could not be written: {error})")],
    };
    Ok(RunOutput {
        counts: report.counts,
        duration_ms: report.duration_ms,
        // The runner masked every result's texts; the hook commands' errors come from elsewhere.
        scenarios: report
            .scenarios
            .iter()
            .map(ScenarioVerdict::from)
            .map(|mut verdict| {
                // The agent's lines name pages' elements, which may show a secret.
                verdict.agent = verdict.agent.iter().map(|line| masker.mask(line)).collect();
                verdict
            })
            .collect(),
        agent: report.agent.as_ref().map(|totals| masker.mask(&totals.summary())),
        reports,
        hook_failures: teardown
            .iter()
            .filter(|run| !run.succeeded())
            .map(|run| {
                format!(
                    "teardown `{}`: {}",
                    run.command,
                    run.error.clone().unwrap_or_else(|| format!("exited with {:?}", run.exit_code))
                )
            })
            .map(|failure| masker.mask(&failure))
            .collect(),
    })
}

impl Render for RunOutput {
    fn render(&self) -> String {
        let mut out = format!(
            "{} scenario(s) in {:.1} s: {}\n",
            self.scenarios.len(),
            self.duration_ms as f64 / 1000.0,
            self.counts
        );
        for scenario in &self.scenarios {
            let _ = writeln!(out, "{:<8} {}:{}  {}", scenario.verdict, scenario.file, scenario.line, scenario.name);
            if let (Some(step), Some(text)) = (scenario.step, &scenario.step_text) {
                let _ = writeln!(out, "    step {step} \"{text}\"");
            }
            if let Some(message) = &scenario.message {
                let _ = writeln!(out, "    {message}");
            }
            for drift in &scenario.drift {
                let _ = writeln!(out, "    drift: {drift}");
            }
            for line in &scenario.agent {
                let _ = writeln!(out, "    {line}");
            }
            if !scenario.traces.is_empty() {
                let _ = writeln!(
                    out,
                    "    trace: {} (`saffron trace {}:{}`)",
                    scenario.traces.join(", "),
                    scenario.file,
                    scenario.line
                );
            }
        }
        if let Some(agent) = &self.agent {
            let _ = writeln!(out, "agent: {agent}");
        }
        for failure in &self.hook_failures {
            let _ = writeln!(out, "{failure}");
        }
        if !self.reports.is_empty() {
            let _ = writeln!(out, "reports: {}", self.reports.join(", "));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_agent_used_reaches_the_client() {
        let agent = saffron_runner::AgentRun {
            agent: "anthropic claude-test".into(),
            usage: saffron_runner::AgentUsage { input_tokens: 950, output_tokens: 12, calls: 1, ..Default::default() },
            cost_usd: None,
            cost_source: None,
            seeded_steps: 2,
            steps: 4,
            sessions: 1,
            fragile_targets: Vec::new(),
            saved: Some(".saffron/cache/orders/export-the-orders.json".into()),
            artifacts: None,
            proposal: None,
            repaired_from_step: None,
        };
        let result = ScenarioResult {
            duration_ms: 900,
            agent: Some(agent),
            traces: vec![".saffron/artifacts/run-1/traces/orders--export-the-orders-26-recording.trace.json".into()],
            ..ScenarioResult::new("features/orders.saffron", 26, "Export the orders", Verdict::Green)
        };
        let report = RunReport::new("http://127.0.0.1:1", 1000, vec![result]);
        let output = RunOutput {
            counts: VerdictCounts { green: 1, ..VerdictCounts::default() },
            duration_ms: 1000,
            scenarios: report.scenarios.iter().map(ScenarioVerdict::from).collect(),
            reports: Vec::new(),
            hook_failures: Vec::new(),
            agent: report.agent.as_ref().map(saffron_runner::AgentTotals::summary),
        };
        let line = "recorded by anthropic claude-test: 950 tokens in, 12 out, 1 call, 0.0 s; cost not reported; \
                    2 of 4 steps seeded; 1 session";
        let json = serde_json::to_value(&output).expect("json");
        assert_eq!(json["scenarios"][0]["agent"][0], line);
        // The proof's trace is named, with the command that opens it.
        assert_eq!(
            json["scenarios"][0]["traces"][0],
            ".saffron/artifacts/run-1/traces/orders--export-the-orders-26-recording.trace.json"
        );
        assert!(output.render().contains("(`saffron trace features/orders.saffron:26`)"), "{}", output.render());
        assert!(
            json["agent"].as_str().is_some_and(|totals| totals.starts_with("1 scenario(s) recorded: 950 tokens in"))
        );
        let text = output.render();
        assert!(
            text.contains(&format!("    {line}\n    saved .saffron/cache/orders/export-the-orders.json\n")),
            "{text}"
        );
        assert!(text.contains("agent: 1 scenario(s) recorded"), "{text}");
        // A replayed scenario says nothing of an agent.
        let replayed = ScenarioResult { agent: None, ..report.scenarios[0].clone() };
        assert!(serde_json::to_value(ScenarioVerdict::from(&replayed)).expect("json").get("agent").is_none());
    }

    #[test]
    fn a_browser_url_that_is_not_a_devtools_endpoint_is_refused_with_a_hint() {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = Project::open(dir.path().to_path_buf());
        let args = RunArgs {
            base_url: Some("http://127.0.0.1:3000".into()),
            browser_url: Some("localhost:9222".into()),
            ..RunArgs::default()
        };
        let Err(error) = prepare(&project, args) else { panic!("an invalid browser URL was accepted") };
        assert!(error.message.starts_with("invalid browser URL:"), "{}", error.message);
        assert!(error.message.contains("http://localhost:9222"), "{}", error.message);
        assert!(error.hint.contains("browserUrl"), "{}", error.hint);
    }
}
