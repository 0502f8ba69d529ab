//! The project the server answers for: its index, kept in step with the files on disk.
//!
//! An assistant edits feature files between tool calls (and a run may write recordings), so
//! every call starts with [`Project::refresh`]: one directory walk that compares each file's
//! modification time and size with what the index last read, and re-reads only the files that
//! changed. On an unchanged project that costs a walk and a `stat` per file, not a parse.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use saffron_index::{Change, IndexHost, Snapshot};
use saffron_recording::{Store, parse_proposal, parse_recording};

use crate::config::McpConfig;

/// What a file looked like when the index last read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Feature,
    Recording,
    Proposal,
}

/// What one refresh did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refresh {
    /// Files read again, added or removed.
    pub changed: usize,
    pub took: Duration,
}

/// The project root, its config and its index.
#[derive(Debug)]
pub struct Project {
    root: PathBuf,
    config: McpConfig,
    host: IndexHost,
    seen: HashMap<PathBuf, (FileKind, Stamp)>,
    /// Proposal files that exist but do not validate, with the reason. The index has no place
    /// for them, and a reviewer still needs to hear about them.
    unreadable_proposals: BTreeMap<PathBuf, String>,
    /// Files that could not be read at all, with the reason.
    problems: BTreeMap<PathBuf, String>,
}

impl Project {
    /// Loads the project at `root` (already found by the caller, as every saffron command does).
    pub fn open(root: PathBuf) -> Project {
        let config = McpConfig::read(&root);
        let mut project = Project {
            root,
            config,
            host: IndexHost::new(),
            seen: HashMap::new(),
            unreadable_proposals: BTreeMap::new(),
            problems: BTreeMap::new(),
        };
        project.refresh();
        project
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The config as read at start (it decides which tools are listed).
    pub fn config(&self) -> &McpConfig {
        &self.config
    }

    pub fn snapshot(&self) -> Snapshot {
        self.host.snapshot()
    }

    pub fn unreadable_proposals(&self) -> &BTreeMap<PathBuf, String> {
        &self.unreadable_proposals
    }

    pub fn problems(&self) -> &BTreeMap<PathBuf, String> {
        &self.problems
    }

    /// Brings the index in line with the disk, reading only what changed since the last call.
    pub fn refresh(&mut self) -> Refresh {
        let started = Instant::now();
        let current = self.scan();
        let mut changes = Vec::new();
        for (path, (kind, stamp)) in &current {
            if self.seen.get(path) == Some(&(*kind, *stamp)) {
                continue;
            }
            if let Some(change) = self.read(path, *kind) {
                changes.push(change);
            }
        }
        let removed: Vec<(PathBuf, FileKind)> = self
            .seen
            .iter()
            .filter(|(path, _)| !current.contains_key(*path))
            .map(|(path, (kind, _))| (path.clone(), *kind))
            .collect();
        for (path, kind) in removed {
            self.problems.remove(&path);
            match kind {
                FileKind::Feature => changes.push(Change::RemoveFile { path }),
                FileKind::Recording => changes.push(Change::RemoveRecording { path }),
                FileKind::Proposal => {
                    self.unreadable_proposals.remove(&path);
                    changes.push(Change::RemoveProposal { path });
                }
            }
        }
        let changed = changes.len();
        if changed > 0 {
            self.host.apply_all(changes);
        }
        self.seen = current;
        Refresh { changed, took: started.elapsed() }
    }

    /// Reads one new or changed file into a change for the index.
    fn read(&mut self, path: &Path, kind: FileKind) -> Option<Change> {
        // The store's files are read the store's way: never through a link out of the project.
        let text = match kind {
            FileKind::Feature => std::fs::read_to_string(self.root.join(path)).map_err(|error| error.to_string()),
            FileKind::Recording | FileKind::Proposal => {
                saffron_recording::read_inside(&self.root, &self.root.join(path)).map_err(|error| error.to_string())
            }
        };
        let text = match text {
            Ok(text) => {
                self.problems.remove(path);
                text
            }
            Err(error) => {
                self.problems.insert(path.to_path_buf(), error.clone());
                let path = path.to_path_buf();
                return match kind {
                    FileKind::Feature => None,
                    FileKind::Recording => Some(Change::SetUnreadableRecording { path, reason: error }),
                    FileKind::Proposal => {
                        self.unreadable_proposals.insert(path.clone(), error);
                        Some(Change::RemoveProposal { path })
                    }
                };
            }
        };
        let path = path.to_path_buf();
        Some(match kind {
            FileKind::Feature => Change::SetFile { path, text },
            FileKind::Recording => match parse_recording(&text) {
                Ok(recording) => Change::SetRecording { path, recording: Box::new(recording) },
                Err(error) => Change::SetUnreadableRecording { path, reason: error.to_string() },
            },
            FileKind::Proposal => match parse_proposal(&text) {
                Ok(proposal) => {
                    self.unreadable_proposals.remove(&path);
                    Change::SetProposal { path, proposal: Box::new(proposal) }
                }
                Err(error) => {
                    self.unreadable_proposals.insert(path.clone(), error.to_string());
                    // A proposal that was readable before and is not now must leave the index.
                    Change::RemoveProposal { path }
                }
            },
        })
    }

    /// Every feature file (honouring `.gitignore`, as the CLI does), recording and proposal,
    /// relative to the root, with its stamp.
    fn scan(&self) -> HashMap<PathBuf, (FileKind, Stamp)> {
        let mut found = HashMap::new();
        for path in saffron_index::feature_files(&self.root) {
            if let Some(stamp) = stamp(&path) {
                found.insert(relative(&self.root, &path), (FileKind::Feature, stamp));
            }
        }
        let Ok(store) = Store::open(&self.root) else { return found };
        for (listing, kind) in
            [(store.list_recordings(), FileKind::Recording), (store.list_proposals(), FileKind::Proposal)]
        {
            for path in listing.files {
                if let Some(stamp) = stamp(&path) {
                    found.insert(relative(&self.root, &path), (kind, stamp));
                }
            }
        }
        found
    }

    /// Applies `text` as the file at `path` for the length of `work`, then puts the index back
    /// as it was: what `check_feature` needs to see a draft the way the project would, without
    /// writing a file. The index host is not `Clone`; applying and reverting one file is exact
    /// (the index gives the same state for any sequence of edits as for a cold load) and costs
    /// two parses of that file.
    pub fn with_draft<T>(&mut self, path: &Path, text: String, work: impl FnOnce(&Snapshot) -> T) -> T {
        let before = self.host.snapshot().file(path).map(|file| file.source.text.clone());
        self.host.apply(Change::SetFile { path: path.to_path_buf(), text });
        let result = work(&self.host.snapshot());
        match before {
            Some(text) => self.host.apply(Change::SetFile { path: path.to_path_buf(), text }),
            None => self.host.apply(Change::RemoveFile { path: path.to_path_buf() }),
        }
        result
    }
}

fn stamp(path: &Path) -> Option<Stamp> {
    let metadata = std::fs::metadata(path).ok()?;
    Some(Stamp { modified: metadata.modified().ok(), len: metadata.len() })
}

fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

pub use saffron_index::review::{display_path, project_path};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_paths_stay_inside_the_project() {
        assert_eq!(project_path("features/a.feature"), Some(PathBuf::from("features/a.feature")));
        assert_eq!(project_path("./features//a.feature"), Some(PathBuf::from("features/a.feature")));
        assert_eq!(project_path("../etc/passwd"), None);
        assert_eq!(project_path("/etc/passwd"), None);
        assert_eq!(project_path("features/../../x"), None);
        assert_eq!(project_path("  "), None);
    }

    #[test]
    fn refresh_reads_only_what_changed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let features = dir.path().join("features");
        std::fs::create_dir_all(&features).expect("mkdir");
        std::fs::write(features.join("a.feature"), "Feature: A\n  Scenario: S\n    Given one\n").expect("write");
        let mut project = Project::open(dir.path().to_path_buf());
        assert!(project.snapshot().entry("one").is_some());
        assert_eq!(project.refresh().changed, 0);
        std::fs::write(features.join("a.feature"), "Feature: A\n  Scenario: S\n    Given two words\n").expect("write");
        assert_eq!(project.refresh().changed, 1);
        assert!(project.snapshot().entry("one").is_none());
        std::fs::remove_file(features.join("a.feature")).expect("remove");
        assert_eq!(project.refresh().changed, 1);
        assert_eq!(project.snapshot().entry_count(), 0);
    }

    #[test]
    fn a_draft_leaves_no_trace() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("a.feature"), "Feature: A\n  Scenario: S\n    Given one\n").expect("write");
        let mut project = Project::open(dir.path().to_path_buf());
        let before = project.snapshot().canonical();
        let seen =
            project.with_draft(Path::new("a.feature"), "Feature: A\n  Scenario: S\n    Given two\n".into(), |s| {
                s.entry("two").is_some()
            });
        assert!(seen);
        project.with_draft(Path::new("b.saffron"), "Feature: B\n  Scenario: T\n    Given three\n".into(), |_| ());
        assert_eq!(project.snapshot().canonical(), before);
    }
}
