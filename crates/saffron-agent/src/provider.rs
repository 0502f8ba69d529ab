//! What a model provider is to the session: a request in, an answer or a classified error out.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use crate::model::{Request, Response};
use crate::retry::RetryPolicy;

/// A boxed future that can cross threads: what the object-safe traits of this crate return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A model behind some vendor's API.
pub trait Provider: Send + Sync {
    /// The vendor and model, for reports: `anthropic claude-sonnet-4-5`.
    fn describe(&self) -> String;

    /// Sends one request, retrying what is worth retrying.
    fn send<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ProviderError>>;
}

/// Why a provider gave no answer. [`ProviderError::Unavailable`] is the provider's state, not the
/// application's: the runner makes such a scenario blocked, never red.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// Rate limited, overloaded, failing, unreachable or silent, through every attempt.
    #[error("the model provider is unavailable after {attempts} attempt(s): {cause}")]
    Unavailable { cause: String, attempts: u32 },
    /// The API key is missing, wrong or not allowed to use the model.
    #[error("the model provider refused the API key (HTTP {status}): {message}")]
    Auth {
        status: u16,
        message: String,
        /// The variable the key was read from, for the hint.
        key_env: Option<String>,
    },
    /// The provider refused the request itself (HTTP 400, 404, 413, ...).
    #[error("the model provider refused the request (HTTP {status}): {message}")]
    Request { status: u16, message: String },
    /// An answer that is not the vendor's format.
    #[error("the model provider's answer is not in its API's format: {detail}")]
    BadResponse { detail: String },
    /// The HTTP client could not be built.
    #[error("the model provider cannot be set up: {0}")]
    Setup(String),
}

impl ProviderError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            ProviderError::Unavailable { .. } => {
                "the scenario is blocked, not failed: run again later, or use another provider or model".into()
            }
            ProviderError::Auth { key_env: Some(name), .. } => {
                format!("check the key in ${name} (read from the environment or the project's .env)")
            }
            ProviderError::Auth { key_env: None, .. } => {
                "this server wants an API key: set `api_key_env` in [agent] to the name of the variable holding it"
                    .into()
            }
            ProviderError::Request { .. } => {
                "check `model` and `base_url` in [agent] of saffron.toml; the provider's message says what it refused"
                    .into()
            }
            ProviderError::BadResponse { .. } => {
                "check that `base_url` points at an API of the configured `provider` kind".into()
            }
            ProviderError::Setup(_) => "this is a fault of Saffron's setup, not of the configuration".into(),
        }
    }
}

/// How the HTTP calls to a provider behave.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// The longest one call may take, answer included: a model writing a long answer is slow.
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            request_timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
        }
    }
}
