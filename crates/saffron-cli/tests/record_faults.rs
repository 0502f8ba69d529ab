//! The recording agent misbehaving, and providers failing: each ends green (the session went
//! on), red or blocked as the issue says, never green when it should not be, and writes no
//! recording that was not proven.

use crate::support;

use std::path::Path;

use saffron_agent::Request;
use saffron_agent::testing::{FakeServer, Reply, Wire};
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::json;
use support::agent::{
    MALFORMED, Op, Plans, Seen, check, check_on, click, configure_agent, done, errors_told, fill, goto, op, project,
    reply, runtime, saffron_run, scenario_at, sign_in, step, text, tool_results, wait,
};

const SCENARIO: &str = "Sign in with the demo account";
const RECORDING: &str = ".saffron/cache/sign-in/sign-in-with-the-demo-account.json";

fn plan(ops: Vec<Op>) -> Plans {
    let mut plans = Plans::new();
    plans.insert(SCENARIO.into(), ops);
    plans
}

fn with_rest(mut ops: Vec<Op>, rest: Vec<Op>) -> Vec<Op> {
    ops.extend(rest);
    ops
}

fn good() -> Vec<Op> {
    with_rest(sign_in(), vec![step(4), check(json!({ "check": "noConsoleErrors" })), done()])
}

struct Case {
    output: std::process::Output,
    seen: Seen,
    server: FakeServer,
    root: std::path::PathBuf,
    password: String,
}

impl Case {
    fn all(&self) -> String {
        text(&self.output)
    }

    fn errors(&self) -> String {
        errors_told(&self.seen)
    }

    fn saved(&self) -> bool {
        self.root.join(RECORDING).exists()
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Records the sign-in scenario with `script` answering on `wire`.
fn record(name: &str, wire: Wire, extra: &str, script: impl FnMut(&Request) -> Reply + Send + 'static) -> Case {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project(name, &password);
    let seen = Seen::default();
    let mut script = script;
    let server = {
        let seen = seen.clone();
        runtime
            .block_on(FakeServer::start(wire, move |request: &Request| {
                seen.push(request);
                script(request)
            }))
            .expect("fake server")
    };
    let provider = if wire == Wire::Anthropic { "anthropic" } else { "openai" };
    configure_agent(&root, provider, &server, extra);
    let target = scenario_at(&root, "features/sign_in.feature", SCENARIO);
    let output = saffron_run(&root, &demo.url(), &[target]);
    let _ = runtime.block_on(demo.shutdown());
    // The server lives on in the case, for its captured requests; its runtime must too.
    std::mem::forget(runtime);
    Case { output, seen, server, root, password }
}

fn scripted(plans: Plans) -> impl FnMut(&Request) -> Reply + Send + 'static {
    move |request: &Request| reply(&plans, request)
}

#[test]
fn done_without_a_check_on_a_then_is_refused_once_then_red_unverified_and_nothing_is_saved() {
    // Steps 3 and 4 are Thens, announced and never checked.
    let ops = vec![
        step(1),
        goto("/login"),
        step(2),
        fill("textbox \"Email\"", "demo@saffron.test"),
        fill("textbox \"Password\"", "{env:DEMO_PASSWORD}"),
        click("button \"Sign in\""),
        step(3),
        step(4),
        done(),
        done(),
    ];
    let case = record("unverified", Wire::Anthropic, "", scripted(plan(ops)));
    let all = case.all();
    assert_eq!(case.output.status.code(), Some(1), "{all}");
    assert!(all.contains("✗ red") && all.contains("unverified"), "{all}");
    assert!(case.errors().contains("not done: Then step(s) 3 \"I see the orders page\", 4"), "{}", case.errors());
    assert!(!case.saved(), "an unverified recording was saved");
}

#[test]
fn an_agent_that_reports_a_defect_makes_the_scenario_red_with_its_narrative() {
    let ops = vec![
        step(1),
        goto("/login"),
        op("saffron_done", json!({ "success": false, "narrative": "The sign-in page shows no form at all." })),
    ];
    let case = record("defect", Wire::Anthropic, "", scripted(plan(ops)));
    let all = case.all();
    assert_eq!(case.output.status.code(), Some(1), "{all}");
    assert!(all.contains("✗ red") && all.contains("The sign-in page shows no form at all."), "{all}");
    assert!(!case.saved());
}

#[test]
fn refusals_are_tool_errors_the_session_goes_on_and_diagnosis_is_not_recorded() {
    let ops = with_rest(
        vec![
            // Before any step: diagnosis, performed but never recorded.
            goto("/login"),
            // The page then shows the secret in a plain field: every answer must mask it.
            fill("textbox \"Email\"", "{env:DEMO_PASSWORD}"),
            fill("textbox \"Email\"", "diagnosis@example.test"),
            // No such tool, a made-up ref, input the tool does not take, arguments that are not JSON.
            op("shell_exec", json!({ "command": "cat /etc/passwd" })),
            op("browser_click", json!({ "ref": "e999" })),
            op("browser_fill", json!({ "ref": 3 })),
            op(MALFORMED, json!({ "ref": "e1" })),
            // A check of text the page does not show.
            check_on("h1", json!({ "check": "text", "text": "Welcome back" })),
        ],
        good(),
    );
    let case = record("refusals", Wire::OpenAi, "", scripted(plan(ops)));
    let all = case.all();
    let errors = case.errors();
    assert_eq!(case.output.status.code(), Some(0), "{all}\n{errors}");
    assert!(errors.contains("there is no tool `shell_exec`"), "{errors}");
    assert!(errors.contains("there is no element e999"), "{errors}");
    assert!(errors.contains("the input of `browser_fill` does not match its schema"), "{errors}");
    assert!(errors.contains("are not valid JSON"), "{errors}");
    assert!(errors.contains("the check does not hold, so it is not recorded") && errors.contains("Welcome back"));
    let recording = std::fs::read_to_string(case.root.join(RECORDING)).expect("saved");
    assert!(!recording.contains("diagnosis@example.test") && !recording.contains("Welcome back"), "{recording}");
    assert!(recording.contains("demo@saffron.test"), "{recording}");
    for captured in case.server.requests() {
        assert!(!captured.body.contains(&case.password), "a request held the password");
    }
    let told: Vec<String> = case.seen.all().iter().flat_map(tool_results).map(|(content, _)| content).collect();
    let emails: Vec<&str> =
        told.iter().flat_map(|content| content.lines()).filter(|line| line.contains("textbox \"Email\"")).collect();
    assert!(emails.iter().any(|line| line.ends_with(": {env:DEMO_PASSWORD}")), "{emails:?}");
}

#[test]
fn a_rate_limit_is_waited_out_and_the_recording_goes_on() {
    let plans = plan(good());
    let mut limited = false;
    let case = record("rate-limited", Wire::Anthropic, "", move |request: &Request| {
        if !limited {
            limited = true;
            return Reply::rate_limited("1");
        }
        reply(&plans, request)
    });
    let all = case.all();
    assert_eq!(case.output.status.code(), Some(0), "{all}\n{}", case.errors());
    assert!(case.saved());
    // The first request was answered 429 and sent again.
    let bodies: Vec<String> = case.server.requests().iter().map(|captured| captured.body.clone()).collect();
    assert_eq!(bodies[0], bodies[1]);
}

#[test]
fn a_provider_that_stays_down_blocks_the_scenario() {
    let case = record("down", Wire::OpenAi, "", |_: &Request| Reply::server_error());
    let all = case.all();
    assert_eq!(case.output.status.code(), Some(2), "{all}");
    assert!(all.contains("! blocked") && all.contains("500"), "{all}");
    assert!(case.server.requests().len() > 1, "no retry was made");
    assert!(!case.saved());
}

#[test]
fn a_spent_budget_blocks_the_scenario() {
    let case = record("budget", Wire::Anthropic, "max_turns = 4\n", scripted(plan(good())));
    let all = case.all();
    assert_eq!(case.output.status.code(), Some(2), "{all}");
    assert!(all.contains("! blocked") && all.contains("used all 4 turns"), "{all}");
    assert_eq!(case.server.requests().len(), 4);
    assert!(!case.saved());
}

/// The sign-in happens before any step is announced: the live page signs in, the recording
/// holds none of it, and its proof replay fails at step 3.
fn unprovable() -> Vec<Op> {
    vec![
        goto("/login"),
        fill("textbox \"Email\"", "demo@saffron.test"),
        fill("textbox \"Password\"", "{env:DEMO_PASSWORD}"),
        click("button \"Sign in\""),
        wait("^/api/session$", "POST", "2xx"),
        step(1),
        step(2),
        step(3),
        check(json!({ "check": "url", "url": "/orders" })),
        step(4),
        check(json!({ "check": "noConsoleErrors" })),
        done(),
    ]
}

#[test]
fn a_recording_that_fails_its_proof_is_refined_once_and_saved_when_the_refine_proves() {
    let mut plans = plan(unprovable());
    plans.insert(format!("{SCENARIO} (refine)"), good());
    let case = record("refined", Wire::Anthropic, "", scripted(plans));
    let all = case.all();
    assert_eq!(case.output.status.code(), Some(0), "{all}\n{}", case.errors());
    assert!(case.saved());
    // The refine session was told where the proof failed.
    let refine_task = case
        .seen
        .all()
        .iter()
        .filter_map(|request| request.messages.first().map(|message| message.text()))
        .find(|task| task.contains("failed when replayed"))
        .expect("a refine session");
    assert!(refine_task.contains("step 3"), "{refine_task}");
    let latest = std::fs::read_to_string(case.root.join(".saffron/reports/latest.json")).expect("report");
    assert!(latest.contains("\"sessions\": 2"), "{latest}");
}

#[test]
fn a_recording_that_fails_its_proof_twice_is_red_with_both_attempts_kept_and_nothing_saved() {
    let case = record("unproven", Wire::Anthropic, "", scripted(plan(unprovable())));
    let all = case.all();
    assert_eq!(case.output.status.code(), Some(1), "{all}");
    assert!(all.contains("✗ red") && all.contains("did not pass its proof replay, twice"), "{all}");
    assert!(!case.saved());
    let evidence = case.root.join(".saffron/artifacts/recording/sign-in/sign-in-with-the-demo-account");
    for attempt in ["attempt-1.json", "attempt-2.json"] {
        let kept = std::fs::read_to_string(evidence.join(attempt)).expect("evidence");
        assert!(kept.contains("\"conversation\"") && kept.contains("\"recording\""), "{kept}");
        assert!(!kept.contains(&case.password), "the evidence holds the password");
    }
}

#[test]
fn without_an_agent_a_scenario_that_needs_recording_is_blocked_with_the_hint() {
    let runtime = runtime();
    let demo = runtime.block_on(DemoServer::start(DemoConfig::default())).expect("demo");
    let root = project("no-agent", "unused");
    let target = scenario_at(&root, "features/sign_in.feature", SCENARIO);
    let output = saffron_run(&root, &demo.url(), &[target]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("! blocked") && all.contains("no agent is configured"), "{all}");
    assert!(all.contains("add an [agent] table to saffron.toml"), "{all}");
    // Both ways to get one are named: a client on PATH, or a provider and its key.
    assert!(all.contains("program = \"claude\"") && all.contains("ANTHROPIC_API_KEY"), "{all}");
    assert!(!root.join(RECORDING).exists());
    let _ = std::fs::remove_dir_all(Path::new(&root));
    let _ = runtime.block_on(demo.shutdown());
}

#[test]
fn ctrl_c_during_a_recording_ends_the_run_and_writes_no_recording() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project("interrupted", &password);
    let plans = plan(good());
    // A slow model: the run is inside the session when it is interrupted.
    let server = runtime
        .block_on(FakeServer::start(Wire::Anthropic, move |request: &Request| {
            Reply::Delayed(std::time::Duration::from_millis(300), Box::new(reply(&plans, request)))
        }))
        .expect("fake server");
    configure_agent(&root, "anthropic", &server, "");
    let target = scenario_at(&root, "features/sign_in.feature", SCENARIO);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &demo.url(), &target])
        .current_dir(&root)
        .env_remove("DEMO_PASSWORD")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("saffron starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while server.requests().len() < 3 {
        assert!(std::time::Instant::now() < deadline, "the recording never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let signalled = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(signalled.success());
    let status = child.wait().expect("saffron ends");
    assert_eq!(status.code(), Some(130));
    assert!(!root.join(RECORDING).exists(), "an interrupted recording was saved");
    let mut files = Vec::new();
    support::agent::every_file(&root.join(".saffron"), &mut files);
    assert!(files.iter().all(|file| !file.to_string_lossy().contains(".tmp-")), "{files:?}");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// The processes whose parent is `parent`, by `/proc`.
fn children_of(parent: u32) -> Vec<(u32, String)> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid ...`; the name may hold spaces, so read after its `)`.
        let Some((head, rest)) = stat.rsplit_once(") ") else { continue };
        let name = head.split_once(" (").map(|(_, name)| name.to_string()).unwrap_or_default();
        if rest.split_whitespace().nth(1).and_then(|ppid| ppid.parse::<u32>().ok()) == Some(parent) {
            children.push((pid, name));
        }
    }
    children
}

#[test]
fn a_browser_that_dies_during_a_recording_blocks_the_scenario_and_saves_nothing() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project("browser-dies", &password);
    let plans = plan(good());
    let server = runtime
        .block_on(FakeServer::start(Wire::Anthropic, move |request: &Request| {
            Reply::Delayed(std::time::Duration::from_millis(300), Box::new(reply(&plans, request)))
        }))
        .expect("fake server");
    configure_agent(&root, "anthropic", &server, "");
    let target = scenario_at(&root, "features/sign_in.feature", SCENARIO);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", &demo.url(), &target])
        .current_dir(&root)
        .env_remove("DEMO_PASSWORD")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("saffron starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while server.requests().len() < 3 {
        assert!(std::time::Instant::now() < deadline, "the recording never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The Chromium this saffron started (and only it).
    let chromium: Vec<u32> =
        children_of(child.id()).into_iter().filter(|(_, name)| name.contains("chrom")).map(|(pid, _)| pid).collect();
    assert!(!chromium.is_empty(), "no Chromium under saffron: {:?}", children_of(child.id()));
    for pid in chromium {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    let output = child.wait_with_output().expect("saffron ends");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("! blocked") && all.contains("lost the connection to Chromium"), "{all}");
    assert!(!root.join(RECORDING).exists(), "a recording was saved after the browser died");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

#[test]
fn a_provider_answering_garbage_or_an_agent_that_stops_acting_blocks_the_scenario() {
    let garbage = record("garbage", Wire::Anthropic, "", |_: &Request| Reply::garbage());
    let all = garbage.all();
    assert_eq!(garbage.output.status.code(), Some(2), "{all}");
    assert!(all.contains("! blocked") && all.contains("Welcome to nginx"), "{all}");
    assert!(!garbage.saved());
    let idle = record("idle", Wire::OpenAi, "", |_: &Request| Reply::text("Looks fine to me."));
    let all = idle.all();
    assert_eq!(idle.output.status.code(), Some(2), "{all}");
    assert!(
        all.contains("! blocked") && all.contains("stopped without finishing") && all.contains("Looks fine to me."),
        "{all}"
    );
    assert!(!idle.saved());
}
