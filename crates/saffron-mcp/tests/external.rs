//! The external agent driver end to end: a scripted MCP client (the official Python `mcp`
//! package over streamable HTTP, tests/external/agent.py) is run as `[agent] command` and
//! records through a fake tool gateway.
//!
//! CI installs the Python package (`.ci/run`). Where it cannot be imported the tests fail,
//! unless `SAFFRON_SKIP_PYTHON_MCP=1` says to skip them.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use saffron_agent::{
    AgentCommand, AgentDriver, Block, BoxFuture, Budget, Exhausted, ExternalAgent, SessionOutcome, SessionReport,
    ToolGateway, ToolOutput, ToolSpec,
};
use saffron_mcp::ExternalDriver;
use saffron_recording::{Masker, Secret};
use serde_json::{Value, json};

const SECRET: &str = "hunter2-long";
const SYSTEM: &str = "You record browser scenarios through Saffron's tools.";
const TASK: &str = "Sign in with the password {env:PASSWORD}, then call finish.";

/// A gateway with a few tools that keeps every call, substitutes the secret into what `fill`
/// answers (as the real one shows a filled field) and is done once `finish` is called.
#[derive(Default)]
struct FakeGateway {
    calls: Vec<(String, Value)>,
    done: bool,
    /// Told when `note` is called.
    noted: Option<tokio::sync::oneshot::Sender<()>>,
}

impl ToolGateway for FakeGateway {
    fn tools(&self) -> Vec<ToolSpec> {
        let tool = |name: &str, description: &str, schema: Value| ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema: schema,
        };
        vec![
            tool("snapshot", "The page's accessibility snapshot.", json!({"type": "object", "properties": {}})),
            tool(
                "fill",
                "Fills a field.",
                json!({"type": "object", "properties": {"ref": {"type": "string"}, "value": {"type": "string"}},
                       "required": ["ref", "value"]}),
            ),
            tool("note", "Keeps a note.", json!({"type": "object"})),
            tool("finish", "Ends the session.", json!({"type": "object"})),
        ]
    }

    fn call<'a>(&'a mut self, name: &'a str, input: &'a Value) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            self.calls.push((name.to_string(), input.clone()));
            match name {
                "snapshot" => ToolOutput::ok("- textbox \"Password\" [ref=e1]\n- button \"Sign in\" [ref=e2]"),
                "fill" => {
                    let value = input["value"].as_str().unwrap_or_default().replace("{env:PASSWORD}", SECRET);
                    ToolOutput::ok(format!("textbox \"Password\" [ref=e1] now has the value \"{value}\""))
                }
                "note" => {
                    if let Some(noted) = self.noted.take() {
                        let _ = noted.send(());
                    }
                    ToolOutput::ok("noted")
                }
                "finish" => {
                    self.done = true;
                    ToolOutput::ok("the recording is complete")
                }
                other => ToolOutput::error(format!("there is no tool `{other}`; the tools are snapshot, fill, finish")),
            }
        })
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

fn masker() -> Masker {
    let mut masker = Masker::new();
    masker.add(&Secret { name: "PASSWORD".into(), value: SECRET.into() });
    masker
}

/// The Python that can import the `mcp` client, or `None` when the tests are to be skipped.
fn python() -> Option<&'static str> {
    static PYTHON: OnceLock<Option<&'static str>> = OnceLock::new();
    *PYTHON.get_or_init(|| {
        let importable = Command::new("python3")
            .args(["-c", "import httpx2, mcp.client.streamable_http"])
            .output()
            .is_ok_and(|output| output.status.success());
        if importable {
            return Some("python3");
        }
        if std::env::var("SAFFRON_SKIP_PYTHON_MCP").as_deref() == Ok("1") {
            eprintln!(
                "SKIPPED: the external agent tests need python3 with the `mcp` package (tests/mcp/requirements.txt); \
                 SAFFRON_SKIP_PYTHON_MCP=1 skips them"
            );
            return None;
        }
        panic!(
            "python3 cannot import the `mcp` client: `python3 -m pip install -r tests/mcp/requirements.txt` \
             (or set SAFFRON_SKIP_PYTHON_MCP=1 to skip these tests)"
        )
    })
}

fn script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/external/agent.py").display().to_string()
}

fn driver(python: &str, mode: &str, max_turns: u32) -> ExternalDriver {
    let command = AgentCommand::Argv(vec![python.into(), script(), mode.into()]);
    let budget = Budget { max_turns, max_tokens: 1_000_000 };
    ExternalDriver::new(ExternalAgent { command, budget, prices: None })
}

async fn run(driver: &ExternalDriver) -> (SessionReport, FakeGateway) {
    let mut gateway = FakeGateway::default();
    let masker = masker();
    let report = driver.run(&mut gateway, &masker, SYSTEM, TASK).await;
    (report, gateway)
}

/// Whether process `pid` still runs (a zombie counts as gone).
fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}

fn gone_within(pid: u64, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scripted_mcp_client_records_through_the_gateway_and_sees_no_secret() {
    let Some(python) = python() else { return };
    // Through a shell line, as a user writes `command = "..."`.
    let command = AgentCommand::Shell(format!("{python} '{}' record", script()));
    let budget = Budget { max_turns: 20, max_tokens: 1_000_000 };
    let driver = ExternalDriver::new(ExternalAgent { command, budget, prices: None });
    let (report, gateway) = run(&driver).await;
    assert_eq!(report.outcome, SessionOutcome::Done, "{:?}", report.outcome.cause());
    assert_eq!(report.usage, saffron_agent::Usage::default(), "an external agent reports no tokens");
    let names: Vec<&str> = gateway.calls.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["snapshot", "fill", "open_shell", "finish"], "the gateway saw exactly the calls");
    assert_eq!(gateway.calls[1].1, json!({"ref": "e1", "value": "{env:PASSWORD}"}));
    assert_eq!(report.turns, 4);

    let observed = &gateway.calls[3].1["observed"];
    let prompt = format!("{SYSTEM}\n\n{TASK}");
    assert_eq!(observed["stdin"], json!(prompt), "the prompt on standard input");
    assert_eq!(observed["env_prompt"], json!(prompt), "the prompt in SAFFRON_AGENT_PROMPT");
    assert_eq!(observed["tools"], json!(["snapshot", "fill", "note", "finish"]));
    assert_eq!(observed["fill_schema"]["required"], json!(["ref", "value"]), "schemas pass through");
    assert!(observed["snapshot"].as_str().is_some_and(|text| text.contains("[ref=e2]")), "{observed}");
    assert_eq!(
        observed["fill"],
        json!("textbox \"Password\" [ref=e1] now has the value \"{env:PASSWORD}\""),
        "the result reached the client masked"
    );
    assert_eq!(observed["fill_is_error"], json!(false));
    assert_eq!(observed["unknown_is_error"], json!(true), "an unknown tool is a tool error");
    assert!(observed["unknown"].as_str().is_some_and(|text| text.contains("no tool `open_shell`")));
    assert_eq!((observed["no_token"].as_u64(), observed["wrong_token"].as_u64()), (Some(401), Some(401)));
    assert_eq!(observed["token_in_argv"], json!(false), "the token is only in the environment");
    assert_eq!(observed["secret_in_env"], json!(false));

    let evidence = format!("{:?}", report.conversation);
    assert!(!evidence.contains(SECRET) && evidence.contains("{env:PASSWORD}"), "{evidence}");
    assert!(matches!(&report.conversation[2].content[0], Block::ToolResult { is_error: false, .. }));

    // The server is stopped and its port closed.
    let url = observed["url"].as_str().unwrap_or_default();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
    assert!(tokio::net::TcpStream::connect(address).await.is_err(), "{address} still accepts connections");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_of_the_stateless_protocol_revision_records_too() {
    let Some(python) = python() else { return };
    let (report, gateway) = run(&driver(python, "stateless", 20)).await;
    assert_eq!(report.outcome, SessionOutcome::Done, "{:?}", report.outcome.cause());
    let names: Vec<&str> = gateway.calls.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["snapshot", "finish"]);
    assert_eq!(gateway.calls[1].1["tools"], json!(["snapshot", "fill", "note", "finish"]));
    assert!(gateway.calls[1].1["snapshot"].as_str().is_some_and(|text| text.contains("[ref=e1]")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_exits_without_finishing_gave_up_with_its_stderr() {
    let Some(python) = python() else { return };
    let (report, gateway) = run(&driver(python, "exit", 20)).await;
    let SessionOutcome::GaveUp { last_words } = &report.outcome else { panic!("{:?}", report.outcome) };
    assert!(last_words.starts_with("the agent program exited (status 3) without finishing"), "{last_words}");
    assert!(last_words.ends_with("fatal: the model refused the key {env:PASSWORD}"), "{last_words}");
    assert!(!last_words.contains(SECRET), "masked: {last_words}");
    assert!(last_words.contains("noise line 30") && !last_words.contains("noise line 20"), "the tail: {last_words}");
    assert!(gateway.calls.is_empty());
    let cause = report.outcome.cause().unwrap_or_default();
    assert!(cause.contains("status 3") && cause.contains("fatal: the model refused"), "{cause}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_hangs_is_stopped_at_the_limit_with_its_whole_group() {
    // A shell, not Python: the limit must not depend on how long an interpreter takes to start
    // on a busy machine. It ignores SIGTERM and leaves a child of its own: the limit must end
    // both, and it writes both pids down at once.
    let folder = tempfile::tempdir().expect("a temporary folder");
    let pids_file = folder.path().join("pids");
    let line =
        format!("trap '' TERM; sleep 300 & echo \"$$ $!\" > '{}'; while :; do sleep 1; done", pids_file.display());
    let budget = Budget { max_turns: 20, max_tokens: 1_000_000 };
    let driver = ExternalDriver::new(ExternalAgent { command: AgentCommand::Shell(line), budget, prices: None })
        .with_time_limit(Duration::from_secs(3))
        .with_grace(Duration::from_millis(300));
    let started = Instant::now();
    let (report, gateway) = run(&driver).await;
    assert_eq!(report.outcome, SessionOutcome::BudgetExhausted(Exhausted::Time { seconds: 3 }));
    assert!(started.elapsed() < Duration::from_secs(13), "{:?}", started.elapsed());
    let cause = report.outcome.cause().unwrap_or_default();
    assert!(cause.contains("time limit of 3 s"), "{cause}");
    assert!(gateway.calls.is_empty(), "{:?}", gateway.calls);
    let written = std::fs::read_to_string(&pids_file).expect("the program wrote its pids before the limit");
    let pids: Vec<u64> = written.split_whitespace().filter_map(|pid| pid.parse().ok()).collect();
    assert_eq!(pids.len(), 2, "{written}");
    for pid in pids {
        assert!(gone_within(pid, Duration::from_secs(10)), "process {pid} of the program's group is left");
    }
}

/// The pids a `note` call reported, and the endpoint.
fn noted(gateway: &FakeGateway) -> (Vec<u64>, String) {
    let [(name, input)] = gateway.calls.as_slice() else { panic!("{:?}", gateway.calls) };
    assert_eq!(name, "note");
    let pids: Vec<u64> = input["pids"].as_array().into_iter().flatten().filter_map(Value::as_u64).collect();
    assert_eq!(pids.len(), 2, "{input}");
    (pids, input["url"].as_str().unwrap_or_default().to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_dropped_midway_takes_the_program_group_and_the_port_with_it() {
    let Some(python) = python() else { return };
    let driver = driver(python, "hang", 20);
    let (noted_tx, noted_rx) = tokio::sync::oneshot::channel();
    let mut gateway = FakeGateway { noted: Some(noted_tx), ..FakeGateway::default() };
    let masker = masker();
    {
        // As a run does when it is interrupted: the session's future is dropped.
        let session = driver.run(&mut gateway, &masker, SYSTEM, TASK);
        tokio::select! {
            report = session => panic!("the program hangs, yet the session ended: {report:?}"),
            _ = noted_rx => {}
        }
    }
    let (pids, url) = noted(&gateway);
    for pid in pids {
        assert!(gone_within(pid, Duration::from_secs(10)), "process {pid} of the program's group is left");
    }
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(&address).await.is_ok() {
        assert!(Instant::now() < deadline, "{address} still accepts connections");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_makes_too_many_calls_exhausts_the_budget() {
    let Some(python) = python() else { return };
    let (report, gateway) = run(&driver(python, "loop", 3)).await;
    assert_eq!(report.outcome, SessionOutcome::BudgetExhausted(Exhausted::Turns { max: 3 }));
    assert_eq!(gateway.calls.len(), 3, "no call past the budget reaches the gateway");
    assert_eq!(report.turns, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_cannot_start_gave_up_with_the_reason() {
    let command = AgentCommand::Argv(vec!["/nonexistent/agent-cli".into()]);
    let budget = Budget { max_turns: 3, max_tokens: 1_000_000 };
    let driver = ExternalDriver::new(ExternalAgent { command, budget, prices: None });
    let (report, gateway) = run(&driver).await;
    let SessionOutcome::GaveUp { last_words } = &report.outcome else { panic!("{:?}", report.outcome) };
    assert!(last_words.contains("`/nonexistent/agent-cli` could not start"), "{last_words}");
    assert!(gateway.calls.is_empty());
    assert_eq!(driver.describe(), "external agent `/nonexistent/agent-cli`");
}
