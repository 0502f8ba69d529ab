//! `saffron check` and `saffron messages`, run as a user runs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The shared corpora: `SAFFRON_CORPUS` (for a checkout that is not beside `shared/`, such as a
/// worktree), else `../shared/corpus` beside the repository.
fn corpus() -> PathBuf {
    match std::env::var_os("SAFFRON_CORPUS") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    }
}

fn saffron(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron")).args(args).current_dir(cwd).output().expect("saffron runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_whole_sylius_corpus_checks_clean() {
    let output = saffron(&["check", "sylius"], &corpus());
    assert_eq!(output.status.code(), Some(0), "stdout: {}", stdout(&output));
    let summary = String::from_utf8_lossy(&output.stderr);
    assert!(summary.contains("checked 820 file(s), 17509 step(s)"), "{summary}");
}

#[test]
fn each_bad_file_fails_at_the_reference_line() {
    let bad = corpus().join("gherkin/bad");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&bad)
        .expect("bad corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "feature"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 12);
    for file in files {
        let expected: Value = {
            let text = std::fs::read_to_string(format!("{}.errors.ndjson", file.display())).expect("errors");
            serde_json::from_str(text.lines().next().expect("one error")).expect("json")
        };
        let line = expected["parseError"]["source"]["location"]["line"].as_u64().expect("line");
        let name = file.file_name().and_then(|n| n.to_str()).expect("name").to_string();
        let output = saffron(&["check", &name], &bad);
        assert_eq!(output.status.code(), Some(1), "{name}");
        let text = stdout(&output);
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with(&format!("{name}:{line}:")), "{name}: {first}");
        assert!(first.contains(": error: "), "{first}");
        assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("  hint: ")), "{text}");
    }
}

#[test]
fn json_format_lists_file_line_column_severity_message_hint() {
    let bad = corpus().join("gherkin/bad");
    let output = saffron(&["check", "--format", "json", "multiple_parser_errors.feature"], &bad);
    assert_eq!(output.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&output.stdout).expect("json array");
    let items = json.as_array().expect("array");
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["file"], "multiple_parser_errors.feature");
    assert_eq!(items[0]["line"], 2);
    assert_eq!(items[0]["column"], 1);
    assert_eq!(items[0]["severity"], "error");
    assert!(items[0]["message"].as_str().is_some_and(|m| m.starts_with("expected: #EOF")));
    assert!(items[0]["hint"].as_str().is_some_and(|h| !h.is_empty()));
    assert_eq!(items[1]["line"], 9);
}

#[test]
fn clean_files_give_an_empty_json_array_and_exit_zero() {
    let good = corpus().join("gherkin/good");
    let output = saffron(&["check", "--format", "json", "minimal.feature", "rule.feature"], &good);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(serde_json::from_slice::<Value>(&output.stdout).expect("json"), Value::Array(vec![]));
}

#[test]
fn gitignored_files_are_skipped_and_a_missing_path_is_an_error() {
    let dir = std::env::temp_dir().join(format!("saffron-check-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("ignored")).expect("mkdir");
    std::fs::write(dir.join(".gitignore"), "ignored/\n").expect("write");
    std::fs::write(dir.join("ignored/broken.feature"), "not gherkin\n").expect("write");
    std::fs::write(dir.join("ok.feature"), "Feature: ok\n  Scenario: s\n    Given g\n").expect("write");
    // The ignore crate honours .gitignore inside a git work tree.
    std::fs::create_dir_all(dir.join(".git")).expect("mkdir .git");
    let output = saffron(&["check"], &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let output = saffron(&["check", "nowhere"], &dir);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("nowhere: no such file or directory"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_folder_with_its_own_saffron_toml_is_another_project_and_is_not_checked() {
    let dir = scratch("nested");
    std::fs::write(dir.join("saffron.toml"), "").expect("write");
    std::fs::write(dir.join("ok.feature"), "Feature: ok\n  Scenario: s\n    Given g\n").expect("write");
    let nested = dir.join("tests/fixture");
    std::fs::create_dir_all(&nested).expect("mkdir");
    std::fs::write(nested.join("saffron.toml"), "").expect("write");
    std::fs::write(nested.join("broken.feature"), "not gherkin\n").expect("write");
    let output = saffron(&["check"], &dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{}{stderr}", stdout(&output));
    assert!(stderr.contains("checked 1 file(s)"), "{stderr}");
    // Named on the command line, or checked from inside, it is a project like any other.
    assert_eq!(saffron(&["check", "tests/fixture"], &dir).status.code(), Some(1));
    assert_eq!(saffron(&["check"], &nested).status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn messages_match_the_reference_output() {
    let good = corpus().join("gherkin/good");
    let output = saffron(&["messages", "background.feature"], &good);
    assert_eq!(output.status.code(), Some(0));
    let produced: Vec<Value> = stdout(&output).lines().map(|l| serde_json::from_str(l).expect("ndjson")).collect();
    let mut expected = Vec::new();
    for suffix in ["source", "ast", "pickles"] {
        let text = std::fs::read_to_string(good.join(format!("background.feature.{suffix}.ndjson"))).expect("read");
        for line in text.lines() {
            let mut value: Value = serde_json::from_str(line).expect("json");
            // The reference names the file from its own test folder.
            for envelope in ["source", "gherkinDocument", "pickle"] {
                if let Some(uri) = value.get_mut(envelope).and_then(|e| e.get_mut("uri")) {
                    *uri = Value::String("background.feature".into());
                }
            }
            expected.push(value);
        }
    }
    assert_eq!(produced, expected);
}

/// A fresh folder for one test, named after it.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("saffron-check-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir
}

/// ESC (a "clear screen" sequence), NUL, DEL and a C1 control, as a hostile feature file holds them.
const CONTROLS: &str = "\u{1b}[2J\u{0}\u{7f}\u{9b}";

#[test]
fn control_characters_from_feature_files_are_escaped_in_the_terminal() {
    let dir = scratch("controls");
    std::fs::write(
        dir.join("a.saffron"),
        format!("Feature: A\n  Scenario: S\n    StepSet signed{CONTROLS} in\n    Given I am{CONTROLS} here\n"),
    )
    .expect("write");
    let output = saffron(&["check"], &dir);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("unknown StepSet 'signed\\u{1b}[2J\\u{0}\\u{7f}\\u{9b} in'"), "{text}");
    let raw = [&output.stdout[..], &output.stderr[..]].concat();
    for control in [0x1b_u8, 0x00, 0x7f] {
        assert!(!raw.contains(&control), "byte {control:#x} reached the terminal: {text}");
    }
    assert!(!String::from_utf8_lossy(&raw).contains('\u{9b}'), "a C1 control reached the terminal");
    // JSON keeps the text as it is: serde escapes it.
    let json: Value = serde_json::from_slice(&saffron(&["check", "--format", "json"], &dir).stdout).expect("json");
    assert!(json[0]["message"].as_str().is_some_and(|m| m.contains(CONTROLS)), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_file_that_is_not_utf8_is_reported_and_the_rest_is_checked() {
    let dir = scratch("utf8");
    std::fs::write(dir.join("a_latin1.feature"), b"Feature: A\n  Scenario: caf\xe9\n    Given g\n").expect("write");
    std::fs::write(dir.join("b_ok.feature"), "Feature: B\n  Scenario: s\n    Given g\n").expect("write");
    std::fs::write(dir.join("c_binary.saffron"), b"\xff\xfe\x00F").expect("write");
    std::fs::write(
        dir.join("d_broken.feature"),
        "Feature: D\n  Scenario: s\n    Given g\n      | a |\n      | b | c |\n",
    )
    .expect("write");
    let output = saffron(&["check"], &dir);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "a_latin1.feature:2:16: error: not UTF-8: the byte at offset 26 starts no valid UTF-8 character",
        "{text}"
    );
    assert!(lines[1].starts_with("  hint: feature files are read as UTF-8"), "{text}");
    assert!(lines[2].starts_with("c_binary.saffron:1:1: error: not UTF-8: the byte at offset 0 "), "{text}");
    assert!(lines[4].starts_with("d_broken.feature:5:7: error: "), "the files after a bad one are checked: {text}");
    let summary = String::from_utf8_lossy(&output.stderr);
    assert!(summary.contains("checked 2 file(s)"), "{summary}");

    let json: Value = serde_json::from_slice(&saffron(&["check", "--format", "json"], &dir).stdout).expect("json");
    let codes: Vec<&str> = json.as_array().expect("array").iter().filter_map(|p| p["code"].as_str()).collect();
    assert_eq!(codes, ["not-utf8", "not-utf8", "inconsistent-cell-count"], "{json}");
    assert_eq!((json[0]["line"].as_u64(), json[0]["column"].as_u64()), (Some(2), Some(16)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn saffron_toml_unknown_keys_are_warnings_and_invalid_toml_is_an_error() {
    let dir = scratch("config");
    std::fs::write(dir.join("a.feature"), "Feature: A\n  Scenario: s\n    Given g\n").expect("write");
    std::fs::write(dir.join("saffron.toml"), "base_ur = \"http://x\"\n[browser]\nheadles = true\n").expect("write");
    let output = saffron(&["check"], &dir);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "unknown keys are warnings: {text}");
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "saffron.toml:1:1: warning: unknown key `base_ur` in saffron.toml: nothing reads it",
            "  hint: did you mean `base_url`?",
            "saffron.toml:3:1: warning: unknown key `browser.headles` in saffron.toml: nothing reads it",
            "  hint: did you mean `headless`?",
        ]
    );

    std::fs::write(dir.join("saffron.toml"), "base_url = \"http://x\"\n[browser\nheadless = true\n").expect("write");
    let output = saffron(&["check"], &dir);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.starts_with("saffron.toml:2:9: error: unclosed table, expected `]`\n  hint: "), "{text}");
    let json: Value = serde_json::from_slice(&saffron(&["check", "--format", "json"], &dir).stdout).expect("json");
    assert_eq!(json[0]["code"], "invalid-config", "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A double quote that no other closes is a warning (the value meant is read as words), at the
/// quote; a closed value, an escaped quote and an apostrophe are not. Warnings leave the exit
/// code at 0.
#[test]
fn an_unclosed_quote_in_a_step_is_a_warning_at_the_quote() {
    let dir = scratch("quotes");
    std::fs::write(
        dir.join("a.feature"),
        "Feature: A\n  Scenario: S\n    Given I search for \"tea\n    \
         When I open the users' list\n    Then I see \"say \\\"hi\\\"\" and \"mugs\"\n",
    )
    .expect("write");
    let output = saffron(&["check", "--format", "json"], &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let json: Value = serde_json::from_slice(&output.stdout).expect("json");
    let items = json.as_array().expect("array");
    assert_eq!(items.len(), 1, "{json}");
    assert_eq!((items[0]["line"].as_u64(), items[0]["column"].as_u64()), (Some(3), Some(24)), "{json}");
    assert_eq!(items[0]["severity"], "warning");
    assert_eq!(items[0]["code"], "unclosed-quote");
    assert!(items[0]["message"].as_str().is_some_and(|m| m.contains("`\"tea`")), "{json}");
    let text = stdout(&saffron(&["check"], &dir));
    assert!(text.contains("a.feature:3:24: warning: this quote is not closed"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recording that is not UTF-8 is an error of its content, named by file, line and column
/// (exit 1), not a file that cannot be read (exit 2).
#[test]
fn a_recording_that_is_not_utf8_is_an_error_at_its_place() {
    let dir = scratch("recording-utf8");
    std::fs::write(dir.join("saffron.toml"), "").expect("write");
    std::fs::write(dir.join("a.feature"), "Feature: A\n  Scenario: s\n    Given g\n").expect("write");
    let cache = dir.join(".saffron/cache/a");
    std::fs::create_dir_all(&cache).expect("mkdir");
    std::fs::write(cache.join("s.json"), b"{\n  \"version\": 1,\n  \"feature\": \"caf\xe9\"\n}\n").expect("write");
    let output = saffron(&["check"], &dir);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains(".saffron/cache/a/s.json:3:18: error: not UTF-8 at 3:18"), "{text}");
    assert!(!text.contains("check that the file exists"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
