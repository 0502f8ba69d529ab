//! `saffron run` records what has no recording: the real binary, real Chromium, the demo app,
//! and a scripted agent on the fake Anthropic and OpenAI servers that reads the snapshots the
//! gateway sends to find its refs. Then the same run replays at zero provider requests.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use saffron_agent::testing::{FakeServer, Reply, Wire};
use saffron_agent::{Request, testing};
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::json;
use support::agent::{
    Plans, Seen, check, check_on, click, done, fill, goto, new_order_form, on, op, reply, sign_in, step, tool_results,
    wait,
};
use support::copy_dir;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The example project's features without any recording, the demo password in its `.env`.
fn project(name: &str, password: &str) -> PathBuf {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = std::env::temp_dir().join(format!("saffron-record-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    copy_dir(&repository.join("features"), &root.join("features"));
    std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect("write .env");
    root
}

fn configure_agent(root: &Path, provider: &str, server: &FakeServer, extra: &str) {
    let toml = format!(
        "[agent]\nprovider = \"{provider}\"\nmodel = \"fake-model\"\nbase_url = \"{}\"\napi_key_env = \"\"\n{extra}",
        server.base_url()
    );
    std::fs::write(root.join("saffron.toml"), toml).expect("write saffron.toml");
}

fn saffron_run(root: &Path, base_url: &str, targets: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", base_url])
        .args(targets)
        .current_dir(root)
        .env_remove("DEMO_PASSWORD")
        .output()
        .expect("saffron runs")
}

/// `FILE:LINE` of the scenario named `name` in the project's `file`.
fn scenario_at(root: &Path, file: &str, name: &str) -> String {
    line_of(root, file, &format!(": {name}"))
}

/// `FILE:LINE` of the first line of `file` that holds `text` (an Examples row selects its row).
fn line_of(root: &Path, file: &str, text: &str) -> String {
    let source = std::fs::read_to_string(root.join(file)).expect("feature");
    let line = source.lines().position(|line| line.contains(text)).expect("line");
    format!("{file}:{}", line + 1)
}

fn every_file(root: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            every_file(&path, files);
        } else {
            files.push(path);
        }
    }
}

fn plans() -> Plans {
    let then = |mut ops: Vec<support::agent::Op>, more: Vec<support::agent::Op>| {
        ops.extend(more);
        ops
    };
    let mut plans = Plans::new();
    plans.insert(
        "Sign in with the demo account".into(),
        then(sign_in(), vec![step(4), check(json!({ "check": "noConsoleErrors" })), done()]),
    );
    plans.insert(
        "Search orders by customer".into(),
        then(
            sign_in(),
            vec![
                step(4),
                fill("searchbox \"Search orders\"", "Ada Lovelace"),
                click("button \"Search\""),
                wait("^/api/orders\\?q=", "GET", "200"),
                step(5),
                check_on("status", json!({ "check": "text", "text": "2 orders" })),
                step(6),
                check(json!({ "check": "count", "role": "cell", "name": "Ada Lovelace", "count": 2 })),
                done(),
            ],
        ),
    );
    plans.insert(
        "Open an invoice in a new tab".into(),
        then(
            sign_in(),
            vec![
                step(4),
                click("link \"Open invoice of #1001\""),
                op("browser_switch_tab", json!({ "url_pattern": "/invoices/1001$" })),
                step(5),
                check(json!({ "check": "url", "pattern": "/invoices/1001$" })),
                check_on("h1", json!({ "check": "visible" })),
                done(),
            ],
        ),
    );
    let form = |more: Vec<support::agent::Op>| then(then(sign_in(), new_order_form()), more);
    plans.insert(
        "An order needs a customer".into(),
        form(vec![
            step(7),
            click("button \"Save order\""),
            step(8),
            check_on("alert", json!({ "check": "text", "text": "Customer is required" })),
            done(),
        ]),
    );
    plans.insert(
        "Gift wrap can be chosen and removed".into(),
        form(vec![
            step(7),
            on("browser_check", "checkbox \"Gift wrap\"", json!({})),
            step(8),
            check_on("checkbox \"Gift wrap\"", json!({ "check": "state", "state": "checked" })),
            step(9),
            on("browser_uncheck", "checkbox \"Gift wrap\"", json!({})),
            step(10),
            check_on("checkbox \"Gift wrap\"", json!({ "check": "state", "state": "unchecked" })),
            done(),
        ]),
    );
    plans.insert(
        "Create an order for <customer>".into(),
        form(vec![
            step(7),
            fill("textbox \"Customer\"", "<table:Customer>"),
            fill("spinbutton \"Quantity\"", "<table:Quantity>"),
            on("browser_select", "combobox \"Product\"", json!({ "option": "<table:Product>" })),
            step(8),
            click("button \"Save order\""),
            wait("^/api/orders$", "POST", "201"),
            step(9),
            check_on("Order saved", json!({ "check": "text", "text": "Order saved" })),
            step(10),
            check_on("Total: €13.50", json!({ "check": "text", "text": "Total: <total>" })),
            step(11),
            check(json!({ "check": "response", "pattern": "^/api/orders$", "method": "POST", "status": "201" })),
            step(12),
            goto("/orders"),
            // The shop keeps every order the recording, its proof and the replays create, so the
            // customer's name is in several rows: the count of orders is what stays checkable.
            check_on("status [ref=", json!({ "check": "text", "pattern": "^\\d+ orders$" })),
            done(),
        ]),
    );
    plans
}

async fn scripted(wire: Wire, seen: Seen) -> FakeServer {
    let plans = plans();
    FakeServer::start(wire, move |request: &Request| {
        seen.push(request);
        reply(&plans, request)
    })
    .await
    .expect("fake server")
}

/// What went wrong in the agent's conversations, for a failing assertion's message.
fn errors_told(seen: &Seen) -> String {
    let mut errors: Vec<String> = Vec::new();
    for request in seen.all() {
        for (content, is_error) in tool_results(&request) {
            if is_error && !errors.contains(&content) {
                errors.push(content);
            }
        }
    }
    if std::env::var_os("SAFFRON_TEST_DUMP").is_some()
        && let Some(last) =
            seen.all().iter().rev().find(|request| tool_results(request).iter().any(|(_, error)| *error)).cloned()
    {
        for (content, _) in tool_results(&last) {
            errors.push(format!("RESULT: {content}"));
        }
    }
    errors.join("\n---\n")
}

#[test]
fn six_example_scenarios_are_recorded_on_both_wires_saved_and_then_replayed_with_zero_requests() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project("six", &password);
    let (seen_anthropic, seen_openai) = (Seen::default(), Seen::default());
    let anthropic = runtime.block_on(scripted(Wire::Anthropic, seen_anthropic.clone()));
    let openai = runtime.block_on(scripted(Wire::OpenAi, seen_openai.clone()));

    // The Anthropic wire: a plain scenario, a search with a count, a new tab.
    let first = vec![
        scenario_at(&root, "features/sign_in.feature", "Sign in with the demo account"),
        scenario_at(&root, "features/orders.saffron", "Search orders by customer"),
        scenario_at(&root, "features/orders.saffron", "Open an invoice in a new tab"),
    ];
    configure_agent(&root, "anthropic", &anthropic, "");
    let output = saffron_run(&root, &demo.url(), &first);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}\nerrors told to the agent:\n{}", errors_told(&seen_anthropic));
    assert!(all.contains("3 scenario(s): 3 green"), "{all}");

    // The OpenAI wire: an Outline with a table step (two rows, one recording), a field error, a
    // checkbox.
    let second = vec![
        line_of(&root, "features/new_order.saffron", "| Margaret Hamilton"),
        line_of(&root, "features/new_order.saffron", "| Katherine Johnson"),
        scenario_at(&root, "features/new_order.saffron", "An order needs a customer"),
        scenario_at(&root, "features/new_order.saffron", "Gift wrap can be chosen and removed"),
    ];
    configure_agent(&root, "openai", &openai, "");
    let output = saffron_run(&root, &demo.url(), &second);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}\nerrors told to the agent:\n{}", errors_told(&seen_openai));
    assert!(all.contains("4 scenario(s): 4 green"), "{all}");

    // Saved, with tokens where the values were.
    let cache = root.join(".saffron/cache");
    let outline = std::fs::read_to_string(cache.join("new-order/create-an-order-for-customer.json")).expect("saved");
    assert!(outline.contains("<table:Customer>") && outline.contains("Total: <total>"), "{outline}");
    let sign_in = std::fs::read_to_string(cache.join("sign-in/sign-in-with-the-demo-account.json")).expect("saved");
    assert!(sign_in.contains("{env:DEMO_PASSWORD}") && sign_in.contains("expectNoConsoleErrors"), "{sign_in}");
    let invoice = std::fs::read_to_string(cache.join("orders/open-an-invoice-in-a-new-tab.json")).expect("saved");
    assert!(invoice.contains("\"switchTab\""), "{invoice}");
    let anthropic_requests = anthropic.requests().len();
    let openai_requests = openai.requests().len();
    assert!(anthropic_requests > 0 && openai_requests > 0);

    // Everything again: replayed green, not one request to either provider.
    let every: Vec<String> = first.iter().chain(&second).cloned().collect();
    let output = saffron_run(&root, &demo.url(), &every);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("7 scenario(s): 7 green"), "{all}");
    assert_eq!(anthropic.requests().len(), anthropic_requests, "a replay asked the Anthropic server");
    assert_eq!(openai.requests().len(), openai_requests, "a replay asked the OpenAI server");

    // The secret reached no request body and no file Saffron wrote.
    for captured in anthropic.requests().iter().chain(&openai.requests()) {
        assert!(!captured.body.contains(&password), "a request held the password");
    }
    let mut files = Vec::new();
    every_file(&root.join(".saffron"), &mut files);
    assert!(!files.is_empty());
    for file in files {
        let bytes = std::fs::read(&file).expect("read");
        assert!(!String::from_utf8_lossy(&bytes).contains(&password), "{} holds the password", file.display());
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
    let _ = testing::sequence(Vec::<Reply>::new());
}
