//! Replay benchmark: `saffron run` and the same scenarios written as a plain Playwright script
//! (`benches/peers/replay-playwright.mjs`, playwright-core on the same `/usr/bin/chromium`),
//! side by side against the demo app, in one run. Each round starts a fresh demo app per tool
//! (the scenarios change its data) and alternates which tool goes first. Prints per scenario
//! the median wall time and time per action of both, the ratio, and the run totals.
//! Run: `npm ci --prefix benches/peers && cargo build --release -p saffron-cli && cargo bench -p saffron-benches --bench replay`
//! (`SAFFRON_BENCH_ROUNDS=N` for more rounds than 5; `-- --saffron PATH` drives another build).
//!
//! `-- --traces` measures what traces cost instead: `saffron run` with `--trace off`,
//! `retain-on-failure` (the default) and `on`, in rotating order each round, and the size of
//! what `on` keeps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use saffron_benches::{against_fresh_demo, median_ms, peers_dir};
use serde_json::Value;

/// One scenario of one run: wall time and how many actions it performed.
#[derive(Debug, Clone)]
struct Timed {
    name: String,
    ms: f64,
    actions: Option<u64>,
    ok: bool,
}

/// One whole run of a tool: per scenario (keyed by `file:line`) and the process's wall time.
struct Run {
    scenarios: BTreeMap<String, Timed>,
    wall_ms: f64,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn saffron_binary() -> Result<PathBuf, String> {
    let args: Vec<String> = std::env::args().collect();
    let chosen = args.iter().position(|arg| arg == "--saffron").and_then(|at| args.get(at + 1));
    let binary = chosen.map_or_else(|| repository().join("target/release/saffron"), PathBuf::from);
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(format!("{} is missing: run `cargo build --release -p saffron-cli` first", binary.display()))
    }
}

fn run_saffron(binary: &Path, url: &str, password: &str, trace: &str) -> Result<Run, String> {
    let started = Instant::now();
    let output = Command::new(binary)
        // The browser scenarios: the Playwright peer has no counterpart of the `@api` one.
        .args([
            "run",
            "--workers",
            "1",
            "--format",
            "json",
            "--tags",
            "not @wip and not @api",
            "--trace",
            trace,
            "--base-url",
            url,
        ])
        .current_dir(repository())
        .env("DEMO_PASSWORD", password)
        .output()
        .map_err(|error| format!("cannot start saffron: {error}"))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let results: Value = serde_json::from_slice(&output.stdout)
        .map_err(|error| format!("saffron printed no JSON ({error}): {}", String::from_utf8_lossy(&output.stderr)))?;
    let mut scenarios = BTreeMap::new();
    for result in results.as_array().into_iter().flatten() {
        let key = format!("{}:{}", result["file"].as_str().unwrap_or("?"), result["line"]);
        scenarios.insert(
            key,
            Timed {
                name: result["name"].as_str().unwrap_or("?").to_string(),
                ms: result["durationMs"].as_f64().unwrap_or(f64::NAN),
                actions: None,
                ok: result["verdict"] == "green",
            },
        );
    }
    Ok(Run { scenarios, wall_ms })
}

fn run_playwright(url: &str, password: &str) -> Result<Run, String> {
    let dir = peers_dir()?;
    let started = Instant::now();
    let output = Command::new("node")
        .arg(dir.join("replay-playwright.mjs"))
        .arg(url)
        .env("DEMO_PASSWORD", password)
        .output()
        .map_err(|error| format!("cannot start node: {error}"))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut scenarios = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(result) = serde_json::from_str::<Value>(line) else { continue };
        let Some(file) = result["file"].as_str() else { continue };
        scenarios.insert(
            format!("{file}:{}", result["line"]),
            Timed {
                name: result["name"].as_str().unwrap_or("?").to_string(),
                ms: result["ms"].as_f64().unwrap_or(f64::NAN),
                actions: result["actions"].as_u64(),
                ok: result["ok"] == true,
            },
        );
    }
    if scenarios.is_empty() {
        return Err(format!("the Playwright script reported nothing: {}", String::from_utf8_lossy(&output.stderr)));
    }
    Ok(Run { scenarios, wall_ms })
}

fn main() -> ExitCode {
    match bench() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("replay benchmark: {error}");
            ExitCode::FAILURE
        }
    }
}

fn bench() -> Result<(), String> {
    if std::env::args().any(|arg| arg == "--traces") {
        return bench_traces();
    }
    let rounds: usize = std::env::var("SAFFRON_BENCH_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(5).max(1);
    let binary = saffron_binary()?;
    peers_dir()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|error| error.to_string())?;
    let (mut saffron, mut playwright) = (Vec::new(), Vec::new());
    // A warm-up of each, untimed: the first Chromium start of a run pays for disk caches.
    against_fresh_demo(&runtime, |url, password| run_saffron(&binary, url, password, "retain-on-failure"))?;
    against_fresh_demo(&runtime, run_playwright)?;
    for round in 0..rounds {
        let saffron_run =
            || against_fresh_demo(&runtime, |url, password| run_saffron(&binary, url, password, "retain-on-failure"));
        let playwright_run = || against_fresh_demo(&runtime, run_playwright);
        if round % 2 == 0 {
            saffron.push(saffron_run()?);
            playwright.push(playwright_run()?);
        } else {
            playwright.push(playwright_run()?);
            saffron.push(saffron_run()?);
        }
    }
    report(&saffron, &playwright, rounds)
}

/// Times of runs in which a scenario failed mean nothing: names those scenarios.
fn all_passed<'r>(runs: impl Iterator<Item = &'r Run>) -> Result<(), String> {
    let failed: Vec<String> = runs
        .flat_map(|run| run.scenarios.iter())
        .filter(|(_, timed)| !timed.ok)
        .map(|(key, timed)| format!("{key} {}", timed.name))
        .collect();
    if failed.is_empty() { Ok(()) } else { Err(format!("scenarios failed, so their times mean nothing: {failed:?}")) }
}

fn report(saffron: &[Run], playwright: &[Run], rounds: usize) -> Result<(), String> {
    all_passed(saffron.iter().chain(playwright))?;
    let keys: Vec<&String> = saffron[0].scenarios.keys().collect();
    println!("replay: {} scenarios, {rounds} rounds, 1 worker, median per scenario", keys.len());
    println!(
        "{:<52} {:>7} {:>11} {:>10} {:>9} {:>11} {:>6}",
        "scenario", "actions", "saffron ms", "per action", "pw ms", "per action", "pw/saf"
    );
    let (mut saffron_sum, mut playwright_sum, mut actions_sum) = (0.0, 0.0, 0u64);
    for key in keys {
        let times = |runs: &[Run]| -> Vec<f64> {
            runs.iter().filter_map(|run| run.scenarios.get(key)).map(|timed| timed.ms).collect()
        };
        let (saffron_times, playwright_times) = (times(saffron), times(playwright));
        if playwright_times.is_empty() {
            return Err(format!("the Playwright script has no scenario at {key}"));
        }
        let (s, p) = (median_ms(&saffron_times), median_ms(&playwright_times));
        let actions = playwright[0].scenarios.get(key).and_then(|timed| timed.actions).unwrap_or(1).max(1);
        saffron_sum += s;
        playwright_sum += p;
        actions_sum += actions;
        let name = &saffron[0].scenarios[key].name;
        let label: String = format!("{name} ({key})").chars().take(52).collect();
        println!(
            "{label:<52} {actions:>7} {s:>11.0} {:>10.1} {p:>9.0} {:>11.1} {:>6.2}",
            s / actions as f64,
            p / actions as f64,
            p / s
        );
    }
    let wall = |runs: &[Run]| median_ms(&runs.iter().map(|run| run.wall_ms).collect::<Vec<_>>());
    println!(
        "{:<52} {actions_sum:>7} {saffron_sum:>11.0} {:>10.1} {playwright_sum:>9.0} {:>11.1} {:>6.2}",
        "all scenarios",
        saffron_sum / actions_sum as f64,
        playwright_sum / actions_sum as f64,
        playwright_sum / saffron_sum
    );
    let (saffron_wall, playwright_wall) = (wall(saffron), wall(playwright));
    println!(
        "whole process (start, browser launch, every scenario, exit): saffron {saffron_wall:.0} ms, playwright {playwright_wall:.0} ms, ratio {:.2}",
        playwright_wall / saffron_wall
    );
    Ok(())
}

const TRACE_MODES: [&str; 3] = ["off", "retain-on-failure", "on"];

/// `--trace off`, `retain-on-failure` and `on` side by side: each round runs the three, each
/// against a fresh demo app, starting with a different one each round.
fn bench_traces() -> Result<(), String> {
    let rounds: usize = std::env::var("SAFFRON_BENCH_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(6).max(1);
    let binary = saffron_binary()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|error| error.to_string())?;
    against_fresh_demo(&runtime, |url, password| run_saffron(&binary, url, password, "off"))?;
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(), Vec::new(), Vec::new()];
    let mut kept_bytes = Vec::new();
    for round in 0..rounds {
        for turn in 0..TRACE_MODES.len() {
            let mode = (round + turn) % TRACE_MODES.len();
            let run =
                against_fresh_demo(&runtime, |url, password| run_saffron(&binary, url, password, TRACE_MODES[mode]))?;
            if TRACE_MODES[mode] == "on" {
                kept_bytes.push(latest_traces_bytes()?);
            }
            runs[mode].push(run);
        }
    }
    all_passed(runs.iter().flatten())?;
    let keys: Vec<&String> = runs[0][0].scenarios.keys().collect();
    let scenarios_ms = |mode: usize| -> f64 {
        keys.iter()
            .map(|key| {
                let times: Vec<f64> =
                    runs[mode].iter().filter_map(|run| run.scenarios.get(*key)).map(|timed| timed.ms).collect();
                median_ms(&times)
            })
            .sum()
    };
    let wall = |mode: usize| median_ms(&runs[mode].iter().map(|run| run.wall_ms).collect::<Vec<_>>());
    println!("traces: {} scenarios, {rounds} rounds, 1 worker; sums of per-scenario medians", keys.len());
    println!("{:<20} {:>13} {:>8} {:>16} {:>8}", "--trace", "scenarios ms", "vs off", "whole process ms", "vs off");
    let (off_scenarios, off_wall) = (scenarios_ms(0), wall(0));
    for (mode, name) in TRACE_MODES.iter().enumerate() {
        let (scenarios, whole) = (scenarios_ms(mode), wall(mode));
        println!(
            "{name:<20} {scenarios:>13.0} {:>8.3} {whole:>16.0} {:>8.3}",
            scenarios / off_scenarios,
            whole / off_wall
        );
    }
    let kept = median_ms(&kept_bytes);
    println!(
        "--trace on keeps {:.1} MB of traces and viewer pages for the run ({:.0} KB a scenario)",
        kept / 1e6,
        kept / 1e3 / keys.len() as f64
    );
    Ok(())
}

/// Bytes under the newest run folder of `.saffron/artifacts/` (its traces and viewer pages).
fn latest_traces_bytes() -> Result<f64, String> {
    let artifacts = repository().join(".saffron/artifacts");
    let newest = std::fs::read_dir(&artifacts)
        .map_err(|error| format!("{}: {error}", artifacts.display()))?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("run-"))
        .max_by_key(|entry| entry.file_name())
        .ok_or("no run folder was written")?;
    let traces = newest.path().join("traces");
    let entries = std::fs::read_dir(&traces).map_err(|error| format!("{}: {error}", traces.display()))?;
    Ok(entries.filter_map(Result::ok).filter_map(|entry| entry.metadata().ok()).map(|meta| meta.len() as f64).sum())
}
