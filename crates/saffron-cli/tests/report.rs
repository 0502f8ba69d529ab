//! `saffron report --merge`: a suite split across machines with `--shard i/n` reads as one run.
//! Two shards of the example project run in two folders against a demo app with a defect (so
//! one shard has a red scenario and its screenshot), then merge into a third.

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use saffron_demo::{Defect, DemoConfig, DemoServer};
use support::example_project;

fn saffron(args: &[&str], folder: &Path, password: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(args)
        .current_dir(folder)
        .env("DEMO_PASSWORD", password)
        .output()
        .expect("saffron runs")
}

fn latest(folder: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(folder.join(".saffron/reports/latest.json")).expect("latest.json");
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn shard_reports_merge_into_one_run() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let config = DemoConfig { defects: [Defect::WrongTotal].into(), ..DemoConfig::default() };
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("demo");
    let (first, second, merged) =
        (example_project("shard-1"), example_project("shard-2"), example_project("shard-merged"));
    let target = "features/new_order.saffron";
    for (folder, shard) in [(&first, "1/2"), (&second, "2/2")] {
        let output = saffron(&["run", "--base-url", &server.url(), "--shard", shard, target], folder, &password);
        assert!(matches!(output.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&output.stderr));
    }
    let shards = [latest(&first), latest(&second)];
    let count = |key: &str| shards.iter().map(|report| report[key].as_u64().unwrap_or(0)).sum::<u64>();
    let total = shards.iter().map(|report| report["scenarios"].as_array().map_or(0, Vec::len)).sum::<usize>();
    assert!(count("red") >= 1, "the wrong total makes a scenario red: {shards:?}");

    // One shard given as its project folder, the other as its reports folder.
    let reports_of_second = second.join(".saffron/reports");
    let output = saffron(
        &[
            "report",
            "--merge",
            &first.display().to_string(),
            &reports_of_second.display().to_string(),
            "--out",
            &merged.display().to_string(),
        ],
        &merged,
        &password,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "a red scenario fails the merged run: {stderr}");
    assert!(stderr.contains("merged 2 report(s)"), "{stderr}");
    let report = latest(&merged);
    assert_eq!(report["scenarios"].as_array().map_or(0, Vec::len), total);
    for key in ["green", "yellow", "red", "blocked"] {
        assert_eq!(report[key].as_u64(), Some(count(key)), "{key}");
    }
    let lines: Vec<u64> =
        report["scenarios"].as_array().into_iter().flatten().filter_map(|s| s["line"].as_u64()).collect();
    assert!(lines.windows(2).all(|pair| pair[0] <= pair[1]), "in file order: {lines:?}");
    // The red scenario's picture came along: saved in the merged project and inline in HTML.
    let red = report["scenarios"].as_array().into_iter().flatten().find(|s| s["verdict"] == "red").expect("red");
    let picture = red["screenshotFile"].as_str().expect("a screenshot");
    assert!(merged.join(picture).is_file(), "{picture}");
    let html = std::fs::read_to_string(merged.join(".saffron/reports/report.html")).expect("html");
    assert!(html.contains("data:image/png;base64,iVBORw"), "the screenshot is inline");
    // Every scenario's steps, with the locator and tier that found each action's element.
    assert!(html.contains("<span class=\"kw\">Then</span>") && html.contains(" found by <code>role "), "{html}");
    let junit = std::fs::read_to_string(merged.join(".saffron/reports/junit.xml")).expect("junit");
    assert_eq!(junit.matches("<testcase ").count(), total);

    // The same shard twice is refused, by name.
    let output = saffron(
        &[
            "report",
            "--merge",
            &first.display().to_string(),
            &first.display().to_string(),
            "--out",
            &merged.display().to_string(),
        ],
        &merged,
        &password,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is in two of the reports"));
    let missing = saffron(&["report", "--merge", "/nonexistent/shard"], &merged, &password);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no report there"));
    for folder in [first, second, merged] {
        let _ = std::fs::remove_dir_all(folder);
    }
    let _ = runtime.block_on(server.shutdown());
}
