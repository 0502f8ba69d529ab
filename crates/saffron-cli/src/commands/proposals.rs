//! `saffron proposals`: every proposal waiting for review, whether it may be accepted, and the
//! proposal files that cannot be read (they can only be rejected).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use saffron_index::review;
use serde_json::json;

use super::Format;
use crate::review::{action_changes, assessment_lines, load, summary_json, usage_line};
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct ProposalsArgs {
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(args: ProposalsArgs) -> Result<ExitCode> {
    let loaded = load()?;
    let snapshot = &loaded.snapshot;
    let root = crate::project::find_root()?;
    // Which CI run each came from, while it is the revision `saffron import` filed.
    let ledger = saffron_ci::ledger::Ledger::read(&root);
    let imported_from = |path: &std::path::Path| ledger.imported_from_file(&root, path).cloned();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            let proposals: Vec<_> = snapshot
                .proposals()
                .map(|data| {
                    let mut summary = summary_json(snapshot, data, &review::assess(snapshot, &data.proposal));
                    summary["importedFrom"] = json!(imported_from(&data.path));
                    summary
                })
                .collect();
            let unreadable: Vec<_> = loaded
                .unreadable
                .iter()
                .map(|(path, reason)| json!({ "path": review::display_path(path), "reason": reason }))
                .collect();
            let handlers: Vec<_> = saffron_recording::Store::open(&root)
                .map(|store| store.load_handler_proposals().found)
                .unwrap_or_default()
                .into_iter()
                .map(|(path, handler)| {
                    let relative = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
                    json!({ "path": relative, "handler": handler })
                })
                .collect();
            let all = json!({ "proposals": proposals, "unreadable": unreadable, "handlers": handlers });
            serde_json::to_writer_pretty(&mut out, &all)?;
            writeln!(out)?;
        }
        Format::Text => {
            let mut count = 0;
            for data in snapshot.proposals() {
                count += 1;
                let proposal = &data.proposal;
                let assessment = review::assess(snapshot, proposal);
                let changes = review::diff(snapshot, proposal);
                let mut lines = vec![
                    format!(
                        "{}  {} / \"{}\"{}",
                        review::display_path(&data.path),
                        proposal.scenario.feature,
                        proposal.scenario.name,
                        if assessment.is_stale() {
                            "  [STALE]"
                        } else if assessment.unverified.is_some() {
                            "  [UNVERIFIED]"
                        } else if !assessment.refused.is_empty() {
                            "  [REFUSED]"
                        } else if assessment.awaits_review() {
                            "  [DIFFERENT CONTROL]"
                        } else {
                            ""
                        }
                    ),
                    format!(
                        "    {} changed step(s), {} action change(s), {} feature edit(s)",
                        changes.len(),
                        action_changes(&changes),
                        proposal.feature_edits.len()
                    ),
                ];
                if let Some(from) = imported_from(&data.path) {
                    let run = match &from.run {
                        Some(run) => format!(
                            "CI run {}{}",
                            run.id,
                            run.link.as_deref().map(|l| format!(" {l}")).unwrap_or_default()
                        ),
                        None => from.bundle.clone(),
                    };
                    lines.push(format!("    imported from {run}"));
                }
                if !proposal.narrative.is_empty() {
                    lines.push(format!("    {}", proposal.narrative));
                }
                if let Some(usage) = usage_line(proposal) {
                    lines.push(format!("    usage: {usage}"));
                }
                lines.extend(assessment_lines(&assessment, "    "));
                for line in lines {
                    writeln!(out, "{}", escape_controls(&line))?;
                }
            }
            for (path, reason) in &loaded.unreadable {
                let line = format!("{}  UNREADABLE: {reason} (it can only be rejected)", review::display_path(path));
                writeln!(out, "{}", escape_controls(&line))?;
            }
            let (handler_lines, handlers) = crate::handler_review::listing(&crate::project::find_root()?);
            for line in handler_lines {
                writeln!(out, "{}", escape_controls(&line))?;
            }
            count += handlers;
            if count == 0 && loaded.unreadable.is_empty() {
                eprintln!("No proposal is waiting for review.");
            } else {
                eprintln!(
                    "{count} proposal(s), {} unreadable: `saffron diff ID` shows one, `saffron accept ID` or `saffron \
                     reject ID` decides it",
                    loaded.unreadable.len()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
