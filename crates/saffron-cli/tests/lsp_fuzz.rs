//! Fuzzing `saffron lsp`'s input: the real binary, for a bounded time, gets random frames
//! (wrong lengths, garbage between frames), random JSON (with lone surrogate escapes), random
//! edits and random valid requests on random documents, seeded and reproducible. It must never
//! exit, never hang, and answer every request it was sent.
//!
//! `SAFFRON_LSP_FUZZ_SECONDS` sets how long (default 8), `SAFFRON_LSP_FUZZ_SEED` the seed
//! (default: from the clock; the seed is printed either way, and a failure names it). The
//! longer run is in docs/lsp.md.

use crate::support;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use support::{LspClient, example_project, start_saffron_lsp, uri};

const FILES: [&str; 4] =
    ["features/orders.saffron", "features/sign_in.feature", "features/shared.steps.saffron", "features/new.feature"];

/// Requests the fuzzer sends with valid shapes (commands, which start processes, and the
/// lifecycle requests are left out).
const METHODS: [&str; 12] = [
    "textDocument/completion",
    "textDocument/hover",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/prepareRename",
    "textDocument/rename",
    "textDocument/codeAction",
    "textDocument/codeLens",
    "textDocument/documentSymbol",
    "textDocument/foldingRange",
    "textDocument/formatting",
    "textDocument/semanticTokens/full",
];

const WORDS: [&str; 24] = [
    "Feature:",
    "Scenario:",
    "Given",
    "When",
    "Then",
    "And",
    "StepSet",
    "StepSet:",
    "Fixture:",
    "Background:",
    "Examples:",
    "|",
    "\"",
    "<param>",
    "I",
    "see",
    "the",
    "orders",
    "page",
    "😀",
    "é",
    "#",
    "@tag",
    "\"\"\"",
];

struct Fuzzer {
    rng: SmallRng,
    client: LspClient,
    uris: Vec<String>,
    versions: Vec<i64>,
    next_id: u64,
    pending: HashSet<u64>,
    /// Requests sent and answered, messages of each kind sent.
    answered: usize,
    sent: [usize; 6],
}

impl Fuzzer {
    fn position(&mut self) -> Value {
        let line =
            if self.rng.random_bool(0.1) { self.rng.random_range(0..100_000) } else { self.rng.random_range(0..40) };
        json!({ "line": line, "character": self.rng.random_range(0..60) })
    }

    fn text(&mut self, words: usize) -> String {
        let mut text = String::new();
        for _ in 0..words {
            match self.rng.random_range(0..10) {
                0 => text.push('\n'),
                1 => text.push_str("\n    "),
                2 => text.push(char::from_u32(self.rng.random_range(0x20..0x3000)).unwrap_or('x')),
                _ => text.push_str(WORDS[self.rng.random_range(0..WORDS.len())]),
            }
            text.push(' ');
        }
        text
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn valid_request(&mut self) -> (u64, String) {
        let id = self.id();
        let method = METHODS[self.rng.random_range(0..METHODS.len())];
        let uri = self.uris[self.rng.random_range(0..self.uris.len())].clone();
        let position = self.position();
        let params = match method {
            "textDocument/rename" => {
                json!({ "textDocument": { "uri": uri }, "position": position, "newName": self.text(3) })
            }
            "textDocument/references" => json!({ "textDocument": { "uri": uri }, "position": position,
                "context": { "includeDeclaration": true } }),
            "textDocument/codeAction" => json!({ "textDocument": { "uri": uri },
                "range": { "start": position, "end": self.position() }, "context": { "diagnostics": [] } }),
            "textDocument/formatting" => json!({ "textDocument": { "uri": uri },
                "options": { "tabSize": 2, "insertSpaces": true } }),
            "textDocument/codeLens"
            | "textDocument/documentSymbol"
            | "textDocument/foldingRange"
            | "textDocument/semanticTokens/full" => json!({ "textDocument": { "uri": uri } }),
            _ => json!({ "textDocument": { "uri": uri }, "position": position }),
        };
        (id, json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string())
    }

    fn edit(&mut self) -> String {
        let index = self.rng.random_range(0..self.uris.len());
        self.versions[index] += 1;
        let change = if self.rng.random_bool(0.05) {
            json!({ "text": self.text(40) })
        } else {
            json!({ "range": { "start": self.position(), "end": self.position() }, "text": self.text(4) })
        };
        json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": { "uri": self.uris[index], "version": self.versions[index] },
            "contentChanges": [change] } })
        .to_string()
    }

    fn open_or_close(&mut self) -> String {
        let index = self.rng.random_range(0..self.uris.len());
        if self.rng.random_bool(0.3) {
            return json!({ "jsonrpc": "2.0", "method": "textDocument/didClose",
                "params": { "textDocument": { "uri": self.uris[index] } } })
            .to_string();
        }
        self.versions[index] += 1;
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": {
            "uri": self.uris[index], "languageId": "gherkin", "version": self.versions[index], "text": self.text(60) } } })
        .to_string()
    }

    /// Random JSON text, with escapes a reader must survive (lone surrogates among them).
    fn json(&mut self, depth: usize) -> String {
        match self.rng.random_range(0..if depth > 3 { 4 } else { 7 }) {
            0 => "null".to_string(),
            1 => self.rng.random_range(-1e12..1e12f64).to_string(),
            2 => ["true", "false", "-0", "1e999", "123456789012345678901234567890"][self.rng.random_range(0..5)]
                .to_string(),
            3 => {
                let escapes = [r"\ud800", r"\udfff", r"\ud83d\ude00", r"\u0000", r"\n", r#"\""#, "é", "x"];
                let parts: Vec<&str> = (0..self.rng.random_range(0..6))
                    .map(|_| escapes[self.rng.random_range(0..escapes.len())])
                    .collect();
                format!("\"{}\"", parts.concat())
            }
            4 => format!(
                "[{}]",
                (0..self.rng.random_range(0..4)).map(|_| self.json(depth + 1)).collect::<Vec<_>>().join(",")
            ),
            _ => {
                let keys = ["jsonrpc", "method", "params", "textDocument", "uri", "position", "x", "contentChanges"];
                let members: Vec<String> = (0..self.rng.random_range(0..5))
                    .map(|_| {
                        let key = keys[self.rng.random_range(0..keys.len())];
                        let value = match key {
                            "method" => format!("{:?}", METHODS[self.rng.random_range(0..METHODS.len())]),
                            "jsonrpc" => "\"2.0\"".to_string(),
                            _ => self.json(depth + 1),
                        };
                        format!("\"{key}\":{value}")
                    })
                    .collect();
                format!("{{{}}}", members.join(","))
            }
        }
    }

    /// One message or more, as one write: what the server is expected to answer is noted.
    fn step(&mut self) {
        let kind = self.rng.random_range(0..100);
        let bytes = match kind {
            0..35 => {
                self.sent[0] += 1;
                let (id, body) = self.valid_request();
                self.pending.insert(id);
                frame(&body)
            }
            35..60 => {
                self.sent[1] += 1;
                frame(&self.edit())
            }
            60..68 => {
                self.sent[2] += 1;
                frame(&self.open_or_close())
            }
            68..80 => {
                self.sent[3] += 1;
                frame(&self.json(0))
            }
            80..92 => {
                // A request under a wrong length, then (mostly) a valid one right behind it;
                // alone, it is judged once the client has been quiet for a moment.
                self.sent[4] += 1;
                let (broken, body) = self.valid_request();
                self.pending.insert(broken);
                let behind = self.rng.random_bool(0.97).then(|| self.valid_request());
                let length = match self.rng.random_range(0..4) {
                    0 => self.rng.random_range(1..body.len()).to_string(),
                    1 => (body.len() + self.rng.random_range(1..200)).to_string(),
                    2 => "twelve".to_string(),
                    _ => String::new(),
                };
                let mut bytes = format!("Content-Length: {length}\r\n\r\n{body}").into_bytes();
                if let Some((next, next_body)) = behind {
                    self.pending.insert(next);
                    bytes.extend(frame(&next_body));
                }
                bytes
            }
            _ => {
                // Bytes outside any frame, then a valid request.
                self.sent[5] += 1;
                let (id, body) = self.valid_request();
                self.pending.insert(id);
                let mut bytes = self.json(0).into_bytes();
                bytes.extend(frame(&body));
                bytes
            }
        };
        self.client.send_bytes(&bytes);
    }

    /// Waits until every request sent so far is answered (the client fails the test when
    /// nothing comes for its deadline).
    fn settle(&mut self) {
        while !self.pending.is_empty() {
            let pending = &self.pending;
            let reply = self
                .client
                .wait_for(|m| m.get("method").is_none() && m["id"].as_u64().is_some_and(|id| pending.contains(&id)));
            if let Some(id) = reply["id"].as_u64() {
                self.pending.remove(&id);
                self.answered += 1;
            }
        }
        self.client.received.clear();
        assert!(self.client.is_running(), "the server exited");
    }
}

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

#[test]
fn random_input_never_ends_or_wedges_the_session() {
    let seconds: u64 = std::env::var("SAFFRON_LSP_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let seed: u64 = std::env::var("SAFFRON_LSP_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    });
    println!("fuzzing saffron lsp for {seconds} s with SAFFRON_LSP_FUZZ_SEED={seed}");
    let root = example_project(&format!("lsp-fuzz-{seed}"));
    std::fs::write(root.join("features/new.feature"), "Feature: new\n").expect("write");
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let uris: Vec<String> = FILES.iter().map(|file| uri(&root.join(file))).collect();
    let mut fuzzer = Fuzzer {
        rng: SmallRng::seed_from_u64(seed),
        versions: vec![1; uris.len()],
        uris,
        client,
        next_id: 1_000_000,
        pending: HashSet::new(),
        answered: 0,
        sent: [0; 6],
    };
    for file in &FILES[..2] {
        fuzzer.client.open(file);
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut rounds = 0;
    while Instant::now() < deadline {
        // A burst of messages, then every request in it must be answered.
        for _ in 0..fuzzer.rng.random_range(1..20) {
            fuzzer.step();
        }
        fuzzer.settle();
        rounds += 1;
    }
    let Fuzzer { client, answered, sent, .. } = fuzzer;
    println!(
        "{rounds} rounds, {answered} requests answered; sent {} requests, {} edits, {} opens or closes, \
         {} random JSON bodies, {} frames with a wrong length, {} runs of bytes outside frames",
        sent[0], sent[1], sent[2], sent[3], sent[4], sent[5]
    );
    assert_eq!(client.shutdown(), Some(0), "seed {seed}: the server still shuts down properly");
    let _ = std::fs::remove_dir_all(&root);
}
