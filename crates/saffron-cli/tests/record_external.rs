//! An external agent program records a scenario the way a built-in provider does: `saffron run`
//! serves the tool gateway to it over MCP streamable HTTP (loopback, bearer token), and the
//! program, a scripted client of the official Python `mcp` package, reads the snapshots it is
//! sent to find its refs. The recording is proof-replayed, saved, and replayed again without
//! the program.

use crate::support;

use std::path::Path;
use std::process::Command;

use saffron_demo::{DemoConfig, DemoServer};
use support::agent::{every_file, project, runtime, saffron_run, scenario_at, text};

/// Whether python3 can import the `mcp` client; CI installs it, so a missing one fails unless
/// `SAFFRON_SKIP_PYTHON_MCP=1` says to skip.
fn python_has_mcp() -> bool {
    let importable =
        Command::new("python3").args(["-c", "import mcp, httpx2"]).output().is_ok_and(|output| output.status.success());
    if !importable && std::env::var("SAFFRON_SKIP_PYTHON_MCP").as_deref() == Ok("1") {
        eprintln!("SKIPPED: python3 cannot import the `mcp` client (SAFFRON_SKIP_PYTHON_MCP=1)");
        return false;
    }
    assert!(
        importable,
        "python3 cannot import the `mcp` client: `python3 -m pip install -r tests/mcp/requirements.txt` \
         (or set SAFFRON_SKIP_PYTHON_MCP=1 to skip this test)"
    );
    true
}

#[test]
fn an_external_agent_program_records_a_scenario_through_the_mcp_gateway() {
    if !python_has_mcp() {
        return;
    }
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project("external", &password);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external/sign_in_agent.py");
    let toml = format!("[agent]\ncommand = [\"python3\", {:?}]\n", script.display().to_string());
    std::fs::write(root.join("saffron.toml"), toml).expect("write saffron.toml");
    let target = vec![scenario_at(&root, "features/sign_in.feature", "Sign in with the demo account")];

    let output = saffron_run(&root, &demo.url(), &target);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");
    assert!(all.contains("cost not reported"), "{all}");
    let saved = root.join(".saffron/cache/sign-in/sign-in-with-the-demo-account.json");
    let recording = std::fs::read_to_string(&saved).expect("the recording was saved");
    assert!(recording.contains("{env:DEMO_PASSWORD}") && recording.contains("expectNoConsoleErrors"), "{recording}");

    // Replayed without the program: a command that would fail proves it is not started.
    std::fs::write(root.join("saffron.toml"), "[agent]\ncommand = \"exit 7\"\n").expect("write saffron.toml");
    let output = saffron_run(&root, &demo.url(), &target);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");

    let mut files = Vec::new();
    every_file(&root.join(".saffron"), &mut files);
    for file in files {
        let bytes = std::fs::read(&file).expect("read");
        assert!(!String::from_utf8_lossy(&bytes).contains(&password), "{} holds the password", file.display());
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// Whether `pid` is a process that has not ended (a zombie has).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next()))
        .flatten()
        .is_some_and(|state| !matches!(state, 'Z' | 'X'))
}

/// `saffron run` killed (SIGKILL) while an external agent program records: the program, a
/// child it left in its process group and one it moved to a session of its own all end, as a
/// launched browser does.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_run_takes_the_agent_program_and_everything_it_started_along() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project("external-killed", &password);
    let pids = tempfile::tempdir().expect("a folder for the pid files");
    let write = |name: &str| pids.path().join(name).display().to_string();
    let script = format!(
        "sleep 300 & echo $! > '{}'; setsid sleep 301 & echo $! > '{}'; echo $$ > '{}.tmp' && mv '{}.tmp' '{}'; sleep 302",
        write("child"),
        write("escaped"),
        write("agent"),
        write("agent"),
        write("agent"),
    );
    let toml = format!("[agent]\ncommand = [\"sh\", \"-c\", {script:?}]\n");
    std::fs::write(root.join("saffron.toml"), toml).expect("write saffron.toml");
    let target = scenario_at(&root, "features/sign_in.feature", "Sign in with the demo account");
    let mut saffron = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &demo.url(), &target])
        .current_dir(&root)
        .env_remove("DEMO_PASSWORD")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("saffron starts");
    let read_pid = |name: &str| -> Option<u32> {
        std::fs::read_to_string(pids.path().join(name)).ok().and_then(|text| text.trim().parse().ok())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let started = loop {
        if let (Some(agent), Some(child), Some(escaped)) = (read_pid("agent"), read_pid("child"), read_pid("escaped"))
            && [agent, child, escaped].into_iter().all(running)
        {
            break [agent, child, escaped];
        }
        assert!(std::time::Instant::now() < deadline, "the agent program did not start its children");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    saffron.kill().expect("SIGKILL");
    saffron.wait().expect("reaped");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while started.into_iter().any(running) {
        assert!(std::time::Instant::now() < deadline, "still running after the killed run: {started:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}
