//! The recording agent's foundation: a provider-neutral conversation model, the Anthropic and
//! OpenAI-compatible providers over HTTP (with retries), the `[agent]` configuration, the agent
//! loop over a [`ToolGateway`], and cost. Nothing here knows the browser, LSP or MCP: the
//! gateway is a trait its callers implement.
//!
//! - [`model`]: messages, content blocks, tool specs, requests, answers, usage.
//! - [`Provider`], [`AnthropicProvider`], [`OpenAiProvider`], [`RetryPolicy`]: the vendors.
//! - [`AgentConfig`]: `[agent]` of `saffron.toml`, checked into an [`AgentSetup`].
//! - [`Session`], [`ToolGateway`]: the loop, its budget and how it ended.
//! - [`AgentDriver`], [`ProviderDriver`]: what runs a session for the runner, whoever the agent is.
//! - [`Cost`]: what the usage cost, or "cost not reported".
//! - `testing` (feature `testing`): fake vendor servers playing scripted conversations.

pub mod anthropic;
pub mod config;
pub mod cost;
pub mod driver;
mod http;
pub mod model;
pub mod openai;
pub mod provider;
pub mod retry;
pub mod session;
#[cfg(feature = "testing")]
pub mod testing;

pub use anthropic::AnthropicProvider;
pub use config::{
    AgentCommand, AgentConfig, AgentConfigError, AgentSetup, ApiKey, BuiltInAgent, Client, ClientPreset,
    ClientProvider, ExternalAgent, ProviderKind,
};
pub use cost::{Cost, CostSource, Prices};
pub use driver::{AgentDriver, ProviderDriver};
pub use http::install_crypto_provider;
pub use model::{Block, Message, Request, Response, Role, StopReason, ToolInput, ToolSpec, Usage};
pub use openai::OpenAiProvider;
pub use provider::{BoxFuture, HttpSettings, Provider, ProviderError};
pub use retry::{RetryPolicy, Sleeper};
pub use session::{Budget, Exhausted, Session, SessionOutcome, SessionReport, ToolGateway, ToolOutput};
