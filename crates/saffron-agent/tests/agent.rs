//! The providers against fake vendor servers on loopback, driven by the agent loop through an
//! in-memory gateway: scripted multi-turn conversations that react to tool results, HTTP
//! faults, malformed tool calls, budgets, secrets, usage and cost. No network, no key.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use saffron_agent::testing::{Captured, FakeServer, Reply, Wire, sequence};
use saffron_agent::{
    AnthropicProvider, BoxFuture, Budget, Cost, CostSource, Exhausted, HttpSettings, OpenAiProvider, Prices, Provider,
    ProviderError, Request, RetryPolicy, Session, SessionOutcome, Sleeper, ToolGateway, ToolOutput, ToolSpec,
};
use saffron_recording::{Masker, Secret};
use serde_json::{Value, json};

const PASSWORD: &str = "hunter2-correct-horse";
const KEY: &str = "test-key-0000";

/// A sign-in page behind Saffron-like tools. It substitutes `{env:PASSWORD}` on the way in and,
/// unlike the real gateway, does NOT mask on the way out: its snapshot shows the typed
/// password, so only the session's masker keeps it from the model.
struct SignInPage {
    email: String,
    password: String,
    signed_in: bool,
    done: bool,
    calls: Vec<(String, Value)>,
}

impl SignInPage {
    fn new() -> SignInPage {
        SignInPage { email: String::new(), password: String::new(), signed_in: false, done: false, calls: Vec::new() }
    }

    fn snapshot(&self) -> String {
        let heading = if self.signed_in { "Welcome back" } else { "Sign in" };
        format!(
            "heading \"{heading}\"\ntextbox \"Email\" value=\"{}\" [ref=e1]\ntextbox \"Password\" value=\"{}\" [ref=e2]\n\
             button \"Sign in\" [ref=e3]",
            self.email, self.password
        )
    }

    fn run(&mut self, name: &str, input: &Value) -> ToolOutput {
        let reference = input["ref"].as_str();
        match name {
            "snapshot" => ToolOutput::ok(self.snapshot()),
            "fill" => {
                let Some(value) = input["value"].as_str() else {
                    return ToolOutput::error("fill: `value` is required");
                };
                let value = value.replace("{env:PASSWORD}", PASSWORD);
                match reference {
                    Some("e1") => self.email = value,
                    Some("e2") => self.password = value,
                    Some(other) => return ToolOutput::error(format!("no element with ref {other}: take a snapshot")),
                    None => return ToolOutput::error("fill: `ref` is required"),
                }
                ToolOutput::ok("filled")
            }
            "click" => match reference {
                Some("e3") => {
                    self.signed_in = self.password == PASSWORD;
                    ToolOutput::ok(self.snapshot())
                }
                Some(other) => ToolOutput::error(format!("no element with ref {other}: take a snapshot")),
                None => ToolOutput::error("click: `ref` is required"),
            },
            "done" if self.signed_in => {
                self.done = true;
                ToolOutput::ok("recorded")
            }
            "done" => ToolOutput::error("refused: the page does not show that you are signed in"),
            other => ToolOutput::error(format!("unknown tool `{other}`: the tools are snapshot, fill, click, done")),
        }
    }
}

impl ToolGateway for SignInPage {
    fn tools(&self) -> Vec<ToolSpec> {
        let object = |properties: Value| json!({ "type": "object", "properties": properties });
        vec![
            ToolSpec {
                name: "snapshot".into(),
                description: "The page's elements".into(),
                input_schema: object(json!({})),
            },
            ToolSpec {
                name: "fill".into(),
                description: "Type into a field".into(),
                input_schema: object(json!({ "ref": { "type": "string" }, "value": { "type": "string" } })),
            },
            ToolSpec {
                name: "click".into(),
                description: "Click an element".into(),
                input_schema: object(json!({ "ref": { "type": "string" } })),
            },
            ToolSpec {
                name: "done".into(),
                description: "The scenario is done".into(),
                input_schema: object(json!({})),
            },
        ]
    }

    fn call<'a>(&'a mut self, name: &'a str, input: &'a Value) -> BoxFuture<'a, ToolOutput> {
        self.calls.push((name.to_string(), input.clone()));
        let output = self.run(name, input);
        Box::pin(async move { output })
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

/// The ref of the element whose line in a snapshot mentions `label`.
fn ref_of(snapshot: &str, label: &str) -> Option<String> {
    let line = snapshot.lines().find(|line| line.contains(&format!("\"{label}\"")) && line.contains("[ref="))?;
    let start = line.find("[ref=")? + 5;
    Some(line[start..].trim_end_matches(']').to_string())
}

/// A model that signs in, reacting to what the tools answer: it starts with a stale ref, takes
/// a snapshot when told the element does not exist, reads the refs from it, and types the
/// password as a token.
fn signing_in(request: &Request) -> Reply {
    let last = request.last_tool_result();
    let reply = match (request.answers_so_far(), last) {
        (0, _) => Reply::call("c1", "click", json!({ "ref": "e9" })),
        (1, Some(result)) if result.is_error && result.content.contains("no element") => {
            Reply::call("c2", "snapshot", json!({}))
        }
        (2, Some(result)) => match (ref_of(result.content, "Email"), ref_of(result.content, "Password")) {
            (Some(email), Some(password)) => Reply::calls(&[
                ("c3", "fill", json!({ "ref": email, "value": "ada@example.com" })),
                ("c4", "fill", json!({ "ref": password, "value": "{env:PASSWORD}" })),
                ("c5", "snapshot", json!({})),
            ]),
            _ => Reply::text("I cannot find the fields."),
        },
        (3, Some(result)) => match ref_of(result.content, "Sign in") {
            Some(button) => Reply::call("c6", "click", json!({ "ref": button })),
            None => Reply::text("No button."),
        },
        (4, Some(result)) if result.content.contains("Welcome back") => Reply::call("c7", "done", json!({})),
        _ => Reply::text("I am lost."),
    };
    let turn = request.answers_so_far() as u64;
    reply.with_usage(1000 + turn, 50 + turn, 200 * turn, 10).with_cost(0.001)
}

fn masker() -> Masker {
    [Secret { name: "PASSWORD".into(), value: PASSWORD.into() }].iter().collect()
}

/// Retries that never wait: the waits asked for are recorded instead.
fn settings(max_attempts: u32) -> (HttpSettings, Arc<Mutex<Vec<Duration>>>) {
    let waits = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&waits);
    let sleeper = Sleeper::new(move |duration| {
        seen.lock().expect("not poisoned").push(duration);
        Box::pin(async {})
    });
    let retry = RetryPolicy { max_attempts, sleeper, ..RetryPolicy::default() };
    let settings =
        HttpSettings { request_timeout: Duration::from_secs(10), connect_timeout: Duration::from_secs(2), retry };
    (settings, waits)
}

fn provider(wire: Wire, base_url: &str, settings: &HttpSettings) -> Box<dyn Provider> {
    match wire {
        Wire::Anthropic => Box::new(
            AnthropicProvider::new(base_url, "claude-test", Some(KEY), Some("ANTHROPIC_API_KEY"), settings)
                .expect("provider"),
        ),
        Wire::OpenAi => Box::new(
            OpenAiProvider::new(base_url, "gpt-test", Some(KEY), Some("OPENAI_API_KEY"), settings).expect("provider"),
        ),
        Wire::OpenAiResponses => unreachable!("{NOT_BUILT_IN}"),
    }
}

/// The Responses wire is Codex's (crates/saffron-cli/tests/record_clients.rs), not a provider's.
const NOT_BUILT_IN: &str = "no built-in provider speaks the Responses API";

const BUDGET: Budget = Budget { max_turns: 20, max_tokens: 1_000_000 };

async fn run(
    wire: Wire,
    script: impl saffron_agent::testing::Script,
    budget: Budget,
    max_attempts: u32,
) -> (saffron_agent::SessionReport, SignInPage, Vec<Captured>, Vec<Duration>) {
    let server = FakeServer::start(wire, script).await.expect("fake server");
    let (settings, waits) = settings(max_attempts);
    let provider = provider(wire, &server.base_url(), &settings);
    let masker = masker();
    let mut page = SignInPage::new();
    let session = Session::new(provider.as_ref(), &masker, budget);
    let report = session.run(&mut page, "You record browser tests.", "Scenario: sign in as Ada").await;
    let waits = waits.lock().expect("not poisoned").clone();
    (report, page, server.requests(), waits)
}

async fn signs_in_through(wire: Wire) {
    let (report, page, requests, waits) = run(wire, signing_in, BUDGET, 3).await;
    assert_eq!(report.outcome, SessionOutcome::Done, "{:?} after {:?}", report.outcome.cause(), page.calls);
    assert_eq!(report.turns, 5);
    let names: Vec<&str> = page.calls.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["click", "snapshot", "fill", "fill", "snapshot", "click", "done"], "every call, in order");
    assert_eq!(page.password, PASSWORD, "the gateway substituted the token");
    assert!(waits.is_empty());

    assert_eq!(requests.len(), 5);
    for (index, request) in requests.iter().enumerate() {
        assert!(!request.body.contains(PASSWORD), "request {index} holds the secret: {}", request.body);
        assert!(!request.body.contains("correct-horse"), "request {index} holds part of the secret");
        match wire {
            Wire::Anthropic => {
                assert_eq!(request.path, "/v1/messages");
                assert_eq!(request.header("x-api-key"), Some(KEY));
                assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(request.header("authorization"), None);
            }
            Wire::OpenAi => {
                assert_eq!(request.path, "/v1/chat/completions");
                assert_eq!(request.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
                assert_eq!(request.header("x-api-key"), None);
            }
            Wire::OpenAiResponses => unreachable!("{NOT_BUILT_IN}"),
        }
    }
    // The snapshot after filling showed the password; the model got the token instead.
    let fourth = &requests[3].body;
    assert!(fourth.contains(r#"value=\"{env:PASSWORD}\""#), "the masked snapshot: {fourth}");
    // The stale ref's error went back as an error result.
    let second = requests[1].json();
    match wire {
        Wire::Anthropic => {
            let result = &second["messages"][2]["content"][0];
            assert_eq!((result["type"].as_str(), result["is_error"].as_bool()), (Some("tool_result"), Some(true)));
            assert_eq!(second["tools"].as_array().map(Vec::len), Some(4));
        }
        Wire::OpenAi => {
            let result = &second["messages"][3];
            assert_eq!(result["role"], "tool");
            assert!(result["content"].as_str().is_some_and(|text| text.starts_with("Error: no element")), "{result}");
            assert_eq!(second["tools"][0]["type"], "function");
        }
        Wire::OpenAiResponses => unreachable!("{NOT_BUILT_IN}"),
    }

    let usage = &report.usage;
    assert_eq!(usage.calls, 5);
    assert_eq!(usage.input_tokens, 1000 + 1001 + 1002 + 1003 + 1004);
    assert_eq!(usage.output_tokens, 50 + 51 + 52 + 53 + 54);
    assert_eq!(usage.cache_read_tokens, 200 * (1 + 2 + 3 + 4));
    assert_eq!(usage.cache_write_tokens, 50);
    assert!(usage.model_time > Duration::ZERO);
    let prices = Prices { input_per_mtok: 3.0, output_per_mtok: 15.0 };
    let expected = (5010.0 + 2000.0 + 50.0) / 1e6 * 3.0 + 260.0 / 1e6 * 15.0;
    let Cost::Known { usd, source: CostSource::ConfiguredPrices } = Cost::of(usage, Some(prices)) else {
        panic!("priced")
    };
    assert!((usd - expected).abs() < 1e-12, "{usd} != {expected}");
    match wire {
        // The Messages API reports no cost.
        Wire::Anthropic => assert_eq!(Cost::of(usage, None), Cost::NotReported),
        Wire::OpenAi => {
            let Cost::Known { usd, source: CostSource::Reported } = Cost::of(usage, None) else { panic!("reported") };
            assert!((usd - 0.005).abs() < 1e-12, "{usd}");
        }
        Wire::OpenAiResponses => unreachable!("{NOT_BUILT_IN}"),
    }
}

#[tokio::test]
async fn anthropic_signs_in_through_a_scripted_conversation() {
    signs_in_through(Wire::Anthropic).await;
}

#[tokio::test]
async fn openai_signs_in_through_a_scripted_conversation() {
    signs_in_through(Wire::OpenAi).await;
}

fn done_at_once() -> Reply {
    Reply::calls(&[("d1", "click", json!({ "ref": "e3" })), ("d2", "done", json!({}))])
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_as_retry_after_asks() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let mut page = SignInPage::new();
        page.password = PASSWORD.into();
        let server =
            FakeServer::start(wire, sequence(vec![Reply::rate_limited("7"), done_at_once()])).await.expect("server");
        let (settings, waits) = settings(3);
        let provider = provider(wire, &server.base_url(), &settings);
        let masker = masker();
        let report = Session::new(provider.as_ref(), &masker, BUDGET).run(&mut page, "", "sign in").await;
        assert_eq!(report.outcome, SessionOutcome::Done, "{wire:?}: {:?}", report.outcome.cause());
        assert_eq!(*waits.lock().expect("not poisoned"), [Duration::from_secs(7)], "{wire:?}");
        assert_eq!(server.requests().len(), 2, "{wire:?}");
        assert_eq!(server.requests()[0].body, server.requests()[1].body, "the same request again");
        assert_eq!((report.turns, report.usage.calls), (1, 1), "a retry is not a turn");
    }
}

#[tokio::test]
async fn a_provider_that_keeps_failing_is_unavailable_after_the_last_attempt() {
    let (report, page, requests, waits) = run(Wire::Anthropic, |_: &Request| Reply::server_error(), BUDGET, 4).await;
    let SessionOutcome::ProviderFailed(ProviderError::Unavailable { cause, attempts: 4 }) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert!(cause.contains("HTTP 500") && cause.contains("internal error (fake)"), "{cause}");
    assert_eq!(requests.len(), 4);
    assert_eq!(waits.len(), 3, "a backoff between attempts, none after the last");
    assert!(waits.windows(2).all(|pair| pair[1] >= pair[0] / 2), "backoff grows: {waits:?}");
    assert!(page.calls.is_empty());
    assert_eq!(report.usage.calls, 0);
    let cause = report.outcome.cause().unwrap_or_default();
    assert!(cause.contains("unavailable after 4 attempt(s)"), "{cause}");
}

#[tokio::test]
async fn a_429_that_asks_for_too_long_a_wait_and_a_spent_quota_are_not_waited_for() {
    let (report, _, requests, waits) = run(Wire::OpenAi, sequence(vec![Reply::rate_limited("86400")]), BUDGET, 5).await;
    let SessionOutcome::ProviderFailed(ProviderError::Unavailable { cause, attempts: 1 }) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert!(cause.contains("86400 s"), "{cause}");
    assert_eq!((requests.len(), waits.len()), (1, 0));

    let quota = Reply::Raw {
        status: 429,
        content_type: "application/json".into(),
        body: r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#
            .into(),
    };
    let (report, _, requests, _) = run(Wire::OpenAi, sequence(vec![quota]), BUDGET, 5).await;
    let SessionOutcome::ProviderFailed(ProviderError::Unavailable { cause, .. }) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert!(cause.contains("quota"), "{cause}");
    assert_eq!(requests.len(), 1);
}

#[tokio::test]
async fn a_body_in_another_format_is_a_bad_response_and_not_retried() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let (report, _, requests, _) = run(wire, sequence(vec![Reply::garbage()]), BUDGET, 3).await;
        let SessionOutcome::ProviderFailed(ProviderError::BadResponse { detail }) = &report.outcome else {
            panic!("{wire:?}: {:?}", report.outcome)
        };
        assert!(detail.contains("Welcome to nginx"), "{detail}");
        assert_eq!(requests.len(), 1, "{wire:?}");
    }
}

#[tokio::test]
async fn auth_and_request_errors_are_named_and_not_retried() {
    let denied = Reply::Error { status: 401, message: "invalid x-api-key".into(), retry_after: None };
    let (report, _, requests, _) = run(Wire::Anthropic, sequence(vec![denied]), BUDGET, 3).await;
    let SessionOutcome::ProviderFailed(error) = &report.outcome else { panic!("{:?}", report.outcome) };
    assert_eq!(
        error,
        &ProviderError::Auth {
            status: 401,
            message: "invalid x-api-key".into(),
            key_env: Some("ANTHROPIC_API_KEY".into())
        }
    );
    assert!(error.hint().contains("$ANTHROPIC_API_KEY"), "{}", error.hint());
    assert_eq!(requests.len(), 1);

    let refused = Reply::Error { status: 404, message: "model: gpt-test does not exist".into(), retry_after: None };
    let (report, _, requests, _) = run(Wire::OpenAi, sequence(vec![refused]), BUDGET, 3).await;
    assert_eq!(
        report.outcome,
        SessionOutcome::ProviderFailed(ProviderError::Request {
            status: 404,
            message: "model: gpt-test does not exist".into()
        })
    );
    assert_eq!(requests.len(), 1);
}

#[tokio::test]
async fn an_unreachable_or_silent_provider_is_unavailable() {
    let free_port =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|listener| listener.local_addr()).expect("port");
    let (unreachable_settings, waits) = settings(2);
    let unreachable = provider(Wire::Anthropic, &format!("http://{free_port}"), &unreachable_settings);
    let masker = masker();
    let report = Session::new(unreachable.as_ref(), &masker, BUDGET).run(&mut SignInPage::new(), "", "go").await;
    let SessionOutcome::ProviderFailed(ProviderError::Unavailable { cause, attempts: 2 }) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert!(cause.contains("cannot connect"), "{cause}");
    assert_eq!(waits.lock().expect("not poisoned").len(), 1);

    let stalled = Reply::Delayed(Duration::from_secs(30), Box::new(Reply::text("late")));
    let server = FakeServer::start(Wire::OpenAi, sequence(vec![stalled.clone(), stalled])).await.expect("server");
    let (mut impatient, _) = settings(2);
    impatient.request_timeout = Duration::from_millis(300);
    let silent = provider(Wire::OpenAi, &server.base_url(), &impatient);
    let report = Session::new(silent.as_ref(), &masker, BUDGET).run(&mut SignInPage::new(), "", "go").await;
    let SessionOutcome::ProviderFailed(ProviderError::Unavailable { cause, attempts: 2 }) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert!(cause.contains("no answer") && cause.contains("300 ms"), "{cause}");
}

#[tokio::test]
async fn malformed_tool_arguments_are_a_tool_error_and_the_session_goes_on() {
    let mut calls = 0;
    let script = move |request: &Request| {
        calls += 1;
        match calls {
            1 => Reply::malformed_call("m1", "fill", r#"{"ref": "e1", "value": "ada@example.com""#),
            2 => match request.last_tool_result() {
                Some(result) if result.is_error && result.content.contains("not valid JSON") => {
                    Reply::call("m2", "fill", json!({ "ref": "e1", "value": "ada@example.com" }))
                }
                _ => Reply::text("The error was not reported."),
            },
            _ => Reply::call("m3", "fill", json!({ "ref": "e2", "value": "{env:PASSWORD}" })),
        }
    };
    let budget = Budget { max_turns: 3, max_tokens: 1_000_000 };
    let (report, page, requests, _) = run(Wire::OpenAi, script, budget, 1).await;
    assert_eq!(report.outcome, SessionOutcome::BudgetExhausted(Exhausted::Turns { max: 3 }));
    let names: Vec<&str> = page.calls.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["fill", "fill"], "the malformed call never reached the gateway");
    assert_eq!(page.email, "ada@example.com");
    let second = requests[1].json();
    let sent_back = &second["messages"][2]["tool_calls"][0]["function"]["arguments"];
    assert_eq!(
        sent_back, r#"{"ref": "e1", "value": "ada@example.com""#,
        "the arguments go back as the model wrote them"
    );
    let error = second["messages"][3]["content"].as_str().unwrap_or_default();
    assert!(error.starts_with("Error: the arguments of `fill` are not valid JSON"), "{error}");
}

#[tokio::test]
async fn an_unknown_tool_is_the_gateways_tool_error_and_the_session_goes_on() {
    let script = |request: &Request| match request.last_tool_result() {
        None => Reply::call("u1", "run_shell", json!({ "command": "cat /etc/passwd" })),
        Some(result) if result.is_error && result.content.contains("unknown tool `run_shell`") => done_at_once(),
        Some(_) => Reply::text("?"),
    };
    let mut page = SignInPage::new();
    page.password = PASSWORD.into();
    let server = FakeServer::start(Wire::Anthropic, script).await.expect("server");
    let (settings, _) = settings(1);
    let provider = provider(Wire::Anthropic, &server.base_url(), &settings);
    let masker = masker();
    let report = Session::new(provider.as_ref(), &masker, BUDGET).run(&mut page, "", "sign in").await;
    assert_eq!(report.outcome, SessionOutcome::Done, "{:?}", report.outcome.cause());
    assert_eq!(page.calls[0].0, "run_shell");
    assert_eq!(report.turns, 2);
}

#[tokio::test]
async fn the_turn_budget_ends_a_session_that_never_finishes() {
    let looping = |_: &Request| Reply::call(&format!("s{}", fastrand::u32(..)), "snapshot", json!({}));
    let budget = Budget { max_turns: 3, max_tokens: 1_000_000 };
    let (report, page, requests, _) = run(Wire::Anthropic, looping, budget, 1).await;
    assert_eq!(report.outcome, SessionOutcome::BudgetExhausted(Exhausted::Turns { max: 3 }));
    assert_eq!((requests.len(), page.calls.len(), report.turns), (3, 3, 3));
    let cause = report.outcome.cause().unwrap_or_default();
    assert!(cause.contains("all 3 turns") && cause.contains("max_turns"), "{cause}");
}

#[tokio::test]
async fn the_token_budget_caps_the_answer_and_ends_the_session() {
    let looping = |_: &Request| {
        Reply::call(&format!("s{}", fastrand::u32(..)), "snapshot", json!({})).with_usage(1000, 100, 0, 0)
    };
    let budget = Budget { max_turns: 50, max_tokens: 2500 };
    let (report, _, requests, _) = run(Wire::OpenAi, looping, budget, 1).await;
    assert_eq!(report.outcome, SessionOutcome::BudgetExhausted(Exhausted::Tokens { used: 3300, max: 2500 }));
    assert_eq!(requests.len(), 3);
    let caps: Vec<Option<u64>> = requests.iter().map(|request| request.json()["max_tokens"].as_u64()).collect();
    assert_eq!(caps, [Some(2500), Some(1400), Some(300)], "an answer may not outgrow what is left");
    assert_eq!(report.usage.total_tokens(), 3300);
}

#[tokio::test]
async fn a_model_that_stops_acting_is_nudged_once_then_given_up_on() {
    let (report, page, requests, _) =
        run(Wire::Anthropic, sequence(vec![Reply::text("All done!"), Reply::text("Really done.")]), BUDGET, 1).await;
    assert_eq!(report.outcome, SessionOutcome::GaveUp { last_words: "Really done.".into() });
    assert!(page.calls.is_empty());
    let nudge = requests[1].json()["messages"][2]["content"][0]["text"].as_str().unwrap_or_default().to_string();
    assert!(nudge.contains("without calling a tool"), "{nudge}");
    let cause = report.outcome.cause().unwrap_or_default();
    assert!(cause.contains("Really done."), "{cause}");

    let mut page = SignInPage::new();
    page.password = PASSWORD.into();
    let server =
        FakeServer::start(Wire::OpenAi, sequence(vec![Reply::text("Hm."), done_at_once()])).await.expect("server");
    let (settings, _) = settings(1);
    let provider = provider(Wire::OpenAi, &server.base_url(), &settings);
    let masker = masker();
    let report = Session::new(provider.as_ref(), &masker, BUDGET).run(&mut page, "", "sign in").await;
    assert_eq!(report.outcome, SessionOutcome::Done, "a nudged model that acts goes on");
}

#[tokio::test]
async fn calls_after_the_gateway_is_done_are_not_run() {
    let mut page = SignInPage::new();
    page.signed_in = true;
    let last_words = Reply::calls(&[("x1", "done", json!({})), ("x2", "click", json!({ "ref": "e3" }))]);
    let server = FakeServer::start(Wire::Anthropic, sequence(vec![last_words])).await.expect("server");
    let (settings, _) = settings(1);
    let provider = provider(Wire::Anthropic, &server.base_url(), &settings);
    let masker = masker();
    let report = Session::new(provider.as_ref(), &masker, BUDGET).run(&mut page, "", "sign in").await;
    assert_eq!(report.outcome, SessionOutcome::Done);
    let names: Vec<&str> = page.calls.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["done"]);
    let results = report.conversation.last().map(|message| message.tool_results().count());
    assert_eq!(results, Some(1), "the conversation ends with the result of the call that finished it");
}

/// The runner runs sessions on its worker threads: the session's future must be `Send` (this
/// test fails to compile otherwise).
#[test]
fn a_session_can_run_on_a_worker_thread() {
    fn assert_send<F: std::future::Future + Send>(_: &F) {}
    let masker = Masker::new();
    let (settings, _) = settings(1);
    let provider = provider(Wire::Anthropic, "http://127.0.0.1:9", &settings);
    let mut page = SignInPage::new();
    let session = Session::new(provider.as_ref(), &masker, BUDGET);
    let running = session.run(&mut page, "", "");
    assert_send(&running);
}
