//! Reading a project from disk into changes for the index: its feature files (honouring
//! `.gitignore`) and the recordings and proposals under `.saffron/`.

use std::path::{Path, PathBuf};

use saffron_recording::{Store, StoreError, ValidationError, layout};
use saffron_syntax::decode_source;

use crate::host::Change;

/// What loading found that could not be used.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LoadReport {
    pub feature_files: usize,
    pub recordings: usize,
    pub proposals: usize,
    /// Files that could not be read or validated; they are reported and left alone, never
    /// overwritten.
    pub problems: Vec<LoadProblem>,
}

/// A file loading could not use, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadProblem {
    /// Relative to the project root.
    pub path: PathBuf,
    /// 1-based line and column of the problem in the file: where the JSON path the validator
    /// names (in `message`) is written; 1:1 when it concerns the whole file.
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The file could not be read at all, as opposed to read and found invalid.
    pub unreadable: bool,
}

impl LoadProblem {
    fn unreadable(path: PathBuf, error: &std::io::Error) -> LoadProblem {
        LoadProblem { path, line: 1, column: 1, message: format!("cannot be read: {error}"), unreadable: true }
    }

    fn from_store(path: PathBuf, error: &StoreError) -> LoadProblem {
        match error {
            StoreError::Io { source, .. } => LoadProblem::unreadable(path, source),
            StoreError::OutsideProject { target, boundary, .. } => LoadProblem {
                path,
                line: 1,
                column: 1,
                message: format!(
                    "cannot be read: it leads outside {boundary} through a symbolic link (to {})",
                    target.display()
                ),
                unreadable: true,
            },
            StoreError::Invalid { source: ValidationError::Syntax { line, column, message }, .. } => LoadProblem {
                path,
                line: *line,
                column: *column,
                message: format!("invalid JSON: {message}"),
                unreadable: false,
            },
            StoreError::Invalid { source, .. } => {
                let (line, column) = source.location().unwrap_or((1, 1));
                LoadProblem { path, line, column, message: source.to_string(), unreadable: false }
            }
        }
    }
}

/// The changes that bring an empty index to the project at `root`.
pub fn load_project(root: &Path) -> (Vec<Change>, LoadReport) {
    let mut report = LoadReport::default();
    let mut changes = Vec::new();
    // Read on all cores: with hundreds of files, reading them one by one left a core idle.
    let read = crate::host::map_in_parallel(feature_files(root), |path| {
        let source = std::fs::read(&path).map(decode_source);
        (path, source)
    });
    for (path, source) in read {
        let relative = path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| path.clone());
        match source {
            Ok(Ok(text)) => {
                report.feature_files += 1;
                changes.push(Change::SetFile { path: relative, text });
            }
            Ok(Err(bad)) => report.problems.push(LoadProblem {
                path: relative,
                line: bad.location.line as usize,
                column: bad.location.column as usize,
                message: bad.to_string(),
                unreadable: false,
            }),
            Err(error) => report.problems.push(LoadProblem::unreadable(relative, &error)),
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
                report.problems.push(LoadProblem::from_store(path.clone(), &error));
                changes.push(Change::SetUnreadableRecording { path, reason: error.to_string() });
            }
            let proposals = store.load_proposals();
            for (path, proposal) in proposals.found {
                report.proposals += 1;
                changes.push(Change::SetProposal { path: relative_to(root, &path), proposal: Box::new(proposal) });
            }
            for (path, error) in proposals.unreadable {
                report.problems.push(LoadProblem::from_store(relative_to(root, &path), &error));
            }
        }
        Err(error) => report.problems.push(LoadProblem::from_store(PathBuf::from(layout::DIR), &error)),
    }
    changes.push(crate::history::change(root));
    (changes, report)
}

fn relative_to(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

/// The `.feature` and `.saffron` files under `root`, sorted; what cannot be walked is left out.
pub fn feature_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walk_feature_files(root).filter_map(Result::ok).collect();
    files.sort();
    files
}

/// The one walk that finds a project's `.feature` and `.saffron` files under `folder`, in walk
/// order, honouring `.gitignore`, with what could not be walked as errors. A folder below
/// `folder` with a `saffron.toml` of its own is another project (a fixture, an example) and
/// is not walked, as cargo leaves a nested workspace alone.
pub fn walk_feature_files(folder: &Path) -> impl Iterator<Item = Result<PathBuf, ignore::Error>> + use<> {
    ignore::WalkBuilder::new(folder)
        .filter_entry(|entry| {
            entry.depth() == 0
                || !entry.file_type().is_some_and(|kind| kind.is_dir())
                || !entry.path().join("saffron.toml").is_file()
        })
        .build()
        .filter_map(|entry| match entry {
            Ok(entry) if entry.file_type().is_some_and(|kind| kind.is_file()) => {
                saffron_syntax::SourceKind::from_path(entry.path()).is_some().then(|| Ok(entry.into_path()))
            }
            Ok(_) => None,
            Err(error) => Some(Err(error)),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_with_its_own_saffron_toml_is_another_project_and_is_not_walked() {
        let root = tempfile::tempdir().expect("temp dir");
        let write = |path: &str| {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "Feature: x\n").expect("write");
        };
        write("features/a.feature");
        write("tests/fixture/features/b.feature");
        write("tests/fixture/saffron.toml");
        write("docs/examples/c.feature");
        let found: Vec<PathBuf> =
            feature_files(root.path()).iter().map(|path| relative_to(root.path(), path)).collect();
        assert_eq!(found, [PathBuf::from("docs/examples/c.feature"), PathBuf::from("features/a.feature")]);
        // Walked from inside, the nested project is a project like any other.
        assert_eq!(feature_files(&root.path().join("tests/fixture")).len(), 1);
    }
}
