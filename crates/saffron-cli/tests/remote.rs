//! `saffron run` on a remote browser: a second local Chromium, started here with
//! `--remote-debugging-port=0`, stands in for a browser on another machine or a browser service.
//! Saffron replays in it over its DevTools endpoint, never launches Chromium of its own (each
//! test points `SAFFRON_CHROMIUM` nowhere), never closes it, and leaves no context in it.

use crate::support;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams, GetBrowserContextsParams, GetTargetsParams,
};
use futures::StreamExt;
use saffron_browser::testing::DebuggableChromium;
use saffron_demo::{DemoConfig, DemoServer};
use support::example_project;

/// A Chromium that saffron did not start: ended by the test (or its drop).
struct RemoteChromium(DebuggableChromium);

impl RemoteChromium {
    fn start() -> RemoteChromium {
        RemoteChromium::start_with(&[])
    }

    /// Started with `extra` flags after the test flags.
    fn start_with(extra: &[&str]) -> RemoteChromium {
        RemoteChromium(DebuggableChromium::start("saffron-remote-test-", extra))
    }

    fn http_url(&self) -> String {
        self.0.http_url()
    }

    fn ws_url(&self) -> String {
        self.0.ws_url()
    }

    fn is_running(&mut self) -> bool {
        self.0.is_running()
    }

    fn kill(&mut self) {
        self.0.kill();
    }
}

/// The test's own DevTools connection to the remote browser, to see what a run left in it.
struct Observer {
    runtime: tokio::runtime::Runtime,
    browser: chromiumoxide::Browser,
}

impl Observer {
    fn connect(remote: &RemoteChromium) -> Observer {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
        let browser = runtime.block_on(async {
            let (browser, mut handler) = chromiumoxide::Browser::connect(remote.ws_url()).await.expect("connects");
            tokio::spawn(async move { while let Some(Ok(())) = handler.next().await {} });
            browser
        });
        Observer { runtime, browser }
    }

    /// Every browser context but the default one.
    fn contexts(&self) -> Vec<String> {
        let answer = self.runtime.block_on(self.browser.execute(GetBrowserContextsParams::default()));
        answer
            .expect("the remote browser answers")
            .result
            .browser_context_ids
            .iter()
            .map(|id| id.as_ref().to_owned())
            .collect()
    }

    /// Whether the browser still does real work: opens a context with a page at `url`, loads it,
    /// and disposes of the context. A browser that was told to close (its `Browser.close` is
    /// answered before it exits) fails this as it shuts down.
    fn serves(&self, url: &str) -> bool {
        self.runtime.block_on(async {
            let Ok(context) = self.browser.create_browser_context(CreateBrowserContextParams::default()).await else {
                return false;
            };
            let mut params = CreateTargetParams::new(url);
            params.browser_context_id = Some(context.clone());
            let loaded = match self.browser.new_page(params).await {
                Ok(page) => page.wait_for_navigation().await.is_ok() && page.url().await.is_ok_and(|now| now.is_some()),
                Err(_) => false,
            };
            self.browser.dispose_browser_context(context).await.is_ok() && loaded
        })
    }

    fn page_urls(&self) -> Vec<String> {
        let answer = self.runtime.block_on(self.browser.execute(GetTargetsParams::default()));
        let targets = answer.expect("the remote browser answers").result.target_infos;
        targets.into_iter().filter(|target| target.r#type == "page").map(|target| target.url).collect()
    }
}

fn saffron(project: &Path, args: &[&str], password: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_saffron"));
    command
        .args(args)
        .current_dir(project)
        .env("DEMO_PASSWORD", password)
        // Saffron must not launch a browser of its own: this one cannot start.
        .env("SAFFRON_CHROMIUM", "/nonexistent/chromium");
    command
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn demo() -> (tokio::runtime::Runtime, DemoServer, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let config = DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(DemoServer::start(config)).expect("the demo app");
    (runtime, server, password)
}

/// Waits for `child` to exit, at most `limit`; kills it when it does not.
fn wait_output(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("a status").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "saffron did not exit within {} s: {}",
                limit.as_secs(),
                text(&child.wait_with_output().expect("output"))
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

/// Polls `condition` until it holds, at most `limit`.
fn eventually(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !condition() {
        assert!(Instant::now() < deadline, "{what} within {} s", limit.as_secs());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Makes the sign-in scenario wait (up to a minute) after it reached the orders page, so that
/// something can happen to the run while it is surely in the middle of that scenario.
fn make_sign_in_wait_at_the_end(project: &Path) {
    let path = project.join(".saffron/cache/sign-in/sign-in-with-the-demo-account.json");
    let mut recording: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the recording")).expect("JSON");
    let actions = recording["steps"][2]["actions"].as_array_mut().expect("the third step's actions");
    actions.push(serde_json::json!({
        "type": "expectVisible",
        "target": { "text": "A text no page of the demo shows" },
        "timeoutMs": 60000
    }));
    std::fs::write(&path, serde_json::to_string_pretty(&recording).expect("JSON")).expect("write");
}

#[test]
fn a_run_in_a_remote_browser_is_green_and_leaves_it_running_without_its_contexts() {
    let (runtime, server, password) = demo();
    let mut remote = RemoteChromium::start();
    let observer = Observer::connect(&remote);
    let project = example_project("remote-green");
    // The http:// form, resolved through /json/version.
    let output = saffron(
        &project,
        &["run", "--base-url", &server.url(), "--browser-url", &remote.http_url(), "--tags", "not @wip"],
        &password,
    )
    .output()
    .expect("saffron runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("18 scenario(s): 18 green, 0 yellow, 0 red, 0 blocked"), "{all}");
    assert!(all.contains(&format!("in the browser at {}/", remote.http_url())), "{all}");
    // The browser is not saffron's: it still runs, and holds none of the run's contexts or pages.
    assert!(observer.serves(&server.url()), "the remote browser no longer works");
    assert!(remote.is_running(), "saffron ended the remote browser");
    assert_eq!(observer.contexts(), Vec::<String>::new());
    let demo_pages: Vec<String> =
        observer.page_urls().into_iter().filter(|url| url.starts_with(&server.url())).collect();
    assert!(demo_pages.is_empty(), "{demo_pages:?}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn the_browser_url_in_saffron_toml_is_used() {
    let (runtime, server, password) = demo();
    let mut remote = RemoteChromium::start();
    let project = example_project("remote-config");
    // The ws:// form.
    std::fs::write(
        project.join("saffron.toml"),
        format!("base_url = \"{}\"\n[browser]\nurl = \"{}\"\n", server.url(), remote.ws_url()),
    )
    .expect("write");
    let output = saffron(&project, &["run", "features/sign_in.feature"], &password).output().expect("saffron runs");
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("2 scenario(s): 2 green"), "{all}");
    assert!(!all.contains("unknown key"), "{all}");
    assert!(remote.is_running());
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn a_remote_browser_that_dies_mid_run_blocks_the_scenarios_never_red() {
    let (runtime, server, password) = demo();
    let mut remote = RemoteChromium::start();
    let observer = Observer::connect(&remote);
    let project = example_project("remote-dies");
    make_sign_in_wait_at_the_end(&project);
    let run = saffron(
        &project,
        &[
            "run",
            "--base-url",
            &server.url(),
            "--browser-url",
            &remote.ws_url(),
            "--workers",
            "1",
            "features/sign_in.feature",
        ],
        &password,
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("saffron starts");
    // Signed in: the scenario now waits for its last assertion.
    let orders = format!("{}/orders", server.url());
    eventually(Duration::from_secs(30), "the scenario reaches the orders page", || {
        observer.page_urls().iter().any(|url| url.starts_with(&orders))
    });
    remote.kill();
    let output = wait_output(run, Duration::from_secs(30));
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(!all.contains("✗ red"), "{all}");
    assert!(all.contains("2 scenario(s): 0 green, 0 yellow, 0 red, 2 blocked"), "{all}");
    assert!(all.contains("Sign in with the demo account: step 3"), "{all}");
    assert!(all.contains("lost the connection to the remote browser at ws://127.0.0.1:"), "{all}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn a_killed_run_leaves_no_context_in_the_remote_browser() {
    let (runtime, server, password) = demo();
    let mut remote = RemoteChromium::start();
    let observer = Observer::connect(&remote);
    let project = example_project("remote-killed");
    make_sign_in_wait_at_the_end(&project);
    // The run's own temporary directory: what the run leaves on this machine is there.
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let left_in_scratch = || -> Vec<String> {
        let entries = std::fs::read_dir(scratch.path()).expect("the folder is there");
        entries.map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned()).collect()
    };
    let mut run = saffron(
        &project,
        &["run", "--base-url", &server.url(), "--browser-url", &remote.ws_url(), "features/sign_in.feature:5"],
        &password,
    )
    .env("TMPDIR", scratch.path())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("saffron starts");
    let orders = format!("{}/orders", server.url());
    eventually(Duration::from_secs(30), "the scenario reaches the orders page", || {
        observer.page_urls().iter().any(|url| url.starts_with(&orders))
    });
    assert_eq!(observer.contexts().len(), 1, "the scenario's context");
    let during = left_in_scratch();
    assert!(
        during.len() == 1 && during[0].starts_with("saffron-chromium-"),
        "the run's one folder, where its downloads go: {during:?}"
    );
    // SIGKILL: saffron closes nothing; the browser disposes what it opened as the socket closes,
    // and the folder's watchdog removes it.
    run.kill().expect("kill");
    run.wait().expect("reaped");
    eventually(Duration::from_secs(10), "the run's context is disposed", || observer.contexts().is_empty());
    eventually(Duration::from_secs(10), "the run's folder is removed", || left_in_scratch().is_empty());
    assert!(remote.is_running());
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

#[test]
fn a_bad_or_unreachable_browser_url_is_exit_2_with_a_message() {
    let (runtime, server, password) = demo();
    let project = example_project("remote-bad");
    let base_url = server.url();
    let run = |args: &[&str]| {
        let mut all = vec!["run", "--base-url", &base_url, "features/sign_in.feature"];
        all.extend_from_slice(args);
        let output = saffron(&project, &all, &password).output().expect("saffron runs");
        (output.status.code(), text(&output))
    };
    for (url, problem) in [
        ("ftp://127.0.0.1:9222", "must be ws://, wss://, http:// or https://, not ftp:"),
        ("127.0.0.1:9222", "has no scheme"),
        ("", "the browser URL is empty"),
    ] {
        let (code, all) = run(&["--browser-url", url]);
        assert_eq!(code, Some(2), "{all}");
        assert!(all.contains("invalid browser URL") && all.contains(problem), "{url}: {all}");
        assert!(!all.contains("scenario(s)"), "nothing ran: {all}");
    }
    // The same check for saffron.toml.
    std::fs::write(project.join("saffron.toml"), "[browser]\nurl = \"file:///tmp/chrome\"\n").expect("write");
    let (code, all) = run(&[]);
    assert_eq!(code, Some(2), "{all}");
    assert!(all.contains("invalid browser URL") && all.contains("not file:"), "{all}");
    std::fs::remove_file(project.join("saffron.toml")).expect("remove");

    // Nothing listens there: every scenario is blocked with the reason, none ran.
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let (code, all) = run(&["--browser-url", &format!("http://127.0.0.1:{closed_port}")]);
    assert_eq!(code, Some(2), "{all}");
    assert!(all.contains("2 scenario(s): 0 green, 0 yellow, 0 red, 2 blocked"), "{all}");
    assert!(all.contains(&format!("could not connect to the browser at http://127.0.0.1:{closed_port}/")), "{all}");
    // Valid, but this build has no TLS: said so, rather than a failed handshake.
    let (code, all) = run(&["--browser-url", "wss://127.0.0.1:9/devtools/browser/x"]);
    assert_eq!(code, Some(2), "{all}");
    assert!(all.contains("wss:// and https:// are not supported yet (this build has no TLS)"), "{all}");
    // A web server that is not a browser's DevTools.
    let (code, all) = run(&["--browser-url", &server.url()]);
    assert_eq!(code, Some(2), "{all}");
    assert!(all.contains("is this a browser's DevTools address?"), "{all}");
    let websocket = server.url().replace("http://", "ws://");
    let (code, all) = run(&["--browser-url", &websocket]);
    assert_eq!(code, Some(2), "{all}");
    assert!(all.contains("the WebSocket did not open"), "{all}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

/// The card form of the frames lab page is on another site than the page: a remote browser with
/// site isolation (Chromium's default) keeps it in a process the run cannot reach, and the
/// scenario fails saying how to start the browser; started so, the same run is green.
#[test]
fn a_cross_site_frame_needs_a_remote_browser_started_without_site_isolation() {
    let (runtime, server, password) = demo();
    let project = example_project("remote-frames");
    std::fs::write(
        project.join("features/checkout.feature"),
        "Feature: Checkout\n  Scenario: Pay with a card\n    Given I am at the checkout\n    \
         When I pay with the card \"4000 0000 0000 4242\"\n    Then the card ending 4242 is charged\n",
    )
    .expect("write the feature");
    let skeleton = saffron(&project, &["skeleton", "features/checkout.feature:2"], &password).output().expect("runs");
    assert_eq!(skeleton.status.code(), Some(0), "{}", text(&skeleton));
    let path = project.join(".saffron/cache/checkout/pay-with-a-card.json");
    let mut recording: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the skeleton")).expect("JSON");
    let card = serde_json::json!({ "css": ["#card"] });
    recording["steps"][0]["actions"] = serde_json::json!([
        { "type": "goto", "url": "/lab/frames" },
        { "type": "expectVisible", "target": { "role": "heading", "name": "Checkout" } }
    ]);
    recording["steps"][1]["actions"] = serde_json::json!([
        { "type": "fill", "target": { "role": "textbox", "name": "Card number", "frame": card }, "value": "4000 0000 0000 4242" },
        { "type": "click", "target": { "role": "button", "name": "Pay", "frame": card } }
    ]);
    recording["steps"][2]["actions"] = serde_json::json!([
        { "type": "expectText", "target": { "role": "status" }, "textRegex": "^Paid with the card ending 4242 " }
    ]);
    std::fs::write(&path, serde_json::to_string_pretty(&recording).expect("JSON")).expect("write");
    let run = |remote: &RemoteChromium| {
        let args =
            ["run", "--base-url", &server.url(), "--browser-url", &remote.http_url(), "features/checkout.feature"];
        saffron(&project, &args, &password).output().expect("saffron runs")
    };

    let isolating = RemoteChromium::start();
    let output = run(&isolating);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("1 red"), "{all}");
    assert!(
        all.contains(
            "its document is in another process (a cross-site frame): start the browser with \
             --disable-site-isolation-trials --disable-features=IsolateOrigins,site-per-process"
        ),
        "{all}"
    );
    drop(isolating);

    let sharing = RemoteChromium::start_with(&[
        "--disable-site-isolation-trials",
        "--disable-features=IsolateOrigins,site-per-process",
    ]);
    let output = run(&sharing);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}

/// A remote browser that shares this machine's file system saves a scenario's downloads in the
/// folder Saffron gives its context, where the check reads them; a download it cannot save
/// there fails the check saying where it was to go.
#[test]
fn a_remote_browser_on_this_machine_saves_downloads_where_they_are_checked() {
    let (runtime, server, password) = demo();
    let project = example_project("remote-download");
    std::fs::write(
        project.join("features/reports.feature"),
        "Feature: Reports\n  Scenario: Download the report\n    Given I am on the reports page\n    \
         When I download the report\n    Then the report lists Katherine Johnson\n",
    )
    .expect("write the feature");
    let skeleton = saffron(&project, &["skeleton", "features/reports.feature:2"], &password).output().expect("runs");
    assert_eq!(skeleton.status.code(), Some(0), "{}", text(&skeleton));
    let path = project.join(".saffron/cache/reports/download-the-report.json");
    let mut recording: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the skeleton")).expect("JSON");
    recording["steps"][0]["actions"] = serde_json::json!([{ "type": "goto", "url": "/lab/download" }]);
    recording["steps"][1]["actions"] =
        serde_json::json!([{ "type": "click", "target": { "role": "link", "name": "Download the report" } }]);
    recording["steps"][2]["actions"] = serde_json::json!([
        { "type": "expectDownload", "fileName": "report.csv", "contains": "1002,Katherine Johnson" }
    ]);
    std::fs::write(&path, serde_json::to_string_pretty(&recording).expect("JSON")).expect("write");
    let base_url = server.url();
    let run = |browser_url: &str| {
        let args = ["run", "--base-url", &base_url, "--browser-url", browser_url, "features/reports.feature"];
        saffron(&project, &args, &password).output().expect("saffron runs")
    };

    let remote = RemoteChromium::start();
    let output = run(&remote.http_url());
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("1 scenario(s): 1 green"), "{all}");

    // A file the page never hands out: the failure says where the remote browser saves files.
    recording["steps"][2]["actions"] = serde_json::json!([
        { "type": "expectDownload", "fileName": "orders.csv", "timeoutMs": 500 }
    ]);
    std::fs::write(&path, serde_json::to_string_pretty(&recording).expect("JSON")).expect("write");
    let output = run(&remote.http_url());
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains(r#"found "report.csv" (81 bytes) (the remote browser at "#), "{all}");
    assert!(all.contains("which it reaches only when it shares this machine's file system)"), "{all}");
    let _ = std::fs::remove_dir_all(&project);
    let _ = runtime.block_on(server.shutdown());
}
