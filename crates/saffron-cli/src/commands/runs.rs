//! `saffron runs [--branch B] [--json]`: the CI runs of the branch (through `gh`), each with
//! the proposals from it still pending here. The editors list these and import one with
//! `saffron import --run ID`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use saffron_ci::ledger::Ledger;
use saffron_ci::{gh, git};
use serde_json::json;

use crate::project;
use crate::terminal::{err, escape_controls, out};

#[derive(Args)]
pub struct RunsArgs {
    /// The branch whose runs to list (default: the branch checked out).
    #[arg(long)]
    branch: Option<String>,
    /// How many runs, newest first.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Print JSON (for editors): `{"runs": [...]}`, or `{"problem": {kind, message}, "error"}` with exit 2.
    #[arg(long)]
    json: bool,
}

/// A problem an editor shows as it is: what kind, and what to do.
fn problem(json: bool, kind: &str, message: &str) -> ExitCode {
    if json {
        out!("{}", json!({ "problem": { "kind": kind, "message": message }, "error": message }));
    } else {
        err!("saffron runs: {}", escape_controls(message));
    }
    ExitCode::from(2)
}

pub fn run(args: RunsArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let Some(branch) = args.branch.clone().or_else(|| git::branch(&root)) else {
        return Ok(problem(args.json, "no-branch", "no branch is checked out: pass --branch"));
    };
    if !gh::available() {
        return Ok(problem(
            args.json,
            "no-gh",
            "GitHub's CLI, gh, is not on PATH: install it (https://cli.github.com) and run `gh auth login`",
        ));
    }
    let runs = match gh::runs(&root, &branch, args.limit) {
        Ok(runs) => runs,
        Err(message) => {
            let kind = if message.contains("auth login") || message.contains("not logged") {
                "signed-out"
            } else if message.contains("repository") || message.contains("remote") {
                "unknown-repository"
            } else {
                "gh-failed"
            };
            return Ok(problem(args.json, kind, &message));
        }
    };
    let pending = pending_by_run(&root);
    if args.json {
        let listed: Vec<serde_json::Value> = runs
            .iter()
            .map(|run| {
                let mut value = serde_json::to_value(run).unwrap_or_default();
                value["pending"] =
                    json!(pending.iter().filter(|(id, _)| *id == run.id).map(|(_, path)| path).collect::<Vec<_>>());
                value
            })
            .collect();
        out!("{}", serde_json::to_string_pretty(&json!({ "branch": branch, "runs": listed }))?);
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        out!("no CI run of {branch}");
    }
    for run in &runs {
        let outcome = if run.conclusion.is_empty() { run.status.clone() } else { run.conclusion.clone() };
        let count = pending.iter().filter(|(id, _)| *id == run.id).count();
        let pending = if count > 0 { format!("  {count} proposal(s) pending here") } else { String::new() };
        out!(
            "{:<12} {:<11} {} {} ({}, {}){pending}  {}",
            run.id,
            outcome,
            escape_controls(&run.name),
            run.number.map(|n| format!("#{n}")).unwrap_or_default(),
            run.event,
            run.commit.chars().take(12).collect::<String>(),
            run.link
        );
    }
    if !runs.is_empty() {
        out!("import one's heal bundles: saffron import --run ID");
    }
    Ok(ExitCode::SUCCESS)
}

/// (run id, proposal path) for each proposal pending here that the ledger says came from a run,
/// while it is the revision imported.
fn pending_by_run(root: &Path) -> Vec<(String, String)> {
    let ledger = Ledger::read(root);
    ledger
        .proposals
        .keys()
        .filter_map(|path| {
            let from = ledger.imported_from_file(root, Path::new(path))?;
            Some((from.run.as_ref()?.id.clone(), path.clone()))
        })
        .collect()
}
