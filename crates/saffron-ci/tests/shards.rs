//! Several shards' bundles import as one run: their reports merge with `report --merge`'s rules,
//! a partial set too (CI exports the shards that failed), the report says which shards it holds,
//! and each shard's screenshots come along. Two bundles that report one scenario twice are
//! refused whole. Real git for the remotes; no browser (the reports are made here).

use std::path::{Path, PathBuf};
use std::process::Command;

use saffron_ci::bundle::{self, ExportInput, ImportInput, Limits};
use saffron_ci::ci_env::{CiRun, Provenance};
use saffron_ci::identity;
use saffron_runner::{RunReport, ScenarioResult, ShardOf, Verdict};

const ORIGIN: &str = "https://github.com/acme/shop.git";
const FEATURE: &str = "Feature: Cart\n  Scenario: Add\n    Given a cart\n  Scenario: Remove\n    Given a cart\n";

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").args(args).current_dir(dir).status().expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn project(folder: &Path, name: &str) -> PathBuf {
    let root = folder.join(name);
    std::fs::create_dir_all(root.join("features")).expect("mkdir");
    std::fs::write(root.join("features/cart.feature"), FEATURE).expect("feature");
    git(&root, &["init", "-q"]);
    git(&root, &["remote", "add", "origin", ORIGIN]);
    root
}

fn scenario(name: &str, line: u32, verdict: Verdict, screenshot: Option<&str>) -> ScenarioResult {
    ScenarioResult {
        duration_ms: 10,
        screenshot_file: screenshot.map(str::to_string),
        ..ScenarioResult::new("features/cart.feature", line, name, verdict)
    }
}

/// Shard `index` of 2 ran `scenarios` (with a screenshot for a red one) and exported its bundle.
fn shard_bundle(folder: &Path, index: usize, scenarios: Vec<ScenarioResult>) -> PathBuf {
    let root = project(folder, &format!("shard-{index}"));
    let evidence = scenarios.iter().flat_map(|s| s.screenshot_file.iter().chain(&s.traces).chain(&s.trace_viewer));
    for file in evidence {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
        std::fs::write(&path, format!("{file} of shard {index}")).expect("evidence");
    }
    let mut report = RunReport::new("http://127.0.0.1:8080", 1000, scenarios);
    report.shard = Some(ShardOf { index, total: 2 });
    std::fs::create_dir_all(root.join(".saffron/reports")).expect("mkdir");
    std::fs::write(root.join(".saffron/reports/latest.json"), serde_json::to_vec(&report).expect("json"))
        .expect("report");
    let out = folder.join(bundle::default_name(
        bundle::last_run_shard(&root).map(|s| bundle::Shard { index: s.index, total: s.total }),
    ));
    let input = ExportInput {
        root: root.clone(),
        out: out.clone(),
        provenance: Provenance {
            branch: Some("main".into()),
            commit: None,
            run: Some(CiRun {
                provider: "github-actions".into(),
                id: "51".into(),
                attempt: Some("1".into()),
                link: None,
            }),
        },
        repository: identity::normalize(ORIGIN).map(|id| bundle::manifest::Repository { url: ORIGIN.into(), id }),
        saffron_version: "0.1.0".into(),
        limits: Limits::default(),
    };
    let exported = bundle::export(&input).expect("exported");
    assert_eq!(exported.shard, Some(bundle::Shard { index, total: 2 }));
    exported.path
}

fn import(root: &Path, bundles: &[PathBuf]) -> Result<bundle::ImportOutcome, bundle::BundleError> {
    let (host, _) = saffron_index::IndexHost::load(root);
    let snapshot = host.snapshot();
    let input = ImportInput {
        root,
        snapshot: &snapshot,
        remotes: vec![("origin".into(), ORIGIN.into())],
        head: None,
        allow_unknown_repository: false,
        limits: Limits::default(),
    };
    bundle::import(&input, bundles)
}

fn latest(root: &Path) -> RunReport {
    serde_json::from_slice(&std::fs::read(root.join(".saffron/reports/latest.json")).expect("latest"))
        .expect("a report")
}

#[test]
fn shard_bundles_merge_into_one_run_and_a_partial_set_imports() {
    let folder = tempfile::tempdir().expect("a folder");
    let red = Verdict::Red { step: Some(1), step_text: Some("a cart".into()), message: "no cart".into() };
    let mut failed = scenario("Add", 2, red, Some(".saffron/artifacts/run-1-1-0/cart--add-2.png"));
    failed.traces = vec![".saffron/artifacts/run-1-1-0/traces/cart--add-2-attempt-1.trace.json".into()];
    failed.trace_viewer = Some(".saffron/artifacts/run-1-1-0/traces/cart--add-2.html".into());
    let first = shard_bundle(folder.path(), 1, vec![failed]);
    let second = shard_bundle(folder.path(), 2, vec![scenario("Remove", 4, Verdict::Green, None)]);
    assert!(first.ends_with("saffron-bundle-shard-1-of-2.zip") && second.ends_with("saffron-bundle-shard-2-of-2.zip"));

    let reviewer = project(folder.path(), "reviewer");
    let outcome = import(&reviewer, &bundle::find_bundles(folder.path()).expect("found")).expect("imported");
    assert_eq!(outcome.bundles.len(), 2);
    let report = latest(&reviewer);
    assert_eq!(report.scenarios.len(), 2, "both shards' scenarios");
    assert_eq!((report.counts.green, report.counts.red), (1, 1));
    let imported = report.imported.expect("marked imported");
    assert_eq!((imported.shards.clone(), imported.shard_total), (vec![1, 2], Some(2)));
    assert!(imported.describe().contains("shard(s) 1, 2 of 2"), "{}", imported.describe());
    let picture = report.scenarios[0].screenshot_file.as_deref().expect("the red scenario's screenshot");
    assert_eq!(std::fs::read_to_string(reviewer.join(picture)).expect("filed"), format!("{picture} of shard 1"));
    let html = std::fs::read_to_string(reviewer.join(".saffron/reports/report.html")).expect("report.html");
    assert!(html.contains("src=\"../artifacts/run-1-1-0/cart--add-2.png\""), "the picture is shown from its file");
    // The traces travel too, where the report names them, and the report links their viewer.
    let [trace] = report.scenarios[0].traces.as_slice() else { panic!("the red scenario's trace") };
    assert_eq!(std::fs::read_to_string(reviewer.join(trace)).expect("filed"), format!("{trace} of shard 1"));
    let viewer = report.scenarios[0].trace_viewer.as_deref().expect("its viewer page");
    assert!(reviewer.join(viewer).is_file());
    assert!(html.contains("href=\"../artifacts/run-1-1-0/traces/cart--add-2.html\""), "the trace is linked");

    // A partial set: only the shard that failed.
    let partial = project(folder.path(), "partial");
    import(&partial, std::slice::from_ref(&first)).expect("a partial set imports");
    let imported = latest(&partial).imported.expect("marked imported");
    assert_eq!((imported.shards, imported.shard_total), (vec![1], Some(2)));
}

#[test]
fn two_bundles_that_report_one_scenario_twice_are_refused_whole() {
    let folder = tempfile::tempdir().expect("a folder");
    let one = shard_bundle(folder.path(), 1, vec![scenario("Add", 2, Verdict::Green, None)]);
    let again = folder.path().join("again");
    std::fs::create_dir_all(&again).expect("mkdir");
    let two = shard_bundle(&again, 2, vec![scenario("Add", 2, Verdict::Green, None)]);
    let reviewer = project(folder.path(), "reviewer");
    let error = import(&reviewer, &[one, two]).expect_err("an overlap is refused");
    assert!(error.to_string().contains("is in two of the reports"), "{error}");
    assert!(!reviewer.join(".saffron").exists(), "nothing was written");
}
