//! Heal bundles at scale: `saffron export` and `saffron import` of a CI run with 1,000 pending
//! proposals and evidence of 20 MB and 200 MB (failure screenshots of 1 MB each, incompressible
//! like real PNGs), each command a process of its own, timed, with its peak memory (the largest
//! resident set, from `getrusage` of a process whose only child it is) and the bundle's size.
//! The peak must not grow with the evidence: both commands stream it.
//!
//! `cargo build --release -p saffron-cli && cargo bench -p saffron-benches --bench bundle`
//! (`SAFFRON_BIN` names another binary; `BUNDLE_MB=20,200` the evidence sizes.)

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use rand::{RngCore, SeedableRng};
use saffron_recording::{Proposal, ProposalDraft, Recording, ScenarioRef, Store, feature_slug, scenario_slugs};
use saffron_runner::{RunReport, ScenarioResult, Verdict};
use serde_json::json;

const PROPOSALS: usize = 1000;
const ORIGIN: &str = "https://github.com/acme/shop.git";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|arg| arg == "--measure-one") {
        return measure_one(&args[2..]);
    }
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let saffron =
        std::env::var_os("SAFFRON_BIN").map(PathBuf::from).unwrap_or_else(|| repository.join("target/release/saffron"));
    if !saffron.is_file() {
        eprintln!("build the release binary first: cargo build --release -p saffron-cli");
        return ExitCode::FAILURE;
    }
    let sizes: Vec<usize> = std::env::var("BUNDLE_MB")
        .unwrap_or_else(|_| "20,200".into())
        .split(',')
        .filter_map(|size| size.trim().parse().ok())
        .collect();
    let Ok(me) = std::env::current_exe() else { return ExitCode::FAILURE };
    println!("bundle: export and import of {PROPOSALS} proposals and failure screenshots ({})", saffron.display());
    println!("| evidence | command | wall | CPU | peak memory | bundle | proposals in the project |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for megabytes in sizes {
        let folder = std::env::temp_dir().join(format!("saffron-bench-bundle-{megabytes}mb"));
        let _ = std::fs::remove_dir_all(&folder);
        let (ci, reviewer) = match generate(&folder, megabytes) {
            Ok(projects) => projects,
            Err(error) => {
                eprintln!("cannot write the projects under {}: {error}", folder.display());
                return ExitCode::FAILURE;
            }
        };
        let bundle = folder.join("saffron-bundle.zip");
        let bundle_text = bundle.display().to_string();
        for (name, root, command) in [
            ("export", &ci, vec!["export", "--out", bundle_text.as_str()]),
            ("import", &reviewer, vec!["import", bundle_text.as_str()]),
        ] {
            let output = Command::new(&me).arg("--measure-one").arg(&saffron).arg(root).args(&command).output();
            let line = match output {
                Ok(output) => String::from_utf8_lossy(&output.stdout).trim().to_string(),
                Err(error) => format!("cannot measure: {error}"),
            };
            let size = std::fs::metadata(&bundle).map(|meta| meta.len() as f64 / 1_048_576.0).unwrap_or(0.0);
            // What the command left: the reviewer's filed proposals after the import.
            let filed = count_json(&root.join(".saffron/proposals"));
            println!("| {megabytes} MB | {name} | {line} | {size:.1} MB | {filed} |");
        }
        let _ = std::fs::remove_dir_all(&folder);
    }
    ExitCode::SUCCESS
}

/// Runs SAFFRON ARGS... in ROOT as this process's only child and prints `wall | CPU | peak`.
fn measure_one(args: &[String]) -> ExitCode {
    let [saffron, root, command @ ..] = args else {
        eprintln!("--measure-one SAFFRON ROOT ARGS...");
        return ExitCode::FAILURE;
    };
    let start = Instant::now();
    let status = Command::new(saffron)
        .args(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let wall = start.elapsed().as_secs_f64();
    let (peak, cpu) = saffron_benches::children_usage();
    match status {
        Ok(status) if status.success() => println!("{wall:.2} s | {cpu:.2} s | {peak:.0} MB"),
        Ok(status) => println!("{wall:.2} s | {cpu:.2} s | {peak:.0} MB (exited with {status})"),
        Err(error) => println!("cannot start: {error}"),
    }
    ExitCode::SUCCESS
}

fn count_json(folder: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(folder) else { return 0 };
    entries
        .filter_map(Result::ok)
        .map(|entry| {
            let path = entry.path();
            if path.is_dir() { count_json(&path) } else { usize::from(path.extension().is_some_and(|e| e == "json")) }
        })
        .sum()
}

fn git(root: &Path, args: &[&str]) -> std::io::Result<()> {
    let status = Command::new("git").args(args).current_dir(root).stdout(Stdio::null()).status()?;
    if status.success() { Ok(()) } else { Err(std::io::Error::other(format!("git {args:?} failed"))) }
}

/// A CI checkout with `PROPOSALS` pending proposals (one per scenario of one feature, each bound
/// to it) and a report whose red scenarios name `megabytes` screenshots of 1 MB; and a reviewer's
/// checkout of the same feature. Both have the same `origin`.
fn generate(folder: &Path, megabytes: usize) -> std::io::Result<(PathBuf, PathBuf)> {
    let names: Vec<String> = (1..=PROPOSALS).map(|i| format!("Add item {i}")).collect();
    let mut feature = String::from("Feature: Cart\n");
    for name in &names {
        feature.push_str(&format!("\n  Scenario: {name}\n    When I add \"walk the dog\"\n    Then 1 item is left\n"));
    }
    let ci = folder.join("ci");
    let reviewer = folder.join("reviewer");
    for root in [&ci, &reviewer] {
        std::fs::create_dir_all(root.join("features"))?;
        std::fs::write(root.join("features/cart.feature"), &feature)?;
        git(root, &["init", "-q"])?;
        git(root, &["remote", "add", "origin", ORIGIN])?;
    }
    let store = Store::open(&ci).map_err(std::io::Error::other)?;
    let slugs = scenario_slugs(&names);
    let feature_slug = feature_slug("features/cart.feature");
    for (name, slug) in names.iter().zip(&slugs) {
        let value = json!({
            "version": 1,
            "feature": "features/cart.feature",
            "scenario": name,
            "stepsDigest": "",
            "steps": [
                { "kind": "action", "text": "I add \"walk the dog\"", "actions": [
                    { "type": "goto", "url": "/todos" },
                    { "type": "fill", "target": { "label": "New todo", "tier": "label" }, "value": "walk the dog" },
                    { "type": "press", "target": { "label": "New todo", "tier": "label" }, "key": "Enter" },
                ] },
                { "kind": "outcome", "text": "1 item is left", "actions": [
                    { "type": "expectText", "target": { "role": "status", "tier": "role" }, "text": "1 item left" },
                ] },
            ],
        });
        let parsed: Recording = serde_json::from_value(value).map_err(std::io::Error::other)?;
        let recording = Recording::new(parsed.feature, parsed.scenario, parsed.steps);
        let draft = ProposalDraft {
            scenario: ScenarioRef {
                feature: "features/cart.feature".into(),
                name: name.clone(),
                cache_path: format!(".saffron/cache/{feature_slug}/{slug}.json"),
            },
            recording,
            feature_edits: Vec::new(),
            narrative: "The field was renamed; adapted.".into(),
            adaptations: vec!["change: a control or label changed".into()],
            usage: None,
            filed_at: None,
            unverified: None,
        };
        let path = store.proposal_path(&feature_slug, slug);
        store.write_proposal(&path, &Proposal::file(draft, None)).map_err(std::io::Error::other)?;
    }
    let mut random = rand::rngs::SmallRng::seed_from_u64(7);
    let mut scenarios = Vec::new();
    let run = "run-0000000000001-1-0";
    for (index, name) in names.iter().enumerate() {
        let screenshot = (index < megabytes).then(|| format!(".saffron/artifacts/{run}/cart--{}.png", slugs[index]));
        if let Some(file) = &screenshot {
            let mut picture = vec![0u8; 1 << 20];
            random.fill_bytes(&mut picture);
            let path = ci.join(file);
            std::fs::create_dir_all(path.parent().unwrap_or(&ci))?;
            std::fs::write(path, picture)?;
        }
        let verdict = match screenshot {
            Some(_) => Verdict::Red {
                step: Some(1),
                step_text: Some("I add \"walk the dog\"".into()),
                message: "no element".into(),
            },
            None => Verdict::Green,
        };
        scenarios.push(ScenarioResult {
            duration_ms: 100,
            screenshot_file: screenshot,
            ..ScenarioResult::new("features/cart.feature", (index * 4 + 3) as u32, name.clone(), verdict)
        });
    }
    let report = RunReport::new("http://127.0.0.1:8080", 60_000, scenarios);
    std::fs::create_dir_all(ci.join(".saffron/reports"))?;
    std::fs::write(ci.join(".saffron/reports/latest.json"), serde_json::to_vec_pretty(&report)?)?;
    Ok((ci, reviewer))
}
