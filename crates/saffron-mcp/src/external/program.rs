//! The external agent program: started in a process group of its own with the prompt on its
//! standard input, watched until it exits, and stopped with everything it started.

use std::ffi::OsString;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use saffron_agent::AgentCommand;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

/// How much of each output stream is kept: enough for the last lines of an error.
const KEPT_BYTES: usize = 16 * 1024;

/// How a program is started.
pub(crate) struct Launch<'a> {
    pub command: &'a AgentCommand,
    pub working_dir: Option<&'a Path>,
    /// Set in its environment (over what it inherits).
    pub env: Vec<(&'static str, String)>,
    /// Removed from what it inherits.
    pub env_removed: Vec<OsString>,
    /// Written to its standard input, which is then closed.
    pub stdin: String,
}

pub(crate) struct Program {
    child: Child,
    /// The process group's id (the program's pid, as it leads its own group), until the group
    /// is stopped.
    group: Option<u32>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<JoinHandle<()>>,
}

/// What the program left on its output streams (the last [`KEPT_BYTES`] of each).
pub(crate) struct Outputs {
    pub stdout: String,
    pub stderr: String,
}

impl Program {
    pub fn start(launch: Launch<'_>) -> std::io::Result<Program> {
        let mut command = match launch.command {
            AgentCommand::Shell(line) => {
                let mut shell = Command::new("sh");
                shell.arg("-c").arg(line);
                shell
            }
            AgentCommand::Argv(argv) => {
                let (program, args) =
                    argv.split_first().ok_or_else(|| std::io::Error::other("the command is empty"))?;
                let mut command = Command::new(program);
                command.args(args);
                command
            }
            // Built into an argument list by the driver before it gets here.
            AgentCommand::Client(wanted) => Command::new(wanted.client.program()),
        };
        if let Some(dir) = launch.working_dir {
            command.current_dir(dir);
        }
        for name in &launch.env_removed {
            command.env_remove(name);
        }
        command
            .envs(launch.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Only a safety net: `stop` ends the whole group.
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn()?;
        let group = child.id();
        if let Some(mut stdin) = child.stdin.take() {
            let prompt = launch.stdin;
            // A program that never reads its input must not block the session: written beside it,
            // and a closed pipe is no error.
            tokio::spawn(async move {
                let _ = stdin.write_all(prompt.as_bytes()).await;
                let _ = stdin.shutdown().await;
            });
        }
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(tokio::spawn(keep_tail(out, stdout.clone())));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(tokio::spawn(keep_tail(err, stderr.clone())));
        }
        Ok(Program { child, group, stdout, stderr, readers })
    }

    /// Resolves when the program (the group's leader) exits.
    pub async fn exited(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// Ends the program and every process of its group: SIGTERM, up to `grace` for the program
    /// to exit, then SIGKILL to the group (whatever it started in the background goes too, even
    /// when it exited on its own). Returns what it wrote.
    pub async fn stop(mut self, grace: Duration) -> Outputs {
        if let Some(group) = self.group.take() {
            signal_group(group, "TERM").await;
            let _ = tokio::time::timeout(grace, self.child.wait()).await;
            signal_group(group, "KILL").await;
        }
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        // Once the group is gone the pipes close and the readers end; a grandchild that left
        // the group and holds a pipe is not waited for.
        for reader in self.readers.drain(..) {
            let abort = reader.abort_handle();
            if tokio::time::timeout(Duration::from_secs(1), reader).await.is_err() {
                abort.abort();
            }
        }
        Outputs { stdout: lossy(&self.stdout), stderr: lossy(&self.stderr) }
    }
}

impl Drop for Program {
    /// A session dropped before it ended (the run was interrupted) still takes the program's
    /// whole group with it.
    fn drop(&mut self) {
        if let Some(group) = self.group.take() {
            let _ = std::process::Command::new("kill")
                .arg("-KILL")
                .arg("--")
                .arg(format!("-{group}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn lossy(buffer: &Mutex<Vec<u8>>) -> String {
    let bytes = buffer.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    String::from_utf8_lossy(&bytes).into_owned()
}

async fn keep_tail(mut stream: impl AsyncRead + Unpin, kept: Arc<Mutex<Vec<u8>>>) {
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => {
                let mut kept = kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                kept.extend_from_slice(&chunk[..read]);
                if kept.len() > KEPT_BYTES {
                    let excess = kept.len() - KEPT_BYTES;
                    kept.drain(..excess);
                }
            }
        }
    }
}

/// Sends `SIG<signal>` to every process of the group `group`.
async fn signal_group(group: u32, signal: &str) {
    // `kill` is a program on every Unix, so no unsafe `libc::kill` is needed (as in the runner's
    // hooks).
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(format!("-{group}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
}

/// How an exit reads in a report: `status 3`, `signal 9`.
pub(crate) fn describe_exit(status: &ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("status {code}");
    }
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(status) {
        return format!("signal {signal}");
    }
    status.to_string()
}

/// The end of a program's output for a report: the last `max_lines` non-blank lines, at most
/// `max_chars` characters.
pub(crate) fn tail(text: &str, max_lines: usize, max_chars: usize) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|line| !line.trim().is_empty()).collect();
    let kept = lines[lines.len().saturating_sub(max_lines)..].join("\n");
    let count = kept.chars().count();
    if count <= max_chars {
        return kept;
    }
    let cut: String = kept.chars().skip(count - max_chars).collect();
    format!("…{cut}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines_and_characters() {
        let text = "one\n\ntwo  \nthree\nfour\n";
        assert_eq!(tail(text, 2, 100), "three\nfour");
        assert_eq!(tail(text, 10, 100), "one\ntwo\nthree\nfour");
        assert_eq!(tail(text, 10, 6), "…e\nfour");
        assert_eq!(tail("", 10, 100), "");
    }
}
