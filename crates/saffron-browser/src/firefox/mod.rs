//! Firefox over WebDriver BiDi, the W3C protocol Firefox speaks natively (no geckodriver): it is
//! launched headless with a fresh profile that the same watchdog as Chromium's ties to this
//! process's life, and each context is a BiDi user context (its own cookies, storage and
//! downloads) with a window of its own.
//!
//! A [`crate::Browser`] launched with [`crate::Engine::Firefox`] keeps a [`Driver`]; its
//! contexts are observed by `context.rs`, and their tabs ([`Tab`]) carry the page functions
//! (`script.rs`) and input (`input.rs`) the rest of the crate calls through [`crate::page::Page`].

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::bidi::{Bidi, BidiError};
use crate::cdp::CdpFail;
use crate::error::BrowserError;
use crate::profile::{PROFILE_ENV, Profile};

mod context;
mod input;
mod script;
pub(crate) mod storage;
mod tab;

pub(crate) use context::open_context;
pub(crate) use script::{handle as element_handle, parse_handle};

pub(crate) use tab::{FrameDocument, Tab};

/// Where Debian's `firefox-esr` package puts Firefox.
pub const DEFAULT_FIREFOX: &str = "/usr/bin/firefox-esr";

/// Overrides where Firefox is looked for.
pub const FIREFOX_ENV: &str = "SAFFRON_FIREFOX";

/// How long Firefox may take to open its BiDi endpoint.
const START_PATIENCE: Duration = Duration::from_secs(60);

/// Preferences for a profile that only serves tests: nothing phones home, nothing greets the
/// user, nothing updates underneath a run.
const PREFERENCES: &str = r#"
user_pref("app.update.disabledForTesting", true);
user_pref("browser.aboutwelcome.enabled", false);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.tabs.warnOnClose", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("services.settings.server", "data:,");
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("extensions.update.enabled", false);
user_pref("remote.active-protocols", 1);
"#;

/// The Firefox executable: `configured`, else the first of `$SAFFRON_FIREFOX` and
/// [`DEFAULT_FIREFOX`] that exists.
pub fn find_firefox(configured: Option<&std::path::Path>) -> Result<PathBuf, BrowserError> {
    let candidates: Vec<PathBuf> = match configured {
        Some(path) => vec![path.to_path_buf()],
        None => std::env::var_os(FIREFOX_ENV)
            .map(PathBuf::from)
            .into_iter()
            .chain(std::iter::once(PathBuf::from(DEFAULT_FIREFOX)))
            .collect(),
    };
    candidates.iter().find(|path| path.is_file()).cloned().ok_or(BrowserError::FirefoxNotFound { searched: candidates })
}

/// The largest response body Firefox keeps for checks.
const BODY_LIMIT: u64 = 8 * 1024 * 1024;

/// The events every context follows (see `context.rs`).
const EVENTS: &[&str] = &[
    "browsingContext.contextCreated",
    "browsingContext.contextDestroyed",
    "browsingContext.userPromptOpened",
    "network.beforeRequestSent",
    "network.responseCompleted",
    "network.fetchError",
    "log.entryAdded",
    "input.fileDialogOpened",
    "browsingContext.downloadWillBegin",
    "browsingContext.downloadEnd",
    "browsingContext.navigationStarted",
    "browsingContext.navigationCommitted",
    "browsingContext.navigationFailed",
    "browsingContext.fragmentNavigated",
];

/// A running Firefox's process and its BiDi session: what a [`crate::Browser`] keeps of it.
pub(crate) struct Driver {
    pub(crate) bidi: Arc<Bidi>,
    process: std::sync::Mutex<Option<Child>>,
    pub(crate) version: String,
}

/// Starts Firefox with a fresh profile (`profile`, watched already) and opens a BiDi session
/// on it that follows [`EVENTS`].
pub(crate) async fn launch(
    executable: &std::path::Path,
    headless: bool,
    profile: &Profile,
) -> Result<Driver, BrowserError> {
    let failed = |message: String| BrowserError::FirefoxLaunch { executable: executable.to_path_buf(), message };
    std::fs::write(profile.path().join("user.js"), PREFERENCES)
        .map_err(|error| failed(format!("cannot write its preferences: {error}")))?;
    let mut command = Command::new(executable);
    if headless {
        command.arg("--headless");
    }
    let mut process = command
        .args(["--no-remote", "--profile"])
        .arg(profile.path())
        .args(["--remote-debugging-port", "0"])
        .env(PROFILE_ENV, profile.path())
        .env("MOZ_CRASHREPORTER_DISABLE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| failed(error.to_string()))?;
    let stderr = process.stderr.take().ok_or_else(|| failed("its output cannot be read".into()))?;
    let endpoint = match tokio::time::timeout(START_PATIENCE, endpoint_of(stderr)).await {
        Ok(Some(endpoint)) => endpoint,
        Ok(None) => {
            let _ = process.kill();
            return Err(failed("it exited before opening its WebDriver BiDi endpoint".into()));
        }
        Err(_) => {
            let _ = process.kill();
            return Err(failed(format!("no WebDriver BiDi endpoint within {} s", START_PATIENCE.as_secs())));
        }
    };
    let bidi = Bidi::connect(&format!("{endpoint}/session")).await.map_err(|error| failed(error.to_string()))?;
    let capabilities = json!({ "capabilities": { "alwaysMatch": {
        "acceptInsecureCerts": true,
        // Dialogs are Saffron's to answer, as in Chromium.
        "unhandledPromptBehavior": { "default": "ignore" },
    } } });
    let session = bidi.call("session.new", capabilities).await.map_err(|error| failed(error.to_string()))?;
    let version =
        session.pointer("/capabilities/browserVersion").and_then(Value::as_str).unwrap_or("unknown").to_owned();
    bidi.call("session.subscribe", json!({ "events": EVENTS }))
        .await
        .map_err(|error| failed(format!("it refused to report events: {error}")))?;
    // Bodies are kept for checks that read them (a `waitForResponse` with a body pattern),
    // as Chromium keeps them until its tab navigates.
    bidi.call("network.addDataCollector", json!({ "dataTypes": ["response"], "maxEncodedDataSize": BODY_LIMIT }))
        .await
        .map_err(|error| failed(format!("it refused to keep response bodies: {error}")))?;
    Ok(Driver { bidi: Arc::new(bidi), process: std::sync::Mutex::new(Some(process)), version })
}

impl Driver {
    /// The process id, for a supervisor.
    pub(crate) fn process_id(&self) -> Option<u32> {
        self.process.lock().ok()?.as_ref().map(Child::id)
    }

    /// Ends the session and Firefox (asked, then made to).
    pub(crate) async fn close(&self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.bidi.call("browser.close", json!({}))).await;
        let process = self.process.lock().ok().and_then(|mut process| process.take());
        if let Some(mut process) = process {
            let _ = tokio::task::spawn_blocking(move || wait_or_kill(&mut process, Duration::from_secs(5))).await;
        }
    }
}

/// Waits up to `limit` for `child` to exit, then ends it.
fn wait_or_kill(child: &mut Child, limit: Duration) {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The `ws://HOST:PORT` Firefox prints on its standard error ("WebDriver BiDi listening on
/// ws://127.0.0.1:PORT"); its later output is drained on the same thread so that Firefox never
/// blocks on a full pipe.
async fn endpoint_of(stderr: std::process::ChildStderr) -> Option<String> {
    let (found, endpoint) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("saffron-firefox-output".into())
        .spawn(move || {
            let mut found = Some(found);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(endpoint) = line.split("WebDriver BiDi listening on ").nth(1)
                    && let Some(sender) = found.take()
                {
                    let _ = sender.send(endpoint.trim().to_owned());
                }
            }
        })
        .ok()?;
    endpoint.await.ok()
}

/// A failed BiDi call, sorted as a failed DevTools call is. A frame that is gone (`no such
/// frame`) is the page moving on, as an element that is gone is: a closed tab is seen by its
/// `contextDestroyed`.
pub(crate) fn fail(error: BidiError) -> CdpFail {
    match error {
        BidiError::Closed(why) => CdpFail::Dead(why),
        BidiError::Timeout(_) => CdpFail::Timeout,
        BidiError::Command { error, message } => CdpFail::Protocol(format!("{error}: {message}")),
    }
}
