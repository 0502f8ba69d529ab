//! Recording benchmark: Saffron's own time per recorded action when the model answers at once.
//! Three example scenarios are recorded from scratch against the demo app by a scripted agent
//! on the fake Anthropic server (loopback, no model), through `saffron_runner::run`, as
//! `saffron run` records them. Per scenario: the recording's wall time, less the proof replay's
//! steps and the time spent waiting for the fake provider, divided by the recorded actions.
//! What is left is the gateway's work: building each action's target (the selector ladder),
//! performing it, the snapshot after it, masking and bookkeeping, plus the live context.
//! Run: `cargo bench -p saffron-benches --bench record` (`SAFFRON_BENCH_ROUNDS=N`, default 3).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use saffron_agent::AgentConfig;
use saffron_agent::testing::{FakeServer, Wire};
use saffron_benches::agent_script::{
    Plans, check, check_on, click, done, fill, new_order_form, on, reply, sign_in, step, wait,
};
use saffron_demo::{DemoConfig, DemoServer};
use saffron_runner::{Selection, plan};
use serde_json::json;

const GOAL_MS_PER_ACTION: f64 = 100.0;

fn plans() -> Plans {
    let mut plans = Plans::new();
    let mut signed_in = sign_in();
    signed_in.extend([step(4), check(json!({ "check": "noConsoleErrors" })), done()]);
    plans.insert("Sign in with the demo account".into(), signed_in);
    let mut search = sign_in();
    search.extend([
        step(4),
        fill("searchbox \"Search orders\"", "Ada Lovelace"),
        click("button \"Search\""),
        wait("^/api/orders\\?q=", "GET", "200"),
        step(5),
        check_on("status [ref=", json!({ "check": "text", "text": "2 orders" })),
        step(6),
        check(json!({ "check": "count", "role": "cell", "name": "Ada Lovelace", "count": 2 })),
        done(),
    ]);
    plans.insert("Search orders by customer".into(), search);
    let mut gift = sign_in();
    gift.extend(new_order_form());
    gift.extend([
        step(7),
        on("browser_check", "checkbox \"Gift wrap\"", json!({})),
        step(8),
        check_on("checkbox \"Gift wrap\"", json!({ "check": "state", "state": "checked" })),
        step(9),
        on("browser_uncheck", "checkbox \"Gift wrap\"", json!({})),
        step(10),
        check_on("checkbox \"Gift wrap\"", json!({ "check": "state", "state": "unchecked" })),
        done(),
    ]);
    plans.insert("Gift wrap can be chosen and removed".into(), gift);
    plans
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// One scenario of one round: Saffron's milliseconds and the recorded actions.
struct Measured {
    name: String,
    saffron_ms: f64,
    actions: usize,
}

async fn round(number: usize, demo: &DemoServer, password: &str, server: &FakeServer) -> Result<Vec<Measured>, String> {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root: PathBuf = std::env::temp_dir().join(format!("saffron-bench-record-{}-{number}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    copy_dir(&repository.join("features"), &root.join("features")).map_err(|error| error.to_string())?;
    let (host, _) = saffron_index::IndexHost::load(&root);
    let targets = vec![
        "features/sign_in.feature:5".to_string(),
        "features/orders.saffron:8".to_string(),
        "features/new_order.saffron:36".to_string(),
    ];
    let executions = plan(&host.snapshot(), &Selection { targets, tags: None });
    let mut options = saffron_runner::session::options_with_env(&root, vec![("DEMO_PASSWORD".into(), password.into())]);
    options.base_url = demo.url();
    let config = AgentConfig {
        provider: Some("anthropic".into()),
        model: Some("instant".into()),
        base_url: Some(server.base_url()),
        api_key_env: Some(String::new()),
        ..AgentConfig::default()
    };
    saffron_runner::session::resolve_agent(Some(&config), &mut options, None);
    let results = saffron_runner::run(executions, &options).await;
    let mut measured = Vec::new();
    for result in results {
        let Some(agent) = &result.agent else { return Err(format!("{}: not recorded", result.name)) };
        let Some(saved) = &agent.saved else { return Err(format!("{}: {:?}", result.name, result.verdict)) };
        let recording: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root.join(saved)).map_err(|error| error.to_string())?)
                .map_err(|error| error.to_string())?;
        let actions: usize = recording["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|step| step["actions"].as_array().map_or(0, Vec::len))
            .sum();
        let proof_ms: u64 = result.steps.iter().map(|step| step.duration_ms).sum();
        let saffron_ms = result.duration_ms.saturating_sub(proof_ms).saturating_sub(agent.usage.model_time_ms) as f64;
        measured.push(Measured { name: result.name.clone(), saffron_ms, actions });
    }
    let _ = std::fs::remove_dir_all(&root);
    Ok(measured)
}

fn main() -> ExitCode {
    let rounds: usize = std::env::var("SAFFRON_BENCH_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(3);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cannot start a runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome: Result<Vec<Vec<Measured>>, String> = runtime.block_on(async {
        let plans = Arc::new(plans());
        let server = FakeServer::start(Wire::Anthropic, move |request: &saffron_agent::Request| reply(&plans, request))
            .await
            .map_err(|error| error.to_string())?;
        let mut all = Vec::new();
        for number in 0..rounds {
            // A fresh shop per round: the scenarios change its data.
            let config = DemoConfig::default();
            let password = config.password.clone();
            let demo = DemoServer::start(config).await.map_err(|error| error.to_string())?;
            all.push(round(number, &demo, &password, &server).await?);
            let _ = demo.shutdown().await;
        }
        Ok(all)
    });
    let rounds = match outcome {
        Ok(rounds) => rounds,
        Err(error) => {
            eprintln!("the recording benchmark failed: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("{:<45} {:>8} {:>12} {:>14}", "scenario", "actions", "saffron ms", "ms per action");
    let mut per_action: Vec<f64> = Vec::new();
    let names: Vec<String> =
        rounds.first().map(|round| round.iter().map(|m| m.name.clone()).collect()).unwrap_or_default();
    for name in names {
        let runs: Vec<&Measured> = rounds.iter().flatten().filter(|m| m.name == name).collect();
        let mut ms: Vec<f64> = runs.iter().map(|m| m.saffron_ms).collect();
        ms.sort_by(f64::total_cmp);
        let median = ms[ms.len() / 2];
        let actions = runs.first().map_or(0, |m| m.actions);
        let each = median / actions.max(1) as f64;
        per_action.push(each);
        println!("{name:<45} {actions:>8} {median:>12.0} {each:>14.1}");
    }
    let worst = per_action.iter().cloned().fold(0.0, f64::max);
    println!("worst ms per recorded action: {worst:.1} (goal <= {GOAL_MS_PER_ACTION:.0})");
    ExitCode::SUCCESS
}
