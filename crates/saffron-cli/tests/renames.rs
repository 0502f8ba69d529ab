//! `saffron steps --propose-renames` on a copy of the example project where one step was
//! reworded (and its recording renamed with it, so the recording is fresh): the new wording is
//! proven, by identical actions, to be the established one, and a proposal is filed for it.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use saffron_recording::{FeatureEdit, Recording, parse_proposal, parse_recording};
use serde_json::Value;
use support::example_project;

const SIGN_IN: &str = "features/sign_in.feature";
const WRONG_PASSWORD: &str = ".saffron/cache/sign-in/a-wrong-password-is-refused.json";
const WRONG_PASSWORD_PROPOSAL: &str = ".saffron/proposals/sign-in/a-wrong-password-is-refused.json";
const HOVERING_PROPOSAL: &str = ".saffron/proposals/orders/hovering-the-help-button-explains-the-search.json";

fn saffron(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron")).args(args).current_dir(cwd).output().expect("saffron runs")
}

fn json(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("json")
}

/// The example project with "A wrong password is refused" opening the sign-in page in other
/// words, recorded as before: the same actions under a new wording.
fn reworded_project(name: &str) -> PathBuf {
    let root = example_project(name);
    let feature = root.join(SIGN_IN);
    let text = std::fs::read_to_string(&feature).expect("read");
    let (head, tail) = text.split_once("  Scenario: A wrong password is refused").expect("the scenario");
    let tail = tail.replacen("Given I am on the sign-in page", "Given I open the sign-in page", 1);
    std::fs::write(&feature, format!("{head}  Scenario: A wrong password is refused{tail}")).expect("write");
    let path = root.join(WRONG_PASSWORD);
    let mut recording = parse_recording(&std::fs::read_to_string(&path).expect("read")).expect("recording");
    let step = recording.steps.iter_mut().find(|step| step.text == "I am on the sign-in page").expect("step");
    step.text = "I open the sign-in page".into();
    recording.update_steps_digest();
    std::fs::write(&path, saffron_recording::to_json_bytes(&recording).expect("json")).expect("write");
    root
}

fn committed(root: &Path) -> Recording {
    parse_recording(&std::fs::read_to_string(root.join(WRONG_PASSWORD)).expect("read")).expect("recording")
}

#[test]
fn a_reworded_step_gets_a_proposal_back_to_the_established_wording() {
    let root = reworded_project("renames");
    let status = json(&saffron(&["status", "--format", "json"], &root));
    let wrong = status.as_array().and_then(|s| s.iter().find(|s| s["name"] == "A wrong password is refused").cloned());
    assert_eq!(wrong.expect("scenario")["recording"], "fresh", "the reworded recording is fresh");

    // A dry run says what it would file and writes nothing.
    let dry = json(&saffron(&["steps", "--propose-renames", "--dry-run", "--format", "json"], &root));
    assert_eq!(dry["dryRun"], true);
    let outcomes: Vec<(&str, &str)> = dry["proposals"]
        .as_array()
        .expect("proposals")
        .iter()
        .map(|p| (p["path"].as_str().unwrap_or_default(), p["outcome"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(outcomes, [(HOVERING_PROPOSAL, "wouldFile"), (WRONG_PASSWORD_PROPOSAL, "wouldFile")]);
    assert!(!root.join(".saffron/proposals").exists(), "a dry run writes nothing");

    let filed = json(&saffron(&["steps", "--propose-renames", "--format", "json"], &root));
    let group = filed["groups"]
        .as_array()
        .and_then(|groups| groups.iter().find(|g| g["keep"]["text"] == "I am on the sign-in page"))
        .expect("the sign-in group");
    assert_eq!(group["kind"], "context");
    assert_eq!(group["renamed"][0]["text"], "I open the sign-in page");
    let proposal = parse_proposal(&std::fs::read_to_string(root.join(WRONG_PASSWORD_PROPOSAL)).expect("filed"))
        .expect("a valid proposal");
    assert_eq!(
        proposal.feature_edits,
        vec![FeatureEdit {
            file: SIGN_IN.into(),
            line: 12,
            before: "    Given I open the sign-in page".into(),
            after: "    Given I am on the sign-in page".into(),
            from_set: None,
        }]
    );
    let committed = committed(&root);
    assert_eq!(proposal.recording, committed, "the committed recording, unchanged");
    assert_eq!(proposal.stale_reasons(&committed.step_specs(), Some(&committed)), vec![]);
    assert!(proposal.narrative.contains(&format!("\"I open the sign-in page\" in {WRONG_PASSWORD} step 1")));
    assert_eq!(proposal.usage, None);
    let line = std::fs::read_to_string(root.join(SIGN_IN)).expect("read");
    assert_eq!(line.lines().nth(11), Some("    Given I open the sign-in page"), "the feature file is not edited");

    // Filed proposals are pending: a second pass leaves them byte for byte and says so.
    let before = std::fs::read(root.join(WRONG_PASSWORD_PROPOSAL)).expect("read");
    let again = saffron(&["steps", "--propose-renames"], &root);
    assert_eq!(again.status.code(), Some(0));
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(!text.contains("\nfiled ") && !text.starts_with("filed "), "{text}");
    assert!(text.contains("A wrong password is refused: a proposal is pending review"), "{text}");
    assert!(String::from_utf8_lossy(&again.stderr).contains("0 proposal(s) filed; 2 scenario(s) skipped"));
    assert_eq!(std::fs::read(root.join(WRONG_PASSWORD_PROPOSAL)).expect("read"), before);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_pending_proposal_of_the_scenario_is_never_overwritten() {
    let root = reworded_project("renames-pending");
    // A proposal of the same scenario that the index cannot read (so it does not know it is
    // pending): the check on disk, under the store's lock, still finds it.
    let pending = b"{\"version\": 1, \"not\": \"ours\"}\n";
    let path = root.join(WRONG_PASSWORD_PROPOSAL);
    std::fs::create_dir_all(path.parent().expect("folder")).expect("mkdir");
    std::fs::write(&path, pending).expect("write");
    let output = saffron(&["steps", "--propose-renames"], &root);
    // The invalid proposal is reported (exit 1), and left as it is.
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read(&path).expect("read"), pending);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!("skipped (a proposal is already pending there) {WRONG_PASSWORD_PROPOSAL}")),
        "{text}"
    );
    assert!(text.contains(&format!("filed {HOVERING_PROPOSAL}")), "{text}");
    assert!(!text.contains(&format!("filed {WRONG_PASSWORD_PROPOSAL}")), "{text}");
    let _ = std::fs::remove_dir_all(&root);
}
