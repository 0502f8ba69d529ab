//! Firefox over WebDriver BiDi, the W3C protocol Firefox speaks natively (no geckodriver): it is
//! launched headless with a fresh profile that the same watchdog as Chromium's ties to this
//! process's life, and each context is a BiDi user context (its own cookies and storage) with
//! one tab.
//!
//! This is the engine's first layer: launching, contexts, navigation and script evaluation.
//! Replaying actions in it (the locator ladder, actionability, input) is not wired yet: the
//! runner replays in Chromium only (docs/browsers.md).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::bidi::{Bidi, BidiError};
use crate::error::BrowserError;
use crate::profile::{PROFILE_ENV, Profile};

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

/// Where to find Firefox and how to show it.
#[derive(Debug, Clone, Default)]
pub struct FirefoxConfig {
    /// The executable; `None`: `$SAFFRON_FIREFOX`, then [`DEFAULT_FIREFOX`].
    pub path: Option<PathBuf>,
    /// Show a window (`--headed`).
    pub headed: bool,
}

/// The Firefox executable `config` names, or the first of `$SAFFRON_FIREFOX` and
/// [`DEFAULT_FIREFOX`] that exists.
pub fn find_firefox(config: &FirefoxConfig) -> Result<PathBuf, BrowserError> {
    let candidates: Vec<PathBuf> = match &config.path {
        Some(path) => vec![path.clone()],
        None => std::env::var_os(FIREFOX_ENV)
            .map(PathBuf::from)
            .into_iter()
            .chain(std::iter::once(PathBuf::from(DEFAULT_FIREFOX)))
            .collect(),
    };
    candidates.iter().find(|path| path.is_file()).cloned().ok_or(BrowserError::FirefoxNotFound { searched: candidates })
}

/// A running Firefox and its BiDi session.
pub struct Firefox {
    bidi: Arc<Bidi>,
    process: Child,
    version: String,
    /// Dropped last: its watchdog ends whatever of Firefox is still running and removes it.
    profile: Profile,
}

impl std::fmt::Debug for Firefox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Firefox").field("version", &self.version).field("profile", &self.profile.path()).finish()
    }
}

impl Firefox {
    /// Starts Firefox with a fresh profile and opens a BiDi session on it.
    pub async fn launch(config: &FirefoxConfig) -> Result<Firefox, BrowserError> {
        let executable = find_firefox(config)?;
        let failed = |message: String| BrowserError::FirefoxLaunch { executable: executable.clone(), message };
        let profile = Profile::create_named(&std::env::temp_dir(), crate::profile::FIREFOX_PREFIX)
            .map_err(|error| failed(format!("cannot make its profile folder: {error}")))?;
        std::fs::write(profile.path().join("user.js"), PREFERENCES)
            .map_err(|error| failed(format!("cannot write its preferences: {error}")))?;
        let mut command = Command::new(&executable);
        if !config.headed {
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
        Ok(Firefox { bidi: Arc::new(bidi), process, version, profile })
    }

    /// Its profile folder (removed when it closes).
    pub fn profile(&self) -> &std::path::Path {
        self.profile.path()
    }

    /// Why the connection to Firefox ended, if it did (Firefox crashed or was killed).
    pub fn lost_connection(&self) -> Option<String> {
        self.bidi.closed()
    }

    /// The version Firefox says it is (`153.8.0`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// A new isolated context (its own cookies and storage) with one tab; relative addresses
    /// go to `base_url`.
    pub async fn new_context(&self, base_url: &str) -> Result<FirefoxContext, BrowserError> {
        let user_context = self.bidi.call("browser.createUserContext", json!({})).await.map_err(closed_or)?;
        let user_context = field(&user_context, "/userContext")?;
        let tab = self
            .bidi
            .call("browsingContext.create", json!({ "type": "tab", "userContext": user_context }))
            .await
            .map_err(closed_or)?;
        let tab = field(&tab, "/context")?;
        Ok(FirefoxContext { bidi: Arc::clone(&self.bidi), user_context, tab, base_url: base_url.to_owned() })
    }

    /// Ends the session and Firefox, and removes its profile.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.bidi.call("browser.close", json!({}))).await;
        let _ = tokio::task::spawn_blocking(move || {
            wait_or_kill(&mut self.process, Duration::from_secs(5));
            self.profile.release();
        })
        .await;
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

fn closed_or(error: BidiError) -> BrowserError {
    match error {
        BidiError::Closed(why) => BrowserError::Closed(why),
        other => BrowserError::Protocol(other.to_string()),
    }
}

fn field(answer: &Value, pointer: &str) -> Result<String, BrowserError> {
    answer
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| BrowserError::Protocol(format!("the browser's answer has no {pointer}: {answer}")))
}

/// One isolated context of a [`Firefox`] and its tab.
pub struct FirefoxContext {
    bidi: Arc<Bidi>,
    user_context: String,
    tab: String,
    base_url: String,
}

impl FirefoxContext {
    /// Loads `url` (relative ones against the base URL) and waits for the load to complete;
    /// the address the tab is at then.
    pub async fn goto(&self, url: &str) -> Result<String, BrowserError> {
        let absolute = crate::url::resolve_url(&self.base_url, url);
        let params = json!({ "context": self.tab, "url": absolute, "wait": "complete" });
        let answer = self.bidi.call("browsingContext.navigate", params).await.map_err(closed_or)?;
        field(&answer, "/url")
    }

    /// Evaluates `expression` in the tab's page and gives its value as JSON (it must be
    /// serializable by `JSON.stringify`; `undefined` is `null`).
    pub async fn evaluate(&self, expression: &str) -> Result<Value, BrowserError> {
        let wrapped = format!("JSON.stringify(({expression}) ?? null)");
        let params = json!({
            "expression": wrapped,
            "target": { "context": self.tab },
            "awaitPromise": true,
        });
        let answer = self.bidi.call("script.evaluate", params).await.map_err(closed_or)?;
        if answer.get("type").and_then(Value::as_str) == Some("exception") {
            let text = answer.pointer("/exceptionDetails/text").and_then(Value::as_str).unwrap_or("an exception");
            return Err(BrowserError::Protocol(format!("the page threw: {text}")));
        }
        let text = answer.pointer("/result/value").and_then(Value::as_str).unwrap_or("null");
        serde_json::from_str(text).map_err(|error| BrowserError::Protocol(error.to_string()))
    }

    /// The cookies of this context, as name and value.
    pub async fn cookies(&self) -> Result<Vec<(String, String)>, BrowserError> {
        let partition = json!({ "partition": { "type": "storageKey", "userContext": self.user_context } });
        let answer = self.bidi.call("storage.getCookies", partition).await.map_err(closed_or)?;
        let cookies = answer.get("cookies").and_then(Value::as_array).cloned().unwrap_or_default();
        Ok(cookies
            .iter()
            .filter_map(|cookie| {
                let name = cookie.get("name")?.as_str()?.to_owned();
                let value = cookie.pointer("/value/value")?.as_str()?.to_owned();
                Some((name, value))
            })
            .collect())
    }

    /// Closes the tab and removes the user context with everything it stored.
    pub async fn close(self) {
        let _ = self.bidi.call("browsingContext.close", json!({ "context": self.tab })).await;
        let _ = self.bidi.call("browser.removeUserContext", json!({ "userContext": self.user_context })).await;
    }
}
