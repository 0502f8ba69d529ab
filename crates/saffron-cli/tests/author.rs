//! `saffron author` end to end: the real binary against the fake vendor servers, whose scripts
//! answer from what the request holds (the vocabulary, the repair message), on both wires.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use saffron_agent::testing::{FakeServer, Reply, Wire};
use saffron_agent::{Request, Role};
use serde_json::Value;

const WIRES: [(Wire, &str); 2] = [(Wire::Anthropic, "anthropic"), (Wire::OpenAi, "openai")];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

fn project(name: &str, server: &FakeServer, provider: &str) -> PathBuf {
    let root = support::example_project(&format!("author-{name}-{provider}"));
    let toml = format!(
        "[agent]\nprovider = \"{provider}\"\nmodel = \"fake-model\"\nbase_url = \"{}\"\napi_key_env = \"\"\n\
         price_input_per_mtok = 3.0\nprice_output_per_mtok = 15.0\n",
        server.base_url()
    );
    std::fs::write(root.join("saffron.toml"), toml).expect("write saffron.toml");
    root
}

fn author(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron"))
        .arg("author")
        .args(args)
        .current_dir(root)
        .output()
        .expect("saffron runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The task the model was given: the vocabulary and the prose.
fn task_of(request: &Request) -> String {
    request.messages.first().map(|message| message.text()).unwrap_or_default()
}

fn fenced(feature: &str) -> Reply {
    Reply::text(&format!("Here is the feature:\n\n```gherkin\n{feature}```\n"))
}

/// Refuses a request whose vocabulary lacks `step`: the draft below is only realistic for a
/// model that was shown the project's steps.
fn requires(request: &Request, step: &str) -> Option<Reply> {
    (!task_of(request).contains(step)).then(|| Reply::Error {
        status: 400,
        message: format!("the fake model was not shown the step `{step}`"),
        retry_after: None,
    })
}

/// A fake model that answers with `feature` once it has been shown the step `step`.
fn drafting(runtime: &tokio::runtime::Runtime, wire: Wire, step: &'static str, feature: &'static str) -> FakeServer {
    runtime
        .block_on(FakeServer::start(wire, move |request: &Request| {
            requires(request, step).unwrap_or_else(|| fenced(feature))
        }))
        .expect("server")
}

/// Paraphrases of steps the project writes, as a model writes them when it does not copy the
/// vocabulary exactly: another ending, an article, punctuation.
const PARAPHRASED: &str = "Feature: Live total\n  Checking the total while the order is written.\n\n  \
                           Scenario: The total follows the product\n    \
                           Given I am on the sign in page\n    \
                           When I signed in with the demo account\n    \
                           Then I see orders page\n    \
                           Given I am on the orders page\n    \
                           When I open a new order form\n    \
                           And I set the quantity to 2 and choose \"Mugs\"\n    \
                           Then the live totals is \"Total: €14.00\"\n";

#[test]
fn paraphrases_are_rewritten_to_the_project_wording_and_shown_free() {
    for (wire, provider) in WIRES {
        let runtime = runtime();
        let server = drafting(&runtime, wire, "I sign in with the demo account", PARAPHRASED);
        let root = project("paraphrase", &server, provider);
        let output = author(&root, &["the live total follows the product", "--out", "features/total.saffron"]);
        let all = text(&output);
        assert_eq!(output.status.code(), Some(0), "{provider}: {all}");
        let written = std::fs::read_to_string(root.join("features/total.saffron")).expect("the draft is written");
        for project_wording in [
            "Given I am on the sign-in page",
            "When I sign in with the demo account",
            "Then I see the orders page",
            "When I open the new order form",
            "Then the live total is \"Total: €14.00\"",
        ] {
            assert!(written.contains(project_wording), "{provider}: `{project_wording}` in\n{written}");
        }
        assert!(!written.contains("I signed in") && !written.contains("live totals"), "{provider}: {written}");
        assert!(
            all.contains("free            When I sign in with the demo account  (rewritten from: I signed in with the demo account)"),
            "{provider}: {all}"
        );
        assert!(
            all.contains("free            Then the live total is \"Total: €14.00\"  (rewritten from:"),
            "{provider}: {all}"
        );
        assert!(
            all.contains("7 distinct step(s): 7 replay for free, 0 divergent, 0 need recording; 5 rewritten"),
            "{provider}: {all}"
        );
        // Usage and cost as the runner prints them.
        assert!(
            all.contains(&format!("agent: {provider} fake-model: 100 tokens in, 20 out, 1 call, ")),
            "{provider}: {all}"
        );
        assert!(all.contains("$0.0006 (configured prices)"), "{provider}: {all}");
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// Paraphrases in other words, as the issue's user wrote them: a synonym for signing in (the
/// project has a StepSet for it) and a total that "shows" what the project says it "is".
const SYNONYMS: &str = "Feature: Live total\n  Checking the total while the order is written.\n\n  \
                        Scenario: The total follows the quantity\n    \
                        Given I log in as the demo user\n    \
                        StepSet a new order form\n    \
                        When I set the quantity to 2 and choose \"Mugs\"\n    \
                        Then the total shows €14.00\n";

#[test]
fn synonym_paraphrases_become_the_project_wording_and_replay_for_free() {
    for (wire, provider) in WIRES {
        let runtime = runtime();
        let server = drafting(&runtime, wire, "signed in as the demo user", SYNONYMS);
        let root = project("synonyms", &server, provider);
        // A file the draft replaces (`--force`) holds the model's wording already: its steps are
        // not the project's wording, and do not keep the paraphrases from being matched.
        std::fs::write(root.join("features/total.saffron"), SYNONYMS).expect("write the file to replace");
        let output = author(
            &root,
            &["sign in and watch the total follow the quantity", "--out", "features/total.saffron", "--force"],
        );
        let all = text(&output);
        assert_eq!(output.status.code(), Some(0), "{provider}: {all}");
        let written = std::fs::read_to_string(root.join("features/total.saffron")).expect("the draft is written");
        assert!(written.contains("    StepSet signed in as the demo user\n"), "{provider}: {written}");
        assert!(written.contains("    Then the live total is \"Total: €14.00\"\n"), "{provider}: {written}");
        assert!(!written.contains("log in") && !written.contains("shows €14.00"), "{provider}: {written}");
        assert!(
            all.contains("free            Given I am on the sign-in page  (StepSet signed in as the demo user)  (rewritten from: I log in as the demo user)"),
            "{provider}: {all}"
        );
        assert!(
            all.contains(
                "free            Then the live total is \"Total: €14.00\"  (rewritten from: the total shows €14.00)"
            ),
            "{provider}: {all}"
        );
        assert!(
            all.contains("8 distinct step(s): 8 replay for free, 0 divergent, 0 need recording; 2 rewritten"),
            "{provider}: {all}"
        );
        // The file runs as the project's steps: `saffron check` finds nothing to say.
        let check =
            Command::new(env!("CARGO_BIN_EXE_saffron")).arg("check").current_dir(&root).output().expect("check runs");
        assert_eq!(check.status.code(), Some(0), "{provider}: {}", text(&check));
        let _ = std::fs::remove_dir_all(&root);
    }
}

const BROKEN: &str = "Feature: Orders\n  Scenario: Search\n    When I search orders for \"Ada Lovelace\"\n  \
                      this line is not Gherkin\n";

#[test]
fn broken_gherkin_gets_one_repair_round_then_fails_cleanly() {
    for (wire, provider) in WIRES {
        let runtime = runtime();
        let repairs: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen = Arc::clone(&repairs);
        let server = runtime
            .block_on(FakeServer::start(wire, move |request: &Request| {
                if request.messages.len() > 1 {
                    let last = request.messages.last().filter(|message| message.role == Role::User);
                    seen.lock().expect("lock").push(last.map(|message| message.text()).unwrap_or_default());
                }
                fenced(BROKEN)
            }))
            .expect("server");
        let root = project("broken", &server, provider);
        let output = author(&root, &["search orders", "--out", "features/search.saffron"]);
        let all = text(&output);
        assert_eq!(output.status.code(), Some(1), "{provider}: {all}");
        assert_eq!(server.requests().len(), 2, "{provider}: one call and exactly one repair round");
        let repairs = repairs.lock().expect("lock").clone();
        assert_eq!(repairs.len(), 1, "{provider}: {repairs:?}");
        assert!(repairs[0].contains("does not parse"), "{provider}: {}", repairs[0]);
        assert!(repairs[0].contains("4:3: expected:"), "{provider}: the parser's message, at its line: {}", repairs[0]);
        assert!(all.contains("does not parse after one repair round"), "{provider}: {all}");
        assert!(all.contains("4:3: expected:"), "{provider}: {all}");
        assert!(all.contains("agent: ") && all.contains("2 calls"), "{provider}: {all}");
        assert!(!root.join("features/search.saffron").exists(), "{provider}: nothing is written");
        let _ = std::fs::remove_dir_all(&root);
    }
}

#[test]
fn the_request_holds_the_relevant_recorded_steps_and_no_secret_values() {
    const PASSWORD: &str = "Zq9-demo-password-value";
    const KEY: &str = "sk-fake-key-value-Zq9";
    for (wire, provider) in WIRES {
        let runtime = runtime();
        let server = runtime
            .block_on(FakeServer::start(wire, |_: &Request| {
                fenced("Feature: Invoices\n  Scenario: Open\n    When I open the invoice of \"#1001\"\n")
            }))
            .expect("server");
        let root = project("secrets", &server, provider);
        let toml = std::fs::read_to_string(root.join("saffron.toml")).expect("toml");
        std::fs::write(root.join("saffron.toml"), toml.replace("api_key_env = \"\"", "api_key_env = \"FAKE_API_KEY\""))
            .expect("toml");
        std::fs::write(root.join(".env"), format!("DEMO_PASSWORD={PASSWORD}\nFAKE_API_KEY={KEY}\n")).expect(".env");
        // A step written with the secret's token: the vocabulary holds the token, never the value.
        std::fs::write(
            root.join("features/invoice_login.feature"),
            "Feature: Invoice sign-in\n  Scenario: Invoice as admin\n    \
             When I sign in to the invoice page with the password \"{env:DEMO_PASSWORD}\"\n",
        )
        .expect("feature");
        // Someone pastes the password into the prose.
        let prose = format!("open an invoice after signing in with {PASSWORD}");
        let output = author(&root, &[&prose, "--stdout", "--vocabulary-tokens", "120"]);
        assert_eq!(output.status.code(), Some(0), "{provider}: {}", text(&output));
        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        let body = &requests[0].body;
        assert!(body.contains("I open the invoice of \\\"#1001\\\""), "{provider}: the relevant recorded step: {body}");
        assert!(body.contains("I see the invoice \\\"Invoice #1001\\\""), "{provider}: {body}");
        assert!(!body.contains("gift wrap"), "{provider}: an irrelevant step is left out within the budget: {body}");
        assert!(body.contains("{env:DEMO_PASSWORD}"), "{provider}: the token is kept: {body}");
        for secret in [PASSWORD, KEY, "Zq9"] {
            assert!(!body.contains(secret), "{provider}: `{secret}` reached the request: {body}");
        }
        assert!(!text(&output).contains(PASSWORD), "{provider}: nor the output");
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// A realistic answer for "search orders and open an invoice": the model follows the
/// vocabulary mostly, words two steps its own way, and adds one check the project lacks.
const SEARCH_AND_INVOICE: &str = "Feature: Search orders and open an invoice\n  \
    Support staff find a customer's orders and open the invoice of one.\n\n  \
    Background:\n    StepSet signed in as the demo user\n\n  \
    Scenario: Find a customer's orders and open an invoice\n    \
    When I search the orders for \"Ada Lovelace\"\n    \
    Then the orders table shows 2 orders\n    \
    And every order in the table is for \"Ada Lovelace\"\n    \
    When I open the invoice of \"#1001\"\n    \
    Then I see an invoice \"Invoice #1001\"\n    \
    And the invoice shows the customer \"Ada Lovelace\"\n";

#[test]
fn search_orders_and_open_an_invoice_is_mostly_free() {
    for (wire, provider) in WIRES {
        let runtime = runtime();
        let server = runtime
            .block_on(FakeServer::start(wire, |request: &Request| {
                requires(request, "I open the invoice of \"#1001\"")
                    .or_else(|| requires(request, "StepSet signed in as the demo user"))
                    .unwrap_or_else(|| fenced(SEARCH_AND_INVOICE))
            }))
            .expect("server");
        let root = project("invoice", &server, provider);
        let output = author(&root, &["search orders and open an invoice", "--format", "json"]);
        assert_eq!(output.status.code(), Some(0), "{provider}: {}", text(&output));
        let report: Value = serde_json::from_slice(&output.stdout).expect("json");
        let totals = &report["draft"]["totals"];
        let (free, distinct) = (totals["free"].as_u64().expect("free"), totals["distinctSteps"].as_u64().expect("n"));
        assert!(free * 10 >= distinct * 8, "{provider}: {free} of {distinct} free: {report:#}");
        assert_eq!(report["written"], "features/search-orders-and-open-an-invoice.saffron");
        assert!(root.join("features/search-orders-and-open-an-invoice.saffron").is_file());
        assert_eq!(report["usage"]["calls"], 1);
        let _ = std::fs::remove_dir_all(&root);
    }
}

#[test]
fn an_existing_file_is_kept_without_force_and_stdout_prints_instead() {
    let runtime = runtime();
    let server = runtime
        .block_on(FakeServer::start(Wire::Anthropic, |_: &Request| {
            fenced("Feature: Orders\n  Scenario: Export\n    When I export the orders\n")
        }))
        .expect("server");
    let root = project("force", &server, "anthropic");
    let path = root.join("features/orders.saffron");
    let before = std::fs::read_to_string(&path).expect("orders");
    let refused = author(&root, &["export the orders", "--out", "features/orders.saffron"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("already exists: it is not overwritten"), "{}", text(&refused));
    assert_eq!(server.requests().len(), 0, "no token is spent on a draft that cannot be saved");
    assert_eq!(std::fs::read_to_string(&path).expect("orders"), before);

    let printed = author(&root, &["export the orders", "--out", "features/orders.saffron", "--stdout"]);
    assert_eq!(printed.status.code(), Some(0), "{}", text(&printed));
    assert!(String::from_utf8_lossy(&printed.stdout).starts_with("Feature: Orders\n"), "{}", text(&printed));
    assert_eq!(std::fs::read_to_string(&path).expect("orders"), before);

    let forced = author(&root, &["export the orders", "--out", "features/orders.saffron", "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced));
    assert!(std::fs::read_to_string(&path).expect("orders").starts_with("Feature: Orders\n  Scenario: Export"));
    let leftovers: Vec<_> = std::fs::read_dir(root.join("features"))
        .expect("dir")
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file is left: {leftovers:?}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn record_runs_the_new_file() {
    let runtime = runtime();
    let server = runtime
        .block_on(FakeServer::start(Wire::OpenAi, |_: &Request| {
            fenced("Feature: Orders\n  Scenario: Export\n    When I export the orders\n")
        }))
        .expect("server");
    let root = project("record", &server, "openai");
    // No base URL anywhere: the run that follows says so, which shows it ran on the new file.
    let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["author", "export the orders", "--out", "features/export.saffron", "--record"])
        .current_dir(&root)
        .env_remove("SAFFRON_BASE_URL")
        .output()
        .expect("saffron runs");
    let all = text(&output);
    assert!(root.join("features/export.saffron").is_file(), "{all}");
    assert!(all.contains("wrote features/export.saffron"), "{all}");
    assert!(all.contains("no base URL"), "the run started: {all}");
    assert_eq!(output.status.code(), Some(2), "the run's exit code: {all}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn an_external_agent_program_cannot_author() {
    let root = support::example_project("author-external");
    std::fs::write(root.join("saffron.toml"), "[agent]\ncommand = \"my-agent --flag\"\n").expect("toml");
    let output = author(&root, &["export the orders", "--stdout"]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(all.contains("external agent program, which cannot draft a feature"), "{all}");
    assert!(all.contains("hint: set `provider` and `model` in [agent]"), "{all}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_editor_drafts_scenarios_from_prose_selected_in_the_description() {
    let runtime = runtime();
    let server = runtime
        .block_on(FakeServer::start(Wire::OpenAi, |request: &Request| {
            requires(request, "Search orders and open an invoice.")
                .or_else(|| requires(request, "I open the invoice of \"#1001\""))
                .unwrap_or_else(|| fenced(SEARCH_AND_INVOICE))
        }))
        .expect("server");
    let root = project("lsp", &server, "openai");
    let feature = "Feature: Invoices\n  Search orders and open an invoice.\n";
    std::fs::write(root.join("features/invoices.saffron"), feature).expect("feature");
    let mut client = support::start_saffron_lsp(&root);
    let mut capabilities = support::LspClient::vscode_capabilities();
    capabilities["window"] = serde_json::json!({ "showMessage": {} });
    client.initialize_with(capabilities);
    let uri = client.open("features/invoices.saffron");
    let actions_on = |client: &mut support::LspClient, start: (u32, u32), end: (u32, u32)| {
        client.call(
            "textDocument/codeAction",
            serde_json::json!({
                "textDocument": { "uri": uri },
                "range": { "start": { "line": start.0, "character": start.1 }, "end": { "line": end.0, "character": end.1 } },
                "context": { "diagnostics": [] },
            }),
        )
    };
    let on_header = actions_on(&mut client, (0, 0), (0, 8));
    assert!(
        !on_header.as_array().into_iter().flatten().any(|a| a["command"]["command"] == "saffron.authorSelection"),
        "the header is not prose: {on_header}"
    );
    let actions = actions_on(&mut client, (1, 0), (2, 0));
    let action = actions
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["command"]["command"] == "saffron.authorSelection")
        .unwrap_or_else(|| panic!("an author action on the description: {actions}"))
        .clone();
    assert_eq!(action["kind"], "refactor.rewrite");
    assert_eq!(
        action["command"]["arguments"],
        serde_json::json!(["features/invoices.saffron", "Search orders and open an invoice."])
    );

    let started = client.request(
        "workspace/executeCommand",
        serde_json::json!({ "command": "saffron.authorSelection", "arguments": action["command"]["arguments"] }),
    );
    assert_eq!(started["result"], Value::Null, "answered at once: {started}");
    let edit = client.wait_for(|m| m["method"] == "workspace/applyEdit");
    let changes = &edit["params"]["edit"]["changes"][&uri];
    assert_eq!(changes[0]["range"]["start"], serde_json::json!({ "line": 2, "character": 0 }), "{edit}");
    let inserted = changes[0]["new_text"].as_str().or(changes[0]["newText"].as_str()).expect("text");
    assert!(inserted.starts_with("\n  Background:\n    StepSet signed in as the demo user\n"), "{inserted}");
    assert!(inserted.contains("When I search orders for \"Ada Lovelace\""), "rewritten: {inserted}");
    assert!(inserted.contains("Then I see the invoice \"Invoice #1001\""), "rewritten: {inserted}");
    let told = client.wait_for(|m| {
        m["method"] == "window/showMessage"
            && m["params"]["message"].as_str().is_some_and(|t| t.starts_with("saffron author:"))
    });
    let message = told["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("8 of 9 distinct steps replay for free, 1 need recording"), "{message}");
    assert!(message.contains("openai fake-model: 100 tokens in, 20 out, 1 call"), "{message}");
    assert_eq!(std::fs::read_to_string(root.join("features/invoices.saffron")).expect("file"), feature, "not saved");
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

/// What a model that follows the prompt drafts for prose about the API: an `@api` feature that
/// reuses the steps the vocabulary marks API.
const API_DRAFT: &str = "@api\nFeature: Orders through the API\n  Ordering tea without the browser.\n\n  \
                         Scenario: Two teas for Lin cost 900 cents\n    \
                         Given the API client has signed in as the demo user\n    \
                         When the API client orders 2 \"Tea\" for \"Lin\"\n    \
                         Then the API answers that the order was made for 900 cents\n";

/// Prose about the API gets an `@api` draft: the prompt says when to tag one, marks the steps
/// recorded as requests, and names the project's services; the steps it reuses replay free.
#[test]
fn prose_about_the_api_is_drafted_as_an_api_feature_from_the_api_steps() {
    let runtime = runtime();
    let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let kept = Arc::clone(&seen);
    let server = runtime
        .block_on(FakeServer::start(Wire::Anthropic, move |request: &Request| {
            kept.lock().expect("requests").push(request.clone());
            requires(request, "[1×, API] the API client orders 2 \"Tea\" for \"Lin\"")
                .unwrap_or_else(|| fenced(API_DRAFT))
        }))
        .expect("server");
    let root = project("api", &server, "anthropic");
    let config = std::fs::read_to_string(root.join("saffron.toml")).expect("config");
    std::fs::write(
        root.join("saffron.toml"),
        format!("{config}[api.services.billing]\nbase_url = \"http://127.0.0.1:9\"\n"),
    )
    .expect("config");
    let output =
        author(&root, &["order two teas for Lin through the API and check the total it answers", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let request = seen.lock().expect("requests")[0].clone();
    assert!(request.system.contains("tagged @api"), "{}", request.system);
    let task = task_of(&request);
    assert!(task.contains("API services an @api feature's requests go to: app, billing"), "{task}");
    // A page step is not marked API.
    assert!(!task.contains("API] I sign in with the demo account"), "{task}");
    let report: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["draft"]["totals"]["free"], 3, "{report:#}");
    let written = std::fs::read_to_string(root.join(report["written"].as_str().expect("written"))).expect("draft");
    assert!(written.starts_with("@api\n"), "{written}");
    let _ = std::fs::remove_dir_all(&root);
}
