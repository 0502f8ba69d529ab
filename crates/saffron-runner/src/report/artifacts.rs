//! A run's artifacts folder, `.saffron/artifacts/run-<time>-<pid>-<n>/`: its failure screenshots
//! and traces. Traces are written into it while the run goes (a large run must not hold them in
//! memory), the screenshots and reports when it ends; the next run clears it.
//!
//! The folder is made as `.run-….tmp`, locked, then renamed into place: a run that clears
//! earlier runs' folders never sees one that is not yet locked.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use saffron_recording::layout;

/// Held by a run while it writes its pictures and reports: another run clears every earlier
/// run's folder, but never one whose writer still holds this.
pub(crate) const WRITING_LOCK: &str = ".writing";

/// One run's artifacts folder, made when the first file is written into it.
#[derive(Debug)]
pub struct RunFolder {
    root: PathBuf,
    run: String,
    /// The held lock, once the folder exists.
    lock: Mutex<Option<File>>,
    /// Names handed out by [`RunFolder::free_name`].
    taken: Mutex<std::collections::HashSet<String>>,
}

impl RunFolder {
    /// The folder of a new run of the project at `root`; nothing is made yet.
    pub fn new(root: &Path) -> RunFolder {
        RunFolder { root: root.to_path_buf(), run: run_id(), lock: Mutex::new(None), taken: Mutex::default() }
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `run-<time>-<pid>-<n>`.
    pub fn run(&self) -> &str {
        &self.run
    }

    fn path(&self) -> PathBuf {
        self.root.join(layout::ARTIFACTS).join(&self.run)
    }

    /// Makes the folder and takes its lock, unless done already.
    fn ensure(&self) -> std::io::Result<()> {
        let mut lock = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if lock.is_some() {
            return Ok(());
        }
        let store = saffron_recording::Store::open(&self.root).map_err(std::io::Error::other)?;
        let folder = self.path();
        store.ensure_inside(&folder.join(WRITING_LOCK)).map_err(std::io::Error::other)?;
        let staging = self.root.join(layout::ARTIFACTS).join(format!(".{}.tmp", self.run));
        std::fs::create_dir_all(&staging)?;
        let file = File::create(staging.join(WRITING_LOCK))?;
        file.lock()?;
        std::fs::rename(&staging, &folder)?;
        *lock = Some(file);
        Ok(())
    }

    /// Writes `bytes` to `name` (a path inside the folder, `/`-separated) atomically; the
    /// path relative to the project root.
    pub fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<String> {
        self.ensure()?;
        let path = self.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        saffron_recording::write_atomic(&path, bytes)?;
        Ok(format!("{}/{}/{name}", layout::ARTIFACTS, self.run))
    }

    /// A name in `folder` (inside the run folder) not taken yet: `stem.ext`, else `stem-2.ext`, …
    pub fn free_name(&self, folder: &str, stem: &str, extension: &str) -> String {
        let mut taken = self.taken.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut name = format!("{folder}/{stem}.{extension}");
        let mut number = 1;
        while taken.contains(&name) {
            number += 1;
            name = format!("{folder}/{stem}-{number}.{extension}");
        }
        taken.insert(name.clone());
        name
    }

    /// Lets go of the folder: later runs may clear it.
    pub fn release(&self) {
        let mut lock = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if lock.take().is_some() {
            let _ = std::fs::remove_file(self.path().join(WRITING_LOCK));
        }
    }

    /// Removes the artifacts of earlier runs: every run folder but this one, unless its run is
    /// still writing (it holds its lock; it will clear ours when it finishes, as the later run).
    pub fn clear_earlier_runs(&self) {
        let artifacts = self.root.join(layout::ARTIFACTS);
        let Ok(entries) = std::fs::read_dir(&artifacts) else { return };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name == self.run || !name.starts_with("run-") || !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                continue;
            }
            let writing =
                std::fs::File::open(entry.path().join(WRITING_LOCK)).is_ok_and(|file| file.try_lock().is_err());
            if !writing {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

impl Drop for RunFolder {
    fn drop(&mut self) {
        self.release();
    }
}

/// A name for a run's artifacts folder: sorts by time, and is unique across processes (the
/// pid) and within one (a counter: an MCP server may run twice at once).
fn run_id() -> String {
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or_default();
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("run-{millis:013}-{}-{run}", std::process::id())
}
