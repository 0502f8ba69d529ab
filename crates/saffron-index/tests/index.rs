//! The index on small projects: statuses, near-duplicates, behaviour-proven duplicates,
//! scenario freshness, and incremental updates equal to a cold build.

use std::path::PathBuf;

use proptest::prelude::*;
use saffron_index::{Change, IndexHost, RecordingState, StepStatus};
use saffron_recording::{Action, RecordedStep, Recording, StepKind, StepSpec, Target};

fn click(name: &str) -> Action {
    Action::Click { target: Target::role("button", name), timeout_ms: None }
}

fn recording(feature: &str, scenario: &str, steps: &[(StepKind, &str, Vec<Action>)]) -> Box<Recording> {
    Box::new(Recording::new(
        feature,
        scenario,
        steps
            .iter()
            .map(|(kind, text, actions)| RecordedStep::new(StepSpec::new(*kind, *text), actions.clone()))
            .collect(),
    ))
}

fn file(path: &str, text: &str) -> Change {
    Change::SetFile { path: PathBuf::from(path), text: text.to_string() }
}

const SIGN_IN: &str = "\
Feature: Sign in
  Scenario: Good password
    Given I am on the sign-in page
    When I sign in with the demo account
    Then I see the orders page

  Scenario: Wrong password
    Given I am on the sign-in page
    When I sign in with a wrong password
    Then I see an error
";

const SHARED: &str = "\
Feature: Shared
  StepSet: signed in
    Given I am on the sign-in page
    When I sign in with the demo account
";

const ORDERS: &str = "\
Feature: Orders
  Scenario: Search
    StepSet signed in
    When I search for the orders of \"Ada\"
    Then I see the order list

  Scenario: Open
    StepSet signed in
    When I click on the Open button
";

fn project() -> IndexHost {
    let mut host = IndexHost::new();
    host.apply_all([
        file("features/sign_in.feature", SIGN_IN),
        file("features/shared.steps.saffron", SHARED),
        file("features/orders.saffron", ORDERS),
        Change::SetRecording {
            path: PathBuf::from(".saffron/cache/sign-in/good-password.json"),
            recording: recording(
                "features/sign_in.feature",
                "Good password",
                &[
                    (
                        StepKind::Context,
                        "I am on the sign-in page",
                        vec![Action::Goto { url: "/login".into(), timeout_ms: None }],
                    ),
                    (StepKind::Action, "I sign in with the demo account", vec![click("Sign in")]),
                    (StepKind::Outcome, "I see the orders page", vec![]),
                ],
            ),
        },
        Change::SetRecording {
            path: PathBuf::from(".saffron/cache/orders/search.json"),
            recording: recording(
                "features/orders.saffron",
                "Search",
                &[
                    (
                        StepKind::Context,
                        "I am on the sign-in page",
                        vec![Action::Goto { url: "/login".into(), timeout_ms: None }],
                    ),
                    // Same text, other actions: divergent.
                    (StepKind::Action, "I sign in with the demo account", vec![click("Log in")]),
                    (StepKind::Action, "I search for the orders of \"Ada\"", vec![click("Search")]),
                    (StepKind::Outcome, "I see the order list", vec![]),
                ],
            ),
        },
        Change::SetRecording {
            path: PathBuf::from(".saffron/cache/orders/open.json"),
            recording: recording(
                "features/orders.saffron",
                "Open",
                &[
                    (
                        StepKind::Context,
                        "I am on the sign-in page",
                        vec![Action::Goto { url: "/login".into(), timeout_ms: None }],
                    ),
                    (StepKind::Action, "I sign in with the demo account", vec![click("Sign in")]),
                    // Other wording, same actions as "I search ...": a behaviour-proven duplicate.
                    (StepKind::Action, "I press search", vec![click("Search")]),
                ],
            ),
        },
    ]);
    host
}

#[test]
fn statuses_counts_and_uses() {
    let snapshot = project().snapshot();
    let status = |text: &str| snapshot.entry(text).map(|e| e.status());
    assert_eq!(status("I am on the sign-in page"), Some(StepStatus::Recorded));
    assert_eq!(status("I sign in with the demo account"), Some(StepStatus::Divergent));
    assert_eq!(status("I see an error"), Some(StepStatus::Unrecorded));
    // Written twice in sign_in.feature and once in the set (the set counts once).
    let entry = snapshot.entry("I am on the sign-in page").expect("entry");
    assert_eq!(entry.count(), 3);
    assert_eq!(entry.uses[0].file.to_str(), Some("features/shared.steps.saffron"));
    // Only in a recording: still vocabulary, with no written use.
    let press = snapshot.entry("I press search").expect("recorded-only entry");
    assert_eq!((press.count(), press.status()), (0, StepStatus::Recorded));
    assert_eq!(snapshot.entry("I sign in with the demo account").map(|e| e.action_lists().len()), Some(2));
}

#[test]
fn near_duplicates_and_behaviour_duplicates() {
    let snapshot = project().snapshot();
    let near: Vec<String> =
        snapshot.near_duplicates("I click the Open button").iter().map(|d| d.text.to_string()).collect();
    assert_eq!(near, ["I click on the Open button"]);
    assert!(snapshot.near_duplicates("I see the orders page").iter().all(|d| d.similarity >= 0.7));
    assert_eq!(
        snapshot.same_behaviour("I search for the orders of \"Ada\"").iter().map(|t| t.to_string()).collect::<Vec<_>>(),
        ["I press search"]
    );
    // Same pattern with other values is not wording drift.
    assert!(snapshot.near_duplicates("I search for the orders of \"Bob\"").is_empty());
}

#[test]
fn scenario_freshness_follows_the_steps_and_the_sets() {
    let mut host = project();
    let states = |host: &IndexHost| -> Vec<(String, &'static str)> {
        host.snapshot().scenarios().iter().map(|s| (s.name.clone(), s.recording.as_str())).collect()
    };
    assert_eq!(
        states(&host),
        [
            // Expanded through the set, its steps are what was recorded.
            ("Search".to_string(), "fresh"),
            // The recording holds "I press search" where the scenario now clicks Open.
            ("Open".to_string(), "stale"),
            ("Good password".to_string(), "fresh"),
            ("Wrong password".to_string(), "unrecorded"),
        ]
    );
    // Editing a step of a fresh scenario makes it stale.
    host.apply(file(
        "features/sign_in.feature",
        &SIGN_IN.replace("Then I see the orders page", "Then I see my orders"),
    ));
    assert_eq!(states(&host)[2], ("Good password".to_string(), "stale"));
    let recording = host.snapshot().scenarios()[2].recording_path.to_path_buf();
    assert_eq!(recording, PathBuf::from(".saffron/cache/sign-in/good-password.json"));
    host.apply(Change::SetUnreadableRecording { path: recording, reason: "steps[0]: bad".into() });
    assert_eq!(host.snapshot().scenarios()[2].recording, RecordingState::Unreadable { reason: "steps[0]: bad".into() });
}

#[test]
fn a_snapshot_does_not_move_when_the_host_does() {
    let mut host = project();
    let before = host.snapshot();
    host.apply(Change::RemoveFile { path: PathBuf::from("features/sign_in.feature") });
    assert!(before.entry("I see an error").is_some());
    assert!(host.snapshot().entry("I see an error").is_none());
}

/// The succession's count maps are changed in place while no snapshot shares them, and copied
/// first when one does: a snapshot taken before keeps every count, follower, variant and folder
/// it had, whatever the host does after.
#[test]
fn a_snapshot_keeps_its_succession_counts_when_the_host_changes_them() {
    let mut host = project();
    let before = host.snapshot();
    let held = before.canonical();
    let followers = |snapshot: &saffron_index::Snapshot| -> Vec<(String, u32)> {
        let mut list: Vec<(String, u32)> =
            snapshot.followers("i am on the sign-in page").map(|(text, count)| (text.to_string(), count)).collect();
        list.sort();
        list
    };
    let followed_before = followers(&before);
    assert_eq!(followed_before.len(), 2, "{followed_before:?}");
    // The same maps again: a new follower, a count up, a variant gone, a folder's patterns.
    host.apply(file(
        "features/sign_in.feature",
        &SIGN_IN.replace("Then I see an error", "Then I see the orders page").replace(
            "Scenario: Wrong password",
            "Scenario: Reset\n    Given I am on the sign-in page\n    When I reset my password\n\n  Scenario: Wrong password",
        ),
    ));
    host.apply(Change::RemoveFile { path: PathBuf::from("features/orders.saffron") });
    assert_ne!(followers(&host.snapshot()), followed_before, "the host's counts changed");
    assert_eq!(followers(&before), followed_before);
    assert_eq!(before.canonical(), held);
}

// ---- incremental == cold ----

const TEXTS: &[&str] = &[
    "I am on the sign-in page",
    "I sign in with the demo account",
    "I sign in with the demo accounts",
    "I see the orders page",
    "I see the order page",
    "I search for \"tea\"",
    "I search for \"mugs\"",
    "I open the new order form",
    "I save the order",
];

#[test]
fn succession_counts_followers_roles_variants_and_folders_as_files_change() {
    let mut host = IndexHost::new();
    host.apply_all([
        file(
            "features/a.feature",
            "Feature: A\n  Scenario: s\n    Given I am on the shop\n    When I search for \"tea\"\n    Then I see 2 results\n",
        ),
        file(
            "features/b.feature",
            "Feature: B\n  Scenario: s\n    Given I am on the shop\n    When I search for \"mugs\"\n    And I see 3 results\n",
        ),
    ]);
    let sorted = |pairs: Vec<(String, u32)>| {
        let mut pairs = pairs;
        pairs.sort();
        pairs
    };
    let followers = |host: &IndexHost, previous: &str| {
        sorted(host.snapshot().followers(previous).map(|(pattern, count)| (pattern.to_string(), count)).collect())
    };
    let variants = |host: &IndexHost, pattern: &str| {
        sorted(host.snapshot().variants(pattern).map(|(text, count)| (text.to_string(), count)).collect())
    };
    assert_eq!(followers(&host, saffron_index::BLOCK_START), [("i am on the shop".to_string(), 2)]);
    assert_eq!(followers(&host, "i am on the shop"), [("i search for \"\"".to_string(), 2)]);
    assert_eq!(followers(&host, "i search for \"\""), [("i see 0 results".to_string(), 2)]);
    // `Then` makes an outcome, `And` after `When` an action.
    assert_eq!(host.snapshot().roles("i see 0 results").0, [0, 1, 1]);
    assert_eq!(
        variants(&host, "i search for \"\""),
        [("I search for \"mugs\"".to_string(), 1), ("I search for \"tea\"".to_string(), 1)]
    );
    assert_eq!(host.snapshot().folder_patterns(std::path::Path::new("features")).count(), 3);

    // An edit moves only what it changes; a removal takes the file's counts away.
    host.apply(file(
        "features/b.feature",
        "Feature: B\n  Scenario: s\n    Given I am on the shop\n    When I search for \"tea\"\n    Then I see the cart\n",
    ));
    assert_eq!(
        followers(&host, "i search for \"\""),
        [("i see 0 results".to_string(), 1), ("i see the cart".to_string(), 1)]
    );
    assert_eq!(variants(&host, "i search for \"\""), [("I search for \"tea\"".to_string(), 2)]);
    assert_eq!(host.snapshot().roles("i see 0 results").0, [0, 0, 1]);
    host.apply(Change::RemoveFile { path: PathBuf::from("features/a.feature") });
    assert_eq!(followers(&host, "i search for \"\""), [("i see the cart".to_string(), 1)]);
    assert_eq!(host.snapshot().roles("i see 0 results").0, [0, 0, 0]);
    assert_eq!(variants(&host, "i search for \"\""), [("I search for \"tea\"".to_string(), 1)]);
}

fn feature_text(steps: &[usize], with_set: bool, invoke: bool) -> String {
    let mut text = String::from("Feature: F\n");
    if with_set {
        text.push_str("  StepSet: common\n    Given I am on the sign-in page\n\n");
    }
    text.push_str("  Scenario: S\n");
    if invoke {
        text.push_str("    StepSet common\n");
    }
    for (i, step) in steps.iter().enumerate() {
        // Every keyword, so the succession's roles (And takes the previous step's) are exercised.
        let keyword = ["Given", "When", "Then", "And"][(step + i) % 4];
        text.push_str(&format!("    {keyword} {}\n", TEXTS[*step % TEXTS.len()]));
    }
    text
}

#[derive(Debug, Clone)]
enum Edit {
    SetFile { file: usize, steps: Vec<usize>, with_set: bool, invoke: bool },
    RemoveFile { file: usize },
    SetRecording { file: usize, steps: Vec<(usize, u8)> },
    RemoveRecording { file: usize },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0..4usize, prop::collection::vec(0..TEXTS.len(), 0..5), any::<bool>(), any::<bool>())
            .prop_map(|(file, steps, with_set, invoke)| Edit::SetFile { file, steps, with_set, invoke }),
        (0..4usize).prop_map(|file| Edit::RemoveFile { file }),
        (0..4usize, prop::collection::vec((0..TEXTS.len(), 0..3u8), 0..5))
            .prop_map(|(file, steps)| Edit::SetRecording { file, steps }),
        (0..4usize).prop_map(|file| Edit::RemoveRecording { file }),
    ]
}

fn feature_path(file: usize) -> PathBuf {
    PathBuf::from(format!("features/f{file}.{}", if file.is_multiple_of(2) { "saffron" } else { "feature" }))
}

fn recording_path(file: usize) -> PathBuf {
    PathBuf::from(format!(".saffron/cache/f{file}/s.json"))
}

fn to_change(edit: &Edit) -> Change {
    match edit {
        Edit::SetFile { file, steps, with_set, invoke } => Change::SetFile {
            path: feature_path(*file),
            text: feature_text(steps, *with_set && file.is_multiple_of(2), *invoke && file.is_multiple_of(2)),
        },
        Edit::RemoveFile { file } => Change::RemoveFile { path: feature_path(*file) },
        Edit::SetRecording { file, steps } => Change::SetRecording {
            path: recording_path(*file),
            recording: recording(
                &feature_path(*file).display().to_string(),
                "S",
                &steps
                    .iter()
                    .map(|(text, button)| {
                        let actions = if *button == 0 { vec![] } else { vec![click(&format!("b{button}"))] };
                        (StepKind::Context, TEXTS[*text], actions)
                    })
                    .collect::<Vec<_>>(),
            ),
        },
        Edit::RemoveRecording { file } => Change::RemoveRecording { path: recording_path(*file) },
    }
}

/// A project with thousands of step texts in a hundred files: loaded in one batch, they are
/// added in bulk on all cores (the succession counts beside the uses); the result must be the
/// index that file-by-file updates build. So must a second batch that rewrites most files and
/// removes others.
#[test]
fn a_bulk_load_equals_file_by_file_updates() {
    // A word per number, so texts share few tokens (near-duplicates stay cheap to find).
    let word = |mut n: usize| {
        let mut word = String::new();
        loop {
            word.push(char::from(b'a' + (n % 26) as u8));
            n /= 26;
            if n == 0 {
                return word;
            }
        }
    };
    let feature = |f: usize, version: usize| {
        let mut text = format!("Feature: F{f}\n  Scenario: S\n");
        for s in 0..20 {
            // Some texts are in many files, most in one; a new version keeps some steps.
            let step = if s % 5 == 0 {
                format!("I open the {} page", word(s))
            } else {
                format!(
                    "I {} the {} of <{}>",
                    word(f * 20 + s + version * (s % 2)),
                    word(f * 7 + s * 3 + 1000),
                    word(s)
                )
            };
            text.push_str(&format!("    Given {step}\n    And {step} {}\n", word(s + 5000)));
        }
        file(&format!("features/f{f}.feature"), &text)
    };
    let files: Vec<Change> = (0..100).map(|f| feature(f, 0)).collect();
    let rewrites: Vec<Change> = (0..100)
        .map(|f| match f % 4 {
            0 => Change::RemoveFile { path: PathBuf::from(format!("features/f{f}.feature")) },
            _ => feature(f, 7),
        })
        .collect();
    let recorded = Change::SetRecording {
        path: PathBuf::from(".saffron/cache/f0/s.json"),
        recording: recording(
            "features/f0.feature",
            "S",
            &[
                (StepKind::Context, "I open the f page", vec![click("Open")]),
                (StepKind::Context, "only recorded", vec![]),
            ],
        ),
    };
    let mut bulk = IndexHost::new();
    bulk.apply_all(files.iter().cloned().chain([recorded.clone()]));
    let mut one_by_one = IndexHost::new();
    one_by_one.apply(recorded.clone());
    for change in files {
        one_by_one.apply(change);
    }
    let same = |bulk: &IndexHost, one_by_one: &IndexHost| {
        let (bulk, one_by_one) = (bulk.snapshot(), one_by_one.snapshot());
        assert!(bulk.entry_count() > 900, "{} texts: too few for a bulk load", bulk.entry_count());
        let canonical = bulk.canonical();
        assert_eq!(canonical["byRank"], canonical["rankFromEntries"]);
        assert_eq!(canonical["byLowercase"], canonical["lowercaseFromEntries"]);
        assert_eq!(canonical["nearPostings"], canonical["nearPostingsFromEntries"]);
        assert_eq!(canonical, one_by_one.canonical());
    };
    same(&bulk, &one_by_one);
    bulk.apply_all(rewrites.iter().cloned());
    let mut cold = IndexHost::new();
    cold.apply_all(
        rewrites.iter().filter(|change| matches!(change, Change::SetFile { .. })).cloned().chain([recorded]),
    );
    for change in rewrites {
        one_by_one.apply(change);
    }
    same(&bulk, &one_by_one);
    same(&bulk, &cold);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn incremental_updates_equal_a_cold_build(edits in prop::collection::vec(edit(), 1..25)) {
        let mut incremental = IndexHost::new();
        for edit in &edits {
            incremental.apply(to_change(edit));
        }
        // The final project, built in one go.
        let mut files: std::collections::BTreeMap<PathBuf, Change> = Default::default();
        let mut recordings: std::collections::BTreeMap<PathBuf, Change> = Default::default();
        for edit in &edits {
            match edit {
                Edit::SetFile { file, .. } => { files.insert(feature_path(*file), to_change(edit)); }
                Edit::RemoveFile { file } => { files.remove(&feature_path(*file)); }
                Edit::SetRecording { file, .. } => { recordings.insert(recording_path(*file), to_change(edit)); }
                Edit::RemoveRecording { file } => { recordings.remove(&recording_path(*file)); }
            }
        }
        let mut cold = IndexHost::new();
        cold.apply_all(files.into_values().chain(recordings.into_values()));
        let canonical = incremental.snapshot().canonical();
        prop_assert_eq!(&canonical["byRank"], &canonical["rankFromEntries"], "the completion order follows the entries");
        prop_assert_eq!(&canonical["byLowercase"], &canonical["lowercaseFromEntries"], "the prefix order follows the entries");
        prop_assert_eq!(&canonical["nearPostings"], &canonical["nearPostingsFromEntries"], "the near-duplicate postings follow the entries");
        prop_assert_eq!(canonical, cold.snapshot().canonical());
    }
}

#[test]
fn the_texts_on_a_line_are_those_written_there() {
    let mut host = IndexHost::new();
    let text = "Feature: f\n  Background:\n    Given a\n  Scenario: s\n    Given b\n    When c\n\n  Rule: r\n    Scenario: t\n      Then d\n";
    host.apply(file("features/lines.feature", text));
    let snapshot = host.snapshot();
    let data = snapshot.file(std::path::Path::new("features/lines.feature")).expect("indexed");
    let on = |line: u32| data.texts_on_line(line).map(|text| text.to_string()).collect::<Vec<_>>();
    assert_eq!([on(3), on(5), on(6), on(10)], [["a"], ["b"], ["c"], ["d"]]);
    assert!(on(1).is_empty() && on(4).is_empty() && on(7).is_empty() && on(11).is_empty());
}
