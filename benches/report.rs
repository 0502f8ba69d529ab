//! The HTML report at scale: a run of 5,000 scenarios (a tenth red with their steps and actions,
//! some flaky, some drifted), written as `saffron run` writes it, then opened in headless
//! Chromium: the time from asking for the page until its last scenario is visible (the page
//! loaded, its script ran, it laid out), the median of five loads in fresh contexts; and the
//! file's size. The goal is under 2 s.
//!
//! `cargo bench -p saffron-benches --bench report` (`REPORT_SCENARIOS=N` for another size).

use std::process::ExitCode;
use std::time::Instant;

use saffron_browser::{Browser, BrowserConfig, ContextOptions};
use saffron_recording::{Action, Masker, StepKind, Tier};
use saffron_runner::{ActionResult, RunReport, ScenarioResult, StepOutcome, StepResult, Verdict, write_reports};
use serde_json::json;

fn scenario(index: usize) -> ScenarioResult {
    let red = index % 10 == 3;
    let action = |text: &str, passed: bool| ActionResult {
        action: text.into(),
        passed,
        tier: Some(Tier::Role),
        locator: Some(format!("role button \"Save {index}\"")),
        duration_ms: 40,
        drift: Vec::new(),
        notes: Vec::new(),
        attempts: 1,
        waited: Vec::new(),
        matched: None,
    };
    let steps = if red {
        vec![
            StepResult {
                kind: StepKind::Context,
                text: format!("I am on order {index}"),
                outcome: StepOutcome::Passed,
                duration_ms: 300,
                actions: vec![action(&format!("goto \"/orders/{index}\""), true)],
                cleared: Vec::new(),
                restored: false,
            },
            StepResult {
                kind: StepKind::Action,
                text: "I save the order".into(),
                outcome: StepOutcome::Failed,
                duration_ms: 2000,
                actions: vec![action("click button \"Save order\"", false)],
                cleared: Vec::new(),
                restored: false,
            },
        ]
    } else {
        Vec::new()
    };
    ScenarioResult {
        drift: if index.is_multiple_of(25) {
            vec![format!("step 1 `click button \"Save\"`: testId \"save-{index}\" → none")]
        } else {
            Vec::new()
        },
        duration_ms: 800 + (index % 7) as u64 * 100,
        steps,
        url: red.then(|| format!("/orders/{index}")),
        retried: if index.is_multiple_of(97) { vec!["attempt 1: step 1: timed out".into()] } else { Vec::new() },
        flaky: index.is_multiple_of(97),
        ..ScenarioResult::new(
            format!("features/area_{}/orders_{}.feature", index % 40, index % 200),
            (index % 50) as u32 * 6 + 3,
            format!("Order {index} is saved with its customer and lines"),
            if red {
                Verdict::Red {
                    step: Some(2),
                    step_text: Some("I save the order".into()),
                    message: "no element matched".into(),
                }
            } else {
                Verdict::Green
            },
        )
    }
}

fn main() -> ExitCode {
    let count: usize = std::env::var("REPORT_SCENARIOS").ok().and_then(|n| n.parse().ok()).unwrap_or(5000);
    let project = std::env::temp_dir().join(format!("saffron-bench-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    if let Err(error) = std::fs::create_dir_all(&project) {
        eprintln!("cannot make {}: {error}", project.display());
        return ExitCode::FAILURE;
    }
    let mut report = RunReport::new("http://127.0.0.1:8080", 600_000, (0..count).map(scenario).collect());
    for (index, s) in report.scenarios.iter().enumerate() {
        report.history.insert(format!("{}:{}", s.file, s.line), if index % 10 == 3 { "✓✓✗✓✗" } else { "✓✓✓✓✓" }.into());
    }
    if let Err(error) = write_reports(&project, &report, &Masker::new()) {
        eprintln!("cannot write the report: {error}");
        return ExitCode::FAILURE;
    }
    let page = std::fs::read_to_string(project.join(".saffron/reports/report.html")).unwrap_or_default();
    let bytes = page.len();
    let last = report.scenarios.last().map(|s| s.name.clone()).unwrap_or_default();
    let base_url = saffron_browser::testing::serve_page(page);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let times = runtime.block_on(async {
        let browser = Browser::launch(BrowserConfig::default()).await.expect("this benchmark needs Chromium");
        let mut times = Vec::new();
        for _ in 0..5 {
            let mut context =
                browser.new_context(ContextOptions { base_url: base_url.clone() }).await.expect("a context");
            let goto: Action = serde_json::from_value(json!({ "type": "goto", "url": "/" })).expect("goto");
            let visible: Action =
                serde_json::from_value(json!({ "type": "expectVisible", "target": { "text": last } })).expect("check");
            let started = Instant::now();
            context.perform(&goto, None).await.expect("the report loads");
            context.perform(&visible, None).await.expect("its last scenario shows");
            times.push(started.elapsed().as_secs_f64());
            context.close().await;
        }
        browser.close().await;
        times
    });
    let _ = std::fs::remove_dir_all(&project);
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    println!("report: {count} scenarios, report.html {:.1} MB", bytes as f64 / 1_048_576.0);
    println!(
        "opened until its last scenario shows: median {median:.2} s of {:?} (goal: under 2 s)",
        times.iter().map(|t| format!("{t:.2}")).collect::<Vec<_>>()
    );
    if median < 2.0 { ExitCode::SUCCESS } else { ExitCode::from(1) }
}
