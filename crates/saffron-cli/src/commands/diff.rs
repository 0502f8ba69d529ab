//! `saffron diff ID`: one proposal as a reviewer reads it: the action-level diff from the
//! committed recording, the agent's adaptations, the feature edits as `-`/`+` lines, and
//! whether it may be accepted.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use saffron_index::review::{self, ReviewError};

use crate::review::{assessment_lines, change_lines, fail, find, load, resolve, usage_line};
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct DiffArgs {
    /// The proposal: its path (.saffron/proposals/<feature>/<scenario>.json) or <feature>/<scenario>;
    /// a proposed handler: its path (.saffron/handlers/proposed/<name>.json) or handlers/<name>.
    id: String,
}

pub fn run(args: DiffArgs) -> Result<ExitCode> {
    if let Some(handler) = crate::handler_review::named(&args.id) {
        return crate::handler_review::diff(&crate::project::find_root()?, &handler);
    }
    let path = match resolve(&args.id) {
        Ok(path) => path,
        Err(error) => return Ok(fail("diff", &error)),
    };
    let loaded = load()?;
    if let Some((_, reason)) = loaded.unreadable.iter().find(|(unreadable, _)| *unreadable == path) {
        return Ok(fail("diff", &ReviewError::Unreadable { path, reason: reason.clone() }));
    }
    let Some(data) = find(&loaded.snapshot, &path) else {
        return Ok(fail("diff", &ReviewError::NotFound { path }));
    };
    let proposal = &data.proposal;
    let assessment = review::assess(&loaded.snapshot, proposal);
    let replaces = review::recording_path(&proposal.scenario.cache_path)
        .is_some_and(|cache| loaded.snapshot.recording(&cache).is_some());
    let mut lines = vec![
        format!(
            "Proposal {} for {} / \"{}\"",
            review::display_path(&data.path),
            proposal.scenario.feature,
            proposal.scenario.name
        ),
        format!("{} {}", if replaces { "Replaces" } else { "Creates (first recording)" }, proposal.scenario.cache_path),
    ];
    if assessment.is_acceptable() {
        lines.push("Acceptable: its bindings hold and its proof replay passed.".into());
    }
    lines.extend(assessment_lines(&assessment, ""));
    if !proposal.narrative.is_empty() {
        lines.push(format!("Narrative: {}", proposal.narrative));
    }
    for adaptation in &proposal.adaptations {
        lines.push(format!("Adaptation: {adaptation}"));
    }
    if let Some(usage) = usage_line(proposal) {
        lines.push(format!("Usage: {usage}"));
    }
    // Worked out from the two recordings, never read from the file: a hand edit could make a
    // stored diff say anything.
    let changes = review::diff(&loaded.snapshot, proposal);
    for step in &changes {
        lines.push(String::new());
        lines.push(format!("{} {}", step.kind.keyword(), step.text));
        lines.extend(step.changes.iter().flat_map(change_lines).map(|line| format!("  {line}")));
    }
    if changes.is_empty() {
        lines.push(String::new());
        lines.push("No action changes.".into());
    }
    for edit in &proposal.feature_edits {
        lines.push(String::new());
        let set = edit.from_set.as_ref().map(|set| format!(" (StepSet \"{set}\")")).unwrap_or_default();
        lines.push(format!("{}:{}{set}", edit.file, edit.line));
        lines.push(format!("- {}", edit.before));
        lines.push(format!("+ {}", edit.after));
    }
    if !proposal.feature_edits.is_empty() {
        lines.push(String::new());
        lines.push("`saffron accept --with-feature-edit` applies the feature edits.".into());
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in lines {
        writeln!(out, "{}", escape_controls(&line))?;
    }
    Ok(ExitCode::SUCCESS)
}
