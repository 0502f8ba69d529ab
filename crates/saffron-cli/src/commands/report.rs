//! `saffron report --merge DIR...`: the reports of a suite split across machines
//! (`saffron run --shard i/n`) merged into one set of the four reports, as if one machine had
//! run it all.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use saffron_recording::{Masker, layout};
use saffron_runner::{RunReport, merge_reports};

use crate::project;

#[derive(Args)]
pub struct ReportArgs {
    /// The shards' reports: each a project folder (with .saffron/reports/latest.json), a
    /// reports folder (with latest.json), or a latest.json file.
    #[arg(long, required = true, num_args = 1.., value_name = "DIR")]
    merge: Vec<PathBuf>,
    /// The project whose `.saffron/reports` receives the merged reports (default: this one).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Fail (exit 1) when a scenario passed only through a proposal pending review (yellow).
    #[arg(long)]
    strict: bool,
}

/// Where one shard's report is, and the project folder its screenshot paths are relative to.
struct ShardReport {
    latest: PathBuf,
    root: PathBuf,
}

fn locate(given: &Path) -> Result<ShardReport> {
    let candidates = [
        (given.to_path_buf(), given.parent().and_then(Path::parent).and_then(Path::parent)),
        (given.join(layout::LATEST_REPORT_FILE), given.parent().and_then(Path::parent)),
        (given.join(layout::LATEST_REPORT), Some(given)),
    ];
    for (latest, root) in candidates {
        if latest.is_file() {
            let root = root.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            return Ok(ShardReport { latest, root });
        }
    }
    bail!(
        "{}: no report there: give a project folder, its .saffron/reports folder, or a latest.json file",
        given.display()
    )
}

fn read(shard: &ShardReport) -> Result<RunReport> {
    let text = std::fs::read_to_string(&shard.latest).with_context(|| format!("{}", shard.latest.display()))?;
    let mut report: RunReport =
        serde_json::from_str(&text).with_context(|| format!("{}: not a saffron run report", shard.latest.display()))?;
    // The pictures travel with the report, so the merged HTML report shows them inline too.
    for scenario in &mut report.scenarios {
        if let Some(file) = &scenario.screenshot_file {
            let relative = Path::new(file);
            let inside = relative.components().all(|part| matches!(part, std::path::Component::Normal(_)));
            if inside {
                scenario.screenshot = std::fs::read(shard.root.join(relative)).ok();
            }
            scenario.screenshot_file = None;
        }
        // Traces stay on the shard's machine (their paths are its): `saffron trace` there, or
        // `saffron import` of the shards' bundles, which carry them.
        scenario.traces.clear();
        scenario.trace_viewer = None;
    }
    Ok(report)
}

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    let mut reports = Vec::new();
    for given in &args.merge {
        reports.push(read(&locate(given)?)?);
    }
    let count = reports.len();
    let merged = merge_reports(reports)?;
    let root = match args.out {
        Some(out) => out,
        None => project::find_root()?,
    };
    // The shards' reports were masked when they were written; nothing here holds a secret.
    let written = saffron_runner::write_reports(&root, &merged, &Masker::new()).context("cannot write the reports")?;
    eprintln!("merged {count} report(s): {} scenario(s): {}", merged.scenarios.len(), merged.counts);
    let names: Vec<String> =
        written.iter().map(|path| path.strip_prefix(&root).unwrap_or(path).display().to_string()).collect();
    eprintln!("reports: {}", names.join(", "));
    Ok(ExitCode::from(merged.counts.exit_status(args.strict)))
}
