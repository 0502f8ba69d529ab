//! Page functions in Firefox: `script.callFunction` and `script.evaluate`, answered in the
//! shape [`crate::cdp`] gives its callers.
//!
//! An element handle is `"{browsing context} {sharedId}"`. A BiDi node reference is valid only
//! in the frame (browsing context) whose document holds it, so the handle names it, and a call
//! on an element goes to that frame. A node a function returns is in the frame the function
//! ran in: Saffron's page functions never reach into another frame's document (a frame is
//! entered through [`Tab::frame_document`]).

use serde_json::{Map, Value, json};

use crate::cdp::{Argument, CdpFail, Receiver, Remote, World};

use super::Tab;

/// The sandbox Saffron's isolated work runs in, one per frame.
const SANDBOX: &str = "saffron";

/// An element handle for `shared_id` in `context`.
pub(crate) fn handle(context: &str, shared_id: &str) -> String {
    format!("{context} {shared_id}")
}

/// The frame and the node reference of an element handle.
pub(crate) fn parse_handle(handle: &str) -> Result<(&str, &str), CdpFail> {
    handle.split_once(' ').ok_or_else(|| CdpFail::Protocol(format!("{handle:?} is not a Firefox element handle")))
}

/// A JSON value as a BiDi `LocalValue`.
pub(crate) fn local_value(value: &Value) -> Value {
    match value {
        Value::Null => json!({ "type": "null" }),
        Value::Bool(flag) => json!({ "type": "boolean", "value": flag }),
        Value::Number(number) => json!({ "type": "number", "value": number }),
        Value::String(text) => json!({ "type": "string", "value": text }),
        Value::Array(items) => json!({ "type": "array", "value": items.iter().map(local_value).collect::<Vec<_>>() }),
        Value::Object(fields) => json!({
            "type": "object",
            "value": fields.iter().map(|(key, value)| json!([key, local_value(value)])).collect::<Vec<_>>(),
        }),
    }
}

/// A BiDi `RemoteValue` as JSON, as `returnByValue` gives it in Chromium: nodes, windows and
/// functions, which JSON cannot hold, are `{}`; numbers JSON cannot hold are `null`.
pub(crate) fn json_value(remote: &Value) -> Value {
    let value = remote.get("value");
    match remote.get("type").and_then(Value::as_str).unwrap_or_default() {
        "undefined" | "null" => Value::Null,
        "string" | "boolean" => value.cloned().unwrap_or(Value::Null),
        "number" => match value {
            Some(Value::Number(number)) => Value::Number(number.clone()),
            _ => Value::Null,
        },
        "bigint" => {
            value.and_then(Value::as_str).and_then(|text| text.parse::<i64>().ok()).map_or(Value::Null, Value::from)
        }
        "array" | "set" => {
            Value::Array(value.and_then(Value::as_array).into_iter().flatten().map(json_value).collect())
        }
        "object" | "map" => {
            let mut fields = Map::new();
            for pair in value.and_then(Value::as_array).into_iter().flatten() {
                let (Some(key), Some(item)) = (pair.get(0), pair.get(1)) else { continue };
                let key = match key {
                    Value::String(key) => key.clone(),
                    other => json_value(other).as_str().map(str::to_owned).unwrap_or_default(),
                };
                fields.insert(key, json_value(item));
            }
            Value::Object(fields)
        }
        "date" | "regexp" => value.map(|value| value.get("pattern").unwrap_or(value).clone()).unwrap_or(Value::Null),
        _ => Value::Object(Map::new()),
    }
}

/// A BiDi script result as a [`Remote`]: a node in `context` is a handle, anything else its
/// value.
fn remote(answer: &Value, context: &str) -> Result<Remote, CdpFail> {
    if answer.get("type").and_then(Value::as_str) == Some("exception") {
        let details = answer.get("exceptionDetails").cloned().unwrap_or_default();
        let text = details.get("text").and_then(Value::as_str).unwrap_or("exception");
        return Err(CdpFail::Protocol(format!("script failed: {text}")));
    }
    let result = answer.get("result").cloned().unwrap_or(Value::Null);
    let kind = result.get("type").and_then(Value::as_str).unwrap_or_default();
    Ok(match kind {
        "node" => Remote {
            subtype: Some("node".to_owned()),
            value: None,
            object_id: result.get("sharedId").and_then(Value::as_str).map(|id| handle(context, id)),
        },
        "undefined" => Remote::default(),
        "null" => Remote { subtype: Some("null".to_owned()), value: Some(Value::Null), object_id: None },
        "array" => Remote { subtype: Some("array".to_owned()), value: Some(json_value(&result)), object_id: None },
        _ => Remote { subtype: None, value: Some(json_value(&result)), object_id: None },
    })
}

impl Tab {
    /// `expression`'s value in the tab's page (called as a function, as every page function is).
    pub(crate) async fn evaluate(&self, expression: &str, by_value: bool) -> Result<Remote, CdpFail> {
        let function = format!("function () {{ return ({expression}); }}");
        self.call_in(&self.context, false, &function, &[], None, by_value).await
    }

    /// `script.callFunction` of `function` on the receiver, with `arguments`.
    pub(crate) async fn call_function(
        &self,
        receiver: Receiver<'_>,
        function: &str,
        arguments: &[Argument],
        by_value: bool,
    ) -> Result<Remote, CdpFail> {
        match receiver {
            Receiver::Object(handle) => {
                let (context, _) = parse_handle(handle)?;
                self.call_in(context, false, function, arguments, Some(handle), by_value).await
            }
            Receiver::World(World::Frame(frame)) => {
                self.call_in(frame, true, function, arguments, None, by_value).await
            }
            Receiver::World(World::Context(_)) => {
                Err(CdpFail::Protocol("a DevTools execution context is not a Firefox frame".to_owned()))
            }
        }
    }

    async fn call_in(
        &self,
        context: &str,
        sandboxed: bool,
        function: &str,
        arguments: &[Argument],
        this: Option<&str>,
        by_value: bool,
    ) -> Result<Remote, CdpFail> {
        let mut values = Vec::with_capacity(arguments.len());
        for argument in arguments {
            values.push(match argument {
                Argument::Value(value) => local_value(value),
                Argument::Object(handle) => json!({ "sharedId": parse_handle(handle)?.1 }),
            });
        }
        let mut target = json!({ "context": context });
        if sandboxed {
            target["sandbox"] = json!(SANDBOX);
        }
        let this = this.map(parse_handle).transpose()?.map(|(_, shared_id)| shared_id);
        let answer = self.call_raw(target, this, function, values, false).await?;
        let found = remote(&answer, context)?;
        if by_value && found.subtype.as_deref() == Some("node") {
            return Ok(Remote { subtype: None, value: Some(Value::Object(Map::new())), object_id: None });
        }
        Ok(found)
    }

    /// `script.callFunction` of `function` in `target` (a frame, or its sandbox), with `this` (a
    /// node's shared id) and `arguments` (BiDi local values), its promise awaited, as a person's
    /// gesture when `user_activation`: the browser's answer as it is.
    pub(crate) async fn call_raw(
        &self,
        target: Value,
        this: Option<&str>,
        function: &str,
        arguments: Vec<Value>,
        user_activation: bool,
    ) -> Result<Value, CdpFail> {
        let mut params = json!({
            "functionDeclaration": function,
            "arguments": arguments,
            "target": target,
            "awaitPromise": true,
            "resultOwnership": "none",
            "serializationOptions": { "maxDomDepth": 0 },
            "userActivation": user_activation,
        });
        if let Some(shared_id) = this {
            params["this"] = json!({ "sharedId": shared_id });
        }
        self.bidi.call("script.callFunction", params).await.map_err(super::fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_goes_out_as_local_values_and_comes_back_as_json() {
        let sent = json!({ "tier": "css", "n": 2, "list": [true, null], "nested": { "a": "b" } });
        assert_eq!(
            local_value(&sent)["value"][1],
            json!(["n", { "type": "number", "value": 2 }]),
            "object fields keep their order as pairs"
        );
        let answered = json!({ "type": "object", "value": [
            ["ok", { "type": "boolean", "value": true }],
            ["x", { "type": "number", "value": 12.5 }],
            ["why", { "type": "undefined" }],
            ["list", { "type": "array", "value": [{ "type": "string", "value": "a" }, { "type": "number", "value": "NaN" }] }],
            ["el", { "type": "node", "sharedId": "s" }],
        ] });
        assert_eq!(json_value(&answered), json!({ "ok": true, "x": 12.5, "why": null, "list": ["a", null], "el": {} }));
    }

    #[test]
    fn a_node_is_a_handle_naming_its_frame() {
        let answer = json!({ "type": "success", "result": { "type": "node", "sharedId": "abc" } });
        let found = remote(&answer, "frame-1").expect("a node");
        assert_eq!(found.node(), Some("frame-1 abc"));
        assert_eq!(parse_handle("frame-1 abc").expect("a handle"), ("frame-1", "abc"));
        let thrown = json!({ "type": "exception", "exceptionDetails": { "text": "ReferenceError: x" } });
        assert!(matches!(remote(&thrown, "f"), Err(CdpFail::Protocol(message)) if message.contains("ReferenceError")));
    }
}
