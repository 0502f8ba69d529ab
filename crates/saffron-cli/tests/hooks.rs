//! Setup and teardown hooks through the real binary: a signal during setup stops the setup
//! command with everything it started and still runs teardown; the report lists every hook.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;

fn project(name: &str, config: &str) -> PathBuf {
    let root = support::example_project(name);
    std::fs::write(root.join("saffron.toml"), config).expect("write saffron.toml");
    root
}

/// Polls `condition` until it holds or ten seconds pass; says which.
fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::yield_now();
    }
    condition()
}

fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}

fn interrupted_during_setup(signal: &str) {
    let root = project(
        &format!("setup-{signal}"),
        "[hooks]\nsetup = \"sleep 300 & echo $! > child.pid; echo ready > ready.txt; wait\"\n\
         teardown = \"touch teardown.txt\"\ntimeout_ms = 120000\n",
    );
    let run = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", "http://127.0.0.1:9", "features/sign_in.feature"])
        .current_dir(&root)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("saffron starts");
    assert!(eventually(|| root.join("ready.txt").exists()), "the setup command started");
    let child = std::fs::read_to_string(root.join("child.pid")).expect("child pid").trim().to_string();
    assert!(running(&child), "the setup's background child runs");
    let sent = Command::new("kill").args([format!("-{signal}"), run.id().to_string()]).status().expect("kill");
    assert!(sent.success());
    let output = run.wait_with_output().expect("saffron exits");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted during setup"), "{stderr}");
    assert!(root.join("teardown.txt").exists(), "teardown ran after the interruption");
    assert!(eventually(|| !running(&child)), "the setup's background child {child} was stopped with it");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn sigterm_during_setup_stops_it_with_its_children_and_runs_teardown() {
    interrupted_during_setup("TERM");
}

#[test]
fn ctrl_c_during_setup_stops_it_with_its_children_and_runs_teardown() {
    interrupted_during_setup("INT");
}

#[test]
fn the_report_lists_every_hook_with_its_exit_code_and_duration() {
    let (runtime, server, password) = support::demo();
    let root = project(
        "hooks-report",
        "[hooks]\nsetup = [\"true\", \"echo set up\"]\nteardown = [\"exit 3\", \"touch teardown.txt\"]\n",
    );
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/sign_in.feature:11"])
        .current_dir(&root)
        .env("DEMO_PASSWORD", &password)
        .output()
        .expect("saffron runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "a failed teardown fails a passing run: {stderr}");
    assert!(stderr.contains("teardown `exit 3` failed"), "{stderr}");
    let latest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".saffron/reports/latest.json")).expect("latest.json"))
            .expect("JSON");
    let hooks: Vec<(String, String, Option<i64>)> = latest["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .map(|hook| {
            assert!(hook["durationMs"].is_u64(), "{hook}");
            (
                hook["phase"].as_str().unwrap_or_default().to_string(),
                hook["command"].as_str().unwrap_or_default().to_string(),
                hook["exitCode"].as_i64(),
            )
        })
        .collect();
    let expected = [
        ("setup", "true", Some(0)),
        ("setup", "echo set up", Some(0)),
        ("teardown", "exit 3", Some(3)),
        ("teardown", "touch teardown.txt", Some(0)),
    ];
    let expected: Vec<(String, String, Option<i64>)> =
        expected.iter().map(|(phase, command, code)| (phase.to_string(), command.to_string(), *code)).collect();
    assert_eq!(hooks, expected);
    let markdown = std::fs::read_to_string(root.join(".saffron/reports/report.md")).expect("report.md");
    assert!(markdown.contains("| teardown | `exit 3` | 3 |"), "{markdown}");
    let html = std::fs::read_to_string(root.join(".saffron/reports/report.html")).expect("report.html");
    assert!(html.contains("<h2>Hooks</h2>") && html.contains("<code>touch teardown.txt</code>"), "{html}");
    let _ = std::fs::remove_dir_all(Path::new(&root));
    let _ = runtime.block_on(server.shutdown());
}
