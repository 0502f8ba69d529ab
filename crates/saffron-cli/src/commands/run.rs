//! `saffron run` and `saffron demo`: replay recordings in headless Chromium and report a
//! verdict per scenario.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use saffron_runner::history;
use saffron_runner::hooks::{HookRun, Interrupt};
use saffron_runner::session::options_with_env;
use saffron_runner::{
    Execution, RunOptions, RunReport, RunRequest, ScenarioResult, Selection, Session, SessionError, TagExpression,
    Verdict, VerdictCounts,
};

use saffron_recording::Masker;

use super::Format;
use crate::project;
use crate::terminal::{err, escape_controls, out};

#[derive(Args)]
pub struct RunArgs {
    /// Feature files or folders, or `FILE:LINE` for one scenario (default: the whole project).
    targets: Vec<String>,
    /// A tag expression, e.g. `@smoke and not @wip`.
    #[arg(long)]
    tags: Option<String>,
    /// Scenarios replayed at once (they share one browser).
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Scenarios the agent records at once, each in its own browser context (default: `[agent]
    /// workers` in saffron.toml, else 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    agent_workers: Option<u16>,
    /// The application's base URL (default: $SAFFRON_BASE_URL).
    #[arg(long)]
    base_url: Option<String>,
    /// A service's base URL for this run, over `[api.services.NAME] base_url` (repeatable).
    #[arg(long = "api-url", value_name = "NAME=URL", value_parser = parse_api_url)]
    api_urls: Vec<(String, String)>,
    /// Emulate a device in every browser context: its viewport, scale, user agent and touch
    /// screen ("iPhone 15", "Pixel 7", ...; default: `[browser] device` in saffron.toml).
    #[arg(long, value_name = "NAME")]
    device: Option<String>,
    /// Replay in this browser: chromium or firefox (default: `[browser] engines`, else chromium).
    /// Repeat it for a matrix: the browsers run one after the other, Chromium first; Firefox
    /// replays only (it never records or repairs).
    #[arg(long = "browser", value_name = "ENGINE", value_parser = parse_engine)]
    browsers: Vec<saffron_browser::Engine>,
    /// Show the browser window.
    #[arg(long)]
    headed: bool,
    /// Replay in a browser that runs already, over its DevTools endpoint (ws://HOST:PORT/devtools/browser/ID,
    /// or http://HOST:PORT), instead of launching Chromium (default: `[browser] url` in saffron.toml).
    #[arg(long, value_name = "URL")]
    browser_url: Option<String>,
    /// Run shard I of N (`--shard 2/3`), for splitting a suite across CI machines.
    #[arg(long)]
    shard: Option<String>,
    /// Skip the setup and teardown hooks of saffron.toml.
    #[arg(long)]
    no_hooks: bool,
    /// Fail (exit 1) when a scenario passed only by replaying a proposal pending review (yellow).
    #[arg(long)]
    strict: bool,
    /// For each scenario that passed through drifted signals, file a proposal that updates them
    /// to what the page has now, at zero tokens (default: `[run] refresh_drift` in saffron.toml).
    #[arg(long)]
    refresh_drift: bool,
    /// Run a red scenario again from the start, in a fresh context, up to N times before any
    /// repair is tried; one that passes on a retry is flaky (default: `[run] retries`).
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// Keep a trace of each scenario for `saffron trace`: retain-on-failure (a scenario that did
    /// not pass plainly), on (every scenario, with a picture after each action) or off
    /// (default: `[trace] mode`, else retain-on-failure).
    #[arg(long, value_name = "MODE", value_parser = |s: &str| s.parse::<saffron_runner::trace::TraceMode>())]
    trace: Option<saffron_runner::trace::TraceMode>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// `I/N` with 1 ≤ I ≤ N.
fn parse_shard(text: &str) -> Result<(usize, usize)> {
    let parsed = text
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse::<usize>().ok()?, n.trim().parse::<usize>().ok()?)));
    match parsed {
        Some((index, count)) if index >= 1 && index <= count => Ok((index, count)),
        _ => bail!("--shard takes I/N with 1 <= I <= N, e.g. --shard 2/3 (got {text:?})"),
    }
}

/// A target as the plan reads it: relative to the project root. An absolute path inside the
/// root (`saffron author --record` passes one, a shell's completion may) is made relative; a
/// `:LINE` after it is kept.
fn relative_target(root: &std::path::Path, target: &str) -> String {
    let (path, line) = match target.rsplit_once(':') {
        Some((path, line)) if !line.is_empty() && line.bytes().all(|byte| byte.is_ascii_digit()) => (path, Some(line)),
        _ => (target, None),
    };
    let Ok(inside) = std::path::Path::new(path).strip_prefix(root) else { return target.to_owned() };
    let relative = inside.to_string_lossy().replace('\\', "/");
    match line {
        Some(line) => format!("{relative}:{line}"),
        None => relative,
    }
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    let request = RunRequest {
        targets: args.targets.iter().map(|target| relative_target(&root, target)).collect(),
        tags: args.tags.as_deref().map(TagExpression::parse).transpose()?,
        workers: args.workers,
        base_url: args.base_url,
        headed: args.headed,
        shard,
        hooks: !args.no_hooks,
        browser_url: args.browser_url,
        agent_workers: args.agent_workers.map(usize::from),
        refresh_drift: args.refresh_drift,
        retries: args.retries,
        trace: args.trace,
        api_urls: args.api_urls,
        device: args.device,
        browsers: args.browsers,
    };
    // An unreadable recording is named here; its scenario's verdict is red.
    let (snapshot, mut problems) = project::load_index(&root);
    // Unknown keys are warnings; an invalid file is the session's error (exit 2) below.
    problems.extend(project::config_problems(&root).into_iter().filter(|problem| !problem.is_error()));
    project::report(&problems)?;
    let selected = !request.targets.is_empty() || request.tags.is_some() || request.shard.is_some();
    // Said before anything else is asked for (a base URL): a project with no scenario at all.
    if snapshot.scenarios().is_empty() {
        return Ok(no_scenario(&root, &snapshot, selected));
    }
    let mut session = match Session::prepare(&root, &snapshot, request) {
        Err(saffron_runner::SessionError::NoScenario) => return Ok(no_scenario(&root, &snapshot, selected)),
        prepared => prepared?,
    };
    // The agent records what needs recording and repairs a replay that fails on a changed
    // interface. `[agent]` is checked only when a scenario needs recording or it is configured:
    // a replay-only run never stops over it (without an agent, a failed replay is red).
    let config = saffron_runner::session::load_config(&root)?;
    if config.agent.is_some() || session.executions.iter().any(|execution| execution.needs_recording) {
        let project_root = root.clone();
        let external = move |agent: saffron_agent::ExternalAgent| {
            Arc::new(saffron_mcp::ExternalDriver::new(agent).with_working_dir(project_root.clone()))
                as Arc<dyn saffron_agent::AgentDriver>
        };
        saffron_runner::session::resolve_agent(config.agent.as_ref(), &mut session.options, Some(&external));
    }
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the runtime")?;
    // A person who watches the browser may take it from the agent, and give it back: in
    // Chromium, the only browser an agent works in.
    let records_in_chromium = session.engines.contains(&saffron_browser::Engine::Chromium);
    if !session.options.browser.headless && session.options.agent.is_ok() && records_in_chromium {
        let takeover = saffron_runner::takeover::Takeover::new();
        session.options.takeover = Some(takeover.clone());
        offer_takeover(&runtime, takeover);
    }
    // From here on, Ctrl-C or SIGTERM interrupts the run: a setup command is stopped with its
    // process group, the replay ends, and teardown still runs.
    let interrupt = forward_signals(&runtime);
    let setup = match session.setup(&interrupt) {
        Ok(runs) => runs,
        Err((error, runs)) => {
            report_hook_failures(&runs);
            err!("saffron: {error}");
            let code = if matches!(error, SessionError::SetupInterrupted) { 130 } else { 2 };
            return Ok(ExitCode::from(code));
        }
    };
    let started = std::time::Instant::now();
    let replan = || project::load_index(&root).0;
    let in_browsers = replay_in_browsers(
        session.executions.clone(),
        &session.engines,
        |engine| session.options_for(engine),
        || session.replanned(&replan()),
    );
    let replayed = runtime.block_on(until_interrupted(&interrupt, in_browsers));
    // An interrupted run's browser is released with the runtime's tasks: each of its processes
    // ended and its profile folder removed, before the teardown hooks run.
    drop(runtime);
    let teardown = session.teardown();
    let Some(results) = replayed else {
        // What the setup hooks made is cleaned up above.
        report_hook_failures(&teardown);
        err!("saffron: interrupted; the teardown hooks ran, no report was written");
        return Ok(ExitCode::from(130));
    };
    let masker = session.masker();
    let hooks: Vec<HookRun> = setup.into_iter().chain(teardown.iter().cloned()).collect();
    let mut report =
        RunReport::new(&session.options.base_url, started.elapsed().as_millis() as u64, results).with_hooks(hooks);
    // Named in the report, so that `saffron export` names the shard's bundle after it.
    report.shard = shard.map(|(index, total)| saffron_runner::ShardOf { index, total });
    print(&report, args.format, &masker)?;
    write_reports(&session.options.artifacts, &report, session.options.browser.engine, &masker)?;
    let teardown_failed = report_hook_failures(&teardown);
    let code = exit_code(report.counts, args.strict);
    // A dirty environment is the next run's false red: a run that otherwise passed says so.
    if teardown_failed && code == ExitCode::SUCCESS {
        err!("saffron: every scenario passed, but teardown failed");
        return Ok(ExitCode::from(2));
    }
    Ok(code)
}

/// A run with nothing to run is not a pass: says where it looked and what it found (the project
/// root it took, its feature files and scenarios), and exits 2, as Playwright's "No tests found".
fn no_scenario(root: &std::path::Path, snapshot: &saffron_index::Snapshot, selected: bool) -> ExitCode {
    let mut files: Vec<String> = snapshot.files().map(|file| file.source.path.display().to_string()).collect();
    files.sort();
    let scenarios = snapshot.scenarios().len();
    let why = if selected { "no scenario matches the selection" } else { "no scenario found" };
    err!("saffron: {why}");
    err!(
        "  project root: {} (the nearest folder above the current one with a saffron.toml or a .saffron folder, \
         else the current folder)",
        root.display()
    );
    match files.len() {
        0 => err!("  it has no .feature or .saffron file (files ignored by .gitignore are left out)"),
        count => {
            let shown: Vec<&str> = files.iter().take(5).map(String::as_str).collect();
            let more = if count > 5 { format!(" and {} more", count - 5) } else { String::new() };
            err!("  it has {count} feature file(s) with {scenarios} scenario(s): {}{more}", shown.join(", "));
        }
    }
    let hint = if selected {
        "check the targets, --tags and --shard, or run `saffron status` to list the scenarios"
    } else {
        "write a feature under the project root (see `saffron init`), or run from the project's folder"
    };
    err!("  hint: {hint}");
    ExitCode::from(2)
}

/// Tells the person at the terminal how to take the browser from the agent: the bar Saffron
/// shows in the page, or Enter here (when standard input is a terminal). Says so whenever who
/// holds the browser changes.
fn offer_takeover(runtime: &tokio::runtime::Runtime, takeover: saffron_runner::takeover::Takeover) {
    use std::io::IsTerminal as _;
    let keyboard = std::io::stdin().is_terminal();
    let key = if keyboard { ", or press Enter here" } else { "" };
    err!("saffron: while the agent records, take the browser over with the Saffron bar in the page{key}");
    if keyboard {
        let toggled = takeover.clone();
        // A detached thread: a blocked read of the terminal must not keep the run from ending.
        let _ = std::thread::Builder::new().name("saffron-takeover-key".into()).spawn(move || {
            let mut line = String::new();
            while std::io::stdin().read_line(&mut line).is_ok_and(|read| read > 0) {
                line.clear();
                if toggled.leases().is_empty() {
                    err!("saffron: the agent is not working in a browser now");
                } else {
                    toggled.toggle();
                }
            }
        });
    }
    let mut changes = takeover.changes();
    runtime.spawn(async move {
        let mut held = false;
        while changes.changed().await.is_ok() {
            let now = takeover.leases().iter().any(saffron_runner::takeover::Lease::person_holds);
            if now != held {
                held = now;
                if held {
                    err!("saffron: you have the browser; the agent waits. Give it back with the bar in the page{key}");
                } else {
                    err!("saffron: the agent has the browser again; what you did is not recorded");
                }
            }
        }
    });
}

/// Prints the hook commands that failed; true when any did.
fn report_hook_failures(runs: &[HookRun]) -> bool {
    let mut failed = false;
    for run in runs.iter().filter(|run| !run.succeeded()) {
        failed = true;
        err!(
            "saffron: {} `{}` failed: {}",
            run.phase.name(),
            escape_controls(&run.command),
            run.error.clone().unwrap_or_else(|| format!("exited with {:?}", run.exit_code))
        );
    }
    failed
}

/// Appends the run to `history.jsonl`, then writes `.saffron/reports/{latest.json, report.md,
/// junit.xml, report.html}` with each scenario's recent verdicts (this run last).
fn write_reports(
    artifacts: &saffron_runner::RunFolder,
    report: &RunReport,
    engine: saffron_browser::Engine,
    masker: &Masker,
) -> Result<()> {
    let root = artifacts.root();
    let context = history::RunContext {
        commit: saffron_ci::git::head(root),
        branch: saffron_ci::git::branch(root),
        browser: engine.name().to_string(),
    };
    let lines = history::lines_of(report, &context, &saffron_recording::now_rfc3339(), masker);
    let mut report = report.clone();
    // The history is a convenience: a run whose reports are written is not failed by it.
    match history::append(root, &lines) {
        Ok(()) => {
            let summaries = history::summarize(&history::read(root), 10);
            for s in &report.scenarios {
                let browser = s.browser.as_deref().unwrap_or(engine.name());
                let summary = summaries.iter().find(|summary| {
                    (summary.file.as_str(), summary.line, summary.browser.as_str())
                        == (s.file.as_str(), s.line, browser)
                });
                if let Some(summary) = summary {
                    report.history.insert(s.history_key(), summary.strip.clone());
                }
            }
        }
        Err(error) => err!("warning: {} not written: {error}", history::HISTORY),
    }
    let written = saffron_runner::write_reports_in(artifacts, &report, masker).context("cannot write the reports")?;
    let names: Vec<String> =
        written.iter().map(|path| path.strip_prefix(root).unwrap_or(path).display().to_string()).collect();
    err!("reports: {}", names.join(", "));
    Ok(())
}

/// An [`Interrupt`] that Ctrl-C, SIGTERM (as CI sends on cancel) or SIGHUP (the terminal went
/// away) triggers. The handlers are installed before this returns, so a signal that arrives as
/// soon as the run announces itself is caught, never the default "die at once" (which would
/// skip the teardown hooks; the browser's watchdog would still end Chromium).
fn forward_signals(runtime: &tokio::runtime::Runtime) -> Interrupt {
    let interrupt = Interrupt::new();
    let trigger = interrupt.clone();
    let _entered = runtime.enter();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut interrupted), Ok(mut terminated), Ok(mut hung_up)) =
            (signal(SignalKind::interrupt()), signal(SignalKind::terminate()), signal(SignalKind::hangup()))
        {
            runtime.spawn(async move {
                tokio::select! {
                    _ = interrupted.recv() => {}
                    _ = terminated.recv() => {}
                    _ = hung_up.recv() => {}
                }
                trigger.trigger();
            });
        }
    }
    #[cfg(not(unix))]
    runtime.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            trigger.trigger();
        }
    });
    interrupt
}

/// `future`'s output, or `None` when the run was interrupted first.
async fn until_interrupted<T>(interrupt: &Interrupt, future: impl std::future::Future<Output = T>) -> Option<T> {
    tokio::select! {
        biased;
        () = interrupt.triggered() => None,
        output = future => Some(output),
    }
}

/// Replays with a progress bar on stderr (hidden when stderr is not a terminal).
/// Replays in each browser of the run, one after the other, in `engines`' order (Chromium
/// first). Each browser after the first replays the plan read again from disk, so that it
/// replays what the first recorded and the proposals it filed; its results are named after
/// it (`Search orders [firefox]`), which keeps each browser's apart in every report and in the
/// history.
async fn replay_in_browsers(
    executions: Vec<Execution>,
    engines: &[saffron_browser::Engine],
    options_for: impl Fn(saffron_browser::Engine) -> RunOptions,
    replan: impl Fn() -> Vec<Execution>,
) -> Vec<ScenarioResult> {
    let [only] = engines else {
        let mut results = Vec::new();
        for (index, engine) in engines.iter().enumerate() {
            let planned = if index == 0 { executions.clone() } else { replan() };
            err!("browser {} of {}: {engine}", index + 1, engines.len());
            for mut result in replay_with_progress(planned, &options_for(*engine)).await {
                result.name = format!("{} [{engine}]", result.name);
                result.browser = Some(engine.name().to_owned());
                results.push(result);
            }
        }
        return results;
    };
    replay_with_progress(executions, &options_for(*only)).await
}

async fn replay_with_progress(executions: Vec<Execution>, options: &RunOptions) -> Vec<ScenarioResult> {
    let count = executions.len();
    let workers = options.workers.max(1).min(count);
    let browser = match options.browser.url.as_deref().map(saffron_browser::Endpoint::parse) {
        Some(Ok(endpoint)) => format!(" in the browser at {endpoint}"),
        _ if options.browser.engine == saffron_browser::Engine::Firefox => " in Firefox".to_owned(),
        _ => String::new(),
    };
    let target = if options.base_url.is_empty() {
        let names: Vec<&str> = options.services.by_name.keys().map(String::as_str).collect();
        format!("the API services {}", names.join(", "))
    } else {
        options.base_url.clone()
    };
    err!("replaying {count} scenario(s) on {workers} worker(s) against {target}{browser}");
    let bar = indicatif::ProgressBar::new(count as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {wide_msg}") {
        bar.set_style(style);
    }
    let results = saffron_runner::run_with_progress(executions, options, |result| {
        bar.set_message(format!("{} {}", result.verdict.symbol(), escape_controls(&result.name)));
        bar.inc(1);
    })
    .await;
    bar.finish_and_clear();
    results
}

/// The run's exit status (see [`VerdictCounts::exit_status`]), saying so when it passed only
/// by replaying proposals.
fn exit_code(counts: VerdictCounts, strict: bool) -> ExitCode {
    let status = counts.exit_status(strict);
    if status == 0 && counts.yellow > 0 {
        err!(
            "saffron: passed, but only by replaying proposals pending review: `saffron status` lists them \
             (--strict fails the run)"
        );
    }
    ExitCode::from(status)
}

/// Prints the results: masked (a message may quote a page that shows a secret in any
/// spelling), then with control characters escaped (names and steps come from the user's
/// files, messages from the page; none may drive the terminal). Masking comes first, so an
/// escaped control character cannot hide a secret's spelling from the masker.
fn print(report: &RunReport, format: Format, masker: &Masker) -> Result<()> {
    {
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), "{}", render(&report.scenarios, format, masker)?);
    }
    err!("{} scenario(s): {}", report.scenarios.len(), report.counts);
    if let Some(line) = sessions_summary(&report.scenarios) {
        err!("{line}");
    }
    if report.counts.flaky > 0 {
        err!(
            "{} flaky: passed only on a retry (see above); a flaky test is a problem to fix, not a pass",
            report.counts.flaky
        );
    }
    if let Some(totals) = &report.agent {
        err!("agent: {}", escape_controls(&masker.mask(&totals.summary())));
    }
    Ok(())
}

/// How many of a red scenario's console errors the terminal shows.
const CONSOLE_ERRORS_SHOWN: usize = 3;

fn render(results: &[ScenarioResult], format: Format, masker: &Masker) -> Result<String> {
    use std::fmt::Write as _;
    let mut out = String::new();
    if let Format::Json = format {
        writeln!(out, "{}", masker.mask(&serde_json::to_string_pretty(results)?))?;
        return Ok(out);
    }
    macro_rules! say {
        ($($arg:tt)*) => { writeln!(out, "{}", escape_controls(&masker.mask(&format!($($arg)*)))) };
    }
    for result in results {
        let place = format!("{}:{}", result.file, result.line);
        match &result.verdict {
            Verdict::Green => say!("✓ green    {place}  {} ({} ms)", result.name, result.duration_ms)?,
            Verdict::Yellow { proposal } => {
                say!("~ yellow   {place}  {} ({} ms)", result.name, result.duration_ms)?;
                if result.agent.as_ref().is_some_and(|agent| agent.repaired_from_step.is_some()) {
                    say!("    repaired in this run and proven by a replay at zero tokens: review {proposal}")?;
                } else {
                    say!("    passed by replaying the pending proposal {proposal}: review it")?;
                }
            }
            Verdict::Red { step, step_text, message } => {
                say!("✗ red      {place}  {} ({} ms)", result.name, result.duration_ms)?;
                match (step, step_text) {
                    (Some(step), Some(text)) => say!("    step {step} \"{text}\": {message}")?,
                    _ => say!("    {message}")?,
                }
                // An @api scenario's evidence is its transcript; a browser's, the page.
                match (&result.transcript, &result.url) {
                    (Some(transcript), _) => say!("    transcript: {transcript}")?,
                    (None, Some(url)) => say!("    page: {url}")?,
                    (None, None) => {}
                }
                // The first few, shortened: the reports have them all.
                let errors = &result.console_errors;
                if !errors.is_empty() {
                    say!("    the page logged {} error(s) before the failure:", errors.len())?;
                    for error in errors.iter().take(CONSOLE_ERRORS_SHOWN) {
                        // An exception's first line; its stack is in the reports.
                        let first_line = error.lines().next().unwrap_or_default();
                        let shown: String = first_line.chars().take(200).collect();
                        let cut = if shown.len() < error.len() { "…" } else { "" };
                        say!("      {shown}{cut}")?;
                    }
                    if errors.len() > CONSOLE_ERRORS_SHOWN {
                        say!("      ({} more in the reports)", errors.len() - CONSOLE_ERRORS_SHOWN)?;
                    }
                }
            }
            Verdict::Blocked { cause } => say!("! blocked  {place}  {}: {cause}", result.name)?,
        }
        if result.flaky {
            say!("    flaky: passed on attempt {} of {}", result.retried.len() + 1, result.retried.len() + 1)?;
        }
        for attempt in &result.retried {
            say!("    retried: {attempt}")?;
        }
        for cleared in &result.cleared {
            say!("    {cleared}")?;
        }
        if let Some(session) = &result.session
            && let Some(stale) = &session.stale
        {
            say!("    session \"{}\": the kept one was stale ({stale}); signed in again", session.name)?;
        }
        for drift in &result.drift {
            say!("    drift: {drift}")?;
        }
        for line in result.agent.iter().flat_map(saffron_runner::AgentRun::lines) {
            say!("    {line}")?;
        }
    }
    for line in drift_summary(results) {
        say!("{line}")?;
    }
    Ok(out)
}

/// `sessions: signed in 2 times, restored 8 times` when scenarios start with a sign-in
/// (`@session`, `[session] steps`).
fn sessions_summary(results: &[ScenarioResult]) -> Option<String> {
    let sessions: Vec<&saffron_runner::SessionUse> =
        results.iter().filter_map(|result| result.session.as_ref()).collect();
    if sessions.is_empty() {
        return None;
    }
    let restored = sessions.iter().filter(|session| session.restored).count();
    let signed_in = sessions.len() - restored;
    Some(format!("sessions: signed in {signed_in} time(s), restored {restored} time(s)"))
}

/// Distinct drift changes the summary lists at most.
const DRIFT_SUMMARY_SHOWN: usize = 20;

/// The run's drift, each change once with the scenarios it was seen in, when changes repeat:
/// a label renamed on the sign-in page drifts in every scenario that signs in, and the lines
/// above then say the same thing dozens of times.
fn drift_summary(results: &[ScenarioResult]) -> Vec<String> {
    let mut scenarios_by_change: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut lines = 0;
    for result in results {
        let mut seen = std::collections::BTreeSet::new();
        for line in &result.drift {
            lines += 1;
            let change = drift_change(line);
            if seen.insert(change) {
                *scenarios_by_change.entry(change).or_default() += 1;
            }
        }
    }
    if scenarios_by_change.len() == lines {
        return Vec::new();
    }
    let mut changes: Vec<(&str, usize)> = scenarios_by_change.into_iter().collect();
    changes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut summary = vec![format!("drift: {} change(s) in {lines} line(s) above, each once:", changes.len())];
    for (change, scenarios) in changes.iter().take(DRIFT_SUMMARY_SHOWN) {
        summary.push(format!("    {change} (in {scenarios} scenario(s))"));
    }
    if changes.len() > DRIFT_SUMMARY_SHOWN {
        summary.push(format!("    ({} more, in the lines above)", changes.len() - DRIFT_SUMMARY_SHOWN));
    }
    summary
}

/// What changed, without the step and action it was seen in: the part of ``step 2 `fill
/// textbox "Email" with "…"`: testId "email" → none`` after the action.
fn drift_change(line: &str) -> &str {
    line.strip_prefix("step ")
        .and_then(|rest| rest.split_once(" `"))
        .and_then(|(_, rest)| rest.split_once("`: "))
        .map_or(line, |(_, change)| change)
}

#[derive(Args)]
pub struct DemoArgs {
    /// Scenarios replayed at once.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Run a red scenario again from the start up to N times; one that passes on a retry is flaky.
    #[arg(long, value_name = "N", default_value_t = 0)]
    retries: u32,
    /// Keep a trace of each scenario for `saffron trace`: retain-on-failure, on or off.
    #[arg(long, value_name = "MODE", default_value = "retain-on-failure", value_parser = |s: &str| s.parse::<saffron_runner::trace::TraceMode>())]
    trace: saffron_runner::trace::TraceMode,
    /// Show the browser window.
    #[arg(long)]
    headed: bool,
    /// Emulate a device in every browser context ("iPhone 15", "Pixel 7", ...): the example's
    /// desktop recordings replay on it, and fail where the shop's page really differs.
    #[arg(long, value_name = "NAME")]
    device: Option<String>,
    /// Replay in this browser: chromium (the default) or firefox. Repeat it for a matrix, run
    /// one browser after the other, Chromium first.
    #[arg(long = "browser", value_name = "ENGINE", value_parser = parse_engine)]
    browsers: Vec<saffron_browser::Engine>,
    /// Turn on UI drift in the demo app (repeatable): renamed-label, removed-test-id,
    /// moved-element, restyled-button (survived through a lower locator tier); relocated-save,
    /// confirm-step (no fallback survives them: they need a heal); renamed-api-field (POST
    /// /api/orders reads `count`: the @api scenario needs a repair).
    #[arg(long, value_name = "SWITCH", value_parser = |s: &str| s.parse::<saffron_demo::Drift>())]
    drift: Vec<saffron_demo::Drift>,
    /// Turn on a runtime fault (repeatable): server-error, latency, interstitial, session-expiry,
    /// flaky-once (the first sign-in page answers 503, once: with --retries, one scenario is flaky).
    #[arg(long, value_name = "SWITCH", value_parser = |s: &str| s.parse::<saffron_demo::Fault>())]
    fault: Vec<saffron_demo::Fault>,
    /// Turn on a real defect (repeatable): wrong-total, missing-confirmation, save-fails.
    #[arg(long, value_name = "SWITCH", value_parser = |s: &str| s.parse::<saffron_demo::Defect>())]
    defect: Vec<saffron_demo::Defect>,
    /// Only serve the demo app (until Ctrl-C), to explore it or run `saffron run` against it.
    #[arg(long)]
    serve: bool,
    /// The port to serve on with --serve (default: a free one).
    #[arg(long, default_value_t = 0, requires = "serve")]
    port: u16,
}

/// Starts the demo shop and replays the example project (`features/`, `@wip` left out) against
/// it: the project here when it is the example (this repository), else the example embedded in
/// the binary, written to a folder of its own that the demo names (a project of the user's own
/// is never replayed against the shop).
pub fn demo(args: DemoArgs) -> Result<ExitCode> {
    let mut root = project::find_root()?;
    let device = args.device.as_deref().map(saffron_browser::device).transpose()?;
    let selection = Selection { targets: vec!["features".to_string()], tags: Some(TagExpression::parse("not @wip")?) };
    if !args.serve && !crate::example::is_at(&root) {
        let folder = crate::example::default_folder();
        crate::example::write_to(&folder)?;
        err!(
            "saffron: {} is not the demo's example project; the example is at {} (open its features/ and .saffron/)",
            root.display(),
            folder.display()
        );
        root = folder;
    }
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the runtime")?;
    let config = saffron_demo::DemoConfig {
        drift: args.drift.into_iter().collect(),
        faults: args.fault.into_iter().collect(),
        defects: args.defect.into_iter().collect(),
        ..saffron_demo::DemoConfig::default()
    };
    let password = config.password.clone();
    let later_config = config.clone();
    let server = runtime
        .block_on(saffron_demo::DemoServer::start_on_port(config, args.port))
        .context("cannot start the demo app")?;
    err!("demo app on {}", server.url());
    if args.serve {
        out!("{}", server.url());
        err!("sign in as {} with DEMO_PASSWORD={password}; Ctrl-C stops it", saffron_demo::DEMO_EMAIL);
        let interrupt = forward_signals(&runtime);
        let _ = runtime.block_on(until_interrupted(&interrupt, std::future::pending::<()>()));
        let _ = runtime.block_on(server.shutdown());
        return Ok(ExitCode::SUCCESS);
    }
    // The demo account's password reaches the recordings' {env:DEMO_PASSWORD} in memory only.
    let mut options = options_with_env(&root, vec![("DEMO_PASSWORD".to_string(), password)]);
    options.base_url = server.url();
    // The example's API scenario sends to the demo itself, through the `app` service.
    let config = saffron_runner::session::load_config(&root)?;
    options.services = std::sync::Arc::new(
        saffron_runner::Services::from_config(&root, &config.api, &[], &options.base_url)
            .map_err(|problem| anyhow::anyhow!("[api.services]: {problem}"))?,
    );
    options.transcript = config.api.transcript;
    options.signed_in = std::sync::Arc::new(saffron_runner::sign_in_once::SignedIn::new(config.session.steps.clone()));
    options.workers = args.workers;
    options.retries = args.retries;
    options.trace = args.trace;
    options.browser.headless = !args.headed;
    options.browser.default_timeout = Duration::from_secs(5);
    options.browser.device = device;
    let engines = saffron_runner::session::engines_of(&args.browsers, &config, None, device)?;
    // An unreadable recording is named here; its scenario's verdict is red.
    let (snapshot, problems) = project::load_index(&root);
    project::report(&problems)?;
    let executions = saffron_runner::plan(&snapshot, &selection);
    // The example's interruption handlers, as `saffron run` loads a project's.
    options.handlers =
        std::sync::Arc::new(saffron_runner::session::project_handlers(&root, &snapshot).map_err(anyhow::Error::msg)?);
    let masker = saffron_runner::masker_for(&executions, &options);
    let started = std::time::Instant::now();
    let interrupt = forward_signals(&runtime);
    // Each later browser of a matrix gets a shop of its own, as fresh as the first one's: the
    // scenarios change its orders.
    let mut later_shops = Vec::new();
    for engine in engines.iter().skip(1) {
        let shop = runtime
            .block_on(saffron_demo::DemoServer::start(later_config.clone()))
            .context("cannot start the demo app")?;
        err!("demo app for {engine} on {}", shop.url());
        later_shops.push((*engine, shop.url(), shop));
    }
    let options_for = |engine| {
        let mut options = options.clone();
        options.browser.engine = engine;
        if let Some((_, url, _)) = later_shops.iter().find(|(later, _, _)| *later == engine) {
            options.base_url = url.clone();
        }
        options
    };
    let replan = || saffron_runner::session::later_browser_plan(&project::load_index(&root).0, &selection);
    let in_browsers = replay_in_browsers(executions, &engines, options_for, replan);
    let replayed = runtime.block_on(until_interrupted(&interrupt, in_browsers));
    let _ = runtime.block_on(server.shutdown());
    for (_, _, shop) in later_shops {
        let _ = runtime.block_on(shop.shutdown());
    }
    // Releases an interrupted run's browser (see `run`).
    drop(runtime);
    let Some(results) = replayed else {
        err!("saffron: interrupted");
        return Ok(ExitCode::from(130));
    };
    let report = RunReport::new(&options.base_url, started.elapsed().as_millis() as u64, results);
    print(&report, Format::Text, &masker)?;
    write_reports(&options.artifacts, &report, options.browser.engine, &masker)?;
    Ok(exit_code(report.counts, false))
}

/// An engine of `--browser`.
fn parse_engine(name: &str) -> Result<saffron_browser::Engine, String> {
    saffron_browser::Engine::parse(name).ok_or_else(|| format!("`{name}`: the browsers are chromium and firefox"))
}

/// `NAME=URL` of `--api-url`.
fn parse_api_url(value: &str) -> Result<(String, String), String> {
    match value.split_once('=') {
        Some((name, url)) if !name.trim().is_empty() && !url.trim().is_empty() => {
            Ok((name.trim().to_owned(), url.trim().to_owned()))
        }
        _ => Err(format!("`{value}`: write NAME=URL, a service of [api.services] and its base URL")),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use saffron_recording::Secret;
    use saffron_runner::{AgentRun, AgentUsage};

    use super::*;

    #[test]
    fn an_absolute_target_inside_the_project_is_made_relative_with_its_line() {
        let root = std::path::Path::new("/work/shop");
        assert_eq!(relative_target(root, "/work/shop/features/export.saffron"), "features/export.saffron");
        assert_eq!(relative_target(root, "/work/shop/features/export.saffron:12"), "features/export.saffron:12");
        assert_eq!(relative_target(root, "features/x.feature:3"), "features/x.feature:3");
        assert_eq!(relative_target(root, "/elsewhere/x.feature"), "/elsewhere/x.feature");
    }

    fn result(name: &str, agent: Option<AgentRun>) -> ScenarioResult {
        ScenarioResult {
            duration_ms: 900,
            agent,
            ..ScenarioResult::new("features/orders.saffron", 22, name, Verdict::Green)
        }
    }

    fn recorded() -> AgentRun {
        AgentRun {
            agent: "openai gpt-test".into(),
            usage: AgentUsage {
                input_tokens: 950,
                output_tokens: 12,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
                calls: 1,
                model_time_ms: 40,
            },
            cost_usd: None,
            cost_source: None,
            seeded_steps: 3,
            steps: 5,
            sessions: 1,
            fragile_targets: vec!["step 4 `click css \"#help\"`: css only".into()],
            saved: Some(".saffron/cache/orders/export-the-orders.json".into()),
            artifacts: None,
            proposal: None,
            repaired_from_step: None,
        }
    }

    #[test]
    fn a_recorded_scenario_says_what_the_agent_used_and_a_replayed_one_nothing_more() {
        let masker: Masker = [&Secret { name: "KEY".into(), value: "gpt-test".into() }].into_iter().collect();
        let text =
            render(&[result("Export the orders", Some(recorded())), result("Replayed", None)], Format::Text, &masker)
                .expect("renders");
        assert_eq!(
            text,
            "✓ green    features/orders.saffron:22  Export the orders (900 ms)\n\
             \x20   recorded by openai {env:KEY}: 950 tokens in, 12 out, 1 call, 0.0 s; cost not reported; \
             3 of 5 steps seeded; 1 session\n\
             \x20   saved .saffron/cache/orders/export-the-orders.json\n\
             \x20   fragile target: step 4 `click css \"#help\"`: css only\n\
             ✓ green    features/orders.saffron:22  Replayed (900 ms)\n"
        );
        let json = render(&[result("Export the orders", Some(recorded()))], Format::Json, &Masker::default())
            .expect("renders");
        assert!(json.contains("\"seededSteps\": 3"), "{json}");
    }

    #[test]
    fn repeated_drift_is_summed_up_once_per_change_with_its_scenarios() {
        let drifted = |name: &str, drift: &[&str]| ScenarioResult {
            drift: drift.iter().map(|line| (*line).to_owned()).collect(),
            ..result(name, None)
        };
        let email =
            r#"step 2 `fill textbox "Email" with "a@b.c"`: testId "email" → none (found by role textbox "Email")"#;
        let again = r#"step 3 `expect value of textbox "Email" to be "a@b.c"`: testId "email" → none (found by role textbox "Email")"#;
        let save = r##"step 5 `click button "Save"`: found by css "#save" (recorded: role button "Save")"##;
        let text = render(
            &[drifted("Sign in", &[email, again]), drifted("Save", &[email, save]), drifted("Clean", &[])],
            Format::Text,
            &Masker::default(),
        )
        .expect("renders");
        let summary: Vec<&str> = text.lines().skip_while(|line| !line.starts_with("drift: ")).collect();
        assert_eq!(
            summary,
            [
                "drift: 2 change(s) in 4 line(s) above, each once:",
                r#"    testId "email" → none (found by role textbox "Email") (in 2 scenario(s))"#,
                r##"    found by css "#save" (recorded: role button "Save") (in 1 scenario(s))"##,
            ]
        );
        // Nothing repeats: the lines above say it all.
        let single = render(&[drifted("Save", &[save])], Format::Text, &Masker::default()).expect("renders");
        assert!(!single.lines().any(|line| line.starts_with("drift: ")), "{single}");
    }

    #[test]
    fn agent_workers_is_a_positive_number() {
        let parse = |args: &[&str]| {
            crate::Cli::try_parse_from(["saffron", "run"].iter().chain(args)).map(|cli| match cli.command {
                crate::Command::Run(args) => args.agent_workers,
                _ => panic!("run"),
            })
        };
        assert_eq!(parse(&["--agent-workers", "3"]).expect("parses"), Some(3));
        assert_eq!(parse(&[]).expect("parses"), None);
        assert!(parse(&["--agent-workers", "0"]).is_err());
    }
}
