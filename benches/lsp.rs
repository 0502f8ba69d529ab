//! LSP benchmark: `saffron lsp` and `@cucumber/language-server` driven through the same client
//! script over the Sylius corpus, in one run. For each server: the time from `initialize` to
//! the first complete completion list (one that offers the step written at the cursor; the
//! median of three starts), then
//! two rounds of 200 completions, each after an edit of the step line (typed at the end of the
//! line; then with the cursor inside the whole step), with p50 and p99 latency from the request
//! written to its response read (the client's JSON parsing is not counted). A third round sends
//! the second round's edits, each followed by a request for a method neither server has: what
//! the protocol's round trip costs with nothing to work out.
//! Run: `npm ci --prefix benches/peers && cargo build --release -p saffron-cli && cargo bench -p saffron-benches --bench lsp`
//! (add `-- --saffron-only` to leave the peer out, `-- --saffron PATH` to drive another build).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use saffron_benches::lsp_client::{LspClient, uri};
use saffron_benches::{corpus_dir, median_ms, peers_dir};
use serde_json::{Value, json};

const EDITS: usize = 200;
const STARTS: usize = 3;
const FILE: &str = "features/admin/channel/managing_channels/adding_channel.feature";

struct Latency {
    p50_ms: f64,
    p99_ms: f64,
    items: usize,
    /// The server's CPU time per round (edit and completion), all its threads (Linux only).
    cpu_ms: Option<f64>,
}

struct Figures {
    first_complete_ms: f64,
    /// The server's peak memory when its first complete list came (the index built), MB.
    peak_memory_mb: Option<f64>,
    /// A step typed at the end of its line, as when writing a new one.
    typing: Latency,
    /// The cursor inside an existing step, its rest still on the line.
    editing: Latency,
    /// The same edits, each followed by a request for a method no server has: the round trip
    /// of the protocol with nothing to work out, the least a completion can cost.
    floor: Latency,
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

/// The step line being worked on, and what the server has on it now.
struct StepLine {
    uri: String,
    line: usize,
    text_column: usize,
    length: usize,
    version: usize,
}

impl StepLine {
    /// Replaces the text after the keyword with `text`.
    fn set(&mut self, client: &mut LspClient, text: &str) {
        self.version += 1;
        client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": self.uri, "version": self.version },
                "contentChanges": [{
                    "range": {
                        "start": { "line": self.line, "character": self.text_column },
                        "end": { "line": self.line, "character": self.length }
                    },
                    "text": text
                }]
            }),
        );
        self.length = self.text_column + text.encode_utf16().count();
    }
}

/// A method neither server has: answered with an error (-32601) and nothing else.
const FLOOR_METHOD: &str = "saffronBenchmark/nothing";

/// `EDITS` rounds of: edit the line (`edit` gives the text and the cursor's column), then time
/// a request at the cursor (a completion, or [`FLOOR_METHOD`]) from the request's send to its
/// response's arrival.
fn time_requests(
    client: &mut LspClient,
    step_line: &mut StepLine,
    method: &str,
    mut edit: impl FnMut(&mut LspClient, &mut StepLine, usize) -> usize,
) -> Latency {
    let mut times = Vec::with_capacity(EDITS);
    let mut items = 0;
    let cpu_before = client.server_cpu_time();
    for round in 0..EDITS {
        let character = edit(client, step_line, round);
        let params = json!({ "textDocument": { "uri": step_line.uri }, "position": { "line": step_line.line, "character": character } });
        let (response, took) = client.timed_request(method, params);
        times.push(took.as_secs_f64() * 1000.0);
        let response: Value = serde_json::from_slice(&response).expect("a JSON response");
        if method == FLOOR_METHOD {
            let code = response["error"]["code"].as_i64();
            assert_eq!(
                code,
                Some(-32601),
                "{FLOOR_METHOD} is answered as a method the server does not have: {response}"
            );
            continue;
        }
        assert!(response.get("error").is_none(), "completion failed: {response}");
        items += labels(&response["result"]).len();
    }
    let cpu_ms = cpu_before
        .zip(client.server_cpu_time())
        .map(|(before, after)| after.saturating_sub(before).as_secs_f64() * 1000.0 / EDITS as f64);
    Latency { p50_ms: median_ms(&times), p99_ms: percentile(&times, 0.99), items: items / EDITS, cpu_ms }
}

fn drive(command: impl Fn() -> Command, root: &Path) -> Figures {
    let text = std::fs::read_to_string(root.join(FILE)).expect("the corpus file");
    let (line, step) = text
        .lines()
        .enumerate()
        .find_map(|(n, l)| l.trim_start().strip_prefix("When ").map(|s| (n, s.to_string())))
        .expect("a When step");
    let indent = text.lines().nth(line).map_or(0, |l| l.len() - l.trim_start().len());
    let text_column = indent + "When ".len();

    // The server is started `STARTS` times, one after the other, and the median time to its
    // first complete list is kept: one start alone swings by half on this machine (caches, the
    // host's scheduling). The last session goes on to the completion rounds.
    let start_session = || {
        let start = Instant::now();
        let mut client = LspClient::spawn(command(), root);
        client.initialize();
        let uri = client.open(FILE);
        // Poll until the server's index is built and the list is complete: a timed retry loop,
        // as an editor's user would retrigger completion.
        loop {
            let response = client.call(
                "textDocument/completion",
                json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": text_column + 2 } }),
            );
            if labels(&response).contains(&step) {
                return (start.elapsed().as_secs_f64() * 1000.0, client, uri);
            }
            assert!(start.elapsed().as_secs() < 60, "no complete list within 60 s");
        }
    };
    let mut starts = Vec::with_capacity(STARTS);
    for _ in 1..STARTS {
        let (took, client, _) = start_session();
        starts.push(took);
        let _ = client.shutdown();
    }
    let (took, mut client, uri) = start_session();
    starts.push(took);
    let first_complete_ms = median_ms(&starts);
    let peak_memory_mb = client.server_peak_memory_mb();

    let length = text.lines().nth(line).map_or(0, |l| l.encode_utf16().count());
    let mut step_line = StepLine { uri, line, text_column, length, version: 1 };
    // The step typed again, a different length each round: "I", "I ", "I w", ...
    let typed = |round: usize| -> String { step.chars().take(1 + round % step.chars().count().min(20)).collect() };
    let typing = time_requests(&mut client, &mut step_line, "textDocument/completion", |client, step_line, round| {
        step_line.set(client, &typed(round));
        step_line.length
    });
    let inside = |client: &mut LspClient, step_line: &mut StepLine, round: usize| {
        let typed = typed(round);
        step_line.set(client, &step);
        step_line.text_column + typed.encode_utf16().count()
    };
    let editing = time_requests(&mut client, &mut step_line, "textDocument/completion", inside);
    let floor = time_requests(&mut client, &mut step_line, FLOOR_METHOD, inside);
    let _ = client.shutdown();
    Figures { first_complete_ms, peak_memory_mb, typing, editing, floor }
}

fn main() -> ExitCode {
    let root: PathBuf = corpus_dir().join("sylius");
    let args: Vec<String> = std::env::args().collect();
    // `-- --saffron PATH`: another build (e.g. an older commit's, built into its own folder).
    let saffron = match args.iter().position(|arg| arg == "--saffron") {
        Some(at) => match args.get(at + 1) {
            Some(path) => PathBuf::from(path),
            None => {
                eprintln!("--saffron needs a path");
                return ExitCode::FAILURE;
            }
        },
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/saffron"),
    };
    if !saffron.is_file() {
        eprintln!("build the release binary first: cargo build --release -p saffron-cli");
        return ExitCode::FAILURE;
    }
    // `-- --saffron-only`: our side alone, to compare two builds of saffron quickly.
    let saffron_only = args.iter().any(|arg| arg == "--saffron-only");
    let peers = match peers_dir() {
        Ok(peers) => peers,
        Err(_) if saffron_only => PathBuf::new(),
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let saffron_command = || {
        let mut command = Command::new(&saffron);
        command.arg("lsp");
        command
    };
    let cucumber_command = || {
        let mut command = Command::new("node");
        command
            .arg(peers.join("node_modules/@cucumber/language-server/bin/cucumber-language-server.cjs"))
            .arg("--stdio");
        command
    };

    let ours = drive(saffron_command, &root);
    let theirs = (!saffron_only).then(|| drive(cucumber_command, &root));
    println!("lsp: Sylius corpus ({}), completion at a step of {}", uri(&root), FILE);
    match &theirs {
        Some(theirs) => println!(
            "  first complete list: saffron lsp {:.0} ms, @cucumber/language-server {:.0} ms, ratio {:.1}x",
            ours.first_complete_ms,
            theirs.first_complete_ms,
            theirs.first_complete_ms / ours.first_complete_ms
        ),
        None => println!("  first complete list: saffron lsp {:.0} ms", ours.first_complete_ms),
    }
    let memory = |figures: &Figures| figures.peak_memory_mb.map_or("n/a".to_string(), |mb| format!("{mb:.0} MB"));
    match &theirs {
        Some(theirs) => println!(
            "  peak memory at the first complete list: saffron lsp {}, @cucumber/language-server {}",
            memory(&ours),
            memory(theirs)
        ),
        None => println!("  peak memory at the first complete list: saffron lsp {}", memory(&ours)),
    }
    let cpu = |latency: &Latency| latency.cpu_ms.map_or("n/a".to_string(), |ms| format!("{ms:.2} ms"));
    for (scenario, ours_latency, theirs_latency) in [
        ("a completion, typing a step at the end of its line", &ours.typing, theirs.as_ref().map(|t| &t.typing)),
        ("a completion, cursor inside an existing step", &ours.editing, theirs.as_ref().map(|t| &t.editing)),
        ("no completion: the same edits, then a method no server has", &ours.floor, theirs.as_ref().map(|t| &t.floor)),
    ] {
        println!("  {EDITS} rounds of an edit and a request, {scenario}:");
        println!("    {:<28} {:>10} {:>10} {:>16} {:>12}", "server", "p50", "p99", "CPU per round", "items/list");
        let rows = std::iter::once(("saffron lsp", ours_latency))
            .chain(theirs_latency.map(|latency| ("@cucumber/language-server", latency)));
        for (name, latency) in rows {
            println!(
                "    {:<28} {:>7.2} ms {:>7.2} ms {:>16} {:>12}",
                name,
                latency.p50_ms,
                latency.p99_ms,
                cpu(latency),
                latency.items
            );
        }
        if let Some(theirs_latency) = theirs_latency {
            println!(
                "    ratio (cucumber / saffron): p50 {:.1}x, p99 {:.1}x",
                theirs_latency.p50_ms / ours_latency.p50_ms,
                theirs_latency.p99_ms / ours_latency.p99_ms
            );
        }
    }
    ExitCode::SUCCESS
}
