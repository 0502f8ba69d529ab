//! `saffron.toml`: every key of the file, so that a key no part of Saffron reads (a typo such
//! as `base_ur`, a table such as `[browsr]`) is found against these types and named with the
//! closest known key. Every key is optional; `saffron init` writes the file with the defaults
//! and a comment on each.

use std::ops::Range;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct Config {
    pub base_url: Option<String>,
    pub browser: BrowserSection,
    pub timeouts: Timeouts,
    pub hooks: Hooks,
    /// Read by `saffron mcp`, not by the runner; declared here so that the file has one type.
    pub mcp: McpSection,
    /// The agent that records scenarios; checked only when one is needed.
    pub agent: Option<saffron_agent::AgentConfig>,
    pub secrets: SecretsSection,
    pub run: RunSection,
    pub trace: TraceSection,
    pub api: ApiSection,
    pub session: SessionSection,
}

/// `[session]`: the steps that sign in, performed once per run and restored afterwards.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct SessionSection {
    /// Step texts, without their keyword, that leave a signed-in session (`I sign in as
    /// "ada"`). A scenario that starts with listed steps performs them once in a run; later
    /// ones restore the browser state they left. A StepSet tagged `@session` does the same.
    pub steps: Vec<String>,
}

/// `[api]`: the HTTP services that `@api` scenarios (and the API calls of browser scenarios)
/// talk to. A request names its service, never a host.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct ApiSection {
    /// `[api.services.NAME]`: each service by the name requests use.
    pub services: std::collections::BTreeMap<String, ServiceSection>,
    /// What is kept of each request and response: `on-failure` (the default: the exchanges of
    /// a scenario that did not pass plainly), `on` (every scenario's) or `off` (none).
    pub transcript: TranscriptMode,
}

/// `[api.services.NAME]`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct ServiceSection {
    /// The service's base URL, such as `http://127.0.0.1:8080/api`, or a path such as `/api`
    /// for a service on the application's own origin (under the run's base URL); `saffron run
    /// --api-url NAME=URL` overrides it.
    pub base_url: String,
    /// Where `saffron api pin` fetches the service's OpenAPI 3 document.
    pub openapi_url: Option<String>,
    /// The pinned contract, relative to the project root (written by `saffron api pin`).
    pub contract: Option<String>,
}

/// `[api] transcript`.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TranscriptMode {
    On,
    #[default]
    OnFailure,
    Off,
}

/// `[trace]`: what is kept of each scenario's run for `saffron trace`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct TraceSection {
    /// `retain-on-failure` (the default: the trace of a scenario that did not pass plainly),
    /// `on` (every scenario's, with a picture after each action) or `off` (as `--trace`).
    pub mode: crate::trace::TraceMode,
}

/// `[run]`: how `saffron run` treats what it finds.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct RunSection {
    /// A replay that found elements through drifted signals files a proposal that updates
    /// them to what the page has now, at zero tokens (as `--refresh-drift`).
    pub refresh_drift: bool,
    /// How many times a red scenario is run again from the start, in a fresh context, before a
    /// repair is tried (as `--retries`). One that passes on a retry is flaky.
    pub retries: u32,
}

/// `[secrets]`: where the values of `{env:NAME}` secrets may go.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct SecretsSection {
    /// Origins besides the base URL's that a secret may be sent to or typed in (a sign-in
    /// provider's, `https://login.example.com`). Any other origin is refused a secret, whether
    /// the agent or a recording asks.
    pub origins: Vec<String>,
}

/// `[mcp]`: what the project lets AI assistants do through `saffron mcp`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct McpSection {
    /// Whether the `accept` and `reject` tools exist.
    pub allow_accept: bool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct BrowserSection {
    pub path: String,
    pub headless: bool,
    /// The DevTools endpoint of a browser that runs already (`ws://`, `wss://`, `http://`,
    /// `https://`), replayed in instead of a launched Chromium; empty: launch one.
    pub url: String,
    /// The device every context emulates (`"iPhone 15"`, `"Pixel 7"`; `saffron run --device`
    /// wins); empty: a desktop window.
    pub device: String,
    /// The browsers a run replays in, one after the other, Chromium first (`["chromium",
    /// "firefox"]`; `saffron run --browser` wins); empty: Chromium.
    pub engines: Vec<String>,
    /// The Firefox executable; empty: `$SAFFRON_FIREFOX`, else `/usr/bin/firefox-esr`.
    pub firefox_path: String,
}

impl Default for BrowserSection {
    fn default() -> Self {
        BrowserSection {
            path: String::new(),
            headless: true,
            url: String::new(),
            device: String::new(),
            engines: Vec::new(),
            firefox_path: String::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct Timeouts {
    /// Actions: waiting for the element to be actionable.
    pub action_ms: u64,
    /// Assertions: how long they are retried.
    pub assertion_ms: u64,
    /// Navigations: waiting for the page to load.
    pub navigation_ms: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { action_ms: 10_000, assertion_ms: 5_000, navigation_ms: 30_000 }
    }
}

impl Timeouts {
    /// The wait for one action, by what it is (its own `timeoutMs` still wins).
    pub fn for_action(&self, action: &saffron_recording::Action) -> Duration {
        let ms = match action {
            saffron_recording::Action::Goto { .. } => self.navigation_ms,
            action if action.is_assertion() => self.assertion_ms,
            _ => self.action_ms,
        };
        Duration::from_millis(ms)
    }
}

/// One command or a list, run in order.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum Commands {
    One(String),
    Many(Vec<String>),
}

impl Default for Commands {
    fn default() -> Self {
        Commands::Many(Vec::new())
    }
}

impl Commands {
    pub fn list(&self) -> Vec<String> {
        match self {
            Commands::One(command) if command.trim().is_empty() => Vec::new(),
            Commands::One(command) => vec![command.clone()],
            Commands::Many(commands) => commands.iter().filter(|c| !c.trim().is_empty()).cloned().collect(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(default)]
pub struct Hooks {
    pub setup: Commands,
    pub teardown: Commands,
    /// Run before every proof replay of the agent's work (a new recording or a repair): the
    /// agent acted on the live app, so its data may no longer be what the scenario starts from.
    pub before_proof: Commands,
    pub timeout_ms: u64,
}

impl Default for Hooks {
    fn default() -> Self {
        Hooks {
            setup: Commands::default(),
            teardown: Commands::default(),
            before_proof: Commands::default(),
            timeout_ms: 300_000,
        }
    }
}

/// Why `saffron.toml` cannot be used: it is not TOML, or a value has the wrong type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ConfigError {
    /// 1-based line and column (in characters) of the problem.
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl ConfigError {
    pub const HINT: &'static str =
        "saffron.toml must be valid TOML (https://toml.io) with the keys described in docs/cli.md; fix it here";
}

/// A key of `saffron.toml` that no part of Saffron reads. It is a warning, never an error: the
/// run goes on with the keys that are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    /// The key with its table path, as TOML writes it: `browser.headles`.
    pub key: String,
    /// 1-based line and column (in characters) of the key.
    pub line: usize,
    pub column: usize,
    /// The known key it most likely means, with its table path.
    pub suggestion: Option<String>,
}

impl UnknownKey {
    pub fn message(&self) -> String {
        format!("unknown key `{}` in saffron.toml: nothing reads it", self.key)
    }

    pub fn hint(&self) -> String {
        let Some(suggestion) = &self.suggestion else {
            return "remove it, or see docs/cli.md for the keys saffron.toml takes".to_string();
        };
        let table = |key: &str| key.rsplit_once('.').map(|(table, _)| table.to_string());
        match (table(&self.key), table(suggestion)) {
            (here, there) if here == there => {
                format!("did you mean `{}`?", suggestion.rsplit('.').next().unwrap_or(suggestion))
            }
            (_, Some(there)) => {
                format!("did you mean `{}` in [{there}]?", suggestion.rsplit('.').next().unwrap_or(suggestion))
            }
            (_, None) => format!("did you mean `{suggestion}` at the top of the file (before any [table])?"),
        }
    }
}

impl Config {
    /// Parses `saffron.toml`.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse_checked(text).map(|(config, _)| config)
    }

    /// Parses `saffron.toml` and names every key no part of Saffron reads.
    pub fn parse_checked(text: &str) -> Result<(Config, Vec<UnknownKey>), ConfigError> {
        let lines = Lines::new(text);
        let located = |error: toml::de::Error| {
            let (line, column) = lines.at(error.span().map_or(0, |span| span.start));
            ConfigError { line, column, message: error.message().trim_end().to_string() }
        };
        let deserializer = toml::Deserializer::parse(text).map_err(located)?;
        let mut ignored: Vec<Vec<String>> = Vec::new();
        let config: Config =
            serde_ignored::deserialize(deserializer, |path| ignored.push(key_path(&path))).map_err(located)?;
        let known = known_keys();
        // Parsed once more for the keys' places: serde_ignored gives paths, not spans.
        let document = toml::de::DeTable::parse(text).map_err(located)?;
        let mut unknown: Vec<UnknownKey> = ignored
            .into_iter()
            .map(|path| {
                let span = key_span(document.get_ref(), &path);
                let (line, column) = lines.at(span.map_or(0, |span| span.start));
                UnknownKey { key: path.join("."), line, column, suggestion: closest_key(&path, &known) }
            })
            .collect();
        unknown.sort_by_key(|key| (key.line, key.column));
        Ok((config, unknown))
    }
}

/// The table path and name of an ignored key (`Some` and newtype layers add no key).
fn key_path(path: &serde_ignored::Path) -> Vec<String> {
    let mut keys = Vec::new();
    let mut current = path;
    loop {
        current = match current {
            serde_ignored::Path::Root => break,
            serde_ignored::Path::Map { parent, key } => {
                keys.push(key.clone());
                parent
            }
            serde_ignored::Path::Seq { parent, index } => {
                keys.push(index.to_string());
                parent
            }
            serde_ignored::Path::Some { parent }
            | serde_ignored::Path::NewtypeStruct { parent }
            | serde_ignored::Path::NewtypeVariant { parent } => parent,
        };
    }
    keys.reverse();
    keys
}

/// Every key path [`Config`] declares, tables included, read from its schema: the types are
/// the one list of keys.
fn known_keys() -> Vec<Vec<String>> {
    let schema = schemars::schema_for!(Config);
    let root = schema.as_value();
    let mut keys = Vec::new();
    collect_keys(root, root, &mut Vec::new(), &mut keys);
    keys
}

fn collect_keys(root: &Value, schema: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let schema = match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => &root["$defs"][name],
        None => schema,
    };
    // An optional table is `anyOf: [{$ref}, {type: null}]`: its keys are those of each choice.
    for choice in schema.get("anyOf").and_then(Value::as_array).into_iter().flatten() {
        collect_keys(root, choice, prefix, out);
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, property) in properties {
        prefix.push(name.clone());
        out.push(prefix.clone());
        collect_keys(root, property, prefix, out);
        prefix.pop();
    }
}

/// The known key `path` most likely means: the closest name in the same table, else the same
/// name in another table (a key written in the wrong place).
fn closest_key(path: &[String], known: &[Vec<String>]) -> Option<String> {
    let (name, table) = path.split_last()?;
    let siblings = known.iter().filter(|key| key.split_last().is_some_and(|(_, parent)| parent == table));
    let best = siblings
        .map(|key| (strsim::jaro_winkler(&name.to_lowercase(), &key[key.len() - 1]), key))
        .filter(|(similarity, _)| *similarity >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, key)| key);
    // A name found in several tables (`base_url` at the top and in [agent]): the shallowest.
    let elsewhere = || known.iter().filter(|key| key.last() == Some(name)).min_by_key(|key| key.len());
    best.or_else(elsewhere).map(|key| key.join("."))
}

/// Where the key at `path` is written: the span of its last part.
fn key_span(document: &toml::de::DeTable, path: &[String]) -> Option<Range<usize>> {
    let mut table = document;
    let mut span = None;
    for (depth, part) in path.iter().enumerate() {
        let (key, value) = table.get_key_value(part.as_str())?;
        span = Some(key.span());
        if depth + 1 < path.len() {
            table = value.get_ref().as_table()?;
        }
    }
    span
}

/// 1-based lines and columns (in characters) of byte offsets, with the line starts found once:
/// a file with thousands of unknown keys is located in linear time.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect();
        Lines { text, starts }
    }

    fn at(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&start| start <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self.text.get(start..offset).map_or(0, |before| before.chars().count());
        (line, column + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_init_writes_parses_to_the_defaults() {
        let text = "base_url = \"http://localhost:8080\"\n[browser]\npath = \"\"\nheadless = true\n[timeouts]\naction_ms = 10000\nassertion_ms = 5000\nnavigation_ms = 30000\n[hooks]\nsetup = []\nteardown = []\ntimeout_ms = 300000\n[mcp]\nallow_accept = false\n";
        let config = Config::parse(text).expect("valid");
        assert_eq!(config.base_url.as_deref(), Some("http://localhost:8080"));
        assert_eq!(config.timeouts, Timeouts::default());
        assert!(config.hooks.setup.list().is_empty());
    }

    #[test]
    fn hooks_take_one_command_or_a_list() {
        let config =
            Config::parse("[hooks]\nsetup = \"make seed\"\nteardown = [\"make clean\", \"rm -f x\"]\n").expect("valid");
        assert_eq!(config.hooks.setup.list(), ["make seed"]);
        assert_eq!(config.hooks.teardown.list(), ["make clean", "rm -f x"]);
        assert!(Config::parse("[hooks]\nsetup = 3\n").is_err());
    }

    #[test]
    fn unknown_keys_are_named_with_their_place_and_the_closest_known_key() {
        let text = "base_ur = \"http://x\"\nheadless = false\n[browsr]\npath = \"\"\n[browser]\nHeadles = true\n\
                    [timeouts]\nassertion = 5\n[mcp]\nallow_accept = true\n";
        let (config, unknown) = Config::parse_checked(text).expect("unknown keys are not errors");
        assert!(config.mcp.allow_accept);
        let named: Vec<(&str, usize, usize, Option<&str>)> =
            unknown.iter().map(|u| (u.key.as_str(), u.line, u.column, u.suggestion.as_deref())).collect();
        assert_eq!(
            named,
            [
                ("base_ur", 1, 1, Some("base_url")),
                ("headless", 2, 1, Some("browser.headless")),
                ("browsr", 3, 2, Some("browser")),
                ("browser.Headles", 6, 1, Some("browser.headless")),
                ("timeouts.assertion", 8, 1, Some("timeouts.assertion_ms")),
            ]
        );
        let hints: Vec<String> = unknown.iter().map(UnknownKey::hint).collect();
        assert_eq!(hints[0], "did you mean `base_url`?");
        assert_eq!(hints[1], "did you mean `headless` in [browser]?");
        assert_eq!(hints[2], "did you mean `browser`?");
        let (_, misplaced) = Config::parse_checked("[hooks]\nbase_url = \"x\"\n").expect("valid");
        assert_eq!(misplaced[0].hint(), "did you mean `base_url` at the top of the file (before any [table])?");
        assert_eq!(unknown[0].message(), "unknown key `base_ur` in saffron.toml: nothing reads it");
        let (_, none) = Config::parse_checked("[hooks]\nsetup = [\"a\"]\n").expect("valid");
        assert!(none.is_empty());
        let (_, far) = Config::parse_checked("zzz = 1\n").expect("valid");
        assert_eq!(far[0].suggestion, None);
    }

    #[test]
    fn the_agent_table_is_known_and_its_typos_are_named() {
        let text = "[agent]\nprovider = \"anthropic\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:1\"\n\
                    api_key_env = \"KEY\"\nmax_turns = 5\nmax_tokens = 1000\nprice_input_per_mtok = 1.0\n\
                    price_output_per_mtok = 2.0\ncommand = [\"a\"]\nmodle = \"x\"\n";
        let (config, unknown) = Config::parse_checked(text).expect("valid");
        let named: Vec<(&str, Option<&str>)> =
            unknown.iter().map(|u| (u.key.as_str(), u.suggestion.as_deref())).collect();
        assert_eq!(named, [("agent.modle", Some("agent.model"))]);
        let agent = config.agent.expect("an [agent] table");
        assert_eq!((agent.provider.as_deref(), agent.max_turns), (Some("anthropic"), Some(5)));
        assert_eq!(Config::parse("base_url = \"x\"\n").expect("valid").agent, None);
        // A value the agent cannot use does not stop a replay-only run: it is checked when needed.
        assert!(Config::parse("[agent]\nprovider = \"nope\"\n").is_ok());
    }

    #[test]
    fn invalid_toml_and_wrong_types_are_located() {
        let error = Config::parse_checked("base_url = \"x\"\n[browser\nheadless = true\n").expect_err("not TOML");
        assert_eq!((error.line, error.column), (2, 9), "{error}");
        let error = Config::parse_checked("[browser]\nheadless = \"yes\"\n").expect_err("wrong type");
        assert_eq!((error.line, error.column), (2, 12), "{error}");
        assert!(error.message.contains("bool"), "{error}");
        // Columns count characters, not bytes.
        let error = Config::parse_checked("base_url = \"é\" x\n").expect_err("junk after a value");
        assert_eq!((error.line, error.column), (1, 16), "{error}");
    }
}
