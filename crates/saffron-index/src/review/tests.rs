use std::path::Path;

use saffron_recording::{
    Action, FeatureEdit, Proposal, ProposalDraft, RecordedStep, Recording, ScenarioRef, StepKind, StepSpec, Store,
    Target,
};

use super::*;
use crate::IndexHost;

const SETS: &str = "Feature: Sets\n  StepSet: sign in\n    Given I sign in as admin\n";
const SHOP: &str = "Feature: Shop\n  Scenario: Buy\n    StepSet sign in\n    When I buy\n    Then I see \"Thanks\"\n";
const ADMIN: &str = "Feature: Admin\n  Scenario: Audit\n    StepSet sign in\n    When I open the audit\n";
const BUY: &str = ".saffron/cache/shop/buy.json";
const AUDIT: &str = ".saffron/cache/admin/audit.json";
const PROPOSAL: &str = ".saffron/proposals/shop/buy.json";

fn button(name: &str) -> Target {
    Target { css: vec!["#buy".into()], ..Target::role("button", name) }
}

fn sign_in(text: &str) -> RecordedStep {
    RecordedStep::new(
        StepSpec::new(StepKind::Context, text),
        vec![Action::Click { target: Target::role("button", "Sign in"), timeout_ms: None }],
    )
}

fn buy(name: &str, sign_in_text: &str) -> Recording {
    Recording::new(
        "features/shop.feature",
        "Buy",
        vec![
            sign_in(sign_in_text),
            RecordedStep::new(
                StepSpec::new(StepKind::Action, "I buy"),
                vec![Action::Click { target: button(name), timeout_ms: None }],
            ),
            RecordedStep::new(
                StepSpec::new(StepKind::Outcome, "I see \"Thanks\""),
                vec![Action::ExpectText {
                    target: Target::role("status", "Thanks"),
                    text: Some("Thanks".into()),
                    text_regex: None,
                    timeout_ms: None,
                }],
            ),
        ],
    )
}

fn audit(target: Target) -> Recording {
    Recording::new(
        "features/admin.feature",
        "Audit",
        vec![
            sign_in("I sign in as admin"),
            RecordedStep::new(
                StepSpec::new(StepKind::Action, "I open the audit"),
                vec![
                    Action::Click { target: target.clone(), timeout_ms: None },
                    Action::ExpectVisible { target, timeout_ms: None },
                ],
            ),
        ],
    )
}

struct Fixture {
    dir: tempfile::TempDir,
    store: Store,
}

impl Fixture {
    /// A project with two recorded scenarios sharing the StepSet "sign in", and a proposal for
    /// "Buy" made of `proposed` and `edits` against the committed "Buy" recording.
    fn new(proposed: Recording, edits: Vec<FeatureEdit>, unverified: Option<&str>) -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("features")).expect("mkdir");
        std::fs::write(root.join("features/sets.saffron"), SETS).expect("write");
        std::fs::write(root.join("features/shop.feature"), SHOP).expect("write");
        std::fs::write(root.join("features/admin.feature"), ADMIN).expect("write");
        let store = Store::open(root).expect("store");
        let committed = buy("Buy", "I sign in as admin");
        store.write_recording(&root.join(BUY), &committed).expect("buy");
        store.write_recording(&root.join(AUDIT), &audit(button("Buy"))).expect("audit");
        let draft = ProposalDraft {
            scenario: ScenarioRef {
                feature: "features/shop.feature".into(),
                name: "Buy".into(),
                cache_path: BUY.into(),
            },
            recording: proposed,
            feature_edits: edits,
            narrative: "The button was renamed.".into(),
            adaptations: vec![],
            usage: None,
            filed_at: None,
            unverified: unverified.map(str::to_string),
        };
        store.write_proposal(&root.join(PROPOSAL), &Proposal::file(draft, Some(&committed))).expect("proposal");
        Fixture { dir, store }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn snapshot(&self) -> Snapshot {
        IndexHost::load(self.root()).0.snapshot()
    }

    fn accept(&self, options: AcceptOptions) -> Result<Accepted, ReviewError> {
        let root = self.root().to_path_buf();
        accept(&self.store, Path::new(PROPOSAL), options, || IndexHost::load(&root).0.snapshot())
    }

    fn read(&self, path: &str) -> Recording {
        self.store.read_recording(&self.root().join(path)).expect("recording")
    }

    fn text(&self, path: &str) -> String {
        std::fs::read_to_string(self.root().join(path)).expect("read")
    }

    fn proposal_exists(&self) -> bool {
        self.root().join(PROPOSAL).exists()
    }

    /// Every file of the project, to show that a refusal changed nothing.
    fn files(&self) -> Vec<(String, String)> {
        let mut files = Vec::new();
        for entry in ignore::WalkBuilder::new(self.root()).hidden(false).build().filter_map(Result::ok) {
            if entry.file_type().is_some_and(|kind| kind.is_file()) && !entry.path().ends_with(".lock") {
                files.push((entry.path().display().to_string(), std::fs::read_to_string(entry.path()).expect("read")));
            }
        }
        files.sort();
        files
    }
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

fn clicked(recording: &Recording, step: usize) -> &Target {
    recording.steps[step].actions[0].target().expect("a target")
}

#[test]
fn a_fresh_proposal_is_accepted_atomically_and_removed() {
    let fixture = Fixture::new(buy("Buy now", "I sign in as admin"), vec![], None);
    assert!(
        assess(&fixture.snapshot(), &fixture.store.read_proposal(&fixture.root().join(PROPOSAL)).expect("setup"))
            .is_acceptable()
    );
    let accepted = fixture.accept(AcceptOptions::default()).expect("accepted");
    assert_eq!(accepted.recording, Path::new(BUY));
    assert_eq!(clicked(&fixture.read(BUY), 1).name.as_deref(), Some("Buy now"));
    assert!(!fixture.proposal_exists());
    assert!(accepted.propagated.is_empty(), "no propagation unless asked");
    assert_eq!(clicked(&fixture.read(AUDIT), 1).name.as_deref(), Some("Buy"));
    assert!(matches!(fixture.accept(AcceptOptions::default()), Err(ReviewError::NotFound { .. })));
}

/// Each binding, broken on disk, refuses the accept by its reason and changes nothing.
#[test]
fn every_stale_reason_refuses_and_writes_nothing() {
    type Break = fn(&Fixture);
    let cases: [(&str, Break, &str); 7] = [
        (
            "scenario edited",
            |f| {
                std::fs::write(f.root().join("features/shop.feature"), SHOP.replace("I buy", "I buy it"))
                    .expect("setup")
            },
            "steps changed",
        ),
        (
            "StepSet edited",
            |f| std::fs::write(f.root().join("features/sets.saffron"), SETS.replace("admin", "root")).expect("setup"),
            "steps changed",
        ),
        (
            "recording edited",
            |f| f.store.write_recording(&f.root().join(BUY), &buy("Purchase", "I sign in as admin")).expect("setup"),
            "committed recording changed",
        ),
        (
            "proposal edited",
            |f| {
                let text = f.text(PROPOSAL).replace("\"Buy now\"", "\"Buy later\"");
                std::fs::write(f.root().join(PROPOSAL), text).expect("setup");
            },
            "edited after it was filed",
        ),
        (
            "scenario renamed",
            |f| {
                std::fs::write(f.root().join("features/shop.feature"), SHOP.replace("Scenario: Buy", "Scenario: Sell"))
                    .expect("setup")
            },
            "no longer in features/shop.feature",
        ),
        ("feature gone", |f| std::fs::remove_file(f.root().join("features/shop.feature")).expect("setup"), "is gone"),
        (
            "recording unreadable",
            |f| std::fs::write(f.root().join(BUY), "{ not json").expect("setup"),
            "cannot be read",
        ),
    ];
    for (case, break_it, reason) in cases {
        let fixture = Fixture::new(buy("Buy now", "I sign in as admin"), vec![], None);
        break_it(&fixture);
        let before = fixture.files();
        let proposal = fixture.store.read_proposal(&fixture.root().join(PROPOSAL)).expect("readable");
        let assessment = assess(&fixture.snapshot(), &proposal);
        assert!(assessment.stale_reasons.iter().any(|r| r.contains(reason)), "{case}: {assessment:?}");
        let options = AcceptOptions { with_feature_edit: true, propagate: true, ..AcceptOptions::default() };
        match fixture.accept(options) {
            Err(ReviewError::Stale { reasons }) => {
                assert!(reasons.iter().any(|r| r.contains(reason)), "{case}: {reasons:?}")
            }
            other => panic!("{case}: {other:?}"),
        }
        assert_eq!(fixture.files(), before, "{case}: nothing written");
    }
}

#[test]
fn a_cache_path_outside_the_cache_is_stale_and_never_written() {
    assert_eq!(recording_path(".saffron/cache/a/b.json"), Some(PathBuf::from(".saffron/cache/a/b.json")));
    assert_eq!(recording_path(".saffron/cache/../../x.json"), None);
    assert_eq!(recording_path("features/a.feature"), None);
    assert_eq!(recording_path(".saffron/cache/a/b.txt"), None);
}

#[test]
fn an_unverified_proposal_is_refused_with_its_proof_failure() {
    let fixture = Fixture::new(buy("Buy now", "I sign in as admin"), vec![], Some("step 2: no button \"Buy now\""));
    let proposal = fixture.store.read_proposal(&fixture.root().join(PROPOSAL)).expect("readable");
    let assessment = assess(&fixture.snapshot(), &proposal);
    assert!(!assessment.is_stale() && !assessment.is_acceptable());
    assert!(assessment.refusals()[0].contains("no button \"Buy now\""), "{assessment:?}");
    let before = fixture.files();
    let refused = fixture.accept(AcceptOptions::default()).expect_err("unverified");
    assert!(matches!(&refused, ReviewError::Unverified { failure } if failure.contains("no button")), "{refused:?}");
    assert!(refused.is_refusal());
    assert_eq!(fixture.files(), before);
}

#[test]
fn a_rename_proposal_needs_the_flag_then_edits_the_step_set_and_renames_every_recording_that_runs_it() {
    let fixture = Fixture::new(buy("Buy", "I sign in as admin"), vec![rename_edit()], None);
    let before = fixture.files();
    let refused = fixture.accept(AcceptOptions::default()).expect_err("needs the flag");
    assert!(refused.hint().contains("--with-feature-edit"), "{}", refused.hint());
    assert_eq!(fixture.files(), before);

    let accepted =
        fixture.accept(AcceptOptions { with_feature_edit: true, ..AcceptOptions::default() }).expect("accepted");
    assert_eq!(fixture.text("features/sets.saffron"), SETS.replace("as admin", "as an admin"));
    assert_eq!(accepted.edits.len(), 1);
    assert_eq!(accepted.renamed.len(), 1, "{accepted:?}");
    assert_eq!(accepted.renamed[0].recording, Path::new(AUDIT));
    assert_eq!(fixture.read(BUY).steps[0].text, "I sign in as an admin");
    assert_eq!(fixture.read(AUDIT).steps[0].text, "I sign in as an admin");
    assert_eq!(fixture.read(AUDIT).steps[0].actions, audit(button("Buy")).steps[0].actions, "actions unchanged");
    // Both scenarios are fresh as they now parse: the edit left nothing stale.
    let fresh = fixture.snapshot();
    let states: Vec<&str> = fresh.scenarios().iter().map(|s| s.recording.as_str()).collect();
    assert_eq!(states, ["fresh", "fresh"]);
    assert!(!fixture.proposal_exists());
}

#[test]
fn an_edit_whose_line_moved_is_refused_and_nothing_changes() {
    let mut edit = rename_edit();
    edit.line = 2;
    let fixture = Fixture::new(buy("Buy", "I sign in as admin"), vec![edit], None);
    let before = fixture.files();
    let refused = fixture
        .accept(AcceptOptions { with_feature_edit: true, propagate: true, ..AcceptOptions::default() })
        .expect_err("moved");
    assert!(
        matches!(&refused, ReviewError::EditRefused { reason, .. } if reason.contains("no longer reads")),
        "{refused:?}"
    );
    assert_eq!(fixture.files(), before);

    let mut edit = rename_edit();
    edit.after = "    When I sign in as admin".into();
    let fixture = Fixture::new(buy("Buy", "I sign in as admin"), vec![edit], None);
    let before = fixture.files();
    let refused =
        fixture.accept(AcceptOptions { with_feature_edit: true, ..AcceptOptions::default() }).expect_err("kind");
    assert!(matches!(&refused, ReviewError::DoesNotFit { reason } if reason.contains("step 1")), "{refused:?}");
    assert_eq!(fixture.files(), before);
}

#[test]
fn propagate_rewrites_identical_cores_only_and_never_an_expected_value() {
    let fixture = Fixture::new(buy("Buy now", "I sign in as admin"), vec![], None);
    let root = fixture.root();
    // A third scenario whose target differs in its core (another name): never rewritten.
    std::fs::write(
        root.join("features/other.feature"),
        "Feature: Other\n  Scenario: Cart\n    When I open the audit\n",
    )
    .expect("write");
    let other = Recording::new(
        "features/other.feature",
        "Cart",
        vec![RecordedStep::new(
            StepSpec::new(StepKind::Action, "I open the audit"),
            vec![Action::Click { target: Target::role("button", "Buy later"), timeout_ms: None }],
        )],
    );
    fixture.store.write_recording(&root.join(".saffron/cache/other/cart.json"), &other).expect("other");
    // The audit recording's button has other CSS fallbacks and tier: the core is the same.
    let mut same_core = Target::role("button", "Buy");
    same_core.css = vec!["form > button".into()];
    same_core.tier = Some(saffron_recording::Tier::Css);
    let expect =
        Action::ExpectText { target: same_core.clone(), text: Some("Buy".into()), text_regex: None, timeout_ms: None };
    // A drag onto that button: its drop target has the same core too.
    let drag = Action::Drag { target: Target::role("listitem", "Cart item"), to: same_core.clone(), timeout_ms: None };
    let mut audit_recording = audit(same_core);
    audit_recording.steps[1].actions.push(expect);
    audit_recording.steps[1].actions.push(drag);
    fixture.store.write_recording(&root.join(AUDIT), &audit_recording).expect("audit");
    // The proposal was filed before: re-file it against the same committed recording.
    let accepted = fixture.accept(AcceptOptions { propagate: true, ..AcceptOptions::default() }).expect("accepted");
    assert_eq!(accepted.propagated.len(), 1, "{accepted:?}");
    assert_eq!(accepted.propagated[0].recording, Path::new(AUDIT));
    assert_eq!(accepted.propagated[0].changes, 4);
    let audited = fixture.read(AUDIT);
    for action in &audited.steps[1].actions[..3] {
        assert_eq!(action.target(), Some(&button("Buy now")), "{action:?}");
    }
    assert_eq!(
        audited.steps[1].actions[3].targets(),
        [&Target::role("listitem", "Cart item"), &button("Buy now")],
        "a drop target with the same core moves, the dragged element stays"
    );
    match &audited.steps[1].actions[2] {
        Action::ExpectText { text, .. } => {
            assert_eq!(text.as_deref(), Some("Buy"), "the expected value is never touched")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(clicked(&audited, 0), &Target::role("button", "Sign in"), "other targets stay");
    assert_eq!(fixture.read(".saffron/cache/other/cart.json"), other, "a different core is not rewritten");
}

#[test]
fn reject_removes_readable_and_unreadable_proposals_only() {
    let fixture = Fixture::new(buy("Buy now", "I sign in as admin"), vec![], None);
    assert_eq!(reject(&fixture.store, Path::new(PROPOSAL)).expect("rejected").as_deref(), Some("Buy"));
    assert!(!fixture.proposal_exists());
    assert_eq!(clicked(&fixture.read(BUY), 1).name.as_deref(), Some("Buy"));
    assert!(matches!(reject(&fixture.store, Path::new(PROPOSAL)), Err(ReviewError::NotFound { .. })));

    std::fs::create_dir_all(fixture.root().join(".saffron/proposals/shop")).expect("mkdir");
    std::fs::write(fixture.root().join(PROPOSAL), "{ damaged").expect("write");
    let refused = fixture.accept(AcceptOptions::default()).expect_err("unreadable");
    assert!(matches!(refused, ReviewError::Unreadable { .. }), "{refused:?}");
    assert_eq!(reject(&fixture.store, Path::new(PROPOSAL)).expect("rejected"), None);
    assert!(!fixture.proposal_exists());
}

#[test]
fn a_proposal_is_named_by_its_path_or_its_id() {
    let expected = Some(PathBuf::from(PROPOSAL));
    assert_eq!(proposal_path(PROPOSAL), expected);
    assert_eq!(proposal_path("./.saffron/proposals/shop/buy.json"), expected);
    assert_eq!(proposal_path("shop/buy"), expected);
    assert_eq!(proposal_path("shop/buy.json"), expected);
    assert_eq!(proposal_path("../shop/buy"), None);
    assert_eq!(proposal_path(".saffron/cache/shop/buy.json"), None);
    assert_eq!(proposal_path("/etc/passwd"), None);
    assert_eq!(proposal_path(".saffron/proposals/x.txt"), None);
    assert_eq!(proposal_id(Path::new(PROPOSAL)), "shop/buy");
}

#[test]
fn replace_line_keeps_line_endings_and_checks_the_line() {
    assert_eq!(replace_line("a\r\nb\r\n", 2, "b", "c").as_deref(), Ok("a\r\nc\r\n"));
    assert_eq!(replace_line("a\nb", 2, "b", "c").as_deref(), Ok("a\nc"));
    assert!(replace_line("a\nb\n", 3, "b", "c").is_err());
    assert!(replace_line("a\nb\n", 0, "b", "c").is_err());
    assert!(replace_line("a\nb\n", 1, "b", "c").is_err());
    let refused = |line| replace_line("a\nb\n", line, "b", "c").map_err(|error| error.to_string()).err();
    assert_eq!(refused(0).as_deref(), Some("line 0 does not exist"));
    assert_eq!(refused(3).as_deref(), Some("the file has 2 line(s)"));
    assert_eq!(refused(1).as_deref(), Some("line 1 no longer reads `b` (it reads `a`)"));
}
