//! The vendors' own agent clients, started and contained by Saffron: it builds the command line
//! (the client's own flags that leave it Saffron's tools and nothing else), hands it the
//! gateway's address with the token kept out of every command line, and reads the client's
//! usage from its structured output.
//!
//! A client is proven with one version: an older one, or one that lacks a flag the preset
//! passes, is refused at start with the install hint (a flag a client silently ignored could
//! leave it a shell).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use saffron_agent::{Client, Usage};
use serde_json::{Value, json};

/// The Claude Code version the preset was proven with.
pub const CLAUDE_CODE_PROVEN: &str = "2.1.332";

/// The flags the Claude Code preset passes; its `--help` must name each.
const CLAUDE_CODE_FLAGS: [&str; 10] = [
    "--print",
    "--output-format",
    "--tools",
    "--strict-mcp-config",
    "--mcp-config",
    "--allowedTools",
    "--permission-prompts",
    "--setting-sources",
    "--disable-slash-commands",
    "--no-session-persistence",
];

/// The name the gateway is registered under: its tools reach the model as `mcp__saffron__<tool>`.
const SERVER_NAME: &str = "saffron";

/// A client found on PATH, its version checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub client: Client,
    pub path: PathBuf,
    pub version: String,
}

/// Why a client cannot be used, with what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}; {hint}")]
pub struct Unusable {
    pub problem: String,
    pub hint: String,
    /// It is not on PATH at all (rather than there and unfit).
    pub absent: bool,
}

fn install_hint(client: Client) -> String {
    match client {
        Client::ClaudeCode => format!(
            "install Claude Code {CLAUDE_CODE_PROVEN} or later (`npm install -g @anthropic-ai/claude-code`) and sign in \
             with `claude`, or set `provider` and an API key in [agent] instead (docs/agent.md)"
        ),
    }
}

/// The client's program on `path_variable` (PATH), its version and flags checked.
pub fn find(client: Client, path_variable: Option<std::ffi::OsString>) -> Result<Found, Unusable> {
    let unusable = |problem: String| Unusable { problem, hint: install_hint(client), absent: false };
    let program = client.program();
    let path = path_variable
        .iter()
        .flat_map(std::env::split_paths)
        .map(|folder| folder.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| Unusable {
            absent: true,
            ..unusable(format!("`{program}` ({}) is not on PATH", client.name()))
        })?;
    let said = |arg: &str| -> Result<String, Unusable> {
        let output = std::process::Command::new(&path)
            .arg(arg)
            .stdin(Stdio::null())
            .output()
            .map_err(|error| unusable(format!("{} could not be run: {error}", path.display())))?;
        Ok(format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr)))
    };
    let version_text = said("--version")?;
    let version = version_text.split_whitespace().next().unwrap_or_default().to_owned();
    let proven = match client {
        Client::ClaudeCode => CLAUDE_CODE_PROVEN,
    };
    match (numbers(&version), numbers(proven)) {
        (Some(found), Some(needed)) if found >= needed => {}
        _ => {
            return Err(unusable(format!(
                "{} {} is older than {proven}, the version Saffron's containment was proven with",
                client.name(),
                if version.is_empty() { "(no version)" } else { version.as_str() }
            )));
        }
    }
    let help = said("--help")?;
    let flags = match client {
        Client::ClaudeCode => &CLAUDE_CODE_FLAGS[..],
    };
    if let Some(missing) = flags.iter().find(|flag| !help.contains(*flag)) {
        return Err(unusable(format!(
            "{} {version} has no `{missing}` flag, which Saffron needs to contain it",
            client.name()
        )));
    }
    Ok(Found { client, path, version })
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata().is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// `2.1.332` as numbers, for comparing versions.
fn numbers(version: &str) -> Option<Vec<u64>> {
    let parts: Option<Vec<u64>> = version.split('.').map(|part| part.parse().ok()).collect();
    parts.filter(|parts| !parts.is_empty())
}

/// What one session of a client needs: its command line and the private folder its
/// configuration is in (removed with it).
pub struct Prepared {
    pub argv: Vec<String>,
    pub folder: tempfile::TempDir,
}

/// The command line of one session. The gateway's token is not in it: the MCP configuration
/// names the variable (`token_variable`, set in the client's environment), and the client
/// expands it when it connects.
pub fn prepare(found: &Found, url: &str, token_variable: &str) -> std::io::Result<Prepared> {
    let folder = tempfile::Builder::new().prefix("saffron-client-").tempdir()?;
    match found.client {
        Client::ClaudeCode => {
            let config = json!({
                "mcpServers": {
                    SERVER_NAME: {
                        "type": "http",
                        "url": url,
                        "headers": { "Authorization": format!("Bearer ${{{token_variable}}}") },
                    }
                }
            });
            let config_path = folder.path().join("mcp.json");
            saffron_recording::write_atomic(&config_path, config.to_string().as_bytes())?;
            let argv = vec![
                found.path.display().to_string(),
                // Print mode: the prompt on standard input, the events as JSON lines on standard
                // output (the usage is in the last one).
                "--print".into(),
                "--output-format".into(),
                "stream-json".into(),
                "--verbose".into(),
                // No built-in tool: no shell, no file reads or edits, no web search or fetch, no
                // sub-agents.
                "--tools".into(),
                String::new(),
                // Saffron's gateway and no MCP server of the user's own configuration.
                "--strict-mcp-config".into(),
                "--mcp-config".into(),
                config_path.display().to_string(),
                // Saffron's tools run without asking; anything else that would ask is refused.
                "--allowedTools".into(),
                format!("mcp__{SERVER_NAME}"),
                "--permission-prompts".into(),
                "none".into(),
                // No user, project or local settings: no hooks, permissions or plugins of theirs.
                "--setting-sources".into(),
                String::new(),
                "--disable-slash-commands".into(),
                "--no-session-persistence".into(),
            ];
            Ok(Prepared { argv, folder })
        }
    }
}

/// What the session used, from the client's structured output: Claude Code's last `result`
/// event has the tokens, the model calls and the cost it computed.
pub fn usage(client: Client, stdout: &str) -> Option<Usage> {
    match client {
        Client::ClaudeCode => {
            let result = stdout
                .lines()
                .rev()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .find(|event| event["type"] == "result")?;
            let tokens = |name: &str| result["usage"][name].as_u64().unwrap_or(0);
            Some(Usage {
                input_tokens: tokens("input_tokens"),
                output_tokens: tokens("output_tokens"),
                cache_read_tokens: tokens("cache_read_input_tokens"),
                cache_write_tokens: tokens("cache_creation_input_tokens"),
                calls: result["num_turns"].as_u64().and_then(|turns| u32::try_from(turns).ok()).unwrap_or(0),
                model_time: std::time::Duration::from_millis(result["duration_api_ms"].as_u64().unwrap_or(0)),
                reported_cost_usd: result["total_cost_usd"].as_f64(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert!(numbers("2.1.332") >= numbers("2.1.332"));
        assert!(numbers("2.10.0") > numbers("2.9.99"));
        assert!(numbers("2.1.40") < numbers("2.1.332"));
        assert_eq!(numbers("x.1"), None);
        assert_eq!(numbers(""), None);
    }

    #[test]
    fn claude_codes_usage_is_read_from_its_last_result_event() {
        let stdout = concat!(
            "{\"type\":\"system\",\"subtype\":\"init\"}\n",
            "not json\n",
            "{\"type\":\"result\",\"num_turns\":4,\"duration_api_ms\":1200,\"total_cost_usd\":0.0123,",
            "\"usage\":{\"input_tokens\":900,\"output_tokens\":80,\"cache_read_input_tokens\":300,",
            "\"cache_creation_input_tokens\":50}}\n"
        );
        let used = usage(Client::ClaudeCode, stdout).expect("a result event");
        assert_eq!((used.input_tokens, used.output_tokens), (900, 80));
        assert_eq!((used.cache_read_tokens, used.cache_write_tokens, used.calls), (300, 50, 4));
        assert_eq!(used.reported_cost_usd, Some(0.0123));
        assert_eq!(usage(Client::ClaudeCode, "{\"type\":\"system\"}\n"), None);
    }

    #[test]
    fn the_command_line_never_holds_the_token() {
        let found =
            Found { client: Client::ClaudeCode, path: PathBuf::from("/usr/bin/claude"), version: "2.1.332".into() };
        let prepared = prepare(&found, "http://127.0.0.1:1/mcp", "SAFFRON_MCP_TOKEN").expect("prepared");
        let argv = prepared.argv.join(" ");
        assert!(argv.contains("--tools  --strict-mcp-config"), "no built-in tool: {argv}");
        let config = std::fs::read_to_string(prepared.folder.path().join("mcp.json")).expect("config");
        assert!(config.contains("Bearer ${SAFFRON_MCP_TOKEN}"), "{config}");
    }
}
