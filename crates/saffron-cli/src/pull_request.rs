//! `saffron export --branch`: the proposals pushed as a branch of their own on the bundle's
//! commit, and a draft pull request (gh on GitHub; a description file elsewhere).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use saffron_ci::ci_env::Provenance;
use saffron_ci::pull_request::{Described, GITHUB_BODY_LIMIT, Subject, description, title};
use saffron_ci::{branch, gh, git};
use saffron_index::review;
use saffron_recording::{Store, layout, parse_handler, parse_proposal, write_atomic};

use crate::project;
use crate::review::change_lines;
use crate::terminal::{err, escape_controls, out};

/// A branch that may be pushed: checked before anything is written.
pub struct Branching {
    branch: String,
    base: String,
    remote: String,
    commit: String,
}

pub fn prepare(
    root: &Path,
    name: &str,
    base: Option<&str>,
    remote: &str,
    provenance: &Provenance,
) -> Result<Branching> {
    branch::check_name("--branch", name).map_err(|problem| anyhow!(problem))?;
    let base = match base.map(str::to_string).or_else(|| provenance.branch.clone()) {
        Some(base) => base,
        None => bail!("--branch needs --base: the branch the run tested is not known here"),
    };
    branch::check_name("--base", &base).map_err(|problem| anyhow!(problem))?;
    let Some(commit) = provenance.commit.clone() else {
        bail!("--branch needs a git checkout with a commit: the proposals are committed on it");
    };
    match branch::exists_on_remote(root, remote, name) {
        Ok(true) => bail!(
            "the branch {name} exists on {remote}: refused (a heal never pushes onto a branch that exists, and never \
             forces); name another"
        ),
        Ok(false) => {}
        Err(problem) => bail!("cannot ask {remote} which branches it has: {problem}"),
    }
    branch::ensure_commit(root, remote, &commit).map_err(|problem| anyhow!(problem))?;
    Ok(Branching { branch: name.to_string(), base, remote: remote.to_string(), commit })
}

pub fn open(root: &Path, branching: &Branching, provenance: &Provenance, bundle: &Path) -> Result<ExitCode> {
    let Branching { branch: name, base, remote, commit } = branching;
    // Each proposal is judged against the commit's own files, which on a pull request build
    // are the pull request's head, not the merge commit the run tested.
    let head = git::head(root);
    let materialised = tempfile::tempdir()?;
    let project_at_commit = if head.as_deref() == Some(commit.as_str()) {
        root.to_path_buf()
    } else {
        git::materialise(root, commit, materialised.path()).map_err(|problem| anyhow!(problem))?
    };
    let (snapshot, _) = project::load_index(&project_at_commit);
    let store = Store::open(root)?;
    let prefix = branch::prefix(root).map_err(|problem| anyhow!(problem))?;
    let mut files = Vec::new();
    let mut subject = Subject {
        branch: name.clone(),
        run_link: provenance.run.as_ref().and_then(|run| run.link.clone()),
        run_id: provenance.run.as_ref().map(|run| run.id.clone()),
        commit: Some(commit.clone()),
        ..Subject::default()
    };
    for path in store.list_proposals().files {
        let relative = relative(root, &path);
        let bytes = std::fs::read(&path)?;
        let Ok(proposal) = std::str::from_utf8(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_proposal(t).map_err(|e| e.to_string()))
        else {
            subject.left_out.push(format!("{relative}: not a valid proposal"));
            continue;
        };
        let assessment = review::assess(&snapshot, &proposal);
        if assessment.is_stale() {
            subject.left_out.push(format!("{relative}: stale at {commit}: {}", assessment.stale_reasons.join("; ")));
            continue;
        }
        let mut changes = Vec::new();
        for step in review::diff(&snapshot, &proposal) {
            changes.push(format!("{} {}", step.kind.keyword(), step.text));
            changes.extend(step.changes.iter().flat_map(change_lines));
        }
        let edits = proposal
            .feature_edits
            .iter()
            .flat_map(|edit| {
                [format!("{}:{}", edit.file, edit.line), format!("- {}", edit.before), format!("+ {}", edit.after)]
            })
            .collect();
        subject.proposals.push(Described {
            path: relative.clone(),
            feature: proposal.scenario.feature.clone(),
            scenario: proposal.scenario.name.clone(),
            narrative: proposal.narrative.clone(),
            adaptations: proposal.adaptations.clone(),
            changes,
            edits,
        });
        files.push((format!("{prefix}{relative}"), bytes));
    }
    if let Ok(entries) = std::fs::read_dir(root.join(layout::HANDLER_PROPOSALS)) {
        for path in entries.filter_map(Result::ok).map(|entry| entry.path()) {
            let bytes = std::fs::read(&path)?;
            if path.extension().is_some_and(|ext| ext == "json")
                && std::str::from_utf8(&bytes).ok().is_some_and(|text| parse_handler(text).is_ok())
            {
                files.push((format!("{prefix}{}", relative(root, &path)), bytes));
            }
        }
    }
    if files.is_empty() {
        bail!("no proposal fits commit {commit}: nothing was pushed");
    }
    files.sort();
    let on_actions = std::env::var("GITHUB_ACTIONS").is_ok_and(|value| value == "true");
    let who = branch::identity(git::config(root, "user.name"), git::config(root, "user.email"), on_actions);
    let message = format!(
        "{}\n\nProposals only: each is accepted (or rejected) by a person with `saffron accept`, which checks it again.\n",
        title(&subject)
    );
    let pushed = branch::commit_beside(root, commit, &files, &message, (&who.0, &who.1))
        .and_then(|new| branch::push(root, remote, &new, name).map(|()| new))
        .map_err(|problem| anyhow!("nothing was pushed: {problem}"))?;
    out!(
        "pushed {} file(s) as the branch {name} on {remote} (commit {}, on {})",
        files.len(),
        short(&pushed),
        short(commit)
    );
    for left in &subject.left_out {
        err!("warning: left out of the branch: {}", escape_controls(left));
    }
    let body = description(&subject, GITHUB_BODY_LIMIT);
    let on_github = on_actions
        || crate::commands::export::repository(root).is_some_and(|repository| repository.id.host == "github.com");
    if on_github && gh::available() {
        let body_file = tempfile::NamedTempFile::new()?;
        std::fs::write(body_file.path(), &body)?;
        return match gh::open_draft(root, base, name, &title(&subject), body_file.path()) {
            Ok(url) => {
                out!("opened the draft pull request {url}");
                Ok(ExitCode::SUCCESS)
            }
            Err(problem) => {
                err!(
                    "saffron export: the branch {name} is pushed, but the pull request could not be opened: {}",
                    escape_controls(&problem)
                );
                err!(
                    "  hint: on GitHub Actions the job needs `permissions: pull-requests: write`, and the repository \
                     must allow workflows to create pull requests (Settings, Actions, General)"
                );
                Ok(ExitCode::from(1))
            }
        };
    }
    let folder = bundle.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let described = folder.join("saffron-pull-request.md");
    write_atomic(&described, body.as_bytes())?;
    out!(
        "wrote the pull request's description to {}: open a pull request from {name} into {base} with it",
        described.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

fn short(commit: &str) -> String {
    commit.chars().take(12).collect()
}
