//! The files an `upload` action names: paths relative to the project folder, which must stay
//! inside it. A recording is shared with the project, so it may not reach for a file elsewhere
//! on the machine that replays it (a key, a `.env` of another project), and a replay of a
//! recording written by hand or by the agent may not send such a file to the page under test.
//! Hidden files are refused too: a project's `.env` holds its secrets.

use std::path::{Path, PathBuf};

/// Why a recorded upload path cannot name a file of the project, or `None`. Checked as
/// written, before tokens are filled in; [`upload_file`] checks the path again once they are.
pub fn upload_path_problem(path: &str) -> Option<&'static str> {
    if path.trim().is_empty() {
        return Some("must name a file, relative to the project folder");
    }
    if path.contains('\\') {
        return Some("separates folders with `/`, as on every system");
    }
    if path.starts_with('/') || path.starts_with('~') || has_drive(path) {
        return Some("must be relative to the project folder (the folder of saffron.toml), not absolute");
    }
    if path.split('/').any(|part| part == "..") {
        return Some("may not leave the project folder (no `..`)");
    }
    if path.split('/').any(|part| part.starts_with('.') && part != ".") {
        return Some("may not name a hidden file or folder (such as .env or .saffron)");
    }
    if path.ends_with('/') {
        return Some("names a folder: name a file");
    }
    None
}

fn has_drive(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// The file `path` (with its tokens filled in) names under `root`, as an absolute path: it must
/// exist, be a file, and be inside the project folder once links are followed.
pub fn upload_file(root: &Path, path: &str) -> Result<PathBuf, String> {
    if let Some(problem) = upload_path_problem(path) {
        return Err(format!("the upload path {path:?} {problem}"));
    }
    let root = root
        .canonicalize()
        .map_err(|error| format!("the project folder {} cannot be read: {error}", root.display()))?;
    let joined = root.join(path);
    let file = joined.canonicalize().map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => {
            format!("the file to upload {path:?} does not exist (looked for {})", joined.display())
        }
        _ => format!("the file to upload {path:?} cannot be read: {error}"),
    })?;
    if !file.starts_with(&root) {
        return Err(format!(
            "the file to upload {path:?} is a link that leaves the project folder (to {})",
            file.display()
        ));
    }
    if !file.is_file() {
        return Err(format!("the upload path {path:?} is not a file"));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_are_accepted_as_written() {
        for good in ["fixtures/cat.png", "cat.png", "fixtures/<photo>", "./fixtures/a b.csv"] {
            assert_eq!(upload_path_problem(good), None, "{good}");
        }
        for (bad, says) in [
            ("", "must name a file"),
            ("/etc/passwd", "not absolute"),
            ("~/.ssh/id_rsa", "not absolute"),
            ("C:/secret.txt", "not absolute"),
            ("fixtures/../../.env", "no `..`"),
            (".env", "hidden"),
            ("fixtures/.secret/key.pem", "hidden"),
            ("..", "no `..`"),
            ("fixtures\\cat.png", "`/`"),
            ("fixtures/", "names a folder"),
        ] {
            let problem = upload_path_problem(bad).unwrap_or_default();
            assert!(problem.contains(says), "{bad:?}: {problem:?}");
        }
    }

    #[test]
    fn a_file_is_found_inside_the_project_and_nowhere_else() {
        let outside = tempfile::tempdir().expect("a folder");
        std::fs::write(outside.path().join("secret.txt"), "key").expect("written");
        let project = tempfile::tempdir().expect("a folder");
        std::fs::create_dir(project.path().join("fixtures")).expect("made");
        std::fs::write(project.path().join("fixtures/cat.png"), "png").expect("written");

        let found = upload_file(project.path(), "fixtures/cat.png").expect("found");
        assert!(found.is_absolute() && found.ends_with("fixtures/cat.png"), "{found:?}");

        let missing = upload_file(project.path(), "fixtures/dog.png").expect_err("missing");
        assert!(missing.contains("does not exist"), "{missing}");
        let folder = upload_file(project.path(), "fixtures").expect_err("a folder");
        assert!(folder.contains("not a file"), "{folder}");
        let escape = upload_file(project.path(), "../secret.txt").expect_err("outside");
        assert!(escape.contains("no `..`"), "{escape}");

        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path().join("secret.txt"), project.path().join("fixtures/link.txt"))
                .expect("linked");
            let linked = upload_file(project.path(), "fixtures/link.txt").expect_err("a link out");
            assert!(linked.contains("leaves the project folder"), "{linked}");
        }
    }
}
