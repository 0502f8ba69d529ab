//! `saffron trace [FILE | FEATURE:LINE]`: the trace viewer for a trace file, or for a scenario of
//! the last run (every attempt it kept), written to `.saffron/reports/trace.html` and opened in
//! the browser. Without an argument: the first scenario of the last run that kept a trace.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context as _, Result, bail};
use clap::Args;
use saffron_recording::layout;
use saffron_runner::RunReport;
use saffron_runner::trace::{TRACE_FORMAT, Trace, viewer_html};

use crate::project;
use crate::terminal::{err, escape_controls, out};

/// Where the viewer page is written.
const VIEWER: &str = ".saffron/reports/trace.html";

#[derive(Args)]
pub struct TraceArgs {
    /// A trace file (`.saffron/artifacts/…/traces/….trace.json`), or FEATURE:LINE for that scenario's
    /// traces in the last run (default: the first scenario of the last run that has one).
    target: Option<String>,
    /// Write the viewer page and print its path, without opening a browser.
    #[arg(long)]
    no_open: bool,
}

pub fn run(args: TraceArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let files = match args.target.as_deref() {
        Some(target) if is_file_target(target) => vec![PathBuf::from(target)],
        Some(target) => scenario_traces(&root, Some(target))?,
        None => scenario_traces(&root, None)?,
    };
    let traces = files.iter().map(|file| read_trace(file)).collect::<Result<Vec<_>>>()?;
    let page = root.join(VIEWER);
    if let Some(folder) = page.parent() {
        std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    }
    saffron_recording::write_atomic(&page, viewer_html(&traces).as_bytes())
        .with_context(|| format!("cannot write {}", page.display()))?;
    let shown: Vec<String> = files.iter().map(|file| file.display().to_string()).collect();
    err!("trace: {}", escape_controls(&shown.join(", ")));
    out!("{}", page.display());
    if !args.no_open
        && let Err(why) = open_in_browser(&page)
    {
        err!("saffron: no browser could be opened ({why}); open the page above in one");
    }
    Ok(ExitCode::SUCCESS)
}

/// A path to a file rather than `FEATURE:LINE`.
fn is_file_target(target: &str) -> bool {
    let line_target =
        target.rsplit_once(':').is_some_and(|(_, line)| !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()));
    !line_target || Path::new(target).is_file()
}

/// The traces the last run kept of the scenario at `target`, or of the first scenario that kept
/// any.
fn scenario_traces(root: &Path, target: Option<&str>) -> Result<Vec<PathBuf>> {
    let latest = root.join(layout::LATEST_REPORT);
    let text = std::fs::read_to_string(&latest)
        .with_context(|| format!("{}: no last run to show (run `saffron run` first)", latest.display()))?;
    let report: RunReport =
        serde_json::from_str(&text).with_context(|| format!("{}: not a saffron run report", latest.display()))?;
    let scenario = match target {
        Some(target) => {
            let (file, line) = target.rsplit_once(':').unwrap_or((target, ""));
            let file = file.trim_start_matches("./").replace('\\', "/");
            let found = report.scenarios.iter().find(|s| s.file == file && s.line.to_string() == line);
            let Some(found) = found else {
                bail!("{target}: the last run has no scenario there (`saffron status` lists them)");
            };
            if found.traces.is_empty() {
                bail!(
                    "{target}: the last run kept no trace of it ({}); run it with `--trace on` to keep one",
                    found.verdict.name()
                );
            }
            found
        }
        None => match report.scenarios.iter().find(|s| !s.traces.is_empty()) {
            Some(found) => found,
            None => bail!(
                "the last run kept no trace (a scenario's is kept when it does not pass plainly); run with `--trace on` \
                 to keep every scenario's"
            ),
        },
    };
    Ok(scenario.traces.iter().map(|file| root.join(file)).collect())
}

/// A trace file, or why it is not one.
fn read_trace(file: &Path) -> Result<Trace> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|error| {
        anyhow::anyhow!("{}:{}:{}: not JSON: {error}", file.display(), error.line(), error.column())
    })?;
    match value.get("saffronTrace").and_then(serde_json::Value::as_u64) {
        None => bail!("{}: not a saffron trace (it has no `saffronTrace` format number)", file.display()),
        Some(format) if format > u64::from(TRACE_FORMAT) => bail!(
            "{}: a trace of format {format}, written by a later saffron (this one reads format {TRACE_FORMAT}); \
             update saffron",
            file.display()
        ),
        Some(_) => {}
    }
    serde_json::from_value(value).with_context(|| format!("{}: not a saffron trace", file.display()))
}

/// Opens `page` in the person's browser: `$BROWSER` when set, else the system's opener.
fn open_in_browser(page: &Path) -> Result<(), String> {
    if let Some(browser) = std::env::var_os("BROWSER").filter(|value| !value.is_empty()) {
        // A browser itself runs until it is closed: started, not waited for.
        return Command::new(&browser)
            .arg(page)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map(drop)
            .map_err(|error| format!("$BROWSER ({}): {error}", browser.to_string_lossy()));
    }
    let (program, leading): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("cmd", &["/C", "start", ""])
    } else {
        ("xdg-open", &[])
    };
    let status = Command::new(program)
        .args(leading)
        .arg(page)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|error| format!("{program}: {error}"))?;
    if status.success() { Ok(()) } else { Err(format!("{program} exited with {status}")) }
}
