//! External agent programs: the user's own agent CLI (Claude Code, Codex, any MCP client)
//! records a scenario through the same tool gateway as the built-in providers.
//!
//! For one session, [`ExternalDriver`] serves the gateway's tools as an MCP server over
//! streamable HTTP on 127.0.0.1 (a port the system picks) behind a random bearer token, starts
//! the configured command with the endpoint and the token in its environment and the prompt on
//! its standard input, and runs each tool call it receives through the gateway. Saffron then
//! needs no API key: the program brings its own model, and reports no tokens.

pub mod client;
mod http;
mod program;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use saffron_agent::{
    AgentCommand, AgentDriver, Block, BoxFuture, Budget, Exhausted, ExternalAgent, Message, Prices, SessionOutcome,
    SessionReport, ToolGateway, ToolInput, ToolOutput, Usage,
};
use saffron_recording::Masker;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

use self::http::{GatewayServer, mcp_tools, new_token};
use self::program::{Launch, Program, describe_exit, tail};

/// The MCP endpoint, `http://127.0.0.1:<port>/mcp`.
pub const URL_VARIABLE: &str = "SAFFRON_MCP_URL";
/// The bearer token every request must carry (`Authorization: Bearer <token>`).
pub const TOKEN_VARIABLE: &str = "SAFFRON_MCP_TOKEN";
/// The prompt (the system prompt, a blank line, the task), also given on standard input.
pub const PROMPT_VARIABLE: &str = "SAFFRON_AGENT_PROMPT";

/// Runs an external agent program for each session.
#[derive(Debug, Clone)]
pub struct ExternalDriver {
    agent: ExternalAgent,
    time_limit: Duration,
    grace: Duration,
    working_dir: Option<PathBuf>,
    /// A vendor's client, found and checked once for the run.
    found: std::sync::Arc<std::sync::OnceLock<Result<client::Found, client::Unusable>>>,
}

impl ExternalDriver {
    /// How long one session may run when nothing else is said: a coding agent CLI that records
    /// a long scenario takes minutes, one that hangs must not hold the run forever.
    pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(20 * 60);
    /// How long the program has to exit after SIGTERM before its group is killed.
    pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

    pub fn new(agent: ExternalAgent) -> ExternalDriver {
        ExternalDriver {
            agent,
            time_limit: ExternalDriver::DEFAULT_TIME_LIMIT,
            grace: ExternalDriver::DEFAULT_GRACE,
            working_dir: None,
            found: std::sync::Arc::default(),
        }
    }

    /// The wall-clock limit of one session.
    pub fn with_time_limit(mut self, limit: Duration) -> ExternalDriver {
        self.time_limit = limit;
        self
    }

    /// How long a stopped program has between SIGTERM and SIGKILL.
    pub fn with_grace(mut self, grace: Duration) -> ExternalDriver {
        self.grace = grace;
        self
    }

    /// Where the program runs (the project root, as for hooks); else the current directory.
    pub fn with_working_dir(mut self, dir: impl Into<PathBuf>) -> ExternalDriver {
        self.working_dir = Some(dir.into());
        self
    }

    async fn session(&self, gateway: &mut dyn ToolGateway, masker: &Masker, system: &str, task: &str) -> SessionReport {
        let prompt = format!("{}\n\n{}", masker.mask(system), masker.mask(task));
        let mut conversation = vec![Message::user_text(prompt.clone())];
        let gave_up = |cause: String, conversation: Vec<Message>| SessionReport {
            outcome: SessionOutcome::GaveUp { last_words: masker.mask(&cause) },
            usage: Usage::default(),
            turns: 0,
            conversation,
        };
        let token = match new_token() {
            Ok(token) => token,
            Err(error) => return gave_up(format!("the MCP gateway could not start: {error}"), conversation),
        };
        let (calls_in, mut calls) = mpsc::channel(8);
        let server = match GatewayServer::start(mcp_tools(&gateway.tools()), &token, calls_in).await {
            Ok(server) => server,
            Err(error) => return gave_up(format!("the MCP gateway could not start: {error}"), conversation),
        };
        // The program and all it starts end with this process, however it ends (a SIGKILL
        // included): the watchdog of a launched browser watches them too.
        let created = tokio::task::spawn_blocking(saffron_browser::WatchedFolder::create).await;
        let watched = match created.map_err(|error| error.to_string()).and_then(|made| made.map_err(|e| e.to_string()))
        {
            Ok(watched) => watched,
            Err(error) => {
                server.stop().await;
                return gave_up(format!("the agent program's watchdog could not start: {error}"), conversation);
            }
        };
        let (watch_variable, watch_value) = watched.env();
        // A vendor's client: its command line is built here, contained, from a private folder
        // that goes with the session.
        let mut prepared = None;
        if let AgentCommand::Client(wanted) = &self.agent.command {
            let found = self.found.get_or_init(|| client::find(wanted, std::env::var_os("PATH")));
            let gateway = client::Gateway { url: &server.url, token_variable: TOKEN_VARIABLE };
            let made = match found {
                Ok(found) => client::prepare(found, &gateway)
                    .map_err(|error| format!("{} could not be prepared: {error}", wanted.client.name())),
                Err(unusable) => Err(unusable.to_string()),
            };
            match made {
                Ok(made) => prepared = Some((wanted.client, made)),
                Err(cause) => {
                    let _ = tokio::task::spawn_blocking(move || watched.release()).await;
                    server.stop().await;
                    return gave_up(cause, conversation);
                }
            }
        }
        let client_command = prepared.as_ref().map(|(_, made)| AgentCommand::Argv(made.argv.clone()));
        let launch = Launch {
            command: client_command.as_ref().unwrap_or(&self.agent.command),
            // A client runs in its private folder: no instruction or configuration file of the
            // project (CLAUDE.md, AGENTS.md, .codex/) reaches it, nor does `.env`.
            working_dir: match &prepared {
                Some((_, made)) => Some(made.folder.path()),
                None => self.working_dir.as_deref(),
            },
            env: vec![
                (URL_VARIABLE, server.url.clone()),
                (TOKEN_VARIABLE, token),
                (PROMPT_VARIABLE, prompt.clone()),
                (watch_variable, watch_value),
            ],
            env_removed: secret_variables(std::env::vars_os(), masker),
            stdin: prompt,
        };
        let mut program = match Program::start(launch) {
            Ok(program) => program,
            Err(error) => {
                let _ = tokio::task::spawn_blocking(move || watched.release()).await;
                server.stop().await;
                let cause = format!("the agent program {} could not start: {error}", command_text(&self.agent.command));
                return gave_up(cause, conversation);
            }
        };
        let deadline = Instant::now() + self.time_limit;
        let budget = self.agent.budget;
        let mut turns: u32 = 0;
        let ended = loop {
            tokio::select! {
                // A call the program sent before it exited is still answered.
                biased;
                call = calls.recv() => {
                    // The server holds the sender for as long as it runs.
                    let Some(call) = call else { break Ended::ServerStopped };
                    turns += 1;
                    let id = format!("call-{turns}");
                    let answer = tokio::select! {
                        output = gateway.call(&call.name, &call.input) => Some(output),
                        _ = tokio::time::sleep_until(deadline) => None,
                    };
                    let Some(output) = answer else {
                        let _ = call.answer.send(ToolOutput::error("the time limit of the session is up"));
                        break Ended::Outcome(self.out_of_time());
                    };
                    let output = ToolOutput { content: masker.mask(&output.content), is_error: output.is_error };
                    let input = mask_json(masker, call.input);
                    conversation.push(Message::assistant(vec![Block::ToolUse {
                        id: id.clone(),
                        name: call.name,
                        input: ToolInput::Json(input),
                    }]));
                    conversation.push(Message::user(vec![Block::ToolResult {
                        tool_use_id: id,
                        content: output.content.clone(),
                        is_error: output.is_error,
                    }]));
                    let _ = call.answer.send(output);
                    if gateway.is_done() {
                        break Ended::Outcome(SessionOutcome::Done);
                    }
                    if turns >= budget.max_turns {
                        break Ended::Outcome(SessionOutcome::BudgetExhausted(Exhausted::Turns { max: budget.max_turns }));
                    }
                }
                status = program.exited() => break Ended::Exited(status),
                _ = tokio::time::sleep_until(deadline) => break Ended::Outcome(self.out_of_time()),
            }
        };
        // Calls waiting in the channel, and those the program makes from now on, are answered
        // "the session is over" (their answer senders are dropped with the channel).
        drop(calls);
        // A client that finished ends its turn and prints its usage: it is given the time to.
        if prepared.is_some() && matches!(ended, Ended::Outcome(SessionOutcome::Done)) {
            let _ = tokio::time::timeout(CLIENT_WIND_DOWN, program.exited()).await;
        }
        let outputs = program.stop(self.grace).await;
        // Whatever left the program's process group goes now.
        let _ = tokio::task::spawn_blocking(move || watched.release()).await;
        server.stop().await;
        let outcome = match ended {
            Ended::Outcome(outcome) => outcome,
            Ended::ServerStopped => {
                SessionOutcome::GaveUp { last_words: "the MCP gateway stopped before the agent finished".into() }
            }
            Ended::Exited(status) => {
                let how = match status {
                    Ok(status) => format!("the agent program exited ({}) without finishing", describe_exit(&status)),
                    Err(error) => format!("the agent program could not be waited for ({error})"),
                };
                // A vendor's client says in its structured output what it last said or what
                // went wrong, which its stderr (warnings, progress) seldom does.
                let client_said = prepared
                    .as_ref()
                    .and_then(|(which, _)| client::last_words(*which, &outputs.stdout))
                    .map(|text| tail(&masker.mask(&text), 8, 200))
                    .filter(|text| !text.is_empty());
                let last_words = match client_said {
                    Some(text) => format!("{how}; it said last:\n{text}"),
                    None => {
                        // Many agent CLIs print their errors on stdout; stderr first, as it is
                        // meant for them. Short: a report's cause line shows the first 300
                        // characters.
                        let said = [("stderr", &outputs.stderr), ("stdout", &outputs.stdout)]
                            .into_iter()
                            .map(|(stream, text)| (stream, tail(&masker.mask(text), 8, 200)))
                            .find(|(_, text)| !text.is_empty());
                        match said {
                            Some((stream, text)) => format!("{how}; its {stream} ends with:\n{text}"),
                            None => format!("{how}, and printed nothing"),
                        }
                    }
                };
                SessionOutcome::GaveUp { last_words }
            }
        };
        let usage = prepared.as_ref().and_then(|(which, _)| client::usage(*which, &outputs.stdout)).unwrap_or_default();
        SessionReport { outcome, usage, turns, conversation }
    }

    fn out_of_time(&self) -> SessionOutcome {
        SessionOutcome::BudgetExhausted(Exhausted::Time { seconds: self.time_limit.as_secs() })
    }
}

enum Ended {
    Outcome(SessionOutcome),
    Exited(std::io::Result<std::process::ExitStatus>),
    ServerStopped,
}

impl AgentDriver for ExternalDriver {
    fn describe(&self) -> String {
        match (&self.agent.command, self.found.get()) {
            (AgentCommand::Client(_), Some(Ok(found))) => format!("{} {}", found.client().name(), found.version),
            (AgentCommand::Client(wanted), _) => wanted.client.name().to_owned(),
            (command, _) => format!("external agent {}", command_text(command)),
        }
    }

    fn budget(&self) -> Budget {
        self.agent.budget
    }

    fn prices(&self) -> Option<Prices> {
        self.agent.prices
    }

    fn run<'a>(
        &'a self,
        gateway: &'a mut dyn ToolGateway,
        masker: &'a Masker,
        system: &'a str,
        task: &'a str,
    ) -> BoxFuture<'a, SessionReport> {
        Box::pin(self.session(gateway, masker, system, task))
    }
}

/// How long a client that called `saffron_done` has to end its turn and print its usage.
const CLIENT_WIND_DOWN: Duration = Duration::from_secs(60);

fn command_text(command: &AgentCommand) -> String {
    match command {
        AgentCommand::Shell(line) => format!("`{line}`"),
        AgentCommand::Argv(argv) => format!("`{}`", argv.join(" ")),
        AgentCommand::Client(wanted) => format!("{} (`{}`)", wanted.client.name(), wanted.client.program()),
    }
}

fn mask_json(masker: &Masker, value: Value) -> Value {
    if masker.is_empty() {
        return value;
    }
    serde_json::from_str(&masker.mask(&value.to_string())).unwrap_or(value)
}

/// The inherited variables whose value is a secret the scenario uses: the program must not get
/// them (it sees `{env:NAME}`, the gateway substitutes).
fn secret_variables(env: impl IntoIterator<Item = (OsString, OsString)>, masker: &Masker) -> Vec<OsString> {
    env.into_iter()
        .filter(|(_, value)| value.to_str().is_some_and(|value| masker.values().any(|secret| secret == value)))
        .map(|(name, _)| name)
        .collect()
}

#[cfg(test)]
mod tests {
    use saffron_recording::Secret;

    use super::*;

    #[test]
    fn variables_holding_a_secret_are_not_inherited() {
        let mut masker = Masker::new();
        masker.add(&Secret { name: "PASSWORD".into(), value: "hunter2-long".into() });
        let env = [("HOME", "/root"), ("DEMO_PASSWORD", "hunter2-long"), ("NOTE", "not hunter2-long")];
        let env = env.map(|(name, value)| (OsString::from(name), OsString::from(value)));
        assert_eq!(secret_variables(env, &masker), [OsString::from("DEMO_PASSWORD")]);
    }
}
