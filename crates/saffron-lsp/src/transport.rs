//! A guard in front of the JSON-RPC reader.
//!
//! tower-lsp-server's reader ends the whole session on the first frame it cannot decode (the
//! framed stream stops after an error), so one malformed message would take the server down.
//! This task reads stdin frame by frame and replaces a frame whose body is not a JSON-RPC
//! message with a call to `saffron/malformedMessage`, which the server answers with the proper
//! error (-32700 parse error or -32600 invalid request): an error reply, never a crash.
//!
//! It also routes the requests in [`ROUTES`] to saffron's own methods.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

pub const MALFORMED_METHOD: &str = "saffron/malformedMessage";
pub const COMPLETION_METHOD: &str = "saffron/completion";
pub const COMPLETION_RESOLVE_METHOD: &str = "saffron/completionResolve";

/// Standard requests answered by saffron's own methods, because their replies need LSP 3.17
/// fields that ls-types lacks (see `handlers::completion`). tower-lsp-server lets a server add
/// methods but not replace a standard one, so the method is renamed on the way in; the reply
/// goes back under the request's id, as any reply does.
pub const ROUTES: [(&str, &str); 2] =
    [("textDocument/completion", COMPLETION_METHOD), ("completionItem/resolve", COMPLETION_RESOLVE_METHOD)];

/// Standard input, read through the reactor when it is a pipe (as editors start servers).
/// Tokio's own stdin hands every read to a blocking thread: a thread switch per message,
/// which is most of a completion's latency. Anything else (a file, a terminal) falls back to it.
/// Must be called inside the runtime.
pub fn stdin() -> Box<dyn AsyncRead + Unpin + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let pipe = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok());
        if let Some(pipe) = pipe {
            return Box::new(pipe);
        }
    }
    Box::new(tokio::io::stdin())
}

/// Standard output, written through the reactor when it is a pipe (see [`stdin`]).
pub fn stdout() -> Box<dyn AsyncWrite + Unpin + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let pipe = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok());
        if let Some(pipe) = pipe {
            return Box::new(pipe);
        }
    }
    Box::new(tokio::io::stdout())
}

/// A frame body a JSON-RPC reader will accept, or the replacement that reports why not.
pub fn checked_body(body: &[u8]) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<Value>(body) else {
        return replacement(Value::Null, "parse");
    };
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let valid_id = matches!(id, Value::Null | Value::Number(_) | Value::String(_));
    let is_message = value.get("jsonrpc") == Some(&json!("2.0"))
        && valid_id
        && (value.get("method").is_some_and(Value::is_string)
            && value.get("params").is_none_or(|p| p.is_object() || p.is_array() || p.is_null())
            || (value.get("id").is_some()
                && (value.get("result").is_some() || value.get("error").is_some_and(Value::is_object))));
    if is_message {
        let route = ROUTES.iter().find(|(from, _)| value.get("method").and_then(Value::as_str) == Some(*from));
        if let Some((_, to)) = route {
            value["method"] = json!(to);
            return value.to_string().into_bytes();
        }
        return body.to_vec();
    }
    replacement(if valid_id { id } else { Value::Null }, "invalid")
}

fn replacement(id: Value, kind: &str) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": id, "method": MALFORMED_METHOD, "params": { "kind": kind } })
        .to_string()
        .into_bytes()
}

/// Copies LSP frames from `input` to the returned reader, checking each body.
pub fn guarded_input<R: AsyncRead + Unpin + Send + 'static>(input: R) -> impl AsyncRead + Unpin + Send {
    let (mut writer, reader) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        loop {
            let mut length: Option<usize> = None;
            let mut header_lines = 0;
            loop {
                let mut line = String::new();
                match input.read_line(&mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let line = line.trim_end_matches(['\r', '\n']);
                if line.is_empty() {
                    if header_lines > 0 {
                        break;
                    }
                    continue;
                }
                header_lines += 1;
                if let Some((name, value)) = line.split_once(':')
                    && name.trim().eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().ok();
                }
            }
            let body = match length {
                // A body larger than this is not an editor's request; refuse it whole.
                Some(length) if length <= 64 << 20 => {
                    let mut body = vec![0; length];
                    if input.read_exact(&mut body).await.is_err() {
                        return;
                    }
                    checked_body(&body)
                }
                _ => replacement(Value::Null, "parse"),
            };
            let frame = [format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes(), body].concat();
            if writer.write_all(&frame).await.is_err() {
                return;
            }
        }
    });
    reader
}

#[cfg(test)]
mod tests {
    use super::checked_body;

    fn method(body: &[u8]) -> String {
        let value: serde_json::Value = serde_json::from_slice(&checked_body(body)).expect("json");
        value["method"].as_str().unwrap_or_default().to_string()
    }

    #[test]
    fn messages_pass_and_garbage_is_replaced() {
        assert_eq!(method(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#), "shutdown");
        assert_eq!(method(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#), "initialized");
        assert_eq!(method(b"{ not json"), "saffron/malformedMessage");
        assert_eq!(method(br#"[1,2]"#), "saffron/malformedMessage");
        assert_eq!(method(br#"{"jsonrpc":"1.0","id":3,"method":"x"}"#), "saffron/malformedMessage");
        let replaced: serde_json::Value =
            serde_json::from_slice(&checked_body(br#"{"jsonrpc":"2.0","id":7,"method":5}"#)).expect("json");
        assert_eq!(replaced["id"], 7, "the client can still match the reply");
    }

    #[test]
    fn completion_is_routed_to_saffron_and_keeps_its_id_and_params() {
        let body = br#"{"jsonrpc":"2.0","id":4,"method":"textDocument/completion","params":{"position":{"line":1}}}"#;
        let routed: serde_json::Value = serde_json::from_slice(&checked_body(body)).expect("json");
        assert_eq!(routed["method"], super::COMPLETION_METHOD);
        assert_eq!(routed["id"], 4);
        assert_eq!(routed["params"]["position"]["line"], 1);
        assert_eq!(
            method(br#"{"jsonrpc":"2.0","id":5,"method":"completionItem/resolve","params":{"label":"x"}}"#),
            super::COMPLETION_RESOLVE_METHOD
        );
    }
}
