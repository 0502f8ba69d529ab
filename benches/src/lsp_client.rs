//! A minimal LSP client over a real language server process: framed JSON-RPC on stdio. The
//! end-to-end tests drive `saffron lsp` with it, and the LSP benchmark drives both `saffron lsp`
//! and `@cucumber/language-server` through the same script.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any single reply may take before the test fails (a hang is a bug, not a wait).
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A message as read off the wire: its id and whether it has a method, from a scan that builds
/// nothing else, and the body, parsed in full only when it is looked at.
struct Incoming {
    id: Option<Value>,
    has_method: bool,
    body: Vec<u8>,
    /// When its last byte was read, by the thread that reads the server's output.
    read_at: Instant,
}

#[derive(serde::Deserialize)]
struct Envelope {
    id: Option<Value>,
    method: Option<serde::de::IgnoredAny>,
}

pub struct LspClient {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Incoming>,
    /// Server-to-client notifications and requests seen so far.
    pub received: Vec<Value>,
    next_id: i64,
    pub root: PathBuf,
}

impl LspClient {
    /// Starts `command` (a language server speaking stdio) in `root`.
    pub fn spawn(mut command: Command, root: &Path) -> LspClient {
        let mut child = command
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("saffron lsp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.strip_prefix("Content-Length: ") {
                        length = value.parse::<usize>().ok();
                    }
                }
                let Some(length) = length else { return };
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let read_at = Instant::now();
                let Ok(envelope) = serde_json::from_slice::<Envelope>(&body) else { return };
                let message = Incoming { id: envelope.id, has_method: envelope.method.is_some(), body, read_at };
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        LspClient { child, stdin, messages, received: Vec::new(), next_id: 1, root: root.to_path_buf() }
    }

    /// The CPU time the server's threads have used so far (Linux: `/proc/PID/task/*/schedstat`,
    /// nanoseconds on a CPU), or `None` where that is not readable. Threads that already ended
    /// are not counted.
    pub fn server_cpu_time(&self) -> Option<Duration> {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id())).ok()?;
        let mut total = 0u64;
        for task in tasks.flatten() {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            total += stat.split_whitespace().next().and_then(|ns| ns.parse::<u64>().ok()).unwrap_or(0);
        }
        Some(Duration::from_nanos(total))
    }

    /// The server's peak resident memory so far in MB (Linux: `VmHWM` in `/proc/PID/status`),
    /// or `None` where that is not readable.
    pub fn server_peak_memory_mb(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let kilobytes = status.lines().find_map(|line| line.strip_prefix("VmHWM:"))?;
        kilobytes.trim().trim_end_matches("kB").trim().parse::<f64>().ok().map(|kb| kb / 1024.0)
    }

    pub fn send_raw(&mut self, body: &[u8]) {
        // One write: a server woken by the header alone would wait again for the body.
        self.stdin.write_all(&frame(body)).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Writes bytes as they are, framed or not: for tests of frames that are wrong.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Writes several messages in one write, as a client that sends an edit and a request at
    /// once does: the server reads them in one go.
    pub fn send_together(&mut self, messages: &[Value]) {
        let frames: Vec<u8> = messages.iter().flat_map(|message| frame(message.to_string().as_bytes())).collect();
        self.stdin.write_all(&frames).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and returns the whole response (with `result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let (body, _) = self.timed_request(method, params);
        serde_json::from_slice(&body).expect("the envelope parsed, so the body does")
    }

    /// The `result` of a request; fails the test on an error reply.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let mut response = self.request(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].take()
    }

    /// Sends a request and returns its response, unparsed, and how long it took from the
    /// request's write to the response's last byte read. The LSP benchmark times requests so:
    /// this client's hand-over between threads and its JSON parsing are not the server's time.
    pub fn timed_request(&mut self, method: &str, params: Value) -> (Vec<u8>, Duration) {
        let id = json!(self.next_id);
        self.next_id += 1;
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        let sent = Instant::now();
        self.send_raw(body.as_bytes());
        let deadline = sent + DEADLINE;
        loop {
            let incoming = self.next_incoming(deadline);
            if incoming.id.as_ref() == Some(&id) && !incoming.has_method {
                return (incoming.body, incoming.read_at.duration_since(sent));
            }
            let message = self.parse_and_answer(&incoming);
            self.received.push(message);
        }
    }

    /// The next message, failing the test if none comes before `deadline`.
    fn next_incoming(&mut self, deadline: Instant) -> Incoming {
        match self.messages.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(incoming) => incoming,
            Err(RecvTimeoutError::Timeout) => panic!("no matching message within {DEADLINE:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// Parses a message; a server request is answered as a default-configured editor would.
    fn parse_and_answer(&mut self, incoming: &Incoming) -> Value {
        let message: Value = serde_json::from_slice(&incoming.body).expect("the envelope parsed, so the body does");
        if incoming.has_method && incoming.id.is_some() {
            let result = match message["method"].as_str() {
                Some("workspace/configuration") => {
                    let items = message["params"]["items"].as_array().map_or(0, Vec::len);
                    Value::Array(vec![Value::Null; items])
                }
                _ => Value::Null,
            };
            self.send(json!({ "jsonrpc": "2.0", "id": message["id"], "result": result }));
        }
        message
    }

    /// Waits for a message the predicate accepts; answers server requests on the way.
    pub fn wait_for(&mut self, mut accept: impl FnMut(&Value) -> bool) -> Value {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let incoming = self.next_incoming(deadline);
            let message = self.parse_and_answer(&incoming);
            if accept(&message) {
                return message;
            }
            self.received.push(message);
        }
    }

    /// The next diagnostics published for `uri` that satisfy `accept`.
    pub fn diagnostics_for(&mut self, uri: &str, mut accept: impl FnMut(&[Value]) -> bool) -> Vec<Value> {
        if let Some(found) = self
            .received
            .iter()
            .rev()
            .find(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
            .and_then(|m| m["params"]["diagnostics"].as_array().cloned())
            .filter(|d| accept(d))
        {
            return found;
        }
        let message = self.wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["diagnostics"].as_array().is_some_and(|d| accept(d))
        });
        message["params"]["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    /// What VS Code declares for completion: snippets, label details, lazy `detail` and
    /// `documentation`, and list-wide item defaults.
    pub fn vscode_capabilities() -> Value {
        json!({
            "textDocument": { "completion": {
                "completionItem": {
                    "snippetSupport": true,
                    "labelDetailsSupport": true,
                    "insertReplaceSupport": true,
                    "resolveSupport": { "properties": ["documentation", "detail", "additionalTextEdits"] }
                },
                "completionList": { "itemDefaults": ["commitCharacters", "editRange", "insertTextFormat", "insertTextMode", "data"] },
                "contextSupport": true
            } },
            "workspace": { "configuration": true, "didChangeWatchedFiles": { "dynamicRegistration": true } }
        })
    }

    pub fn initialize(&mut self) -> Value {
        self.initialize_with(LspClient::vscode_capabilities())
    }

    pub fn initialize_with(&mut self, capabilities: Value) -> Value {
        let root_uri = uri(&self.root);
        let result = self.call(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root_uri,
                "workspaceFolders": [{ "uri": root_uri, "name": "project" }],
                "capabilities": capabilities
            }),
        );
        self.notify("initialized", json!({}));
        result
    }

    pub fn open(&mut self, relative: &str) -> String {
        let path = self.root.join(relative);
        let text = std::fs::read_to_string(&path).expect("read");
        self.open_text(relative, &text)
    }

    /// Opens a document with the given text (the file need not hold it).
    pub fn open_text(&mut self, relative: &str, text: &str) -> String {
        let path = self.root.join(relative);
        let uri = uri(&path);
        let language = if relative.ends_with(".saffron") { "saffron" } else { "gherkin" };
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": language, "version": 1, "text": text } }),
        );
        uri
    }

    /// Shuts down and waits for the process; returns its exit code.
    pub fn shutdown(mut self) -> Option<i32> {
        self.call("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let (sender, exited) = channel();
        let mut child = std::mem::replace(&mut self.child, Command::new("true").spawn().expect("a placeholder"));
        std::thread::spawn(move || {
            let _ = sender.send(child.wait().ok().and_then(|status| status.code()));
        });
        exited.recv_timeout(DEADLINE).expect("the server exits after shutdown and exit")
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// `body` as an LSP frame.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// `(line, character)` of the first occurrence of `needle` in `text`, plus `extra` characters.
pub fn position_of(text: &str, needle: &str, extra: usize) -> Value {
    let offset = text.find(needle).unwrap_or_else(|| panic!("{needle:?} not in the text")) + extra;
    let line = text[..offset].matches('\n').count();
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let character = text[line_start..offset].encode_utf16().count();
    json!({ "line": line, "character": character })
}
