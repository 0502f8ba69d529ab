//! API replay benchmark: the example's `@api` scenario (`features/orders_api.feature`: a
//! sign-in, an order, its read-back, two schema checks) replayed by `saffron run` on the HTTP
//! medium, and the same requests and checks as a plain Playwright script on playwright-core's
//! APIRequestContext (`benches/peers/replay-api-playwright.mjs`), side by side against the demo
//! app in one run. Each round starts a fresh demo app per tool and alternates which goes first.
//! Prints the medians of the scenario's own time and of each process's wall time, and the
//! ratios. Run: `npm ci --prefix benches/peers && cargo build --release -p saffron-cli && cargo
//! bench -p saffron-benches --bench replay_api` (`SAFFRON_BENCH_ROUNDS=N` for more than 9).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use saffron_benches::{against_fresh_demo, median_ms, peers_dir};
use serde_json::Value;

/// One run of a tool: the scenario's own time and the process's wall time.
struct Timed {
    scenario_ms: f64,
    wall_ms: f64,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run_saffron(binary: &Path, url: &str, password: &str) -> Result<Timed, String> {
    let started = Instant::now();
    let output = Command::new(binary)
        .args(["run", "--workers", "1", "--format", "json", "--base-url", url, "features/orders_api.feature"])
        .current_dir(repository())
        .env("DEMO_PASSWORD", password)
        .output()
        .map_err(|error| format!("cannot start saffron: {error}"))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let results: Value = serde_json::from_slice(&output.stdout)
        .map_err(|error| format!("saffron printed no JSON ({error}): {}", String::from_utf8_lossy(&output.stderr)))?;
    let result = results.get(0).ok_or("saffron ran no scenario")?;
    if result["verdict"] != "green" {
        return Err(format!("saffron's scenario was not green: {result}"));
    }
    Ok(Timed { scenario_ms: result["durationMs"].as_f64().unwrap_or(f64::NAN), wall_ms })
}

fn run_playwright(url: &str, password: &str) -> Result<Timed, String> {
    let started = Instant::now();
    let output = Command::new("node")
        .arg(peers_dir()?.join("replay-api-playwright.mjs"))
        .arg(url)
        .env("DEMO_PASSWORD", password)
        .output()
        .map_err(|error| format!("cannot start node: {error}"))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let line = String::from_utf8_lossy(&output.stdout);
    let result: Value = serde_json::from_str(line.trim()).map_err(|error| {
        format!("the Playwright script printed no JSON ({error}): {}", String::from_utf8_lossy(&output.stderr))
    })?;
    if result["ok"] != true {
        return Err(format!("the Playwright script's checks failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    Ok(Timed { scenario_ms: result["ms"].as_f64().unwrap_or(f64::NAN), wall_ms })
}

fn main() -> ExitCode {
    match bench() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("API replay benchmark: {error}");
            ExitCode::FAILURE
        }
    }
}

fn bench() -> Result<(), String> {
    let rounds: usize = std::env::var("SAFFRON_BENCH_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(9).max(1);
    let binary = repository().join("target/release/saffron");
    if !binary.is_file() {
        return Err(format!("{} is missing: run `cargo build --release -p saffron-cli` first", binary.display()));
    }
    peers_dir()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|error| error.to_string())?;
    // A warm-up of each, untimed.
    against_fresh_demo(&runtime, |url, password| run_saffron(&binary, url, password))?;
    against_fresh_demo(&runtime, run_playwright)?;
    let (mut saffron, mut playwright) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            saffron.push(against_fresh_demo(&runtime, |url, password| run_saffron(&binary, url, password))?);
            playwright.push(against_fresh_demo(&runtime, run_playwright)?);
        } else {
            playwright.push(against_fresh_demo(&runtime, run_playwright)?);
            saffron.push(against_fresh_demo(&runtime, |url, password| run_saffron(&binary, url, password))?);
        }
    }
    let median = |runs: &[Timed], of: fn(&Timed) -> f64| median_ms(&runs.iter().map(of).collect::<Vec<_>>());
    let (saffron_scenario, playwright_scenario) =
        (median(&saffron, |timed| timed.scenario_ms), median(&playwright, |timed| timed.scenario_ms));
    let (saffron_wall, playwright_wall) =
        (median(&saffron, |timed| timed.wall_ms), median(&playwright, |timed| timed.wall_ms));
    println!("API replay: features/orders_api.feature (3 requests, 6 checks), {rounds} rounds, medians");
    println!("{:<22} {:>10} {:>12} {:>8}", "", "saffron ms", "playwright ms", "pw/saf");
    println!(
        "{:<22} {:>10.1} {:>12.1} {:>8.2}",
        "the scenario",
        saffron_scenario,
        playwright_scenario,
        playwright_scenario / saffron_scenario
    );
    println!(
        "{:<22} {:>10.1} {:>12.1} {:>8.2}",
        "the process (wall)",
        saffron_wall,
        playwright_wall,
        playwright_wall / saffron_wall
    );
    Ok(())
}
