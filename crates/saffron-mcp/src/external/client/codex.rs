//! OpenAI's Codex CLI (`codex exec`), with a read-only sandbox, its shell, web and other tools
//! off, and the user's own configuration not read.

use std::path::Path;

use saffron_agent::Usage;
use serde_json::Value;

use super::{Found, Gateway, Preset, SERVER_NAME, events_backwards, toml_string};

/// The Codex version the preset was proven with.
pub const CODEX_PROVEN: &str = "0.171.0";

/// The flags the preset passes; `codex exec --help` must name each. The `-c` keys and the
/// features it turns off are checked by Codex itself: `--strict-config` makes an unknown key an
/// error, and an unknown feature is always one.
const FLAGS: [&str; 11] = [
    "--json",
    "--ephemeral",
    "--skip-git-repo-check",
    "--strict-config",
    "--ignore-user-config",
    "--ignore-rules",
    "--sandbox",
    "--disable",
    "--config",
    "--model",
    "--color",
];

/// Codex's features that give the model a tool, or run something of the user's: all off.
const FEATURES_OFF: [&str; 15] = [
    // The shell (and with it every command, file read and fetch), and the snapshot of the
    // user's login shell taken for it.
    "shell_tool",
    "shell_snapshot",
    // Reading an image file from disk.
    "view_image",
    // Connectors, plugins and skills: tools and instructions from the user's installations.
    "apps",
    "plugins",
    "skill_search",
    "skill_mcp_dependency_install",
    "tool_suggest",
    // Hooks run the user's commands.
    "hooks",
    // Sub-agents, goals, a browser, the computer, image generation, sleeping.
    "multi_agent",
    "goals",
    "browser_use",
    "computer_use",
    "image_generation",
    "sleep_tool",
];

/// The id of the model provider `[agent] base_url` defines.
const PROVIDER_ID: &str = "saffron";

pub(super) struct Codex;

impl Preset for Codex {
    fn proven(&self) -> &'static str {
        CODEX_PROVEN
    }

    fn help(&self) -> (&'static [&'static str], &'static [&'static str]) {
        (&["exec", "--help"], &FLAGS)
    }

    fn install(&self) -> &'static str {
        "npm install -g @openai/codex"
    }

    fn prepare(&self, found: &Found, gateway: &Gateway, _folder: &Path) -> std::io::Result<Vec<String>> {
        let mut argv: Vec<String> = vec![
            found.path.display().to_string(),
            "exec".into(),
            // The events as JSON lines on standard output (the usage is in `turn.completed`).
            "--json".into(),
            "--color".into(),
            "never".into(),
            // No session files left behind; it runs in Saffron's private folder, no repository.
            "--ephemeral".into(),
            "--skip-git-repo-check".into(),
            // The user's config.toml is not read (their MCP servers, providers, profiles, hook
            // trust), nor their exec-policy rules; what is set here must be understood.
            "--strict-config".into(),
            "--ignore-user-config".into(),
            "--ignore-rules".into(),
            // Should any command ever run, it could not write.
            "--sandbox".into(),
            "read-only".into(),
        ];
        let mut set = |key: &str, value: String| argv.extend(["--config".into(), format!("{key}={value}")]);
        // Never ask: a call that would need approval is refused. Saffron's own tools are
        // approved below.
        set("approval_policy", toml_string("never"));
        set("web_search", toml_string("disabled"));
        set("tools.experimental_request_user_input.enabled", "false".into());
        // No AGENTS.md or other project instructions.
        set("project_doc_max_bytes", "0".into());
        // Saffron's gateway, the only MCP server: the client reads the token from its
        // environment.
        set(&format!("mcp_servers.{SERVER_NAME}.url"), toml_string(gateway.url));
        set(&format!("mcp_servers.{SERVER_NAME}.bearer_token_env_var"), toml_string(gateway.token_variable));
        set(&format!("mcp_servers.{SERVER_NAME}.default_tools_approval_mode"), toml_string("approve"));
        if let Some(provider) = &found.preset.provider {
            set("model_provider", toml_string(PROVIDER_ID));
            let key = |name: &str| format!("model_providers.{PROVIDER_ID}.{name}");
            set(&key("name"), toml_string("[agent] base_url"));
            set(&key("base_url"), toml_string(&provider.base_url));
            set(&key("wire_api"), toml_string("responses"));
            if let Some(variable) = &provider.key_env {
                set(&key("env_key"), toml_string(variable));
            }
        }
        for feature in FEATURES_OFF {
            argv.extend(["--disable".into(), feature.into()]);
        }
        if let Some(model) = &found.preset.model {
            argv.extend(["--model".into(), model.clone()]);
        }
        // The prompt on standard input.
        argv.push("-".into());
        Ok(argv)
    }

    /// Codex reports tokens per turn (`turn.completed`), not per model request, and no cost: a
    /// turn counts as one call.
    fn usage(&self, stdout: &str) -> Option<Usage> {
        let turns: Vec<Value> = stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| event["type"] == "turn.completed")
            .collect();
        if turns.is_empty() {
            return None;
        }
        let mut total = Usage::default();
        for turn in &turns {
            let tokens = |name: &str| turn["usage"][name].as_u64().unwrap_or(0);
            let (cached, written) = (tokens("cached_input_tokens"), tokens("cache_write_input_tokens"));
            // Its input count includes the cached tokens.
            total += &Usage {
                input_tokens: tokens("input_tokens").saturating_sub(cached + written),
                output_tokens: tokens("output_tokens"),
                cache_read_tokens: cached,
                cache_write_tokens: written,
                calls: 1,
                ..Usage::default()
            };
        }
        Some(total)
    }

    /// Its last message, or the error its turn ended on.
    fn last_words(&self, stdout: &str) -> Option<String> {
        events_backwards(stdout).find_map(|event| {
            let text = match event["type"].as_str()? {
                "item.completed" if event["item"]["type"] == "agent_message" => event["item"]["text"].as_str(),
                "turn.failed" => event["error"]["message"].as_str(),
                "error" => event["message"].as_str(),
                _ => None,
            };
            text.map(|text| text.trim().to_owned())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use saffron_agent::{Client, ClientPreset, ClientProvider};

    use super::*;
    use crate::external::client::{last_words, prepare, usage};

    #[test]
    fn its_usage_is_the_sum_of_its_turns() {
        let stdout = concat!(
            "{\"type\":\"thread.started\"}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1000,\"cached_input_tokens\":300,",
            "\"cache_write_input_tokens\":0,\"output_tokens\":40,\"reasoning_output_tokens\":10}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":500,\"cached_input_tokens\":0,\"output_tokens\":5}}\n"
        );
        let used = usage(Client::Codex, stdout).expect("turns");
        assert_eq!((used.input_tokens, used.cache_read_tokens, used.output_tokens), (1200, 300, 45));
        assert_eq!((used.calls, used.reported_cost_usd), (2, None));
        assert_eq!(usage(Client::Codex, "{\"type\":\"thread.started\"}\n"), None);
        let ended = concat!(
            "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"Recorded.\"}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{}}\n"
        );
        assert_eq!(last_words(Client::Codex, ended).as_deref(), Some("Recorded."));
        let failed = "{\"type\":\"turn.failed\",\"error\":{\"message\":\"401 Unauthorized\"}}\n";
        assert_eq!(last_words(Client::Codex, failed).as_deref(), Some("401 Unauthorized"));
    }

    #[test]
    fn the_command_line_contains_codex_and_never_holds_the_token() {
        let provider = ClientProvider { base_url: "http://127.0.0.1:9/v1".into(), key_env: Some("MY_KEY".into()) };
        let preset = ClientPreset { client: Client::Codex, model: Some("gpt-x".into()), provider: Some(provider) };
        let found = Found { preset, path: PathBuf::from("/usr/bin/codex"), version: CODEX_PROVEN.into() };
        let gateway = Gateway { url: "http://127.0.0.1:1/mcp", token_variable: "SAFFRON_MCP_TOKEN" };
        let argv = prepare(&found, &gateway).expect("prepared").argv.join(" ");
        for needed in [
            "exec --json",
            "--ignore-user-config",
            "--sandbox read-only",
            "--config approval_policy=\"never\"",
            "--config mcp_servers.saffron.bearer_token_env_var=\"SAFFRON_MCP_TOKEN\"",
            "--config model_providers.saffron.env_key=\"MY_KEY\"",
            "--disable shell_tool",
            "--model gpt-x -",
        ] {
            assert!(argv.contains(needed), "{needed} in {argv}");
        }
        assert!(!argv.contains("Bearer"), "{argv}");
    }
}
