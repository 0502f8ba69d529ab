//! What the MCP server reads from `saffron.toml`: the `[mcp]` table, and what is wrong with the
//! file. The file's keys are the runner's config types, so an unknown key is found (and the
//! closest known one named) exactly as `saffron check` finds it.

use std::path::Path;

use saffron_runner::config::Config;

/// What the project allows AI assistants to do through `saffron mcp`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// `[mcp] allow_accept`: whether the `accept` and `reject` tools exist. Accepting a
    /// proposal is a person's act unless the project opts in.
    pub allow_accept: bool,
    /// Why `saffron.toml` could not be used, when it could not; the server then runs with the
    /// defaults (accept off) and says so.
    pub problem: Option<String>,
    /// Keys of `saffron.toml` that nothing reads, each with its place and the closest known
    /// key: `1:1: unknown key ...; did you mean ...?`.
    pub warnings: Vec<String>,
}

impl McpConfig {
    /// Reads `saffron.toml` at the project root. A missing file gives the defaults; an invalid
    /// one gives the defaults and the reason, never an error: the vocabulary tools are useful
    /// whatever the config says, and the safe default is the one that cannot accept.
    pub fn read(root: &Path) -> McpConfig {
        let path = root.join("saffron.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return McpConfig::default(),
            Err(error) => return McpConfig { problem: Some(format!("saffron.toml: {error}")), ..McpConfig::default() },
        };
        match Config::parse_checked(&text) {
            Ok((config, unknown)) => McpConfig {
                allow_accept: config.mcp.allow_accept,
                problem: None,
                warnings: unknown
                    .iter()
                    .map(|key| format!("{}:{}: {}; {}", key.line, key.column, key.message(), key.hint()))
                    .collect(),
            },
            Err(error) => McpConfig {
                problem: Some(format!("saffron.toml is not valid, so accept stays off: {error}")),
                ..McpConfig::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_opt_in_and_falls_back_safely() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(McpConfig::read(dir.path()), McpConfig::default());
        std::fs::write(dir.path().join("saffron.toml"), "base_url = \"x\"\n[mcp]\nallow_accept = true\n")
            .expect("write");
        assert!(McpConfig::read(dir.path()).allow_accept);
        std::fs::write(dir.path().join("saffron.toml"), "[mcp\nallow_accept = true\n").expect("write");
        let config = McpConfig::read(dir.path());
        assert!(!config.allow_accept);
        assert!(config.problem.is_some_and(|p| p.contains("not valid") && p.contains("1:5")));
    }

    #[test]
    fn unknown_keys_are_warnings_with_the_closest_known_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("saffron.toml"), "[mcp]\nallow_acept = true\n").expect("write");
        let config = McpConfig::read(dir.path());
        assert!(!config.allow_accept && config.problem.is_none());
        assert_eq!(
            config.warnings,
            ["2:1: unknown key `mcp.allow_acept` in saffron.toml: nothing reads it; did you mean `allow_accept`?"]
        );
    }
}
