//! The agent loop: ask the model, run every tool call of its answer through the gateway, feed
//! the results back, until the gateway says the work is done, the model stops acting, or the
//! budget runs out.
//!
//! Every text that goes into a request (the system prompt, the task, each tool result) passes
//! through the caller's [`Masker`] first: a secret the gateway substituted into the page never
//! reaches the model.

use saffron_recording::Masker;
use serde_json::Value;

use crate::model::{Block, Message, Request, StopReason, ToolInput, ToolSpec, Usage};
use crate::provider::{BoxFuture, Provider, ProviderError};

/// What one scenario's agent session may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Model calls.
    pub max_turns: u32,
    /// Tokens of every kind, summed over the calls ([`Usage::total_tokens`]).
    pub max_tokens: u64,
}

/// What a tool answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub content: String,
    /// A refusal or a failure: an unknown tool, a ref that does not exist, input that does not
    /// match the tool's schema, a check the page does not pass. The session goes on.
    pub is_error: bool,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> ToolOutput {
        ToolOutput { content: content.into(), is_error: false }
    }

    pub fn error(content: impl Into<String>) -> ToolOutput {
        ToolOutput { content: content.into(), is_error: true }
    }
}

/// The only way an agent acts: the tools it may call, and the one place that runs them.
pub trait ToolGateway: Send {
    fn tools(&self) -> Vec<ToolSpec>;

    /// Runs one call. An unknown tool or input the tool does not take is an error output, never
    /// a panic.
    fn call<'a>(&'a mut self, name: &'a str, input: &'a Value) -> BoxFuture<'a, ToolOutput>;

    /// True once the work is over (the gateway accepted the agent's final call).
    fn is_done(&self) -> bool;

    /// Said to a model that answered without calling a tool.
    fn nudge(&self) -> String {
        "You answered without calling a tool. You act only through the tools: continue with them, \
         and call the tool that ends the session when you are finished."
            .into()
    }
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionOutcome {
    /// The gateway says the work is done (whether the agent reported success is the gateway's).
    Done,
    /// The model answered twice in a row without calling a tool.
    GaveUp { last_words: String },
    /// The turn or token budget ran out first.
    BudgetExhausted(Exhausted),
    /// The provider gave no answer (unavailable after retries, refused the key or the request,
    /// answered in another format).
    ProviderFailed(ProviderError),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exhausted {
    Turns {
        max: u32,
    },
    Tokens {
        used: u64,
        max: u64,
    },
    /// An external agent program ran for its whole wall-clock limit.
    Time {
        seconds: u64,
    },
}

impl SessionOutcome {
    pub fn is_done(&self) -> bool {
        matches!(self, SessionOutcome::Done)
    }

    /// Why the session did not get the work done, for the report: the runner makes such a
    /// scenario blocked, not red (it says nothing about the application).
    pub fn cause(&self) -> Option<String> {
        match self {
            SessionOutcome::Done => None,
            SessionOutcome::GaveUp { last_words } if last_words.trim().is_empty() => {
                Some("the agent stopped without finishing: it answered twice without calling a tool".into())
            }
            SessionOutcome::GaveUp { last_words } => {
                // The built-in loop's last words are the model's text; an external program's are
                // how it exited and the end of its stderr.
                let words: String = last_words.split_whitespace().collect::<Vec<_>>().join(" ");
                let words: String = words.chars().take(300).collect();
                Some(format!("the agent stopped without finishing; its last words: \"{words}\""))
            }
            SessionOutcome::BudgetExhausted(Exhausted::Turns { max }) => {
                Some(format!("the agent used all {max} turns (`max_turns` in [agent]) without finishing"))
            }
            SessionOutcome::BudgetExhausted(Exhausted::Tokens { used, max }) => Some(format!(
                "the agent used {used} tokens of its budget of {max} (`max_tokens` in [agent]) without finishing"
            )),
            SessionOutcome::BudgetExhausted(Exhausted::Time { seconds }) => {
                Some(format!("the agent program ran for its whole time limit of {seconds} s without finishing"))
            }
            SessionOutcome::ProviderFailed(error) => Some(error.to_string()),
        }
    }
}

/// A finished session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionReport {
    pub outcome: SessionOutcome,
    pub usage: Usage,
    /// Model calls made.
    pub turns: u32,
    /// The conversation as it was sent (masked), with the last answer: evidence for a report.
    pub conversation: Vec<Message>,
}

/// One agent session's fixed parts.
pub struct Session<'a> {
    pub provider: &'a dyn Provider,
    /// Applied to every text before it goes into a request.
    pub masker: &'a Masker,
    pub budget: Budget,
    /// The most tokens one answer may have (lowered to what is left of the budget).
    pub max_output_tokens: u32,
}

impl<'a> Session<'a> {
    pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;

    pub fn new(provider: &'a dyn Provider, masker: &'a Masker, budget: Budget) -> Session<'a> {
        Session { provider, masker, budget, max_output_tokens: Session::DEFAULT_MAX_OUTPUT_TOKENS }
    }

    /// Runs the loop with `system` as the system prompt and `task` as the first message.
    pub async fn run(&self, gateway: &mut dyn ToolGateway, system: &str, task: &str) -> SessionReport {
        let mut request = Request {
            system: self.masker.mask(system),
            messages: vec![Message::user_text(self.masker.mask(task))],
            tools: gateway.tools(),
            max_output_tokens: self.max_output_tokens,
        };
        let mut usage = Usage::default();
        let mut turns = 0;
        let mut nudged = false;
        let outcome = loop {
            if turns >= self.budget.max_turns {
                break SessionOutcome::BudgetExhausted(Exhausted::Turns { max: self.budget.max_turns });
            }
            let left = self.budget.max_tokens.saturating_sub(usage.total_tokens());
            if left == 0 {
                let exhausted = Exhausted::Tokens { used: usage.total_tokens(), max: self.budget.max_tokens };
                break SessionOutcome::BudgetExhausted(exhausted);
            }
            request.max_output_tokens = self.max_output_tokens.min(u32::try_from(left).unwrap_or(u32::MAX));
            turns += 1;
            let response = match self.provider.send(&request).await {
                Ok(response) => response,
                Err(error) => break SessionOutcome::ProviderFailed(error),
            };
            usage += &response.usage;
            let mut content = response.content;
            if content.is_empty() {
                // Both APIs refuse an empty assistant message in the history.
                content.push(Block::Text { text: "(no answer)".into() });
            }
            let answer = Message::assistant(content);
            let calls: Vec<(String, String, ToolInput)> = answer
                .tool_calls()
                .map(|call| (call.id.to_string(), call.name.to_string(), call.input.clone()))
                .collect();
            let last_words = answer.text();
            request.messages.push(answer);
            if calls.is_empty() {
                if nudged {
                    break SessionOutcome::GaveUp { last_words };
                }
                nudged = true;
                let nudge = match response.stop_reason {
                    StopReason::MaxTokens => "Your answer was cut off at the output limit. Call one tool at a time, \
                                              with short arguments."
                        .to_string(),
                    _ => gateway.nudge(),
                };
                request.messages.push(Message::user_text(self.masker.mask(&nudge)));
                continue;
            }
            nudged = false;
            let mut results = Vec::with_capacity(calls.len());
            for (id, name, input) in calls {
                let output = match &input {
                    ToolInput::Json(value) => gateway.call(&name, value).await,
                    ToolInput::Malformed { error, .. } => ToolOutput::error(format!(
                        "the arguments of `{name}` are not valid JSON ({error}); call it again with a JSON object \
                         that matches its input schema"
                    )),
                };
                let content = self.masker.mask(&output.content);
                results.push(Block::ToolResult { tool_use_id: id, content, is_error: output.is_error });
                if gateway.is_done() {
                    break;
                }
            }
            request.messages.push(Message::user(results));
            if gateway.is_done() {
                break SessionOutcome::Done;
            }
        };
        SessionReport { outcome, usage, turns, conversation: request.messages }
    }
}
