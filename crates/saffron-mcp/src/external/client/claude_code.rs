//! Claude Code (`claude`), in print mode with its built-in tools off.

use std::path::Path;

use saffron_agent::Usage;
use serde_json::json;

use super::{Found, Gateway, Preset, SERVER_NAME, events_backwards};

/// The Claude Code version the preset was proven with.
pub const CLAUDE_CODE_PROVEN: &str = "2.1.332";

/// The flags the preset passes; `claude --help` must name each.
const FLAGS: [&str; 11] = [
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
    "--model",
];

pub(super) struct ClaudeCode;

impl Preset for ClaudeCode {
    fn proven(&self) -> &'static str {
        CLAUDE_CODE_PROVEN
    }

    fn help(&self) -> (&'static [&'static str], &'static [&'static str]) {
        (&["--help"], &FLAGS)
    }

    fn install(&self) -> &'static str {
        "npm install -g @anthropic-ai/claude-code"
    }

    fn prepare(&self, found: &Found, gateway: &Gateway, folder: &Path) -> std::io::Result<Vec<String>> {
        // Claude Code expands `${VARIABLE}` in an MCP configuration from its environment.
        let config = json!({
            "mcpServers": {
                SERVER_NAME: {
                    "type": "http",
                    "url": gateway.url,
                    "headers": { "Authorization": format!("Bearer ${{{}}}", gateway.token_variable) },
                }
            }
        });
        let config_path = folder.join("mcp.json");
        saffron_recording::write_atomic(&config_path, config.to_string().as_bytes())?;
        let mut argv = vec![
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
        if let Some(model) = &found.preset.model {
            argv.extend(["--model".into(), model.clone()]);
        }
        Ok(argv)
    }

    /// The last `result` event has the tokens, the model calls and the cost it computed.
    fn usage(&self, stdout: &str) -> Option<Usage> {
        let result = events_backwards(stdout).find(|event| event["type"] == "result")?;
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

    /// The `result` event's text: the model's last answer, or the error the session ended on.
    fn last_words(&self, stdout: &str) -> Option<String> {
        let result = events_backwards(stdout).find(|event| event["type"] == "result")?;
        let text = result["result"].as_str().or_else(|| result["error"].as_str())?;
        Some(text.trim().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use saffron_agent::{Client, ClientPreset};

    use super::*;
    use crate::external::client::{last_words, prepare, usage};

    #[test]
    fn its_usage_is_read_from_its_last_result_event() {
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
        let ended = "{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"I cannot find the Save button.\"}\n";
        assert_eq!(last_words(Client::ClaudeCode, ended).as_deref(), Some("I cannot find the Save button."));
    }

    #[test]
    fn the_command_line_never_holds_the_token() {
        let preset = ClientPreset { model: Some("claude-x".into()), ..ClientPreset::new(Client::ClaudeCode) };
        let found = Found { preset, path: PathBuf::from("/usr/bin/claude"), version: "2.1.332".into() };
        let gateway = Gateway { url: "http://127.0.0.1:1/mcp", token_variable: "SAFFRON_MCP_TOKEN" };
        let prepared = prepare(&found, &gateway).expect("prepared");
        let argv = prepared.argv.join(" ");
        assert!(argv.contains("--tools  --strict-mcp-config"), "no built-in tool: {argv}");
        assert!(argv.ends_with("--model claude-x"), "{argv}");
        let config = std::fs::read_to_string(prepared.folder.path().join("mcp.json")).expect("config");
        assert!(config.contains("Bearer ${SAFFRON_MCP_TOKEN}"), "{config}");
    }
}
