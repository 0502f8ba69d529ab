//! Setup and teardown commands around a run (the design log's 2026-09-21 entry): through the
//! shell, in the project root, with SAFFRON_BASE_URL and SAFFRON_ENV; output to stderr so it
//! never mixes with what tools parse from stdout; each bounded by a timeout.
//!
//! Each command runs in a process group of its own. A command that outlives its timeout, or
//! that is running when the run is interrupted, is stopped with its whole group (whatever it
//! started in the background goes too): SIGTERM, then SIGKILL after a grace. A command that
//! ends on its own keeps what it started: a setup may leave a server running for the run.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Which side of the replay a hook runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum HookPhase {
    /// Before the replay: the first failure stops the rest, and the run.
    Setup,
    /// After the replay (or a failed setup): every command runs, whatever the others did.
    Teardown,
    /// Before a proof replay of the agent's work: the first failure stops the rest, and the
    /// proof (the scenario is blocked).
    BeforeProof,
}

impl HookPhase {
    /// `setup` or `teardown`, as reports and messages name it.
    pub fn name(self) -> &'static str {
        match self {
            HookPhase::Setup => "setup",
            HookPhase::Teardown => "teardown",
            HookPhase::BeforeProof => "before_proof",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRun {
    pub phase: HookPhase,
    pub command: String,
    /// `None` when it could not start, or was stopped (timeout, interruption).
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub error: Option<String>,
}

impl HookRun {
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Set once the run is interrupted (Ctrl-C, SIGTERM): a running setup command is stopped with
/// its process group, no further setup command starts, and the replay ends. Cheap to clone;
/// clones share the state.
#[derive(Clone, Default)]
pub struct Interrupt {
    inner: Arc<InterruptState>,
}

#[derive(Default)]
struct InterruptState {
    triggered: AtomicBool,
    /// Hooks waiting on their command, woken by an interruption.
    waiters: Mutex<Vec<Sender<Wake>>>,
    notify: tokio::sync::Notify,
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupt").field("triggered", &self.is_triggered()).finish()
    }
}

impl Interrupt {
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Interrupts the run; every waiter wakes. Triggering twice is harmless.
    pub fn trigger(&self) {
        self.inner.triggered.store(true, Ordering::SeqCst);
        let waiters = std::mem::take(&mut *self.inner.waiters.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        for waiter in waiters {
            let _ = waiter.send(Wake::Interrupted);
        }
        self.inner.notify.notify_waiters();
    }

    pub fn is_triggered(&self) -> bool {
        self.inner.triggered.load(Ordering::SeqCst)
    }

    /// Resolves once the run is interrupted.
    pub async fn triggered(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            // Registered before the check, so a trigger in between is not missed.
            notified.as_mut().enable();
            if self.is_triggered() {
                return;
            }
            notified.await;
        }
    }

    /// Has an interruption wake `sender`; false when the run is interrupted already.
    fn subscribe(&self, sender: Sender<Wake>) -> bool {
        let mut waiters = self.inner.waiters.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.is_triggered() {
            return false;
        }
        waiters.push(sender);
        true
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    Exited,
    Interrupted,
}

/// Why a command was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    TimedOut,
    Interrupted,
}

/// How long a stopped command's group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// Runs commands in order. Setup ends at the first failure, and starts nothing once the run is
/// interrupted; teardown runs every command whatever happened (it is what cleans up), each
/// still bounded by the timeout.
pub fn run_hooks(
    commands: &[String],
    root: &Path,
    base_url: &str,
    timeout: Duration,
    phase: HookPhase,
    interrupt: &Interrupt,
) -> Vec<HookRun> {
    let mut runs = Vec::new();
    for command in commands {
        if phase != HookPhase::Teardown && interrupt.is_triggered() {
            break;
        }
        let started = Instant::now();
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(command)
            .current_dir(root)
            .env("SAFFRON_BASE_URL", base_url)
            .env("SAFFRON_ENV", std::env::var("SAFFRON_ENV").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(Stdio::from(std::io::stderr()))
            .stderr(Stdio::inherit());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut shell, 0);
        let run = match shell.spawn() {
            Err(error) => HookRun {
                phase,
                command: command.clone(),
                exit_code: None,
                duration_ms: 0,
                error: Some(error.to_string()),
            },
            Ok(child) => {
                // Teardown is not cut short by the interruption that caused it.
                let interrupt = if phase != HookPhase::Teardown { Some(interrupt) } else { None };
                wait_bounded(child, phase, command, timeout, interrupt, started)
            }
        };
        let failed = !run.succeeded();
        runs.push(run);
        if failed && phase != HookPhase::Teardown {
            break;
        }
    }
    runs
}

fn wait_bounded(
    mut child: Child,
    phase: HookPhase,
    command: &str,
    timeout: Duration,
    interrupt: Option<&Interrupt>,
    started: Instant,
) -> HookRun {
    let (wake, woken): (Sender<Wake>, Receiver<Wake>) = channel();
    let interrupted_already = interrupt.is_some_and(|interrupt| !interrupt.subscribe(wake.clone()));
    let group = child.id();
    // `wait` blocks, so it runs beside this thread, which watches the clock and the interrupt.
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = wake.send(Wake::Exited);
        status
    });
    let stopped = if interrupted_already {
        Some(Stopped::Interrupted)
    } else {
        match woken.recv_timeout(timeout) {
            Ok(Wake::Exited) => None,
            Ok(Wake::Interrupted) => Some(Stopped::Interrupted),
            Err(_) => Some(Stopped::TimedOut),
        }
    };
    if stopped.is_some() {
        signal_group(group, "TERM");
        // The waiter's `Exited` ends the grace early.
        let deadline = Instant::now() + GRACE;
        while let Ok(wake) = woken.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            if wake == Wake::Exited {
                break;
            }
        }
        // Whatever the shell started may outlive it: the group goes, the shell exited or not.
        signal_group(group, "KILL");
    }
    let status = waiter.join().unwrap_or_else(|_| Err(std::io::Error::other("the hook's waiter panicked")));
    let duration_ms = started.elapsed().as_millis() as u64;
    let command = command.to_string();
    match (stopped, status) {
        (Some(Stopped::TimedOut), _) => HookRun {
            phase,
            command,
            exit_code: None,
            duration_ms,
            error: Some(format!("stopped after {} s, with every process it started", timeout.as_secs_f64())),
        },
        (Some(Stopped::Interrupted), _) => HookRun {
            phase,
            command,
            exit_code: None,
            duration_ms,
            error: Some("stopped by the interruption, with every process it started".to_string()),
        },
        (None, Ok(status)) => HookRun { phase, command, exit_code: status.code(), duration_ms, error: None },
        (None, Err(error)) => HookRun { phase, command, exit_code: None, duration_ms, error: Some(error.to_string()) },
    }
}

/// Sends `SIG<signal>` to every process of the group led by `leader`.
fn signal_group(leader: u32, signal: &str) {
    // `kill` is a shell builtin and a program on every Unix: no unsafe `libc::kill` needed.
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(format!("-{leader}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(commands: &[&str], timeout: Duration, phase: HookPhase, interrupt: &Interrupt) -> Vec<HookRun> {
        let commands: Vec<String> = commands.iter().map(|c| c.to_string()).collect();
        run_hooks(&commands, &std::env::temp_dir(), "http://app", timeout, phase, interrupt)
    }

    #[test]
    fn setup_stops_at_the_first_failure_and_teardown_runs_everything() {
        let commands = ["test \"$SAFFRON_BASE_URL\" = http://app", "exit 3", "true"];
        let none = Interrupt::new();
        let setup = run(&commands, Duration::from_secs(10), HookPhase::Setup, &none);
        assert_eq!(setup.iter().map(|r| r.exit_code).collect::<Vec<_>>(), [Some(0), Some(3)]);
        assert!(setup.iter().all(|r| r.phase == HookPhase::Setup));
        let teardown = run(&commands, Duration::from_secs(10), HookPhase::Teardown, &none);
        assert_eq!(teardown.len(), 3);
    }

    /// Whether process `pid` still runs (a zombie counts as gone).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
    }

    fn wait_gone(pid: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if !alive(pid) {
                return true;
            }
            std::thread::yield_now();
        }
        false
    }

    #[test]
    fn a_hook_past_its_timeout_is_stopped_with_what_it_started() {
        let pid_file = tempfile::NamedTempFile::new().expect("temp file");
        let path = pid_file.path().display().to_string();
        // The hook starts a background child that would outlive it, then waits.
        let command = format!("sleep 300 & echo $! > {path}; wait");
        let runs = run(&[&command], Duration::from_millis(300), HookPhase::Setup, &Interrupt::new());
        assert_eq!(runs[0].exit_code, None);
        assert!(runs[0].error.as_deref().is_some_and(|e| e.starts_with("stopped after 0.3 s")), "{runs:?}");
        let child = std::fs::read_to_string(&path).expect("pid").trim().to_string();
        assert!(!child.is_empty());
        assert!(wait_gone(&child), "the background child {child} was stopped with the hook");
    }

    #[test]
    fn an_interrupted_setup_stops_its_command_and_starts_no_other() {
        let interrupt = Interrupt::new();
        let trigger = interrupt.clone();
        let marker = tempfile::NamedTempFile::new().expect("temp file");
        let ready = marker.path().display().to_string();
        let watcher = std::thread::spawn(move || {
            // Interrupt once the first command is surely running.
            let deadline = Instant::now() + Duration::from_secs(10);
            while std::fs::read_to_string(&ready).map(|text| text.trim().is_empty()).unwrap_or(true)
                && Instant::now() < deadline
            {
                std::thread::yield_now();
            }
            trigger.trigger();
        });
        let first = format!("echo started > {}; sleep 300", marker.path().display());
        let started = Instant::now();
        let runs = run(&[&first, "true"], Duration::from_secs(60), HookPhase::Setup, &interrupt);
        watcher.join().expect("watcher");
        assert_eq!(runs.len(), 1, "no setup command starts after the interruption: {runs:?}");
        assert!(runs[0].error.as_deref().is_some_and(|e| e.starts_with("stopped by the interruption")));
        assert!(started.elapsed() < Duration::from_secs(30), "not left to its timeout");
        // Teardown still runs every command after an interruption.
        let teardown = run(&["true", "true"], Duration::from_secs(10), HookPhase::Teardown, &interrupt);
        assert_eq!(teardown.iter().map(|r| r.exit_code).collect::<Vec<_>>(), [Some(0), Some(0)]);
    }
}
