//! The binary outside this repository: `saffron demo` brings its example project with it, and a
//! run that finds nothing to run says where it looked and fails, as Playwright's "No tests found".

use std::path::Path;
use std::process::{Command, Output};

fn saffron(folder: &Path, temp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(args)
        .current_dir(folder)
        // Where the demo writes its example project: this test's own folder.
        .env("TMPDIR", temp)
        .env_remove("SAFFRON_BASE_URL")
        .output()
        .expect("saffron runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn the_demo_outside_the_repository_replays_its_own_example_project_and_says_where_it_is() {
    let empty = tempfile::tempdir().expect("a folder");
    let temp = tempfile::tempdir().expect("a temporary directory");
    let output = saffron(empty.path(), temp.path(), &["demo"]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("18 scenario(s): 18 green"), "{all}");
    let example = temp.path().join("saffron-example");
    assert!(all.contains(&example.display().to_string()), "the demo says where its project is: {all}");
    for file in ["features/orders.saffron", "saffron.toml", ".saffron/handlers/cookie-consent.json"] {
        assert!(example.join(file).is_file(), "{file} is written out");
    }
    assert!(example.join(".saffron/reports/latest.json").is_file(), "the reports are the example's");
    assert!(std::fs::read_dir(empty.path()).expect("readable").next().is_none(), "nothing is written here");
}

/// In a project of the user's own, with features and a config of its own, the demo still replays
/// its example against the shop, not the user's scenarios (which would be blocked or red there).
#[test]
fn the_demo_in_a_project_of_ones_own_replays_the_example_not_the_project() {
    let project = tempfile::tempdir().expect("a folder");
    let temp = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(project.path().join("features")).expect("mkdir");
    std::fs::write(
        project.path().join("features/todos.feature"),
        "Feature: Todos\n  Scenario: Add a todo\n    Given I open the todo list\n    Then the list is empty\n",
    )
    .expect("a feature");
    std::fs::write(project.path().join("saffron.toml"), "base_url = \"http://127.0.0.1:9\"\n").expect("config");
    let output = saffron(project.path(), temp.path(), &["demo"]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("18 scenario(s): 18 green"), "{all}");
    assert!(!all.contains("todos.feature"), "the user's scenario is not replayed against the shop: {all}");
    assert!(!project.path().join(".saffron").exists(), "nothing is written into the user's project");
}

#[test]
fn a_run_that_finds_no_scenario_names_where_it_looked_and_fails() {
    let empty = tempfile::tempdir().expect("a folder");
    let temp = tempfile::tempdir().expect("a temporary directory");
    let output = saffron(empty.path(), temp.path(), &["run"]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("no scenario found"), "{all}");
    assert!(all.contains(&format!("project root: {}", empty.path().display())), "{all}");
    assert!(all.contains("no .feature or .saffron file"), "{all}");

    // A project with scenarios, and a selection that matches none of them.
    std::fs::create_dir_all(empty.path().join("features")).expect("mkdir");
    let feature = "Feature: Shop\n  Scenario: Buy\n    When I buy\n";
    std::fs::write(empty.path().join("features/shop.feature"), feature).expect("a feature");
    let output = saffron(empty.path(), temp.path(), &["run", "--base-url", "http://127.0.0.1:9", "--tags", "@none"]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("no scenario matches the selection"), "{all}");
    assert!(all.contains("1 feature file(s) with 1 scenario(s): features/shop.feature"), "{all}");
}

#[test]
fn the_doctor_says_what_a_run_needs_one_line_each_and_fails_when_something_is_missing() {
    let empty = tempfile::tempdir().expect("a folder");
    let temp = tempfile::tempdir().expect("a temporary directory");
    let output = saffron(empty.path(), temp.path(), &["doctor"]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "a new folder lacks nothing a run must have: {all}");
    for name in ["saffron", "project", "config", "browser", "base URL", "agent", "scenarios", "editors"] {
        assert!(all.lines().any(|line| line.contains(&format!(" {name} "))), "{name}: {all}");
    }
    assert!(all.contains("warn    base URL  none set"), "{all}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let dead = format!("http://127.0.0.1:{closed}");
    let output = saffron(empty.path(), temp.path(), &["doctor", "--base-url", &dead]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "an application not started yet is a warning: {all}");
    assert!(all.contains(&format!("warn    base URL  {dead} does not answer")), "{all}");

    // A configured agent that cannot work is missing: its key's variable is named, never a value.
    std::fs::write(empty.path().join("saffron.toml"), "[agent]\nprovider = \"anthropic\"\nmodel = \"m\"\n")
        .expect("a config");
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .arg("doctor")
        .current_dir(empty.path())
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("saffron runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("MISSING agent") && all.contains("ANTHROPIC_API_KEY"), "{all}");
    std::fs::remove_file(empty.path().join("saffron.toml")).expect("removed");

    // `program = "claude"` or `"codex"` with no such client on PATH: missing, with how to
    // install it.
    for (program, name, install) in [
        ("claude", "Claude Code", "npm install -g @anthropic-ai/claude-code"),
        ("codex", "Codex", "npm install -g @openai/codex"),
    ] {
        std::fs::write(empty.path().join("saffron.toml"), format!("[agent]\nprogram = \"{program}\"\n"))
            .expect("a config");
        let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
            .arg("doctor")
            .current_dir(empty.path())
            .env("PATH", empty.path())
            .output()
            .expect("saffron runs");
        let all = text(&output);
        assert_eq!(output.status.code(), Some(1), "{all}");
        assert!(
            all.contains("MISSING agent") && all.contains(&format!("`{program}` ({name}) is not on PATH")),
            "{all}"
        );
        assert!(all.contains(install), "the install hint: {all}");
        std::fs::remove_file(empty.path().join("saffron.toml")).expect("removed");
    }

    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .arg("doctor")
        .current_dir(empty.path())
        .env("SAFFRON_CHROMIUM", empty.path().join("no-such-browser"))
        .output()
        .expect("saffron runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("MISSING browser") && all.contains("apt-get install chromium"), "{all}");
}

/// The schemas come from the binary, byte for byte the ones published in `docs/schema/`, so an
/// editor can validate recordings and handlers in a project without this repository.
#[test]
fn the_schemas_come_from_the_binary_as_published() {
    let folder = tempfile::tempdir().expect("a folder");
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema");
    for name in ["recording", "proposal", "handler"] {
        let output = saffron(folder.path(), folder.path(), &["schema", name]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output));
        let published = std::fs::read(docs.join(format!("{name}.schema.json"))).expect("published");
        assert!(output.stdout == published, "saffron schema {name} differs from docs/schema");
    }
    let out = folder.path().join("handler.schema.json");
    let output = saffron(folder.path(), folder.path(), &["schema", "handler", "--out", "handler.schema.json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(std::fs::read(&out).expect("written"), std::fs::read(docs.join("handler.schema.json")).expect("docs"));
    let output = saffron(folder.path(), folder.path(), &["schema", "recordings"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(text(&output).contains("the schemas are recording, proposal, handler"), "{}", text(&output));
}
