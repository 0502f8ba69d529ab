//! `saffron status`: each scenario's recording (fresh, stale, unrecorded) and pending proposals.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use saffron_index::RecordingState;

use crate::problem;
use crate::project;
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct StatusArgs {
    /// Only scenarios of feature files under these paths.
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

pub fn run(args: StatusArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let filters = project::relative_filters(&root, &args.paths)?;
    let (snapshot, mut problems) = project::load_index(&root);
    problems.splice(0..0, project::config_problems(&root));
    project::report(&problems)?;
    let scenarios: Vec<_> = snapshot.scenarios().into_iter().filter(|s| project::selected(&s.file, &filters)).collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            let json: Vec<serde_json::Value> = scenarios
                .iter()
                .map(|s| {
                    let mut value = serde_json::json!({
                        "file": s.file.display().to_string(),
                        "line": s.location.line,
                        "name": s.name,
                        "kind": s.kind,
                        "rows": s.rows,
                        "recording": s.recording.as_str(),
                        "recordingPath": s.recording_path.display().to_string(),
                        "pendingProposal": s.pending_proposal.as_ref().map(|p| p.display().to_string()),
                    });
                    if let RecordingState::Unreadable { reason } = &s.recording {
                        value["reason"] = serde_json::json!(reason);
                    }
                    value
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &json)?;
            writeln!(out)?;
        }
        Format::Text => {
            for s in &scenarios {
                let rows = if s.rows > 0 { format!(" ({} rows)", s.rows) } else { String::new() };
                let mut line =
                    format!("{:<11} {}:{}  {}{rows}", s.recording.as_str(), s.file.display(), s.location.line, s.name);
                if let RecordingState::Unreadable { reason } = &s.recording {
                    line.push_str(&format!("  ({reason})"));
                }
                if let Some(proposal) = &s.pending_proposal {
                    line.push_str(&format!("  [proposal pending: {}]", proposal.display()));
                }
                writeln!(out, "{}", escape_controls(&line))?;
            }
            let count = |state: &str| scenarios.iter().filter(|s| s.recording.as_str() == state).count();
            eprintln!(
                "{} scenario(s): {} fresh, {} stale, {} unrecorded, {} unreadable; {} proposal(s) pending",
                scenarios.len(),
                count("fresh"),
                count("stale"),
                count("unrecorded"),
                count("unreadable"),
                scenarios.iter().filter(|s| s.pending_proposal.is_some()).count()
            );
        }
    }
    Ok(problem::exit_code(&problems))
}
