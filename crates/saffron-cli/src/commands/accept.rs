//! `saffron accept ID [--with-feature-edit] [--propagate]`: promote a proposal to the committed
//! recording, after re-checking its bindings under the store lock. A stale or unverified
//! proposal is refused by reason (exit 1); there is no override.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use saffron_index::IndexHost;
use saffron_index::review::{self, AcceptOptions};
use saffron_recording::Store;

use crate::project;
use crate::review::{fail, resolve};
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct AcceptArgs {
    /// The proposal: its path (.saffron/proposals/<feature>/<scenario>.json) or <feature>/<scenario>.
    id: String,
    /// Also apply the proposal's feature edits (into StepSet files too), renaming the steps of
    /// every other recording that runs an edited line.
    #[arg(long)]
    with_feature_edit: bool,
    /// Also rewrite every other recording whose target has the same semantic core as a target
    /// the proposal changed.
    #[arg(long)]
    propagate: bool,
}

pub fn run(args: AcceptArgs) -> Result<ExitCode> {
    let path = match resolve(&args.id) {
        Ok(path) => path,
        Err(error) => return Ok(fail("accept", &error)),
    };
    let root = project::find_root()?;
    let store = Store::open(&root).context("cannot open the store")?;
    let options = AcceptOptions {
        with_feature_edit: args.with_feature_edit,
        propagate: args.propagate,
        refuse_feature_edits: false,
    };
    let accepted = match review::accept(&store, &path, options, || IndexHost::load(&root).0.snapshot()) {
        Ok(accepted) => accepted,
        Err(error) => return Ok(fail("accept", &error)),
    };
    let mut lines = vec![format!(
        "Accepted {}: wrote {} for {} / \"{}\".",
        review::display_path(&accepted.proposal),
        review::display_path(&accepted.recording),
        accepted.feature,
        accepted.scenario
    )];
    for edit in &accepted.edits {
        lines.push(format!("  edited {}:{}: {}", edit.file, edit.line, edit.after.trim()));
    }
    for renamed in &accepted.renamed {
        lines.push(format!(
            "  renamed {} step(s) in {} ({} / \"{}\") to follow the edit",
            renamed.changes,
            review::display_path(&renamed.recording),
            renamed.feature,
            renamed.scenario
        ));
    }
    for propagated in &accepted.propagated {
        lines.push(format!(
            "  propagated to {} ({} / \"{}\"): {} action(s) changed",
            review::display_path(&propagated.recording),
            propagated.feature,
            propagated.scenario,
            propagated.changes
        ));
    }
    if args.propagate && accepted.propagated.is_empty() {
        lines.push("  propagated to no other recording: none uses a target this proposal changed".into());
    }
    for note in &accepted.notes {
        lines.push(format!("  note: {note}"));
    }
    lines.push("Commit the changed files.".into());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in lines {
        writeln!(out, "{}", escape_controls(&line))?;
    }
    Ok(ExitCode::SUCCESS)
}
