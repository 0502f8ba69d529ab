//! `saffron export [--out FILE]`: the pending proposals, the last run's report and its evidence
//! as one heal bundle, for a CI job to upload.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use saffron_ci::bundle::manifest::Repository;
use saffron_ci::bundle::{self, ExportInput, Limits};
use saffron_ci::ci_env::{self, GitFacts};
use saffron_ci::{git, identity};
use saffron_recording::layout;

use crate::project;
use crate::terminal::{err, out};

#[derive(Args)]
pub struct ExportArgs {
    /// The bundle to write (default: .saffron/reports/saffron-bundle.zip, or
    /// saffron-bundle-shard-<i>-of-<n>.zip when the last run was a shard).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also push the proposals, and nothing else, as a new branch NAME on the bundle's commit
    /// (never onto a branch that exists), and open a draft pull request with gh on GitHub (else
    /// write its description beside the bundle). Exit 1 means: pushed, but the pull request
    /// could not be opened.
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
    /// The branch the pull request goes to (default: the branch the run tested).
    #[arg(long, value_name = "BRANCH", requires = "branch")]
    base: Option<String>,
    /// The remote to push to.
    #[arg(long, default_value = "origin", requires = "branch")]
    remote: String,
}

pub fn run(args: ExportArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let shard = bundle::last_run_shard(&root);
    let out = match args.out {
        Some(out) if out.is_dir() => bail!("--out {} is a folder: name the bundle's file", out.display()),
        Some(out) => out,
        None => {
            let reports = root.join(layout::REPORTS);
            std::fs::create_dir_all(&reports)?;
            reports.join(bundle::default_name(shard))
        }
    };
    let provenance = provenance(&root);
    // Everything that can refuse the branch is checked before the bundle is written.
    let branching = match &args.branch {
        Some(branch) => {
            Some(crate::pull_request::prepare(&root, branch, args.base.as_deref(), &args.remote, &provenance)?)
        }
        None => None,
    };
    let input = ExportInput {
        provenance,
        repository: repository(&root),
        root: root.clone(),
        out,
        saffron_version: env!("CARGO_PKG_VERSION").to_string(),
        limits: Limits::default(),
    };
    let has_proposals = root.join(layout::PROPOSALS).is_dir() || root.join(layout::HANDLER_PROPOSALS).is_dir();
    if !has_proposals && !root.join(layout::LATEST_REPORT).is_file() {
        bail!(
            "nothing to export in {}: no proposal pending and no report (export after `saffron run`)",
            root.display()
        );
    }
    let exported = bundle::export(&input).map_err(|error| match error.hint() {
        Some(hint) => anyhow::anyhow!("{error}\n  hint: {hint}"),
        None => anyhow::anyhow!("{error}"),
    })?;
    for line in &exported.left_out {
        err!("warning: left out {line}");
    }
    if input.repository.is_none() {
        err!(
            "warning: no git remote names the repository: `saffron import` will refuse the bundle unless given --allow-unknown-repository"
        );
    }
    let shard = exported.shard.map(|shard| format!(" (shard {} of {})", shard.index, shard.total)).unwrap_or_default();
    out!(
        "exported {} proposal(s), {} proposed handler(s), {} screenshot(s){} to {}{shard} ({} bytes)",
        exported.proposals,
        exported.handler_proposals,
        exported.artifacts,
        if exported.report { " and the run's report" } else { "" },
        exported.path.display(),
        exported.bytes
    );
    match branching {
        Some(branching) => crate::pull_request::open(&root, &branching, &input.provenance, &exported.path),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The repository, from `origin` or else the first remote, without credentials.
pub fn repository(root: &Path) -> Option<Repository> {
    let remotes = git::remotes(root);
    let (_, url) = remotes.iter().find(|(name, _)| name == "origin").or_else(|| remotes.first())?;
    let url = identity::strip_credentials(url);
    let id = identity::normalize(&url)?;
    Some(Repository { url, id })
}

pub fn provenance(root: &Path) -> ci_env::Provenance {
    let head = git::head(root);
    let facts = GitFacts {
        head_parents: head.as_deref().and_then(|head| git::parents(root, head)).unwrap_or_default(),
        head,
        branch: git::branch(root),
    };
    let event = std::env::var_os("GITHUB_EVENT_PATH")
        .and_then(|path| std::fs::read(path).ok())
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    ci_env::provenance(&|name| std::env::var(name).ok(), event.as_ref(), &facts)
}
