//! The wire: LSP frames read from the client on a thread of saffron's own, and messages
//! written back as whole frames.
//!
//! lsp-server's own stdio reader stops at the first frame it cannot read, and a frame whose
//! `Content-Length` is wrong leaves bytes in front of the next header that no reader
//! recognises. This reader finds where each message really ends and starts again at the next
//! `Content-Length:` header, so a bad frame costs one error reply (with the message's id when it
//! can be read) and the session goes on:
//!
//! - a length that is too short leaves the rest of the message before the next header: the
//!   frame runs on to that header;
//! - a length that is too long swallows the start of the next frame: a header line inside a
//!   body ends it (a raw newline is never inside a JSON string, so a well-formed body never
//!   holds one), and when the client sends nothing more for [`QUIET_GRACE`], a whole JSON value
//!   followed by silence is taken as the message;
//! - a length that is not a number (or no length) ends the frame where its JSON value ends.

use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::Sender;
use lsp_server::{ErrorCode, Message, RequestId};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde::ser::Serialize;

use crate::context::Error;

/// A body larger than this is not an editor's message; its frame is refused.
const MAX_BODY: usize = 64 << 20;

/// A header block longer than this is not one.
const MAX_HEADER: usize = 8 << 10;

/// How long the client may stay silent in the middle of a frame before the reader judges the
/// frame by what it has (see the module's documentation).
pub const QUIET_GRACE: Duration = Duration::from_millis(100);

/// What the reader hands the main loop.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A frame or a body that is no message: it is answered with this error, under the id
    /// found in it when there is one.
    Malformed {
        id: Option<RequestId>,
        error: Error,
    },
}

/// What [`Framer::next`] found.
#[derive(Debug, PartialEq)]
pub enum Framed<T> {
    /// A frame whose body `read` accepted.
    Read(T),
    /// Bytes that are no well-formed frame: why, and the bytes (the message, as far as it can
    /// be told where it ends).
    Bad { problem: String, bytes: Vec<u8> },
}

/// Splits a byte stream into LSP frames, resynchronising after a bad one.
#[derive(Default)]
pub struct Framer {
    pending: Vec<u8>,
    /// Where the search for a header line inside the current frame's body goes on (every
    /// line before it has been searched).
    searched_to: usize,
}

impl Framer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// Bytes are waiting that do not make a whole frame yet.
    pub fn has_pending(&self) -> bool {
        self.pending.iter().any(|byte| !byte.is_ascii_whitespace())
    }

    fn consume(&mut self, count: usize) -> Vec<u8> {
        self.searched_to = 0;
        self.pending.drain(..count).collect()
    }

    /// The next frame, or `None` until more bytes come. `read` gets the body a frame's
    /// `Content-Length` gives and returns `None` when it is not JSON, which means the length
    /// may be wrong. `idle`: the client has sent nothing for a while, so an unfinished frame is
    /// judged by what has come.
    pub fn next<T>(&mut self, idle: bool, read: impl FnOnce(&[u8]) -> Option<T>) -> Option<Framed<T>> {
        let blank = self.pending.iter().take_while(|byte| byte.is_ascii_whitespace()).count();
        if blank > 0 {
            self.consume(blank);
        }
        if self.pending.is_empty() {
            return None;
        }
        let (header_end, length) = match header_block(&self.pending) {
            Header::Incomplete => return None,
            Header::Garbage => {
                let end = match find_header_line(&self.pending, 1) {
                    Ok(at) => at,
                    Err(_) if idle || self.pending.len() > MAX_BODY => self.pending.len(),
                    Err(_) => return None,
                };
                let bytes = self.consume(end);
                return Some(Framed::Bad { problem: "bytes outside any frame".to_string(), bytes });
            }
            Header::Block { end, length } => (end, length),
        };
        let body = &self.pending[header_end..];
        let (extent, problem) = match length {
            Ok(length) if body.len() >= length => {
                if let Some(message) = read(&body[..length]) {
                    self.consume(header_end + length);
                    return Some(Framed::Read(message));
                }
                match find_header_line(body, 0) {
                    Ok(at) if at < length => (at, format!("Content-Length {length} runs into the next frame")),
                    Ok(at) => (at, format!("Content-Length {length} is not the length of the message")),
                    Err(_) if idle => (body.len(), format!("Content-Length {length} is not the length of the message")),
                    Err(_) => return None,
                }
            }
            Ok(length) => {
                let from = self.searched_to.saturating_sub(header_end);
                match find_header_line(body, from) {
                    Ok(at) => (at, format!("Content-Length {length} runs into the next frame")),
                    Err(searched) => {
                        self.searched_to = header_end + searched;
                        // A message still on its way waits; a whole one sent under a length
                        // that is too long does not.
                        if !idle || matches!(first_value(body), Value::Unfinished) {
                            return None;
                        }
                        (body.len(), format!("Content-Length {length} is more than the {} bytes sent", body.len()))
                    }
                }
            }
            Err(problem) => match first_value(body) {
                Value::Whole(end) => (end, problem.to_string()),
                _ => match find_header_line(body, 0) {
                    Ok(at) => (at, problem.to_string()),
                    Err(_) if idle && !matches!(first_value(body), Value::Unfinished) => {
                        (body.len(), problem.to_string())
                    }
                    Err(_) => return None,
                },
            },
        };
        let mut bytes = self.consume(header_end + extent);
        bytes.drain(..header_end);
        Some(Framed::Bad { problem, bytes })
    }
}

enum Header {
    Incomplete,
    /// Not a header line: bytes outside any frame.
    Garbage,
    /// Where the block ends (after its blank line), and the body's length or why there is none.
    Block {
        end: usize,
        length: Result<usize, BadLength>,
    },
}

/// Why a header block gives no length to read the body by.
#[derive(Debug, thiserror::Error)]
enum BadLength {
    #[error("the frame has no Content-Length")]
    Missing,
    #[error("Content-Length {0} is more than a message may be")]
    TooLong(usize),
    #[error("Content-Length {0:?} is not a number of bytes")]
    NotANumber(String),
}

/// The header block at the start of `bytes`. Lines end in CRLF or LF.
fn header_block(bytes: &[u8]) -> Header {
    let mut length = Err(BadLength::Missing);
    let mut line_start = 0;
    loop {
        let rest = &bytes[line_start..];
        let Some(newline) = rest.iter().position(|byte| *byte == b'\n') else {
            return if line_start + rest.len() <= MAX_HEADER && could_start_header_line(rest) {
                Header::Incomplete
            } else {
                Header::Garbage
            };
        };
        let line = rest[..newline].strip_suffix(b"\r").unwrap_or(&rest[..newline]);
        if line.is_empty() {
            // The first line cannot be blank: blank lines between frames were skipped.
            return Header::Block { end: line_start + newline + 1, length };
        }
        let Some((name, value)) = header_line(line) else { return Header::Garbage };
        // Bytes stuck to the front of a header (`null}Content-Length: 52`) are not part of it.
        if name.len() > "content-length".len() && name.to_ascii_lowercase().ends_with("content-length") {
            return Header::Garbage;
        }
        if name.eq_ignore_ascii_case("content-length") {
            length = match value.parse::<usize>() {
                Ok(length) if length <= MAX_BODY => Ok(length),
                Ok(length) => Err(BadLength::TooLong(length)),
                Err(_) => Err(BadLength::NotANumber(value.to_string())),
            };
        }
        line_start += newline + 1;
        if line_start > MAX_HEADER {
            return Header::Garbage;
        }
    }
}

/// `Name: value` with a token for a name.
fn header_line(line: &[u8]) -> Option<(&str, String)> {
    let colon = line.iter().position(|byte| *byte == b':')?;
    let name = std::str::from_utf8(&line[..colon]).ok()?;
    if name.is_empty() || !name.bytes().all(is_token) {
        return None;
    }
    Some((name, String::from_utf8_lossy(&line[colon + 1..]).trim().to_string()))
}

fn is_token(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// A header line still being written: a token, then maybe a colon and a value.
fn could_start_header_line(bytes: &[u8]) -> bool {
    let name = bytes.iter().take_while(|byte| is_token(**byte)).count();
    match bytes.get(name) {
        None => true,
        Some(b':') => name > 0 && !bytes[name..].contains(&b'\n'),
        Some(_) => false,
    }
}

/// Where the first whole line holding `Content-Length:` at or after `from` has that header (it
/// may follow other bytes on its line); or, when there is none, the start of the last line,
/// which is not whole yet and is searched again once more bytes come.
fn find_header_line(bytes: &[u8], from: usize) -> Result<usize, usize> {
    const NAME: &[u8] = b"content-length:";
    let mut line_start = from.min(bytes.len());
    while let Some(newline) = bytes[line_start..].iter().position(|byte| *byte == b'\n') {
        let line = &bytes[line_start..line_start + newline];
        if let Some(at) = line.windows(NAME.len()).position(|window| window.eq_ignore_ascii_case(NAME)) {
            return Ok(line_start + at);
        }
        line_start += newline + 1;
    }
    Err(line_start)
}

enum Value {
    /// A whole JSON value ends at this offset.
    Whole(usize),
    /// The start of a JSON value, not finished yet.
    Unfinished,
    NotJson,
}

fn first_value(bytes: &[u8]) -> Value {
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<IgnoredAny>();
    match values.next() {
        Some(Ok(_)) => Value::Whole(values.byte_offset()),
        Some(Err(error)) if error.is_eof() => Value::Unfinished,
        None => Value::Unfinished,
        Some(Err(_)) => Value::NotJson,
    }
}

/// A message's members as they come: read in one pass (lsp-server's `Message` is an untagged
/// enum, which buffers the whole message first and takes a request with an id it cannot read
/// for a notification, which gets no reply).
#[derive(Deserialize)]
struct Wire {
    #[serde(default)]
    jsonrpc: Option<String>,
    #[serde(default, deserialize_with = "present")]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<serde_json::Value>,
    #[serde(default)]
    error: Option<lsp_server::ResponseError>,
}

/// A member that is there, even when it is `null` (which `Option` alone reads as absent).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// An id the protocol allows: an integer or a string.
fn request_id(id: &serde_json::Value) -> Option<RequestId> {
    match id {
        serde_json::Value::Number(number) => Some(RequestId::from(i32::try_from(number.as_i64()?).ok()?)),
        serde_json::Value::String(text) => Some(RequestId::from(text.clone())),
        _ => None,
    }
}

/// A frame's body as a message; `None` when it is not JSON at all (the frame may be wrong).
pub fn read_message(body: &[u8]) -> Option<Incoming> {
    let wire = match serde_json::from_slice::<Wire>(body) {
        Ok(wire) => wire,
        // Checked only on failure: a message costs one parse.
        Err(_) if serde_json::from_slice::<IgnoredAny>(body).is_err() => return None,
        Err(error) => {
            // A string that holds a lone surrogate escape (`"\ud800"`) passes the check above,
            // which skips over strings, but is no Unicode text: the message cannot be read.
            let error = match serde_json::from_slice::<serde_json::Value>(body) {
                Ok(_) => Error::new(ErrorCode::InvalidRequest, format!("not a JSON-RPC message: {error}")),
                Err(_) => Error::new(ErrorCode::ParseError, format!("cannot read the message: {error}")),
            };
            return Some(Incoming::Malformed { id: id_in(body), error });
        }
    };
    let id = wire.id.as_ref().and_then(request_id);
    let invalid = |why: &str| {
        let error = Error::new(ErrorCode::InvalidRequest, format!("not a JSON-RPC message: {why}"));
        Some(Incoming::Malformed { id: id.clone(), error })
    };
    if wire.jsonrpc.as_deref().is_some_and(|version| version != "2.0") {
        return invalid("the version is not 2.0");
    }
    let message = match (wire.method, &wire.id, &id) {
        (Some(method), None, _) => {
            Message::Notification(lsp_server::Notification { method, params: wire.params.unwrap_or_default() })
        }
        (Some(method), Some(_), Some(id)) => {
            Message::Request(lsp_server::Request { id: id.clone(), method, params: wire.params.unwrap_or_default() })
        }
        (Some(_), Some(_), None) => return invalid("the id is neither an integer nor a string"),
        (None, _, Some(id)) => {
            let response_result = match (wire.result, wire.error) {
                (_, Some(error)) => Err(error),
                (Some(result), None) => Ok(result),
                (None, None) => return invalid("a response has a result or an error"),
            };
            Message::Response(lsp_server::Response { id: id.clone(), response_result })
        }
        (None, _, None) => return invalid("no method, and no id a response would have"),
    };
    Some(Incoming::Message(message))
}

/// A bad frame as the error to answer it with.
pub fn malformed(problem: String, bytes: &[u8]) -> Incoming {
    Incoming::Malformed { id: id_in(bytes), error: Error::new(ErrorCode::ParseError, problem) }
}

/// The id of the message that `bytes` start with, when it can be read.
fn id_in(bytes: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Envelope {
        id: Option<serde_json::Value>,
    }
    let envelope = serde_json::Deserializer::from_slice(bytes).into_iter::<Envelope>().next()?.ok()?;
    request_id(&envelope.id?)
}

/// Reads frames from `input` until it ends, handing each message to `sender`. `quiet` waits up
/// to the given time for more input and says whether any came (see [`QUIET_GRACE`]).
pub fn read_frames(mut input: impl Read, mut quiet: impl FnMut(Duration) -> bool, sender: &Sender<Incoming>) {
    let mut framer = Framer::default();
    let mut buffer = vec![0; 64 << 10];
    let send = |framed: Framed<Incoming>| {
        let incoming = match framed {
            Framed::Read(incoming) => incoming,
            Framed::Bad { problem, bytes } => malformed(problem, &bytes),
        };
        sender.send(incoming).is_ok()
    };
    loop {
        while let Some(framed) = framer.next(false, read_message) {
            if !send(framed) {
                return;
            }
        }
        if framer.has_pending() && !quiet(QUIET_GRACE) {
            while let Some(framed) = framer.next(true, read_message) {
                if !send(framed) {
                    return;
                }
            }
        }
        match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(count) => framer.push(&buffer[..count]),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            // A read error ends the session as the end of input does: nothing more can come.
            Err(_) => break,
        }
    }
    while let Some(framed) = framer.next(true, read_message) {
        if !send(framed) {
            return;
        }
    }
}

/// Standard input as a file, read directly: what the reader has taken is all there is, so
/// `quiet` can ask the descriptor whether more is coming.
#[cfg(unix)]
pub fn stdin() -> io::Result<(std::fs::File, impl FnMut(Duration) -> bool)> {
    use std::os::fd::AsFd;
    let file = std::fs::File::from(io::stdin().as_fd().try_clone_to_owned()?);
    let watched = file.try_clone()?;
    let quiet = move |timeout: Duration| {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let millis = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(watched.as_fd(), PollFlags::POLLIN)];
        // An error (or a signal) counts as input: the reader then blocks in `read`, as it
        // would without this check.
        poll(&mut fds, PollTimeout::from(millis)).map_or(true, |ready| ready > 0)
    };
    Ok((file, quiet))
}

/// Standard output as a file: a frame goes out in one write (the standard handle is line
/// buffered, which would send a frame's header apart from its body).
#[cfg(unix)]
pub fn stdout() -> io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    Ok(std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?))
}

/// The server's output, shared by the main loop and the threads that answer requests: each
/// message is serialized with serde and written as one frame.
#[derive(Clone)]
pub struct Output {
    writer: Arc<Mutex<Writer>>,
}

struct Writer {
    sink: Box<dyn Write + Send>,
    body: Vec<u8>,
    frame: Vec<u8>,
}

#[derive(serde::Serialize)]
struct Reply<'a, T> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a lsp_server::ResponseError>,
}

#[derive(serde::Serialize)]
struct Outgoing<'a, P> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    method: &'a str,
    params: &'a P,
}

impl Output {
    pub fn new(sink: impl Write + Send + 'static) -> Output {
        let writer = Writer { sink: Box::new(sink), body: Vec::new(), frame: Vec::new() };
        Output { writer: Arc::new(Mutex::new(writer)) }
    }

    /// Answers a request (`id` is `None` for a message whose id could not be read).
    pub fn respond<T: Serialize>(&self, id: Option<&RequestId>, result: Result<T, Error>) {
        let written = match &result {
            Ok(value) => self.write(&Reply { jsonrpc: "2.0", id, result: Some(value), error: None }),
            Err(error) => {
                let error = error.to_response_error();
                self.write(&Reply::<()> { jsonrpc: "2.0", id, result: None, error: Some(&error) })
            }
        };
        if let Err(error) = written {
            let error = Error::internal(format!("cannot write the reply: {error}")).to_response_error();
            let _ = self.write(&Reply::<()> { jsonrpc: "2.0", id, result: None, error: Some(&error) });
        }
    }

    pub fn notify<N: ls_types::notification::Notification>(&self, params: &N::Params) {
        let _ = self.write(&Outgoing { jsonrpc: "2.0", id: None, method: N::METHOD, params });
    }

    /// Sends a request of the server's own (its reply comes back as a message).
    pub fn request(&self, request: &lsp_server::Request) {
        let message =
            Outgoing { jsonrpc: "2.0", id: Some(&request.id), method: &request.method, params: &request.params };
        let _ = self.write(&message);
    }

    fn write(&self, message: &impl Serialize) -> serde_json::Result<()> {
        let mut writer = self.writer.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let Writer { sink, body, frame } = &mut *writer;
        body.clear();
        serde_json::to_writer(&mut *body, message)?;
        frame.clear();
        frame.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        frame.extend_from_slice(body);
        // A client that is gone cannot be told; the reader sees its input end and the loop stops.
        if sink.write_all(frame).and_then(|()| sink.flush()).is_err() {
            return Ok(());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
