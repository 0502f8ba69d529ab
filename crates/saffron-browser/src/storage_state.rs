//! A context's signed-in state, saved from one context and restored into another: its cookies,
//! the `localStorage` of the origin it ended on, and that address. What a sign-in leaves behind
//! is there (a session cookie, a token a single-page app keeps), so a later context that restores
//! it starts where the sign-in ended, without performing it.
//!
//! The state holds credentials: it lives in memory only, and its `Debug` shows no value.

use serde_json::{Value, json};

use crate::cdp;
use crate::context::{Context, protocol};
use crate::error::BrowserError;

/// What a context holds of a sign-in.
#[derive(Clone, PartialEq)]
pub struct StorageState {
    /// Every cookie of the context, as `Storage.getCookies` gives them.
    cookies: Vec<Value>,
    /// The origin the context ended on, and its `localStorage` (key, value).
    origin: String,
    local_storage: Vec<(String, String)>,
    /// The address the context ended on.
    url: String,
}

impl std::fmt::Debug for StorageState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageState")
            .field("cookies", &self.cookies.len())
            .field("origin", &self.origin)
            .field("local_storage", &self.local_storage.len())
            .field("url", &self.url)
            .finish()
    }
}

impl StorageState {
    /// The address the context ended on.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A state made of its parts: cookies by name and value (for the origin's host), the
    /// origin, its `localStorage`, and the address it ended on.
    pub fn from_parts(
        cookies: Vec<(String, String)>,
        origin: String,
        local_storage: Vec<(String, String)>,
        url: String,
    ) -> StorageState {
        let host = url::Url::parse(&origin).ok().and_then(|origin| origin.host_str().map(str::to_owned));
        let cookies = cookies
            .into_iter()
            .map(|(name, value)| json!({ "name": name, "value": value, "domain": host, "path": "/" }))
            .collect();
        StorageState { cookies, origin, local_storage, url }
    }

    /// Its cookies, by name and value.
    pub fn cookies(&self) -> impl Iterator<Item = (&str, &str)> {
        self.cookies.iter().filter_map(|cookie| Some((cookie.get("name")?.as_str()?, cookie.get("value")?.as_str()?)))
    }

    /// The `localStorage` of the origin it ended on, by key and value.
    pub fn local_storage(&self) -> impl Iterator<Item = (&str, &str)> {
        self.local_storage.iter().map(|(key, value)| (key.as_str(), value.as_str()))
    }
}

/// The fields of a cookie `Storage.setCookies` takes back.
const COOKIE_FIELDS: [&str; 9] =
    ["name", "value", "domain", "path", "secure", "httpOnly", "sameSite", "expires", "partitionKey"];

impl Context {
    /// The context's state now: its cookies, and the `localStorage` of its active tab's origin.
    pub async fn storage_state(&self) -> Result<StorageState, BrowserError> {
        let cookies = match &self.browser.inner.firefox {
            Some(firefox) => {
                crate::firefox::storage::cookies(&firefox.bidi, &self.context_id).await.map_err(protocol)?
            }
            None => {
                let params = json!({ "browserContextId": self.context_id });
                let answer = self.browser.call("Storage.getCookies", params).await.map_err(protocol)?;
                answer.get("cookies").and_then(Value::as_array).cloned().unwrap_or_default()
            }
        };
        let url = self.url().await?;
        let page = self.active_page()?;
        let read = "JSON.stringify([location.origin, Object.entries(localStorage)])";
        let entries = cdp::evaluate(&page, read, "saffron-storage", true).await.map_err(protocol)?;
        let text = entries.value.as_ref().and_then(Value::as_str).unwrap_or("[\"\", []]");
        let (origin, local_storage): (String, Vec<(String, String)>) =
            serde_json::from_str(text).map_err(|error| BrowserError::Protocol(error.to_string()))?;
        Ok(StorageState { cookies, origin, local_storage, url })
    }

    /// Puts `state` into this context: its cookies, then its address, loaded with the origin's
    /// `localStorage` in place before any script of the page runs.
    pub async fn restore_storage_state(&mut self, state: &StorageState) -> Result<(), BrowserError> {
        let cookies: Vec<Value> = state
            .cookies
            .iter()
            .map(|cookie| {
                let fields =
                    COOKIE_FIELDS.iter().filter_map(|field| Some((field.to_string(), cookie.get(*field)?.clone())));
                // A session cookie says `expires: -1`, which `setCookies` reads as expired.
                Value::Object(
                    fields
                        .filter(|(name, value)| name != "expires" || value.as_f64().is_some_and(|at| at > 0.0))
                        .collect(),
                )
            })
            .collect();
        match &self.browser.inner.firefox {
            Some(firefox) => crate::firefox::storage::set_cookies(&firefox.bidi, &self.context_id, &cookies)
                .await
                .map_err(protocol)?,
            None if !cookies.is_empty() => {
                let params = json!({ "cookies": cookies, "browserContextId": self.context_id });
                self.browser.call("Storage.setCookies", params).await.map_err(protocol)?;
            }
            None => {}
        }
        let page = self.active_page()?;
        let entries =
            serde_json::to_string(&state.local_storage).map_err(|error| BrowserError::Protocol(error.to_string()))?;
        let origin = serde_json::to_string(&state.origin).map_err(|error| BrowserError::Protocol(error.to_string()))?;
        let source = format!(
            "if (location.origin === {origin}) {{ for (const [key, value] of {entries}) {{ localStorage.setItem(key, value); }} }}"
        );
        let firefox = self.browser.inner.firefox.as_ref().map(|firefox| firefox.bidi.clone());
        let added = match &firefox {
            Some(bidi) => {
                json!(crate::firefox::storage::add_preload(bidi, &self.context_id, &source).await.map_err(protocol)?)
            }
            None => cdp::call(&page, "Page.addScriptToEvaluateOnNewDocument", json!({ "source": source }))
                .await
                .map_err(protocol)?
                .get("identifier")
                .cloned()
                .unwrap_or_default(),
        };
        let goto = saffron_recording::Action::Goto { url: state.url.clone(), timeout_ms: None };
        let loaded = self.perform(&goto, None).await;
        // Once: a later load in the scenario keeps what the page itself wrote since.
        match (&firefox, added.as_str()) {
            (Some(bidi), Some(script)) => crate::firefox::storage::remove_preload(bidi, script).await,
            (None, _) if !added.is_null() => {
                let params = json!({ "identifier": added });
                let _ = cdp::call(&page, "Page.removeScriptToEvaluateOnNewDocument", params).await;
            }
            _ => {}
        }
        loaded.map(|_| ()).map_err(|failure| BrowserError::Protocol(failure.message))
    }
}
