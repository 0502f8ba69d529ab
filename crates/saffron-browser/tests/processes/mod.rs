//! Looking at a browser's processes from outside, in /proc (Linux): which processes belong to
//! a profile folder, and whether they are still alive. Shared with the CLI's tests.

#![allow(dead_code)] // each test binary uses its own subset of the helpers

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One process, by pid and start time (so a reused pid is not taken for it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    start: u64,
    pub command: String,
}

struct Entry {
    pid: u32,
    parent: u32,
    state: char,
    start: u64,
}

fn read_stat(pid: u32) -> Option<Entry> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which may hold spaces and parentheses: state, parent, ... start time.
    let (_, rest) = stat.rsplit_once(") ")?;
    let fields: Vec<&str> = rest.split(' ').collect();
    Some(Entry {
        pid,
        state: fields.first()?.chars().next()?,
        parent: fields.get(1)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

fn all_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse().ok()).collect()
}

/// The NUL-separated items of `/proc/PID/{cmdline,environ}`.
fn items(pid: u32, file: &str) -> Vec<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/{file}")).unwrap_or_default();
    bytes
        .split(|byte| *byte == 0)
        .filter(|item| !item.is_empty())
        .map(|item| String::from_utf8_lossy(item).into())
        .collect()
}

fn command(pid: u32) -> String {
    items(pid, "cmdline").join(" ")
}

fn live(entry: &Entry) -> bool {
    !matches!(entry.state, 'Z' | 'X')
}

/// The live processes of the browser on `profile`: the one started with
/// `--user-data-dir=PROFILE`, those whose environment names the profile, and all their
/// descendants (zygotes, renderers, GPU and utility processes).
pub fn browser_processes(profile: &Path) -> Vec<Process> {
    let flag = format!("--user-data-dir={}", profile.display());
    let variable = format!("SAFFRON_BROWSER_PROFILE={}", profile.display());
    let table: Vec<Entry> = all_pids().into_iter().filter_map(read_stat).filter(live).collect();
    let mut ours: Vec<u32> = table
        .iter()
        .filter(|entry| items(entry.pid, "cmdline").contains(&flag) || items(entry.pid, "environ").contains(&variable))
        .map(|entry| entry.pid)
        .collect();
    loop {
        let children: Vec<u32> = table
            .iter()
            .filter(|entry| ours.contains(&entry.parent) && !ours.contains(&entry.pid))
            .map(|entry| entry.pid)
            .collect();
        if children.is_empty() {
            break;
        }
        ours.extend(children);
    }
    table
        .iter()
        .filter(|entry| ours.contains(&entry.pid))
        .map(|entry| Process { pid: entry.pid, start: entry.start, command: command(entry.pid) })
        .collect()
}

/// Live processes whose command line or environment mentions `profile` anywhere (the browser,
/// and the watchdog that cleans up after it).
pub fn processes_naming(profile: &Path) -> Vec<Process> {
    let needle = profile.display().to_string();
    all_pids()
        .into_iter()
        .filter(|pid| *pid != std::process::id())
        .filter_map(read_stat)
        .filter(live)
        .filter(|entry| {
            command(entry.pid).contains(&needle)
                || items(entry.pid, "environ").iter().any(|item| item.contains(&needle))
        })
        .map(|entry| Process { pid: entry.pid, start: entry.start, command: command(entry.pid) })
        .collect()
}

/// Whether the process still runs (a zombie has ended; a reused pid is another process).
pub fn is_alive(process: &Process) -> bool {
    read_stat(process.pid).is_some_and(|entry| entry.start == process.start && live(&entry))
}

/// The watchdog of `profile`'s browser, if one runs.
pub fn watchdog_of(profile: &Path) -> Option<Process> {
    let profile = profile.display().to_string();
    processes_naming(Path::new(&profile)).into_iter().find(|process| {
        items(process.pid, "cmdline").ends_with(&["saffron-browser-watchdog".to_string(), profile.clone()])
    })
}

/// Polls `check` until it returns `Some`, or panics with `what` and the last state at the deadline.
pub fn wait_for<T>(limit: Duration, what: &str, mut check: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match check() {
            Ok(value) => return value,
            Err(state) if Instant::now() >= deadline => panic!("after {limit:?}, still not {what}: {state}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Waits until the browser on `profile` has opened a page (a renderer runs), and returns all
/// its processes then.
pub fn wait_for_browser_with_a_page(profile: &Path) -> Vec<Process> {
    wait_for(Duration::from_secs(30), "a browser with a page", || {
        let processes = browser_processes(profile);
        if processes.iter().any(|process| process.command.contains("--type=renderer")) {
            Ok(processes)
        } else {
            Err(format!("{processes:#?}"))
        }
    })
}

/// Fails unless every one of `processes` and every process naming `profile` has ended and the
/// folder is gone.
pub fn nothing_left(profile: &Path, processes: &[Process]) -> Result<(), String> {
    let mut left: Vec<Process> = processes.iter().filter(|process| is_alive(process)).cloned().collect();
    for process in processes_naming(profile) {
        if !left.contains(&process) {
            left.push(process);
        }
    }
    if left.is_empty() && !profile.exists() {
        return Ok(());
    }
    Err(format!("profile folder exists: {}; processes still running: {left:#?}", profile.exists()))
}

/// Sends `signal` (e.g. `KILL`, `TERM`) to each process, with the shell's `kill`.
pub fn signal(signal: &str, pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let status = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("kill -{signal} \"$@\""))
        .arg("kill")
        .args(pids.iter().map(u32::to_string))
        .status()
        .expect("sh runs");
    assert!(status.success(), "kill -{signal} {pids:?}");
}

/// Kills whatever of a test's browser is left when the test ends, even by failing, so a failing
/// test does not leave Chromium running either.
pub struct Reaper {
    pub profile: PathBuf,
    pub processes: Vec<Process>,
}

impl Drop for Reaper {
    fn drop(&mut self) {
        let mut left: Vec<u32> =
            self.processes.iter().filter(|process| is_alive(process)).map(|process| process.pid).collect();
        left.extend(processes_naming(&self.profile).iter().map(|process| process.pid));
        left.sort_unstable();
        left.dedup();
        if !left.is_empty() {
            let _ = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg("kill -KILL \"$@\" 2>/dev/null")
                .arg("kill")
                .args(left.iter().map(u32::to_string))
                .status();
        }
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
