//! Guards around tower-lsp-server's reader and writer.
//!
//! tower-lsp-server's reader ends the whole session on the first frame it cannot decode (the
//! framed stream stops after an error), so one malformed message would take the server down.
//! [`GuardedInput`] reads stdin frame by frame and replaces a frame whose body is not a JSON-RPC
//! message with a call to `saffron/malformedMessage`, which the server answers with the proper
//! error (-32700 parse error or -32600 invalid request): an error reply, never a crash.
//!
//! It also routes the requests in [`ROUTES`] to saffron's own methods.
//!
//! On the way out, [`GuardedOutput`] puts replies that a handler serialized itself
//! ([`PreparedReplies`]) into their frames.
//!
//! The hot path of typing skips the framework altogether: the input guard offers document
//! sync and completion ([`DIRECT_METHODS`]) to the server's [`DirectHandler`] as they come,
//! in order, and writes what it answers to the output both guards share ([`SharedOutput`]).

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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

/// Messages the input guard offers to the server's [`DirectHandler`] before the framework.
/// tower-lsp-server decodes every message into a `Value`, queues it as a future and encodes
/// its reply from another `Value`: for a completion, about a third of the time between the
/// request's arrival and its reply's departure. Document sync comes along because a completion
/// must see every edit sent before it, and these are then applied in the order they come.
pub const DIRECT_METHODS: [&str; 4] =
    ["textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "textDocument/completion"];

/// What the server did with a message the input guard offered it.
pub enum Handled {
    /// Not taken: the framework gets it, as any other message.
    Passed,
    /// Taken; these message bodies (a reply, notifications) go to the client.
    Taken(Vec<Vec<u8>>),
}

/// Takes or passes a message in [`DIRECT_METHODS`]: `(method, body)`.
pub type DirectHandler = Arc<dyn Fn(&str, &[u8]) -> Handled + Send + Sync>;

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

/// The top-level members of a message, as raw JSON text: enough to check the message's shape
/// and route it without building it as a `Value` (the reader behind parses it again anyway).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member that is there, even when it is `null` (which `Option` alone reads as absent).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// A raw value as a string, when it is one.
fn string(raw: &RawValue) -> Option<std::borrow::Cow<'_, str>> {
    serde_json::from_str(raw.get()).ok()
}

/// What kind of JSON value a raw value is, by its first character.
fn starts_with(raw: Option<&RawValue>, first: &[u8]) -> bool {
    raw.and_then(|raw| raw.get().bytes().next()).is_some_and(|byte| first.contains(&byte))
}

/// A frame body a JSON-RPC reader will accept, or the replacement that reports why not.
#[cfg(test)]
pub fn checked_body(body: &[u8]) -> Vec<u8> {
    check(body).0
}

/// A frame body a JSON-RPC reader will accept, or the replacement that reports why not; and
/// the method, when it is one of [`DIRECT_METHODS`].
fn check(body: &[u8]) -> (Vec<u8>, Option<&'static str>) {
    let envelope = match serde_json::from_slice::<Envelope>(body) {
        Ok(envelope) => envelope,
        // Valid JSON that is not an object, or one with a member twice: judged as a whole.
        Err(error) if error.is_data() => return (checked_value(body), None),
        Err(_) => return (replacement(Value::Null, "parse"), None),
    };
    let valid_id = envelope.id.is_none() || starts_with(envelope.id, b"n\"-0123456789");
    let method = envelope.method.and_then(string);
    let is_request = method.is_some() && (envelope.params.is_none() || starts_with(envelope.params, b"{[n"));
    let is_response = envelope.id.is_some() && (envelope.result.is_some() || starts_with(envelope.error, b"{"));
    let is_message = envelope.jsonrpc.and_then(string).is_some_and(|version| version == "2.0")
        && valid_id
        && (is_request || is_response);
    if !is_message {
        let id = envelope.id.filter(|_| valid_id).and_then(|raw| serde_json::from_str(raw.get()).ok());
        return (replacement(id.unwrap_or(Value::Null), "invalid"), None);
    }
    let direct = DIRECT_METHODS.iter().find(|direct| method.as_deref() == Some(**direct)).copied();
    let routed = match ROUTES.iter().find(|(from, _)| method.as_deref() == Some(*from)) {
        Some((_, to)) => {
            let mut routed = Vec::with_capacity(body.len() + 16);
            routed.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
            routed.extend_from_slice(Value::from(*to).to_string().as_bytes());
            for (name, member) in [("id", envelope.id), ("params", envelope.params)] {
                if let Some(member) = member {
                    routed.extend_from_slice(format!(",\"{name}\":").as_bytes());
                    routed.extend_from_slice(member.get().as_bytes());
                }
            }
            routed.push(b'}');
            routed
        }
        None => body.to_vec(),
    };
    (routed, direct)
}

/// [`checked_body`] for a body that is JSON but no message object.
fn checked_value(body: &[u8]) -> Vec<u8> {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return replacement(Value::Null, "parse");
    };
    let id = value.get("id").cloned().filter(|id| matches!(id, Value::Number(_) | Value::String(_)));
    replacement(id.unwrap_or(Value::Null), "invalid")
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
    #[cfg(test)]
    pub fn next_frame(&mut self) -> Option<Vec<u8>> {
        self.next_checked().map(|(body, _)| frame_of(&body))
    }

    /// The next whole frame's checked body, and its method when it is a direct one.
    fn next_checked(&mut self) -> Option<(Vec<u8>, Option<&'static str>)> {
        let mut direct = None;
        let body = self.next_body(
            |body| {
                let (checked, method) = check(body);
                direct = method;
                checked
            },
            || replacement(Value::Null, "parse"),
        )?;
        Some((body, direct))
    }

    /// The next whole frame's body passed through `body`, or `refused()` for a header block
    /// with no usable length.
    fn next_body(&mut self, body: impl FnOnce(&[u8]) -> Vec<u8>, refused: impl FnOnce() -> Vec<u8>) -> Option<Vec<u8>> {
        let (header_end, length) = self.header()?;
        Some(match length {
            Some(length) if length <= MAX_BODY => {
                let passed = body(self.pending.get(header_end..header_end + length)?);
                self.pending.drain(..header_end + length);
                passed
            }
            _ => {
                self.pending.drain(..header_end);
                refused()
            }
        })
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

/// Appends `body` to `out` as one LSP frame.
fn push_frame(out: &mut Vec<u8>, body: &[u8]) {
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
}

fn frame_of(body: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(body.len() + 32);
    push_frame(&mut frame, body);
    frame
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The client's input with every frame checked, read in the same task as the server's reader:
/// a separate copying task would cost a task switch per message.
pub struct GuardedInput<R, W> {
    inner: R,
    framer: Framer,
    ready: Vec<u8>,
    ready_at: usize,
    scratch: Vec<u8>,
    at_end: bool,
    direct: Option<(DirectHandler, SharedOutput<W>)>,
}

/// `direct`: the server's handler for [`DIRECT_METHODS`] and the output its answers go to.
pub fn guarded_input<R: AsyncRead + Unpin, W>(
    inner: R,
    direct: Option<(DirectHandler, SharedOutput<W>)>,
) -> GuardedInput<R, W> {
    GuardedInput {
        inner,
        framer: Framer::default(),
        ready: Vec::new(),
        ready_at: 0,
        scratch: vec![0; 64 << 10],
        at_end: false,
        direct,
    }
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> AsyncRead for GuardedInput<R, W> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        // Answers that did not all fit in the pipe go on now: the reader runs in the same task
        // as the writer, so this task is woken when the pipe has room. (A write error is the
        // writer's to report.)
        if let Some((_, output)) = &this.direct {
            let _ = lock(output).poll_drain(cx);
        }
        loop {
            if this.ready_at < this.ready.len() {
                let count = buf.remaining().min(this.ready.len() - this.ready_at);
                buf.put_slice(&this.ready[this.ready_at..this.ready_at + count]);
                this.ready_at += count;
                return Poll::Ready(Ok(()));
            }
            if let Some((body, direct)) = this.framer.next_checked() {
                if let (Some(method), Some((handler, output))) = (direct, &this.direct)
                    && let Handled::Taken(messages) = handler(method, &body)
                {
                    let mut output = lock(output);
                    for message in &messages {
                        output.push(message);
                    }
                    let _ = output.poll_drain(cx);
                    continue;
                }
                (this.ready, this.ready_at) = (frame_of(&body), 0);
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

/// Replies a handler serialized itself, each waiting for its frame.
///
/// tower-lsp-server turns every reply into a `serde_json::Value` and then into text: for a
/// completion list, a map and a string per field of every item, built, written and dropped,
/// a third of a completion's CPU time. A handler on the hot path writes its reply straight to
/// JSON text instead and returns a placeholder; [`GuardedOutput`] puts the text in the
/// placeholder's place as the reply is written.
#[derive(Default)]
pub struct PreparedReplies {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, Vec<u8>>>,
}

/// Starts every placeholder. A NUL character is never in a reply saffron writes, and the whole
/// placeholder must also be a reply's entire `result` and one this process issued.
const PLACEHOLDER: &str = "\u{0}saffron/prepared/";

/// How many prepared replies may wait at once. Only a reply lost on its way to the output (the
/// client gone) leaves one waiting; the oldest are dropped past this.
const MAX_WAITING: u64 = 256;

impl PreparedReplies {
    /// `reply` as JSON text, and the placeholder to return in its place.
    #[cfg(test)]
    pub fn prepare(&self, reply: &impl serde::Serialize) -> serde_json::Result<Value> {
        Ok(self.hold(serde_json::to_vec(reply)?))
    }

    /// The placeholder to return in place of `text`, a reply's JSON.
    pub fn hold(&self, text: Vec<u8>) -> Value {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let mut waiting = lock(&self.waiting);
        waiting.retain(|waiting_number, _| number.saturating_sub(*waiting_number) < MAX_WAITING);
        waiting.insert(number, text);
        Value::String(format!("{PLACEHOLDER}{number}"))
    }

    /// The body with the prepared reply in place, when `body` is a reply to a placeholder.
    fn fill(&self, body: &[u8]) -> Option<Vec<u8>> {
        // A reply that could be one is small (a placeholder and an id): larger bodies are
        // passed without a look.
        if body.len() > 1024 || !body.windows(10).any(|window| window == br"\u0000saff") {
            return None;
        }
        let reply: Value = serde_json::from_slice(body).ok()?;
        let number: u64 = reply.get("result")?.as_str()?.strip_prefix(PLACEHOLDER)?.parse().ok()?;
        let text = lock(&self.waiting).remove(&number)?;
        let id = serde_json::to_vec(reply.get("id")?).ok()?;
        let mut filled = Vec::with_capacity(text.len() + id.len() + 32);
        filled.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        filled.extend_from_slice(&id);
        filled.extend_from_slice(br#","result":"#);
        filled.extend_from_slice(&text);
        filled.push(b'}');
        Some(filled)
    }
}

/// The server's output: whole frames, written as the pipe takes them. Shared by both guards,
/// which run in the one task of the framework's reader and writer.
pub struct Output<W> {
    inner: W,
    out: Vec<u8>,
    out_at: usize,
}

pub type SharedOutput<W> = Arc<Mutex<Output<W>>>;

pub fn shared_output<W>(inner: W) -> SharedOutput<W> {
    Arc::new(Mutex::new(Output { inner, out: Vec::new(), out_at: 0 }))
}

impl<W: AsyncWrite + Unpin> Output<W> {
    fn push(&mut self, body: &[u8]) {
        push_frame(&mut self.out, body);
    }

    /// Writes what is ready; `Ready` once all of it is written.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.out_at < self.out.len() {
            match Pin::new(&mut self.inner).poll_write(cx, &self.out[self.out_at..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(count)) => self.out_at += count,
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.out.clear();
        self.out_at = 0;
        Poll::Ready(Ok(()))
    }
}

/// The framework's output, with prepared replies put in their frames ([`PreparedReplies`]).
pub struct GuardedOutput<W> {
    output: SharedOutput<W>,
    replies: Arc<PreparedReplies>,
    frames: Framer,
}

pub fn guarded_output<W: AsyncWrite + Unpin>(
    output: SharedOutput<W>,
    replies: Arc<PreparedReplies>,
) -> GuardedOutput<W> {
    GuardedOutput { output, replies, frames: Framer::default() }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for GuardedOutput<W> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let mut output = lock(&this.output);
        // What was taken before goes out first: a slow client slows the server's writes down
        // instead of growing this buffer.
        if output.poll_drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        this.frames.push(buf);
        let replies = &this.replies;
        // The framework writes whole, well-formed frames (a header block without a length,
        // which it never writes, would be dropped).
        while let Some(body) =
            this.frames.next_body(|body| replies.fill(body).unwrap_or_else(|| body.to_vec()), Vec::new)
        {
            output.push(&body);
        }
        // The bytes are taken; the frames written now, or on the next write or flush.
        let _ = output.poll_drain(cx)?;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let mut output = lock(&self.output);
        if output.poll_drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut output.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let mut output = lock(&self.output);
        if output.poll_drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut output.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::{Framer, checked_body};
    use serde_json::{Value, json};

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
        // Spacing, a response with a null id, a request with null params, a member twice.
        assert_eq!(
            checked_body(b" { \"id\" : 2 , \"result\" : null , \"jsonrpc\" : \"2.0\" } "),
            b" { \"id\" : 2 , \"result\" : null , \"jsonrpc\" : \"2.0\" } "
        );
        let error_reply = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
        assert_eq!(checked_body(error_reply), error_reply);
        assert_eq!(method(br#"{"jsonrpc":"2.0","method":"exit","params":null}"#), "exit");
        assert_eq!(method(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"shutdown"}"#), "saffron/malformedMessage");
        assert_eq!(method(br#"{"jsonrpc":"2.0","id":{},"method":"shutdown"}"#), "saffron/malformedMessage");
        assert_eq!(method(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":5}"#), "saffron/malformedMessage");
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
        let body =
            br#"{"jsonrpc":"2.0","id":4, "method":"textDocument\/completion","params": {"position":{"line":1}}}"#;
        let routed: serde_json::Value = serde_json::from_slice(&checked_body(body)).expect("json");
        assert_eq!(routed["method"], super::COMPLETION_METHOD);
        assert_eq!(routed["id"], 4);
        assert_eq!(routed["params"]["position"]["line"], 1);
        assert_eq!(
            method(br#"{"jsonrpc":"2.0","id":5,"method":"completionItem/resolve","params":{"label":"x"}}"#),
            super::COMPLETION_RESOLVE_METHOD
        );
    }

    /// What `GuardedOutput` writes for `frames`, given `chunk` bytes at a time.
    fn written(replies: std::sync::Arc<super::PreparedReplies>, frames: &[String], chunk: usize) -> Vec<Value> {
        use tokio::io::AsyncWriteExt;
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        let bytes = runtime.block_on(async {
            let shared = super::shared_output(Vec::new());
            let mut output = super::guarded_output(shared.clone(), replies);
            let all: Vec<u8> = frames.concat().into_bytes();
            for piece in all.chunks(chunk) {
                output.write_all(piece).await.expect("write");
            }
            output.flush().await.expect("flush");
            std::mem::take(&mut super::lock(&shared).inner)
        });
        let mut framer = Framer::default();
        framer.push(&bytes);
        std::iter::from_fn(|| framer.next_frame())
            .map(|frame| {
                let body = frame.split(|b| *b == b'\n').next_back().unwrap_or_default().to_vec();
                serde_json::from_slice(&body).expect("a JSON body")
            })
            .collect()
    }

    fn frame(body: &Value) -> String {
        let body = body.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn prepared_replies_are_put_in_their_frames() {
        let list = json!({ "isIncomplete": false, "items": [{ "label": "I save \"it\"", "kind": 1 }] });
        let placeholder = super::PreparedReplies::default().prepare(&list).expect("serializable");
        let other = json!({ "jsonrpc": "2.0", "method": "window/logMessage", "params": { "message": placeholder } });
        let frames = [
            frame(&json!({ "jsonrpc": "2.0", "result": placeholder, "id": 7 })),
            frame(&other),
            frame(&json!({ "jsonrpc": "2.0", "result": { "capabilities": {} }, "id": "a" })),
        ];
        for chunk in [1, 7, 4096] {
            // Each pass gets its own, identical placeholder: a filled reply is taken.
            let replies = std::sync::Arc::new(super::PreparedReplies::default());
            assert_eq!(replies.prepare(&list).expect("serializable"), placeholder);
            let written = written(replies, &frames, chunk);
            assert_eq!(written.len(), 3, "chunk {chunk}");
            assert_eq!(written[0], json!({ "jsonrpc": "2.0", "id": 7, "result": list }), "chunk {chunk}");
            // A placeholder anywhere but a reply's whole result is left as it is.
            assert_eq!(written[1], other);
            assert_eq!(written[2]["result"], json!({ "capabilities": {} }));
        }
    }

    #[test]
    fn a_placeholder_is_filled_once_and_only_when_issued() {
        let replies = std::sync::Arc::new(super::PreparedReplies::default());
        let placeholder = replies.prepare(&json!([1, 2])).expect("serializable");
        let reply = frame(&json!({ "jsonrpc": "2.0", "result": placeholder, "id": 1 }));
        let forged = frame(&json!({ "jsonrpc": "2.0", "result": "\u{0}saffron/prepared/99", "id": 2 }));
        let written = written(replies, &[reply.clone(), reply, forged], 4096);
        assert_eq!(written[0]["result"], json!([1, 2]));
        assert_eq!(written[1]["result"], placeholder, "the text was taken by the first");
        assert_eq!(written[2]["result"], "\u{0}saffron/prepared/99");
    }

    #[test]
    fn replies_lost_on_the_way_do_not_pile_up() {
        let replies = super::PreparedReplies::default();
        for n in 0..1000 {
            replies.prepare(&n).expect("serializable");
        }
        let waiting = replies.waiting.lock().expect("lock");
        assert_eq!(waiting.len() as u64, super::MAX_WAITING);
        assert!(waiting.contains_key(&999) && !waiting.contains_key(&(999 - super::MAX_WAITING)));
    }
}
