//! The context's cookies, for requests Saffron sends on its behalf: an API call after a sign-in
//! in the page carries the page's session, and what the API sets is the page's from then on.

use serde::Deserialize;
use serde_json::json;

use crate::cdp;
use crate::context::{Context, protocol};
use crate::error::BrowserError;

/// A cookie a response set, as its `Set-Cookie` header says it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetCookie {
    /// The cookie's name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// `Domain`: the hosts it goes to; the response's host only when absent.
    pub domain: Option<String>,
    /// `Path`: the paths it goes to.
    pub path: Option<String>,
    /// `Secure`: sent over HTTPS only.
    pub secure: bool,
    /// `HttpOnly`: out of the page's scripts' reach.
    pub http_only: bool,
    /// `Strict`, `Lax` or `None`.
    pub same_site: Option<String>,
    /// Seconds since the epoch; a session cookie when absent.
    pub expires: Option<i64>,
}

#[derive(Deserialize)]
struct Cookies {
    cookies: Vec<Cookie>,
}

#[derive(Deserialize)]
struct Cookie {
    name: String,
    value: String,
}

impl Context {
    /// The `Cookie` header the context's page would send to `url`, if it would send one.
    pub async fn cookie_header(&self, url: &str) -> Result<Option<String>, BrowserError> {
        let page = self.active_page()?;
        let answer = cdp::call(&page, "Network.getCookies", json!({ "urls": [url] })).await.map_err(protocol)?;
        let cookies: Cookies =
            serde_json::from_value(answer).map_err(|error| BrowserError::Protocol(error.to_string()))?;
        let pairs: Vec<String> =
            cookies.cookies.iter().map(|cookie| format!("{}={}", cookie.name, cookie.value)).collect();
        Ok((!pairs.is_empty()).then(|| pairs.join("; ")))
    }

    /// Keeps `cookie`, set by the answer from `url`, in the context, as the page's own request
    /// would have.
    pub async fn store_cookie(&self, url: &str, cookie: &SetCookie) -> Result<(), BrowserError> {
        let page = self.active_page()?;
        let mut params = json!({
            "name": cookie.name, "value": cookie.value, "url": url,
            "secure": cookie.secure, "httpOnly": cookie.http_only,
        });
        if let Some(domain) = &cookie.domain {
            params["domain"] = json!(domain);
        }
        if let Some(path) = &cookie.path {
            params["path"] = json!(path);
        }
        if let Some(same_site) = &cookie.same_site {
            params["sameSite"] = json!(same_site);
        }
        if let Some(expires) = cookie.expires {
            params["expires"] = json!(expires);
        }
        cdp::call(&page, "Network.setCookie", params).await.map_err(protocol)?;
        Ok(())
    }
}
