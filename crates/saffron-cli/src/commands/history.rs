//! `saffron history [TARGET...] [--runs N] [--format text|json]`: each scenario's recent runs
//! from `.saffron/reports/history.jsonl`: its verdicts as a strip, flips, chronic trouble,
//! flakiness and its duration trend.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use saffron_runner::history;

use crate::project;
use crate::terminal::{escape_controls, out};

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct HistoryArgs {
    /// Feature files or folders, or FILE:LINE for one scenario (default: every scenario).
    targets: Vec<String>,
    /// How many of each scenario's latest runs to read.
    #[arg(long, default_value_t = 10)]
    runs: usize,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

fn selected(targets: &[String], file: &str, line: u32) -> bool {
    targets.is_empty()
        || targets.iter().any(|target| match target.rsplit_once(':') {
            Some((path, at)) if at.parse::<u32>().is_ok() => {
                path.trim_start_matches("./") == file && at == line.to_string()
            }
            _ => {
                let target = target.trim_start_matches("./").trim_end_matches('/');
                file == target || file.starts_with(&format!("{target}/"))
            }
        })
}

pub fn run(args: HistoryArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let lines = history::read(&root);
    let summaries: Vec<_> = history::summarize(&lines, args.runs)
        .into_iter()
        .filter(|summary| selected(&args.targets, &summary.file, summary.line))
        .collect();
    if let Format::Json = args.format {
        out!("{}", serde_json::to_string_pretty(&serde_json::json!({ "scenarios": summaries }))?);
        return Ok(ExitCode::SUCCESS);
    }
    if summaries.is_empty() {
        out!("no history yet: every `saffron run` adds to {}", history::HISTORY);
        return Ok(ExitCode::SUCCESS);
    }
    let width = summaries.iter().map(|summary| summary.strip.chars().count()).max().unwrap_or(0);
    for summary in &summaries {
        let mut notes = Vec::new();
        if summary.flips > 0 {
            notes.push(format!("{} flip(s)", summary.flips));
        }
        if summary.chronic {
            notes.push("CHRONIC".to_string());
        }
        if summary.flaky {
            notes.push("flaky".to_string());
        }
        if let (Some(before), Some(now)) = (summary.duration_before_ms, summary.duration_now_ms) {
            notes.push(format!("{:.1} s -> {:.1} s", before as f64 / 1000.0, now as f64 / 1000.0));
        }
        let strip = format!("{:<width$}", summary.strip);
        let browser = if summary.browser == "chromium" { String::new() } else { format!(" [{}]", summary.browser) };
        let line =
            format!("{strip}  {}:{}  {}{browser}  {}", summary.file, summary.line, summary.name, notes.join(", "));
        out!("{}", escape_controls(line.trim_end()));
    }
    out!(
        "✓ green, ≈ flaky (passed on a retry), ~ yellow, ✗ red, ! blocked; oldest first, at most {} run(s)",
        args.runs
    );
    Ok(ExitCode::SUCCESS)
}
