//! A browser that runs elsewhere: its DevTools endpoint, checked before anything connects, and
//! the WebSocket address an `http://` endpoint stands for.

use std::time::Duration;

use serde_json::Value;
use url::Url;

/// The schemes a remote browser's endpoint may have: its DevTools WebSocket, or the HTTP server
/// that names it (`/json/version`).
const SCHEMES: &[&str] = &["ws", "wss", "http", "https"];

/// The address of a running browser's DevTools endpoint: `ws://` or `wss://` for its browser
/// WebSocket (`ws://HOST:PORT/devtools/browser/ID`), `http://` or `https://` for the server that
/// names it (`http://HOST:PORT`, resolved through `/json/version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    url: Url,
}

/// Why a text is not a remote browser's endpoint; each says how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Nothing, or only white space.
    #[error("the browser URL is empty: give the remote browser's DevTools address, {EXAMPLE}")]
    Empty,
    /// `HOST:PORT` without `ws://` or `http://`.
    #[error(
        "{text:?} has no scheme: write the browser's DevTools address in full, e.g. http://{trimmed} \
         or ws://{trimmed}/devtools/browser/<id>"
    )]
    NoScheme {
        /// The text as given.
        text: String,
        /// The text without surrounding white space.
        trimmed: String,
    },
    /// Not a URL at all.
    #[error("{text:?} is not a browser URL ({source}): give the remote browser's DevTools address, {EXAMPLE}")]
    NotUrl {
        /// The text as given.
        text: String,
        /// What the URL parser found.
        source: url::ParseError,
    },
    /// A URL of another scheme.
    #[error("{text:?}: a browser URL must be ws://, wss://, http:// or https://, not {scheme}: ({EXAMPLE})")]
    Scheme {
        /// The text as given.
        text: String,
        /// Its scheme.
        scheme: String,
    },
    /// A URL without a host.
    #[error("{text:?} has no host: write it as {scheme}://HOST:PORT[/PATH]")]
    NoHost {
        /// The text as given.
        text: String,
        /// Its scheme.
        scheme: String,
    },
}

const EXAMPLE: &str = "e.g. ws://127.0.0.1:9222/devtools/browser/<id> or http://127.0.0.1:9222";

/// Why the browser WebSocket an `http://` endpoint stands for could not be found.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DiscoveryError {
    #[error("cannot make an HTTP client: {0}")]
    Client(reqwest::Error),
    #[error("{version} did not answer: {causes}")]
    NoAnswer { version: String, causes: String },
    #[error("{version} answered {status}: is this a browser's DevTools address?")]
    Status { version: String, status: reqwest::StatusCode },
    #[error("{version} broke off its answer: {causes}")]
    BrokenOff { version: String, causes: String },
    #[error("{version} did not name a webSocketDebuggerUrl: is this a browser's DevTools address?")]
    Unnamed { version: String },
    #[error("{version} named a webSocketDebuggerUrl that is not a URL ({source})")]
    NamedNotUrl { version: String, source: url::ParseError },
}

impl Endpoint {
    /// Checks `text` as a remote browser's endpoint; the error says what is wrong and how to
    /// write it.
    pub fn parse(text: &str) -> Result<Endpoint, EndpointError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(EndpointError::Empty);
        }
        if !trimmed.contains("://") {
            return Err(EndpointError::NoScheme { text: text.to_owned(), trimmed: trimmed.to_owned() });
        }
        let url = Url::parse(trimmed).map_err(|source| EndpointError::NotUrl { text: text.to_owned(), source })?;
        if !SCHEMES.contains(&url.scheme()) {
            return Err(EndpointError::Scheme { text: text.to_owned(), scheme: url.scheme().to_owned() });
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(EndpointError::NoHost { text: text.to_owned(), scheme: url.scheme().to_owned() });
        }
        Ok(Endpoint { url })
    }

    /// The endpoint as it may be shown: without credentials, and with any query (a browser
    /// service's token, say) left out.
    pub fn shown(&self) -> String {
        let mut shown = self.url.clone();
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        let had_query = shown.query().is_some();
        shown.set_query(None);
        shown.set_fragment(None);
        if had_query { format!("{shown}?…") } else { shown.to_string() }
    }

    /// Whether reaching it needs TLS, which this build does not include (no TLS stack is
    /// compiled in: neither chromiumoxide's WebSocket nor its HTTP client has one enabled).
    pub(crate) fn needs_tls(&self) -> bool {
        matches!(self.url.scheme(), "wss" | "https")
    }

    /// The browser WebSocket to connect to: the endpoint itself for `ws://` and `wss://`; for
    /// `http://` and `https://`, the `webSocketDebuggerUrl` its `/json/version` answers with.
    pub(crate) async fn websocket_url(&self, limit: Duration) -> Result<String, DiscoveryError> {
        if matches!(self.url.scheme(), "ws" | "wss") {
            return Ok(self.url.to_string());
        }
        let version = self.version_url();
        install_crypto_provider();
        let client = reqwest::Client::builder().timeout(limit).build().map_err(DiscoveryError::Client)?;
        let shown = Endpoint { url: version.clone() }.shown();
        let response = client
            .get(version)
            .send()
            .await
            .map_err(|error| DiscoveryError::NoAnswer { version: shown.clone(), causes: with_causes(error) })?;
        let status = response.status();
        if !status.is_success() {
            return Err(DiscoveryError::Status { version: shown, status });
        }
        let body = response
            .bytes()
            .await
            .map_err(|error| DiscoveryError::BrokenOff { version: shown.clone(), causes: with_causes(error) })?;
        let named = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|answer| answer.get("webSocketDebuggerUrl")?.as_str().map(str::to_owned))
            .ok_or_else(|| DiscoveryError::Unnamed { version: shown.clone() })?;
        let named = Url::parse(&named).map_err(|source| DiscoveryError::NamedNotUrl { version: shown, source })?;
        Ok(self.reachable(named).to_string())
    }

    /// `/json/version` under the endpoint's path (the endpoint may name it already).
    fn version_url(&self) -> Url {
        let mut version = self.url.clone();
        let path = version.path().trim_end_matches('/').to_owned();
        if !path.ends_with("/json/version") {
            version.set_path(&format!("{path}/json/version"));
        }
        version
    }

    /// The named WebSocket as this machine reaches it. A browser behind a proxy or in a
    /// container may name itself by an address that is loopback on its own machine only: such a
    /// host is replaced by the endpoint's, and `https` asks for `wss`.
    fn reachable(&self, mut named: Url) -> Url {
        let local = |url: &Url| match url.host() {
            Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(address)) => address.is_loopback() || address.is_unspecified(),
            Some(url::Host::Ipv6(address)) => address.is_loopback() || address.is_unspecified(),
            None => true,
        };
        if local(&named) && !local(&self.url) {
            let _ = named.set_host(self.url.host_str());
            let _ = named.set_port(self.url.port_or_known_default());
        }
        if self.url.scheme() == "https" && named.scheme() == "ws" {
            let _ = named.set_scheme("wss");
        }
        // The service's token, when it takes one in the query, goes along.
        if named.query().is_none()
            && let Some(query) = self.url.query()
        {
            named.set_query(Some(query));
        }
        named
    }
}

/// The error and each of its causes ("error sending request" alone says nothing), without the
/// URL, which may hold a browser service's token.
/// reqwest, as the workspace builds it (`rustls-no-provider`, for saffron-agent), panics when it
/// builds a client before a process-wide crypto provider is installed: ring, once. A provider
/// the embedding program installed first is kept.
fn install_crypto_provider() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
    });
}

fn with_causes(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_devtools_schemes_with_a_host_are_endpoints() {
        for good in
            ["ws://127.0.0.1:9222/devtools/browser/abc", "wss://grid.example/x?token=s", "http://h:9222", "https://h/"]
        {
            assert!(Endpoint::parse(good).is_ok(), "{good}");
        }
        let problem = |text: &str| Endpoint::parse(text).expect_err(text).to_string();
        assert!(problem("").contains("empty"));
        assert!(problem("   ").contains("empty"));
        assert!(problem("127.0.0.1:9222").contains("has no scheme"));
        assert!(problem("localhost:9222").contains("e.g. http://localhost:9222"));
        assert!(problem("file:///tmp/x").contains("not file:"));
        assert!(problem("ftp://h/").contains("not ftp:"));
        assert!(problem("not a url").contains("has no scheme"));
        assert!(problem("http://exa mple").contains("is not a browser URL"));
        assert!(problem("http://").contains("browser URL"));
    }

    #[test]
    fn the_shown_endpoint_keeps_no_secret() {
        let endpoint = Endpoint::parse("wss://user:pw@grid.example:443/chrome?token=s3cret").expect("valid");
        assert_eq!(endpoint.shown(), "wss://grid.example/chrome?…");
        assert!(!endpoint.to_string().contains("s3cret"));
    }

    #[test]
    fn json_version_is_looked_for_under_the_endpoint() {
        let version = |text: &str| Endpoint::parse(text).expect("valid").version_url().to_string();
        assert_eq!(version("http://h:9222"), "http://h:9222/json/version");
        assert_eq!(version("http://h:9222/"), "http://h:9222/json/version");
        assert_eq!(version("http://h/chrome/"), "http://h/chrome/json/version");
        assert_eq!(version("http://h:9222/json/version"), "http://h:9222/json/version");
    }

    #[test]
    fn a_loopback_websocket_is_reached_through_the_endpoints_host() {
        let named = |endpoint: &str, named: &str| {
            let named = Url::parse(named).expect("a URL");
            Endpoint::parse(endpoint).expect("valid").reachable(named).to_string()
        };
        assert_eq!(
            named("http://10.0.0.5:9222", "ws://127.0.0.1:9222/devtools/browser/a"),
            "ws://10.0.0.5:9222/devtools/browser/a"
        );
        assert_eq!(
            named("https://grid.example?token=t", "ws://localhost:3000/devtools/browser/a"),
            "wss://grid.example/devtools/browser/a?token=t"
        );
        assert_eq!(
            named("http://127.0.0.1:9222", "ws://127.0.0.1:9222/devtools/browser/a"),
            "ws://127.0.0.1:9222/devtools/browser/a"
        );
    }
}
