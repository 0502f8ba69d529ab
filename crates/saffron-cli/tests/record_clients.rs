//! Recording through a vendor's own agent client, the real program: `[agent] program = "claude"`
//! runs Claude Code (installed from npm into `tests/clients/` by `.ci/run`), pointed at the fake
//! Anthropic server on loopback (`ANTHROPIC_BASE_URL`, a dummy key) that plays the scripted
//! model. Claude Code speaks the streaming Messages API and calls Saffron's tools through the
//! MCP gateway as `mcp__saffron__<tool>`; the script is written with Saffron's tool names.

mod support;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use saffron_agent::testing::{FakeServer, Reply, Wire};
use saffron_agent::{Block, Request, ToolInput};
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::json;
use support::agent::{
    Plans, Seen, check, done, errors_told, op, project, reply, runtime, scenario_at, sign_in, step, text, tool_results,
};

const PREFIX: &str = "mcp__saffron__";

/// The Claude Code the preset is proven with, as `.ci/run` installs it; `None` (and the test
/// says why it is skipped) when it is not installed.
fn claude_code() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients/node_modules/.bin");
    if bin.join("claude").is_file() {
        Some(bin)
    } else {
        eprintln!(
            "skipped: Claude Code is not installed in tests/clients (`npm ci --prefix tests/clients`, as .ci/run does)"
        );
        None
    }
}

/// The request as the script reads it: Saffron's tool names without the client's prefix.
fn unprefixed(request: &Request) -> Request {
    let mut request = request.clone();
    for tool in &mut request.tools {
        tool.name = tool.name.trim_start_matches(PREFIX).to_string();
    }
    for message in &mut request.messages {
        for block in &mut message.content {
            if let Block::ToolUse { name, .. } = block {
                *name = name.trim_start_matches(PREFIX).to_string();
            }
        }
    }
    request
}

/// The reply as the client needs it: each call of one of Saffron's tools named as the client
/// knows it (a script that reaches for the client's own tools names them as they are).
fn prefixed(reply: Reply) -> Reply {
    match reply {
        Reply::Answer(mut response) => {
            for block in &mut response.content {
                if let Block::ToolUse { name, .. } = block
                    && (name.starts_with("browser_") || name.starts_with("saffron_"))
                {
                    *name = format!("{PREFIX}{name}");
                }
            }
            Reply::Answer(response)
        }
        other => other,
    }
}

/// The fake Anthropic server playing `plans` for Claude Code.
async fn scripted_for_claude(plans: Plans, seen: Seen) -> FakeServer {
    FakeServer::start(Wire::Anthropic, move |request: &Request| {
        let request = unprefixed(request);
        seen.push(&request);
        prefixed(reply(&plans, &request).with_usage(1000, 50, 0, 0))
    })
    .await
    .expect("fake server")
}

/// `saffron run` with Claude Code on PATH, talking to `model`, in a HOME of its own.
fn run_with_claude(root: &Path, bin: &Path, home: &Path, model: &FakeServer, base_url: &str, target: &str) -> Output {
    let mut path = OsString::from(bin);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    std::process::Command::new(env!("CARGO_BIN_EXE_saffron"))
        .args(["run", "--base-url", base_url, target])
        .current_dir(root)
        .env("PATH", path)
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", model.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
        .env_remove("DEMO_PASSWORD")
        .output()
        .expect("saffron runs")
}

const CONFIG: &str = "[agent]\nprogram = \"claude\"\n[timeouts]\naction_ms = 3000\nassertion_ms = 3000\n";

/// One test's world: the demo app, a project without recordings configured for Claude Code, a
/// HOME of its own, and the installed client.
struct Trial {
    runtime: tokio::runtime::Runtime,
    demo: DemoServer,
    root: PathBuf,
    home: PathBuf,
    password: String,
    bin: PathBuf,
}

impl Trial {
    /// `None` (the test says it is skipped) without the installed client.
    fn start(name: &str) -> Option<Trial> {
        let bin = claude_code()?;
        let runtime = runtime();
        let config = DemoConfig::default();
        let password = config.password.clone();
        let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
        let root = project(name, &password);
        std::fs::write(root.join("saffron.toml"), CONFIG).expect("config");
        let home = root.join("home");
        std::fs::create_dir_all(home.join(".claude")).expect("home");
        Some(Trial { runtime, demo, root, home, password, bin })
    }

    fn target(&self) -> String {
        scenario_at(&self.root, "features/sign_in.feature", "Sign in with the demo account")
    }

    fn run(&self, model: &FakeServer) -> Output {
        run_with_claude(&self.root, &self.bin, &self.home, model, &self.demo.url(), &self.target())
    }

    /// Records the sign-in scenario with the model playing `before` and then the scenario's own
    /// plan; the run must be green. The model, what it saw, and what the run said.
    fn record_green(&self, before: Vec<support::agent::Op>) -> (FakeServer, Seen, String) {
        let mut ops = before;
        ops.extend(sign_in());
        ops.extend([step(4), check(json!({ "check": "noConsoleErrors" })), done()]);
        let mut plans = Plans::new();
        plans.insert("Sign in with the demo account".into(), ops);
        let seen = Seen::default();
        let model = self.runtime.block_on(scripted_for_claude(plans, seen.clone()));
        let output = self.run(&model);
        let said = text(&output);
        assert_eq!(output.status.code(), Some(0), "{said}\nerrors told to the agent:\n{}", errors_told(&seen));
        assert!(said.contains("1 scenario(s): 1 green"), "{said}");
        (model, seen, said)
    }

    fn recording(&self) -> String {
        let saved = self.root.join(".saffron/cache/sign-in/sign-in-with-the-demo-account.json");
        std::fs::read_to_string(&saved).expect("the recording is saved")
    }

    fn finish(self) {
        let _ = std::fs::remove_dir_all(&self.root);
        let _ = self.runtime.block_on(self.demo.shutdown());
    }
}

#[test]
fn a_scenario_is_recorded_through_claude_code_proven_saved_and_then_replayed_at_zero_requests() {
    let Some(trial) = Trial::start("claude-code") else { return };
    let password = trial.password.clone();
    let (model, seen, said) = trial.record_green(Vec::new());
    assert!(said.contains("recorded by Claude Code"), "the report names the client: {said}");
    // The usage Claude Code reported, read from its JSON events: every call's tokens, and the
    // cost it computed.
    let requests = model.requests().len();
    let recorded = said.lines().find(|line| line.contains("recorded by Claude Code")).unwrap_or_default();
    assert!(recorded.contains("tokens in") && !recorded.contains(": 0 tokens in"), "{recorded}");
    assert!(!said.contains("cost not reported"), "Claude Code reports a cost: {said}");
    let recording = trial.recording();
    assert!(recording.contains("{env:DEMO_PASSWORD}") && !recording.contains(&password), "{recording}");
    // What Claude Code sent the model: Saffron's tools, and not one of its own.
    let offered: std::collections::BTreeSet<String> =
        seen.all().iter().flat_map(|request| request.tools.iter().map(|tool| tool.name.clone())).collect();
    assert!(offered.contains("saffron_done"), "{offered:?}");
    // Claude Code lists one tool of its own whatever it is given: a placeholder for tools it
    // loads later (there are none with `--tools ""`), which runs nothing.
    let foreign: Vec<&String> = offered
        .iter()
        .filter(|name| !name.starts_with("browser_") && !name.starts_with("saffron_"))
        .filter(|name| name.as_str() != "DeferredToolPlaceholder")
        .collect();
    assert!(foreign.is_empty(), "only Saffron's tools reach the model: {foreign:?} of {offered:?}");
    for captured in model.requests() {
        assert!(!captured.body.contains(&password), "a request to the model held the password");
    }
    let call_input = |request: &Request| {
        request.messages.iter().flat_map(|message| message.content.iter()).any(|block| {
            matches!(block, Block::ToolUse { input: ToolInput::Json(input), .. } if input.to_string().contains(&password))
        })
    };
    assert!(!seen.all().iter().any(call_input), "the agent never saw the password");

    // The next run replays the recording: the model is not asked again.
    let output = trial.run(&model);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(model.requests().len(), requests, "a replay asked the model");
    trial.finish();
}

/// The agent tries, one call at a time, everything the preset must keep from it: a shell
/// command, reading `.env`, writing a file, fetching a URL, a tool of an MCP server the user
/// configured in their own (temporary) HOME, a hook from their settings. Claude Code refuses
/// each, none happens (the file system and a listener say so), and the recording goes on and is
/// saved as if they had not been tried.
#[test]
fn claude_code_refuses_a_shell_files_the_web_and_the_users_own_servers_and_hooks() {
    let Some(trial) = Trial::start("claude-code-contained") else { return };
    let (root, home, password) = (&trial.root, &trial.home, &trial.password);
    let pwned = |what: &str| root.join(format!("pwned-{what}"));
    // The user's own configuration: an MCP server that would leave a file the moment it
    // started, and a hook that would leave one when a session starts.
    let user_config = json!({
        "mcpServers": {
            "mine": { "type": "stdio", "command": "sh", "args": ["-c", format!("touch '{}'", pwned("mcp").display())] }
        }
    });
    std::fs::write(home.join(".claude.json"), user_config.to_string()).expect(".claude.json");
    let hooks = json!({
        "hooks": { "SessionStart": [{ "hooks": [{ "type": "command", "command": format!("touch '{}'", pwned("hook").display()) }] }] }
    });
    std::fs::write(home.join(".claude/settings.json"), hooks.to_string()).expect("settings.json");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
    listener.set_nonblocking(true).expect("non-blocking");
    let fetched = format!("http://{}/exfiltrate", listener.local_addr().expect("address"));

    let attempts = vec![
        op("Bash", json!({ "command": format!("touch '{}'", pwned("shell").display()), "description": "x" })),
        op("Read", json!({ "file_path": root.join(".env").display().to_string() })),
        op("Write", json!({ "file_path": pwned("write").display().to_string(), "content": "x" })),
        op("WebFetch", json!({ "url": fetched, "prompt": "read it" })),
        op("mcp__mine__run", json!({})),
        op("DeferredToolPlaceholder", json!({})),
    ];
    let (_model, seen, _) = trial.record_green(attempts);
    for what in ["shell", "write", "mcp", "hook"] {
        assert!(!pwned(what).exists(), "the {what} attempt happened");
    }
    assert!(listener.accept().is_err(), "the fetch reached the listener");
    // Each attempt came back to the model as a refusal, and none of them read the secret.
    let last = seen.all().last().cloned().expect("requests");
    let results = tool_results(&last);
    let refused: Vec<&(String, bool)> = results.iter().take(6).collect();
    assert_eq!(refused.len(), 6, "{results:?}");
    assert!(refused.iter().all(|(_, is_error)| *is_error), "every attempt was refused: {refused:?}");
    assert!(results.iter().all(|(content, _)| !content.contains(password.as_str())), "a result held the password");
    // The recording is the scenario's own: none of the attempts is in it.
    let recording: serde_json::Value = serde_json::from_str(&trial.recording()).expect("json");
    let actions: Vec<String> = recording["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .flat_map(|step| step["actions"].as_array().cloned().unwrap_or_default())
        .map(|action| action["type"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(actions.first().is_some_and(|first| first == "goto"), "{actions:?}");
    trial.finish();
}

/// A client that runs a model's calls together (a check the gateway refuses and, in the same
/// answer, `saffron_done`) still ends in a verified recording: the refused check stops the done
/// (an announced Then step has no check yet), the agent fixes the check, and the recording that
/// is saved holds the check that passed and nothing of the refused one.
#[test]
fn claude_code_batching_a_refused_check_with_done_still_ends_verified() {
    let Some(trial) = Trial::start("claude-code-batch") else { return };
    let mut before = sign_in();
    before.push(step(4));
    let mut plans = Plans::new();
    plans.insert("Sign in with the demo account".into(), before.clone());
    let seen = Seen::default();
    let batch_at = before.len();
    let recorder = seen.clone();
    let model = trial.runtime.block_on(FakeServer::start(Wire::Anthropic, move |request: &Request| {
        let request = unprefixed(request);
        recorder.push(&request);
        let answers = request.answers_so_far();
        let reply = if answers < batch_at {
            reply(&plans, &request)
        } else if answers == batch_at {
            Reply::calls(&[
                ("batch-1", "saffron_assert", json!({ "check": "url", "url": "/nowhere" })),
                ("batch-2", "saffron_done", json!({ "success": true, "narrative": "All verified." })),
            ])
        } else if answers == batch_at + 1 {
            Reply::call("fix-1", "saffron_assert", json!({ "check": "noConsoleErrors" }))
        } else if answers == batch_at + 2 {
            Reply::call("fix-2", "saffron_done", json!({ "success": true, "narrative": "Verified." }))
        } else {
            Reply::text("Finished.")
        };
        prefixed(reply.with_usage(1000, 50, 0, 0))
    }));
    let model = model.expect("fake server");

    let output = trial.run(&model);
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}\nerrors told to the agent:\n{}", errors_told(&seen));
    assert!(said.contains("1 scenario(s): 1 green"), "{said}");
    // Both calls of the batch were refused.
    let after_batch =
        seen.all().into_iter().find(|request| request.answers_so_far() == batch_at + 1).expect("asked again");
    let results = tool_results(&after_batch);
    let batch: Vec<&(String, bool)> = results.iter().rev().take(2).collect();
    assert!(batch.iter().all(|(_, is_error)| *is_error), "the refused check and the done it came with: {batch:?}");
    let recording = trial.recording();
    assert!(recording.contains("expectNoConsoleErrors") && !recording.contains("/nowhere"), "{recording}");
    trial.finish();
}

/// A `claude` older than the version the preset was proven with is never started for a
/// session: the scenario is blocked with the reason and the install hint, and nothing runs it.
#[test]
fn an_older_claude_code_is_refused_at_start_and_the_scenario_is_blocked() {
    let runtime = runtime();
    let config = DemoConfig::default();
    let password = config.password.clone();
    let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
    let root = project("claude-code-old", &password);
    std::fs::write(root.join("saffron.toml"), CONFIG).expect("config");
    let bin = root.join("old-bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let started = root.join("a-session-started");
    let stand_in = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.0.1 (Claude Code)'; exit 0; fi\n\
         if [ \"$1\" = --help ]; then exit 0; fi\ntouch '{}'\n",
        started.display()
    );
    std::fs::write(bin.join("claude"), stand_in).expect("stand-in");
    std::fs::set_permissions(bin.join("claude"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let model = runtime.block_on(scripted_for_claude(Plans::new(), Seen::default()));
    let target = scenario_at(&root, "features/sign_in.feature", "Sign in with the demo account");
    let output = run_with_claude(&root, &bin, &root, &model, &demo.url(), &target);
    let said = text(&output);
    assert!(said.contains("! blocked"), "{said}");
    assert!(said.contains("Claude Code 2.0.1 is older than 2.1.332"), "{said}");
    assert!(said.contains("npm install -g @anthropic-ai/claude-code"), "the install hint: {said}");
    assert!(!started.exists(), "the old client was started for a session");
    assert!(model.requests().is_empty());
    let _ = std::fs::remove_dir_all(&root);
    let _ = runtime.block_on(demo.shutdown());
}
