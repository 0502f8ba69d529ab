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

pub struct LspClient {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
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
                let Ok(message) = serde_json::from_slice::<Value>(&body) else { return };
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        LspClient { child, stdin, messages, received: Vec::new(), next_id: 1, root: root.to_path_buf() }
    }

    pub fn send_raw(&mut self, body: &[u8]) {
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        self.stdin.write_all(header.as_bytes()).expect("write header");
        self.stdin.write_all(body).expect("write body");
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
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.wait_for(|message| message.get("id") == Some(&json!(id)) && message.get("method").is_none())
    }

    /// The `result` of a request; fails the test on an error reply.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let mut response = self.request(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].take()
    }

    /// Waits for a message the predicate accepts; answers server requests on the way.
    pub fn wait_for(&mut self, mut accept: impl FnMut(&Value) -> bool) -> Value {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) => {
                    if message.get("method").is_some() && message.get("id").is_some() {
                        // A server request: answer it as a default-configured editor would.
                        let result = match message["method"].as_str() {
                            Some("workspace/configuration") => {
                                let items = message["params"]["items"].as_array().map_or(0, Vec::len);
                                Value::Array(vec![Value::Null; items])
                            }
                            _ => Value::Null,
                        };
                        self.send(json!({ "jsonrpc": "2.0", "id": message["id"], "result": result }));
                    }
                    if accept(&message) {
                        return message;
                    }
                    self.received.push(message);
                }
                Err(RecvTimeoutError::Timeout) => panic!("no matching message within {DEADLINE:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
            }
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
