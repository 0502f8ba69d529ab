//! The review gate as a person uses it: `saffron proposals`, `diff`, `accept`, `reject` and the
//! staleness `saffron status` shows, run as the real binary on a temporary project holding real
//! proposals (filed with `Proposal::file`, as a heal files them).

use std::path::Path;
use std::process::{Command, Output};

use saffron_recording::{
    Action, FeatureEdit, Proposal, ProposalDraft, RecordedStep, Recording, ScenarioRef, StepKind, StepSpec, Store,
    Target, Usage,
};
use serde_json::Value;

const SETS: &str = "Feature: Sets\n  StepSet: sign in\n    Given I sign in as admin\n";
const SHOP: &str = "Feature: Shop\n  Scenario: Buy\n    StepSet sign in\n    When I buy\n";
const ADMIN: &str = "Feature: Admin\n  Scenario: Audit\n    StepSet sign in\n    When I buy\n";
const BUY: &str = ".saffron/cache/shop/buy.json";
const AUDIT: &str = ".saffron/cache/admin/audit.json";
const PROPOSAL: &str = ".saffron/proposals/shop/buy.json";

fn saffron(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron")).args(args).current_dir(cwd).output().expect("saffron runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn all(output: &Output) -> String {
    format!("{}{}", stdout(output), String::from_utf8_lossy(&output.stderr))
}

fn recording(feature: &str, scenario: &str, sign_in: &str, button: &str) -> Recording {
    Recording::new(
        feature,
        scenario,
        vec![
            RecordedStep::new(
                StepSpec::new(StepKind::Context, sign_in),
                vec![Action::Goto { url: "/sign-in".into(), timeout_ms: None }],
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Action, "I buy"),
                vec![Action::Click {
                    target: Target { css: vec!["#buy".into()], ..Target::role("button", button) },
                    timeout_ms: None,
                }],
            ),
        ],
    )
}

/// A project with two recorded scenarios that share a StepSet and click the same button.
fn project() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("features")).expect("mkdir");
    std::fs::write(root.join("saffron.toml"), "").expect("config");
    std::fs::write(root.join("features/sets.saffron"), SETS).expect("write");
    std::fs::write(root.join("features/shop.feature"), SHOP).expect("write");
    std::fs::write(root.join("features/admin.feature"), ADMIN).expect("write");
    let store = Store::open(root).expect("store");
    store
        .write_recording(&root.join(BUY), &recording("features/shop.feature", "Buy", "I sign in as admin", "Buy"))
        .expect("buy");
    store
        .write_recording(&root.join(AUDIT), &recording("features/admin.feature", "Audit", "I sign in as admin", "Buy"))
        .expect("audit");
    (dir, store)
}

/// Files a proposal for "Buy" against its committed recording.
fn file(store: &Store, proposed: Recording, edits: Vec<FeatureEdit>, unverified: Option<&str>) {
    let root = store.root();
    let committed = store.read_recording(&root.join(BUY)).expect("committed");
    let draft = ProposalDraft {
        scenario: ScenarioRef { feature: "features/shop.feature".into(), name: "Buy".into(), cache_path: BUY.into() },
        recording: proposed,
        feature_edits: edits,
        narrative: "The Buy button is now called Buy now.".into(),
        adaptations: vec!["locator: button \"Buy\" → button \"Buy now\"".into()],
        usage: Some(Usage { input_tokens: Some(1200), output_tokens: Some(300), cost_usd: Some(0.0123) }),
        filed_at: None,
        unverified: unverified.map(str::to_string),
    };
    store.write_proposal(&root.join(PROPOSAL), &Proposal::file(draft, Some(&committed))).expect("proposal");
}

fn renamed_button() -> Recording {
    recording("features/shop.feature", "Buy", "I sign in as admin", "Buy now")
}

fn rename_edit() -> FeatureEdit {
    FeatureEdit {
        file: "features/sets.saffron".into(),
        line: 3,
        before: "    Given I sign in as admin".into(),
        after: "    Given I sign in as an admin".into(),
        from_set: Some("sign in".into()),
    }
}

fn button(store: &Store, path: &str) -> String {
    let recording = store.read_recording(&store.root().join(path)).expect("recording");
    recording.steps[1].actions[0].target().and_then(|target| target.name.clone()).unwrap_or_default()
}

#[test]
fn accept_writes_the_proposed_recording_and_removes_the_proposal() {
    let (dir, store) = project();
    file(&store, renamed_button(), vec![], None);
    let output = saffron(&["accept", PROPOSAL], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", all(&output));
    assert!(stdout(&output).contains(&format!("Accepted {PROPOSAL}: wrote {BUY}")), "{}", all(&output));
    assert_eq!(store.read_recording(&dir.path().join(BUY)).expect("read"), renamed_button());
    assert!(!dir.path().join(PROPOSAL).exists());
    assert_eq!(button(&store, AUDIT), "Buy", "no propagation unless asked");
    // Nothing left: a usage error, not a refusal.
    let again = saffron(&["accept", "shop/buy"], dir.path());
    assert_eq!(again.status.code(), Some(2), "{}", all(&again));
    assert!(all(&again).contains("no pending proposal"), "{}", all(&again));
    let status = saffron(&["status"], dir.path());
    assert!(stdout(&status).contains("fresh") && !stdout(&status).contains("proposal pending"), "{}", all(&status));
}

#[test]
fn a_stale_proposal_is_refused_by_reason_everywhere_it_is_listed() {
    let (dir, store) = project();
    file(&store, renamed_button(), vec![], None);
    std::fs::write(dir.path().join("features/shop.feature"), SHOP.replace("I buy", "I buy it")).expect("edit");
    let committed = std::fs::read_to_string(dir.path().join(BUY)).expect("read");

    let output = saffron(&["accept", "shop/buy", "--with-feature-edit", "--propagate"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", all(&output));
    assert!(all(&output).contains("refused: the proposal is stale"), "{}", all(&output));
    assert!(all(&output).contains("steps changed since this proposal was filed"), "{}", all(&output));
    assert_eq!(std::fs::read_to_string(dir.path().join(BUY)).expect("read"), committed);
    assert!(dir.path().join(PROPOSAL).exists());

    let listed = saffron(&["proposals"], dir.path());
    assert_eq!(listed.status.code(), Some(0), "{}", all(&listed));
    assert!(stdout(&listed).contains("[STALE]"), "{}", all(&listed));
    assert!(stdout(&listed).contains("STALE: the scenario's steps changed"), "{}", all(&listed));
    let json: Value =
        serde_json::from_slice(&saffron(&["proposals", "--format", "json"], dir.path()).stdout).expect("json");
    let listed = &json["proposals"][0];
    assert_eq!(listed["stale"], true);
    assert!(listed["staleReasons"][0].as_str().is_some_and(|r| r.contains("steps changed")), "{json}");

    let status = saffron(&["status"], dir.path());
    assert!(stdout(&status).contains(&format!("[proposal pending: {PROPOSAL}, STALE]")), "{}", all(&status));
    assert!(stdout(&status).contains("STALE: the scenario's steps changed"), "{}", all(&status));
    let json: Value =
        serde_json::from_slice(&saffron(&["status", "--format", "json"], dir.path()).stdout).expect("json");
    let buy = json.as_array().expect("array").iter().find(|s| s["name"] == "Buy").expect("Buy");
    assert_eq!(buy["proposal"]["stale"], true, "{json}");
    assert!(buy["proposal"]["staleReasons"][0].as_str().is_some_and(|r| r.contains("steps changed")), "{json}");
}

#[test]
fn an_unverified_proposal_is_listed_with_its_proof_failure_and_refused() {
    let (dir, store) = project();
    file(&store, renamed_button(), vec![], Some("step 2: no element matched button \"Buy now\""));
    let listed = saffron(&["proposals", "--format", "json"], dir.path());
    let json: Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(json["proposals"][0]["stale"], false, "{json}");
    assert_eq!(json["proposals"][0]["acceptable"], false, "{json}");
    assert!(json["proposals"][0]["unverified"].as_str().is_some_and(|f| f.contains("no element matched")), "{json}");
    let text = stdout(&saffron(&["proposals"], dir.path()));
    assert!(text.contains("[UNVERIFIED]") && text.contains("UNVERIFIED: its proof replay failed"), "{text}");
    let output = saffron(&["accept", PROPOSAL], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", all(&output));
    assert!(all(&output).contains("did not pass its proof replay"), "{}", all(&output));
    assert_eq!(button(&store, BUY), "Buy");
    assert!(stdout(&saffron(&["status"], dir.path())).contains("UNVERIFIED"));
}

#[test]
fn proposals_and_diff_show_what_a_reviewer_needs() {
    let (dir, store) = project();
    file(&store, renamed_button(), vec![rename_edit()], None);
    std::fs::create_dir_all(dir.path().join(".saffron/proposals/admin")).expect("mkdir");
    std::fs::write(dir.path().join(".saffron/proposals/admin/audit.json"), "{ damaged").expect("write");

    let listed = saffron(&["proposals"], dir.path());
    let text = stdout(&listed);
    assert!(text.contains(&format!("{PROPOSAL}  features/shop.feature / \"Buy\"")), "{}", all(&listed));
    assert!(text.contains("1 changed step(s), 1 action change(s), 1 feature edit(s)"), "{text}");
    assert!(text.contains("The Buy button is now called Buy now."), "{text}");
    assert!(text.contains("usage: 1200 input tokens, 300 output tokens, $0.0123"), "{text}");
    assert!(text.contains(".saffron/proposals/admin/audit.json  UNREADABLE"), "{text}");
    assert!(!text.contains("STALE"), "{text}");

    let diff = saffron(&["diff", "shop/buy"], dir.path());
    assert_eq!(diff.status.code(), Some(0), "{}", all(&diff));
    let text = stdout(&diff);
    assert!(text.contains("Acceptable"), "{text}");
    assert!(
        text.contains(
            "When I buy\n  - [1] click button \"Buy\" (css #buy)\n  + [1] click button \"Buy now\" (css #buy)"
        ),
        "{text}"
    );
    assert!(text.contains("Adaptation: locator: button \"Buy\" → button \"Buy now\""), "{text}");
    assert!(
        text.contains(
            "features/sets.saffron:3 (StepSet \"sign in\")\n-     Given I sign in as admin\n+     Given I sign in as an admin"
        ),
        "{text}"
    );
    let unreadable = saffron(&["diff", ".saffron/proposals/admin/audit.json"], dir.path());
    assert_eq!(unreadable.status.code(), Some(1), "{}", all(&unreadable));
    assert!(all(&unreadable).contains("cannot be read"), "{}", all(&unreadable));
    let outside = saffron(&["diff", "../elsewhere"], dir.path());
    assert_eq!(outside.status.code(), Some(2), "{}", all(&outside));
}

#[test]
fn a_rename_proposal_needs_the_flag_and_then_follows_the_step_set_into_every_recording() {
    let (dir, store) = project();
    let proposed = recording("features/shop.feature", "Buy", "I sign in as admin", "Buy");
    file(&store, proposed, vec![rename_edit()], None);

    let output = saffron(&["accept", PROPOSAL], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", all(&output));
    assert!(all(&output).contains("hint: this proposal only edits feature files: accept it with --with-feature-edit"));
    assert_eq!(std::fs::read_to_string(dir.path().join("features/sets.saffron")).expect("read"), SETS);

    let output = saffron(&["accept", PROPOSAL, "--with-feature-edit"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", all(&output));
    let text = stdout(&output);
    assert!(text.contains("edited features/sets.saffron:3: Given I sign in as an admin"), "{text}");
    assert!(text.contains(&format!("renamed 1 step(s) in {AUDIT} (features/admin.feature / \"Audit\")")), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("features/sets.saffron")).expect("read"),
        SETS.replace("as admin", "as an admin")
    );
    // Both scenarios are fresh as they now parse: no recording was left stale by the edit.
    let status = saffron(&["status", "--format", "json"], dir.path());
    let json: Value = serde_json::from_slice(&status.stdout).expect("json");
    let states: Vec<&str> = json.as_array().expect("array").iter().filter_map(|s| s["recording"].as_str()).collect();
    assert_eq!(states, ["fresh", "fresh"], "{json}");
}

#[test]
fn propagate_rewrites_the_other_recording_with_the_same_target_and_lists_it() {
    let (dir, store) = project();
    file(&store, renamed_button(), vec![], None);
    let output = saffron(&["accept", PROPOSAL, "--propagate"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", all(&output));
    assert!(
        stdout(&output)
            .contains(&format!("propagated to {AUDIT} (features/admin.feature / \"Audit\"): 1 action(s) changed")),
        "{}",
        all(&output)
    );
    assert_eq!(button(&store, AUDIT), "Buy now");
    assert_eq!(button(&store, BUY), "Buy now");
}

#[test]
fn reject_removes_the_proposal_and_keeps_the_recording() {
    let (dir, store) = project();
    file(&store, renamed_button(), vec![], None);
    let committed = std::fs::read_to_string(dir.path().join(BUY)).expect("read");
    let output = saffron(&["reject", "shop/buy"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", all(&output));
    assert!(stdout(&output).contains(&format!("Rejected {PROPOSAL} (\"Buy\")")), "{}", all(&output));
    assert!(!dir.path().join(PROPOSAL).exists());
    assert_eq!(std::fs::read_to_string(dir.path().join(BUY)).expect("read"), committed);
    let again = saffron(&["reject", PROPOSAL], dir.path());
    assert_eq!(again.status.code(), Some(2), "{}", all(&again));
    // An unreadable proposal can be rejected.
    std::fs::create_dir_all(dir.path().join(".saffron/proposals/shop")).expect("mkdir");
    std::fs::write(dir.path().join(PROPOSAL), "{ damaged").expect("write");
    assert_eq!(saffron(&["accept", PROPOSAL], dir.path()).status.code(), Some(1));
    let output = saffron(&["reject", PROPOSAL], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", all(&output));
    assert!(!dir.path().join(PROPOSAL).exists());
    let outside = saffron(&["reject", "features/shop.feature"], dir.path());
    assert_eq!(outside.status.code(), Some(2), "{}", all(&outside));
    assert!(dir.path().join("features/shop.feature").exists());
}

/// The project the editor tests (VS Code, Neovim) press Accept and Reject on with the real
/// binary: `tests/review/project`, holding a fresh proposal. Proposals are bound by digests only
/// Rust computes, so it is generated here; `UPDATE_FIXTURES=1` writes it again after a format
/// change, and otherwise this test fails when the committed copy would no longer be accepted.
#[test]
fn the_editor_review_fixture_holds_a_fresh_proposal() {
    const FEATURE: &str = "Feature: Review\n  Scenario: Buy\n    Given I am on the shop\n    When I buy\n";
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/review/project");
    let generated = tempfile::tempdir().expect("temp dir");
    let root = generated.path();
    std::fs::create_dir_all(root.join("features")).expect("mkdir");
    std::fs::write(root.join("saffron.toml"), "").expect("config");
    std::fs::write(root.join("features/review.feature"), FEATURE).expect("feature");
    let store = Store::open(root).expect("store");
    let recording = |button: &str| {
        Recording::new(
            "features/review.feature",
            "Buy",
            vec![
                RecordedStep::new(
                    StepSpec::new(StepKind::Context, "I am on the shop"),
                    vec![Action::Goto { url: "/shop".into(), timeout_ms: None }],
                ),
                RecordedStep::new(
                    StepSpec::new(StepKind::Action, "I buy"),
                    vec![Action::Click { target: Target::role("button", button), timeout_ms: None }],
                ),
            ],
        )
    };
    let committed = recording("Buy");
    store.write_recording(&root.join(".saffron/cache/review/buy.json"), &committed).expect("recording");
    let draft = ProposalDraft {
        scenario: ScenarioRef {
            feature: "features/review.feature".into(),
            name: "Buy".into(),
            cache_path: ".saffron/cache/review/buy.json".into(),
        },
        recording: recording("Buy now"),
        feature_edits: vec![],
        narrative: "The Buy button is now called Buy now.".into(),
        adaptations: vec![],
        usage: None,
        filed_at: None,
        unverified: None,
    };
    let proposal = Proposal::file(draft, Some(&committed));
    store.write_proposal(&root.join(".saffron/proposals/review/buy.json"), &proposal).expect("proposal");
    let files = [
        "saffron.toml",
        "features/review.feature",
        ".saffron/cache/review/buy.json",
        ".saffron/proposals/review/buy.json",
    ];
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        for file in files {
            std::fs::create_dir_all(fixture.join(file).parent().expect("a folder")).expect("mkdir");
            std::fs::copy(root.join(file), fixture.join(file)).expect("copy");
        }
    }
    for file in files {
        let want = std::fs::read_to_string(root.join(file)).expect("generated");
        let have = std::fs::read_to_string(fixture.join(file)).unwrap_or_default();
        assert_eq!(have, want, "tests/review/project/{file} is out of date: run with UPDATE_FIXTURES=1");
    }
    let listed = saffron(&["proposals", "--format", "json"], &fixture);
    let json: Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(json["proposals"][0]["acceptable"], true, "{json}");
}
