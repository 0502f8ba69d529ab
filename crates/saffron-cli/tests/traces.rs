//! Traces from the real binary in real Chromium: a red scenario keeps one by default (the failed
//! check, the DOM at the failure, the network call that saved the order, nothing of the
//! secret), `--trace on` keeps a green one with a picture after each action, `--trace off` keeps
//! none; the HTML report links the viewer, and `saffron trace` writes and opens it.

use crate::support;

use std::path::Path;

use base64::Engine as _;
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::Value;
use support::agent::{runtime, scenario_at, text};

const TIMEOUTS: &str = "[timeouts]\naction_ms = 3000\nassertion_ms = 3000\nnavigation_ms = 10000\n";

fn saffron(root: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(args)
        .current_dir(root)
        .env_remove("BROWSER")
        .output()
        .expect("saffron runs")
}

fn latest(root: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(root.join(".saffron/reports/latest.json")).expect("latest")).expect("json")
}

fn trace_at(root: &Path, file: &Value) -> Value {
    let file = file.as_str().expect("a trace path");
    serde_json::from_slice(&std::fs::read(root.join(file)).expect("the trace file")).expect("trace JSON")
}

fn demo_with(runtime: &tokio::runtime::Runtime, root: &Path, config: DemoConfig) -> DemoServer {
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={}\n", demo.config().password)).expect(".env");
    demo
}

#[test]
fn a_red_scenario_keeps_a_trace_with_the_failed_check_the_dom_and_the_saving_call() {
    let runtime = runtime();
    let root = support::example_project("trace-red");
    std::fs::write(root.join("saffron.toml"), TIMEOUTS).expect("config");
    let target = support::agent::line_of(&root, "features/new_order.saffron", "| Katherine Johnson |");
    let mut config = DemoConfig::default();
    config.faults.insert(saffron_demo::Fault::Latency);
    config.defects.insert(saffron_demo::Defect::WrongTotal);
    let demo = demo_with(&runtime, &root, config);
    let password = demo.config().password.clone();

    let run = saffron(&root, &["run", "--base-url", &demo.url(), &target]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let report = latest(&root);
    let scenario = &report["scenarios"][0];
    let traces = scenario["traces"].as_array().expect("the red scenario names its trace");
    assert_eq!(traces.len(), 1, "{scenario:#}");
    let trace = trace_at(&root, &traces[0]);
    assert_eq!(trace["saffronTrace"], 1);
    assert_eq!(trace["mode"], "retain-on-failure");
    assert_eq!(trace["outcome"]["verdict"], "red");
    assert!(trace["frames"].as_array().is_some_and(Vec::is_empty), "no pictures but at the failure by default");

    // The failing check, with what it expected and found.
    let actions = trace["actions"].as_array().expect("actions");
    let failed = trace["failure"]["action"].as_u64().expect("the failure names its action") as usize;
    let check = &actions[failed];
    assert_eq!(check["passed"], false);
    assert!(check["action"].as_str().is_some_and(|text| text.contains("saved-total")), "{check:#}");
    assert_eq!(check["error"]["kind"], "assertion failed", "{check:#}");
    assert_eq!(check["error"]["found"], "\"Total: €13.00\"", "{check:#}");
    assert!(check["attempts"].as_u64().is_some_and(|looks| looks > 1), "the check looked again until its timeout");

    // The page as it was: its DOM shows the wrong total, and the failure picture is there.
    let html = trace["failure"]["snapshot"]["html"].as_str().expect("a DOM snapshot");
    assert!(html.contains("data-testid=\"saved-total\"") && html.contains("Total: €13.00"), "{html}");
    assert!(!html.to_ascii_lowercase().contains("<script"), "the snapshot runs nothing");
    let picture = base64::engine::general_purpose::STANDARD
        .decode(trace["failure"]["screenshot"].as_str().expect("a picture"))
        .expect("base64");
    assert!(picture.starts_with(b"\x89PNG"), "a PNG");

    // The call that saved the order, during the click that saved it, and the wait that matched it.
    let network = trace["network"].as_array().expect("network");
    let saving = network
        .iter()
        .find(|request| {
            request["method"] == "POST" && request["url"].as_str().is_some_and(|url| url.ends_with("/api/orders"))
        })
        .expect("the order was saved through the API");
    assert_eq!(saving["status"], 201);
    let during = &actions[saving["action"].as_u64().expect("during an action") as usize];
    assert_eq!(during["action"], "click button \"Save order\"", "{saving:#}");
    assert!(saving["endMs"].as_u64() >= saving["startMs"].as_u64(), "{saving:#}");
    let wait = actions.iter().find(|action| action["type"] == "waitForResponse" && action["step"] == during["step"]);
    assert_eq!(wait.map(|wait| wait["matched"].clone()), Some(Value::from("POST /api/orders → 201")));
    // Masked like every other output: the password the scenario typed is nowhere in the file.
    let bytes = std::fs::read(root.join(traces[0].as_str().expect("path"))).expect("trace");
    assert!(!String::from_utf8_lossy(&bytes).contains(&password), "the trace holds the secret");

    // The HTML report links the viewer page written beside the trace; `saffron trace` writes
    // the viewer for the scenario and says where.
    let viewer = scenario["traceViewer"].as_str().expect("a viewer page");
    assert!(root.join(viewer).is_file());
    let html_report = std::fs::read_to_string(root.join(".saffron/reports/report.html")).expect("report.html");
    assert!(html_report.contains(&format!("href=\"../{}\"", viewer.trim_start_matches(".saffron/"))), "linked");
    let shown = saffron(&root, &["trace", "--no-open", &target]);
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown));
    let page_path = String::from_utf8_lossy(&shown.stdout).trim().to_owned();
    assert!(page_path.ends_with(".saffron/reports/trace.html"), "{page_path}");
    let page = std::fs::read_to_string(&page_path).expect("the viewer page");
    assert!(page.contains("Total: €13.00") && page.contains("saffronTrace"), "the page carries the trace");
    let saving_click = saving["action"].as_u64().expect("index");
    runtime.block_on(viewer_shows_the_failure_and_the_saving_call(page, failed, saving_click));
    let _ = runtime.block_on(demo.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}

/// The viewer page `saffron trace` wrote, in headless Chromium: it opens on the failed check with
/// its reason and the DOM at the failure (the wrong total, inside the snapshot's frame);
/// clicking the click that saved the order shows the call that saved it.
async fn viewer_shows_the_failure_and_the_saving_call(page: String, failed: usize, saving_click: u64) {
    use saffron_browser::{Browser, BrowserConfig, ContextOptions};
    let base_url = saffron_browser::testing::serve_page(page);
    let browser = Browser::launch(BrowserConfig::default()).await.expect("these tests need Chromium");
    let mut context = browser.new_context(ContextOptions { base_url }).await.expect("a context");
    let steps = [
        serde_json::json!({ "type": "goto", "url": "/" }),
        serde_json::json!({ "type": "expectState", "target": { "css": [format!("[data-action=\"{failed}\"]")] },
            "state": { "kind": "attribute", "name": "aria-selected", "value": "true" } }),
        serde_json::json!({ "type": "expectText", "target": { "css": ["#failure-reason"] }, "textRegex": "Total: €13\\.00" }),
        serde_json::json!({ "type": "expectText",
            "target": { "css": ["[data-testid=saved-total]"], "frame": { "css": ["#snapshot"] } },
            "text": "Total: €13.00" }),
        // Styled by the page's own stylesheet, inlined into the snapshot (the demo's body is 15px).
        serde_json::json!({ "type": "expectState",
            "target": { "css": ["[data-testid=saved-total]"], "frame": { "css": ["#snapshot"] } },
            "state": { "kind": "css", "property": "font-size", "value": "15px" } }),
        serde_json::json!({ "type": "click", "target": { "css": [format!("[data-action=\"{saving_click}\"]")] } }),
        serde_json::json!({ "type": "expectText", "target": { "css": ["#network tr[data-request]"] },
            "textRegex": "POST.*/api/orders.*201" }),
    ];
    for step in steps {
        let action: saffron_recording::Action = serde_json::from_value(step.clone()).expect("an action");
        if let Err(failure) = context.perform(&action, None).await {
            panic!("{step} failed in the viewer: {failure}");
        }
    }
    context.close().await;
    browser.close().await;
}

#[test]
fn trace_on_keeps_a_green_scenario_with_a_picture_after_each_action_and_off_keeps_none() {
    let runtime = runtime();
    let root = support::example_project("trace-modes");
    std::fs::write(root.join("saffron.toml"), TIMEOUTS).expect("config");
    let target = scenario_at(&root, "features/sign_in.feature", "Sign in with the demo account");
    let demo = demo_with(&runtime, &root, DemoConfig::default());

    // The default keeps nothing of a green scenario.
    let run = saffron(&root, &["run", "--base-url", &demo.url(), &target]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(latest(&root)["scenarios"][0].get("traces").is_none(), "a green scenario keeps no trace by default");

    let run = saffron(&root, &["run", "--trace", "on", "--base-url", &demo.url(), &target]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let report = latest(&root);
    let trace = trace_at(&root, &report["scenarios"][0]["traces"][0]);
    assert_eq!(trace["mode"], "on");
    assert_eq!(trace["outcome"]["verdict"], "green");
    let frames = trace["frames"].as_array().expect("frames");
    let actions = trace["actions"].as_array().expect("actions");
    assert_eq!(frames.len(), actions.len(), "one picture after each action");
    for (index, action) in actions.iter().enumerate() {
        assert_eq!(action["frame"], index, "{action:#}");
        assert!(action["url"].as_str().is_some_and(|url| url.starts_with(&demo.url())), "{action:#}");
    }
    let jpeg =
        base64::engine::general_purpose::STANDARD.decode(frames[0]["jpeg"].as_str().expect("jpeg")).expect("b64");
    assert!(jpeg.starts_with(&[0xFF, 0xD8]), "a JPEG");
    assert!(frames[0]["width"].as_f64().is_some_and(|width| width > 0.0));
    let click = actions.iter().find(|action| action["type"] == "click").expect("a click");
    let bounds = &click["bounds"];
    assert!(bounds["width"].as_f64().is_some_and(|width| width > 0.0), "the clicked element's box: {click:#}");
    let steps = trace["steps"].as_array().expect("steps");
    assert!(steps.iter().all(|step| step["outcome"] == "passed"), "{steps:#?}");

    // `[trace] mode = "off"` keeps nothing, even of a red scenario.
    std::fs::write(root.join("saffron.toml"), format!("{TIMEOUTS}[trace]\nmode = \"off\"\n")).expect("config");
    let _ = runtime.block_on(demo.shutdown());
    let mut config = DemoConfig::default();
    config.faults.insert(saffron_demo::Fault::FlakyOnce);
    let demo = demo_with(&runtime, &root, config);
    let run = saffron(&root, &["run", "--base-url", &demo.url(), &target]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert!(latest(&root)["scenarios"][0].get("traces").is_none(), "off keeps none");
    let _ = runtime.block_on(demo.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}

/// A scenario that failed once and passed on its retry keeps the failed attempt's trace.
#[test]
fn a_flaky_scenario_keeps_the_trace_of_its_failed_attempt() {
    let runtime = runtime();
    let root = support::example_project("trace-flaky");
    std::fs::write(root.join("saffron.toml"), TIMEOUTS).expect("config");
    let target = scenario_at(&root, "features/sign_in.feature", "Sign in with the demo account");
    let mut config = DemoConfig::default();
    config.faults.insert(saffron_demo::Fault::FlakyOnce);
    let demo = demo_with(&runtime, &root, config);
    let run = saffron(&root, &["run", "--retries", "1", "--base-url", &demo.url(), &target]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let report = latest(&root);
    let traces = report["scenarios"][0]["traces"].as_array().expect("traces");
    assert_eq!(traces.len(), 1, "the failed attempt's, not the passing retry's: {traces:?}");
    assert!(traces[0].as_str().is_some_and(|path| path.ends_with("-attempt-1.trace.json")), "{traces:?}");
    let trace = trace_at(&root, &traces[0]);
    assert_eq!(trace["attempt"], 1);
    assert_eq!(trace["outcome"]["verdict"], "red");
    let document = trace["network"]
        .as_array()
        .and_then(|network| network.iter().find(|request| request["resourceType"] == "document").cloned())
        .expect("the sign-in page's load");
    assert_eq!(document["status"], 503, "{document:#}");
    let _ = runtime.block_on(demo.shutdown());
    let _ = std::fs::remove_dir_all(&root);
}

/// `saffron trace` opens the page with `$BROWSER`, and without any browser prints its path and
/// says so; a file that is not a trace is refused with its reason.
#[test]
fn saffron_trace_opens_the_viewer_or_says_where_it_is() {
    let root = support::example_project("trace-open");
    let trace_file = root.join("given.trace.json");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../saffron-runner/tests/fixtures/trace/red.trace.json");
    std::fs::copy(&fixture, &trace_file).expect("a trace");

    let opened = root.join("opened-with.txt");
    let stand_in = root.join("browser.sh");
    std::fs::write(&stand_in, format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display())).expect("stand-in");
    std::fs::set_permissions(&stand_in, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["trace", "given.trace.json"])
        .current_dir(&root)
        .env("BROWSER", &stand_in)
        .output()
        .expect("saffron runs");
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown));
    let page = String::from_utf8_lossy(&shown.stdout).trim().to_owned();
    // The stand-in was started, not waited for: its file appears when it has run.
    let mut said = String::new();
    for _ in 0..200 {
        said = std::fs::read_to_string(&opened).unwrap_or_default();
        if !said.is_empty() {
            break;
        }
        std::thread::yield_now();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(said.trim(), page, "$BROWSER got the page");

    let empty = root.join("no-programs");
    std::fs::create_dir_all(&empty).expect("folder");
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["trace", "given.trace.json"])
        .current_dir(&root)
        .env_remove("BROWSER")
        .env("PATH", &empty)
        .output()
        .expect("saffron runs");
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown));
    assert!(text(&shown).contains("no browser could be opened"), "{}", text(&shown));
    assert!(String::from_utf8_lossy(&shown.stdout).trim().ends_with("trace.html"), "the path is printed");

    std::fs::write(root.join("other.json"), "{\"name\": 1}").expect("json");
    let refused = saffron(&root, &["trace", "--no-open", "other.json"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused).contains("not a saffron trace"), "{}", text(&refused));
    std::fs::write(root.join("broken.trace.json"), "{\n  \"saffronTrace\": 1,\n  oops\n}").expect("json");
    let refused = saffron(&root, &["trace", "--no-open", "broken.trace.json"]);
    assert!(text(&refused).contains("broken.trace.json:3:3"), "file:line:col: {}", text(&refused));
    let _ = std::fs::remove_dir_all(&root);
}
