//! The browser's profile folder, and what ties Chromium's life to ours: an owner lock in the
//! folder, and a watchdog process that ends the browser and removes the folder as soon as we close
//! it or die, however we die.
//!
//! Why a watchdog: a parent-death signal for Chromium needs `pre_exec` (unsafe code, forbidden
//! here), and chromiumoxide builds Chromium's command itself, so it cannot be put in a process
//! group of its own. A `/bin/sh` watchdog holds the read end of a pipe whose write end only this
//! process holds; the kernel closes that end when this process exits, even by SIGKILL, and the
//! watchdog wakes up. It finds the browser's processes by the profile path (in the command line
//! or in an environment variable set for Chromium) and by descent from them, so it never touches a
//! process that is not this browser's.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};
use std::time::{Duration, Instant};

/// The profile folders' name prefix, in the temporary directory.
pub(crate) const PROFILE_PREFIX: &str = "saffron-chromium-";

/// The name prefix of Firefox's profile folders.
pub(crate) const FIREFOX_PREFIX: &str = "saffron-firefox-";

/// The name prefix of the folders that watch a program Saffron starts (an external agent).
pub(crate) const PROGRAM_PREFIX: &str = "saffron-program-";

/// Set in Chromium's environment to its profile folder: how the watchdog finds the processes that
/// do not name the profile in their command line (the crash handlers).
pub(crate) const PROFILE_ENV: &str = "SAFFRON_BROWSER_PROFILE";

/// Held locked (`flock`) by the owner for the folder's whole life; the kernel lets go of it when
/// the owner dies, so a lock that can be taken proves the owner is gone.
const OWNER_LOCK: &str = "saffron-owner.lock";

/// How long closing waits for the watchdog to end the browser and remove the folder.
const RELEASE_LIMIT: Duration = Duration::from_secs(10);

#[cfg(target_os = "linux")]
const WATCHDOG_SCRIPT: &str = include_str!("watchdog.sh");

/// The name the watchdog runs under (its `$0`), so that it can be told apart in a process list.
pub(crate) const WATCHDOG_NAME: &str = "saffron-browser-watchdog";

/// One browser's profile folder, locked by this process and watched.
pub(crate) struct Profile {
    /// Removes the folder when dropped, where no watchdog does it first.
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
    owner_lock: Option<File>,
    watchdog: Option<Watchdog>,
}

impl Profile {
    /// Creates a fresh profile folder in `parent`, takes its owner lock, and starts its watchdog.
    pub(crate) fn create(parent: &Path) -> std::io::Result<Profile> {
        Profile::create_named(parent, PROFILE_PREFIX)
    }

    pub(crate) fn create_named(parent: &Path, prefix: &str) -> std::io::Result<Profile> {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(parent)?;
        let path = dir.path().to_path_buf();
        // The watchdog's patterns are lines, and chromiumoxide passes the path as text: a path
        // that is not one line of UTF-8 could not be matched exactly.
        if path.to_str().is_none_or(|text| text.contains('\n')) {
            return Err(std::io::Error::other(format!(
                "the temporary directory {} is not a single line of UTF-8: set TMPDIR to another one",
                parent.display()
            )));
        }
        let owner_lock = take_owner_lock(&path)?;
        let watchdog = Watchdog::start(&path, true)?;
        Ok(Profile { dir: Some(dir), path, owner_lock: Some(owner_lock), watchdog })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Ends every process of the browser that is still running and removes the folder; returns
    /// when that is done (or after [`RELEASE_LIMIT`]).
    pub(crate) fn release(&mut self) {
        if let Some(watchdog) = self.watchdog.take() {
            watchdog.release(RELEASE_LIMIT);
        }
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
        // Last: until the folder is gone, a sweep must see it as owned.
        self.owner_lock.take();
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        self.release();
    }
}

/// A folder in the temporary directory that ties a program Saffron starts (an external agent
/// program) to this process's life, by the watchdog that does it for a launched browser: every
/// process started with [`WatchedFolder::env`] in its environment, and every process descended
/// from one (whatever process group it moved to), is ended when the folder is released, and
/// when this process dies, SIGKILL included. The folder goes with them.
pub struct WatchedFolder {
    profile: Profile,
}

impl WatchedFolder {
    /// A fresh folder, locked and watched; the stale folders of dead runs are swept first.
    pub fn create() -> std::io::Result<WatchedFolder> {
        let temporary = std::env::temp_dir();
        sweep_stale_profiles(&temporary);
        Ok(WatchedFolder { profile: Profile::create_named(&temporary, PROGRAM_PREFIX)? })
    }

    /// The variable to set in the environment of each program the folder watches.
    pub fn env(&self) -> (&'static str, String) {
        (PROFILE_ENV, self.profile.path().to_string_lossy().into_owned())
    }

    /// Ends every watched process still running and removes the folder; returns when that is
    /// done (at most ten seconds).
    pub fn release(mut self) {
        self.profile.release();
    }
}

/// Locks a new owner lock file: written under a temporary name, locked, then renamed into place,
/// so a sweep never finds it unlocked while its owner lives.
fn take_owner_lock(profile: &Path) -> std::io::Result<File> {
    let mut temporary = tempfile::Builder::new().prefix(".saffron-owner").tempfile_in(profile)?;
    temporary.as_file().lock()?;
    writeln!(temporary, "{}", std::process::id())?;
    temporary.persist(profile.join(OWNER_LOCK)).map_err(|error| error.error)
}

/// The watchdog process, and our end of its pipe.
struct Watchdog {
    process: Child,
    /// Dropping it is the watchdog's signal to clean up.
    owner_end: Option<ChildStdin>,
}

impl Watchdog {
    /// Starts a watchdog for `profile`; with `wait_for_owner` false it cleans up at once.
    #[cfg(target_os = "linux")]
    fn start(profile: &Path, wait_for_owner: bool) -> std::io::Result<Option<Watchdog>> {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        let mut process = Command::new("/bin/sh")
            .arg("-c")
            .arg(WATCHDOG_SCRIPT)
            .arg(WATCHDOG_NAME)
            .arg(profile)
            .stdin(if wait_for_owner { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Out of our process group: a signal sent to the group (Ctrl-C in a terminal, a CI
            // runner cancelling a job) reaches us and Chromium, never the one that cleans up after.
            .process_group(0)
            .spawn()?;
        let owner_end = process.stdin.take();
        Ok(Some(Watchdog { process, owner_end }))
    }

    #[cfg(not(target_os = "linux"))]
    fn start(_profile: &Path, _wait_for_owner: bool) -> std::io::Result<Option<Watchdog>> {
        Ok(None)
    }

    /// Tells the watchdog to clean up now and waits until it has, at most `limit`.
    fn release(mut self, limit: Duration) {
        drop(self.owner_end.take());
        let deadline = Instant::now() + limit;
        loop {
            match self.process.try_wait() {
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                Ok(None) => {
                    let _ = self.process.kill();
                    let _ = self.process.wait();
                    return;
                }
                _ => return,
            }
        }
    }
}

/// Removes the profile folders in `parent` (the temporary directory, for [`Browser::launch`])
/// whose owner is provably gone: a folder of this user named `saffron-chromium-*` whose owner
/// lock can be taken. On Linux, the browser processes still running on such a folder are ended
/// first. A live run's folder is locked and kept; a folder without an owner lock (one being
/// created, or left by an older version) is kept too. Returns the folders removed.
///
/// [`Browser::launch`]: crate::Browser::launch
pub fn sweep_stale_profiles(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else { return Vec::new() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if ![PROFILE_PREFIX, PROGRAM_PREFIX, FIREFOX_PREFIX].iter().any(|prefix| name.starts_with(prefix)) {
            continue;
        }
        let path = entry.path();
        // Not followed: a link named like a profile is not one.
        let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
        if !metadata.is_dir() || !owned_by_us(&metadata) {
            continue;
        }
        let Ok(lock) = File::open(path.join(OWNER_LOCK)) else { continue };
        if lock.try_lock().is_err() {
            continue;
        }
        // Holding the lock, so two sweeps never clean one folder at once.
        match Watchdog::start(&path, false) {
            Ok(Some(watchdog)) => watchdog.release(RELEASE_LIMIT),
            _ => {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
        if std::fs::symlink_metadata(&path).is_err() {
            removed.push(path);
        }
    }
    removed
}

/// Whether the folder belongs to the user this process runs as: another user's folder, even a
/// stale one, is theirs to clean.
#[cfg(target_os = "linux")]
fn owned_by_us(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|me| me.uid() == metadata.uid())
}

#[cfg(not(target_os = "linux"))]
fn owned_by_us(_metadata: &std::fs::Metadata) -> bool {
    true
}
