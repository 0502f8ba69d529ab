//! The project store: `.saffron/` on disk.
//!
//! ```text
//! .saffron/
//!   .lock                                    held while writing (see Store::lock)
//!   cache/<feature-slug>/<scenario-slug>.json      recordings, committed
//!   proposals/<feature-slug>/<scenario-slug>.json  proposals pending review
//!   reports/                                 run reports
//!   artifacts/                               screenshots, traces
//! ```
//!
//! Nothing is read, written or removed through a symbolic link that leads out of `.saffron/`
//! (and `.saffron/` itself must not lead out of the project): a link planted there must not
//! make saffron show, apply, overwrite or delete a file elsewhere.
//!
//! Every write is atomic (a reader sees the old file or the new one, never part of one) and
//! happens under one store-wide lock, so two saffron processes never interleave a
//! read-modify-write of the same file. A scan never fails and never writes: it returns what
//! it could read and names what it could not.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use thiserror::Error;

use crate::handler::Handler;
use crate::layout;
use crate::model::Recording;
use crate::proposal::Proposal;
use crate::validate::{ValidationError, parse_handler, parse_proposal, parse_recording};

/// A project's `.saffron` directory.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    dir: PathBuf,
}

/// Held while writing to the store; dropping it releases the lock.
#[derive(Debug)]
pub struct StoreLock<'a> {
    store: &'a Store,
    _file: File,
}

/// What a scan found: the files it could read, and the ones it could not with the reason.
#[derive(Debug)]
pub struct Scan<T> {
    /// Readable files, by path, in path order.
    pub found: Vec<(PathBuf, T)>,
    /// Unreadable files, by path, in path order. They are reported, never overwritten.
    pub unreadable: Vec<(PathBuf, StoreError)>,
}

/// The files of one store folder, unread: the `.json` files by path, in path order, and the
/// folders that could not be listed with the reason. Dot files (temporary files of a write in
/// progress) are left out and symbolic links to folders are not followed.
#[derive(Debug, Default)]
pub struct Listing {
    /// The files, in path order.
    pub files: Vec<PathBuf>,
    /// What could not be listed.
    pub unreadable: Vec<(PathBuf, StoreError)>,
}

/// A store operation that failed, with the file it was about.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The file system refused.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The path leads outside the project (for a file of the store: outside `.saffron/`) once
    /// its symbolic links are followed.
    #[error("{}: leads outside {} through a symbolic link (to {}); saffron does not read, write or delete there", .path.display(), .boundary, .target.display())]
    OutsideProject {
        /// The path inside the project.
        path: PathBuf,
        /// Where its links lead.
        target: PathBuf,
        /// What it must stay inside: `the project` or `.saffron/`.
        boundary: &'static str,
    },
    /// The file is not a valid recording or proposal (or would not be, for a write).
    #[error("{}: {source}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The first problem.
        source: ValidationError,
    },
}

impl Store {
    /// Open the store of the project at `project_root`. Nothing is created: reading a project
    /// (`saffron status`, `steps`, `check`, an editor opening it) must leave it as it was, so
    /// `.saffron/` and its folders appear with the first file written into them.
    pub fn open(project_root: impl AsRef<Path>) -> Result<Store, StoreError> {
        let root = project_root.as_ref().to_path_buf();
        let dir = root.join(layout::DIR);
        Ok(Store { root, dir })
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.saffron/cache`.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join(layout::CACHE)
    }

    /// `.saffron/proposals`.
    pub fn proposals_dir(&self) -> PathBuf {
        self.root.join(layout::PROPOSALS)
    }

    /// `.saffron/handlers`.
    pub fn handlers_dir(&self) -> PathBuf {
        self.root.join(layout::HANDLERS)
    }

    /// `.saffron/reports`.
    pub fn reports_dir(&self) -> PathBuf {
        self.root.join(layout::REPORTS)
    }

    /// `.saffron/artifacts`.
    pub fn artifacts_dir(&self) -> PathBuf {
        self.root.join(layout::ARTIFACTS)
    }

    /// Where the recording of a scenario lives (see [`crate::feature_slug`] and
    /// [`crate::scenario_slugs`]).
    pub fn recording_path(&self, feature_slug: &str, scenario_slug: &str) -> PathBuf {
        self.root.join(layout::recording(feature_slug, scenario_slug))
    }

    /// Where the proposal for a scenario lives.
    pub fn proposal_path(&self, feature_slug: &str, scenario_slug: &str) -> PathBuf {
        self.root.join(layout::proposal(feature_slug, scenario_slug))
    }

    /// `path` relative to the project root with `/` separators, as files refer to each other
    /// (a proposal's `cachePath`); `None` when it is outside the project.
    pub fn relative_path(&self, path: &Path) -> Option<String> {
        let relative = path.strip_prefix(&self.root).ok()?;
        let parts: Option<Vec<&str>> = relative.components().map(|part| part.as_os_str().to_str()).collect();
        Some(parts?.join("/"))
    }

    /// Read and validate one recording.
    pub fn read_recording(&self, path: &Path) -> Result<Recording, StoreError> {
        parse_recording(&self.read_text(path)?)
            .map_err(|source| StoreError::Invalid { path: path.to_path_buf(), source })
    }

    /// Read and validate one interruption handler.
    pub fn read_handler(&self, path: &Path) -> Result<Handler, StoreError> {
        parse_handler(&self.read_text(path)?).map_err(|source| StoreError::Invalid { path: path.to_path_buf(), source })
    }

    /// Read and validate one proposal.
    pub fn read_proposal(&self, path: &Path) -> Result<Proposal, StoreError> {
        parse_proposal(&self.read_text(path)?)
            .map_err(|source| StoreError::Invalid { path: path.to_path_buf(), source })
    }

    /// Reads a file of the store as text, unless its links lead out of `.saffron/`. Text that
    /// is not UTF-8 is a problem of the file's content, named by line and column.
    pub fn read_text(&self, path: &Path) -> Result<String, StoreError> {
        read_within(&self.boundary()?, STORE_BOUNDARY, path)
    }

    /// Writes `bytes` to a file of the store (a report, an artifact) atomically, unless its
    /// folders lead out of `.saffron/`.
    pub fn write_file(&self, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        self.ensure_inside(path)?;
        write_atomic(path, bytes).map_err(|source| StoreError::Io { path: path.to_path_buf(), source })
    }

    /// `.saffron/` as its links resolve (as it will be once created, when it is not there
    /// yet); an error when it leads out of the project.
    fn boundary(&self) -> Result<PathBuf, StoreError> {
        let root = fs::canonicalize(&self.root).map_err(|source| StoreError::Io { path: self.root.clone(), source })?;
        match fs::canonicalize(&self.dir) {
            Ok(dir) if dir.starts_with(&root) => Ok(dir),
            Ok(dir) => Err(StoreError::OutsideProject { path: self.dir.clone(), target: dir, boundary: "the project" }),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                if self.dir.symlink_metadata().is_ok() {
                    // A dangling link: where it points is not ours to create.
                    return Err(StoreError::OutsideProject {
                        path: self.dir.clone(),
                        target: fs::read_link(&self.dir).unwrap_or_default(),
                        boundary: "the project",
                    });
                }
                Ok(root.join(layout::DIR))
            }
            Err(source) => Err(StoreError::Io { path: self.dir.clone(), source }),
        }
    }

    /// Refuses a path of the store whose folders, once their links are followed, lead out of
    /// `.saffron/`. The file itself may be a link: a write replaces the link and a removal
    /// removes it, never what it points to.
    pub fn ensure_inside(&self, path: &Path) -> Result<(), StoreError> {
        let boundary = self.boundary()?;
        let outside =
            |target: PathBuf| StoreError::OutsideProject { path: path.to_path_buf(), target, boundary: STORE_BOUNDARY };
        let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(outside(path.to_path_buf()));
        };
        // The nearest folder that exists, and the names below it that a write would create.
        let mut existing = folder;
        let mut created: Vec<&std::ffi::OsStr> = Vec::new();
        let resolved = loop {
            match fs::canonicalize(existing) {
                Ok(resolved) => break resolved,
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    let (Some(parent), Some(last)) = (existing.parent(), existing.file_name()) else {
                        return Err(outside(path.to_path_buf()));
                    };
                    created.push(last);
                    existing = parent;
                }
                Err(source) => return Err(StoreError::Io { path: existing.to_path_buf(), source }),
            }
        };
        let mut target = resolved;
        for part in created.iter().rev() {
            target.push(part);
        }
        target.push(name);
        if target.starts_with(&boundary) && target != boundary { Ok(()) } else { Err(outside(target)) }
    }

    /// Validate and write one recording, under the lock.
    pub fn write_recording(&self, path: &Path, recording: &Recording) -> Result<(), StoreError> {
        self.lock()?.write_recording(path, recording)
    }

    /// Validate and write one recording skeleton, under the lock.
    pub fn write_skeleton(&self, path: &Path, recording: &Recording) -> Result<(), StoreError> {
        self.lock()?.write_skeleton(path, recording)
    }

    /// Validate and write one proposal, under the lock.
    pub fn write_proposal(&self, path: &Path, proposal: &Proposal) -> Result<(), StoreError> {
        self.lock()?.write_proposal(path, proposal)
    }

    /// Every readable recording under `.saffron/cache`, and the unreadable ones by reason.
    pub fn load_recordings(&self) -> Scan<Recording> {
        self.scan(&self.cache_dir(), |path| self.read_recording(path))
    }

    /// Every readable handler in `.saffron/handlers` (not the proposed ones below it), and the
    /// unreadable ones by reason.
    pub fn load_handlers(&self) -> Scan<Handler> {
        let mut scan = self.scan(&self.handlers_dir(), |path| self.read_handler(path));
        let accepted = |path: &Path| path.parent() == Some(self.handlers_dir().as_path());
        scan.found.retain(|(path, _)| accepted(path));
        scan.unreadable.retain(|(path, _)| accepted(path));
        scan
    }

    /// Every readable proposed handler (`.saffron/handlers/proposed`), and the unreadable ones.
    pub fn load_handler_proposals(&self) -> Scan<Handler> {
        self.scan(&self.root.join(layout::HANDLER_PROPOSALS), |path| self.read_handler(path))
    }

    /// Every readable proposal under `.saffron/proposals`, and the unreadable ones by reason.
    pub fn load_proposals(&self) -> Scan<Proposal> {
        self.scan(&self.proposals_dir(), |path| self.read_proposal(path))
    }

    /// Take the store-wide write lock (`.saffron/.lock`), waiting for another process or
    /// thread that holds it. Hold it across a read-modify-write; the lock is advisory, so
    /// every writer goes through it.
    pub fn lock(&self) -> Result<StoreLock<'_>, StoreError> {
        let path = self.root.join(layout::LOCK);
        let io_error = |source| StoreError::Io { path: path.clone(), source };
        self.ensure_inside(&path)?;
        fs::create_dir_all(&self.dir).map_err(io_error)?;
        if path.symlink_metadata().is_ok_and(|meta| meta.file_type().is_symlink()) {
            return Err(StoreError::OutsideProject {
                path: path.clone(),
                target: fs::read_link(&path).unwrap_or_default(),
                boundary: STORE_BOUNDARY,
            });
        }
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io_error)?;
        file.lock().map_err(io_error)?;
        Ok(StoreLock { store: self, _file: file })
    }

    /// The recording files under `.saffron/cache`, unread: what [`Store::load_recordings`]
    /// would read, for a caller that decides itself which ones to read again.
    pub fn list_recordings(&self) -> Listing {
        list_json_files(&self.cache_dir())
    }

    /// The proposal files under `.saffron/proposals`, unread.
    pub fn list_proposals(&self) -> Listing {
        list_json_files(&self.proposals_dir())
    }

    fn scan<T>(&self, directory: &Path, read: impl Fn(&Path) -> Result<T, StoreError>) -> Scan<T> {
        let Listing { files, mut unreadable } = list_json_files(directory);
        let mut found = Vec::new();
        for path in files {
            match read(&path) {
                Ok(value) => found.push((path, value)),
                Err(error) => unreadable.push((path, error)),
            }
        }
        unreadable.sort_by(|a, b| a.0.cmp(&b.0));
        Scan { found, unreadable }
    }
}

impl StoreLock<'_> {
    /// Validate and write one handler (accepted or proposed).
    pub fn write_handler(&self, path: &Path, handler: &Handler) -> Result<(), StoreError> {
        self.write_checked(path, handler, |value| crate::validate::validate_handler(value).map(drop))
    }

    /// Validate and write one recording.
    pub fn write_recording(&self, path: &Path, recording: &Recording) -> Result<(), StoreError> {
        self.write_checked(path, recording, |value| crate::validate::validate_recording(value).map(drop))
    }

    /// Validate (as [`crate::validate_skeleton`]) and write a recording skeleton, to be filled
    /// in by hand: until each `Then` step checks something, readers refuse it.
    pub fn write_skeleton(&self, path: &Path, recording: &Recording) -> Result<(), StoreError> {
        self.write_checked(path, recording, |value| crate::validate::validate_skeleton(value).map(drop))
    }

    /// Validate and write one proposal.
    pub fn write_proposal(&self, path: &Path, proposal: &Proposal) -> Result<(), StoreError> {
        self.write_checked(path, proposal, |value| crate::validate::validate_proposal(value).map(drop))
    }

    /// Remove a file (an accepted or rejected proposal); a missing file is not an error. A
    /// file whose folders lead out of `.saffron/` is refused.
    pub fn remove(&self, path: &Path) -> Result<(), StoreError> {
        self.store.ensure_inside(path)?;
        match fs::remove_file(path) {
            Err(source) if source.kind() != io::ErrorKind::NotFound => {
                Err(StoreError::Io { path: path.to_path_buf(), source })
            }
            _ => Ok(()),
        }
    }

    /// The store this lock belongs to.
    pub fn store(&self) -> &Store {
        self.store
    }

    // What is written must read back through the same door, so a bug upstream cannot leave
    // a file that every later run would refuse.
    fn write_checked<T: Serialize>(
        &self,
        path: &Path,
        value: &T,
        check: impl Fn(&serde_json::Value) -> Result<(), ValidationError>,
    ) -> Result<(), StoreError> {
        let invalid = |source| StoreError::Invalid { path: path.to_path_buf(), source };
        let serialization =
            |error: serde_json::Error| StoreError::Io { path: path.to_path_buf(), source: io::Error::other(error) };
        check(&serde_json::to_value(value).map_err(serialization)?).map_err(invalid)?;
        self.store.ensure_inside(path)?;
        let bytes = to_json_bytes(value).map_err(serialization)?;
        write_atomic(path, &bytes).map_err(|source| StoreError::Io { path: path.to_path_buf(), source })
    }
}

/// JSON as saffron writes it: pretty-printed, keys in the types' declared order, and a
/// trailing newline, so files diff cleanly and rewrite byte-identically.
pub fn to_json_bytes(value: &impl Serialize) -> Result<Vec<u8>, serde_json::Error> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Replace `path` with `bytes` so that no reader ever sees a partial file: write a temporary
/// file in the same directory, fsync it, rename it over `path`. The temporary file is
/// removed when any step fails. Missing parent directories are created.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name =
        path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name"))?;
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    fs::create_dir_all(directory)?;
    // A leading dot keeps the temporary file out of scans; pid and counter keep concurrent
    // writers from sharing one.
    let temporary = directory.join(format!(
        ".{}.tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temporary, path)
    })();
    match result {
        Ok(()) => {
            // Persist the rename itself; not every platform can open a directory, and the
            // data is already safe, so a failure here is not the write's failure.
            if let Ok(handle) = File::open(directory) {
                let _ = handle.sync_all();
            }
            Ok(())
        }
        Err(error) => {
            let _ = fs::remove_file(&temporary);
            Err(error)
        }
    }
}

/// Reads `path` as text, unless its symbolic links lead outside `root` (the project).
pub fn read_inside(root: &Path, path: &Path) -> Result<String, StoreError> {
    let root = fs::canonicalize(root).map_err(|source| StoreError::Io { path: root.to_path_buf(), source })?;
    read_within(&root, "the project", path)
}

/// Reads `path` as text once its links are followed, unless that leads out of `boundary` (a
/// resolved folder, named `named` in the error).
fn read_within(boundary: &Path, named: &'static str, path: &Path) -> Result<String, StoreError> {
    let io_error = |source| StoreError::Io { path: path.to_path_buf(), source };
    let target = fs::canonicalize(path).map_err(io_error)?;
    if !target.starts_with(boundary) {
        return Err(StoreError::OutsideProject { path: path.to_path_buf(), target, boundary: named });
    }
    decode(path, fs::read(&target).map_err(io_error)?)
}

/// What a store's file must stay inside, as errors name it.
const STORE_BOUNDARY: &str = "the project's .saffron folder";

/// The file's text, or where it stops being UTF-8, as a problem of its content.
fn decode(path: &Path, bytes: Vec<u8>) -> Result<String, StoreError> {
    String::from_utf8(bytes).map_err(|error| {
        let offset = error.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&error.as_bytes()[..offset]).unwrap_or_default();
        let (line, column) = crate::validate::line_and_column(valid, offset);
        StoreError::Invalid { path: path.to_path_buf(), source: ValidationError::NotUtf8 { line, column, offset } }
    })
}

fn list_json_files(directory: &Path) -> Listing {
    let mut listing = Listing::default();
    collect_json_files(directory, &mut listing.files, &mut listing.unreadable);
    listing.files.sort();
    listing
}

// Symlinked directories are not followed, so a link loop cannot trap a scan.
fn collect_json_files(directory: &Path, files: &mut Vec<PathBuf>, unreadable: &mut Vec<(PathBuf, StoreError)>) {
    let entries = match fs::read_dir(directory) {
        Ok(entries) => entries,
        Err(source) if source.kind() == io::ErrorKind::NotFound => return,
        Err(source) => {
            unreadable.push((directory.to_path_buf(), StoreError::Io { path: directory.to_path_buf(), source }));
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(source) => {
                unreadable.push((directory.to_path_buf(), StoreError::Io { path: directory.to_path_buf(), source }));
                continue;
            }
        };
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_json_files(&path, files, unreadable),
            Ok(_) if name.ends_with(".json") => files.push(path),
            Ok(_) => {}
            Err(source) => unreadable.push((path.clone(), StoreError::Io { path, source })),
        }
    }
}

#[cfg(test)]
mod tests;
