//! The completion eval, in the style of ty's `ty_completion_eval`: hide a real step of a suite,
//! type its keyword and the first k characters of its text, and score the rank of the step the
//! author wrote in the list completion returns, by mean reciprocal rank (a miss scores 0).
//!
//! A case is drawn by a seeded generator from the steps of the files under one folder of the
//! suite; the index always holds the whole suite, minus the hidden step's text (its line keeps
//! only the keyword, as when the author had just typed it). The answer is the item that writes
//! the author's step once its tab stops are filled: its step pattern
//! ([`saffron_index::tokens::pattern_key`]) is the author's.

use std::path::{Path, PathBuf};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use saffron_index::tokens::pattern_key;
use saffron_index::{Change, IndexHost};

/// The typed lengths scored: a bare keyword, then 3, 8 and 15 characters of the text.
pub const PREFIX_LENGTHS: [usize; 4] = [0, 3, 8, 15];

/// One hidden step.
#[derive(Debug, Clone)]
pub struct Case {
    /// Relative to the suite's root.
    pub file: PathBuf,
    /// The step line's byte range in the file, without its line ending.
    pub line: std::ops::Range<usize>,
    /// The keyword with its trailing space, as written (`When `).
    pub keyword: String,
    pub text: String,
}

/// The scores at one typed length.
#[derive(Debug, Clone, Default)]
pub struct Scores {
    pub cases: usize,
    pub reciprocal_rank_sum: f64,
    pub top1: usize,
    pub top5: usize,
    pub found: usize,
    /// List slots, and those that repeat a pattern listed above them.
    pub slots: usize,
    pub repeated_slots: usize,
    /// How long each list took (`completions_in`, the index already updated).
    pub times: Vec<std::time::Duration>,
}

impl Scores {
    pub fn mrr(&self) -> f64 {
        self.reciprocal_rank_sum / self.cases.max(1) as f64
    }

    pub fn share(&self, count: usize) -> f64 {
        count as f64 / self.cases.max(1) as f64
    }

    pub fn repeated_share(&self) -> f64 {
        self.repeated_slots as f64 / self.slots.max(1) as f64
    }

    /// The `p`th percentile of the list times, in milliseconds.
    pub fn time_percentile_ms(&self, p: f64) -> f64 {
        let mut times = self.times.clone();
        times.sort_unstable();
        let at = ((times.len() as f64 - 1.0) * p).round() as usize;
        times.get(at).map_or(0.0, |time| time.as_secs_f64() * 1e3)
    }
}

/// `count` steps drawn (without replacement, by `seed`) from the files under `folder` of the
/// indexed suite. StepSet invocations are not steps to complete.
pub fn draw_cases(host: &IndexHost, folder: &Path, count: usize, seed: u64) -> Vec<Case> {
    let snapshot = host.snapshot();
    let mut all = Vec::new();
    for file in snapshot.files() {
        if !file.source.path.starts_with(folder) {
            continue;
        }
        let text = &file.source.text;
        for step in file.source.parsed.document.steps() {
            if step.is_invocation || step.text.is_empty() {
                continue;
            }
            let start = text[..step.keyword_span.start].rfind('\n').map_or(0, |at| at + 1);
            let end = text[step.keyword_span.start..].find('\n').map_or(text.len(), |at| step.keyword_span.start + at);
            let end = if text[..end].ends_with('\r') { end - 1 } else { end };
            all.push(Case {
                file: file.source.path.clone(),
                line: start..end,
                keyword: step.keyword.clone(),
                text: step.text.clone(),
            });
        }
    }
    // Files come in the index's order (by path), steps in file order: the draw is reproducible.
    let mut rng = SmallRng::seed_from_u64(seed);
    // A partial Fisher–Yates shuffle (rand's `choose_multiple` needs its `alloc` feature).
    let count = count.min(all.len());
    for at in 0..count {
        let pick = rng.random_range(at..all.len());
        all.swap(at, pick);
    }
    all.truncate(count);
    let mut cases = all;
    // A shuffle's order says nothing; keep files together so each is re-indexed once per case.
    cases.sort_by(|a, b| (&a.file, a.line.start).cmp(&(&b.file, b.line.start)));
    cases
}

/// Runs every case at every typed length of [`PREFIX_LENGTHS`]. `host` holds the suite and is
/// left as it was found.
pub fn evaluate(host: &mut IndexHost, cases: &[Case]) -> Vec<Scores> {
    let mut scores = vec![Scores::default(); PREFIX_LENGTHS.len()];
    for case in cases {
        let snapshot = host.snapshot();
        let Some(file) = snapshot.file(&case.file) else { continue };
        let original = file.source.text.clone();
        let indent = &original[case.line.clone()]
            [..original[case.line.clone()].len() - original[case.line.clone()].trim_start().len()];
        let hidden =
            format!("{}{}{}{}", &original[..case.line.start], indent, case.keyword, &original[case.line.end..]);
        host.apply(Change::SetFile { path: case.file.clone(), text: hidden.clone() });
        let snapshot = host.snapshot();
        let wanted = pattern_key(&case.text);
        for (at, &length) in PREFIX_LENGTHS.iter().enumerate() {
            let typed: String = case.text.chars().take(length).collect();
            let line_start = case.line.start;
            let keyword_end = line_start + indent.len() + case.keyword.len();
            let editor = format!("{}{}{}", &hidden[..keyword_end], typed, &hidden[keyword_end..]);
            let offset = keyword_end + typed.len();
            let started = std::time::Instant::now();
            let (items, _) = saffron_ide::completions_in(&snapshot, &case.file, &editor, offset);
            scores[at].times.push(started.elapsed());
            let patterns: Vec<String> = items.iter().map(|item| pattern_key(&item.label)).collect();
            let score = &mut scores[at];
            score.cases += 1;
            score.slots += patterns.len();
            let mut seen = std::collections::HashSet::new();
            score.repeated_slots += patterns.iter().filter(|pattern| !seen.insert(pattern.as_str())).count();
            if let Some(rank) = patterns.iter().position(|pattern| *pattern == wanted) {
                score.found += 1;
                score.reciprocal_rank_sum += 1.0 / (rank + 1) as f64;
                score.top1 += usize::from(rank == 0);
                score.top5 += usize::from(rank < 5);
            }
        }
        host.apply(Change::SetFile { path: case.file.clone(), text: original });
    }
    scores
}

/// The scores as a Markdown table, one row per typed length and a mean row.
pub fn table(title: &str, scores: &[Scores]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "{title}");
    let _ =
        writeln!(out, "| typed | cases | MRR | top-1 | top-5 | in list | slots repeating a pattern | list p50 / p99 |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for (length, score) in PREFIX_LENGTHS.iter().zip(scores) {
        let _ = writeln!(
            out,
            "| k={length} | {} | {:.3} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.3} / {:.3} ms |",
            score.cases,
            score.mrr(),
            100.0 * score.share(score.top1),
            100.0 * score.share(score.top5),
            100.0 * score.share(score.found),
            100.0 * score.repeated_share(),
            score.time_percentile_ms(0.5),
            score.time_percentile_ms(0.99),
        );
    }
    let _ = writeln!(out, "| mean | | {:.3} | | | | | |", mean_mrr(scores));
    out
}

/// MRR averaged over the typed lengths.
pub fn mean_mrr(scores: &[Scores]) -> f64 {
    scores.iter().map(Scores::mrr).sum::<f64>() / scores.len().max(1) as f64
}

/// The suite and its index, loaded from `root`.
pub fn load(root: &Path) -> IndexHost {
    IndexHost::load(root).0
}
