//! A person takes the browser over from the recording agent, in real headless Chromium.
//!
//! The application's sign-up form wants a person check (type a word) before its button is
//! enabled. The scripted agent fills the name and clicks "Sign up", which waits for the button.
//! While that click is under way, a person (the test, over a DevTools connection of its own, as
//! a person's mouse and keyboard would) clicks "Take over" in Saffron's bar, types the word,
//! and gives the browser back. The click must never land while the person holds the browser,
//! the person's typing is recorded nowhere, and the agent is told what changed and finishes;
//! the proof replay gives the verdict, as usual.
//!
//! The browser is started here with a DevTools port, so that the test can act in the very page
//! the agent works in (`saffron run` connects to it as to a remote browser).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams, MouseButton,
};
use chromiumoxide::cdp::browser_protocol::target::{GetTargetsParams, TargetId};
use futures::StreamExt;
use saffron_agent::testing::{FakeServer, Reply, Wire};
use saffron_agent::{Block, Request, Role};
use saffron_browser::testing::DebuggableChromium;
use saffron_runner::takeover::{Holder, Takeover};
use saffron_runner::{RunRequest, Session, Verdict};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The word the person check asks for.
const WORD: &str = "marigold";

/// What the takeover bar's button says while the agent holds the browser.
const BAR_BUTTON: &str = "Saffron: the agent has control \u{2014} Take over";

/// The application: `/signup` with its person check until a person passed it once (then the
/// site trusts this machine, as a site remembers a device after a second factor).
#[derive(Default)]
struct App {
    trusted: AtomicBool,
    signups: AtomicUsize,
}

impl App {
    fn serve(self: &Arc<App>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        let address = listener.local_addr().expect("an address");
        let app = Arc::clone(self);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let app = Arc::clone(&app);
                std::thread::spawn(move || app.answer(stream));
            }
        });
        format!("http://{address}")
    }

    fn answer(&self, mut stream: TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().expect("a stream"));
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).is_err() {
            return;
        }
        let mut length = 0;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        let _ = reader.read_exact(&mut body);
        let form = String::from_utf8_lossy(&body).to_string();
        let field = |name: &str| {
            form.split('&')
                .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
                .map(|value| value.replace('+', " "))
                .unwrap_or_default()
        };
        let (status, page) = match request_line.split_whitespace().take(2).collect::<Vec<_>>()[..] {
            ["GET", path] if path.starts_with("/signup") => ("200 OK", self.form()),
            ["POST", "/signup"] if self.trusted.load(Ordering::SeqCst) || field("word") == WORD => {
                self.trusted.store(true, Ordering::SeqCst);
                self.signups.fetch_add(1, Ordering::SeqCst);
                ("200 OK", page("Welcome", &format!("<h1>Welcome, {}</h1>", field("name"))))
            }
            ["POST", "/signup"] => ("403 Forbidden", page("Sign up", "<h1>Prove you are a person first</h1>")),
            _ => ("404 Not Found", page("Not found", "<h1>Not found</h1>")),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = stream.write_all(response.as_bytes());
    }

    fn form(&self) -> String {
        let trusted = self.trusted.load(Ordering::SeqCst);
        let check = if trusted {
            String::new()
        } else {
            format!(
                "<fieldset><legend>Are you a person?</legend><label>Type the word {WORD} \
                 <input id=\"word\" name=\"word\" autocomplete=\"off\"></label></fieldset>"
            )
        };
        let disabled = if trusted { "" } else { " disabled" };
        let body = format!(
            "<h1>Sign up</h1><form method=\"post\" action=\"/signup\"><p><label>Name <input id=\"name\" \
             name=\"name\"></label></p>{check}<p><button id=\"go\"{disabled}>Sign up</button></p></form>\
             <script>const word = document.getElementById('word'); if (word) word.addEventListener('input', \
             () => {{ document.getElementById('go').disabled = word.value !== '{WORD}'; }});</script>"
        );
        page("Sign up", &body)
    }
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head><body>{body}</body></html>"
    )
}

/// The scripted agent: one call per answer, refs read from the latest snapshot it was sent.
/// It announces when it has sent the click that waits for the person check.
fn agent(requests: Arc<Mutex<Vec<Request>>>, click_sent: Arc<Notify>) -> impl Fn(&Request) -> Reply + Send + Sync {
    move |request: &Request| {
        requests.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(request.clone());
        let index = request.answers_so_far();
        let on = |line: &str, mut input: Value| {
            input["ref"] = json!(latest_snapshot(request).and_then(|snapshot| ref_on_line(&snapshot, line)));
            input
        };
        let (tool, input) = match index {
            0 => ("saffron_step", json!({ "step": 1 })),
            1 => ("browser_goto", json!({ "url": "/signup" })),
            2 => ("saffron_step", json!({ "step": 2 })),
            3 => ("browser_fill", on("textbox \"Name\"", json!({ "value": "Ada" }))),
            4 => {
                click_sent.notify_one();
                ("browser_click", on("button \"Sign up\"", json!({})))
            }
            // Told a person took over, it tries again at once: that call must wait.
            5 => ("browser_click", on("button \"Sign up\"", json!({}))),
            // Told what changed, with the page as the person left it.
            6 => ("browser_click", on("button \"Sign up\"", json!({}))),
            // The bar is found by no locator: neither by its role and name, nor by its text.
            7 => ("saffron_assert", json!({ "check": "visible", "role": "button", "name": BAR_BUTTON })),
            8 => ("saffron_assert", json!({ "check": "visible", "text": BAR_BUTTON })),
            9 => ("saffron_step", json!({ "step": 3 })),
            10 => ("saffron_assert", json!({ "check": "text", "text": "Welcome, Ada" })),
            11 => ("saffron_done", json!({ "success": true, "narrative": "Signed up as Ada." })),
            _ => return Reply::text("I am finished."),
        };
        Reply::call(&format!("call-{index}"), tool, input)
    }
}

/// The newest text the gateway sent that holds refs: a tool result, or the task.
fn latest_snapshot(request: &Request) -> Option<String> {
    request.messages.iter().rev().filter(|message| message.role == Role::User).find_map(|message| {
        message.content.iter().rev().find_map(|block| match block {
            Block::ToolResult { content, .. } if content.contains("[ref=") => Some(content.clone()),
            Block::Text { text } if text.contains("[ref=") => Some(text.clone()),
            _ => None,
        })
    })
}

/// The ref on the first line that holds `text`.
fn ref_on_line(snapshot: &str, text: &str) -> Option<String> {
    let line = snapshot.lines().find(|line| line.contains(text) && line.contains("[ref="))?;
    let start = line.find("[ref=")? + "[ref=".len();
    let end = line[start..].find(']')? + start;
    Some(line[start..end].to_owned())
}

fn project(base_url: &str, agent: &FakeServer) -> tempfile::TempDir {
    let root = tempfile::Builder::new().prefix("saffron-takeover-project-").tempdir().expect("a project");
    std::fs::create_dir(root.path().join("features")).expect("features");
    std::fs::write(
        root.path().join("features/signup.feature"),
        "Feature: Sign up\n\n  Scenario: Sign up past the person check\n    Given I am on the sign-up page\n    \
         When I sign up as \"Ada\"\n    Then I see the welcome for \"Ada\"\n",
    )
    .expect("the feature");
    std::fs::write(
        root.path().join("saffron.toml"),
        format!(
            "base_url = \"{base_url}\"\n[timeouts]\naction_ms = 30000\n[agent]\nprovider = \"anthropic\"\n\
             model = \"fake-model\"\nbase_url = \"{}\"\napi_key_env = \"\"\n",
            agent.base_url()
        ),
    )
    .expect("saffron.toml");
    root
}

/// The person: the test's own DevTools connection to the page the agent works in.
struct Person {
    page: chromiumoxide::Page,
}

impl Person {
    async fn connect(chromium: &DebuggableChromium, url_part: &str) -> (chromiumoxide::Browser, Person) {
        let url = chromium.ws_url();
        let (browser, mut handler) = chromiumoxide::Browser::connect(url).await.expect("connects");
        tokio::spawn(async move { while let Some(Ok(())) = handler.next().await {} });
        let targets = browser.execute(GetTargetsParams::default()).await.expect("targets").result.target_infos;
        let target = targets
            .into_iter()
            .find(|target| target.r#type == "page" && target.url.contains(url_part))
            .expect("the agent's page");
        // chromiumoxide attaches to the page on its own; this waits for it to finish.
        let deadline = Instant::now() + Duration::from_secs(10);
        let page = loop {
            if let Ok(page) = browser.get_page(TargetId::from(target.target_id.as_ref().to_owned())).await {
                break page;
            }
            assert!(Instant::now() < deadline, "the agent's page could not be attached");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        (browser, Person { page })
    }

    async fn value(&self, expression: &str) -> Value {
        self.page.evaluate(expression).await.expect("evaluates").into_value::<Value>().expect("a value")
    }

    /// A real click (trusted, as a person's) at the centre of what `selector` selects.
    async fn click(&self, selector: &str) {
        let centre = self
            .value(&format!(
                "(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect(); \
                 return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
            ))
            .await;
        let (x, y) = (centre[0].as_f64().expect("x"), centre[1].as_f64().expect("y"));
        for kind in [
            DispatchMouseEventType::MouseMoved,
            DispatchMouseEventType::MousePressed,
            DispatchMouseEventType::MouseReleased,
        ] {
            let mut event = DispatchMouseEventParams::builder().r#type(kind.clone()).x(x).y(y);
            if kind != DispatchMouseEventType::MouseMoved {
                event = event.button(MouseButton::Left).click_count(1);
            }
            self.page.execute(event.build().expect("an event")).await.expect("dispatched");
        }
    }

    async fn type_text(&self, text: &str) {
        self.page.execute(InsertTextParams::new(text)).await.expect("typed");
    }
}

fn tool_results(request: &Request) -> Vec<(String, bool)> {
    request
        .messages
        .iter()
        .flat_map(|message| message.tool_results().map(|result| (result.content.to_string(), result.is_error)))
        .collect()
}

#[test]
fn a_person_takes_over_mid_action_and_the_agent_resumes_from_the_page_they_leave() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let app = Arc::new(App::default());
    let base_url = app.serve();
    let chromium = DebuggableChromium::start("saffron-takeover-test-", &[]);
    let requests = Arc::new(Mutex::new(Vec::new()));
    let click_sent = Arc::new(Notify::new());
    let server = runtime
        .block_on(FakeServer::start(Wire::Anthropic, agent(Arc::clone(&requests), Arc::clone(&click_sent))))
        .expect("the fake vendor");
    let root = project(&base_url, &server);
    let (host, _) = saffron_index::IndexHost::load(root.path());
    let request = RunRequest {
        targets: Vec::new(),
        tags: None,
        workers: 1,
        base_url: None,
        headed: false,
        shard: None,
        hooks: false,
        browser_url: Some(chromium.http_url()),
        agent_workers: None,
        refresh_drift: false,
        retries: None,
        trace: None,
        api_urls: Vec::new(),
        device: None,
        browsers: Vec::new(),
    };
    let mut session = Session::prepare(root.path(), &host.snapshot(), request).expect("a session");
    let config = saffron_runner::session::load_config(root.path()).expect("the config");
    saffron_runner::session::resolve_agent(config.agent.as_ref(), &mut session.options, None);
    // What `--headed` sets; here in a headless browser.
    let takeover = Takeover::new();
    session.options.takeover = Some(takeover.clone());

    let person = async {
        // The agent's click waits for the button the person check enables.
        click_sent.notified().await;
        takeover.wait_until(|leases| leases.len() == 1 && leases[0].acting() == 1).await;
        let (_browser, person) = Person::connect(&chromium, "/signup").await;
        assert_eq!(person.value("document.getElementById('go').disabled").await, json!(true));

        // The person takes over with Saffron's bar, and at once passes the check: the button the
        // agent's click waits for is enabled while that click may still be under way.
        person.click("saffron-takeover").await;
        takeover.wait_until(|leases| matches!(leases[0].holder(), Holder::Person(_))).await;
        person.click("#word").await;
        person.type_text(WORD).await;
        // The click under way was stopped before it dispatched anything, and the agent's next
        // call waits.
        takeover.wait_until(|leases| leases[0].acting() == 0 && leases[0].waiting() == 1).await;
        assert_eq!(person.value("document.getElementById('word').value").await, json!(WORD));
        assert_eq!(person.value("document.getElementById('name').value").await, json!("Ada"));
        assert_eq!(person.value("document.getElementById('go').disabled").await, json!(false));
        assert_eq!(person.value("location.pathname").await, json!("/signup"));
        assert_eq!(app.signups.load(Ordering::SeqCst), 0, "no click landed while the person held the browser");
        assert_eq!(takeover.leases()[0].waiting(), 1, "the agent's call still waits");

        // The person gives the browser back with the same bar.
        person.click("saffron-takeover").await;
        takeover.wait_until(|leases| leases.first().is_none_or(|lease| lease.holder() == Holder::Agent)).await;
    };
    // One task, the run and the person side by side (the live page has a thread of its own).
    let (results, ()) = runtime.block_on(async { tokio::join!(session.replay(|_| {}), person) });

    assert_eq!(results.len(), 1);
    let result = &results[0];
    assert_eq!(result.verdict, Verdict::Green, "{:?}", result.verdict);
    assert_eq!(app.signups.load(Ordering::SeqCst), 2, "the agent's click after the give-back, and the proof's");

    // What the agent was told.
    let requests = requests.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
    let last = requests.last().expect("requests");
    let results = tool_results(last);
    let (overtaken, error) = &results[4];
    assert!(
        *error && overtaken.contains("A person took over the browser while this call was under way"),
        "{overtaken}"
    );
    let (told, error) = &results[5];
    assert!(*error && told.starts_with("Nothing was performed. A person had control of the browser from "), "{told}");
    assert!(told.contains("the page is now at /signup") && told.contains("[ref="), "{told}");
    let (clicked, error) = &results[6];
    assert!(!*error && clicked.contains("Welcome, Ada"), "{clicked}");
    for (looked_for, error) in &results[7..9] {
        assert!(*error && looked_for.contains("no element matched"), "{looked_for}");
    }
    // The bar is in no snapshot the agent read (no element line names it).
    for request in &requests {
        for message in request.messages.iter().filter(|message| message.role == Role::User) {
            let text = format!("{:?}", message.content);
            let lines = text.split("\\n").filter(|line| line.contains("[ref="));
            for line in lines {
                assert!(!line.contains("Take over") && !line.contains("Saffron:"), "the bar leaked: {line}");
            }
        }
    }

    // The recording holds the agent's actions only: none of the person's.
    let saved = result.agent.as_ref().and_then(|agent| agent.saved.clone()).expect("saved");
    let recording = std::fs::read_to_string(root.path().join(&saved)).expect("the recording");
    assert!(!recording.contains(WORD) && !recording.contains("Type the word"), "{recording}");
    let actions: Vec<String> = serde_json::from_str::<Value>(&recording).expect("JSON")["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .flat_map(|step| step["actions"].as_array().cloned().unwrap_or_default())
        .map(|action| action["type"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(actions, ["goto", "fill", "click", "expectText"], "{recording}");
    // The proof replay's trace is kept (the agent's work is read by a reviewer), but no
    // evidence of a failed attempt.
    assert!(!root.path().join(".saffron/artifacts/recording").exists(), "no evidence of a failed attempt");
    let traces = &result.traces;
    assert!(traces.len() == 1 && traces[0].ends_with("-recording.trace.json"), "{traces:?}");
}
