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
        let cookies: Vec<Cookie> = match &self.browser.inner.firefox {
            // BiDi gives the context's cookies whole: those the page would send are chosen here.
            Some(firefox) => {
                let address =
                    url::Url::parse(url).map_err(|error| BrowserError::Protocol(format!("{url}: {error}")))?;
                let all = crate::firefox::storage::cookies(&firefox.bidi, &self.context_id).await.map_err(protocol)?;
                all.iter()
                    .filter(|cookie| goes_to(cookie, &address))
                    .filter_map(|cookie| serde_json::from_value(cookie.clone()).ok())
                    .collect()
            }
            None => {
                let page = self.active_page()?;
                let answer =
                    cdp::call(&page, "Network.getCookies", json!({ "urls": [url] })).await.map_err(protocol)?;
                let cookies: Cookies =
                    serde_json::from_value(answer).map_err(|error| BrowserError::Protocol(error.to_string()))?;
                cookies.cookies
            }
        };
        let pairs: Vec<String> = cookies.iter().map(|cookie| format!("{}={}", cookie.name, cookie.value)).collect();
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
        if let Some(firefox) = &self.browser.inner.firefox {
            // BiDi names the domain always: a cookie without one is the answering host's.
            if cookie.domain.is_none() {
                let host = url::Url::parse(url).ok().and_then(|address| address.host_str().map(str::to_owned));
                params["domain"] = json!(host.unwrap_or_default());
            }
            let path = params.get("path").cloned().unwrap_or_else(|| json!(default_path(url)));
            params["path"] = path;
            return crate::firefox::storage::set_cookies(&firefox.bidi, &self.context_id, &[params])
                .await
                .map_err(protocol);
        }
        cdp::call(&page, "Network.setCookie", params).await.map_err(protocol)?;
        Ok(())
    }
}

/// Whether the page would send `cookie` (as DevTools writes one) with a request to `address`:
/// its domain matches the host (itself, or a parent domain when the cookie names one), its
/// path is a prefix of the request's at a `/`, and a secure one goes over HTTPS only.
fn goes_to(cookie: &serde_json::Value, address: &url::Url) -> bool {
    let text = |field: &str| cookie.get(field).and_then(serde_json::Value::as_str).unwrap_or_default();
    let host = address.host_str().unwrap_or_default().to_ascii_lowercase();
    let domain = text("domain").to_ascii_lowercase();
    let domain_matches = match domain.strip_prefix('.') {
        Some(parent) => host == parent || host.ends_with(&format!(".{parent}")),
        None => host == domain,
    };
    let path = match text("path") {
        "" => "/",
        path => path,
    };
    let request_path = address.path();
    let path_matches = request_path == path
        || (request_path.starts_with(path) && (path.ends_with('/') || request_path[path.len()..].starts_with('/')));
    let secure = cookie.get("secure").and_then(serde_json::Value::as_bool).unwrap_or(false);
    domain_matches && path_matches && (!secure || address.scheme() == "https")
}

/// A cookie's path when its `Set-Cookie` names none: the request path up to its last `/`.
fn default_path(url: &str) -> String {
    let path = url::Url::parse(url).map(|address| address.path().to_owned()).unwrap_or_default();
    match path.rfind('/') {
        Some(0) | None => "/".to_owned(),
        Some(end) => path[..end].to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_goes_where_the_page_would_send_it() {
        let cookie = |domain: &str, path: &str, secure: bool| json!({ "name": "s", "value": "v", "domain": domain, "path": path, "secure": secure });
        let to = |url: &str| url::Url::parse(url).expect("a url");
        assert!(goes_to(&cookie("127.0.0.1", "/", false), &to("http://127.0.0.1:3000/api/orders")));
        assert!(!goes_to(&cookie("127.0.0.1", "/", false), &to("http://localhost:3000/")));
        assert!(goes_to(&cookie(".shop.test", "/", false), &to("http://api.shop.test/")));
        assert!(!goes_to(&cookie("shop.test", "/", false), &to("http://api.shop.test/")), "host-only");
        assert!(goes_to(&cookie("shop.test", "/api", false), &to("http://shop.test/api/orders")));
        assert!(!goes_to(&cookie("shop.test", "/api", false), &to("http://shop.test/apiary")));
        assert!(!goes_to(&cookie("shop.test", "/", true), &to("http://shop.test/")), "secure over HTTP");
        assert!(goes_to(&cookie("shop.test", "/", true), &to("https://shop.test/")));
        assert_eq!(default_path("http://shop.test/api/token"), "/api");
        assert_eq!(default_path("http://shop.test/token"), "/");
    }
}
