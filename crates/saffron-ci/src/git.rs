//! What the checkout's git says: its remotes, its commit and branch, how two commits stand.
//! Each asks the `git` program (the one a user and a CI have, with their configuration), and a
//! question git cannot answer (no git, not a repository, an unknown commit) is `None`, never an
//! error: a bundle made or imported outside git is judged on what is known.

use std::path::Path;
use std::process::{Command, Stdio};

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let output =
        Command::new("git").arg("-C").arg(root).args(args).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
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

/// The parents of a commit, in order.
pub fn parents(root: &Path, commit: &str) -> Option<Vec<String>> {
    let line = git(root, &["rev-list", "--parents", "-n", "1", commit, "--"])?;
    Some(line.split_whitespace().skip(1).map(str::to_string).collect())
}

/// How `from` and `to` stand: (commits only `from` has, commits only `to` has), when git has both.
pub fn distance(root: &Path, from: &str, to: &str) -> Option<(usize, usize)> {
    let counts = git(root, &["rev-list", "--left-right", "--count", &format!("{from}...{to}"), "--"])?;
    let mut numbers = counts.split_whitespace().map(str::parse::<usize>);
    Some((numbers.next()?.ok()?, numbers.next()?.ok()?))
}
