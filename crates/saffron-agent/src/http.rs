//! One JSON endpoint of a provider: POST with retries, and every HTTP outcome classified into
//! an answer body or a [`ProviderError`].

use std::sync::Once;
use std::time::{Duration, Instant, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use serde_json::Value;

use crate::provider::{HttpSettings, ProviderError};
use crate::retry::{Failure, RetryPolicy, parse_retry_after, with_retries};

/// The longest vendor message kept in an error: enough to say what went wrong.
const MESSAGE_LIMIT: usize = 500;

pub(crate) struct Endpoint {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    retry: RetryPolicy,
    request_timeout: Duration,
    /// The variable the key came from, for the hint of an auth error.
    key_env: Option<String>,
}

impl Endpoint {
    /// `headers` are sent with every call; values marked sensitive are never printed by reqwest.
    pub(crate) fn new(
        url: String,
        headers: Vec<(&'static str, String, bool)>,
        key_env: Option<String>,
        settings: &HttpSettings,
    ) -> Result<Endpoint, ProviderError> {
        install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .timeout(settings.request_timeout)
            .connect_timeout(settings.connect_timeout)
            .user_agent(concat!("saffron/", env!("CARGO_PKG_VERSION")));
        // HTTP(S)_PROXY is honoured, except for a server on this machine (a local model), which
        // a proxy elsewhere cannot reach.
        if is_loopback(&url) {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|error| ProviderError::Setup(error.to_string()))?;
        let mut header_map = HeaderMap::new();
        for (name, value, sensitive) in headers {
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                // Never echo the value: it may be the key.
                ProviderError::Setup(format!("the value for the header `{name}` has characters HTTP does not allow"))
            })?;
            value.set_sensitive(sensitive);
            header_map.insert(HeaderName::from_static(name), value);
        }
        Ok(Endpoint {
            client,
            url,
            headers: header_map,
            retry: settings.retry.clone(),
            request_timeout: settings.request_timeout,
            key_env,
        })
    }

    /// POSTs `body` and returns the answer's body and the time it took, retries included.
    pub(crate) async fn post(&self, body: &Value) -> Result<(Vec<u8>, Duration), ProviderError> {
        let started = Instant::now();
        let answer = with_retries(&self.retry, || self.attempt(body)).await?;
        Ok((answer, started.elapsed()))
    }

    async fn attempt(&self, body: &Value) -> Result<Vec<u8>, Failure> {
        let sent = self.client.post(&self.url).headers(self.headers.clone()).json(body).send().await;
        let response = sent.map_err(|error| self.transport_failure(&error))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| parse_retry_after(value, SystemTime::now()));
        let bytes = response.bytes().await.map_err(|error| self.transport_failure(&error))?.to_vec();
        if status.is_success() {
            return Ok(bytes);
        }
        let error = VendorError::read(&bytes);
        let message = error.message.clone();
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(Failure::Final(ProviderError::Auth {
                status: status.as_u16(),
                message,
                key_env: self.key_env.clone(),
            })),
            StatusCode::TOO_MANY_REQUESTS if error.quota_spent => {
                Err(Failure::Unavailable(format!("HTTP 429, the account's quota is spent: {message}")))
            }
            StatusCode::REQUEST_TIMEOUT | StatusCode::CONFLICT | StatusCode::TOO_MANY_REQUESTS => {
                Err(Failure::Transient { cause: format!("HTTP {}: {message}", status.as_u16()), retry_after })
            }
            status if status.is_server_error() => {
                Err(Failure::Transient { cause: format!("HTTP {}: {message}", status.as_u16()), retry_after })
            }
            status if status.is_client_error() => {
                Err(Failure::Final(ProviderError::Request { status: status.as_u16(), message }))
            }
            status => Err(Failure::Final(ProviderError::BadResponse {
                detail: format!("unexpected HTTP {}: {message}", status.as_u16()),
            })),
        }
    }

    fn transport_failure(&self, error: &reqwest::Error) -> Failure {
        if error.is_builder() {
            return Failure::Final(ProviderError::Setup(error.to_string()));
        }
        let cause = if error.is_timeout() {
            format!("no answer from {} within {}", self.url, human_duration(self.request_timeout))
        } else if error.is_connect() {
            format!("cannot connect to {}: {}", self.url, error_chain(error))
        } else {
            format!("the connection to {} failed: {}", self.url, error_chain(error))
        };
        Failure::Transient { cause, retry_after: None }
    }
}

fn is_loopback(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else { return false };
    let Some(host) = url.host_str() else { return false };
    let address = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || address.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn human_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{} s", duration.as_secs())
    }
}

/// reqwest's own message says little ("error sending request"); its sources say why.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// reqwest with `rustls-no-provider` needs a process-wide crypto provider: ring, installed once.
/// If the embedding program installed another one first, that one is used. Every client the
/// workspace builds calls it first (the runner's HTTP medium and `saffron api pin` too).
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The message of an error body, in whichever shape the server wrote it.
struct VendorError {
    message: String,
    /// A 429 that no wait cures: the account's quota or spend limit is used up.
    quota_spent: bool,
}

impl VendorError {
    fn read(body: &[u8]) -> VendorError {
        let Ok(json) = serde_json::from_slice::<Value>(body) else {
            return VendorError { message: snippet(&String::from_utf8_lossy(body)), quota_spent: false };
        };
        // Anthropic: {"type":"error","error":{"type","message"}}; OpenAI: {"error":{"message",
        // "type","code"}}; other OpenAI-compatible servers: {"message"} or {"detail"}.
        let message = [&json["error"]["message"], &json["message"], &json["detail"], &json["error"]]
            .into_iter()
            .find_map(Value::as_str)
            .map(snippet)
            .unwrap_or_else(|| snippet(&json.to_string()));
        let error = &json["error"];
        let codes = [&error["code"], &error["type"], &error["details"]["error_code"]];
        let quota_spent = codes.iter().filter_map(|code| code.as_str()).any(|code| {
            matches!(code, "insufficient_quota" | "enforced_spend_limit_reached" | "billing_hard_limit_reached")
        });
        VendorError { message, quota_spent }
    }
}

/// One line of at most [`MESSAGE_LIMIT`] characters.
fn snippet(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return "(empty body)".into();
    }
    match line.char_indices().nth(MESSAGE_LIMIT) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_messages_are_read_from_each_shape() {
        let anthropic = br#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}"#;
        assert_eq!(VendorError::read(anthropic).message, "max_tokens: too big");
        let openai = br#"{"error":{"message":"Invalid model","type":"invalid_request_error","code":null}}"#;
        assert_eq!(VendorError::read(openai).message, "Invalid model");
        assert_eq!(VendorError::read(br#"{"detail":"Not Found"}"#).message, "Not Found");
        assert_eq!(
            VendorError::read(b"<html>\n  <h1>502 Bad Gateway</h1>\n</html>").message,
            "<html> <h1>502 Bad Gateway</h1> </html>"
        );
        assert_eq!(VendorError::read(b"").message, "(empty body)");
        let long = "x".repeat(2000);
        assert_eq!(VendorError::read(long.as_bytes()).message.chars().count(), MESSAGE_LIMIT + 1);
    }

    #[test]
    fn servers_on_this_machine_are_loopback() {
        for url in ["http://127.0.0.1:11434/v1", "http://localhost:8080", "http://[::1]:1/v1", "http://127.8.0.1"] {
            assert!(is_loopback(url), "{url}");
        }
        for url in ["https://api.anthropic.com", "http://10.0.0.2/v1", "http://localhost.example.com", "not a url"] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn a_spent_quota_is_told_apart_from_a_rate_limit() {
        let quota = br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        assert!(VendorError::read(quota).quota_spent);
        let spend = br#"{"type":"error","error":{"type":"rate_limit_error","message":"spend limit","details":{"error_code":"enforced_spend_limit_reached"}}}"#;
        assert!(VendorError::read(spend).quota_spent);
        let rate = br#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;
        assert!(!VendorError::read(rate).quota_spent);
    }
}
