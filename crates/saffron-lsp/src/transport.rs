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
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

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

/// A body larger than this is not an editor's request; it is refused whole.
const MAX_BODY: usize = 64 << 20;

/// Splits a byte stream into LSP frames and checks each body ([`checked_body`]).
#[derive(Default)]
pub struct Framer {
    pending: Vec<u8>,
}

impl Framer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// The next whole frame, checked and re-framed, or `None` until more bytes come.
    pub fn next_frame(&mut self) -> Option<Vec<u8>> {
        let (header_end, length) = self.header()?;
        let body = match length {
            Some(length) if length <= MAX_BODY => {
                let body = self.pending.get(header_end..header_end + length)?;
                let checked = checked_body(body);
                self.pending.drain(..header_end + length);
                checked
            }
            _ => {
                self.pending.drain(..header_end);
                replacement(Value::Null, "parse")
            }
        };
        Some([format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes(), body].concat())
    }

    /// Where the header block ends and the Content-Length it gives, once it is whole. Blank
    /// lines before a header are skipped; lines may end in CRLF or LF.
    fn header(&mut self) -> Option<(usize, Option<usize>)> {
        let leading = self.pending.iter().take_while(|b| matches!(b, b'\r' | b'\n')).count();
        if leading > 0 && self.pending[leading - 1] == b'\n' {
            let skipped = self.pending[..leading].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            self.pending.drain(..skipped);
        }
        let mut length = None;
        let mut line_start = 0;
        while let Some(newline) = self.pending[line_start..].iter().position(|b| *b == b'\n') {
            let line_end = line_start + newline;
            let line =
                self.pending[line_start..line_end].strip_suffix(b"\r").unwrap_or(&self.pending[line_start..line_end]);
            if line.is_empty() {
                return (line_start > 0).then_some((line_end + 1, length));
            }
            if let Some((name, value)) = std::str::from_utf8(line).ok().and_then(|line| line.split_once(':'))
                && name.trim().eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().ok();
            }
            line_start = line_end + 1;
        }
        None
    }
}

/// The client's input with every frame checked, read in the same task as the server's reader:
/// a separate copying task would cost a task switch per message.
pub struct GuardedInput<R> {
    inner: R,
    framer: Framer,
    ready: Vec<u8>,
    ready_at: usize,
    scratch: Vec<u8>,
    at_end: bool,
}

pub fn guarded_input<R: AsyncRead + Unpin>(inner: R) -> GuardedInput<R> {
    GuardedInput {
        inner,
        framer: Framer::default(),
        ready: Vec::new(),
        ready_at: 0,
        scratch: vec![0; 64 << 10],
        at_end: false,
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for GuardedInput<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.ready_at < this.ready.len() {
                let count = buf.remaining().min(this.ready.len() - this.ready_at);
                buf.put_slice(&this.ready[this.ready_at..this.ready_at + count]);
                this.ready_at += count;
                return Poll::Ready(Ok(()));
            }
            if let Some(frame) = this.framer.next_frame() {
                (this.ready, this.ready_at) = (frame, 0);
                continue;
            }
            if this.at_end {
                return Poll::Ready(Ok(()));
            }
            let mut read = ReadBuf::new(&mut this.scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                // A read error ends the session as the end of input does: nothing more can come.
                Poll::Ready(Err(_)) => this.at_end = true,
                Poll::Ready(Ok(())) if read.filled().is_empty() => this.at_end = true,
                Poll::Ready(Ok(())) => this.framer.push(read.filled()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Framer, checked_body};

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

    fn frames(input: &[u8]) -> Vec<String> {
        let mut framer = Framer::default();
        // Byte by byte: a frame is only given once it is whole.
        let mut frames = Vec::new();
        for byte in input {
            framer.push(&[*byte]);
            while let Some(frame) = framer.next_frame() {
                frames.push(String::from_utf8(frame).expect("utf-8"));
            }
        }
        frames
    }

    #[test]
    fn frames_are_split_checked_and_reframed() {
        let shutdown = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let input = format!(
            "Content-Length: {}\r\n\r\n{shutdown}\r\n\ncontent-length:  9\nContent-Type: x\n\n{{ garbage\r\nContent-Type: x\r\n\r\nContent-Length: {}\r\n\r\n{shutdown}",
            shutdown.len(),
            shutdown.len()
        );
        let frames = frames(input.as_bytes());
        assert_eq!(frames.len(), 4, "{frames:?}");
        assert_eq!(frames[0], format!("Content-Length: {}\r\n\r\n{shutdown}", shutdown.len()));
        assert!(frames[1].contains("saffron/malformedMessage") && frames[1].contains(r#""kind":"parse""#));
        // A header block with no length is refused, and reading goes on.
        assert!(frames[2].contains("saffron/malformedMessage"), "{}", frames[2]);
        assert!(frames[3].ends_with(shutdown));
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
