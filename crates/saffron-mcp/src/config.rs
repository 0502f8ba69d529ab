//! The part of `saffron.toml` the MCP server reads: the `[mcp]` table.

use std::path::Path;

use serde::Deserialize;

/// What the project allows AI assistants to do through `saffron mcp`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// `[mcp] allow_accept`: whether the `accept` and `reject` tools exist. Accepting a
    /// proposal is a person's act unless the project opts in.
    pub allow_accept: bool,
    /// Why `saffron.toml` could not be used, when it could not; the server then runs with the
    /// defaults (accept off) and says so.
    pub problem: Option<String>,
}

#[derive(Deserialize, Default)]
struct File {
    #[serde(default)]
    mcp: McpTable,
}

#[derive(Deserialize, Default)]
struct McpTable {
    #[serde(default)]
    allow_accept: bool,
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
            Err(error) => return McpConfig { allow_accept: false, problem: Some(format!("saffron.toml: {error}")) },
        };
        match toml::from_str::<File>(&text) {
            Ok(file) => McpConfig { allow_accept: file.mcp.allow_accept, problem: None },
            Err(error) => McpConfig {
                allow_accept: false,
                problem: Some(format!("saffron.toml is not valid TOML, so accept stays off: {}", error.message())),
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
        assert!(config.problem.is_some_and(|p| p.contains("not valid TOML")));
    }
}
