//! The Anthropic Messages API (`POST {base}/v1/messages`) with tool use, non-streaming.
//! docs/agent.md lists the fields sent and read.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::http::Endpoint;
use crate::model::{Block, Message, Request, Response, Role, StopReason, ToolInput, Usage};
use crate::provider::{BoxFuture, HttpSettings, Provider, ProviderError};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version every request names (`anthropic-version`).
pub const API_VERSION: &str = "2023-06-01";

pub struct AnthropicProvider {
    endpoint: Endpoint,
    model: String,
}

impl AnthropicProvider {
    /// `api_key` is sent as `x-api-key`; `key_env` names where it came from, for error hints.
    /// Without a key (a gateway on loopback), no key header is sent.
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<&str>,
        key_env: Option<&str>,
        settings: &HttpSettings,
    ) -> Result<AnthropicProvider, ProviderError> {
        let url = format!("{}/v1/messages", base_url.trim_end_matches('/'));
        let mut headers = vec![("anthropic-version", API_VERSION.to_string(), false)];
        if let Some(key) = api_key {
            headers.push(("x-api-key", key.to_string(), true));
        }
        let endpoint = Endpoint::new(url, headers, key_env.map(str::to_string), settings)?;
        Ok(AnthropicProvider { endpoint, model: model.to_string() })
    }
}

impl Provider for AnthropicProvider {
    fn describe(&self) -> String {
        format!("anthropic {}", self.model)
    }

    fn send<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ProviderError>> {
        Box::pin(async move {
            let body = request_body(&self.model, request);
            let (answer, elapsed) = self.endpoint.post(&body).await?;
            let mut response = parse_response(&answer)?;
            response.usage.model_time = elapsed;
            Ok(response)
        })
    }
}

/// The JSON body of a Messages API call.
pub(crate) fn request_body(model: &str, request: &Request) -> Value {
    let mut messages: Vec<Value> = request.messages.iter().map(message_json).collect();
    // One cache breakpoint on the newest block: each call then reads the conversation so far
    // (tools and system prompt included) from the prompt cache and pays full price only for
    // what is new. Below the model's minimum cacheable length the API ignores it.
    if let Some(block) = messages.last_mut().and_then(|message| message["content"].as_array_mut()?.last_mut()) {
        block["cache_control"] = json!({ "type": "ephemeral" });
    }
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_output_tokens,
        "messages": messages,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(
                |tool| json!({ "name": tool.name, "description": tool.description, "input_schema": tool.input_schema }),
            )
            .collect();
        body["tools"] = json!(tools);
    }
    body
}

fn message_json(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let content: Vec<Value> = message
        .content
        .iter()
        .filter_map(|block| match block {
            // The API refuses empty text blocks.
            Block::Text { text } if text.is_empty() => None,
            Block::Text { text } => Some(json!({ "type": "text", "text": text })),
            Block::ToolUse { id, name, input } => {
                let input = match input {
                    ToolInput::Json(value) => value.clone(),
                    // Only a vendor with string arguments produces these; Anthropic wants an object.
                    ToolInput::Malformed { .. } => json!({}),
                };
                Some(json!({ "type": "tool_use", "id": id, "name": name, "input": input }))
            }
            Block::ToolResult { tool_use_id, content, is_error } => {
                let mut result = json!({ "type": "tool_result", "tool_use_id": tool_use_id, "content": content });
                if *is_error {
                    result["is_error"] = json!(true);
                }
                Some(result)
            }
        })
        .collect();
    json!({ "role": role, "content": content })
}

#[derive(Deserialize)]
struct WireResponse {
    content: Vec<WireBlock>,
    stop_reason: Option<String>,
    usage: WireUsage,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// Thinking, server tools and whatever comes next: not used by Saffron's requests, and not
    /// sent back.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: u64,
    output_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

pub(crate) fn parse_response(body: &[u8]) -> Result<Response, ProviderError> {
    let wire: WireResponse = serde_json::from_slice(body).map_err(|error| bad_response(&error, body))?;
    let content = wire
        .content
        .into_iter()
        .filter_map(|block| match block {
            WireBlock::Text { text } => Some(Block::Text { text }),
            WireBlock::ToolUse { id, name, input } => Some(Block::ToolUse { id, name, input: ToolInput::Json(input) }),
            WireBlock::Other => None,
        })
        .collect();
    let stop_reason = match wire.stop_reason.as_deref() {
        Some("end_turn") => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_string()),
        None => StopReason::Other("none".into()),
    };
    let usage = Usage {
        input_tokens: wire.usage.input_tokens,
        output_tokens: wire.usage.output_tokens,
        cache_read_tokens: wire.usage.cache_read_input_tokens.unwrap_or(0),
        cache_write_tokens: wire.usage.cache_creation_input_tokens.unwrap_or(0),
        calls: 1,
        ..Usage::default()
    };
    Ok(Response { content, stop_reason, usage })
}

/// Names what is wrong and how the body begins (a proxy's HTML page says more than the parse
/// error does).
pub(crate) fn bad_response(error: &serde_json::Error, body: &[u8]) -> ProviderError {
    let text = String::from_utf8_lossy(body);
    let start: String = text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(120).collect();
    ProviderError::BadResponse { detail: format!("{error}; the body begins: {start:?}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolSpec;

    #[test]
    fn the_request_has_the_documented_shape() {
        let request = Request {
            system: "You record.".into(),
            messages: vec![
                Message::user_text("Sign in"),
                Message::assistant(vec![
                    Block::Text { text: "Looking.".into() },
                    Block::ToolUse { id: "toolu_1".into(), name: "snapshot".into(), input: ToolInput::Json(json!({})) },
                ]),
                Message::user(vec![Block::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: "no such ref".into(),
                    is_error: true,
                }]),
            ],
            tools: vec![ToolSpec {
                name: "snapshot".into(),
                description: "The page".into(),
                input_schema: json!({ "type": "object", "properties": {} }),
            }],
            max_output_tokens: 1024,
        };
        let expected = json!({
            "model": "claude-x",
            "max_tokens": 1024,
            "system": "You record.",
            "tools": [{ "name": "snapshot", "description": "The page", "input_schema": { "type": "object", "properties": {} } }],
            "messages": [
                { "role": "user", "content": [{ "type": "text", "text": "Sign in" }] },
                { "role": "assistant", "content": [
                    { "type": "text", "text": "Looking." },
                    { "type": "tool_use", "id": "toolu_1", "name": "snapshot", "input": {} }
                ] },
                { "role": "user", "content": [{
                    "type": "tool_result", "tool_use_id": "toolu_1", "content": "no such ref", "is_error": true,
                    "cache_control": { "type": "ephemeral" }
                }] }
            ]
        });
        assert_eq!(request_body("claude-x", &request), expected);
    }

    #[test]
    fn a_documented_response_is_read_with_its_cache_tokens() {
        let body = br#"{
          "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-x",
          "content": [
            { "type": "thinking", "thinking": "hm", "signature": "s" },
            { "type": "text", "text": "I will click." },
            { "type": "tool_use", "id": "toolu_2", "name": "click", "input": { "ref": "e3" } }
          ],
          "stop_reason": "tool_use", "stop_sequence": null,
          "usage": { "input_tokens": 12, "output_tokens": 34, "cache_creation_input_tokens": 56, "cache_read_input_tokens": null }
        }"#;
        let response = parse_response(body).expect("valid");
        assert_eq!(
            response.content,
            [
                Block::Text { text: "I will click.".into() },
                Block::ToolUse {
                    id: "toolu_2".into(),
                    name: "click".into(),
                    input: ToolInput::Json(json!({ "ref": "e3" }))
                },
            ]
        );
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        let usage = response.usage;
        assert_eq!(
            (usage.input_tokens, usage.output_tokens, usage.cache_write_tokens, usage.cache_read_tokens),
            (12, 34, 56, 0)
        );
        assert_eq!(usage.reported_cost_usd, None);
    }

    #[test]
    fn a_body_in_another_format_is_a_bad_response() {
        let error = parse_response(b"<html>Bad gateway</html>").expect_err("not JSON");
        let ProviderError::BadResponse { detail } = &error else { panic!("{error:?}") };
        assert!(detail.contains("<html>Bad gateway</html>"), "{detail}");
        let error = parse_response(br#"{"choices": []}"#).expect_err("an OpenAI body");
        assert!(error.to_string().contains("missing field `content`"), "{error}");
    }
}
