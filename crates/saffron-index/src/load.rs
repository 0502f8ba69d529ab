//! Reading a project from disk into changes for the index: its feature files (honouring
//! `.gitignore`) and the recordings and proposals under `.saffron/`.

use std::path::{Path, PathBuf};

use saffron_recording::Store;

use crate::host::Change;

/// What loading found that could not be used.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LoadReport {
    pub feature_files: usize,
    pub recordings: usize,
    pub proposals: usize,
    /// Files that could not be read or validated, with the reason; they are reported and left
    /// alone, never overwritten.
    pub problems: Vec<(PathBuf, String)>,
}

/// The changes that bring an empty index to the project at `root`.
pub fn load_project(root: &Path) -> (Vec<Change>, LoadReport) {
    let mut report = LoadReport::default();
    let mut changes = Vec::new();
    for path in feature_files(root) {
        let relative = path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| path.clone());
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                report.feature_files += 1;
                changes.push(Change::SetFile { path: relative, text });
            }
            Err(error) => report.problems.push((relative, error.to_string())),
        }
    }
    match Store::open(root) {
        Ok(store) => {
            let recordings = store.load_recordings();
            for (path, recording) in recordings.found {
                report.recordings += 1;
                changes.push(Change::SetRecording { path: relative_to(root, &path), recording: Box::new(recording) });
            }
            for (path, error) in recordings.unreadable {
                let path = relative_to(root, &path);
                report.problems.push((path.clone(), error.to_string()));
                changes.push(Change::SetUnreadableRecording { path, reason: error.to_string() });
            }
            let proposals = store.load_proposals();
            for (path, proposal) in proposals.found {
                report.proposals += 1;
                changes.push(Change::SetProposal { path: relative_to(root, &path), proposal: Box::new(proposal) });
            }
            for (path, error) in proposals.unreadable {
                report.problems.push((relative_to(root, &path), error.to_string()));
            }
        }
        Err(error) => report.problems.push((root.join(".saffron"), error.to_string())),
    }
    (changes, report)
}

fn relative_to(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

/// The `.feature` and `.saffron` files under `root`, sorted, honouring `.gitignore`.
pub fn feature_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .map(|entry| entry.into_path())
        .filter(|path| saffron_syntax::SourceKind::from_path(path).is_some())
        .collect();
    files.sort();
    files
}
