//! What the checkout's git says: its remotes, its commit and branch, how two commits stand.
//! Each asks the `git` program (the one a user and a CI have, with their configuration), and a
//! question git cannot answer (no git, not a repository, an unknown commit) is `None`, never an
//! error: a bundle made or imported outside git is judged on what is known.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `git ARGS` in `root` with `env` set and `input` on its standard input; its stdout, or
/// its failure in one line: the command and the last line git said.
pub(crate) fn run(root: &Path, args: &[&str], env: &[(&str, &str)], input: Option<&[u8]>) -> Result<String, String> {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(root)
        .args(args)
        .envs(env.iter().copied())
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|error| format!("cannot run git: {error}"))?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(bytes).map_err(|error| format!("git {}: {error}", args.join(" ")))?;
    }
    let output = child.wait_with_output().map_err(|error| format!("git {}: {error}", args.join(" ")))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        let last = said.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("failed");
        return Err(format!("git {}: {}", args.first().copied().unwrap_or(""), last.trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// `git ARGS`'s stdout, or `None` when git cannot answer.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    run(root, args, &[], None).ok()
}

/// The checkout's remotes, (name, URL), in git's order.
pub fn remotes(root: &Path) -> Vec<(String, String)> {
    let Some(listing) = git(root, &["config", "--get-regexp", r"^remote\..*\.url$"]) else { return Vec::new() };
    listing
        .lines()
        .filter_map(|line| {
            let (key, url) = line.split_once(' ')?;
            let name = key.strip_prefix("remote.")?.strip_suffix(".url")?;
            Some((name.to_string(), url.trim().to_string()))
        })
        .collect()
}

/// The commit checked out.
pub fn head(root: &Path) -> Option<String> {
    git(root, &["rev-parse", "--verify", "-q", "HEAD^{commit}"])
}

/// The branch checked out, when HEAD is on one.
pub fn branch(root: &Path) -> Option<String> {
    git(root, &["symbolic-ref", "--short", "-q", "HEAD"])
}

/// The parents of a commit, in order, as the commit object names them: a shallow checkout's
/// history ends at its commits (`rev-list` says they have no parents), but their objects still
/// name their parents.
pub fn parents(root: &Path, commit: &str) -> Option<Vec<String>> {
    let object = git(root, &["cat-file", "commit", commit])?;
    Some(
        object
            .lines()
            .take_while(|line| !line.is_empty())
            .filter_map(|line| line.strip_prefix("parent "))
            .map(str::to_string)
            .collect(),
    )
}

/// How `from` and `to` stand: (commits only `from` has, commits only `to` has), when git has both.
pub fn distance(root: &Path, from: &str, to: &str) -> Option<(usize, usize)> {
    let counts = git(root, &["rev-list", "--left-right", "--count", &format!("{from}...{to}"), "--"])?;
    let mut numbers = counts.split_whitespace().map(str::parse::<usize>);
    Some((numbers.next()?.ok()?, numbers.next()?.ok()?))
}

/// A git configuration value, as git resolves it for the checkout.
pub fn config(root: &Path, key: &str) -> Option<String> {
    git(root, &["config", "--get", key]).filter(|value| !value.is_empty())
}

/// Writes the project's files as they are at `commit` into `folder` (`git archive`), and
/// returns where the project root is in it (the same folder of the repository as `root`).
pub fn materialise(root: &Path, commit: &str, folder: &Path) -> Result<std::path::PathBuf, String> {
    let prefix = git(root, &["rev-parse", "--show-prefix"]).unwrap_or_default();
    let top = git(root, &["rev-parse", "--show-toplevel"]).ok_or("not a git checkout")?;
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(&top)
        .args(["archive", "--format=tar", commit])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot run git archive: {error}"))?;
    let stdout = archive.stdout.take().ok_or("git archive gave no output")?;
    let status = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(folder)
        .stdin(stdout)
        .stderr(Stdio::null())
        .status()
        .map_err(|error| format!("cannot run tar: {error}"))?;
    let archived = archive.wait().map_err(|error| format!("git archive: {error}"))?;
    if !status.success() || !archived.success() {
        return Err(format!("cannot write commit {commit}'s files (git archive | tar)"));
    }
    Ok(folder.join(prefix))
}
