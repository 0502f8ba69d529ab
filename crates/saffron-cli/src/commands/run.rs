//! `saffron run` and `saffron demo`: replay recordings in headless Chromium and report a
//! verdict per scenario.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use saffron_browser::BrowserConfig;
use saffron_runner::{RunOptions, ScenarioResult, Selection, TagExpression, Verdict};

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
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
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
    RunOptions { base_url: String::new(), browser: BrowserConfig::default(), workers: 1, env: Arc::new(lookup) }
}

struct Plan {
    root: PathBuf,
    selection: Selection,
    options: RunOptions,
    format: Format,
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let base_url = match args.base_url.or_else(|| std::env::var("SAFFRON_BASE_URL").ok()) {
        Some(url) => url,
        None => bail!("no base URL: pass --base-url URL or set SAFFRON_BASE_URL"),
    };
    let tags = args.tags.as_deref().map(TagExpression::parse).transpose()?;
    let mut options = env_lookup(&root, Vec::new());
    options.base_url = base_url;
    options.workers = args.workers;
    options.browser.headless = !args.headed;
    execute(Plan { root, selection: Selection { targets: args.targets, tags }, options, format: args.format })
}

fn execute(plan: Plan) -> Result<ExitCode> {
    let snapshot = project::load_index(&plan.root);
    let executions = saffron_runner::plan(&snapshot, &plan.selection);
    if executions.is_empty() {
        bail!("no scenario matches the selection");
    }
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the runtime")?;
    let started = std::time::Instant::now();
    let results = runtime.block_on(saffron_runner::run(executions, &plan.options));
    print(&results, plan.format)?;
    report(&plan.root, &plan.options.base_url, started, &results)?;
    Ok(exit_code(&results))
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
