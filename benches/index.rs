//! Index benchmark: the Sylius corpus (820 files, 17.5k steps) and the same corpus copied 5×
//! with varied wording (about 90k steps). Each size runs in a fresh child process so its peak
//! memory is its own. Run: `cargo bench -p saffron-benches --bench index`.
//!
//! `-- --completion [ROUNDS]` times only completion, in this process, where the LSP benchmark
//! asks for it (the first `When` step of an indexed Sylius feature, typed again at every length
//! up to 20 characters), so that its cost can be profiled without a server (`perf record`).
//! Add `--idle MICROS[,MICROS...]` to time lists asked after the process has slept that long
//! each time, as a server is asked between an editor's keystrokes.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

use saffron_benches::{corpus_dir, feature_files, median_ms};
use saffron_index::{Change, IndexHost};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|a| a == "--copies") {
        let copies = args.get(position + 1).and_then(|c| c.parse().ok()).unwrap_or(1);
        measure(copies);
        return ExitCode::SUCCESS;
    }
    if let Some(position) = args.iter().position(|a| a == "--completion") {
        let rounds = args.get(position + 1).and_then(|r| r.parse().ok()).unwrap_or(2000);
        let idle: Vec<u64> = match args.iter().position(|a| a == "--idle") {
            Some(at) => {
                let Some(list) = args.get(at + 1) else {
                    eprintln!("--idle needs microseconds, e.g. --idle 300,1000");
                    return ExitCode::FAILURE;
                };
                match list.split(',').map(str::parse).collect::<Result<Vec<u64>, _>>() {
                    Ok(idle) => idle,
                    Err(error) => {
                        eprintln!("--idle {list}: {error}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            None => Vec::new(),
        };
        return completion_in_place(rounds, &idle);
    }
    let Ok(me) = std::env::current_exe() else { return ExitCode::FAILURE };
    println!("index: cold build, one-file update (+ snapshot), near-duplicates of every entry, peak memory");
    for copies in [1, 5] {
        let output = Command::new(&me).args(["--copies", &copies.to_string()]).output();
        match output {
            Ok(output) if output.status.success() => print!("{}", String::from_utf8_lossy(&output.stdout)),
            Ok(output) => {
                eprintln!("{}", String::from_utf8_lossy(&output.stderr));
                return ExitCode::FAILURE;
            }
            Err(error) => {
                eprintln!("cannot run the measurement: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// Gives each copy its own wording: every word of four letters or more gets a suffix, so
/// copies share the short, frequent words (I, the, a, is) the way a larger suite would.
fn vary(text: &str, copy: usize) -> String {
    if copy == 0 {
        return text.to_string();
    }
    let suffix = char::from(b'a' + (copy as u8 % 26));
    let mut out = String::with_capacity(text.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.chars().count() >= 4 && word.chars().all(char::is_alphabetic) {
            out.push_str(word);
            out.push(suffix);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    // Keywords must stay keywords.
    out.replace(&format!("Feature{suffix}:"), "Feature:")
        .replace(&format!("Scenario{suffix}"), "Scenario")
        .replace(&format!("Background{suffix}:"), "Background:")
        .replace(&format!("Examples{suffix}:"), "Examples:")
        .replace(&format!("Outline{suffix}:"), "Outline:")
        .replace(&format!("Given{suffix} "), "Given ")
        .replace(&format!("When{suffix} "), "When ")
        .replace(&format!("Then{suffix} "), "Then ")
}

/// Completion lists (saffron-ide, no server) while a step is typed one character at a time,
/// from "I" to "I want to create a new channel": p50 and max in µs.
fn completion_times_us(snapshot: &saffron_index::Snapshot) -> (f64, f64) {
    let step = "I want to create a new channel";
    let path = std::path::Path::new("typing.feature");
    let mut times = Vec::new();
    for length in 1..=step.len() {
        let text = format!("Feature: f\n  Scenario: s\n    When {}\n", &step[..length]);
        let offset = text.len() - 1;
        for _ in 0..5 {
            let start = Instant::now();
            std::hint::black_box(saffron_ide::completions_in(snapshot, path, &text, offset));
            times.push(start.elapsed().as_secs_f64() * 1_000_000.0);
        }
    }
    (median_ms(&times), times.iter().copied().fold(0.0, f64::max))
}

/// Completion at the first `When` step of an indexed file, as the LSP benchmark asks for it:
/// the step's line holds the first 1..=20 characters of its text, in turn. Back to back, then
/// after each of the `idle` pauses (microseconds) before every list.
fn completion_in_place(rounds: usize, idle: &[u64]) -> ExitCode {
    let root = corpus_dir().join("sylius");
    let files = feature_files(&root);
    let changes: Vec<Change> = files
        .iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(path).ok()?;
            Some(Change::SetFile { path: path.strip_prefix(&root).unwrap_or(path).to_path_buf(), text })
        })
        .collect();
    let mut host = IndexHost::new();
    host.apply_all(changes);
    let snapshot = host.snapshot();
    let path = std::path::Path::new("features/admin/channel/managing_channels/adding_channel.feature");
    let Some(text) = snapshot.file(path).map(|file| file.source.text.clone()) else {
        eprintln!("{} is not in the corpus", path.display());
        return ExitCode::FAILURE;
    };
    let Some(at) = text.find("When ") else {
        eprintln!("{} has no When step", path.display());
        return ExitCode::FAILURE;
    };
    let line_start = at + "When ".len();
    let line_end = text[line_start..].find('\n').map_or(text.len(), |end| line_start + end);
    let step = &text[line_start..line_end];
    for pause in [0].iter().chain(idle) {
        let mut times = Vec::with_capacity(rounds);
        for round in 0..rounds {
            let length =
                step.char_indices().map(|(i, _)| i).chain([step.len()]).nth(1 + round % 20).unwrap_or(step.len());
            let edited = format!("{}{}{}", &text[..line_start], &step[..length], &text[line_end..]);
            let offset = line_start + length;
            if *pause > 0 {
                // What the process does between keystrokes: nothing, for that long.
                std::thread::sleep(std::time::Duration::from_micros(*pause));
            }
            let start = Instant::now();
            std::hint::black_box(saffron_ide::completions_in(&snapshot, path, &edited, offset));
            times.push(start.elapsed().as_secs_f64() * 1_000_000.0);
        }
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let p99 = sorted.get(sorted.len() * 99 / 100).copied().unwrap_or(0.0);
        let when = if *pause == 0 { "back to back".to_owned() } else { format!("each after {pause} µs idle") };
        println!("completion in place, {when} ({rounds} lists): p50 {:.0} µs, p99 {p99:.0} µs", median_ms(&times));
    }
    ExitCode::SUCCESS
}

fn peak_memory_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn measure(copies: usize) {
    let files = feature_files(&corpus_dir().join("sylius"));
    let sources: Vec<(PathBuf, String)> =
        files.iter().filter_map(|path| std::fs::read_to_string(path).ok().map(|text| (path.clone(), text))).collect();
    let mut changes = Vec::new();
    for copy in 0..copies {
        for (path, text) in &sources {
            let path = PathBuf::from(format!("copy{copy}")).join(path.strip_prefix(corpus_dir()).unwrap_or(path));
            changes.push(Change::SetFile { path, text: vary(text, copy) });
        }
    }
    let mut cold_times = Vec::new();
    let mut host = IndexHost::new();
    for _ in 0..3 {
        let start = Instant::now();
        let mut fresh = IndexHost::new();
        fresh.apply_all(changes.clone());
        cold_times.push(start.elapsed().as_secs_f64() * 1000.0);
        host = fresh;
    }
    let snapshot = host.snapshot();
    let steps: usize = snapshot.files().map(|f| f.source.parsed.document.steps().len()).sum();
    let entries = snapshot.entry_count();

    // One-file update: a step of a mid-sized file edited back and forth, then a snapshot.
    let (edit_path, edit_text) = match &changes[changes.len() / 2] {
        Change::SetFile { path, text } => (path.clone(), text.clone()),
        _ => unreachable!("only files were added"),
    };
    let edited = edit_text.replacen("Given ", "Given I really ", 1);
    let mut update_times = Vec::new();
    for round in 0..40 {
        let text = if round % 2 == 0 { edited.clone() } else { edit_text.clone() };
        let start = Instant::now();
        host.apply(Change::SetFile { path: edit_path.clone(), text });
        std::hint::black_box(host.snapshot());
        update_times.push(start.elapsed().as_secs_f64() * 1000.0);
    }

    let snapshot = host.snapshot();
    let completion_us = completion_times_us(&snapshot);

    let start = Instant::now();
    let (mut pairs, mut incomplete) = (0usize, 0usize);
    for entry in snapshot.entries() {
        let search = snapshot.near_duplicate_search(&entry.text);
        pairs += search.found.len();
        incomplete += usize::from(!search.complete);
    }
    let near_ms = start.elapsed().as_secs_f64() * 1000.0;

    println!(
        "  {copies}× corpus: {} files, {steps} steps, {entries} distinct texts\n    cold build {:.0} ms (median of 3) | one-file update + snapshot {:.2} ms median, {:.2} ms max (40 edits) | near-duplicates of all {entries} entries {:.0} ms ({:.1} µs each, {} pairs, {incomplete} searches stopped at the bound) | completion list p50 {:.0} µs, max {:.0} µs | peak memory {:.0} MB",
        copies * sources.len(),
        median_ms(&cold_times),
        median_ms(&update_times),
        update_times.iter().copied().fold(0.0, f64::max),
        near_ms,
        near_ms * 1000.0 / entries.max(1) as f64,
        pairs / 2,
        completion_us.0,
        completion_us.1,
        peak_memory_mb()
    );
}
