//! Fake vendor servers for tests (feature `testing`): HTTP servers on 127.0.0.1 that speak the
//! Anthropic Messages or the OpenAI Chat Completions wire format, play a scripted conversation,
//! and keep every request they received.
//!
//! A script is code: it sees the conversation so far (read back from the request into the
//! provider-neutral [`Request`], so one script serves both formats) and decides the next
//! [`Reply`]: an answer, an HTTP error in the vendor's format, or any raw body. The servers
//! read requests with their own code, independent of the providers', and refuse (HTTP 400, in
//! the vendor's format) what the real APIs refuse: a missing field, a tool call without its
//! result right after it, arguments that are not a string.
//!
//! The Responses server speaks what Codex needs: the tools of an MCP server offered as one
//! `namespace` tool (read as `mcp__<server>__<tool>`, Claude Code's name for the same tool), a
//! call in a namespace answered with it, and the answer streamed as `response.*` events.
//!
//! The Anthropic server also answers as the vendors' own clients need (Claude Code): a request
//! with `"stream": true` gets the answer as server-sent events, a `system` message inside
//! `messages` joins the system prompt, and a connectivity check (`HEAD /api/hello`, any `GET`
//! or `HEAD`) gets an empty 200.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response as HttpResponse};
use serde_json::{Value, json};

use crate::model::{Block, Message, Request, Response, Role, StopReason, ToolInput, ToolSpec, Usage};

/// Which vendor's API the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// `POST /v1/messages`; the base URL is the server's root.
    Anthropic,
    /// `POST /v1/chat/completions`; the base URL ends in `/v1`.
    OpenAi,
    /// OpenAI's Responses API as Codex uses it, `POST /v1/responses`, always streamed; the base
    /// URL ends in `/v1`.
    OpenAiResponses,
}

/// What the server answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A model's answer, written in the server's format.
    Answer(Response),
    /// An HTTP error with a body in the vendor's error format.
    Error { status: u16, message: String, retry_after: Option<String> },
    /// Anything at all.
    Raw { status: u16, content_type: String, body: String },
    /// The reply, after a wait (a provider that stalls).
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    /// A text answer that ends the model's turn.
    pub fn text(text: &str) -> Reply {
        Reply::answer(vec![Block::Text { text: text.into() }], StopReason::EndTurn)
    }

    /// One tool call.
    pub fn call(id: &str, name: &str, input: Value) -> Reply {
        Reply::calls(&[(id, name, input)])
    }

    /// Tool calls in one answer, in order.
    pub fn calls(calls: &[(&str, &str, Value)]) -> Reply {
        let content = calls
            .iter()
            .map(|(id, name, input)| Block::ToolUse {
                id: id.to_string(),
                name: name.to_string(),
                input: ToolInput::Json(input.clone()),
            })
            .collect();
        Reply::answer(content, StopReason::ToolUse)
    }

    /// A tool call whose arguments string is `raw` as it is (OpenAI format only: Anthropic's
    /// input is an object).
    pub fn malformed_call(id: &str, name: &str, raw: &str) -> Reply {
        let input = ToolInput::Malformed { raw: raw.into(), error: String::new() };
        Reply::answer(vec![Block::ToolUse { id: id.into(), name: name.into(), input }], StopReason::ToolUse)
    }

    pub fn answer(content: Vec<Block>, stop_reason: StopReason) -> Reply {
        let usage = Usage { input_tokens: 100, output_tokens: 20, calls: 1, ..Usage::default() };
        Reply::Answer(Response { content, stop_reason, usage })
    }

    /// The answer, with this usage reported.
    pub fn with_usage(mut self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> Reply {
        if let Reply::Answer(response) = &mut self {
            response.usage.input_tokens = input;
            response.usage.output_tokens = output;
            response.usage.cache_read_tokens = cache_read;
            response.usage.cache_write_tokens = cache_write;
        }
        self
    }

    /// The answer, with a cost reported (OpenAI format only, as gateways such as OpenRouter do).
    pub fn with_cost(mut self, usd: f64) -> Reply {
        if let Reply::Answer(response) = &mut self {
            response.usage.reported_cost_usd = Some(usd);
        }
        self
    }

    /// HTTP 429 with `retry-after: {retry_after}`.
    pub fn rate_limited(retry_after: &str) -> Reply {
        Reply::Error { status: 429, message: "rate limited (fake)".into(), retry_after: Some(retry_after.into()) }
    }

    pub fn server_error() -> Reply {
        Reply::Error { status: 500, message: "internal error (fake)".into(), retry_after: None }
    }

    /// HTTP 200 with a body that is not the vendor's format.
    pub fn garbage() -> Reply {
        Reply::Raw {
            status: 200,
            content_type: "text/html".into(),
            body: "<html><body>Welcome to nginx!</body></html>".into(),
        }
    }
}

/// Decides the next reply from the conversation so far.
pub trait Script: Send + 'static {
    fn reply(&mut self, request: &Request) -> Reply;
}

impl<F: FnMut(&Request) -> Reply + Send + 'static> Script for F {
    fn reply(&mut self, request: &Request) -> Reply {
        self(request)
    }
}

/// Plays `replies` in order, whatever the requests say; past the end, an HTTP 400 naming it.
pub fn sequence(replies: Vec<Reply>) -> impl Script {
    let mut replies = VecDeque::from(replies);
    move |_: &Request| {
        replies.pop_front().unwrap_or_else(|| Reply::Error {
            status: 400,
            message: "the fake server's script has no more replies".into(),
            retry_after: None,
        })
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Captured {
    pub path: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Captured {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

struct Shared {
    wire: Wire,
    script: Box<dyn Script>,
    captured: Vec<Captured>,
}

/// A fake vendor server. Stops when dropped.
pub struct FakeServer {
    address: SocketAddr,
    wire: Wire,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeServer {
    /// Starts a server on a free loopback port (inside a Tokio runtime).
    pub async fn start(wire: Wire, script: impl Script) -> std::io::Result<FakeServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Mutex::new(Shared { wire, script: Box::new(script), captured: Vec::new() }));
        let app = Router::new().fallback(handle).with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            // Ends only when the task is aborted; an accept error ends the test's server, and the
            // test sees connection errors.
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeServer { address, wire, shared, task })
    }

    /// The base URL to configure the provider with.
    pub fn base_url(&self) -> String {
        match self.wire {
            Wire::Anthropic => format!("http://{}", self.address),
            Wire::OpenAi | Wire::OpenAiResponses => format!("http://{}/v1", self.address),
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Captured> {
        lock(&self.shared).captured.clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A poisoned lock only means another request's script panicked: the data is still usable.
fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn handle(
    State(shared): State<Arc<Mutex<Shared>>>,
    method: axum::http::Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> HttpResponse {
    // A client's connectivity check before its first request: nothing for the script.
    if method == axum::http::Method::HEAD || method == axum::http::Method::GET {
        return StatusCode::OK.into_response();
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    let captured = Captured {
        path: uri.path().to_string(),
        headers: headers
            .iter()
            .map(|(name, value)| (name.as_str().to_string(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
            .collect(),
        body: body.clone(),
    };
    let streamed = serde_json::from_str::<Value>(&body).is_ok_and(|body| body["stream"] == true);
    let (wire, reply, model) = {
        let mut shared = lock(&shared);
        shared.captured.push(captured.clone());
        let wire = shared.wire;
        let expected_path = match wire {
            Wire::Anthropic => "/v1/messages",
            Wire::OpenAi => "/v1/chat/completions",
            Wire::OpenAiResponses => "/v1/responses",
        };
        let parsed = if captured.path != expected_path {
            Err((404, format!("no route {} (this fake serves {expected_path})", captured.path)))
        } else {
            match wire {
                Wire::Anthropic => read_anthropic(&captured),
                Wire::OpenAi => read_openai(&captured),
                Wire::OpenAiResponses => read_responses(&captured),
            }
            .map_err(|problem| (400, problem))
        };
        match parsed {
            Ok((model, request)) => (wire, shared.script.reply(&request), model),
            Err((status, message)) => (wire, Reply::Error { status, message, retry_after: None }, String::new()),
        }
    };
    render(wire, reply, &model, streamed).await
}

async fn render(wire: Wire, mut reply: Reply, model: &str, streamed: bool) -> HttpResponse {
    loop {
        return match reply {
            Reply::Delayed(wait, inner) => {
                tokio::time::sleep(wait).await;
                reply = *inner;
                continue;
            }
            Reply::Answer(response) if streamed && wire == Wire::Anthropic => {
                let events = anthropic_events(&anthropic_answer(&response, model));
                (StatusCode::OK, [("content-type", "text/event-stream"), ("cache-control", "no-cache")], events)
                    .into_response()
            }
            Reply::Answer(response) if wire == Wire::OpenAiResponses => {
                let events = responses_events(&responses_answer(&response, model), streamed);
                let content_type = if streamed { "text/event-stream" } else { "application/json" };
                (StatusCode::OK, [("content-type", content_type), ("cache-control", "no-cache")], events)
                    .into_response()
            }
            Reply::Answer(response) => {
                let body = match wire {
                    Wire::Anthropic => anthropic_answer(&response, model),
                    Wire::OpenAi | Wire::OpenAiResponses => openai_answer(&response, model),
                };
                (StatusCode::OK, [("content-type", "application/json")], body.to_string()).into_response()
            }
            Reply::Error { status, message, retry_after } => {
                let body = match wire {
                    Wire::Anthropic => {
                        json!({ "type": "error", "error": { "type": anthropic_error_type(status), "message": message } })
                    }
                    Wire::OpenAi | Wire::OpenAiResponses => json!({
                        "error": { "message": message, "type": openai_error_type(status), "param": null, "code": null }
                    }),
                };
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let mut response = (status, [("content-type", "application/json")], body.to_string()).into_response();
                if let Some(value) = retry_after.and_then(|value| value.parse().ok()) {
                    response.headers_mut().insert("retry-after", value);
                }
                response
            }
            Reply::Raw { status, content_type, body } => {
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let mut response = (status, body).into_response();
                if let Ok(value) = content_type.parse() {
                    response.headers_mut().insert("content-type", value);
                }
                response
            }
        };
    }
}

fn anthropic_error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fn openai_error_type(status: u16) -> &'static str {
    match status {
        400 | 404 => "invalid_request_error",
        401 | 403 => "authentication_error",
        429 => "rate_limit_error",
        _ => "server_error",
    }
}

// ---- Anthropic Messages ----

fn read_anthropic(captured: &Captured) -> Result<(String, Request), String> {
    if captured.header("anthropic-version").is_none() {
        return Err("anthropic-version: header is required".into());
    }
    let body: Value = serde_json::from_str(&captured.body).map_err(|error| format!("the body is not JSON: {error}"))?;
    let model = body["model"].as_str().ok_or("model: Field required")?.to_string();
    let max_tokens = body["max_tokens"].as_u64().ok_or("max_tokens: Field required")?;
    let system = match &body["system"] {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => return Err("system: Input should be a valid string or list".into()),
    };
    let tools = match &body["tools"] {
        Value::Null => Vec::new(),
        Value::Array(tools) => tools
            .iter()
            .map(|tool| {
                Ok(ToolSpec {
                    name: tool["name"].as_str().ok_or("tools.name: Field required")?.to_string(),
                    description: tool["description"].as_str().unwrap_or_default().to_string(),
                    input_schema: tool.get("input_schema").cloned().ok_or("tools.input_schema: Field required")?,
                })
            })
            .collect::<Result<_, String>>()?,
        _ => return Err("tools: Input should be a valid list".into()),
    };
    let wire_messages = body["messages"].as_array().ok_or("messages: Field required")?;
    let mut messages = Vec::new();
    let mut system = system;
    for (index, message) in wire_messages.iter().enumerate() {
        let role = match message["role"].as_str() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            // Claude Code sends part of its system prompt as a message of its own.
            Some("system") => {
                let text = match &message["content"] {
                    Value::String(text) => text.clone(),
                    Value::Array(blocks) => {
                        blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n")
                    }
                    _ => return Err(format!("messages.{index}.content: Field required")),
                };
                system = if system.is_empty() { text } else { format!("{system}\n{text}") };
                continue;
            }
            _ => return Err(format!("messages.{index}.role: Input should be 'user' or 'assistant'")),
        };
        let content = match &message["content"] {
            Value::String(text) => vec![Block::Text { text: text.clone() }],
            Value::Array(blocks) => {
                blocks.iter().map(|block| anthropic_block(block, index)).collect::<Result<Vec<_>, String>>()?
            }
            _ => return Err(format!("messages.{index}.content: Field required")),
        };
        if content.is_empty() {
            return Err(format!("messages.{index}: all messages must have non-empty content"));
        }
        messages.push(Message { role, content });
    }
    if messages.first().is_none_or(|message| message.role != Role::User) {
        return Err("messages: the first message must use the \"user\" role".into());
    }
    check_results_follow_calls(&messages)?;
    let max_output_tokens = u32::try_from(max_tokens).map_err(|_| "max_tokens: too large".to_string())?;
    Ok((model, Request { system, messages, tools, max_output_tokens }))
}

fn anthropic_block(block: &Value, index: usize) -> Result<Block, String> {
    match block["type"].as_str() {
        Some("text") => {
            let text = block["text"].as_str().ok_or(format!("messages.{index}: text.text: Field required"))?;
            if text.is_empty() {
                return Err(format!("messages.{index}: text content blocks must be non-empty"));
            }
            Ok(Block::Text { text: text.into() })
        }
        Some("tool_use") => {
            let input = block.get("input").filter(|input| input.is_object());
            Ok(Block::ToolUse {
                id: block["id"].as_str().ok_or(format!("messages.{index}: tool_use.id: Field required"))?.into(),
                name: block["name"].as_str().ok_or(format!("messages.{index}: tool_use.name: Field required"))?.into(),
                input: ToolInput::Json(
                    input.cloned().ok_or(format!("messages.{index}: tool_use.input: Input should be an object"))?,
                ),
            })
        }
        Some("tool_result") => {
            let content = match &block["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => {
                    parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n")
                }
                Value::Null => String::new(),
                _ => return Err(format!("messages.{index}: tool_result.content: Input should be a string or list")),
            };
            Ok(Block::ToolResult {
                tool_use_id: block["tool_use_id"]
                    .as_str()
                    .ok_or(format!("messages.{index}: tool_result.tool_use_id: Field required"))?
                    .into(),
                content,
                is_error: block["is_error"].as_bool().unwrap_or(false),
            })
        }
        other => Err(format!("messages.{index}: unknown content block type {other:?}")),
    }
}

fn anthropic_answer(response: &Response, model: &str) -> Value {
    let content: Vec<Value> = response
        .content
        .iter()
        .map(|block| match block {
            Block::Text { text } => json!({ "type": "text", "text": text }),
            Block::ToolUse { id, name, input } => {
                let input = match input {
                    ToolInput::Json(value) => value.clone(),
                    ToolInput::Malformed { .. } => json!({}),
                };
                json!({ "type": "tool_use", "id": id, "name": name, "input": input })
            }
            Block::ToolResult { .. } => json!({ "type": "text", "text": "(a tool result in an answer)" }),
        })
        .collect();
    let stop_reason = match &response.stop_reason {
        StopReason::EndTurn => "end_turn",
        StopReason::ToolUse => "tool_use",
        StopReason::MaxTokens => "max_tokens",
        StopReason::Other(other) => other.as_str(),
    };
    let usage = &response.usage;
    json!({
        "id": format!("msg_fake_{}", fastrand::u32(..)),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
            "cache_read_input_tokens": usage.cache_read_tokens,
        },
    })
}

/// A whole answer as the Messages API streams it: `message_start`, each content block's start,
/// one delta and stop, `message_delta` with the stop reason and the output tokens, `message_stop`.
fn anthropic_events(answer: &Value) -> String {
    let mut events = Vec::new();
    let mut start = answer.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    events.push(("message_start", json!({ "type": "message_start", "message": start })));
    for (index, block) in answer["content"].as_array().into_iter().flatten().enumerate() {
        let (opening, delta) = match block["type"].as_str() {
            Some("tool_use") => (
                json!({ "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} }),
                json!({ "type": "input_json_delta", "partial_json": block["input"].to_string() }),
            ),
            _ => (json!({ "type": "text", "text": "" }), json!({ "type": "text_delta", "text": block["text"] })),
        };
        events.push((
            "content_block_start",
            json!({ "type": "content_block_start", "index": index, "content_block": opening }),
        ));
        events.push(("content_block_delta", json!({ "type": "content_block_delta", "index": index, "delta": delta })));
        events.push(("content_block_stop", json!({ "type": "content_block_stop", "index": index })));
    }
    events.push((
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": { "stop_reason": answer["stop_reason"], "stop_sequence": null },
            "usage": { "output_tokens": answer["usage"]["output_tokens"] },
        }),
    ));
    events.push(("message_stop", json!({ "type": "message_stop" })));
    events.into_iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
}

// ---- OpenAI Chat Completions ----

/// The text of an OpenAI message's content: a string, or the `text` of its parts joined by
/// lines (`null` is none); `None` for anything else.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Null => Some(String::new()),
        Value::Array(parts) => {
            Some(parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n"))
        }
        _ => None,
    }
}

fn read_openai(captured: &Captured) -> Result<(String, Request), String> {
    let body: Value = serde_json::from_str(&captured.body).map_err(|error| format!("the body is not JSON: {error}"))?;
    let model = body["model"].as_str().ok_or("you must provide a model parameter")?.to_string();
    let max_tokens = body["max_completion_tokens"].as_u64().or_else(|| body["max_tokens"].as_u64()).unwrap_or(4096);
    let tools = match &body["tools"] {
        Value::Null => Vec::new(),
        Value::Array(tools) => tools
            .iter()
            .map(|tool| {
                if tool["type"] != "function" {
                    return Err("tools[].type: expected 'function'".to_string());
                }
                let function = &tool["function"];
                Ok(ToolSpec {
                    name: function["name"].as_str().ok_or("tools[].function.name: missing")?.to_string(),
                    description: function["description"].as_str().unwrap_or_default().to_string(),
                    input_schema: function.get("parameters").cloned().unwrap_or(json!({})),
                })
            })
            .collect::<Result<_, String>>()?,
        _ => return Err("tools: expected an array".into()),
    };
    let mut system = Vec::new();
    let mut messages: Vec<Message> = Vec::new();
    for (index, message) in body["messages"].as_array().ok_or("messages: missing")?.iter().enumerate() {
        let text_of = |content: &Value| -> Result<String, String> {
            content_text(content).ok_or(format!("messages[{index}].content: expected a string or an array"))
        };
        let (role, block) = match message["role"].as_str() {
            Some("system" | "developer") => {
                system.push(text_of(&message["content"])?);
                continue;
            }
            Some("user") => (Role::User, vec![Block::Text { text: text_of(&message["content"])? }]),
            Some("tool") => {
                let content = text_of(&message["content"])?;
                let (content, is_error) = match content.strip_prefix(crate::openai::ERROR_PREFIX) {
                    Some(rest) => (rest.to_string(), true),
                    None => (content, false),
                };
                let id = message["tool_call_id"].as_str().ok_or(format!("messages[{index}].tool_call_id: missing"))?;
                (Role::User, vec![Block::ToolResult { tool_use_id: id.into(), content, is_error }])
            }
            Some("assistant") => {
                let mut content = Vec::new();
                let text = text_of(&message["content"])?;
                if !text.is_empty() {
                    content.push(Block::Text { text });
                }
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let function = &call["function"];
                    let raw = function["arguments"]
                        .as_str()
                        .ok_or(format!("messages[{index}].tool_calls[].function.arguments: expected a string"))?;
                    let input = match serde_json::from_str(raw) {
                        Ok(value) => ToolInput::Json(value),
                        Err(error) => ToolInput::Malformed { raw: raw.into(), error: error.to_string() },
                    };
                    content.push(Block::ToolUse {
                        id: call["id"].as_str().ok_or(format!("messages[{index}].tool_calls[].id: missing"))?.into(),
                        name: function["name"]
                            .as_str()
                            .ok_or(format!("messages[{index}].tool_calls[].name: missing"))?
                            .into(),
                        input,
                    });
                }
                if message["content"].is_null() && content.is_empty() {
                    return Err(format!("messages[{index}]: an assistant message needs content or tool_calls"));
                }
                (Role::Assistant, content)
            }
            other => return Err(format!("messages[{index}].role: unknown role {other:?}")),
        };
        // Tool results and the user text after them are one neutral user message.
        match messages.last_mut() {
            Some(last) if last.role == Role::User && role == Role::User => last.content.extend(block),
            _ => messages.push(Message { role, content: block }),
        }
    }
    check_results_follow_calls(&messages)?;
    let max_output_tokens = u32::try_from(max_tokens).map_err(|_| "max_tokens: too large".to_string())?;
    Ok((model, Request { system: system.join("\n"), messages, tools, max_output_tokens }))
}

fn openai_answer(response: &Response, model: &str) -> Value {
    let text = response.content.iter().filter_map(|block| match block {
        Block::Text { text } => Some(text.as_str()),
        _ => None,
    });
    let text: Vec<&str> = text.collect();
    let calls: Vec<Value> = response
        .content
        .iter()
        .filter_map(|block| match block {
            Block::ToolUse { id, name, input } => {
                let arguments = match input {
                    ToolInput::Json(value) => value.to_string(),
                    ToolInput::Malformed { raw, .. } => raw.clone(),
                };
                Some(json!({ "id": id, "type": "function", "function": { "name": name, "arguments": arguments } }))
            }
            _ => None,
        })
        .collect();
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() { Value::Null } else { json!(text.join("\n")) },
        "refusal": null,
    });
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    let finish_reason = match &response.stop_reason {
        StopReason::EndTurn => "stop",
        StopReason::ToolUse => "tool_calls",
        StopReason::MaxTokens => "length",
        StopReason::Other(other) => other.as_str(),
    };
    let usage = &response.usage;
    let prompt_tokens = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
    let mut wire_usage = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt_tokens + usage.output_tokens,
        "prompt_tokens_details": { "cached_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens },
    });
    if let Some(cost) = usage.reported_cost_usd {
        wire_usage["cost"] = json!(cost);
    }
    json!({
        "id": format!("chatcmpl-fake-{}", fastrand::u32(..)),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason, "logprobs": null }],
        "usage": wire_usage,
    })
}

// ---- OpenAI Responses ----

/// The separator between an MCP server's namespace and its tool's name: Codex offers the tools of
/// MCP server `saffron` as the namespace `mcp__saffron`, and the script sees
/// `mcp__saffron__<tool>` (the name Claude Code gives the same tool).
const NAMESPACE_SEPARATOR: &str = "__";

fn read_responses(captured: &Captured) -> Result<(String, Request), String> {
    let body: Value = serde_json::from_str(&captured.body).map_err(|error| format!("the body is not JSON: {error}"))?;
    let model = body["model"].as_str().ok_or("you must provide a model parameter")?.to_string();
    let max_tokens = body["max_output_tokens"].as_u64().unwrap_or(4096);
    let function = |tool: &Value, prefix: &str| -> Result<ToolSpec, String> {
        let name = tool["name"].as_str().ok_or("tools[].name: missing")?;
        Ok(ToolSpec {
            name: format!("{prefix}{name}"),
            description: tool["description"].as_str().unwrap_or_default().to_string(),
            input_schema: tool.get("parameters").cloned().unwrap_or(json!({})),
        })
    };
    let mut tools = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        match tool["type"].as_str() {
            Some("function") => tools.push(function(tool, "")?),
            Some("namespace") => {
                let namespace = tool["name"].as_str().ok_or("tools[].name: missing")?;
                for inner in tool["tools"].as_array().into_iter().flatten() {
                    tools.push(function(inner, &format!("{namespace}{NAMESPACE_SEPARATOR}"))?);
                }
            }
            // A tool the server runs itself (web search, image generation): named by its type.
            Some(other) => {
                tools.push(ToolSpec { name: other.to_string(), description: String::new(), input_schema: json!({}) })
            }
            None => return Err("tools[].type: missing".into()),
        }
    }
    let mut system: Vec<String> = body["instructions"].as_str().map(str::to_string).into_iter().collect();
    let mut messages: Vec<Message> = Vec::new();
    for (index, item) in body["input"].as_array().ok_or("input: missing")?.iter().enumerate() {
        let text_of = |content: &Value| content_text(content).unwrap_or_default();
        let (role, block) = match item["type"].as_str().unwrap_or("message") {
            "message" => match item["role"].as_str() {
                Some("system" | "developer") => {
                    system.push(text_of(&item["content"]));
                    continue;
                }
                Some("user") => (Role::User, Block::Text { text: text_of(&item["content"]) }),
                Some("assistant") => (Role::Assistant, Block::Text { text: text_of(&item["content"]) }),
                other => return Err(format!("input[{index}].role: unknown role {other:?}")),
            },
            "function_call" => {
                let raw = item["arguments"].as_str().ok_or(format!("input[{index}].arguments: expected a string"))?;
                let input = match serde_json::from_str(raw) {
                    Ok(value) => ToolInput::Json(value),
                    Err(error) => ToolInput::Malformed { raw: raw.into(), error: error.to_string() },
                };
                let name = item["name"].as_str().ok_or(format!("input[{index}].name: missing"))?;
                let name = match item["namespace"].as_str() {
                    Some(namespace) => format!("{namespace}{NAMESPACE_SEPARATOR}{name}"),
                    None => name.to_string(),
                };
                let id = item["call_id"].as_str().ok_or(format!("input[{index}].call_id: missing"))?;
                (Role::Assistant, Block::ToolUse { id: id.into(), name, input })
            }
            "function_call_output" => {
                let id = item["call_id"].as_str().ok_or(format!("input[{index}].call_id: missing"))?;
                // The wire has no error flag: a client says it in the output's words.
                (
                    Role::User,
                    Block::ToolResult { tool_use_id: id.into(), content: text_of(&item["output"]), is_error: false },
                )
            }
            // The model's reasoning, handed back: nothing a script reads.
            "reasoning" => continue,
            other => return Err(format!("input[{index}].type: unknown item type {other:?}")),
        };
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.push(block),
            _ => messages.push(Message { role, content: vec![block] }),
        }
    }
    check_results_follow_calls(&messages)?;
    let max_output_tokens = u32::try_from(max_tokens).map_err(|_| "max_output_tokens: too large".to_string())?;
    Ok((model, Request { system: system.join("\n"), messages, tools, max_output_tokens }))
}

/// The `response` object: its output items (a message, function calls) and usage.
fn responses_answer(response: &Response, model: &str) -> Value {
    let id = format!("resp_fake_{}", fastrand::u32(..));
    let mut output = Vec::new();
    for (index, block) in response.content.iter().enumerate() {
        match block {
            Block::Text { text } => output.push(json!({
                "type": "message", "id": format!("msg_{index}"), "role": "assistant", "status": "completed",
                "content": [{ "type": "output_text", "text": text, "annotations": [] }],
            })),
            Block::ToolUse { id: call_id, name, input } => {
                let arguments = match input {
                    ToolInput::Json(value) => value.to_string(),
                    ToolInput::Malformed { raw, .. } => raw.clone(),
                };
                let mut item = json!({
                    "type": "function_call", "id": format!("fc_{index}"), "call_id": call_id,
                    "name": name, "arguments": arguments, "status": "completed",
                });
                // `mcp__server__tool` is the tool `tool` of the namespace `mcp__server`.
                if let Some(rest) = name.strip_prefix("mcp__")
                    && let Some((server, tool)) = rest.split_once(NAMESPACE_SEPARATOR)
                {
                    item["namespace"] = json!(format!("mcp__{server}"));
                    item["name"] = json!(tool);
                }
                output.push(item);
            }
            _ => {}
        }
    }
    let usage = &response.usage;
    let cached = usage.cache_read_tokens;
    let input = usage.input_tokens + cached + usage.cache_write_tokens;
    json!({
        "id": id, "object": "response", "created_at": 0, "status": "completed", "model": model, "output": output,
        "usage": {
            "input_tokens": input,
            "input_tokens_details": { "cached_tokens": cached },
            "output_tokens": usage.output_tokens,
            "output_tokens_details": { "reasoning_tokens": 0 },
            "total_tokens": input + usage.output_tokens,
        },
    })
}

/// The answer as the server-sent events Codex reads (or the plain object when not streamed).
fn responses_events(answer: &Value, streamed: bool) -> String {
    if !streamed {
        return answer.to_string();
    }
    let mut started = answer.clone();
    started["status"] = json!("in_progress");
    started["output"] = json!([]);
    let mut events = vec![json!({ "type": "response.created", "response": started })];
    for (index, item) in answer["output"].as_array().into_iter().flatten().enumerate() {
        events.push(json!({ "type": "response.output_item.added", "output_index": index, "item": item }));
        if let Some(text) = item["content"][0]["text"].as_str() {
            events.push(json!({
                "type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                "content_index": 0, "delta": text,
            }));
        }
        events.push(json!({ "type": "response.output_item.done", "output_index": index, "item": item }));
    }
    events.push(json!({ "type": "response.completed", "response": answer }));
    events
        .iter()
        .map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap_or_default()))
        .collect()
}

/// Both APIs refuse a conversation in which an assistant's tool calls are not all answered by
/// results in the very next message.
fn check_results_follow_calls(messages: &[Message]) -> Result<(), String> {
    for (index, message) in messages.iter().enumerate() {
        let calls: Vec<&str> = message.tool_calls().map(|call| call.id).collect();
        if calls.is_empty() {
            continue;
        }
        let Some(next) = messages.get(index + 1) else {
            // The last message may be the assistant's: nothing to check yet.
            continue;
        };
        let results: Vec<&str> = next.tool_results().map(|result| result.tool_use_id).collect();
        if let Some(missing) = calls.iter().find(|id| !results.contains(id)) {
            return Err(format!(
                "messages.{}: tool_use ids were found without tool_result blocks immediately after: {missing}",
                index + 1
            ));
        }
        // Anthropic: the results come first in their message.
        let results_first =
            next.content.iter().take(results.len()).all(|block| matches!(block, Block::ToolResult { .. }));
        if !results_first {
            return Err(format!("messages.{}: tool_result blocks must come first", index + 1));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(body: Value) -> Captured {
        Captured { path: "/v1/responses".into(), headers: Vec::new(), body: body.to_string() }
    }

    /// What Codex sends after a batch of two calls in the gateway's namespace: its instructions
    /// as a developer message, the calls, then their outputs (one a list of parts).
    #[test]
    fn a_codex_request_reads_as_one_conversation_with_namespaced_tools() {
        let body = json!({
            "model": "fake-model",
            "stream": true,
            "tools": [
                { "type": "function", "name": "list_mcp_resources", "parameters": {} },
                { "type": "namespace", "name": "mcp__saffron", "tools": [{ "type": "function", "name": "saffron_done" }] },
                { "type": "web_search" },
            ],
            "input": [
                { "type": "message", "role": "developer", "content": [{ "type": "input_text", "text": "Be Codex." }] },
                { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "<env/>" }] },
                { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "Scenario: x" }] },
                { "type": "function_call", "call_id": "a", "namespace": "mcp__saffron", "name": "saffron_done", "arguments": "{}" },
                { "type": "function_call", "call_id": "b", "name": "shell", "arguments": "{\"command\":" },
                { "type": "function_call_output", "call_id": "a", "output": "not done: …" },
                { "type": "function_call_output", "call_id": "b", "output": [{ "type": "input_text", "text": "unsupported call: shell" }] },
            ],
        });
        let (model, request) = read_responses(&captured(body)).expect("read");
        assert_eq!(model, "fake-model");
        assert_eq!(request.system, "Be Codex.");
        let names: Vec<&str> = request.tools.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(names, ["list_mcp_resources", "mcp__saffron__saffron_done", "web_search"]);
        assert_eq!(request.answers_so_far(), 1, "one batch");
        assert!(request.messages[0].text().contains("Scenario: x"));
        let calls: Vec<&str> = request.messages[1].tool_calls().map(|call| call.name).collect();
        assert_eq!(calls, ["mcp__saffron__saffron_done", "shell"]);
        let results: Vec<&str> = request.messages[2].tool_results().map(|result| result.content).collect();
        assert_eq!(results, ["not done: …", "unsupported call: shell"]);
        // A call left without its output is refused, as the API does.
        let unanswered = json!({ "model": "m", "input": [
            { "type": "function_call", "call_id": "a", "name": "x", "arguments": "{}" },
            { "type": "message", "role": "user", "content": "next" },
        ]});
        assert!(read_responses(&captured(unanswered)).is_err());
    }

    #[test]
    fn an_answer_streams_its_calls_in_their_namespace_and_its_usage() {
        let response = Response {
            content: vec![
                Block::Text { text: "Signing in.".into() },
                Block::ToolUse {
                    id: "c1".into(),
                    name: "mcp__saffron__saffron_done".into(),
                    input: ToolInput::Json(json!({})),
                },
                Block::ToolUse { id: "c2".into(), name: "shell".into(), input: ToolInput::Json(json!({})) },
            ],
            stop_reason: StopReason::ToolUse,
            usage: Usage { input_tokens: 10, cache_read_tokens: 5, output_tokens: 3, ..Usage::default() },
        };
        let events = responses_events(&responses_answer(&response, "m"), true);
        let data: Vec<Value> = events
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| serde_json::from_str(data).expect("json"))
            .collect();
        let kinds: Vec<&str> = data.iter().filter_map(|event| event["type"].as_str()).collect();
        assert_eq!(kinds.first(), Some(&"response.created"));
        assert_eq!(kinds.last(), Some(&"response.completed"));
        assert!(kinds.contains(&"response.output_text.delta"));
        let done: Vec<&Value> = data
            .iter()
            .filter(|event| event["type"] == "response.output_item.done")
            .map(|event| &event["item"])
            .collect();
        assert_eq!(
            (done[1]["namespace"].as_str(), done[1]["name"].as_str()),
            (Some("mcp__saffron"), Some("saffron_done"))
        );
        assert_eq!((done[2]["namespace"].as_str(), done[2]["name"].as_str()), (None, Some("shell")));
        let usage = &data.last().expect("completed")["response"]["usage"];
        assert_eq!(
            (usage["input_tokens"].as_u64(), usage["input_tokens_details"]["cached_tokens"].as_u64()),
            (Some(15), Some(5))
        );
    }
}
