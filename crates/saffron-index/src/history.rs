//! `.saffron/reports/history.jsonl`: one line per scenario per run, so a person can tell new
//! trouble from old. Appended by every run (`saffron_runner::history::lines_of` makes a run's lines) (the file is rewritten whole through a temporary
//! file, as every file Saffron writes, and rotated to `history.1.jsonl` past a bounded size),
//! masked like every report, and git-ignored with the reports. [`summarize`] reads it back per
//! scenario: the recent verdicts as a strip, flips, chronic trouble and the duration trend.

use std::collections::BTreeMap;
use std::path::Path;

use saffron_recording::{layout, write_atomic};
use serde::{Deserialize, Serialize};

/// The history file, relative to the project root.
pub const HISTORY: &str = ".saffron/reports/history.jsonl";
/// Where the history goes when it passes [`MAX_BYTES`]; the one before it is dropped.
pub const ROTATED: &str = ".saffron/reports/history.1.jsonl";
/// The most the history file holds before it is rotated: a few thousand runs of a large suite.
pub const MAX_BYTES: usize = 8 << 20;

/// One scenario in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryLine {
    /// When the run ended, RFC 3339.
    pub time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// `I/N` on a shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub browser: String,
    pub file: String,
    pub line: u32,
    pub name: String,
    /// `green`, `yellow`, `red` or `blocked`.
    pub verdict: String,
    #[serde(default)]
    pub flaky: bool,
    pub attempts: u32,
    pub duration_ms: u64,
    pub drift: usize,
    #[serde(default)]
    pub tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The proposal a repair filed or the run replayed, relative to the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
}

/// Appends `lines` to the project's history: the file rewritten whole through a temporary
/// file; past [`MAX_BYTES`] the old history moves to [`ROTATED`] first.
pub fn append(root: &Path, lines: &[HistoryLine]) -> std::io::Result<()> {
    let path = root.join(HISTORY);
    let store = saffron_recording::Store::open(root).map_err(std::io::Error::other)?;
    store.ensure_inside(&path).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(root.join(layout::REPORTS))?;
    let mut bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => return Err(error),
    };
    if bytes.len() > MAX_BYTES {
        std::fs::rename(&path, root.join(ROTATED))?;
        bytes.clear();
    }
    for line in lines {
        bytes.extend(serde_json::to_vec(line).map_err(std::io::Error::other)?);
        bytes.push(b'\n');
    }
    write_atomic(&path, &bytes)
}

/// The history's lines, oldest first (the rotated file's, then the current one's); a line that
/// is not one (a hand edit, a newer Saffron's) is skipped.
pub fn read(root: &Path) -> Vec<HistoryLine> {
    let mut lines = Vec::new();
    for file in [ROTATED, HISTORY] {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else { continue };
        lines.extend(text.lines().filter_map(|line| serde_json::from_str::<HistoryLine>(line).ok()));
    }
    lines.into_iter().map(HistoryLine::keyed_by_browser).collect()
}

/// The browsers a matrix run names its results after.
const MATRIX_BROWSERS: [&str; 2] = ["chromium", "firefox"];

impl HistoryLine {
    /// A line an earlier Saffron wrote for a matrix run kept the browser in the name
    /// (`Sign in [firefox]`) and said `chromium`: read as the scenario's name and its browser.
    fn keyed_by_browser(mut self) -> HistoryLine {
        for browser in MATRIX_BROWSERS {
            if let Some(name) = self.name.strip_suffix(&format!(" [{browser}]")) {
                self.name = name.to_owned();
                self.browser = browser.to_owned();
            }
        }
        self
    }
}

/// How many runs of each scenario the editor's lenses read.
pub const LENS_RUNS: usize = 10;

/// The index's change that sets the history as the project's file has it now.
pub fn change(root: &Path) -> crate::Change {
    crate::Change::SetHistory { scenarios: summarize(&read(root), LENS_RUNS) }
}

/// One scenario's recent history.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioHistory {
    pub file: String,
    pub line: u32,
    pub name: String,
    /// The browser it ran in (`chromium`, `firefox`): each browser of a matrix has its own.
    pub browser: String,
    /// The last runs' verdicts, oldest first: `green`, `flaky`, `yellow`, `red`, `blocked`.
    pub verdicts: Vec<String>,
    /// The same as one character each: `✓` green, `≈` flaky, `~` yellow, `✗` red, `!` blocked.
    pub strip: String,
    /// How many times the outcome turned from passing to failing or back, in those runs.
    pub flips: usize,
    /// Red or yellow in at least [`CHRONIC_OF`]'s share of those runs (and at least twice).
    pub chronic: bool,
    /// Passed only on a retry at least once in those runs.
    pub flaky: bool,
    /// The median duration of the older half of those runs and of the newer half, in ms.
    pub duration_before_ms: Option<u64>,
    pub duration_now_ms: Option<u64>,
}

impl ScenarioHistory {
    /// ` in firefox`, said after one of a scenario's summaries when it ran in more than one
    /// browser (`browsers`) or in another than Chromium; empty otherwise.
    pub fn in_browser(&self, browsers: usize) -> String {
        match browsers > 1 || self.browser != "chromium" {
            true => format!(" in {}", self.browser),
            false => String::new(),
        }
    }
}

/// Chronic: red or yellow in at least 3 of the last 5 runs (scaled to the runs shown).
pub const CHRONIC_OF: (usize, usize) = (3, 5);

/// Each scenario's last `runs` lines in each browser, in file, line and browser order.
pub fn summarize(lines: &[HistoryLine], runs: usize) -> Vec<ScenarioHistory> {
    let mut by_scenario: BTreeMap<(String, u32, String, String), Vec<&HistoryLine>> = BTreeMap::new();
    for line in lines {
        let key = (line.file.clone(), line.line, line.browser.clone(), line.name.clone());
        by_scenario.entry(key).or_default().push(line);
    }
    by_scenario
        .into_iter()
        .map(|((file, line, browser, name), all)| {
            let recent = &all[all.len().saturating_sub(runs.max(1))..];
            let verdicts: Vec<String> =
                recent.iter().map(|line| if line.flaky { "flaky".to_string() } else { line.verdict.clone() }).collect();
            let strip = verdicts
                .iter()
                .map(|verdict| match verdict.as_str() {
                    "green" => '✓',
                    "flaky" => '≈',
                    "yellow" => '~',
                    "red" => '✗',
                    _ => '!',
                })
                .collect();
            let passing = |line: &&HistoryLine| matches!(line.verdict.as_str(), "green");
            let flips = recent.windows(2).filter(|pair| passing(&pair[0]) != passing(&pair[1])).count();
            let troubled = recent.iter().filter(|line| matches!(line.verdict.as_str(), "red" | "yellow")).count();
            let (share, of) = CHRONIC_OF;
            let chronic = troubled >= 2 && troubled * of >= share * recent.len();
            let median = |part: &[&HistoryLine]| {
                let mut durations: Vec<u64> = part.iter().map(|line| line.duration_ms).collect();
                durations.sort_unstable();
                durations.get(durations.len() / 2).copied()
            };
            let half = recent.len() / 2;
            ScenarioHistory {
                file,
                line,
                name,
                browser,
                strip,
                flips,
                chronic,
                flaky: recent.iter().any(|line| line.flaky),
                duration_before_ms: if half > 0 { median(&recent[..half]) } else { None },
                duration_now_ms: median(&recent[half..]),
                verdicts,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(verdict: &str, duration_ms: u64, flaky: bool) -> HistoryLine {
        HistoryLine {
            time: "2026-12-05T10:00:00Z".into(),
            commit: None,
            branch: None,
            shard: None,
            browser: "chromium".into(),
            file: "features/cart.feature".into(),
            line: 3,
            name: "Add".into(),
            verdict: verdict.into(),
            flaky,
            attempts: if flaky { 2 } else { 1 },
            duration_ms,
            drift: 0,
            tokens: 0,
            cost_usd: None,
            proposal: None,
        }
    }

    #[test]
    fn flips_chronic_trouble_flakiness_and_the_duration_trend_are_read_from_the_lines() {
        let lines = vec![
            line("green", 100, false),
            line("red", 110, false),
            line("green", 100, false),
            line("red", 300, false),
            line("green", 320, true),
        ];
        let [summary] = summarize(&lines, 10).try_into().expect("one scenario");
        assert_eq!(summary.strip, "✓✗✓✗≈");
        assert_eq!(summary.flips, 4);
        assert!(!summary.chronic, "red in 2 of 5 is not chronic");
        assert!(summary.flaky);
        assert_eq!((summary.duration_before_ms, summary.duration_now_ms), (Some(110), Some(300)));
        let chronic =
            vec![line("red", 1, false), line("yellow", 1, false), line("green", 1, false), line("red", 1, false)];
        let [summary] = summarize(&chronic, 10).try_into().expect("one scenario");
        assert!(summary.chronic, "red or yellow in 3 of 4");
        let [last_two] = summarize(&chronic, 2).try_into().expect("one scenario");
        assert_eq!(last_two.strip, "✓✗");
    }

    #[test]
    fn each_browser_of_a_matrix_has_its_own_history() {
        let firefox = |verdict: &str| HistoryLine { browser: "firefox".into(), ..line(verdict, 1, false) };
        let lines = vec![line("green", 1, false), firefox("red"), line("green", 1, false), firefox("red")];
        let [chromium, firefox] = summarize(&lines, 10).try_into().expect("one scenario in two browsers");
        assert_eq!((chromium.browser.as_str(), chromium.strip.as_str()), ("chromium", "✓✓"));
        assert_eq!((firefox.browser.as_str(), firefox.strip.as_str()), ("firefox", "✗✗"));
        assert!(firefox.chronic && !chromium.chronic);
    }

    #[test]
    fn a_matrix_line_of_an_earlier_saffron_is_read_by_browser() {
        let root = tempfile::tempdir().expect("a folder");
        let earlier = HistoryLine { name: "Add [firefox]".into(), ..line("red", 1, false) };
        append(root.path(), &[line("green", 1, false), earlier]).expect("appended");
        let [chromium, firefox] = summarize(&read(root.path()), 10).try_into().expect("one scenario in two browsers");
        assert_eq!((chromium.name.as_str(), chromium.strip.as_str()), ("Add", "✓"));
        assert_eq!((firefox.name.as_str(), firefox.browser.as_str(), firefox.strip.as_str()), ("Add", "firefox", "✗"));
    }

    #[test]
    fn the_history_is_appended_whole_and_rotated_past_its_bound() {
        let root = tempfile::tempdir().expect("a folder");
        append(root.path(), &[line("green", 1, false)]).expect("appended");
        append(root.path(), &[line("red", 2, false)]).expect("appended");
        assert_eq!(read(root.path()).len(), 2);
        std::fs::write(root.path().join(HISTORY), vec![b'x'; MAX_BYTES + 1]).expect("a full history");
        append(root.path(), &[line("green", 3, false)]).expect("rotated and appended");
        assert!(root.path().join(ROTATED).is_file(), "the full history moved aside");
        let lines = read(root.path());
        assert_eq!(lines.len(), 1, "the rotated file's junk is skipped, the new line read");
    }
}
