//! Raw DevTools calls.
//!
//! Commands go out as `method` + JSON params and come back as JSON, instead of through
//! chromiumoxide's generated types: those are generated from one protocol revision, and a
//! Chromium a few versions newer may answer with an enum value the generated type does not
//! know, which would fail the whole call. Reading the few fields we need from JSON cannot break
//! that way. (Events still arrive typed, since chromiumoxide parses them before we see them.)

use chromiumoxide::error::CdpError;
use chromiumoxide::types::{Command, Method, MethodId};
use serde_json::{Value, json};

use crate::page::Page;

/// A DevTools command given by name, answered as JSON.
#[derive(Debug, Clone)]
pub(crate) struct Raw {
    method: &'static str,
    params: Value,
}

impl Raw {
    pub(crate) fn new(method: &'static str, params: Value) -> Raw {
        Raw { method, params }
    }
}

impl serde::Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(serializer)
    }
}

impl Method for Raw {
    fn identifier(&self) -> MethodId {
        self.method.into()
    }
}

impl Command for Raw {
    type Response = Value;
}

/// A failed call, sorted by what the caller can do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CdpFail {
    /// Chromium answered with an error, usually because the page moved on under us
    /// ("Execution context was destroyed", "Could not find node"): try again.
    Protocol(String),
    /// The connection or the target is gone: nothing to retry.
    Dead(String),
    /// No answer within chromiumoxide's request timeout.
    Timeout,
    /// The engine has no way to do this (what it is): nothing to retry.
    Unsupported(String),
}

impl std::fmt::Display for CdpFail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CdpFail::Protocol(message) | CdpFail::Dead(message) => f.write_str(message),
            CdpFail::Timeout => f.write_str("the browser did not answer"),
            CdpFail::Unsupported(what) => write!(f, "Firefox cannot do this yet: {what}"),
        }
    }
}

impl From<CdpError> for CdpFail {
    fn from(error: CdpError) -> CdpFail {
        match error {
            CdpError::Timeout => CdpFail::Timeout,
            CdpError::Ws(_) | CdpError::Io(_) | CdpError::ChannelSendError(_) | CdpError::NoResponse => {
                CdpFail::Dead(error.to_string())
            }
            CdpError::Chrome(error) => {
                // A closed tab answers this way; retrying would only wait for the timeout.
                if error.message.contains("No target with given id")
                    || error.message.contains("Session with given id not found")
                {
                    CdpFail::Dead(error.message)
                } else {
                    CdpFail::Protocol(error.message)
                }
            }
            other => CdpFail::Protocol(other.to_string()),
        }
    }
}

/// Sends one command to the page's session.
pub(crate) async fn call(page: &Page, method: &'static str, params: Value) -> Result<Value, CdpFail> {
    let page = page.chromium(method)?;
    if !crate::timing::calls_timed() {
        return Ok(page.execute(Raw::new(method, params)).await?.result);
    }
    let started = std::time::Instant::now();
    let answer = page.execute(Raw::new(method, params)).await;
    crate::timing::cdp_call(method, started.elapsed());
    Ok(answer?.result)
}

/// [`call`], given up after `limit` ([`CdpFail::Timeout`]): for a query Chromium may leave
/// unanswered (an accessibility query on a document a frame just replaced).
pub(crate) async fn call_within(
    page: &Page,
    method: &'static str,
    params: Value,
    limit: std::time::Duration,
) -> Result<Value, CdpFail> {
    tokio::time::timeout(limit, call(page, method, params)).await.unwrap_or(Err(CdpFail::Timeout))
}

/// A `Runtime.RemoteObject`, reduced to what we read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Remote {
    /// `subtype`: "node", "null", "array", ...
    pub subtype: Option<String>,
    /// The value, for primitives and for `returnByValue` results.
    pub value: Option<Value>,
    /// The handle, for objects not returned by value.
    pub object_id: Option<String>,
}

impl Remote {
    pub(crate) fn from_result(answer: &Value) -> Result<Remote, CdpFail> {
        if let Some(details) = answer.get("exceptionDetails") {
            let text = details.get("text").and_then(Value::as_str).unwrap_or("exception");
            let description = details.pointer("/exception/description").and_then(Value::as_str).unwrap_or_default();
            return Err(CdpFail::Protocol(format!("script failed: {text} {description}").trim_end().to_owned()));
        }
        let result = answer.get("result").cloned().unwrap_or(Value::Null);
        Ok(Remote {
            subtype: result.get("subtype").and_then(Value::as_str).map(str::to_owned),
            value: result.get("value").cloned(),
            object_id: result.get("objectId").and_then(Value::as_str).map(str::to_owned),
        })
    }

    /// The handle of a DOM node result.
    pub(crate) fn node(&self) -> Option<&str> {
        if self.subtype.as_deref() == Some("node") { self.object_id.as_deref() } else { None }
    }
}

/// Evaluates an expression in the page's main world.
pub(crate) async fn evaluate(page: &Page, expression: &str, group: &str, by_value: bool) -> Result<Remote, CdpFail> {
    if let Page::Firefox(tab) = page {
        return tab.evaluate(expression, by_value).await;
    }
    let answer = call(
        page,
        "Runtime.evaluate",
        json!({
            "expression": expression,
            "objectGroup": group,
            "returnByValue": by_value,
            "awaitPromise": false,
            // A page that redefines `console` or listens for errors must not see ours.
            "silent": true,
        }),
    )
    .await?;
    Remote::from_result(&answer)
}

/// Calls `function` with `this` bound to the object and `args` as its arguments (JSON values).
/// Results are returned by value, except DOM nodes (`by_value: false`).
pub(crate) async fn call_on(
    page: &Page,
    object_id: &str,
    function: &str,
    args: &[Value],
    by_value: bool,
) -> Result<Remote, CdpFail> {
    let arguments: Vec<Argument> = args.iter().map(|value| Argument::Value(value.clone())).collect();
    call_function(page, Receiver::Object(object_id), function, &arguments, by_value).await
}

/// Calls `function` in an execution context of its own (an isolated world, see
/// `Page.createIsolatedWorld`) with `args`; returns its value (JSON `null` when there is none).
pub(crate) async fn call_in_world(
    page: &Page,
    world: &World,
    function: &str,
    args: &[Value],
) -> Result<Value, CdpFail> {
    let arguments: Vec<Argument> = args.iter().map(|value| Argument::Value(value.clone())).collect();
    Ok(call_function(page, Receiver::World(world), function, &arguments, true).await?.value.unwrap_or(Value::Null))
}

/// An isolated world of one frame, where the page's own scripts see nothing of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum World {
    /// A DevTools execution context (`Page.createIsolatedWorld`).
    Context(i64),
    /// A BiDi browsing context (a frame), whose `saffron` sandbox is the world.
    Frame(String),
}

/// What a function is called on: a page object (`this`), or an execution context.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Receiver<'a> {
    Object(&'a str),
    World(&'a World),
}

/// One argument of a page function: a JSON value, or a page object by its handle.
#[derive(Debug, Clone)]
pub(crate) enum Argument {
    Value(Value),
    Object(String),
}

impl Argument {
    fn to_json(&self) -> Value {
        match self {
            Argument::Value(value) => json!({ "value": value }),
            Argument::Object(object_id) => json!({ "objectId": object_id }),
        }
    }
}

/// Like [`call_on`], with arguments that may be page objects (elements found earlier).
pub(crate) async fn call_with(
    page: &Page,
    object_id: &str,
    function: &str,
    args: &[Argument],
    by_value: bool,
) -> Result<Remote, CdpFail> {
    call_function(page, Receiver::Object(object_id), function, args, by_value).await
}

async fn call_function(
    page: &Page,
    receiver: Receiver<'_>,
    function: &str,
    arguments: &[Argument],
    by_value: bool,
) -> Result<Remote, CdpFail> {
    if let Page::Firefox(tab) = page {
        return tab.call_function(receiver, function, arguments, by_value).await;
    }
    let mut params = json!({
        "functionDeclaration": function,
        "arguments": arguments.iter().map(Argument::to_json).collect::<Vec<_>>(),
        "returnByValue": by_value,
        "awaitPromise": true,
        "silent": true,
    });
    match receiver {
        Receiver::Object(object_id) => params["objectId"] = json!(object_id),
        Receiver::World(World::Context(world)) => params["executionContextId"] = json!(world),
        Receiver::World(World::Frame(frame)) => {
            return Err(CdpFail::Protocol(format!("{frame} is not a DevTools world")));
        }
    }
    let answer = call(page, "Runtime.callFunctionOn", params).await?;
    Remote::from_result(&answer)
}

/// Like [`call_on`], returning the value (JSON `null` when there is none).
pub(crate) async fn call_value(page: &Page, object_id: &str, function: &str, args: &[Value]) -> Result<Value, CdpFail> {
    Ok(call_on(page, object_id, function, args, true).await?.value.unwrap_or(Value::Null))
}
