//! LSP benchmark: `saffron lsp` and `@cucumber/language-server` driven through the same client
//! script over the Sylius corpus, in one run. For each server: the time from `initialize` to
//! the first complete completion list (one that offers the step written at the cursor), then
//! 200 completions, each after an edit of the step being typed, with p50 and p99 latency.
//! Run: `npm ci --prefix benches/peers && cargo build --release -p saffron-cli && cargo bench -p saffron-benches --bench lsp`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use saffron_benches::lsp_client::{LspClient, uri};
use saffron_benches::{corpus_dir, median_ms, peers_dir};
use serde_json::{Value, json};

const EDITS: usize = 200;
const FILE: &str = "features/admin/channel/managing_channels/adding_channel.feature";

struct Figures {
    first_complete_ms: f64,
    p50_ms: f64,
    p99_ms: f64,
    items: usize,
}

fn percentile(times: &[f64], p: f64) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn labels(response: &Value) -> Vec<String> {
    let items = match response {
        Value::Array(items) => items.clone(),
        Value::Object(list) => list.get("items").and_then(Value::as_array).cloned().unwrap_or_default(),
        _ => Vec::new(),
    };
    items.iter().filter_map(|i| i["label"].as_str().map(String::from)).collect()
}

fn drive(command: Command, root: &Path) -> Figures {
    let text = std::fs::read_to_string(root.join(FILE)).expect("the corpus file");
    let (line, step) = text
        .lines()
        .enumerate()
        .find_map(|(n, l)| l.trim_start().strip_prefix("When ").map(|s| (n, s.to_string())))
        .expect("a When step");
    let indent = text.lines().nth(line).map_or(0, |l| l.len() - l.trim_start().len());
    let text_column = indent + "When ".len();

    let start = Instant::now();
    let mut client = LspClient::spawn(command, root);
    client.initialize();
    let uri = client.open(FILE);
    // Poll until the server's index is built and the list is complete: a timed retry loop, as
    // an editor's user would retrigger completion.
    let first_complete_ms = loop {
        let response = client.call(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": text_column + 2 } }),
        );
        if labels(&response).contains(&step) {
            break start.elapsed().as_secs_f64() * 1000.0;
        }
        assert!(start.elapsed().as_secs() < 60, "no complete list within 60 s");
    };

    let mut times = Vec::with_capacity(EDITS);
    let mut items = 0;
    for edit in 0..EDITS {
        // Type the step again, a different length each time: "I", "I w", "I wa", ...
        let typed: String = step.chars().take(1 + edit % step.chars().count().min(20)).collect();
        let line_length = text.lines().nth(line).map_or(0, |l| l.encode_utf16().count());
        client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": edit + 2 },
                "contentChanges": [{
                    "range": { "start": { "line": line, "character": text_column }, "end": { "line": line, "character": line_length.max(text_column) } },
                    "text": typed
                }]
            }),
        );
        // Keep the document text the server has in step with the next edit's range.
        client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": edit + 100_000 },
                "contentChanges": [{
                    "range": { "start": { "line": line, "character": text_column }, "end": { "line": line, "character": text_column + typed.encode_utf16().count() } },
                    "text": step
                }]
            }),
        );
        let character = text_column + typed.encode_utf16().count();
        let sent = Instant::now();
        let response = client.call(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }),
        );
        times.push(sent.elapsed().as_secs_f64() * 1000.0);
        items += labels(&response).len();
    }
    let _ = client.shutdown();
    Figures { first_complete_ms, p50_ms: median_ms(&times), p99_ms: percentile(&times, 0.99), items: items / EDITS }
}

fn main() -> ExitCode {
    let root: PathBuf = corpus_dir().join("sylius");
    let saffron = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/saffron");
    if !saffron.is_file() {
        eprintln!("build the release binary first: cargo build --release -p saffron-cli");
        return ExitCode::FAILURE;
    }
    let peers = match peers_dir() {
        Ok(peers) => peers,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let mut saffron_command = Command::new(&saffron);
    saffron_command.arg("lsp");
    let mut cucumber_command = Command::new("node");
    cucumber_command
        .arg(peers.join("node_modules/@cucumber/language-server/bin/cucumber-language-server.cjs"))
        .arg("--stdio");

    let ours = drive(saffron_command, &root);
    let theirs = drive(cucumber_command, &root);
    println!("lsp: Sylius corpus ({}), completion at a step of {}", uri(&root), FILE);
    println!("  {:<28} {:>14} {:>10} {:>10} {:>12}", "server", "first complete", "p50", "p99", "items/list");
    for (name, f) in [("saffron lsp", &ours), ("@cucumber/language-server", &theirs)] {
        println!(
            "  {:<28} {:>11.0} ms {:>7.2} ms {:>7.2} ms {:>12}",
            name, f.first_complete_ms, f.p50_ms, f.p99_ms, f.items
        );
    }
    println!(
        "  ratio (cucumber / saffron): first complete list {:.1}x, p50 {:.1}x, p99 {:.1}x",
        theirs.first_complete_ms / ours.first_complete_ms,
        theirs.p50_ms / ours.p50_ms,
        theirs.p99_ms / ours.p99_ms
    );
    ExitCode::SUCCESS
}
