//! `saffron run` and `saffron demo`: replay recordings in headless Chromium and report a
//! verdict per scenario.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use saffron_browser::BrowserConfig;
use saffron_runner::{RunOptions, ScenarioResult, Selection, TagExpression, Verdict, hooks};

use crate::project;

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
    /// The application's base URL (default: $SAFFRON_BASE_URL).
    #[arg(long)]
    base_url: Option<String>,
    /// Show the browser window.
    #[arg(long)]
    headed: bool,
    /// Run shard I of N (`--shard 2/3`), for splitting a suite across CI machines.
    #[arg(long)]
    shard: Option<String>,
    /// Skip the setup and teardown hooks of saffron.toml.
    #[arg(long)]
    no_hooks: bool,
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

/// The project's saffron.toml, or the defaults when there is none.
fn load_config(root: &Path) -> Result<saffron_runner::config::Config> {
    let path = root.join("saffron.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            saffron_runner::config::Config::parse(&text).map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Default::default()),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// `{env:NAME}` values: the environment first, then the project's `.env`.
fn env_lookup(root: &Path, overrides: Vec<(String, String)>) -> saffron_runner::RunOptions {
    // A `.env` that cannot be read or parsed adds nothing; the real environment still applies.
    let dotenv: Vec<(String, String)> = dotenvy::from_path_iter(root.join(".env"))
        .map(|entries| entries.filter_map(Result::ok).collect())
        .unwrap_or_default();
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
        timeouts: saffron_runner::config::Timeouts::default(),
        browser: BrowserConfig::default(),
        workers: 1,
        env: Arc::new(lookup),
    }
}

struct Plan {
    root: PathBuf,
    selection: Selection,
    options: RunOptions,
    format: Format,
    shard: Option<(usize, usize)>,
    hooks: Option<saffron_runner::config::Hooks>,
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let config = load_config(&root)?;
    let base_url = match args.base_url.or_else(|| std::env::var("SAFFRON_BASE_URL").ok()).or(config.base_url.clone()) {
        Some(url) => url,
        None => bail!("no base URL: pass --base-url URL, set SAFFRON_BASE_URL, or set base_url in saffron.toml"),
    };
    let tags = args.tags.as_deref().map(TagExpression::parse).transpose()?;
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    let mut options = env_lookup(&root, Vec::new());
    options.base_url = base_url;
    options.workers = args.workers;
    options.browser.headless = config.browser.headless && !args.headed;
    if !config.browser.path.trim().is_empty() {
        options.browser.executable = Some(root.join(config.browser.path.trim()));
    }
    options.timeouts = config.timeouts.clone();
    let hooks = (!args.no_hooks).then(|| config.hooks.clone());
    execute(Plan {
        root,
        selection: Selection { targets: args.targets, tags },
        options,
        format: args.format,
        shard,
        hooks,
    })
}

fn execute(plan: Plan) -> Result<ExitCode> {
    let snapshot = project::load_index(&plan.root);
    let mut executions = saffron_runner::plan(&snapshot, &plan.selection);
    if let Some((index, count)) = plan.shard {
        // The plan's order is the same on every machine, so shards never overlap.
        executions =
            executions.into_iter().enumerate().filter(|(n, _)| n % count == index - 1).map(|(_, e)| e).collect();
    }
    if executions.is_empty() {
        bail!("no scenario matches the selection");
    }
    let hooks = plan.hooks.clone().unwrap_or_default();
    let hook_timeout = Duration::from_millis(hooks.timeout_ms);
    let setup = hooks::run_hooks(&hooks.setup.list(), &plan.root, &plan.options.base_url, hook_timeout, true);
    if let Some(failed) = setup.iter().find(|run| !run.succeeded()) {
        let teardown =
            hooks::run_hooks(&hooks.teardown.list(), &plan.root, &plan.options.base_url, hook_timeout, false);
        report_teardown(&teardown);
        eprintln!(
            "saffron: setup failed, no scenario was run: `{}` {}",
            failed.command,
            failed.error.clone().unwrap_or_else(|| format!("exited with {:?}", failed.exit_code))
        );
        return Ok(ExitCode::from(2));
    }
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the runtime")?;
    let started = std::time::Instant::now();
    let results = runtime.block_on(saffron_runner::run(executions, &plan.options));
    let teardown = hooks::run_hooks(&hooks.teardown.list(), &plan.root, &plan.options.base_url, hook_timeout, false);
    print(&results, plan.format)?;
    report(&plan.root, &plan.options.base_url, started, &results)?;
    let teardown_failed = report_teardown(&teardown);
    let code = exit_code(&results);
    // A dirty environment is the next run's false red: a run that otherwise passed says so.
    if teardown_failed && code == ExitCode::SUCCESS {
        eprintln!("saffron: every scenario passed, but teardown failed");
        return Ok(ExitCode::from(2));
    }
    Ok(code)
}

/// Prints failed teardown commands; true when any failed.
fn report_teardown(runs: &[hooks::HookRun]) -> bool {
    let mut failed = false;
    for run in runs.iter().filter(|run| !run.succeeded()) {
        failed = true;
        eprintln!(
            "saffron: teardown `{}` failed: {}",
            run.command,
            run.error.clone().unwrap_or_else(|| format!("exited with {:?}", run.exit_code))
        );
    }
    failed
}

/// Writes `.saffron/reports/{latest.json, report.md, junit.xml, report.html}`.
fn report(root: &Path, base_url: &str, started: std::time::Instant, results: &[ScenarioResult]) -> Result<()> {
    let report = saffron_runner::RunReport::new(base_url, started.elapsed().as_millis() as u64, results.to_vec());
    let written = saffron_runner::write_reports(root, &report).context("cannot write the reports")?;
    let names: Vec<String> =
        written.iter().map(|path| path.strip_prefix(root).unwrap_or(path).display().to_string()).collect();
    eprintln!("reports: {}", names.join(", "));
    Ok(())
}

fn exit_code(results: &[ScenarioResult]) -> ExitCode {
    if results.iter().any(|r| matches!(r.verdict, Verdict::Blocked { .. })) {
        ExitCode::from(2)
    } else if results.iter().all(ScenarioResult::is_green) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn print(results: &[ScenarioResult], format: Format) -> Result<()> {
    if let Format::Json = format {
        println!("{}", serde_json::to_string_pretty(results)?);
        return Ok(());
    }
    for result in results {
        let place = format!("{}:{}", result.file, result.line);
        match &result.verdict {
            Verdict::Green => println!("✓ green    {place}  {} ({} ms)", result.name, result.duration_ms),
            Verdict::Red { step, step_text, message } => {
                println!("✗ red      {place}  {} ({} ms)", result.name, result.duration_ms);
                match (step, step_text) {
                    (Some(step), Some(text)) => println!("    step {step} \"{text}\": {message}"),
                    _ => println!("    {message}"),
                }
                if let Some(url) = &result.url {
                    println!("    page: {url}");
                }
            }
            Verdict::Blocked { cause } => println!("! blocked  {place}  {}: {cause}", result.name),
        }
        for drift in &result.drift {
            println!("    drift: {drift}");
        }
    }
    let count = |f: fn(&Verdict) -> bool| results.iter().filter(|r| f(&r.verdict)).count();
    eprintln!(
        "{} scenario(s): {} green, {} red, {} blocked",
        results.len(),
        count(|v| matches!(v, Verdict::Green)),
        count(|v| matches!(v, Verdict::Red { .. })),
        count(|v| matches!(v, Verdict::Blocked { .. }))
    );
    Ok(())
}

#[derive(Args)]
pub struct DemoArgs {
    /// Scenarios replayed at once.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Show the browser window.
    #[arg(long)]
    headed: bool,
}

/// Starts the demo shop and replays the example project (`features/`, `@wip` left out) against it.
pub fn demo(args: DemoArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the runtime")?;
    let config = saffron_demo::DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(saffron_demo::DemoServer::start(config)).context("cannot start the demo app")?;
    eprintln!("demo app on {}", server.url());
    // The demo account's password reaches the recordings' {env:DEMO_PASSWORD} in memory only.
    let mut options = env_lookup(&root, vec![("DEMO_PASSWORD".to_string(), password)]);
    options.base_url = server.url();
    options.workers = args.workers;
    options.browser.headless = !args.headed;
    options.browser.default_timeout = Duration::from_secs(5);
    let selection = Selection { targets: vec!["features".to_string()], tags: Some(TagExpression::parse("not @wip")?) };
    let snapshot = project::load_index(&root);
    let executions = saffron_runner::plan(&snapshot, &selection);
    let started = std::time::Instant::now();
    let results = runtime.block_on(saffron_runner::run(executions, &options));
    let _ = runtime.block_on(server.shutdown());
    print(&results, Format::Text)?;
    report(&root, &options.base_url, started, &results)?;
    Ok(exit_code(&results))
}
