//! Helpers shared by the benchmarks: corpus loading, timing, running a peer tool, and an LSP
//! client and a scripted recording agent (also used by the end-to-end tests).

pub mod agent_script;
pub mod completion_eval;
pub mod lsp_client;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The shared corpora beside the repository (`../shared/corpus`), or `SAFFRON_CORPUS`.
pub fn corpus_dir() -> PathBuf {
    match std::env::var_os("SAFFRON_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"),
    }
}

/// Every `.feature` file under `dir`, sorted.
pub fn feature_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "feature") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Runs `work` `warmup` times untimed, then `iterations` times timed.
pub fn time<T>(warmup: usize, iterations: usize, mut work: impl FnMut() -> T) -> (Vec<Duration>, T) {
    for _ in 0..warmup {
        std::hint::black_box(work());
    }
    let mut times = Vec::with_capacity(iterations);
    let mut last = None;
    for _ in 0..iterations {
        let start = Instant::now();
        let result = std::hint::black_box(work());
        times.push(start.elapsed());
        last = Some(result);
    }
    (times, last.expect("at least one iteration"))
}

pub fn median_ms(times: &[f64]) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

pub fn durations_ms(times: &[Duration]) -> Vec<f64> {
    times.iter().map(|t| t.as_secs_f64() * 1000.0).collect()
}

/// The folder of the npm-installed peers (`benches/peers`), checked to be installed.
pub fn peers_dir() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers");
    if dir.join("node_modules").is_dir() {
        Ok(dir)
    } else {
        Err(format!("the peer tools are not installed: run `npm ci --prefix {}` first", dir.display()))
    }
}

/// Runs `node script args...` in the peers folder and parses its one line of JSON.
pub fn run_node(script: &str, args: &[String]) -> Result<serde_json::Value, String> {
    let dir = peers_dir()?;
    let output = Command::new("node")
        .arg(dir.join(script))
        .args(args)
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("cannot start node: {e}"))?;
    if !output.status.success() {
        return Err(format!("{script} failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("{script} printed no JSON: {e}"))
}

/// What this process's waited-for children used: their largest resident set in MB and their CPU
/// time (user and system, all threads) in seconds, from `getrusage`. A benchmark that runs one
/// command as its only child reads that command's own figures.
pub fn children_usage() -> (f64, f64) {
    let Ok(usage) = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN) else {
        return (0.0, 0.0);
    };
    let seconds = |time: nix::sys::time::TimeVal| time.tv_sec() as f64 + time.tv_usec() as f64 / 1_000_000.0;
    (usage.max_rss() as f64 / 1024.0, seconds(usage.user_time()) + seconds(usage.system_time()))
}

/// Runs `tool` with the URL and password of a fresh demo app (the scenarios change its data),
/// stopped after.
pub fn against_fresh_demo<T>(
    runtime: &tokio::runtime::Runtime,
    tool: impl FnOnce(&str, &str) -> Result<T, String>,
) -> Result<T, String> {
    let config = saffron_demo::DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(saffron_demo::DemoServer::start(config)).map_err(|error| error.to_string())?;
    let result = tool(&server.url(), &password);
    let _ = runtime.block_on(server.shutdown());
    result
}
