//! Where replay time goes, for the replay benchmark: with `SAFFRON_TIMING=1` in the environment,
//! every phase of every action (and context opening and closing, and every DevTools call by
//! method) is timed, and a table of counts, totals and medians is written to stderr when the
//! browser closes. Off, each span costs one relaxed load.
//!
//! The recorder is process-wide and an action's phases are keyed by the action that is running,
//! so the breakdown is exact with one worker (`--workers 1`, as the benchmark runs); with more,
//! phases of overlapping actions may be filed under each other's action type.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::lock;

/// The environment variable that turns timing on (any value but empty or `0`).
pub const TIMING_ENV: &str = "SAFFRON_TIMING";

fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var(TIMING_ENV).is_ok_and(|value| !value.is_empty() && value != "0"))
}

#[derive(Default)]
struct Recorder {
    /// Phase key → every duration recorded under it.
    spans: BTreeMap<String, Vec<Duration>>,
    /// The action running now, e.g. `click`; phases inside it are filed under it.
    action: Option<&'static str>,
}

fn recorder() -> &'static Mutex<Recorder> {
    static RECORDER: OnceLock<Mutex<Recorder>> = OnceLock::new();
    RECORDER.get_or_init(Mutex::default)
}

/// Set once the table is printed, so a second close prints nothing.
static PRINTED: AtomicBool = AtomicBool::new(false);

/// Starts timing `phase`; the time is recorded when the returned guard drops. Inside an action
/// the key is `action/phase`.
pub(crate) fn span(phase: &'static str) -> Span {
    Span { phase: enabled().then_some(phase), started: Instant::now(), in_action: true }
}

/// Like [`span`], but never filed under an action: for work that may run beside one (a
/// context opened ahead of need).
pub(crate) fn lone_span(phase: &'static str) -> Span {
    Span { phase: enabled().then_some(phase), started: Instant::now(), in_action: false }
}

/// Starts timing a whole action of type `action`: its own key is `action`, and spans started
/// until it drops are filed under it.
pub(crate) fn action(action: &'static str) -> ActionSpan {
    if enabled() {
        lock(recorder()).action = Some(action);
    }
    ActionSpan { inner: Span { phase: enabled().then_some(action), started: Instant::now(), in_action: false } }
}

/// A running span.
pub(crate) struct Span {
    phase: Option<&'static str>,
    started: Instant,
    in_action: bool,
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some(phase) = self.phase {
            let elapsed = self.started.elapsed();
            let mut recorder = lock(recorder());
            let key = match recorder.action {
                Some(action) if self.in_action => format!("{action}/{phase}"),
                _ => phase.to_owned(),
            };
            recorder.spans.entry(key).or_default().push(elapsed);
        }
    }
}

/// A running action span.
pub(crate) struct ActionSpan {
    inner: Span,
}

impl Drop for ActionSpan {
    fn drop(&mut self) {
        if let Some(phase) = self.inner.phase.take() {
            let elapsed = self.inner.started.elapsed();
            let mut recorder = lock(recorder());
            recorder.action = None;
            recorder.spans.entry(format!("action {phase}")).or_default().push(elapsed);
        }
    }
}

/// Records one DevTools call of `method` (filed as `cdp METHOD`, under the running action).
pub(crate) fn cdp_call(method: &'static str, elapsed: Duration) {
    if !enabled() {
        return;
    }
    let mut recorder = lock(recorder());
    let key = match recorder.action {
        Some(action) => format!("{action}/cdp {method}"),
        None => format!("cdp {method}"),
    };
    recorder.spans.entry(key).or_default().push(elapsed);
}

/// Whether DevTools calls are to be timed.
pub(crate) fn calls_timed() -> bool {
    enabled()
}

/// Writes the table to stderr, once per process.
pub(crate) fn print_summary() {
    if !enabled() || PRINTED.swap(true, Ordering::Relaxed) {
        return;
    }
    let recorder = lock(recorder());
    eprintln!("{}", summary(&recorder.spans));
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// One line per key: count, total, median and largest, in milliseconds.
fn summary(spans: &BTreeMap<String, Vec<Duration>>) -> String {
    let mut lines =
        vec![format!("{:<64} {:>6} {:>10} {:>9} {:>9}", "saffron timing", "count", "total ms", "p50 ms", "max ms")];
    for (key, durations) in spans {
        let mut sorted = durations.clone();
        sorted.sort();
        let total: Duration = sorted.iter().sum();
        let median = sorted[sorted.len() / 2];
        let largest = sorted[sorted.len() - 1];
        lines.push(format!(
            "{key:<64} {:>6} {:>10.1} {:>9.2} {:>9.2}",
            sorted.len(),
            milliseconds(total),
            milliseconds(median),
            milliseconds(largest)
        ));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_has_a_line_per_key_with_count_total_and_median() {
        let spans = BTreeMap::from([(
            "click/locate".to_owned(),
            vec![Duration::from_millis(3), Duration::from_millis(1), Duration::from_millis(2)],
        )]);
        let table = summary(&spans);
        let line = table.lines().nth(1).unwrap_or_default();
        let columns: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(columns, ["click/locate", "3", "6.0", "2.00", "3.00"]);
    }
}
