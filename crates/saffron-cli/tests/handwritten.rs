//! Recordings written or edited by hand, run as a user runs saffron on them: `check` validates
//! them, `status` says why one is stale or matches no scenario, `skeleton` starts one, and the
//! read-only commands leave the project as they found it.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::example_project;

fn saffron(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron")).args(args).current_dir(cwd).output().expect("saffron runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every folder and file under `root` with its bytes (None for a folder).
fn tree(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
        for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).expect("inside").to_path_buf();
            if path.is_dir() {
                out.insert(relative, None);
                walk(root, &path, out);
            } else {
                out.insert(relative, Some(std::fs::read(&path).expect("read")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn read_only_commands_leave_the_project_byte_for_byte_as_it_was() {
    // Recordings but no proposals, reports or artifacts folder; and a project with no store at all.
    let with_cache = example_project("readonly-cache");
    let without_store = example_project("readonly-bare");
    std::fs::remove_dir_all(without_store.join(".saffron")).expect("remove the store");
    std::fs::write(without_store.join("saffron.toml"), "").expect("write");
    for root in [&with_cache, &without_store] {
        let before = tree(root);
        for args in [
            &["status"][..],
            &["status", "--format", "json"],
            &["steps"],
            &["steps", "--format", "json"],
            &["check"],
            &["check", "--format", "json"],
        ] {
            let output = saffron(args, root);
            assert!(matches!(output.status.code(), Some(0 | 1)), "{args:?}: {}", stderr(&output));
            let after = tree(root);
            let added: Vec<_> = after.keys().filter(|path| !before.contains_key(*path)).collect();
            assert!(added.is_empty(), "saffron {args:?} created {added:?} in {}", root.display());
            assert!(before == after, "saffron {args:?} changed a file in {}", root.display());
        }
    }
    let _ = std::fs::remove_dir_all(&with_cache);
    let _ = std::fs::remove_dir_all(&without_store);
}

/// The 1-based line and column of byte `offset` in `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    (before.matches('\n').count() + 1, before.rsplit('\n').next().map_or(0, |line| line.chars().count()) + 1)
}

/// Replaces the first `from` in the file with `to`; returns the file's new text and the offset.
fn edit(path: &Path, from: &str, to: &str) -> (String, usize) {
    let text = std::fs::read_to_string(path).expect("read");
    let offset = text.find(from).unwrap_or_else(|| panic!("{from:?} not in {}", path.display()));
    let edited = text.replacen(from, to, 1);
    std::fs::write(path, &edited).expect("write");
    (edited, offset)
}

#[test]
fn check_validates_every_recording_and_proposal_at_its_line_and_column() {
    let root = example_project("check-store");
    let cache = root.join(".saffron/cache");
    // Four hand-edited recordings, each wrong in its own way.
    let (_, _) = edit(&cache.join("sign-in/a-wrong-password-is-refused.json"), "\"version\": 1,", "\"version\": 1");
    let (export, at) = edit(&cache.join("orders/export-the-orders.json"), "\"goto\"", "\"gotoo\"");
    let export_action = position(&export, export[..at].rfind('{').expect("the action's brace"));
    let note_path = cache.join("orders/add-a-note-to-an-order.json");
    let note = std::fs::read_to_string(&note_path).expect("read");
    let digest: Value = serde_json::from_str::<Value>(&note).expect("json")["stepsDigest"].clone();
    let digest = digest.as_str().expect("digest").to_string();
    let (note, at) = edit(&note_path, &digest, &"0".repeat(64));
    let digest_key = position(&note, note[..at].rfind("\"stepsDigest\"").expect("key"));
    let enter_path = cache.join("orders/search-by-pressing-enter.json");
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(&enter_path).expect("read")).expect("json");
    let (step, action) = first_action_with(&value, "expectVisible");
    value["steps"][step]["actions"][action].as_object_mut().expect("action").remove("target");
    let pretty = serde_json::to_string_pretty(&value).expect("json") + "\n";
    std::fs::write(&enter_path, &pretty).expect("write");
    let needle = "\"type\": \"expectVisible\"";
    let enter_action = position(&pretty, pretty[..pretty.find(needle).expect("action")].rfind('{').expect("brace"));
    // And a proposal with nothing but its version.
    std::fs::create_dir_all(root.join(".saffron/proposals/orders")).expect("mkdir");
    std::fs::write(root.join(".saffron/proposals/orders/export-the-orders.json"), "{\n  \"version\": 1\n}\n")
        .expect("write");

    let output = saffron(&["check"], &root);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let errors: Vec<&str> = text.lines().filter(|line| line.contains(": error: ")).collect();
    assert_eq!(errors.len(), 5, "{text}");
    let expected = [
        format!(
            ".saffron/cache/orders/add-a-note-to-an-order.json:{}:{}: error: stepsDigest: does not match the steps in this file, whose digest is {digest}",
            digest_key.0, digest_key.1
        ),
        format!(
            ".saffron/cache/orders/export-the-orders.json:{}:{}: error: steps[0].actions[0]: unknown action type \"gotoo\"",
            export_action.0, export_action.1
        ),
        format!(
            ".saffron/cache/orders/search-by-pressing-enter.json:{}:{}: error: steps[{step}].actions[{action}].target: an expectVisible needs a target",
            enter_action.0, enter_action.1
        ),
        ".saffron/cache/sign-in/a-wrong-password-is-refused.json:3:3: error: invalid JSON: expected `,` or `}`"
            .to_string(),
        ".saffron/proposals/orders/export-the-orders.json:1:1: error: scenario: ".to_string(),
    ];
    for (line, expected) in errors.iter().zip(&expected) {
        assert!(line.starts_with(expected.as_str()), "expected {expected}\n   found {line}\n{text}");
    }
    assert!(text.lines().filter(|line| line.starts_with("  hint: ")).count() >= 5, "every problem has a hint: {text}");
    assert!(
        stderr(&output).contains("17 recording(s), 1 proposal(s), 0 handler(s): 5 error(s)"),
        "{}",
        stderr(&output)
    );

    let json: Value = serde_json::from_slice(&saffron(&["check", "--format", "json"], &root).stdout).expect("json");
    let problems = json.as_array().expect("array");
    assert_eq!(problems.len(), 5, "{json}");
    assert!(problems.iter().all(|p| p["severity"] == "error" && p["code"] == "invalid-file" && p["hint"].is_string()));
    assert_eq!(
        (problems[0]["line"].as_u64(), problems[0]["column"].as_u64()),
        (Some(digest_key.0 as u64), Some(digest_key.1 as u64))
    );

    // One file named on the command line is checked alone.
    let output = saffron(&["check", ".saffron/cache/orders/export-the-orders.json"], &root);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output).lines().filter(|line| line.contains(": error: ")).count(), 1, "{}", stdout(&output));
    let _ = std::fs::remove_dir_all(&root);
}

/// The step and action indexes of the first action of type `kind`.
fn first_action_with(recording: &Value, kind: &str) -> (usize, usize) {
    for (step, value) in recording["steps"].as_array().expect("steps").iter().enumerate() {
        if let Some(action) =
            value["actions"].as_array().and_then(|actions| actions.iter().position(|a| a["type"] == kind))
        {
            return (step, action);
        }
    }
    panic!("no {kind} action");
}

/// Each scenario's recording state, by name, from `saffron status --format json`.
fn states(root: &Path) -> BTreeMap<String, String> {
    let output = saffron(&["status", "--format", "json"], root);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: Value = serde_json::from_slice(&output.stdout).expect("json");
    json.as_array()
        .expect("array")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().to_string(),
                s["recording"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_value_edit_in_a_key_value_table_keeps_the_recording_fresh_and_a_key_edit_does_not() {
    const OUTLINE: &str = "Create an order for <customer>";
    let root = example_project("key-value");
    assert_eq!(states(&root)[OUTLINE], "fresh", "the committed recording is fresh");
    let feature = root.join("features/new_order.saffron");
    // The recording fills the quantity with <table:Quantity>: the value is the scenario's.
    edit(&feature, "| Quantity | <quantity> |", "| Quantity | 2          |");
    assert_eq!(states(&root)[OUTLINE], "fresh");
    edit(&feature, "| Quantity | 2          |", "| Amount   | 2          |");
    assert_eq!(states(&root)[OUTLINE], "stale");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn status_says_which_step_made_a_recording_stale_and_how() {
    let root = example_project("stale-why");
    let sign_in = root.join("features/sign_in.feature");
    edit(&sign_in, "    And I see no console errors", "    When I see no console errors");
    edit(&sign_in, "password \"not-the-password\"\n", "password \"wrong\"\n    And I wait a moment\n");
    let orders = root.join("features/orders.saffron");
    edit(&orders, "      Deliver before noon, please.\n", "      Deliver after noon.\n");
    edit(&orders, "    And the order \"#1004\" is no longer listed\n", "");
    edit(&root.join("features/new_order.saffron"), "| Product  | <product>  |", "| Item     | <product>  |");

    let output = saffron(&["status"], &root);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let block = |scenario: &str| -> Vec<String> {
        let mut lines = text.lines().skip_while(|line| !line.ends_with(scenario));
        let first = lines.next().unwrap_or_else(|| panic!("no {scenario} in {text}"));
        assert!(first.starts_with("stale "), "{first}");
        lines.take_while(|line| line.starts_with("  ")).map(|line| line.trim().to_string()).collect()
    };
    assert_eq!(
        block("Sign in with the demo account"),
        [
            "step 4: kind changed since it was recorded",
            "- Then I see no console errors",
            "+ When I see no console errors"
        ]
    );
    assert_eq!(
        block("A wrong password is refused"),
        [
            "step 2: text changed since it was recorded",
            "- When I sign in with the password \"not-the-password\"",
            "+ When I sign in with the password \"wrong\"",
            "step 3: not in the recording",
            "+ When I wait a moment",
        ]
    );
    let note = block("Add a note to an order");
    assert_eq!(note[0], "step 5: docString changed since it was recorded", "{note:?}");
    assert!(note.contains(&"-   Deliver before noon, please.".to_string()), "{note:?}");
    assert!(note.contains(&"+   Deliver after noon.".to_string()), "{note:?}");
    assert_eq!(
        block("Delete an order after confirming"),
        ["recorded step 6: no longer in the scenario", "- Then the order \"#1004\" is no longer listed"]
    );
    let table = block("Create an order for <customer> (2 rows)");
    assert_eq!(table[0], "step 7: table changed since it was recorded", "{table:?}");
    assert!(table.contains(&"-   | Product | <product> |".to_string()), "{table:?}");
    assert!(table.contains(&"+   | Item | <product> |".to_string()), "{table:?}");

    let json: Value = serde_json::from_slice(&saffron(&["status", "--format", "json"], &root).stdout).expect("json");
    let scenario = |name: &str| json.as_array().and_then(|all| all.iter().find(|s| s["name"] == name)).cloned();
    let wrong = scenario("A wrong password is refused").expect("scenario");
    assert_eq!(wrong["staleSteps"][0]["change"], "changed");
    assert_eq!(wrong["staleSteps"][0]["differs"], serde_json::json!(["text"]));
    assert_eq!(wrong["staleSteps"][0]["recorded"]["text"], "I sign in with the password \"not-the-password\"");
    assert_eq!(wrong["staleSteps"][0]["now"]["text"], "I sign in with the password \"wrong\"");
    assert_eq!(
        (wrong["staleSteps"][1]["change"].as_str(), wrong["staleSteps"][1]["step"].as_u64()),
        (Some("missing"), Some(3))
    );
    let deleted = scenario("Delete an order after confirming").expect("scenario");
    assert_eq!(deleted["staleSteps"][0]["change"], "extra");
    assert_eq!(deleted["staleSteps"][0]["now"], Value::Null);
    assert!(scenario("Export the orders").expect("scenario").get("staleSteps").is_none(), "a fresh one has none");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_recording_that_matches_no_scenario_is_an_orphan_with_its_closest_scenario() {
    let root = example_project("orphans");
    let orders = root.join(".saffron/cache/orders");
    // A misnamed hand-written file whose scenario field was written differently too.
    let text = std::fs::read_to_string(orders.join("search-orders-by-customer.json")).expect("read");
    std::fs::remove_file(orders.join("search-orders-by-customer.json")).expect("remove");
    let text = text.replace("\"scenario\": \"Search orders by customer\"", "\"scenario\": \"Search orders by client\"");
    std::fs::write(orders.join("search-by-customer.json"), text).expect("write");
    // A copy left behind beside the real one.
    std::fs::copy(orders.join("export-the-orders.json"), orders.join("export.json")).expect("copy");

    let output = saffron(&["status"], &root);
    assert_eq!(output.status.code(), Some(0), "an orphan is a warning: {}", stderr(&output));
    let warnings = stderr(&output);
    assert!(
        warnings
            .contains(".saffron/cache/orders/search-by-customer.json:1:1: warning: this recording matches no scenario"),
        "{warnings}"
    );
    assert!(
        warnings.contains(
            "  hint: closest scenario: \"Search orders by customer\" (features/orders.saffron:8; 6 of 6 steps alike, \
             name "
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains(
            "if this is its recording, rename the file to .saffron/cache/orders/search-orders-by-customer.json"
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains(
            "closest scenario: \"Export the orders\" (features/orders.saffron:30; its feature and scenario fields name it); \
             that scenario already has its recording (.saffron/cache/orders/export-the-orders.json): delete this one"
        ),
        "{warnings}"
    );

    let output = saffron(&["check", "--format", "json"], &root);
    assert_eq!(output.status.code(), Some(0));
    let json: Value = serde_json::from_slice(&output.stdout).expect("json");
    let orphans: Vec<&Value> =
        json.as_array().expect("array").iter().filter(|p| p["code"] == "orphan-recording").collect();
    assert_eq!(orphans.len(), 2, "{json}");
    assert!(orphans.iter().all(|p| p["severity"] == "warning"));
    assert_eq!(orphans[0]["file"], ".saffron/cache/orders/export.json");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn skeleton_writes_an_empty_recording_refused_until_its_then_steps_check_and_never_replaces_one() {
    let root = example_project("skeleton");
    let refund = root.join(".saffron/cache/orders/refund-an-order.json");
    assert!(!refund.exists());
    // Any line of the scenario names it (here its second step).
    let output = saffron(&["skeleton", "features/orders.saffron:46"], &root);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output).trim(), ".saffron/cache/orders/refund-an-order.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&refund).expect("written")).expect("json");
    assert_eq!(written["feature"], "features/orders.saffron");
    assert_eq!(written["scenario"], "Refund an order");
    let steps = written["steps"].as_array().expect("steps");
    // The Background's StepSet comes first, as the scenario runs it.
    assert_eq!(steps[0]["text"], "I am on the sign-in page");
    assert_eq!(steps[3]["text"], "I open the order \"#1003\"");
    assert!(steps.iter().all(|step| step["actions"] == serde_json::json!([])));
    // Until each Then step checks something the recording is refused, never replayed green
    // (a skeleton filled in by hand, below, is fresh: its digest is the scenario's).
    let status = saffron(&["status", "--format", "json"], &root);
    assert_eq!(status.status.code(), Some(1), "{}", stderr(&status));
    let scenarios: Value = serde_json::from_slice(&status.stdout).expect("json");
    let refund_state = scenarios.as_array().expect("array").iter().find(|s| s["name"] == "Refund an order");
    assert_eq!(refund_state.map(|s| s["recording"].clone()), Some(Value::from("unreadable")), "{scenarios}");
    let check = saffron(&["check"], &root);
    assert_eq!(check.status.code(), Some(1), "{}", stdout(&check));
    assert!(
        stdout(&check).contains(
            "refund-an-order.json:19:7: error: steps[2].actions: the Then step `I see the orders page` checks nothing"
        ),
        "{}",
        stdout(&check)
    );
    let run = saffron(&["run", "--base-url", "http://127.0.0.1:9", "features/orders.saffron:44"], &root);
    let said = format!("{}{}", stdout(&run), stderr(&run));
    assert_eq!(run.status.code(), Some(1), "{said}");
    assert!(said.contains("0 green, 0 yellow, 1 red"), "{said}");
    assert!(said.contains("the Then step `I see the orders page` checks nothing"), "{said}");
    let leftovers: Vec<_> = std::fs::read_dir(refund.parent().expect("folder"))
        .expect("read")
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "the write is atomic: no temporary file is left");

    // A recording written by hand since is never replaced without --force.
    let filled = std::fs::read_to_string(&refund).expect("read").replacen("\"actions\": []", "\"actions\": [ ]", 1);
    std::fs::write(&refund, &filled).expect("write");
    let output = saffron(&["skeleton", "features/orders.saffron:44"], &root);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("already exists"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&refund).expect("read"), filled, "left as it was");
    let committed = root.join(".saffron/cache/orders/export-the-orders.json");
    let before = std::fs::read(&committed).expect("read");
    assert_eq!(saffron(&["skeleton", "features/orders.saffron:30"], &root).status.code(), Some(2));
    assert_eq!(std::fs::read(&committed).expect("read"), before);
    let output = saffron(&["skeleton", "--force", "features/orders.saffron:44"], &root);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_ne!(std::fs::read_to_string(&refund).expect("read"), filled);

    // Another skeleton, made while this one is still empty: the empty one is not listed at
    // length (that is `check`'s business), only counted.
    let output = saffron(&["skeleton", "--force", "features/orders.saffron:49"], &root);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stderr(&output).contains("refund-an-order.json"), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("(1 other recording(s) or proposal(s) of the project do not check"),
        "{}",
        stderr(&output)
    );

    // A StepSet has no recording; a line outside any scenario names none.
    let output = saffron(&["skeleton", "features/shared.steps.saffron:5"], &root);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("a StepSet has no recording of its own"), "{}", stderr(&output));
    assert_eq!(saffron(&["skeleton", "features/orders.saffron:2"], &root).status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_skeleton_filled_in_by_hand_checks_clean_and_stays_fresh() {
    let root = example_project("skeleton-filled");
    let recording = root.join(".saffron/cache/orders/refund-an-order.json");
    assert_eq!(saffron(&["skeleton", "features/orders.saffron:44"], &root).status.code(), Some(0));
    let mut filled: Value = serde_json::from_str(&std::fs::read_to_string(&recording).expect("read")).expect("json");
    for step in filled["steps"].as_array_mut().expect("steps") {
        step["actions"] = match step["kind"].as_str() {
            Some("outcome") => {
                serde_json::json!([{ "type": "expectText", "target": { "role": "alert" }, "text": "ok" }])
            }
            _ => serde_json::json!([{ "type": "goto", "url": "/login" }]),
        };
    }
    std::fs::write(&recording, serde_json::to_string_pretty(&filled).expect("json")).expect("write");
    let output = saffron(&["check"], &root);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert_eq!(states(&root)["Refund an order"], "fresh");
    let _ = std::fs::remove_dir_all(&root);
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_example_project_ships_the_saffron_toml_init_writes_without_a_base_url() {
    let settings = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#') && !line.starts_with("base_url"))
            .map(str::to_string)
            .collect()
    };
    let shipped = std::fs::read_to_string(repository().join("saffron.toml")).expect("the example's saffron.toml");
    let init = std::fs::read_to_string(repository().join("crates/saffron-cli/skill/saffron.toml")).expect("template");
    assert_eq!(settings(&shipped), settings(&init), "every setting saffron init writes, with its default");
    assert!(!shipped.lines().any(|line| line.starts_with("base_url")), "the demo's URL is saffron demo's to give");
    let output = saffron(&["check", "--format", "json"], &repository());
    let json: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(output.status.code(), Some(0), "{json}");
    assert!(!json.as_array().expect("array").iter().any(|p| p["file"] == "saffron.toml"), "{json}");
}

#[test]
fn the_demo_replays_green_whatever_base_url_saffron_toml_gives() {
    let root = example_project("demo-base-url");
    let shipped = std::fs::read_to_string(repository().join("saffron.toml")).expect("read");
    let config = shipped.replace("# base_url = \"http://localhost:8080\"", "base_url = \"http://127.0.0.1:9\"");
    assert_ne!(config, shipped);
    std::fs::write(root.join("saffron.toml"), config).expect("write");
    let output = saffron(&["demo"], &root);
    let all = format!("{}{}", stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("18 scenario(s): 18 green, 0 yellow, 0 red, 0 blocked"), "{all}");
    let _ = std::fs::remove_dir_all(&root);
}

/// For writing a recording by hand: the page as the recorder reads it (roles and names as
/// Chromium computes them), the target it would write for each element, masked like every
/// other output; and a page that never shows what `--wait-for` waits for is an error.
#[test]
fn snapshot_prints_a_page_as_the_recorder_reads_it_with_the_targets_it_would_write() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let server = runtime.block_on(saffron_demo::DemoServer::start(saffron_demo::DemoConfig::default())).expect("demo");
    let root = example_project("snapshot");
    let before = tree(&root);
    let url = server.url();
    let snapshot = |args: &[&str], secret: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_saffron"));
        command.args(["snapshot", "--base-url", &url]).args(args).current_dir(&root).env("DEMO_PASSWORD", secret);
        command.output().expect("saffron runs")
    };
    let output = snapshot(&["/login", "--targets"], "not on the page");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("url: /login\n"), "{text}");
    assert!(text.contains(r#"button "Sign in" [ref="#), "{text}");
    let email = text.lines().find(|line| line.contains(r#"{"role":"textbox","name":"Email""#));
    let email = email.unwrap_or_else(|| panic!("no target for the Email field:\n{text}"));
    assert!(email.starts_with('e') && email.contains(r#""tier":"role""#), "{email}");
    // The sign-in button's label is the password here: a secret the page shows is masked.
    let output = snapshot(&["/login"], "Sign in");
    let text = stdout(&output);
    assert!(!text.contains("Sign in") && text.contains(r#"button "{env:DEMO_PASSWORD}""#), "{text}");
    let output = snapshot(&["/login", "--wait-for", "A text the page never shows"], "x");
    assert_ne!(output.status.code(), Some(0));
    assert!(stderr(&output).contains("--wait-for: "), "{}", stderr(&output));
    assert_eq!(tree(&root), before, "a snapshot changes nothing in the project");
    let _ = runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}
