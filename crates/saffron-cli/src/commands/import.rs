//! `saffron import PATH...`: heal bundles from CI into this checkout. Every bundle is checked
//! whole before anything is written (refused: exit 2, nothing written); then each proposal that
//! still fits the checkout is filed, and the CI run's report becomes the latest run.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use saffron_ci::bundle::{self, ImportInput, Imported, Limits};
use saffron_ci::git;

use crate::project;
use crate::terminal::{err, escape_controls, out};

#[derive(Args)]
pub struct ImportArgs {
    /// Bundles, or folders holding them (saffron-bundle*.zip, one level down too, as
    /// `gh run download` lays them out). Several shards' bundles import as one run.
    #[arg(value_name = "PATH", required_unless_present = "run", conflicts_with = "run")]
    paths: Vec<PathBuf>,
    /// Download the heal bundles of a CI run (`saffron runs` lists them) with gh into a private
    /// folder, import them, and delete the download.
    #[arg(long, value_name = "ID")]
    run: Option<String>,
    /// Print the outcome as JSON (for editors); a refusal is `{"error", "hint"}` with exit 2.
    #[arg(long)]
    json: bool,
    /// Import a bundle made outside git (it names no repository), with a warning.
    #[arg(long)]
    allow_unknown_repository: bool,
}

pub fn run(args: ImportArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    // Kept until the import is done, then removed with what was downloaded.
    let download = tempfile::Builder::new().prefix("saffron-run-").tempdir()?;
    let mut paths = args.paths.clone();
    if let Some(run) = &args.run {
        if let Err(message) = saffron_ci::gh::download_bundles(&root, run, download.path()) {
            return Ok(refused(
                args.json,
                &format!("cannot download the bundles of run {run}: {message}"),
                Some(
                    "check the run id (saffron runs) and `gh auth status`; a run whose job exported no bundle has none",
                ),
            ));
        }
        paths.push(download.path().to_path_buf());
    }
    let mut bundles = Vec::new();
    for path in &paths {
        bundles.extend(bundle::find_bundles(path).map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?);
    }
    let (snapshot, _) = project::load_index(&root);
    let input = ImportInput {
        root: &root,
        snapshot: &snapshot,
        remotes: git::remotes(&root),
        head: git::head(&root),
        allow_unknown_repository: args.allow_unknown_repository,
        limits: Limits::default(),
    };
    let outcome = match bundle::import(&input, &bundles) {
        Ok(outcome) => outcome,
        Err(error) => return Ok(refused(args.json, &error.to_string(), error.hint())),
    };
    if args.json {
        out!("{}", serde_json::to_string_pretty(&outcome)?);
        return Ok(ExitCode::SUCCESS);
    }
    for bundle in &outcome.bundles {
        let mut line = format!("bundle {}", bundle.path);
        if let Some(run) = &bundle.run {
            line.push_str(&format!(": CI run {}", run.id));
            if let Some(attempt) = &run.attempt {
                line.push_str(&format!(" (attempt {attempt})"));
            }
        }
        if let Some(branch) = &bundle.branch {
            line.push_str(&format!(" on {branch}"));
        }
        if let Some(commit) = &bundle.commit {
            line.push_str(&format!(" at {}", commit.chars().take(12).collect::<String>()));
        }
        if let Some(shard) = &bundle.shard {
            line.push_str(&format!(", shard {shard}"));
        }
        if let Some(link) = bundle.run.as_ref().and_then(|run| run.link.as_deref()) {
            line.push_str(&format!(" {link}"));
        }
        out!("{}", escape_controls(&line));
    }
    for warning in &outcome.warnings {
        err!("warning: {}", escape_controls(warning));
    }
    for proposal in &outcome.proposals {
        let word = match proposal.outcome {
            Imported::Imported => "imported",
            Imported::Replaced => "replaced",
            Imported::Unchanged => "unchanged",
            Imported::AlreadyAccepted => "accepted",
            Imported::Stale => "STALE",
            Imported::Refused => "REFUSED",
        };
        let scenario = if proposal.feature.is_empty() {
            String::new()
        } else {
            format!("  {} / \"{}\"", proposal.feature, proposal.scenario)
        };
        out!("{word:<10} {}{}", proposal.path, escape_controls(&scenario));
        for reason in &proposal.reasons {
            out!("    {}", escape_controls(reason));
        }
        if proposal.outcome == Imported::Stale {
            out!(
                "    not imported: it no longer fits this checkout (check out the bundle's commit to review it there)"
            );
        }
    }
    if let Some(report) = &outcome.report {
        out!("report     {report} (the bundle's run, marked imported; report.html beside it)");
    }
    if !outcome.changed {
        out!("nothing changed: everything in the bundle(s) was imported before");
    } else if outcome.proposals.iter().any(|p| matches!(p.outcome, Imported::Imported | Imported::Replaced)) {
        out!("review them: saffron proposals, saffron diff ID, then saffron accept ID or saffron reject ID");
    }
    Ok(ExitCode::SUCCESS)
}

/// A refusal: one line (or `{"error", "hint"}`), exit 2, nothing written.
fn refused(json: bool, message: &str, hint: Option<&str>) -> ExitCode {
    if json {
        out!("{}", serde_json::json!({ "error": message, "hint": hint }));
    } else {
        err!("saffron import: refused, nothing was written: {}", escape_controls(message));
        if let Some(hint) = hint {
            err!("  hint: {hint}");
        }
    }
    ExitCode::from(2)
}
