//! GitHub through its own CLI, `gh`: it is on every GitHub runner and takes the workflow's
//! token from `GH_TOKEN`, and on a person's machine it holds their login, so Saffron never holds
//! a credential. Each call's failure is one line: what `gh` said.

use std::path::Path;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// Whether `gh` is on PATH.
pub fn available() -> bool {
    Command::new("gh").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn gh(root: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("gh")
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run gh: {error} (install GitHub's CLI, https://cli.github.com)"))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        let last = said.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("failed");
        return Err(format!("gh {}: {}", args.iter().take(2).copied().collect::<Vec<_>>().join(" "), last.trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Opens a draft pull request from `branch` into `base`; returns what gh printed (its URL).
pub fn open_draft(root: &Path, base: &str, branch: &str, title: &str, body_file: &Path) -> Result<String, String> {
    let body = body_file.display().to_string();
    gh(root, &["pr", "create", "--draft", "--base", base, "--head", branch, "--title", title, "--body-file", &body])
}

/// A CI run, as `saffron runs --json` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub id: String,
    pub name: String,
    pub number: Option<u64>,
    /// `queued`, `in_progress`, `completed`, or the service's word.
    pub status: String,
    /// `success`, `failure`, `cancelled`, ... (empty until completed).
    pub conclusion: String,
    pub event: String,
    pub branch: String,
    pub commit: String,
    pub link: String,
}

/// The shape `gh run list --json` gives.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GhRun {
    database_id: u64,
    #[serde(default)]
    display_title: String,
    #[serde(default)]
    workflow_name: String,
    #[serde(default)]
    number: Option<u64>,
    #[serde(default)]
    status: String,
    #[serde(default)]
    conclusion: String,
    #[serde(default)]
    event: String,
    #[serde(default)]
    head_branch: String,
    #[serde(default)]
    head_sha: String,
    #[serde(default)]
    url: String,
}

/// The runs of `branch`, newest first, at most `limit`.
pub fn runs(root: &Path, branch: &str, limit: usize) -> Result<Vec<Run>, String> {
    let fields = "databaseId,displayTitle,workflowName,number,status,conclusion,event,headBranch,headSha,url";
    let listed = gh(root, &["run", "list", "--branch", branch, "--limit", &limit.to_string(), "--json", fields])?;
    let runs: Vec<GhRun> =
        serde_json::from_str(&listed).map_err(|error| format!("gh run list answered what is not its JSON: {error}"))?;
    Ok(runs
        .into_iter()
        .map(|run| Run {
            id: run.database_id.to_string(),
            name: if run.workflow_name.is_empty() { run.display_title } else { run.workflow_name },
            number: run.number,
            status: run.status,
            conclusion: run.conclusion,
            event: run.event,
            branch: run.head_branch,
            commit: run.head_sha,
            link: run.url,
        })
        .collect())
}

/// Downloads the run's heal bundles (artifacts named `saffron-bundle*`) into `folder`.
pub fn download_bundles(root: &Path, run_id: &str, folder: &Path) -> Result<(), String> {
    if run_id.is_empty() || !run_id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{run_id:?} is not a run id (digits, as `saffron runs` lists them)"));
    }
    let dir = folder.display().to_string();
    gh(root, &["run", "download", run_id, "--pattern", "saffron-bundle*", "--dir", &dir]).map(|_| ())
}
