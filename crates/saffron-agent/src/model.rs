//! The conversation with a model, in no vendor's format: what the session keeps and what each
//! provider translates to and from its wire format.

use std::time::Duration;

use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
}

impl Message {
    pub fn user(content: Vec<Block>) -> Message {
        Message { role: Role::User, content }
    }

    pub fn user_text(text: impl Into<String>) -> Message {
        Message::user(vec![Block::Text { text: text.into() }])
    }

    pub fn assistant(content: Vec<Block>) -> Message {
        Message { role: Role::Assistant, content }
    }

    /// The tool calls of the message, in the order the model made them.
    pub fn tool_calls(&self) -> impl Iterator<Item = ToolCall<'_>> {
        self.content.iter().filter_map(|block| match block {
            Block::ToolUse { id, name, input } => Some(ToolCall { id, name, input }),
            _ => None,
        })
    }

    /// The tool results of the message, in order.
    pub fn tool_results(&self) -> impl Iterator<Item = ToolResult<'_>> {
        self.content.iter().filter_map(|block| match block {
            Block::ToolResult { tool_use_id, content, is_error } => {
                Some(ToolResult { tool_use_id, content, is_error: *is_error })
            }
            _ => None,
        })
    }

    /// Every text block of the message, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|block| match block {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// A part of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text {
        text: String,
    },
    /// The model asks for a tool to be run.
    ToolUse {
        id: String,
        name: String,
        input: ToolInput,
    },
    /// What a tool answered, for the call with the id `tool_use_id`.
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
    },
}

/// The arguments of a tool call as the model wrote them.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolInput {
    Json(Value),
    /// Arguments that are not JSON (a vendor that sends them as a string lets a model write
    /// anything). They go back to the model as a tool error; `raw` is kept so that the
    /// conversation sent back is the one the model wrote.
    Malformed {
        raw: String,
        error: String,
    },
}

/// A borrowed view of a [`Block::ToolUse`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub input: &'a ToolInput,
}

/// A borrowed view of a [`Block::ToolResult`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolResult<'a> {
    pub tool_use_id: &'a str,
    pub content: &'a str,
    pub is_error: bool,
}

/// A tool the model may call: its name, what it does, and a JSON schema of its input.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// One call to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// The most tokens the answer may have.
    pub max_output_tokens: u32,
}

impl Request {
    /// The last message the model has not answered yet.
    pub fn last_message(&self) -> Option<&Message> {
        self.messages.last()
    }

    /// The result of the last tool call, if the last message holds tool results.
    pub fn last_tool_result(&self) -> Option<ToolResult<'_>> {
        self.last_message().and_then(|message| message.tool_results().last())
    }

    /// How many answers the model has given so far in this conversation.
    pub fn answers_so_far(&self) -> usize {
        self.messages.iter().filter(|message| message.role == Role::Assistant).count()
    }
}

/// Why the model stopped writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    /// Anything else, as the vendor named it (a refusal, a stop sequence, a content filter).
    Other(String),
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub content: Vec<Block>,
    pub stop_reason: StopReason,
    pub usage: Usage,
}

/// What calls to a model used. Sums over calls with `+=`.
///
/// `input_tokens` counts the input read at the full price: tokens read from the vendor's
/// prompt cache are in `cache_read_tokens` and tokens written to it in `cache_write_tokens`,
/// whatever the vendor's own convention is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Calls that got an answer.
    pub calls: u32,
    /// Time spent waiting for answers, retries included.
    pub model_time: Duration,
    /// The cost in US dollars as the vendor reported it, when it reported it for every call.
    pub reported_cost_usd: Option<f64>,
}

impl Usage {
    /// Every token the calls read or wrote: what a token budget counts.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// Every input token, cached or not.
    pub fn all_input_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

impl std::ops::AddAssign<&Usage> for Usage {
    fn add_assign(&mut self, other: &Usage) {
        // A cost reported for some calls only is not the cost of the whole: it is not reported.
        self.reported_cost_usd = match (self.calls, other.calls) {
            (_, 0) => self.reported_cost_usd,
            (0, _) => other.reported_cost_usd,
            _ => self.reported_cost_usd.zip(other.reported_cost_usd).map(|(a, b)| a + b),
        };
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.calls += other.calls;
        self.model_time += other.model_time;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cost: Option<f64>) -> Usage {
        Usage { input_tokens: input, output_tokens: output, calls: 1, reported_cost_usd: cost, ..Usage::default() }
    }

    #[test]
    fn usage_sums_tokens_calls_and_time() {
        let mut total = Usage::default();
        total += &Usage { cache_read_tokens: 7, model_time: Duration::from_millis(300), ..usage(10, 5, None) };
        total += &Usage { cache_write_tokens: 3, model_time: Duration::from_millis(200), ..usage(20, 1, None) };
        assert_eq!(
            (total.input_tokens, total.output_tokens, total.cache_read_tokens, total.cache_write_tokens),
            (30, 6, 7, 3)
        );
        assert_eq!(total.calls, 2);
        assert_eq!(total.model_time, Duration::from_millis(500));
        assert_eq!(total.total_tokens(), 46);
    }

    #[test]
    fn a_cost_is_reported_only_when_every_call_reported_one() {
        let mut all = Usage::default();
        all += &usage(1, 1, Some(0.25));
        all += &usage(1, 1, Some(0.5));
        assert_eq!(all.reported_cost_usd, Some(0.75));
        let mut some = all.clone();
        some += &usage(1, 1, None);
        assert_eq!(some.reported_cost_usd, None);
        some += &usage(1, 1, Some(1.0));
        assert_eq!(some.reported_cost_usd, None, "a partial sum is never shown as the cost");
        all += &Usage::default();
        assert_eq!(all.reported_cost_usd, Some(0.75), "an empty usage changes nothing");
    }
}
