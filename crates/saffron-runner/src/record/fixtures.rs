//! The files the recording agent may upload: those in a folder named `fixtures` anywhere in the
//! project (hidden and git-ignored files left out). The agent is told their paths and may name
//! no other file, so it cannot send the page a file the project did not set aside for tests.

use std::path::Path;

/// At most this many are listed in the agent's task (each costs tokens on every turn).
pub const MAX_LISTED: usize = 50;

/// The project's fixture files, relative to `root` with `/` separators, sorted.
pub fn fixture_files(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(root)
        .hidden(true)
        .max_depth(Some(8))
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter_map(|entry| {
            let relative = entry.path().strip_prefix(root).ok()?;
            let parts: Vec<String> =
                relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
            let in_fixtures = parts.iter().rev().skip(1).any(|folder| folder == "fixtures");
            let path = parts.join("/");
            (in_fixtures && saffron_recording::upload::upload_path_problem(&path).is_none()).then_some(path)
        })
        .collect();
    files.sort();
    files.truncate(MAX_LISTED);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_in_fixtures_folders_are_listed_and_nothing_else() {
        let project = tempfile::tempdir().expect("a folder");
        let root = project.path();
        for (path, text) in [
            ("features/fixtures/receipt.txt", "paid"),
            ("fixtures/photos/cat.png", "png"),
            ("fixtures/.env", "SECRET=1"),
            (".saffron/fixtures/x.txt", "no"),
            ("features/orders.feature", "Feature: x"),
            ("notes/fixtures.txt", "a file named fixtures"),
            ("saffron.toml", ""),
        ] {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("made");
            std::fs::write(file, text).expect("written");
        }
        assert_eq!(fixture_files(root), ["features/fixtures/receipt.txt", "fixtures/photos/cat.png"]);
    }
}
