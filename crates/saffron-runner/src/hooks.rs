//! Setup and teardown commands around a run (the design log's 2026-09-21 entry): through the
//! shell, in the project root, with SAFFRON_BASE_URL and SAFFRON_ENV; output to stderr so it
//! never mixes with what tools parse from stdout; each bounded by a timeout.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRun {
    pub command: String,
    /// `None` when it could not start or was stopped at the timeout.
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub error: Option<String>,
}

impl HookRun {
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Runs commands in order; `stop_on_failure` ends at the first failure (setup), otherwise all
/// run (teardown: the remaining commands still clean up).
pub fn run_hooks(
    commands: &[String],
    root: &Path,
    base_url: &str,
    timeout: Duration,
    stop_on_failure: bool,
) -> Vec<HookRun> {
    let mut runs = Vec::new();
    for command in commands {
        let started = Instant::now();
        let run = match Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(root)
            .env("SAFFRON_BASE_URL", base_url)
            .env("SAFFRON_ENV", std::env::var("SAFFRON_ENV").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(Stdio::from(std::io::stderr()))
            .stderr(Stdio::inherit())
            .spawn()
        {
            Err(error) => {
                HookRun { command: command.clone(), exit_code: None, duration_ms: 0, error: Some(error.to_string()) }
            }
            Ok(mut child) => wait_bounded(&mut child, command, timeout, started),
        };
        let failed = !run.succeeded();
        runs.push(run);
        if failed && stop_on_failure {
            break;
        }
    }
    runs
}

fn wait_bounded(child: &mut std::process::Child, command: &str, timeout: Duration, started: Instant) -> HookRun {
    let (sender, receiver) = std::sync::mpsc::channel();
    let id = child.id();
    // A watchdog ends a hook that outlives its timeout; waiting itself is a blocking `wait`.
    let watchdog = std::thread::spawn(move || {
        if receiver.recv_timeout(timeout).is_err() {
            let _ = Command::new("kill").arg("-TERM").arg(id.to_string()).status();
            return true;
        }
        false
    });
    let status = child.wait();
    let _ = sender.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    let duration_ms = started.elapsed().as_millis() as u64;
    match status {
        Ok(_) if timed_out => HookRun {
            command: command.to_string(),
            exit_code: None,
            duration_ms,
            error: Some(format!("stopped after {} s", timeout.as_secs())),
        },
        Ok(status) => HookRun { command: command.to_string(), exit_code: status.code(), duration_ms, error: None },
        Err(error) => {
            HookRun { command: command.to_string(), exit_code: None, duration_ms, error: Some(error.to_string()) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_stops_at_the_first_failure_and_teardown_runs_everything() {
        let root = std::env::temp_dir();
        let commands =
            vec!["test \"$SAFFRON_BASE_URL\" = http://app".to_string(), "exit 3".to_string(), "true".to_string()];
        let setup = run_hooks(&commands, &root, "http://app", Duration::from_secs(10), true);
        assert_eq!(setup.iter().map(|r| r.exit_code).collect::<Vec<_>>(), [Some(0), Some(3)]);
        let teardown = run_hooks(&commands, &root, "http://app", Duration::from_secs(10), false);
        assert_eq!(teardown.len(), 3);
    }

    #[test]
    fn a_hook_past_its_timeout_is_stopped() {
        let runs = run_hooks(&["sleep 30".to_string()], &std::env::temp_dir(), "x", Duration::from_millis(200), true);
        assert_eq!(runs[0].exit_code, None);
        assert!(runs[0].error.as_deref().is_some_and(|e| e.starts_with("stopped after")));
    }
}
