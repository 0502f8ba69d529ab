//! The recording agent's page snapshot against Playwright MCP's `browser_snapshot`, on the
//! same demo pages and the same Chromium (`/usr/bin/chromium`), counted with one tokenizer
//! (o200k_base, npm `gpt-tokenizer`, in `benches/peers/snapshot-playwright-mcp.mjs`).
//!
//! Per page: characters and tokens of both, the ratio (goal: at most 0.7), and whether every
//! interactive element Playwright lists (role and name) is in Saffron's snapshot too.
//!
//! Run: `npm ci --prefix benches/peers && cargo bench -p saffron-benches --bench snapshot`
//! (`SAFFRON_BENCH_SHOW=1` prints both snapshots of every page).

use std::io::Write as _;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use saffron_benches::{median_ms, peers_dir};
use saffron_browser::{Browser, BrowserConfig, Context, ContextOptions};
use saffron_demo::{DEMO_EMAIL, DemoConfig, DemoServer};
use saffron_recording::Action;
use serde_json::{Value, json};

/// The demo's pages: (path, needs a signed-in session).
const PAGES: &[(&str, bool)] = &[
    ("/login", false),
    ("/orders", true),
    ("/orders/new", true),
    ("/orders/1001", true),
    ("/invoices/1001", true),
    ("/lab/rows", false),
    ("/lab/renamed", false),
    ("/lab/events", false),
    ("/lab/echo", false),
    ("/lab/moving", false),
    ("/lab/ladder", false),
];

fn main() -> ExitCode {
    match bench() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("snapshot benchmark: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn act(context: &mut Context, action: Value) -> Result<(), String> {
    let parsed: Action = serde_json::from_value(action.clone()).map_err(|error| format!("{action}: {error}"))?;
    context.perform(&parsed, None).await.map(|_| ()).map_err(|failure| format!("{action}: {failure}"))
}

/// Saffron's side of one page: the snapshot, and what taking it and walking the ladder cost.
struct SaffronPage {
    text: String,
    /// Median of `SNAPSHOT_ROUNDS` snapshots, after the first.
    snapshot_ms: f64,
    /// `target_for_ref` on every ref of the snapshot: median and slowest.
    ladder_ms: (f64, f64),
    refs: usize,
    /// Refs whose target is fragile, and refs with no target (with why).
    fragile: usize,
    failed: Vec<String>,
}

const SNAPSHOT_ROUNDS: usize = 5;

/// Saffron's snapshot of every page, in `PAGES` order.
async fn saffron_snapshots(url: &str, password: &str) -> Result<Vec<SaffronPage>, String> {
    let browser = Browser::launch(BrowserConfig::default()).await.map_err(|error| error.to_string())?;
    let mut context =
        browser.new_context(ContextOptions { base_url: url.to_owned() }).await.map_err(|error| error.to_string())?;
    let mut pages = Vec::new();
    let mut signed_in = false;
    for (path, needs_session) in PAGES {
        if *needs_session && !signed_in {
            act(&mut context, json!({ "type": "goto", "url": "/login" })).await?;
            act(&mut context, json!({ "type": "fill", "target": { "label": "Email" }, "value": DEMO_EMAIL })).await?;
            act(&mut context, json!({ "type": "fill", "target": { "label": "Password" }, "value": password })).await?;
            act(&mut context, json!({ "type": "click", "target": { "role": "button", "name": "Sign in" } })).await?;
            act(&mut context, json!({ "type": "expectUrl", "url": "/orders" })).await?;
            signed_in = true;
        }
        act(&mut context, json!({ "type": "goto", "url": path })).await?;
        let text = context.snapshot().await.map_err(|error| error.to_string())?.text;
        let mut times = Vec::new();
        for _ in 0..SNAPSHOT_ROUNDS {
            let started = Instant::now();
            context.snapshot().await.map_err(|error| error.to_string())?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        let snapshot_ms = median_ms(&times);
        let refs: Vec<String> =
            text.split("[ref=").skip(1).filter_map(|rest| rest.split(']').next()).map(str::to_owned).collect();
        let (mut ladder, mut fragile, mut failed) = (Vec::new(), 0, Vec::new());
        for reference in &refs {
            let started = Instant::now();
            match context.target_for_ref(reference).await {
                Ok(found) => fragile += usize::from(found.fragile),
                Err(error) => failed.push(format!("{reference}: {error}")),
            }
            ladder.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        let slowest = ladder.iter().copied().fold(0.0, f64::max);
        let ladder_ms = if ladder.is_empty() { (0.0, 0.0) } else { (median_ms(&ladder), slowest) };
        pages.push(SaffronPage { text, snapshot_ms, ladder_ms, refs: refs.len(), fragile, failed });
    }
    context.close().await;
    browser.close().await;
    Ok(pages)
}

fn bench() -> Result<bool, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| error.to_string())?;
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).map_err(|error| error.to_string())?;
    let url = server.url();
    let snapshots = runtime.block_on(saffron_snapshots(&url, &password));
    let _ = runtime.block_on(server.shutdown());
    let snapshots = snapshots?;
    // A fresh app for Playwright, so both see the seed data.
    let server = runtime.block_on(DemoServer::start(DemoConfig::default())).map_err(|error| error.to_string())?;
    let pages: Vec<Value> = PAGES
        .iter()
        .zip(&snapshots)
        .map(|((path, signed_in), saffron)| json!({ "path": path, "signedIn": signed_in, "saffron": saffron.text }))
        .collect();
    let input = json!({ "baseUrl": server.url(), "email": DEMO_EMAIL, "password": password, "pages": pages });
    let report = node_with_input("snapshot-playwright-mcp.mjs", &input.to_string());
    let _ = runtime.block_on(server.shutdown());
    let report = report?;
    let rows = report.as_array().ok_or("the Playwright script answered no list")?;
    let show = std::env::var_os("SAFFRON_BENCH_SHOW").is_some();
    println!(
        "{:<16} {:>8} {:>7} {:>8} {:>7} {:>6}  {:>7} {:>13} {:>5}  interactive elements",
        "page", "pw chars", "pw tok", "sf chars", "sf tok", "ratio", "snap ms", "ladder ms", "refs"
    );
    let (mut playwright_total, mut saffron_total, mut all_kept) = (0, 0, true);
    let mut problems = Vec::new();
    for (row, saffron) in rows.iter().zip(&snapshots) {
        let number = |pointer: &str| row.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        let (pw_tokens, sf_tokens) = (number("/playwright/tokens"), number("/saffron/tokens"));
        playwright_total += pw_tokens;
        saffron_total += sf_tokens;
        let missing: Vec<&str> =
            row["missing"].as_array().map(|list| list.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        all_kept &= missing.is_empty();
        let kept = if missing.is_empty() {
            format!("all {} kept", number("/interactive"))
        } else {
            format!("MISSING {}", missing.join(", "))
        };
        let path = row["path"].as_str().unwrap_or("?");
        println!(
            "{path:<16} {:>8} {pw_tokens:>7} {:>8} {sf_tokens:>7} {:>6.2}  {:>7.1} {:>6.1} / {:>4.0} {:>5}  {kept}",
            number("/playwright/chars"),
            number("/saffron/chars"),
            sf_tokens as f64 / pw_tokens.max(1) as f64,
            saffron.snapshot_ms,
            saffron.ladder_ms.0,
            saffron.ladder_ms.1,
            saffron.refs,
        );
        if saffron.fragile > 0 {
            problems.push(format!("{path}: {} of {} refs have a fragile target", saffron.fragile, saffron.refs));
        }
        problems.extend(saffron.failed.iter().map(|failure| format!("{path}: {failure}")));
        if show {
            println!(
                "--- Playwright MCP\n{}\n--- Saffron\n{}",
                row["playwrightSnapshot"].as_str().unwrap_or(""),
                saffron.text
            );
        }
    }
    let ratio = saffron_total as f64 / playwright_total.max(1) as f64;
    println!("{:<16} {:>8} {playwright_total:>7} {:>8} {saffron_total:>7} {ratio:>6.2}", "all pages", "", "");
    println!(
        "(tokens: o200k_base; snap ms: median of {SNAPSHOT_ROUNDS}; ladder ms: target_for_ref per ref, median / slowest)"
    );
    for problem in &problems {
        println!("{problem}");
    }
    Ok(all_kept && ratio <= 0.7)
}

fn node_with_input(script: &str, input: &str) -> Result<Value, String> {
    let dir = peers_dir()?;
    let mut child = Command::new("node")
        .arg(dir.join(script))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|error| format!("cannot start node: {error}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).map_err(|error| format!("{script}: {error}"))?;
    }
    let output = child.wait_with_output().map_err(|error| format!("{script}: {error}"))?;
    if !output.status.success() {
        return Err(format!("{script} failed ({})", output.status));
    }
    serde_json::from_slice(&output.stdout).map_err(|error| format!("{script} printed no JSON: {error}"))
}
