//! `[agent]` of `saffron.toml`: which agent records scenarios, and its budget.
//!
//! Parsing never fails on a value (a replay-only run must not stop because of a typo in the
//! agent's table); [`AgentConfig::resolve`] checks the table when an agent is needed and names
//! every problem. The API key is never in the file: the file names the variable that holds it.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::anthropic::{self, AnthropicProvider};
use crate::cost::Prices;
use crate::openai::{self, OpenAiProvider};
use crate::provider::{HttpSettings, Provider, ProviderError};
use crate::session::Budget;

/// The `[agent]` table as written.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct AgentConfig {
    /// `anthropic` or `openai` (OpenAI and every server that speaks its Chat Completions API).
    pub provider: Option<String>,
    /// The model id, as the provider names it.
    pub model: Option<String>,
    /// The API's root; each provider has a default.
    pub base_url: Option<String>,
    /// The NAME of the environment variable (or `.env` entry) holding the API key; `""` sends
    /// no key.
    pub api_key_env: Option<String>,
    /// The most model calls one scenario's recording may make.
    pub max_turns: Option<u32>,
    /// The most tokens (input, cached and output) one scenario's recording may use.
    pub max_tokens: Option<u64>,
    /// US dollars per million input tokens, for the cost in reports.
    pub price_input_per_mtok: Option<f64>,
    /// US dollars per million output tokens.
    pub price_output_per_mtok: Option<f64>,
    /// An external agent program run with the prompt, instead of a built-in provider: a shell
    /// command line, or a program and its arguments.
    pub command: Option<CommandLine>,
    /// A vendor's own agent client that Saffron starts itself, contained to Saffron's tools:
    /// `claude` (Claude Code) or `codex` (OpenAI's Codex), on the user's own login or key.
    /// `model` is passed to it; for Codex, `base_url` (with `api_key_env`) names an
    /// OpenAI-compatible Responses API to use instead of its own.
    pub program: Option<String>,
    /// Scenarios recorded at once, each in its own browser context (default 1); `saffron run
    /// --agent-workers` wins.
    pub workers: Option<usize>,
}

/// A command as written: one shell line or an argument list.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum CommandLine {
    Shell(String),
    Argv(Vec<String>),
}

impl AgentConfig {
    pub const DEFAULT_MAX_TURNS: u32 = 60;
    pub const DEFAULT_MAX_TOKENS: u64 = 1_000_000;

    /// Checks the table and reads the API key with `lookup` (the environment, then `.env`).
    pub fn resolve(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Result<AgentSetup, AgentConfigError> {
        let budget = self.budget()?;
        let prices = self.prices()?;
        let provider = self.provider.as_deref().map(str::trim).filter(|name| !name.is_empty());
        if let Some(program) = self.program.as_deref().map(str::trim) {
            if let Some(provider) = provider {
                return Err(AgentConfigError::ProviderAndProgram { provider: provider.to_string() });
            }
            if self.command.is_some() {
                return Err(AgentConfigError::CommandAndProgram);
            }
            let client = match program {
                "claude" => Client::ClaudeCode,
                "codex" => Client::Codex,
                other => return Err(AgentConfigError::UnknownProgram { given: other.to_string() }),
            };
            let preset = self.client_preset(client)?;
            return Ok(AgentSetup::External(ExternalAgent { command: AgentCommand::Client(preset), budget, prices }));
        }
        if let Some(command) = &self.command {
            if let Some(provider) = provider {
                return Err(AgentConfigError::ProviderAndCommand { provider: provider.to_string() });
            }
            let command = AgentCommand::from_config(command)?;
            return Ok(AgentSetup::External(ExternalAgent { command, budget, prices }));
        }
        let Some(provider) = provider else {
            return Err(AgentConfigError::NotConfigured);
        };
        let kind = match provider.to_ascii_lowercase().as_str() {
            "anthropic" => ProviderKind::Anthropic,
            "openai" => ProviderKind::OpenAi,
            _ => return Err(AgentConfigError::UnknownProvider { given: provider.to_string() }),
        };
        let model = self.model.as_deref().map(str::trim).filter(|model| !model.is_empty());
        let Some(model) = model else {
            return Err(AgentConfigError::MissingModel { provider: kind });
        };
        let custom_base = self.base_url.as_deref().map(str::trim).filter(|url| !url.is_empty());
        let base_url = custom_base.unwrap_or(kind.default_base_url()).to_string();
        check_base_url(&base_url)?;
        let key_env = match self.api_key_env.as_deref().map(str::trim) {
            Some("") => None,
            Some(name) => Some(name.to_string()),
            // A local server or gateway usually wants no key; the vendor's own API always does.
            None if kind == ProviderKind::OpenAi && custom_base.is_some() => None,
            None => Some(kind.default_key_env().to_string()),
        };
        let api_key = match &key_env {
            Some(name) if !is_variable_name(name) => return Err(AgentConfigError::KeyVariableName),
            Some(name) => match lookup(name).filter(|value| !value.trim().is_empty()) {
                Some(value) => Some(ApiKey(value.trim().to_string())),
                None => return Err(AgentConfigError::MissingKey { variable: name.clone() }),
            },
            None => None,
        };
        Ok(AgentSetup::BuiltIn(BuiltInAgent {
            provider: kind,
            model: model.to_string(),
            base_url,
            api_key,
            key_env,
            budget,
            prices,
        }))
    }

    /// `program = "…"` with what it may take from the table: the model, and for Codex a
    /// provider of the user's choosing (the client's own configuration file is not read).
    fn client_preset(&self, client: Client) -> Result<ClientPreset, AgentConfigError> {
        let model = self.model.as_deref().map(str::trim).filter(|model| !model.is_empty()).map(str::to_string);
        let base_url = self.base_url.as_deref().map(str::trim).filter(|url| !url.is_empty());
        let key_env = self.api_key_env.as_deref().map(str::trim).filter(|name| !name.is_empty());
        // Claude Code takes its API's address and key from its own environment.
        if client == Client::ClaudeCode && (base_url.is_some() || key_env.is_some()) {
            return Err(AgentConfigError::ClientBaseUrl { client });
        }
        let provider = match base_url {
            None if key_env.is_some() => return Err(AgentConfigError::KeyWithoutBaseUrl),
            None => None,
            Some(url) => {
                check_base_url(url)?;
                if key_env.is_some_and(|name| !is_variable_name(name)) {
                    return Err(AgentConfigError::KeyVariableName);
                }
                Some(ClientProvider { base_url: url.to_string(), key_env: key_env.map(str::to_string) })
            }
        };
        Ok(ClientPreset { client, model, provider })
    }

    fn budget(&self) -> Result<Budget, AgentConfigError> {
        let max_turns = self.max_turns.unwrap_or(AgentConfig::DEFAULT_MAX_TURNS);
        let max_tokens = self.max_tokens.unwrap_or(AgentConfig::DEFAULT_MAX_TOKENS);
        if max_turns == 0 {
            return Err(AgentConfigError::ZeroBudget { key: "max_turns" });
        }
        if max_tokens == 0 {
            return Err(AgentConfigError::ZeroBudget { key: "max_tokens" });
        }
        Ok(Budget { max_turns, max_tokens })
    }

    fn prices(&self) -> Result<Option<Prices>, AgentConfigError> {
        let check = |key: &'static str, price: Option<f64>| match price {
            Some(value) if !value.is_finite() || value < 0.0 => Err(AgentConfigError::InvalidPrice { key }),
            price => Ok(price),
        };
        let input = check("price_input_per_mtok", self.price_input_per_mtok)?;
        let output = check("price_output_per_mtok", self.price_output_per_mtok)?;
        match (input, output) {
            (Some(input_per_mtok), Some(output_per_mtok)) => Ok(Some(Prices { input_per_mtok, output_per_mtok })),
            (None, None) => Ok(None),
            (Some(_), None) => Err(AgentConfigError::HalfPriced { missing: "price_output_per_mtok" }),
            (None, Some(_)) => Err(AgentConfigError::HalfPriced { missing: "price_input_per_mtok" }),
        }
    }
}

fn check_base_url(url: &str) -> Result<(), AgentConfigError> {
    let invalid = |reason: &str| AgentConfigError::InvalidBaseUrl { url: url.to_string(), reason: reason.to_string() };
    let parsed = reqwest::Url::parse(url).map_err(|error| invalid(&error.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("it must start with http:// or https://"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(invalid("it has no host"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid("the API path is appended to it, so it must not have a query or a fragment"));
    }
    Ok(())
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first == '_' || first.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The agent a run uses.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentSetup {
    BuiltIn(BuiltInAgent),
    External(ExternalAgent),
}

impl AgentSetup {
    pub fn budget(&self) -> Budget {
        match self {
            AgentSetup::BuiltIn(agent) => agent.budget,
            AgentSetup::External(agent) => agent.budget,
        }
    }

    pub fn prices(&self) -> Option<Prices> {
        match self {
            AgentSetup::BuiltIn(agent) => agent.prices,
            AgentSetup::External(agent) => agent.prices,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Anthropic,
    OpenAi,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => anthropic::DEFAULT_BASE_URL,
            ProviderKind::OpenAi => openai::DEFAULT_BASE_URL,
        }
    }

    pub fn default_key_env(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::OpenAi => "OPENAI_API_KEY",
        }
    }
}

/// A built-in provider, checked and with its key read.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltInAgent {
    pub provider: ProviderKind,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    /// The variable the key was read from.
    pub key_env: Option<String>,
    pub budget: Budget,
    pub prices: Option<Prices>,
}

impl BuiltInAgent {
    /// The provider that talks to the configured API.
    pub fn connect(&self, http: &HttpSettings) -> Result<Box<dyn Provider>, ProviderError> {
        let key = self.api_key.as_ref().map(ApiKey::expose);
        let key_env = self.key_env.as_deref();
        Ok(match self.provider {
            ProviderKind::Anthropic => {
                Box::new(AnthropicProvider::new(&self.base_url, &self.model, key, key_env, http)?)
            }
            ProviderKind::OpenAi => Box::new(OpenAiProvider::new(&self.base_url, &self.model, key, key_env, http)?),
        })
    }
}

/// An API key. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(…)")
    }
}

/// An external agent program (run by a later layer, with the tool gateway served over MCP).
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalAgent {
    pub command: AgentCommand,
    pub budget: Budget,
    pub prices: Option<Prices>,
}

/// How the external agent is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentCommand {
    /// Run with `sh -c`, like the hooks.
    Shell(String),
    /// A program and its arguments, no shell.
    Argv(Vec<String>),
    /// A vendor's client, whose command line Saffron builds (with the client's own containment).
    Client(ClientPreset),
}

/// The vendors' agent clients Saffron knows how to start and contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Anthropic's Claude Code (`claude`).
    ClaudeCode,
    /// OpenAI's Codex CLI (`codex`).
    Codex,
}

impl Client {
    /// Every client with a preset, in the order `saffron init` offers them.
    pub const ALL: [Client; 2] = [Client::ClaudeCode, Client::Codex];

    /// The program's name on PATH, and the value of `program` in [agent].
    pub fn program(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude",
            Client::Codex => "codex",
        }
    }

    /// What a person calls it.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Codex => "Codex",
        }
    }
}

/// A client and what the project chose for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientPreset {
    pub client: Client,
    /// Passed as the client's model option; else the client's own default.
    pub model: Option<String>,
    /// A model provider of the project's choosing (Codex only); else the client's own login.
    pub provider: Option<ClientProvider>,
}

impl ClientPreset {
    /// The client with its own defaults.
    pub fn new(client: Client) -> ClientPreset {
        ClientPreset { client, model: None, provider: None }
    }
}

/// An OpenAI-compatible Responses API that Codex is pointed at instead of its own login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientProvider {
    pub base_url: String,
    /// The variable holding the key, read by the client itself; `None` sends none.
    pub key_env: Option<String>,
}

impl AgentCommand {
    fn from_config(command: &CommandLine) -> Result<AgentCommand, AgentConfigError> {
        match command {
            CommandLine::Shell(line) if line.trim().is_empty() => Err(AgentConfigError::EmptyCommand),
            CommandLine::Shell(line) => Ok(AgentCommand::Shell(line.trim().to_string())),
            CommandLine::Argv(argv) if argv.first().is_none_or(|program| program.trim().is_empty()) => {
                Err(AgentConfigError::EmptyCommand)
            }
            CommandLine::Argv(argv) => Ok(AgentCommand::Argv(argv.clone())),
        }
    }
}

/// Why `[agent]` cannot be used. Never holds the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentConfigError {
    #[error("no agent is configured to record scenarios")]
    NotConfigured,
    #[error("unknown provider `{given}` in [agent]")]
    UnknownProvider { given: String },
    #[error("[agent] names the provider `{}` but no model", provider.name())]
    MissingModel { provider: ProviderKind },
    #[error("the API key variable ${variable} is not set (neither in the environment nor in .env)")]
    MissingKey { variable: String },
    #[error("`api_key_env` in [agent] is not the name of an environment variable")]
    KeyVariableName,
    #[error("[agent] sets both `provider` ({provider}) and `command`")]
    ProviderAndCommand { provider: String },
    #[error("`command` in [agent] is empty")]
    EmptyCommand,
    #[error("[agent] sets both `provider` ({provider}) and `program`")]
    ProviderAndProgram { provider: String },
    #[error("[agent] sets both `command` and `program`")]
    CommandAndProgram,
    #[error("unknown agent program `{given}` in [agent]")]
    UnknownProgram { given: String },
    #[error("[agent] sets `base_url` or `api_key_env` with `program = \"{}\"`", client.program())]
    ClientBaseUrl { client: Client },
    #[error("[agent] sets `api_key_env` for Codex without `base_url`")]
    KeyWithoutBaseUrl,
    #[error("`base_url` in [agent] ({url}) is not usable: {reason}")]
    InvalidBaseUrl { url: String, reason: String },
    #[error("`{key}` in [agent] is 0: no recording could start")]
    ZeroBudget { key: &'static str },
    #[error("`{key}` in [agent] must be a number of US dollars, 0 or more")]
    InvalidPrice { key: &'static str },
    #[error("[agent] sets one price but not `{missing}`")]
    HalfPriced { missing: &'static str },
}

impl AgentConfigError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            AgentConfigError::NotConfigured => "add an [agent] table to saffron.toml: `program = \"claude\"` or \
                 `program = \"codex\"` to record with Claude Code or Codex on your own login (it must be on PATH), or `provider = \"anthropic\"` and \
                 `model = \"<model id>\"` with the key in $ANTHROPIC_API_KEY, or `command = \"<your agent CLI>\"` \
                 (docs/agent.md)"
                .into(),
            AgentConfigError::UnknownProvider { .. } => "use `anthropic` (the Anthropic Messages API) or `openai` \
                 (OpenAI and servers speaking its Chat Completions API: gateways, Ollama, vLLM, llama.cpp)"
                .into(),
            AgentConfigError::MissingModel { .. } => "set `model` in [agent] to the provider's model id".into(),
            AgentConfigError::MissingKey { variable } => format!(
                "export {variable}=… or put it in the project's .env (never in saffron.toml); \
                 `api_key_env` in [agent] names another variable"
            ),
            AgentConfigError::KeyVariableName => "`api_key_env` takes the NAME of the variable holding the key \
                 (letters, digits and _), never the key itself"
                .into(),
            AgentConfigError::ProviderAndCommand { .. } => "keep `command` to run your own agent program, or \
                 `provider` to use a built-in one, not both"
                .into(),
            AgentConfigError::EmptyCommand => "set `command` to the agent program to run, or remove it".into(),
            AgentConfigError::ProviderAndProgram { .. } | AgentConfigError::CommandAndProgram => {
                "keep one of `provider` (a built-in provider and an API key), `program` (a vendor's client on its \
                 own login) or `command` (any other agent program)"
                    .into()
            }
            AgentConfigError::UnknownProgram { .. } => {
                "use `program = \"claude\"` (Claude Code) or `program = \"codex\"` (Codex), or `command = [...]` \
                 for another agent program (docs/agent.md)"
                    .into()
            }
            AgentConfigError::ClientBaseUrl { .. } => "Claude Code takes its API's address and key from its own \
                 environment (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY): export them instead"
                .into(),
            AgentConfigError::KeyWithoutBaseUrl => "Codex uses its own login unless `base_url` names another \
                 Responses API; set both, or remove `api_key_env`"
                .into(),
            AgentConfigError::InvalidBaseUrl { .. } => {
                "set `base_url` to the API's root, such as http://127.0.0.1:11434/v1 for a local server".into()
            }
            AgentConfigError::ZeroBudget { key } => format!("remove `{key}` for the default, or set it above 0"),
            AgentConfigError::InvalidPrice { .. } => "write the price per million tokens, such as 3.0".into(),
            AgentConfigError::HalfPriced { missing } => {
                format!("set `{missing}` too, or neither: a cost from half the prices would be wrong")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` is the body of the `[agent]` table of a saffron.toml.
    fn agent(text: &str) -> AgentConfig {
        #[derive(Deserialize)]
        struct File {
            agent: AgentConfig,
        }
        let file: File = toml::from_str(&format!("[agent]\n{text}")).expect("valid test table");
        file.agent
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
    }

    fn built_in(setup: Result<AgentSetup, AgentConfigError>) -> BuiltInAgent {
        match setup {
            Ok(AgentSetup::BuiltIn(agent)) => agent,
            other => panic!("not a built-in agent: {other:?}"),
        }
    }

    #[test]
    fn anthropic_reads_its_key_from_the_default_variable() {
        let config = agent("provider = \"anthropic\"\nmodel = \"claude-x\"");
        let agent = built_in(config.resolve(&env(&[("ANTHROPIC_API_KEY", "sk-ant-123\n")])));
        assert_eq!(agent.provider, ProviderKind::Anthropic);
        assert_eq!(agent.base_url, "https://api.anthropic.com");
        assert_eq!(agent.api_key.as_ref().map(ApiKey::expose), Some("sk-ant-123"));
        assert_eq!(agent.key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
        assert_eq!(agent.budget, Budget { max_turns: 60, max_tokens: 1_000_000 });
        assert_eq!(agent.prices, None);
        assert!(!format!("{agent:?}").contains("sk-ant-123"), "Debug hides the key");
    }

    #[test]
    fn an_openai_compatible_local_server_needs_no_key() {
        let config = agent(
            "provider = \"openai\"\nmodel = \"qwen3\"\nbase_url = \"http://127.0.0.1:11434/v1\"\nmax_turns = 10\n\
             max_tokens = 5000\nprice_input_per_mtok = 0.5\nprice_output_per_mtok = 1.5",
        );
        let local = built_in(config.resolve(&env(&[])));
        assert_eq!((local.api_key, local.key_env), (None, None));
        assert_eq!(local.budget, Budget { max_turns: 10, max_tokens: 5000 });
        assert_eq!(local.prices, Some(Prices { input_per_mtok: 0.5, output_per_mtok: 1.5 }));
        let official = agent("provider = \"OpenAI\"\nmodel = \"gpt-x\"");
        let error = official.resolve(&env(&[])).expect_err("OpenAI's own API needs a key");
        assert_eq!(error, AgentConfigError::MissingKey { variable: "OPENAI_API_KEY".into() });
        let named = agent(
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"https://gw.example/v1\"\napi_key_env = \"GW_KEY\"",
        );
        assert_eq!(built_in(named.resolve(&env(&[("GW_KEY", "k")]))).key_env.as_deref(), Some("GW_KEY"));
        let keyless = agent("provider = \"anthropic\"\nmodel = \"m\"\napi_key_env = \"\"");
        assert_eq!(built_in(keyless.resolve(&env(&[]))).api_key, None);
    }

    #[test]
    fn every_problem_is_named_with_a_hint() {
        let cases: [(&str, AgentConfigError); 18] = [
            ("", AgentConfigError::NotConfigured),
            ("provider = \"antropic\"\nmodel = \"m\"", AgentConfigError::UnknownProvider { given: "antropic".into() }),
            ("provider = \"anthropic\"", AgentConfigError::MissingModel { provider: ProviderKind::Anthropic }),
            (
                "provider = \"anthropic\"\nmodel = \"m\"",
                AgentConfigError::MissingKey { variable: "ANTHROPIC_API_KEY".into() },
            ),
            (
                "provider = \"anthropic\"\nmodel = \"m\"\napi_key_env = \"sk-ant-api03-SECRET\"",
                AgentConfigError::KeyVariableName,
            ),
            (
                "provider = \"openai\"\ncommand = \"my-agent\"",
                AgentConfigError::ProviderAndCommand { provider: "openai".into() },
            ),
            (
                "provider = \"anthropic\"\nprogram = \"claude\"",
                AgentConfigError::ProviderAndProgram { provider: "anthropic".into() },
            ),
            ("program = \"claude\"\ncommand = \"my-agent\"", AgentConfigError::CommandAndProgram),
            ("program = \"cursor\"", AgentConfigError::UnknownProgram { given: "cursor".into() }),
            (
                "program = \"claude\"\nbase_url = \"http://x\"",
                AgentConfigError::ClientBaseUrl { client: Client::ClaudeCode },
            ),
            ("program = \"codex\"\napi_key_env = \"MY_KEY\"", AgentConfigError::KeyWithoutBaseUrl),
            (
                "program = \"codex\"\nbase_url = \"http://x\"\napi_key_env = \"sk-SECRET-1\"",
                AgentConfigError::KeyVariableName,
            ),
            ("command = [\"  \"]", AgentConfigError::EmptyCommand),
            ("command = \"\"", AgentConfigError::EmptyCommand),
            ("provider = \"openai\"\nmodel = \"m\"\nmax_turns = 0", AgentConfigError::ZeroBudget { key: "max_turns" }),
            (
                "provider = \"openai\"\nmodel = \"m\"\nprice_input_per_mtok = -1.0\nprice_output_per_mtok = 1.0",
                AgentConfigError::InvalidPrice { key: "price_input_per_mtok" },
            ),
            (
                "provider = \"openai\"\nmodel = \"m\"\nprice_input_per_mtok = 1.0",
                AgentConfigError::HalfPriced { missing: "price_output_per_mtok" },
            ),
            (
                "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"localhost:8080\"",
                AgentConfigError::InvalidBaseUrl {
                    url: "localhost:8080".into(),
                    reason: "it must start with http:// or https://".into(),
                },
            ),
        ];
        for (table, expected) in cases {
            let error = agent(table).resolve(&env(&[])).expect_err(table);
            assert_eq!(error, expected, "{table}");
            assert!(!error.hint().is_empty());
            assert!(!error.to_string().contains("SECRET") && !error.hint().contains("SECRET"), "never echo a key");
        }
        let missing = AgentConfigError::MissingKey { variable: "ANTHROPIC_API_KEY".into() };
        assert!(missing.to_string().contains("$ANTHROPIC_API_KEY"), "{missing}");
        assert!(AgentConfigError::NotConfigured.hint().contains("[agent]"));
    }

    #[test]
    fn an_external_command_is_a_shell_line_or_an_argument_list() {
        let shell = agent("command = \" my-agent --prompt-file x \"\nmax_turns = 5");
        let Ok(AgentSetup::External(external)) = shell.resolve(&env(&[])) else { panic!("external") };
        assert_eq!(external.command, AgentCommand::Shell("my-agent --prompt-file x".into()));
        assert_eq!(external.budget.max_turns, 5);
        let argv = agent("command = [\"my-agent\", \"--yes\"]");
        let Ok(AgentSetup::External(external)) = argv.resolve(&env(&[])) else { panic!("external") };
        assert_eq!(external.command, AgentCommand::Argv(vec!["my-agent".into(), "--yes".into()]));
        // A vendor's client: Saffron builds its command line; no key is needed.
        let client = agent("program = \"claude\"\nmax_turns = 80");
        let Ok(AgentSetup::External(external)) = client.resolve(&env(&[])) else { panic!("external") };
        assert_eq!(external.command, AgentCommand::Client(ClientPreset::new(Client::ClaudeCode)));
        assert_eq!(external.budget.max_turns, 80);
        // Codex with a model, pointed at a Responses API of the project's choosing; the key is
        // named, never read by Saffron.
        let codex = agent(
            "program = \"codex\"\nmodel = \"gpt-x\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"MY_KEY\"",
        );
        let Ok(AgentSetup::External(external)) = codex.resolve(&env(&[])) else { panic!("external") };
        let provider = ClientProvider { base_url: "http://127.0.0.1:9/v1".into(), key_env: Some("MY_KEY".into()) };
        let expected = ClientPreset { client: Client::Codex, model: Some("gpt-x".into()), provider: Some(provider) };
        assert_eq!(external.command, AgentCommand::Client(expected));
    }
}
