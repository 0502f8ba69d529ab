//! Parse benchmark: the Sylius corpus (820 files) parsed from memory by saffron-syntax and by
//! `@cucumber/gherkin` in the same run, single-threaded on both sides; prints both rates and
//! their ratio. Run: `npm ci --prefix benches/peers && cargo bench -p saffron-benches --bench parse`.

use std::process::ExitCode;

use saffron_benches::{corpus_dir, durations_ms, feature_files, median_ms, run_node, time};
use saffron_syntax::{Project, SourceKind, parse};

const WARMUP: usize = 3;
const ITERATIONS: usize = 15;

fn main() -> ExitCode {
    let dir = corpus_dir().join("sylius");
    let files = feature_files(&dir);
    if files.is_empty() {
        eprintln!("no feature files under {}", dir.display());
        return ExitCode::FAILURE;
    }
    let sources: Vec<String> = files.iter().filter_map(|f| std::fs::read_to_string(f).ok()).collect();
    let bytes: usize = sources.iter().map(String::len).sum();

    let (times, steps) = time(WARMUP, ITERATIONS, || {
        sources.iter().map(|source| parse(source, SourceKind::Feature).document.steps().len()).sum::<usize>()
    });
    let ours = median_ms(&durations_ms(&times));

    let inputs: Vec<(std::path::PathBuf, String)> = files.iter().cloned().zip(sources.iter().cloned()).collect();
    let (project_times, _) = time(1, 5, || Project::parse_all(inputs.clone()).diagnostics().len());
    let ours_project = median_ms(&durations_ms(&project_times));

    let args: Vec<String> = [WARMUP.to_string(), ITERATIONS.to_string()]
        .into_iter()
        .chain(files.iter().map(|f| f.display().to_string()))
        .collect();
    let peer = match run_node("parse-gherkin.mjs", &args) {
        Ok(peer) => peer,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let peer_times: Vec<f64> =
        peer["timesMs"].as_array().map(|a| a.iter().filter_map(|v| v.as_f64()).collect()).unwrap_or_default();
    let theirs = median_ms(&peer_times);
    let peer_steps = peer["steps"].as_u64().unwrap_or(0) as usize;

    println!(
        "parse: {} files, {} steps, {:.1} MB (Sylius), median of {ITERATIONS} runs",
        files.len(),
        steps,
        bytes as f64 / 1e6
    );
    let rate = |ms: f64| {
        format!(
            "{:>9.0} files/s {:>7.2} M steps/s",
            files.len() as f64 / (ms / 1000.0),
            steps as f64 / (ms / 1000.0) / 1e6
        )
    };
    println!("  saffron-syntax (1 thread)      {ours:>8.2} ms {}", rate(ours));
    println!("  @cucumber/gherkin 42 (node)    {theirs:>8.2} ms {}", rate(theirs));
    println!("  ratio: saffron-syntax is {:.1}x faster than @cucumber/gherkin", theirs / ours);
    println!("  saffron project check (all cores, parse + StepSet checks) {ours_project:.2} ms");
    if peer_steps != steps {
        eprintln!("step counts differ: saffron {steps}, @cucumber/gherkin {peer_steps}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
