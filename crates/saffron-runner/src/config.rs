//! `saffron.toml`, the keys the runner reads. Every key is optional; `saffron init` writes the
//! file with the defaults and a comment on each.

use std::time::Duration;

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Config {
    pub base_url: Option<String>,
    pub browser: BrowserSection,
    pub timeouts: Timeouts,
    pub hooks: Hooks,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default)]
pub struct BrowserSection {
    pub path: String,
    pub headless: bool,
}

impl Default for BrowserSection {
    fn default() -> Self {
        BrowserSection { path: String::new(), headless: true }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
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
#[derive(Debug, Clone, Deserialize, PartialEq)]
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

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default)]
pub struct Hooks {
    pub setup: Commands,
    pub teardown: Commands,
    pub timeout_ms: u64,
}

impl Default for Hooks {
    fn default() -> Self {
        Hooks { setup: Commands::default(), teardown: Commands::default(), timeout_ms: 300_000 }
    }
}

impl Config {
    /// Parses `saffron.toml`; unknown sections (`[mcp]`...) belong to other commands.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|error| error.to_string())
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
}
