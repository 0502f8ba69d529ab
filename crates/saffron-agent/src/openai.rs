//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`) with tools, non-streaming:
//! OpenAI itself, gateways, and local model servers. docs/agent.md lists the fields sent and read.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::anthropic::bad_response;
use crate::http::Endpoint;
use crate::model::{Block, Message, Request, Response, Role, StopReason, ToolInput, Usage};
use crate::provider::{BoxFuture, HttpSettings, Provider, ProviderError};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// What a tool result that is an error starts with: the format has no error flag.
pub const ERROR_PREFIX: &str = "Error: ";

/// OpenAI's own API wants `max_completion_tokens` (its reasoning models refuse `max_tokens`);
/// local servers and most gateways know only `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MaxTokensField {
    MaxTokens,
    MaxCompletionTokens,
}

pub struct OpenAiProvider {
    endpoint: Endpoint,
    model: String,
    max_tokens_field: MaxTokensField,
}

impl OpenAiProvider {
    /// `api_key` is sent as a bearer token; local servers usually need none.
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<&str>,
        key_env: Option<&str>,
        settings: &HttpSettings,
    ) -> Result<OpenAiProvider, ProviderError> {
        let base_url = base_url.trim_end_matches('/');
        let url = format!("{base_url}/chat/completions");
        let headers = api_key.map(|key| ("authorization", format!("Bearer {key}"), true)).into_iter().collect();
        let endpoint = Endpoint::new(url, headers, key_env.map(str::to_string), settings)?;
        let max_tokens_field = if base_url.starts_with(DEFAULT_BASE_URL) {
            MaxTokensField::MaxCompletionTokens
        } else {
            MaxTokensField::MaxTokens
        };
        Ok(OpenAiProvider { endpoint, model: model.to_string(), max_tokens_field })
    }
}

impl Provider for OpenAiProvider {
    fn describe(&self) -> String {
        format!("openai {}", self.model)
    }

    fn send<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ProviderError>> {
        Box::pin(async move {
            let body = request_body(&self.model, request, self.max_tokens_field);
            let (answer, elapsed) = self.endpoint.post(&body).await?;
            let mut response = parse_response(&answer)?;
            response.usage.model_time = elapsed;
            Ok(response)
        })
    }
}

/// The JSON body of a Chat Completions call.
pub(crate) fn request_body(model: &str, request: &Request, max_tokens_field: MaxTokensField) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({ "role": "system", "content": request.system }));
    }
    for message in &request.messages {
        push_messages(message, &mut messages);
    }
    let mut body = json!({ "model": model, "messages": messages });
    let field = match max_tokens_field {
        MaxTokensField::MaxTokens => "max_tokens",
        MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
    };
    body[field] = json!(request.max_output_tokens);
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": { "name": tool.name, "description": tool.description, "parameters": tool.input_schema },
                })
            })
            .collect();
        body["tools"] = json!(tools);
    }
    body
}

/// One neutral message becomes one assistant message, or the `tool` messages of its results
/// followed by a user message with its text.
fn push_messages(message: &Message, messages: &mut Vec<Value>) {
    let text = message.text();
    match message.role {
        Role::Assistant => {
            let calls: Vec<Value> = message
                .tool_calls()
                .map(|call| {
                    let arguments = match call.input {
                        ToolInput::Json(value) => value.to_string(),
                        // Sent back as the model wrote it: the tool error that follows explains.
                        ToolInput::Malformed { raw, .. } => raw.clone(),
                    };
                    json!({ "id": call.id, "type": "function", "function": { "name": call.name, "arguments": arguments } })
                })
                .collect();
            let mut assistant =
                json!({ "role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) } });
            if !calls.is_empty() {
                assistant["tool_calls"] = json!(calls);
            } else if text.is_empty() {
                assistant["content"] = json!("");
            }
            messages.push(assistant);
        }
        Role::User => {
            for result in message.tool_results() {
                let content = if result.is_error {
                    format!("{ERROR_PREFIX}{}", result.content)
                } else {
                    result.content.to_string()
                };
                messages.push(json!({ "role": "tool", "tool_call_id": result.tool_use_id, "content": content }));
            }
            if !text.is_empty() {
                messages.push(json!({ "role": "user", "content": text }));
            }
        }
    }
}

#[derive(Deserialize)]
struct WireResponse {
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCall {
    /// Required by the format, missing from some local servers' answers.
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    /// A JSON string by the format; some servers send the object itself.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<WirePromptDetails>,
    /// Reported by gateways such as OpenRouter, in US dollars.
    #[serde(default)]
    cost: Option<f64>,
}

#[derive(Deserialize)]
struct WirePromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    cache_write_tokens: Option<u64>,
}

pub(crate) fn parse_response(body: &[u8]) -> Result<Response, ProviderError> {
    let wire: WireResponse = serde_json::from_slice(body).map_err(|error| bad_response(&error, body))?;
    let Some(choice) = wire.choices.into_iter().next() else {
        return Err(ProviderError::BadResponse { detail: "the answer has no choices".into() });
    };
    let mut content = Vec::new();
    if let Some(text) = choice.message.content.filter(|text| !text.is_empty()) {
        content.push(Block::Text { text });
    }
    if let Some(refusal) = choice.message.refusal.filter(|text| !text.is_empty()) {
        content.push(Block::Text { text: refusal });
    }
    for (index, call) in choice.message.tool_calls.unwrap_or_default().into_iter().enumerate() {
        let id = call.id.filter(|id| !id.is_empty()).unwrap_or_else(|| format!("call_{}_{index}", fastrand::u64(..)));
        let input = tool_input(call.function.arguments);
        content.push(Block::ToolUse { id, name: call.function.name, input });
    }
    let stop_reason = match choice.finish_reason.as_deref() {
        Some("stop") => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_string()),
        None => StopReason::Other("none".into()),
    };
    let usage = match wire.usage {
        Some(usage) => {
            let details = usage.prompt_tokens_details.as_ref();
            let cache_read = details.and_then(|d| d.cached_tokens).unwrap_or(0);
            let cache_write = details.and_then(|d| d.cache_write_tokens).unwrap_or(0);
            Usage {
                // prompt_tokens counts the cached tokens too.
                input_tokens: usage.prompt_tokens.saturating_sub(cache_read + cache_write),
                output_tokens: usage.completion_tokens,
                cache_read_tokens: cache_read,
                cache_write_tokens: cache_write,
                calls: 1,
                reported_cost_usd: usage.cost.filter(|cost| cost.is_finite() && *cost >= 0.0),
                ..Usage::default()
            }
        }
        None => Usage { calls: 1, ..Usage::default() },
    };
    Ok(Response { content, stop_reason, usage })
}

/// The arguments of a tool call: a JSON string by the format, which a model may get wrong.
fn tool_input(arguments: Option<Value>) -> ToolInput {
    match arguments {
        None | Some(Value::Null) => ToolInput::Json(json!({})),
        Some(Value::String(raw)) if raw.trim().is_empty() => ToolInput::Json(json!({})),
        Some(Value::String(raw)) => match serde_json::from_str::<Value>(&raw) {
            Ok(value) => ToolInput::Json(value),
            Err(error) => ToolInput::Malformed { raw, error: error.to_string() },
        },
        Some(value) => ToolInput::Json(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolSpec;

    fn conversation() -> Request {
        Request {
            system: "You record.".into(),
            messages: vec![
                Message::user_text("Sign in"),
                Message::assistant(vec![
                    Block::ToolUse {
                        id: "call_1".into(),
                        name: "fill".into(),
                        input: ToolInput::Json(json!({ "ref": "e1" })),
                    },
                    Block::ToolUse {
                        id: "call_2".into(),
                        name: "click".into(),
                        input: ToolInput::Malformed { raw: "{ref: e2".into(), error: "key must be a string".into() },
                    },
                ]),
                Message::user(vec![
                    Block::ToolResult { tool_use_id: "call_1".into(), content: "filled".into(), is_error: false },
                    Block::ToolResult { tool_use_id: "call_2".into(), content: "not JSON".into(), is_error: true },
                ]),
            ],
            tools: vec![ToolSpec {
                name: "fill".into(),
                description: "Fill a field".into(),
                input_schema: json!({ "type": "object" }),
            }],
            max_output_tokens: 512,
        }
    }

    #[test]
    fn the_request_has_the_documented_shape() {
        let expected = json!({
            "model": "gpt-x",
            "max_tokens": 512,
            "tools": [{ "type": "function", "function": { "name": "fill", "description": "Fill a field", "parameters": { "type": "object" } } }],
            "messages": [
                { "role": "system", "content": "You record." },
                { "role": "user", "content": "Sign in" },
                { "role": "assistant", "content": null, "tool_calls": [
                    { "id": "call_1", "type": "function", "function": { "name": "fill", "arguments": "{\"ref\":\"e1\"}" } },
                    { "id": "call_2", "type": "function", "function": { "name": "click", "arguments": "{ref: e2" } }
                ] },
                { "role": "tool", "tool_call_id": "call_1", "content": "filled" },
                { "role": "tool", "tool_call_id": "call_2", "content": "Error: not JSON" }
            ]
        });
        assert_eq!(request_body("gpt-x", &conversation(), MaxTokensField::MaxTokens), expected);
        let official = request_body("gpt-x", &conversation(), MaxTokensField::MaxCompletionTokens);
        assert_eq!((official.get("max_tokens"), official["max_completion_tokens"].as_u64()), (None, Some(512)));
    }

    #[test]
    fn a_documented_response_is_read_with_cached_tokens_and_cost() {
        let body = br#"{
          "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-x",
          "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "refusal": null,
            "tool_calls": [{ "id": "call_9", "type": "function", "function": { "name": "click", "arguments": "{\"ref\": \"e3\"}" } }]
          } }],
          "usage": { "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                     "prompt_tokens_details": { "cached_tokens": 60, "cache_write_tokens": 10 }, "cost": 0.0042 }
        }"#;
        let response = parse_response(body).expect("valid");
        assert_eq!(
            response.content,
            [Block::ToolUse {
                id: "call_9".into(),
                name: "click".into(),
                input: ToolInput::Json(json!({ "ref": "e3" }))
            }]
        );
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        let usage = response.usage;
        assert_eq!(
            (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.output_tokens),
            (30, 60, 10, 20)
        );
        assert_eq!(usage.reported_cost_usd, Some(0.0042));
    }

    #[test]
    fn arguments_that_are_not_json_are_kept_as_malformed_and_variants_are_accepted() {
        let body = br#"{ "choices": [{ "finish_reason": "stop", "message": { "content": "ok", "tool_calls": [
            { "id": "a", "function": { "name": "fill", "arguments": "{\"ref\": \"e1\", " } },
            { "function": { "name": "snapshot", "arguments": { "full": true } } },
            { "id": "c", "function": { "name": "snapshot", "arguments": "" } }
        ] } }] }"#;
        let response = parse_response(body).expect("valid");
        let calls: Vec<(&str, &ToolInput)> = response
            .content
            .iter()
            .filter_map(|block| match block {
                Block::ToolUse { name, input, .. } => Some((name.as_str(), input)),
                _ => None,
            })
            .collect();
        assert!(matches!(calls[0], ("fill", ToolInput::Malformed { raw, .. }) if raw == "{\"ref\": \"e1\", "));
        assert_eq!(calls[1], ("snapshot", &ToolInput::Json(json!({ "full": true }))));
        assert_eq!(calls[2], ("snapshot", &ToolInput::Json(json!({}))));
        let Block::ToolUse { id, .. } = &response.content[2] else { panic!("a call") };
        assert!(id.starts_with("call_"), "a missing id is made up: {id}");
        assert_eq!(response.usage.calls, 1);
        assert_eq!(response.usage.reported_cost_usd, None);
    }

    #[test]
    fn an_answer_without_choices_or_in_another_format_is_a_bad_response() {
        assert!(matches!(parse_response(br#"{"choices": []}"#), Err(ProviderError::BadResponse { .. })));
        let error = parse_response(br#"{"type":"message","content":[]}"#).expect_err("an Anthropic body");
        assert!(error.to_string().contains("missing field `choices`"), "{error}");
    }
}
