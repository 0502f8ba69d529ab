//! A branch that holds the proposals and nothing else, committed beside the checkout: the files
//! become blobs on a temporary index read from the bundle's commit (`read-tree`, `update-index`,
//! `write-tree`, `commit-tree`), so the CI checkout is never switched or staged, and the branch
//! is pushed as `<commit>:refs/heads/<branch>`, never onto a branch that exists, never forced.

use std::path::Path;

use crate::git::run;

/// Characters a branch name may not hold: a reviewer pastes it into a shell.
const SHELL_METACHARACTERS: &[char] = &[
    ' ', '\t', '\n', '"', '\'', '$', '`', ';', '|', '&', '<', '>', '(', ')', '\\', '*', '?', '[', '~', '^', ':', '{',
    '}',
];

/// Why `name`, given as `flag`, cannot be a branch here, if it cannot.
pub fn check_name(flag: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("{flag} is empty"));
    }
    if let Some(bad) = name.chars().find(|c| SHELL_METACHARACTERS.contains(c) || c.is_control()) {
        return Err(format!(
            "{flag} {name:?} holds {bad:?}: a branch name a reviewer pastes into a shell holds none of {}",
            " \"'$`;|&<>()\\*?[~^:{}"
        ));
    }
    if name.starts_with('-')
        || name.starts_with('/')
        || name.ends_with('/')
        || name.ends_with('.')
        || name.contains("..")
        || name.contains("//")
        || name.ends_with(".lock")
        || name.contains("@{")
    {
        return Err(format!("{flag} {name:?} is not a valid git branch name"));
    }
    Ok(())
}

/// Who commits: git's configured identity when there is one, else GitHub's documented identity
/// for workflow commits on GitHub Actions, else Saffron.
pub fn identity(
    configured_name: Option<String>,
    configured_email: Option<String>,
    on_actions: bool,
) -> (String, String) {
    match (configured_name, configured_email) {
        (Some(name), Some(email)) => (name, email),
        _ if on_actions => {
            ("github-actions[bot]".into(), "41898282+github-actions[bot]@users.noreply.github.com".into())
        }
        _ => ("Saffron".into(), "saffron@localhost".into()),
    }
}

/// Whether `remote` has a branch `branch` (`git ls-remote`).
pub fn exists_on_remote(root: &Path, remote: &str, branch: &str) -> Result<bool, String> {
    let listed = run(root, &["ls-remote", "--heads", remote, &format!("refs/heads/{branch}")], &[], None)?;
    Ok(!listed.is_empty())
}

/// Makes sure the checkout has `commit`, fetching it by hash from `remote` when a shallow
/// checkout lacks it, but only when it is HEAD, a parent of HEAD (a pull request's head merged
/// into the commit CI tested) or an ancestor of HEAD: any other commit is refused before a
/// fetch or a push.
pub fn ensure_commit(root: &Path, remote: &str, commit: &str) -> Result<(), String> {
    let head = run(root, &["rev-parse", "--verify", "-q", "HEAD^{commit}"], &[], None)
        .map_err(|_| "the checkout has no commit checked out".to_string())?;
    let is_parent = crate::git::parents(root, "HEAD").unwrap_or_default().iter().any(|parent| parent == commit);
    let present = run(root, &["cat-file", "-e", &format!("{commit}^{{commit}}")], &[], None).is_ok();
    let is_ancestor = present && run(root, &["merge-base", "--is-ancestor", commit, "HEAD"], &[], None).is_ok();
    if head != commit && !is_parent && !is_ancestor {
        return Err(format!(
            "the bundle's commit {commit} is not HEAD ({head}), a commit merged into it or one it descends from: \
             refused before anything is fetched or pushed"
        ));
    }
    if !present {
        run(root, &["fetch", "-q", "--no-tags", "--depth=1", remote, commit], &[], None)
            .map_err(|error| format!("cannot fetch {commit} from {remote}: {error}"))?;
    }
    Ok(())
}

/// The folder of the project inside its repository (`shop/` when the project is a subfolder,
/// empty at the top).
pub fn prefix(root: &Path) -> Result<String, String> {
    run(root, &["rev-parse", "--show-prefix"], &[], None)
}

/// Commits `files` (paths relative to the repository's top, with their bytes) on top of
/// `parent`, in a tree that is `parent`'s with those files added or replaced. The checkout's
/// index, HEAD and work tree are not touched. Returns the new commit.
pub fn commit_beside(
    root: &Path,
    parent: &str,
    files: &[(String, Vec<u8>)],
    message: &str,
    (name, email): (&str, &str),
) -> Result<String, String> {
    let index = tempfile::Builder::new()
        .prefix("saffron-index-")
        .tempfile()
        .map_err(|error| format!("cannot make a temporary index: {error}"))?;
    let index_path = index.path().display().to_string();
    let env = [("GIT_INDEX_FILE", index_path.as_str())];
    run(root, &["read-tree", parent], &env, None)?;
    for (path, bytes) in files {
        let blob = run(root, &["hash-object", "-w", "--stdin"], &[], Some(bytes))?;
        run(root, &["update-index", "--add", "--cacheinfo", &format!("100644,{blob},{path}")], &env, None)?;
    }
    let tree = run(root, &["write-tree"], &env, None)?;
    let identity = [
        ("GIT_AUTHOR_NAME", name),
        ("GIT_AUTHOR_EMAIL", email),
        ("GIT_COMMITTER_NAME", name),
        ("GIT_COMMITTER_EMAIL", email),
    ];
    run(root, &["commit-tree", &tree, "-p", parent, "-F", "-"], &identity, Some(message.as_bytes()))
}

/// Pushes `commit` as the new branch `branch` of `remote`; never forced, so a branch created
/// since the check is not overwritten either.
pub fn push(root: &Path, remote: &str, commit: &str, branch: &str) -> Result<(), String> {
    run(root, &["push", "-q", remote, &format!("{commit}:refs/heads/{branch}")], &[], None).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_name_with_shell_metacharacters_is_refused() {
        assert!(check_name("--branch", "saffron/heal-4242").is_ok());
        for bad in [
            "a b",
            "x;rm",
            "$(id)",
            "`id`",
            "a|b",
            "a&b",
            "a>b",
            "quote'",
            "dq\"",
            "back\\slash",
            "a..b",
            "-x",
            "x.lock",
            "",
        ] {
            assert!(check_name("--branch", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_committer_is_configured_else_the_actions_bot_else_saffron() {
        assert_eq!(identity(Some("Ada".into()), Some("ada@x".into()), true), ("Ada".into(), "ada@x".into()));
        assert_eq!(identity(None, None, true).0, "github-actions[bot]");
        assert_eq!(identity(Some("Ada".into()), None, false).0, "Saffron");
    }
}
