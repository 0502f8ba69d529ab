//! `saffron run` records what has no recording: the real binary, real Chromium, the demo app,
//! and a scripted agent on the fake Anthropic and OpenAI servers that reads the snapshots the
//! gateway sends to find its refs. Then the same run replays at zero provider requests.

use crate::support;

use saffron_agent::testing::{FakeServer, Reply, Wire};
use saffron_agent::{Request, testing};
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::json;
use support::agent::{
    Plans, Seen, check, check_on, click, configure_agent, done, errors_told, every_file, fill, goto, line_of,
    new_order_form, on, op, project, reply, runtime, saffron_run, scenario_at, sign_in, step, text, wait,
};

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
                check_on("h1", json!({ "check": "text", "text": "Invoice #1001" })),
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
            // The page shows the row's total as its token: the model never reads the value.
            check_on("Total: <total>", json!({ "check": "text", "text": "Total: <total>" })),
            step(11),
            check(json!({ "check": "response", "pattern": "^/api/orders$", "method": "POST", "status": "201" })),
            step(12),
            goto("/orders"),
            // The shop keeps every order the recording, its proof and the replays create, so the
            // customer's name is in several rows: the table holding it is what stays checkable.
            check_on("table \"Orders\"", json!({ "check": "text", "pattern": "<customer>" })),
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
    // Each recording's proof replay kept its trace, with the agent's conversation in it.
    let latest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(".saffron/reports/latest.json")).expect("latest"))
            .expect("json");
    for scenario in latest["scenarios"].as_array().expect("scenarios") {
        let traces = scenario["traces"].as_array().map(Vec::as_slice).unwrap_or_default();
        let [trace] = traces else { panic!("one trace of the recording's proof: {scenario:#}") };
        let file = root.join(trace.as_str().expect("a path"));
        let bytes = std::fs::read(&file).expect("the trace");
        assert!(!String::from_utf8_lossy(&bytes).contains(&password), "{} holds the password", file.display());
        let trace: serde_json::Value = serde_json::from_slice(&bytes).expect("trace JSON");
        assert_eq!(trace["kind"], "recording", "{}", file.display());
        assert_eq!(trace["outcome"]["verdict"], "green");
        let turns = trace["agent"]["turns"].as_array().expect("the conversation");
        let calls = turns
            .iter()
            .flat_map(|turn| turn["content"].as_array().into_iter().flatten())
            .filter_map(|block| block["toolUse"]["name"].as_str())
            .collect::<Vec<_>>();
        assert!(calls.contains(&"saffron_done"), "the agent's tool calls, in order: {calls:?}");
        assert!(
            trace["agent"]["agent"].as_str().is_some_and(|agent| agent.starts_with("anthropic")),
            "{}",
            trace["agent"]
        );
    }

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

    // The secret reached no request body and no file Saffron wrote; the Outline's values
    // reached the model only as their tokens in the Outline's own conversation, though its
    // pages showed them (another scenario's page that lists the order shows it as data).
    for captured in anthropic.requests().iter().chain(&openai.requests()) {
        assert!(!captured.body.contains(&password), "a request held the password");
        if !captured.body.contains("Create an order for <customer>") {
            continue;
        }
        for value in ["Margaret Hamilton", "€13.50", "Katherine Johnson"] {
            let at = captured.body.find(value);
            let around = at.map(|at| &captured.body[at.saturating_sub(300)..(at + 100).min(captured.body.len())]);
            assert!(at.is_none(), "a request held the Outline value {value}: …{}…", around.unwrap_or_default());
        }
    }
    // The orders list the Outline's last step looks at shows the new order's row with the
    // customer as its token.
    let shown = openai.requests().iter().filter(|captured| captured.body.contains("| <customer> | <total> |")).count();
    assert!(shown > 0, "the model read the customer and the total as their tokens");
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

/// Steps other scenarios' recordings already perform are replayed, not recorded: the agent is
/// asked only about the gap, and a scenario with no gap takes no request at all.
#[test]
fn steps_recorded_elsewhere_are_seeded_and_the_agent_is_asked_only_about_the_gap() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project("seeded", &password);
    let repository = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    support::copy_dir(&repository.join(".saffron/cache"), &root.join(".saffron/cache"));
    support::agent::add_to_orders(&root, support::agent::SEARCH_THEN_HEADING);
    support::agent::add_to_orders(
        &root,
        "\n  Scenario: Search once more\n    When I search orders for \"Ada Lovelace\"\n    \
         Then the orders table shows 2 orders\n",
    );
    let seen = Seen::default();
    let mut plans = Plans::new();
    // Steps 1-3 are the sign-in StepSet of the Background, 4-5 the search: all recorded elsewhere.
    plans.insert(
        "Search, then read the heading".into(),
        vec![step(6), check_on("h1", json!({ "check": "text", "text": "Orders" })), done()],
    );
    let recorded = seen.clone();
    let server = runtime
        .block_on(FakeServer::start(Wire::Anthropic, move |request: &Request| {
            recorded.push(request);
            reply(&plans, request)
        }))
        .expect("fake server");
    configure_agent(&root, "anthropic", &server, "");
    let targets = vec![
        scenario_at(&root, "features/orders.saffron", "Search, then read the heading"),
        scenario_at(&root, "features/orders.saffron", "Search once more"),
    ];
    let output = saffron_run(&root, &demo.url(), &targets);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}\nerrors told to the agent:\n{}", errors_told(&seen));
    assert!(all.contains("2 scenario(s): 2 green"), "{all}");
    assert!(all.contains("5 of 6 steps seeded") && all.contains("5 of 5 steps seeded"), "{all}");

    // One session of three turns, about step 6 only; the gap-free scenario asked nothing.
    let requests = seen.all();
    assert_eq!(requests.len(), 3, "{all}");
    let task = requests[0].messages[0].text();
    assert!(task.contains("Scenario: Search, then read the heading"), "{task}");
    assert!(task.contains("Perform steps 6 to 6."), "{task}");
    for number in 1..=5 {
        let line = task.lines().find(|line| line.starts_with(&format!("{number}. "))).expect("a numbered step");
        assert!(line.ends_with("(done by Saffron, not by you)"), "{line}");
    }
    assert!(!task.contains("Search once more"));

    // Saved, the seeded steps with the actions they were copied from; replayed with no request.
    let cache = root.join(".saffron/cache/orders");
    let gap = std::fs::read_to_string(cache.join("search-then-read-the-heading.json")).expect("saved");
    assert!(gap.contains("\"expectVisible\"") && gap.contains("Ada Lovelace"), "{gap}");
    assert!(cache.join("search-once-more.json").exists());
    let output = saffron_run(&root, &demo.url(), &targets);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("2 scenario(s): 2 green"), "{all}");
    assert_eq!(server.requests().len(), 3, "a replay asked the provider");
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}

/// One scenario in a feature file of its own, recorded by the scripted agent on `wire`: what
/// the tests of one capability share. The run must be green; the saved recording is read back.
struct Recorded {
    runtime: tokio::runtime::Runtime,
    demo: DemoServer,
    root: std::path::PathBuf,
    server: FakeServer,
    seen: Seen,
    targets: Vec<String>,
    saved: String,
    recording: serde_json::Value,
}

fn record_one(
    project_name: &str,
    wire: Wire,
    feature: (&str, &str),
    scenario: &str,
    ops: Vec<support::agent::Op>,
) -> Recorded {
    record_in(project_name, wire, feature, scenario, ops, |_| {})
}

/// [`record_one`] in a project `setup` adds to.
fn record_in(
    project_name: &str,
    wire: Wire,
    feature: (&str, &str),
    scenario: &str,
    ops: Vec<support::agent::Op>,
    setup: impl FnOnce(&std::path::Path),
) -> Recorded {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project(project_name, &password);
    setup(&root);
    let (path, feature_text) = feature;
    std::fs::write(root.join(path), feature_text).expect("write the feature");
    let mut plans = Plans::new();
    plans.insert(scenario.into(), ops);
    let seen = Seen::default();
    let recorded = seen.clone();
    let server = runtime
        .block_on(FakeServer::start(wire, move |request: &Request| {
            recorded.push(request);
            reply(&plans, request)
        }))
        .expect("fake server");
    let vendor = match wire {
        Wire::Anthropic => "anthropic",
        Wire::OpenAi => "openai",
        Wire::OpenAiResponses => unreachable!("no built-in provider speaks the Responses API"),
    };
    configure_agent(&root, vendor, &server, "");
    let targets = vec![scenario_at(&root, path, scenario)];
    let output = saffron_run(&root, &demo.url(), &targets);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}\nerrors told to the agent:\n{}", errors_told(&seen));
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");
    let cache = root
        .join(".saffron/cache")
        .join(saffron_recording::feature_slug(path))
        .join(format!("{}.json", saffron_recording::scenario_slug(scenario)));
    let saved = std::fs::read_to_string(&cache).expect("saved");
    let recording = serde_json::from_str(&saved).expect("JSON");
    Recorded { runtime, demo, root, server, seen, targets, saved, recording }
}

impl Recorded {
    /// Replayed green at zero provider requests; then everything is cleaned up.
    fn replays_without_the_provider(self) {
        self.replays_without_the_provider_in(&[]);
    }

    /// The replay in each of `browsers` (a matrix), or in Chromium alone.
    fn replays_without_the_provider_in(self, browsers: &[&str]) {
        let requests = self.server.requests().len();
        let mut args: Vec<String> =
            browsers.iter().flat_map(|browser| ["--browser".to_owned(), browser.to_string()]).collect();
        args.extend(self.targets.iter().cloned());
        let output = saffron_run(&self.root, &self.demo.url(), &args);
        let all = text(&output);
        assert_eq!(output.status.code(), Some(0), "{all}");
        let runs = browsers.len().max(1);
        assert!(all.contains(&format!("{runs} scenario(s): {runs} green")), "{all}");
        assert_eq!(self.server.requests().len(), requests, "a replay asked the provider");
        let _ = std::fs::remove_dir_all(&self.root);
        let _ = self.runtime.block_on(self.demo.shutdown());
    }
}

/// A payment provider's card form in a cross-site frame: the agent reads the frame's fields in
/// its snapshot and acts through their refs, the recording holds targets that carry the frame,
/// and the replay finds them there, at zero provider requests.
#[test]
fn a_card_form_in_a_cross_site_frame_is_recorded_from_the_snapshot_and_replayed() {
    let feature = "Feature: Checkout\n  Scenario: Pay with a card\n    Given I am at the checkout\n    \
                   When I pay with the card \"4000 0000 0000 4242\"\n    Then the card ending 4242 is charged\n";
    let ops = vec![
        step(1),
        goto("/lab/frames"),
        check_on("h1", json!({ "check": "visible" })),
        step(2),
        fill("textbox \"Card number\"", "4000 0000 0000 4242"),
        click("button \"Pay\""),
        step(3),
        check_on("status [ref=", json!({ "check": "text", "pattern": "^Paid with the card ending 4242 " })),
        done(),
    ];
    let recorded = record_one("frames", Wire::OpenAi, ("features/checkout.feature", feature), "Pay with a card", ops);
    let snapshots: Vec<String> = recorded.seen.all().iter().filter_map(support::agent::latest_snapshot).collect();
    assert!(
        snapshots.iter().any(|snapshot| snapshot.contains("iframe \"Card payment\"\n  textbox \"Card number\" [ref=")),
        "the agent read the frame's field under its frame: {snapshots:#?}"
    );
    let (saved, fill) = (&recorded.saved, &recorded.recording["steps"][1]["actions"][0]);
    assert_eq!(fill["type"], "fill", "{saved}");
    assert_eq!(fill["target"]["role"], "textbox", "{saved}");
    assert_eq!(fill["target"]["frame"]["css"][0], "#card", "{saved}");
    // Firefox replays Chromium's recording in the cross-site frame too.
    recorded.replays_without_the_provider_in(&["chromium", "firefox"]);
}

/// A Then step about a downloaded file: the agent's check of a file that was not downloaded is
/// refused with the file that was, its check of the right file and a row it holds is recorded
/// as an `expectDownload`, and the replay checks the file again, at zero provider requests.
#[test]
fn a_downloaded_file_is_checked_by_name_and_contents_and_a_wrong_check_is_refused() {
    let feature = "Feature: Reports\n  Scenario: Download the report\n    Given I am on the reports page\n    \
                   When I download the report\n    Then the report lists Katherine Johnson\n";
    let ops = vec![
        step(1),
        goto("/lab/download"),
        check_on("h1", json!({ "check": "visible" })),
        step(2),
        click("link \"Download the report\""),
        step(3),
        // Wrong: no such file was downloaded. Refused, with what was.
        check(json!({ "check": "download", "text": "orders.csv" })),
        check(json!({ "check": "download", "text": "report.csv", "value": "1002,Katherine Johnson" })),
        done(),
    ];
    let recorded =
        record_one("download", Wire::Anthropic, ("features/reports.feature", feature), "Download the report", ops);
    let told = errors_told(&recorded.seen);
    assert!(
        told.contains(r#"expected a download named "orders.csv" during the scenario"#)
            && told.contains(r#"found "report.csv" (81 bytes)"#),
        "the wrong check is refused with the file downloaded: {told}"
    );
    let checks = recorded.recording["steps"][2]["actions"].as_array().expect("the Then step's actions");
    assert_eq!(
        checks,
        &[json!({ "type": "expectDownload", "fileName": "report.csv", "contains": "1002,Katherine Johnson" })],
        "{}",
        recorded.saved
    );
    // The download and its check replay alike in Firefox.
    recorded.replays_without_the_provider_in(&["chromium", "firefox"]);
}

/// A Then step checked on one list item of two (TodoMVC's "the list shows ..."): the item is
/// recorded by its role and the text it holds (`hasText`, never its position), the recording passes the
/// validator it is saved through, and the replay finds the item again, at zero provider
/// requests.
#[test]
fn a_check_on_a_list_item_is_recorded_by_the_text_it_holds_saved_and_replayed() {
    let feature = "Feature: Todos\n  Scenario: Add a todo\n    Given I open the todo list\n    \
                   When I add \"walk the dog\"\n    And I add \"feed the cat\"\n    \
                   Then the list shows \"walk the dog\"\n";
    let ops = vec![
        step(1),
        goto("/lab/todos"),
        step(2),
        fill("textbox \"New todo\"", "walk the dog"),
        on("browser_press", "textbox \"New todo\"", json!({ "key": "Enter" })),
        step(3),
        fill("textbox \"New todo\"", "feed the cat"),
        on("browser_press", "textbox \"New todo\"", json!({ "key": "Enter" })),
        step(4),
        // The first item's line: the agent checks the item, not its checkbox or its label.
        check_on("listitem [ref=", json!({ "check": "text", "pattern": "walk the dog" })),
        done(),
    ];
    let recorded = record_one("listitem", Wire::Anthropic, ("features/todos.feature", feature), "Add a todo", ops);
    let then = &recorded.recording["steps"][3]["actions"][0];
    assert_eq!(then["target"]["role"], "listitem", "{}", recorded.saved);
    assert_eq!(then["target"]["hasText"], "walk the dog", "{}", recorded.saved);
    assert!(!recorded.saved.contains("nth-of-type"), "{}", recorded.saved);
    recorded.replays_without_the_provider();
}

/// In a project with an API (the application's contract pinned), the agent recording a browser
/// scenario also sends requests beside the page, with its cookies: a Then step about the API,
/// after a sign-in on the page, is verified on the response it got. The recording holds the
/// request and its check, never the session's cookie (replay sends its own run's), and the model
/// never read that cookie.
#[test]
fn a_browser_scenario_step_about_the_api_is_recorded_with_the_pages_session() {
    let feature = "Feature: The page's session in the API\n  Scenario: Orders through the API after signing in\n    \
                   Given I am on the sign-in page\n    When I sign in with the demo account\n    \
                   Then the API answers 200 to the orders of the signed-in user\n";
    let mut ops = support::agent::open_and_sign_in();
    ops.extend([
        step(3),
        op("saffron_request", json!({ "method": "GET", "path": "/api/orders" })),
        op("saffron_assert_response", json!({ "check": "status", "status": "200" })),
        // Holds none of the Then step's values: refused, not recorded.
        op("saffron_assert_response", json!({ "check": "schema" })),
        done(),
    ]);
    let pin = |root: &std::path::Path| {
        let repository = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        std::fs::create_dir_all(root.join("contracts")).expect("mkdir");
        std::fs::copy(repository.join("contracts/app.openapi.json"), root.join("contracts/app.openapi.json"))
            .expect("the contract");
    };
    let name = "Orders through the API after signing in";
    let recorded = record_in("beside", Wire::Anthropic, ("features/beside.feature", feature), name, ops, pin);
    let then = recorded.recording["steps"][2]["actions"].as_array().expect("actions").clone();
    assert_eq!(
        then,
        vec![
            json!({ "type": "request", "service": "app", "method": "GET", "path": "/api/orders" }),
            json!({ "type": "expectStatus", "status": "200" }),
        ],
        "{}",
        recorded.saved
    );
    // The agent was told it may, and the request carried the page's session: the demo answers
    // 401 to a request without one, and the check of 200 held. The recording holds no cookie.
    let first = recorded.seen.all().first().cloned().expect("asked");
    assert!(first.tools.iter().any(|tool| tool.name == "saffron_request"));
    assert!(first.messages[0].text().contains("send its request with saffron_request"), "{}", first.messages[0].text());
    let told: Vec<String> = recorded.seen.all().iter().map(|request| format!("{:?}", request.messages)).collect();
    assert!(told.iter().any(|text| text.contains("→ 200 OK")), "the agent read the response");
    assert!(!recorded.saved.to_ascii_lowercase().contains("cookie"), "{}", recorded.saved);
    assert!(
        errors_told(&recorded.seen).contains("this check is not about step 3"),
        "a schema check says nothing of \"200\": {}",
        errors_told(&recorded.seen)
    );
    // Firefox sends the request with the page's session too.
    recorded.replays_without_the_provider_in(&["chromium", "firefox"]);
}
