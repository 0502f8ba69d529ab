//! A `saffron run` that is killed (SIGKILL) or stopped (SIGTERM, SIGINT) mid-replay leaves no
//! Chromium process and no profile folder behind.

#[path = "../../saffron-browser/tests/processes/mod.rs"]
mod processes;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use processes::{Reaper, nothing_left, signal, wait_for, wait_for_browser_with_a_page};

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A run mid-replay: its first page load waits on `app`, which never answers.
struct Run {
    saffron: Child,
    profile: PathBuf,
    reaper: Reaper,
    _app: TcpListener,
    temporary: tempfile::TempDir,
}

impl Run {
    /// Chromium's own scratch folders (`org.chromium.Chromium.*`, which a killed Chromium cannot
    /// remove) are not left in the temporary directory either.
    fn temporary_is_empty(&self) {
        let left: Vec<_> = std::fs::read_dir(self.temporary.path())
            .expect("the temporary directory")
            .flatten()
            .map(|entry| entry.file_name())
            .collect();
        assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    }
}

fn start_run() -> Run {
    // Connections are accepted by the kernel and never answered: the navigation hangs (30 s).
    let app = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let base_url = format!("http://{}", app.local_addr().expect("address"));
    let temporary = tempfile::Builder::new().prefix("saffron-leftovers-cli-").tempdir().expect("a temporary directory");
    let saffron = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &base_url, "features/sign_in.feature:5"])
        .current_dir(repository())
        .env("DEMO_PASSWORD", "unused")
        .env("TMPDIR", temporary.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("saffron starts");
    let profile = wait_for(Duration::from_secs(30), "a profile folder in TMPDIR", || {
        let found = std::fs::read_dir(temporary.path())
            .into_iter()
            .flatten()
            .flatten()
            .find(|entry| entry.file_name().to_string_lossy().starts_with("saffron-chromium-"));
        found.map(|entry| entry.path()).ok_or_else(|| "none yet".to_string())
    });
    let processes = wait_for_browser_with_a_page(&profile);
    let reaper = Reaper { profile: profile.clone(), processes };
    Run { saffron, profile, reaper, _app: app, temporary }
}

#[test]
fn a_killed_run_leaves_no_chromium_and_no_profile_folder() {
    let mut run = start_run();
    run.saffron.kill().expect("SIGKILL");
    run.saffron.wait().expect("reaped");
    wait_for(Duration::from_secs(15), "cleaned up after the killed run", || {
        nothing_left(&run.profile, &run.reaper.processes)
    });
    run.temporary_is_empty();
}

/// Stops a run with `name`, and checks that it exits 130 with everything already cleaned up.
fn stopped_by(name: &str) {
    let mut run = start_run();
    signal(name, &[run.saffron.id()]);
    let stderr = run.saffron.stderr.take().expect("piped");
    let said: Vec<String> = BufReader::new(stderr).lines().map_while(Result::ok).collect();
    let status = run.saffron.wait().expect("exits");
    // Done before saffron exits, not some time after.
    nothing_left(&run.profile, &run.reaper.processes).expect("nothing left once saffron exited");
    run.temporary_is_empty();
    assert_eq!(status.code(), Some(130), "{said:?}");
    assert!(said.iter().any(|line| line.contains("interrupted")), "{said:?}");
}

#[test]
fn a_terminated_run_leaves_no_chromium_and_no_profile_folder() {
    stopped_by("TERM");
}

#[test]
fn an_interrupted_run_leaves_no_chromium_and_no_profile_folder() {
    stopped_by("INT");
}

#[test]
fn a_hung_up_run_leaves_no_chromium_and_no_profile_folder() {
    stopped_by("HUP");
}
