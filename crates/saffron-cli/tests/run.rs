//! `saffron run` and `saffron demo` end to end: the real binary replays the example project's
//! recordings in headless Chromium against the demo app.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use saffron_demo::{Defect, DemoConfig, DemoServer, Drift};
use support::copy_dir;

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn saffron(args: &[&str], password: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(args)
        .current_dir(repository())
        .env("DEMO_PASSWORD", password)
        .output()
        .expect("saffron runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime")
}

#[test]
fn the_demo_replays_every_example_scenario_green() {
    let output =
        Command::new(env!("CARGO_BIN_EXE_saffron")).arg("demo").current_dir(repository()).output().expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("14 scenario(s): 14 green, 0 red, 0 blocked"), "{all}");
    let reports = repository().join(".saffron/reports");
    let latest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("latest.json")).expect("latest.json"))
            .expect("json");
    assert_eq!(latest["green"], 14);
    let junit = std::fs::read_to_string(reports.join("junit.xml")).expect("junit.xml");
    assert_eq!(junit.matches("<testcase ").count(), 14);
    assert!(junit.contains("failures=\"0\""));
    assert!(std::fs::read_to_string(reports.join("report.md")).expect("md").contains("**14 green**"));
    assert!(std::fs::read_to_string(reports.join("report.html")).expect("html").contains("14 green"));
}

#[test]
fn a_wrong_total_is_red_never_green() {
    let runtime = runtime();
    let config = DemoConfig { defects: [Defect::WrongTotal].into(), ..DemoConfig::default() };
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let output = saffron(&["run", "--base-url", &server.url(), "features/new_order.saffron"], &password);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("✗ red") && all.contains("the saved total is"), "{all}");
    assert!(all.contains("expected text \"Total: €13.50\""), "{all}");
    // The secret never reaches the output.
    assert!(!all.contains(&password), "{all}");
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn a_renamed_label_passes_through_a_lower_tier_and_reports_drift() {
    let runtime = runtime();
    let config = DemoConfig { drift: [Drift::RenamedLabel].into(), ..DemoConfig::default() };
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let output = saffron(&["run", "--base-url", &server.url(), "features/sign_in.feature:5"], &password);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("✓ green") && all.contains("drift:"), "{all}");
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn a_missing_browser_is_blocked_not_a_verdict() {
    let runtime = runtime();
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/sign_in.feature"])
        .current_dir(repository())
        .env("SAFFRON_CHROMIUM", "/nonexistent/chromium")
        .output()
        .expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("! blocked") && all.contains("apt-get install chromium"), "{all}");
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn an_unrecorded_scenario_is_red_with_needs_recording() {
    let runtime = runtime();
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let output = saffron(&["run", "--base-url", &server.url(), "--tags", "@wip"], "unused");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("Refund an order") && all.contains("needs recording"), "{all}");
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn secrets_come_from_the_project_env_file() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let project = std::env::temp_dir().join(format!("saffron-dotenv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    copy_dir(&repository().join("features"), &project.join("features"));
    copy_dir(&repository().join(".saffron/cache"), &project.join(".saffron/cache"));
    std::fs::write(project.join(".env"), format!("# the demo account\nDEMO_PASSWORD=\"{password}\"\n")).expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/sign_in.feature:5"])
        .current_dir(&project)
        .env_remove("DEMO_PASSWORD")
        .output()
        .expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

fn project_copy(name: &str) -> std::path::PathBuf {
    let project = std::env::temp_dir().join(format!("saffron-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    copy_dir(&repository().join("features"), &project.join("features"));
    copy_dir(&repository().join(".saffron/cache"), &project.join(".saffron/cache"));
    project
}

#[test]
fn hooks_run_around_the_run_and_a_failed_setup_stops_it() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let project = project_copy("hooks");
    std::fs::write(
        project.join("saffron.toml"),
        format!(
            "base_url = \"{}\"\n[hooks]\nsetup = \"echo $SAFFRON_BASE_URL > setup.txt\"\nteardown = [\"touch teardown.txt\"]\n",
            server.url()
        ),
    )
    .expect("write");
    let run = |project: &Path| {
        Command::new(env!("CARGO_BIN_EXE_saffron"))
            .args(["run", "features/sign_in.feature:11"])
            .current_dir(project)
            .env("DEMO_PASSWORD", &password)
            .output()
            .expect("runs")
    };
    let output = run(&project);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let setup = std::fs::read_to_string(project.join("setup.txt")).expect("setup ran");
    assert_eq!(setup.trim(), server.url(), "the base URL from saffron.toml reached the hook");
    assert!(project.join("teardown.txt").exists());

    std::fs::remove_file(project.join("teardown.txt")).expect("remove");
    std::fs::write(project.join("saffron.toml"), "[hooks]\nsetup = \"exit 7\"\nteardown = \"touch teardown.txt\"\n")
        .expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &server.url(), "features/sign_in.feature"])
        .current_dir(&project)
        .output()
        .expect("runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("setup failed, no scenario was run") && !all.contains("green"), "{all}");
    assert!(project.join("teardown.txt").exists(), "teardown runs after a failed setup");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn shards_split_the_suite_without_overlap() {
    let runtime = runtime();
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let names = |shard: &str| {
        let output = saffron(
            &["run", "--base-url", &server.url(), "--shard", shard, "--format", "json", "--tags", "@wip or @auth"],
            "unused",
        );
        let results: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
        results
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r["name"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    let (first, second) = (names("1/2"), names("2/2"));
    assert_eq!(first.len() + second.len(), 3, "{first:?} {second:?}");
    assert!(first.iter().all(|name| !second.contains(name)));
    let bad = saffron(&["run", "--base-url", &server.url(), "--shard", "3/2"], "unused");
    assert_eq!(bad.status.code(), Some(2));
    let _ = runtime.block_on(server.shutdown());
}
