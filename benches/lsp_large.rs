//! Large-file benchmark: `saffron lsp` with one generated 5 MB feature file open (the scenarios of
//! the Sylius corpus, one after the other, until the file is 5 MB: about 90k lines), in the
//! Sylius workspace. It times:
//!
//! - the first `publishDiagnostics` of that file after `didOpen`;
//! - keystrokes in its middle: a step typed character by character on a new line after the
//!   middle line, each keystroke a `didChange` (one character) and a completion at the cursor,
//!   timed from the `didChange`'s write to the completion's last byte read (p50, p99, max).
//!   Two rounds: keystrokes back to back, and at typing speed (a pause of 60 ms after each, long
//!   enough for the server's diagnostics to run between keystrokes);
//! - after the typing, the time until the diagnostics of the last version arrive, and a
//!   semantic tokens delta and a hover in the edited region.
//!
//! Then, in this process, what the work a keystroke may cause costs on the same text (copying
//! the text, a line index of it, a parse, an index update, diagnostics, semantic tokens).
//!
//! Run: `cargo build --release -p saffron-cli && cargo bench -p saffron-benches --bench lsp_large`
//! (`-- --saffron PATH` drives another build; `-- --before PATH` drives that build too, in the
//! same run, and prints both side by side).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use saffron_benches::lsp_client::{LspClient, uri};
use saffron_benches::{corpus_dir, feature_files, median_ms};
use serde_json::{Value, json};

const TARGET_BYTES: usize = 5_000_000;
/// The document's path in the workspace; it is not on disk, only open in the editor.
const FILE: &str = "features/generated/everything.feature";
/// What is typed, one character per keystroke: a step of the corpus.
const TYPED: &str = "I want to browse products from the \"Clothes\" taxon";
const TYPING_PAUSE: Duration = Duration::from_millis(60);

/// The scenarios of every Sylius feature file (from each file's first `Scenario` line to its
/// end), repeated under one `Feature:` until the text is `TARGET_BYTES` long.
fn generate(sylius: &Path) -> String {
    let mut scenarios = Vec::new();
    for path in feature_files(&sylius.join("features")) {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        let first = lines.iter().position(|line| {
            let line = line.trim_start();
            line.starts_with("Scenario") || line.starts_with("Example:")
        });
        let Some(first) = first else { continue };
        let body: Vec<&str> =
            lines[first..].iter().filter(|line| !line.trim_start().starts_with("Rule:")).copied().collect();
        scenarios.push(body.join("\n"));
    }
    assert!(!scenarios.is_empty(), "no scenarios under {} (set SAFFRON_CORPUS)", sylius.display());
    let mut text = String::from("Feature: Everything the shop does\n\n");
    'fill: loop {
        for scenario in &scenarios {
            text.push_str("  ");
            text.push_str(scenario.trim_start());
            text.push_str("\n\n");
            if text.len() >= TARGET_BYTES {
                break 'fill;
            }
        }
    }
    text
}

fn percentile(times: &[f64], p: f64) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn max(times: &[f64]) -> f64 {
    times.iter().copied().fold(0.0, f64::max)
}

struct Typing {
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

impl Typing {
    fn of(times: &[f64]) -> Typing {
        Typing { p50_ms: median_ms(times), p99_ms: percentile(times, 0.99), max_ms: max(times) }
    }
}

struct Figures {
    first_diagnostics_ms: f64,
    first_diagnostics_count: usize,
    back_to_back: Typing,
    typing_speed: Typing,
    last_diagnostics_ms: f64,
    semantic_tokens_ms: f64,
    hover_ms: f64,
    peak_memory_mb: Option<f64>,
}

fn edit(uri: &str, version: usize, line: usize, character: usize, text: &str) -> Value {
    json!({
        "textDocument": { "uri": uri, "version": version },
        "contentChanges": [{
            "range": { "start": { "line": line, "character": character }, "end": { "line": line, "character": character } },
            "text": text
        }]
    })
}

fn drive(saffron: &Path, root: &Path, text: &str) -> Figures {
    let mut command = Command::new(saffron);
    command.arg("lsp");
    let mut client = LspClient::spawn(command, root);
    client.initialize();
    // `initialize` indexes the workspace before it answers.
    client.received.clear();

    let started = Instant::now();
    let uri = client.open_text(FILE, text);
    let diagnostics = client.diagnostics_for(&uri, |_| true);
    let first_diagnostics_ms = started.elapsed().as_secs_f64() * 1000.0;
    let first_diagnostics_count = diagnostics.len();

    // A new step line after the middle line, typed a character at a time.
    let lines: Vec<&str> = text.lines().collect();
    let mut middle = lines.len() / 2;
    while !lines[middle].trim_start().starts_with("And ") {
        middle += 1;
    }
    let mut version = 1;
    let mut type_step = |client: &mut LspClient, line: usize, pause: Option<Duration>| -> Vec<f64> {
        let indent = lines[middle].len() - lines[middle].trim_start().len();
        version += 1;
        let line_end = lines[middle].encode_utf16().count();
        client.notify(
            "textDocument/didChange",
            edit(&uri, version, line - 1, line_end, &format!("\n{:indent$}And ", "")),
        );
        let mut column = indent + "And ".len();
        let mut times = Vec::new();
        for character in TYPED.chars() {
            version += 1;
            let before = Instant::now();
            client.notify("textDocument/didChange", edit(&uri, version, line, column, &character.to_string()));
            column += character.len_utf16();
            let gap = before.elapsed();
            let params = json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": column } });
            let (response, took) = client.timed_request("textDocument/completion", params);
            times.push((gap + took).as_secs_f64() * 1000.0);
            let response: Value = serde_json::from_slice(&response).expect("a JSON response");
            assert!(response.get("error").is_none(), "completion failed: {response}");
            if let Some(pause) = pause {
                std::thread::sleep(pause);
            }
        }
        times
    };
    let mut back_to_back = Vec::new();
    let mut typing_speed = Vec::new();
    // Each round types the step on a new line; lines shift by one per round.
    for round in 0..4 {
        let line = middle + 1 + round;
        if round % 2 == 0 {
            back_to_back.extend(type_step(&mut client, line, None));
        } else {
            typing_speed.extend(type_step(&mut client, line, Some(TYPING_PAUSE)));
        }
    }
    let last_version = version;
    let typed_at = Instant::now();
    // The client waits 30 s at most for a message; a server whose stale diagnostics runs pile
    // up on its pool takes longer: up to four such waits.
    for attempt in 1..=4 {
        let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            client.wait_for(|message| {
                message["method"] == "textDocument/publishDiagnostics"
                    && message["params"]["uri"] == uri
                    && message["params"]["version"] == last_version
            })
        }));
        if waited.is_ok() {
            break;
        }
        assert!(attempt < 4, "no diagnostics of the last version within 2 minutes");
    }
    let last_diagnostics_ms = typed_at.elapsed().as_secs_f64() * 1000.0;

    let tokens = client.call("textDocument/semanticTokens/full", json!({ "textDocument": { "uri": uri } }));
    let result_id = tokens["resultId"].clone();
    version += 1;
    client.notify("textDocument/didChange", edit(&uri, version, middle + 1, 0, "  "));
    let params = json!({ "textDocument": { "uri": uri }, "previousResultId": result_id });
    let (_, semantic_tokens) = client.timed_request("textDocument/semanticTokens/full/delta", params);
    let params = json!({ "textDocument": { "uri": uri }, "position": { "line": middle + 1, "character": 14 } });
    let (_, hover) = client.timed_request("textDocument/hover", params);
    let peak_memory_mb = client.server_peak_memory_mb();
    let _ = client.shutdown();
    Figures {
        first_diagnostics_ms,
        first_diagnostics_count,
        back_to_back: Typing::of(&back_to_back),
        typing_speed: Typing::of(&typing_speed),
        last_diagnostics_ms,
        semantic_tokens_ms: semantic_tokens.as_secs_f64() * 1000.0,
        hover_ms: hover.as_secs_f64() * 1000.0,
        peak_memory_mb,
    }
}

/// What each kind of work costs on the whole text, in this process (median of 5).
fn breakdown(root: &Path, text: &str) {
    let ms = |work: &mut dyn FnMut()| {
        let (times, ()) = saffron_benches::time(1, 5, work);
        median_ms(&saffron_benches::durations_ms(&times))
    };
    let (changes, _) = saffron_index::load_project(root);
    let mut host = saffron_index::IndexHost::new();
    host.apply_all(changes);
    let path = PathBuf::from(FILE);
    let set = |text: &str| saffron_index::Change::SetFile { path: path.clone(), text: text.to_string() };
    host.apply(set(text));
    let copy = ms(&mut || drop(std::hint::black_box(text.to_string())));
    let line_starts =
        ms(&mut || drop(std::hint::black_box(text.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>())));
    let parse =
        ms(&mut || drop(std::hint::black_box(saffron_syntax::SourceFile::parse(path.clone(), text.to_string()))));
    let index = ms(&mut || host.apply(set(text)));
    let snapshot = host.snapshot();
    let diagnostics = ms(&mut || drop(std::hint::black_box(saffron_ide::diagnostics(&snapshot, &path))));
    let distinct: std::collections::BTreeSet<String> = snapshot
        .file(&path)
        .map(|file| file.source.parsed.document.steps().iter().map(|step| step.text.clone()).collect())
        .unwrap_or_default();
    let near = ms(&mut || {
        for text in &distinct {
            std::hint::black_box(snapshot.near_duplicates(text));
        }
    });
    let scenarios = ms(&mut || drop(std::hint::black_box(snapshot.scenarios_in(&path))));
    let tree = ms(&mut || drop(std::hint::black_box(saffron_ide::SyntaxTree::parse(text))));
    let parsed = saffron_ide::SyntaxTree::parse(text).expect("a tree");
    let tokens = ms(&mut || drop(std::hint::black_box(parsed.semantic_tokens(text))));
    println!("  in this process, on the whole text (median of 5):");
    let rows: [(&str, f64); 9] = [
        ("copy the text", copy),
        ("find its line starts", line_starts),
        ("parse it (saffron-syntax)", parse),
        ("index it (SetFile: parse and update)", index),
        ("diagnostics of it", diagnostics),
        (&format!("  near-duplicates of its {} distinct texts", distinct.len()), near),
        ("  its scenarios' recording states", scenarios),
        ("tree-sitter parse", tree),
        ("semantic tokens from the tree", tokens),
    ];
    for (what, took) in rows {
        println!("    {what:<40} {took:>9.2} ms");
    }
}

fn main() -> ExitCode {
    let root = corpus_dir().join("sylius");
    let args: Vec<String> = std::env::args().collect();
    let path_after =
        |flag: &str| args.iter().position(|arg| arg == flag).and_then(|at| args.get(at + 1)).map(PathBuf::from);
    let saffron = path_after("--saffron")
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/saffron"));
    let before = path_after("--before");
    for binary in std::iter::once(&saffron).chain(before.as_ref()) {
        if !binary.is_file() {
            eprintln!(
                "{} is not a file: build the release binary first (cargo build --release -p saffron-cli)",
                binary.display()
            );
            return ExitCode::FAILURE;
        }
    }
    let text = generate(&root);
    println!(
        "lsp_large: {} ({:.1} MB, {} lines) open in {}",
        FILE,
        text.len() as f64 / 1e6,
        text.lines().count(),
        uri(&root)
    );
    breakdown(&root, &text);
    if args.iter().any(|arg| arg == "--breakdown-only") {
        return ExitCode::SUCCESS;
    }
    let builds: Vec<(&str, &Path)> =
        std::iter::once(("this build", saffron.as_path())).chain(before.as_deref().map(|b| ("before", b))).collect();
    // A build that misses the client's 30 s deadline somewhere is reported as such.
    let figures: Vec<Option<Figures>> = builds
        .iter()
        .map(|(_, binary)| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drive(binary, &root, &text))).ok())
        .collect();
    let header: String = builds.iter().map(|(name, _)| format!("{name:>22}")).collect();
    println!("    {:<48}{header}", "");
    let row = |what: &str, value: &dyn Fn(&Figures) -> String| {
        let cells: String =
            figures.iter().map(|f| format!("{:>22}", f.as_ref().map_or("(timed out)".to_string(), value))).collect();
        println!("    {what:<48}{cells}");
    };
    let ms = |value: f64| format!("{value:.2} ms");
    row("first publishDiagnostics after didOpen", &|f| ms(f.first_diagnostics_ms));
    row("  diagnostics in it", &|f| f.first_diagnostics_count.to_string());
    for (name, pick) in [
        ("keystrokes back to back", (|f: &Figures| &f.back_to_back) as fn(&Figures) -> &Typing),
        ("keystrokes at typing speed (60 ms pauses)", |f: &Figures| &f.typing_speed),
    ] {
        row(&format!("{name}: p50"), &|f| ms(pick(f).p50_ms));
        row(&format!("{name}: p99"), &|f| ms(pick(f).p99_ms));
        row(&format!("{name}: max"), &|f| ms(pick(f).max_ms));
    }
    row("last keystroke to its diagnostics", &|f| ms(f.last_diagnostics_ms));
    row("edit, then semantic tokens delta", &|f| ms(f.semantic_tokens_ms));
    row("then hover", &|f| ms(f.hover_ms));
    row("peak memory", &|f| f.peak_memory_mb.map_or("n/a".to_string(), |mb| format!("{mb:.0} MB")));
    println!("  ({} keystrokes per row, each a didChange and a completion)", 2 * TYPED.chars().count());
    ExitCode::SUCCESS
}
