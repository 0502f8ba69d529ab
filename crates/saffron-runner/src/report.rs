//! Reports of a run, written atomically under `.saffron/reports/`: `latest.json` (what other
//! tools read), `report.md`, `junit.xml` (for CI) and a single-file `report.html` with the
//! failure screenshots inline. Screenshots are also kept under `.saffron/artifacts/<run>/`, one
//! folder per run, so runs at once in one project never overwrite each other's pictures; the
//! reports of the run that finishes last win, each file replaced whole.
//!
//! Every report passes through the run's [`Masker`] on its way to disk: whatever a page or a
//! message quoted, in whatever escaping the format gave it, no secret value is written.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use saffron_recording::{Masker, layout, write_atomic};
use serde::{Deserialize, Serialize};

mod agent;
mod artifacts;
pub use artifacts::RunFolder;
pub mod history;
mod html;

pub use agent::AgentTotals;
pub use html::html;

use crate::hooks::HookRun;
use crate::{ScenarioResult, Verdict};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub base_url: String,
    pub duration_ms: u64,
    #[serde(flatten)]
    pub counts: VerdictCounts,
    pub scenarios: Vec<ScenarioResult>,
    /// Every setup and teardown command: what it was, how it ended, how long it took.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookRun>,
    /// What the recording agent used over the run, when it recorded anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentTotals>,
    /// The shard the run was (`--shard I/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardOf>,
    /// Set when the report came from a CI run through `saffron import`: which run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<ImportedRun>,
    /// Each scenario's recent verdicts as a strip (`✓✗✓`, this run last), by `file:line`, from
    /// the run history.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub history: std::collections::BTreeMap<String, String>,
}

/// `--shard I/N`: shard `index` (from 1) of `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardOf {
    pub index: usize,
    pub total: usize,
}

/// The CI run an imported report came from, as its bundles' manifests say. The link is built
/// from the CI's own environment, never from a page or a model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedRun {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The shards the imported bundles held, when the run was sharded (a partial set when CI
    /// exported only the shards that failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard_total: Option<usize>,
}

impl ImportedRun {
    /// `imported from CI run 9001 (attempt 2) on fix-cart at 1a2b3c4d5e6f, shards 1, 3 of 4`.
    pub fn describe(&self) -> String {
        let mut text = match &self.run_id {
            Some(id) => format!("imported from CI run {id}"),
            None => "imported from a bundle".to_string(),
        };
        if let Some(attempt) = &self.attempt {
            text.push_str(&format!(" (attempt {attempt})"));
        }
        if let Some(branch) = &self.branch {
            text.push_str(&format!(" on {branch}"));
        }
        if let Some(commit) = &self.commit {
            text.push_str(&format!(" at {}", commit.chars().take(12).collect::<String>()));
        }
        if let Some(total) = self.shard_total {
            let shards: Vec<String> = self.shards.iter().map(usize::to_string).collect();
            text.push_str(&format!(", shard(s) {} of {total}", shards.join(", ")));
        }
        text
    }

    /// The run's page, when it is a web address (a link a report may render).
    pub fn web_link(&self) -> Option<&str> {
        self.link.as_deref().filter(|link| link.starts_with("https://") || link.starts_with("http://"))
    }
}

impl RunReport {
    pub fn new(base_url: &str, duration_ms: u64, scenarios: Vec<ScenarioResult>) -> RunReport {
        RunReport {
            base_url: base_url.to_string(),
            duration_ms,
            counts: VerdictCounts::of(&scenarios),
            agent: AgentTotals::of(&scenarios),
            scenarios,
            hooks: Vec::new(),
            shard: None,
            imported: None,
            history: std::collections::BTreeMap::new(),
        }
    }

    /// The report with the run's setup and teardown commands.
    pub fn with_hooks(mut self, hooks: Vec<HookRun>) -> RunReport {
        self.hooks = hooks;
        self
    }
}

/// How many scenarios of a run got each verdict: counted here, and worded by its `Display`
/// (`3 green, 1 yellow, 0 red, 0 blocked`) wherever a run is summed up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerdictCounts {
    pub green: usize,
    pub yellow: usize,
    pub red: usize,
    pub blocked: usize,
    /// Of the green and yellow ones, those that passed only on a retry (`--retries`); written
    /// only when there are some.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flaky: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl VerdictCounts {
    pub fn of(scenarios: &[ScenarioResult]) -> VerdictCounts {
        let count = |f: fn(&Verdict) -> bool| scenarios.iter().filter(|s| f(&s.verdict)).count();
        VerdictCounts {
            green: count(|v| matches!(v, Verdict::Green)),
            yellow: count(|v| matches!(v, Verdict::Yellow { .. })),
            red: count(|v| matches!(v, Verdict::Red { .. })),
            blocked: count(|v| matches!(v, Verdict::Blocked { .. })),
            flaky: scenarios.iter().filter(|s| s.flaky).count(),
        }
    }

    /// The exit status of a run with these verdicts: 2 when anything was blocked, 1 when
    /// anything failed (yellow too when `strict`), else 0.
    pub fn exit_status(&self, strict: bool) -> u8 {
        if self.blocked > 0 {
            2
        } else if self.red > 0 || (strict && self.yellow > 0) {
            1
        } else {
            0
        }
    }
}

impl fmt::Display for VerdictCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} green, {} yellow, {} red, {} blocked", self.green, self.yellow, self.red, self.blocked)
    }
}

/// Why shard reports could not be merged into one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    #[error("there is no report to merge")]
    Nothing,
    #[error("{file}:{line} \"{name}\" is in two of the reports (shards never overlap: was one report given twice?)")]
    Overlap { file: String, line: u32, name: String },
}

/// One report of several shards' (`--shard i/n` on several machines): every scenario once, in
/// file and line order; the time is the longest shard's, as the shards ran side by side.
pub fn merge_reports(reports: Vec<RunReport>) -> Result<RunReport, MergeError> {
    if reports.is_empty() {
        return Err(MergeError::Nothing);
    }
    let mut base_urls: Vec<String> = Vec::new();
    for report in &reports {
        if !base_urls.contains(&report.base_url) {
            base_urls.push(report.base_url.clone());
        }
    }
    let duration_ms = reports.iter().map(|report| report.duration_ms).max().unwrap_or_default();
    let hooks: Vec<HookRun> = reports.iter().flat_map(|report| report.hooks.iter().cloned()).collect();
    let mut scenarios: Vec<ScenarioResult> = reports.into_iter().flat_map(|report| report.scenarios).collect();
    scenarios.sort_by(|a, b| (&a.file, a.line, &a.name).cmp(&(&b.file, b.line, &b.name)));
    if let Some(pair) = scenarios
        .windows(2)
        .find(|pair| (&pair[0].file, pair[0].line, &pair[0].name) == (&pair[1].file, pair[1].line, &pair[1].name))
    {
        return Err(MergeError::Overlap { file: pair[0].file.clone(), line: pair[0].line, name: pair[0].name.clone() });
    }
    Ok(RunReport::new(&base_urls.join(", "), duration_ms, scenarios).with_hooks(hooks))
}

fn failure_text(result: &ScenarioResult) -> Option<String> {
    match &result.verdict {
        Verdict::Green => None,
        Verdict::Yellow { proposal } => Some(format!("passed with the pending proposal {proposal}: review it")),
        Verdict::Red { step: Some(step), step_text: Some(text), message } => {
            Some(format!("step {step} \"{text}\": {message}"))
        }
        Verdict::Red { message, .. } => Some(message.clone()),
        Verdict::Blocked { cause } => Some(format!("blocked: {cause}")),
    }
}

/// The run as JUnit XML: one test suite per feature file, one test case per scenario; a red
/// scenario is a failure, a blocked one an error, a yellow one a pass with a note.
pub fn junit(report: &RunReport) -> String {
    let mut junit = Report::new("saffron");
    junit.set_time(Duration::from_millis(report.duration_ms));
    let mut files: Vec<&str> = report.scenarios.iter().map(|s| s.file.as_str()).collect();
    files.dedup();
    for file in files {
        let mut suite = TestSuite::new(file);
        for case in report.scenarios.iter().filter(|s| s.file == file) {
            let mut notes: Vec<String> = Vec::new();
            let status = match (&case.verdict, failure_text(case)) {
                (Verdict::Red { .. }, Some(text)) => failed(NonSuccessKind::Failure, text),
                (Verdict::Blocked { .. }, Some(text)) => failed(NonSuccessKind::Error, text),
                // A pass: CI counts it, and the note tells a reader a proposal waits for review.
                (Verdict::Yellow { .. }, Some(text)) => {
                    notes.push(text);
                    TestCaseStatus::success()
                }
                _ => TestCaseStatus::success(),
            };
            let mut status = status;
            // A pass after failed attempts: each failed attempt as a <flakyFailure>, as the
            // JUnit dialect Maven and Playwright write for flaky tests.
            for attempt in &case.retried {
                let mut rerun = quick_junit::TestRerun::new(NonSuccessKind::Failure);
                rerun.set_message(attempt.as_str()).set_description(attempt.as_str());
                status.add_rerun(rerun);
            }
            let mut test_case = TestCase::new(format!("{} (line {})", case.name, case.line), status);
            test_case.set_classname(file).set_time(Duration::from_millis(case.duration_ms));
            notes.extend(case.cleared.iter().cloned());
            if let Some(run) = &case.agent {
                test_case.add_properties(agent_properties(run));
                notes.extend(run.lines());
            }
            if !notes.is_empty() {
                test_case.set_system_out(notes.join("\n"));
            }
            suite.add_test_case(test_case);
        }
        junit.add_test_suite(suite);
    }
    // Serialising into memory fails only on a writer error, which a `Vec` never gives.
    junit.to_string().unwrap_or_default()
}

/// A failure or an error whose message is also its text, as CI servers show one or the other.
fn failed(kind: NonSuccessKind, text: String) -> TestCaseStatus {
    let mut status = TestCaseStatus::non_success(kind);
    status.set_message(text.as_str()).set_description(text);
    status
}

/// The agent's figures as JUnit properties, which CI servers list per test.
fn agent_properties(run: &crate::AgentRun) -> Vec<Property> {
    let usage = &run.usage;
    let mut properties = vec![
        ("saffron.agent", run.agent.clone()),
        ("saffron.agent.inputTokens", usage.input_tokens.to_string()),
        ("saffron.agent.outputTokens", usage.output_tokens.to_string()),
        ("saffron.agent.cacheReadTokens", usage.cache_read_tokens.to_string()),
        ("saffron.agent.cacheWriteTokens", usage.cache_write_tokens.to_string()),
        ("saffron.agent.calls", usage.calls.to_string()),
        ("saffron.agent.modelTimeMs", usage.model_time_ms.to_string()),
        ("saffron.agent.cost", run.cost().to_string()),
        ("saffron.agent.seededSteps", format!("{} of {}", run.seeded_steps, run.steps)),
        ("saffron.agent.sessions", run.sessions.to_string()),
        ("saffron.agent.fragileTargets", run.fragile_targets.len().to_string()),
    ];
    if let Some(saved) = &run.saved {
        properties.push(("saffron.agent.saved", saved.clone()));
    }
    properties.into_iter().map(|(name, value)| Property::new(name, value)).collect()
}

/// `0`, `3`, or why there is no exit code (`stopped after 5 s...`).
fn hook_outcome(hook: &HookRun) -> String {
    match (hook.exit_code, &hook.error) {
        (Some(code), _) => code.to_string(),
        (None, Some(error)) => error.clone(),
        (None, None) => "no exit code".to_string(),
    }
}

fn badge(result: &ScenarioResult) -> String {
    let badge = format!("{} {}", result.verdict.symbol(), result.verdict.name());
    if result.flaky { format!("{badge} (flaky)") } else { badge }
}

pub fn markdown(report: &RunReport) -> String {
    let mut out = String::from("# Saffron run\n\n");
    if let Some(imported) = &report.imported {
        match imported.web_link() {
            Some(link) => out.push_str(&format!("{}: <{link}>\n\n", imported.describe())),
            None => out.push_str(&format!("{}\n\n", imported.describe())),
        }
    }
    out += &format!(
        "{} scenario(s) against `{}` in {:.1} s: **{} green**, **{} yellow**, **{} red**, **{} blocked**.\n\n",
        report.scenarios.len(),
        report.base_url,
        report.duration_ms as f64 / 1000.0,
        report.counts.green,
        report.counts.yellow,
        report.counts.red,
        report.counts.blocked
    );
    out.push_str("| verdict | scenario | where | time |\n| --- | --- | --- | --- |\n");
    for s in &report.scenarios {
        out.push_str(&format!(
            "| {} | {} | `{}:{}` | {} ms |\n",
            badge(s),
            s.name.replace('|', "\\|"),
            s.file,
            s.line,
            s.duration_ms
        ));
    }
    if let Some(totals) = &report.agent {
        out.push_str(&format!("\n## Agent\n\n{}.\n\n", totals.summary()));
        out.push_str(
            "| scenario | agent | tokens in | cached | out | calls | model time | cost | seeded | sessions |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        );
        for (s, run) in report.scenarios.iter().filter_map(|s| s.agent.as_ref().map(|run| (s, run))) {
            let usage = &run.usage;
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {:.1} s | {} | {} of {} | {} |\n",
                s.name.replace('|', "\\|"),
                run.agent.replace('|', "\\|"),
                usage.input_tokens,
                usage.cache_read_tokens + usage.cache_write_tokens,
                usage.output_tokens,
                usage.calls,
                usage.model_time_ms as f64 / 1000.0,
                run.cost(),
                run.seeded_steps,
                run.steps,
                run.sessions
            ));
        }
    }
    if !report.hooks.is_empty() {
        out.push_str("\n## Hooks\n\n| phase | command | exit | time |\n| --- | --- | --- | --- |\n");
        for hook in &report.hooks {
            out.push_str(&format!(
                "| {} | `{}` | {} | {} ms |\n",
                hook.phase.name(),
                hook.command.replace('|', "\\|").replace('`', "'"),
                hook_outcome(hook).replace('|', "\\|"),
                hook.duration_ms
            ));
        }
    }
    for s in report.scenarios.iter().filter(|s| {
        !s.is_green() || !s.drift.is_empty() || !s.cleared.is_empty() || s.agent.is_some() || !s.retried.is_empty()
    }) {
        out.push_str(&format!("\n## {} `{}:{}`\n\n", s.name, s.file, s.line));
        if let Some(text) = failure_text(s) {
            out.push_str(&format!("```text\n{text}\n```\n"));
        }
        for cleared in &s.cleared {
            out.push_str(&format!("- {cleared}\n"));
        }
        for attempt in &s.retried {
            out.push_str(&format!("- retried: {attempt}\n"));
        }
        for drift in &s.drift {
            out.push_str(&format!("- drift: {drift}\n"));
        }
        if let Some(file) = &s.screenshot_file {
            out.push_str(&format!("- screenshot: `{file}`\n"));
        }
        if !s.traces.is_empty() {
            out.push_str(&format!("- trace: `saffron trace {}:{}` ({})\n", s.file, s.line, s.traces.join(", ")));
        }
        if let Some(transcript) = &s.transcript {
            out.push_str(&format!("- transcript: `{transcript}`\n"));
        }
        for line in s.agent.iter().flat_map(crate::AgentRun::lines) {
            out.push_str(&format!("- {line}\n"));
        }
    }
    out
}

/// Writes the viewer page of the scenario's traces beside them, for the HTML report to link;
/// its path. A trace that cannot be read leaves the scenario without a page (`saffron trace`
/// says why).
fn trace_viewer(folder: &RunFolder, s: &ScenarioResult) -> Option<String> {
    let traces: Vec<crate::trace::Trace> = s
        .traces
        .iter()
        .map(|file| std::fs::read(folder.root().join(file)).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()))
        .collect::<Option<_>>()?;
    if traces.is_empty() {
        return None;
    }
    let name = screenshot_name(s).replace(".png", ".html");
    folder.write(&format!("traces/{name}"), crate::trace::viewer_html(&traces).as_bytes()).ok()
}

/// A failure screenshot's file name: the scenario's, so a person finds it without the report
/// (`new-order--create-an-order-for-customer-23.png`; the line tells an Outline's rows apart).
fn screenshot_name(result: &ScenarioResult) -> String {
    let feature = saffron_recording::feature_slug(&result.file);
    let scenario = saffron_recording::scenario_slugs(&[result.name.as_str()]).pop().unwrap_or_default();
    format!("{feature}--{scenario}-{}.png", result.line)
}

const INLINE_IMAGE: &[u8] = b"data:image/png;base64,";

/// `bytes` masked, except inline images' base64 (a short secret may occur in it by chance,
/// and replacing it would break the picture, not hide anything).
fn mask_outside_images(bytes: &[u8], masker: &Masker) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = rest.windows(INLINE_IMAGE.len()).position(|window| window == INLINE_IMAGE) {
        let data_start = at + INLINE_IMAGE.len();
        let data_end =
            rest[data_start..].iter().position(|&byte| byte == b'"').map_or(rest.len(), |end| data_start + end);
        out.extend(masker.mask_bytes(&rest[..data_start]));
        out.extend(&rest[data_start..data_end]);
        rest = &rest[data_end..];
    }
    out.extend(masker.mask_bytes(rest));
    out
}

/// Writes the four reports (and failure screenshots) under the project root, every text
/// masked by `masker`; returns the paths.
pub fn write_reports(root: &Path, report: &RunReport, masker: &Masker) -> std::io::Result<Vec<PathBuf>> {
    write_reports_in(&RunFolder::new(root), report, masker)
}

/// [`write_reports`], the screenshots into `folder` (where the run's traces are already), which
/// is released once the reports are written.
pub fn write_reports_in(folder: &RunFolder, report: &RunReport, masker: &Masker) -> std::io::Result<Vec<PathBuf>> {
    let root = folder.root();
    let reports = root.join(layout::REPORTS);
    let mut report = report.clone();
    // A folder linked out of `.saffron/` is neither written nor cleared.
    let store = saffron_recording::Store::open(root).map_err(std::io::Error::other)?;
    store.ensure_inside(&reports.join(layout::LATEST_REPORT_FILE)).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(&reports)?;
    for s in report.scenarios.iter_mut() {
        if let Some(png) = &s.screenshot {
            s.screenshot_file = Some(folder.write(&screenshot_name(s), png)?);
        }
        s.trace_viewer = trace_viewer(folder, s);
    }
    folder.clear_earlier_runs();
    let written = write_report_files(&reports, &report, masker)?;
    folder.release();
    Ok(written)
}

/// Writes the four reports of `report` into `reports` (the screenshots are where the report
/// says, already); returns the paths.
fn write_report_files(reports: &Path, report: &RunReport, masker: &Masker) -> std::io::Result<Vec<PathBuf>> {
    let json = serde_json::to_vec_pretty(report).map_err(std::io::Error::other)?;
    let files = [
        (layout::LATEST_REPORT_FILE, json),
        ("report.md", markdown(report).into_bytes()),
        ("junit.xml", junit(report).into_bytes()),
        ("report.html", html(report).into_bytes()),
    ];
    let mut written = Vec::new();
    for (name, bytes) in files {
        let path = reports.join(name);
        write_atomic(&path, &mask_outside_images(&bytes, masker))?;
        written.push(path);
    }
    Ok(written)
}

/// Writes the reports of a run imported from CI, whose screenshots `saffron import` filed
/// where the report names them: the report's text as it came (masked by the run that made it),
/// and `report.html` showing the pictures from their files rather than inline, so an import
/// never holds a run's pictures in memory.
pub fn write_imported_reports(root: &Path, report: &RunReport) -> std::io::Result<Vec<PathBuf>> {
    let reports = root.join(layout::REPORTS);
    let store = saffron_recording::Store::open(root).map_err(std::io::Error::other)?;
    store.ensure_inside(&reports.join(layout::LATEST_REPORT_FILE)).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(&reports)?;
    write_report_files(&reports, report, &Masker::default())
}

#[cfg(test)]
mod tests {
    use saffron_recording::{StepKind, Tier};

    use super::*;
    use crate::{ActionResult, StepOutcome, StepResult};

    fn sample_steps() -> Vec<StepResult> {
        let action = |action: &str, passed, locator: Option<&str>| ActionResult {
            action: action.into(),
            passed,
            tier: locator.map(|_| Tier::Css),
            locator: locator.map(str::to_owned),
            duration_ms: 40,
            drift: Vec::new(),
            notes: Vec::new(),
            attempts: 1,
            waited: Vec::new(),
            matched: None,
        };
        vec![
            StepResult {
                kind: StepKind::Context,
                text: "I am on the shop".into(),
                outcome: StepOutcome::Passed,
                duration_ms: 300,
                actions: vec![action("goto \"/shop\"", true, None)],
                cleared: Vec::new(),
                restored: false,
            },
            StepResult {
                kind: StepKind::Action,
                text: "I pay".into(),
                outcome: StepOutcome::Failed,
                duration_ms: 5100,
                actions: vec![action("click button \"Pay\"", false, Some("css \"#pay\""))],
                cleared: Vec::new(),
                restored: false,
            },
            StepResult {
                kind: StepKind::Outcome,
                text: "I see the receipt".into(),
                outcome: StepOutcome::Skipped,
                duration_ms: 0,
                actions: Vec::new(),
                cleared: Vec::new(),
                restored: false,
            },
        ]
    }

    fn sample() -> RunReport {
        let result = |name: &str, verdict| ScenarioResult {
            drift: vec!["step 1 `click button \"Go\"`: found by css".into()],
            duration_ms: 1200,
            steps: sample_steps(),
            screenshot: Some(vec![137, 80, 78, 71]),
            url: Some("http://127.0.0.1/x?a=<1>".into()),
            console_errors: vec!["uncaught exception: TypeError: <x> is undefined".into()],
            ..ScenarioResult::new("features/a & b.feature", 3, name, verdict)
        };
        RunReport::new(
            "http://127.0.0.1:1",
            3000,
            vec![
                result("Pay <card>", Verdict::Green),
                result(
                    "Refund",
                    Verdict::Red {
                        step: Some(2),
                        step_text: Some("I see \"€1\"".into()),
                        message: "expected <1> & found 2".into(),
                    },
                ),
                result("Export", Verdict::Blocked { cause: "no browser".into() }),
                result("Import", Verdict::Yellow { proposal: ".saffron/proposals/a/import.json".into() }),
            ],
        )
    }

    #[test]
    fn the_counts_keep_their_place_in_latest_json_and_are_worded_once() {
        let report = sample();
        let json = serde_json::to_string_pretty(&report).expect("json");
        let keys: Vec<&str> = json
            .lines()
            .filter(|line| line.starts_with("  \"") && !line.starts_with("   "))
            .filter_map(|line| line.trim().split('"').nth(1))
            .collect();
        assert_eq!(keys, ["baseUrl", "durationMs", "green", "yellow", "red", "blocked", "scenarios"]);
        let read: RunReport = serde_json::from_str(&json).expect("reads back");
        assert_eq!(read.counts, VerdictCounts { green: 1, yellow: 1, red: 1, blocked: 1, flaky: 0 });
        assert_eq!(read.counts.to_string(), "1 green, 1 yellow, 1 red, 1 blocked");
        assert_eq!(read.counts.exit_status(false), 2, "blocked wins");
        let passed = VerdictCounts { green: 2, yellow: 1, ..VerdictCounts::default() };
        assert_eq!((passed.exit_status(false), passed.exit_status(true)), (0, 1), "yellow fails only when strict");
        assert_eq!(VerdictCounts { red: 1, ..passed }.exit_status(false), 1);
    }

    #[test]
    fn junit_is_well_formed_xml_with_failures_and_errors() {
        let xml = junit(&sample());
        let mut reader = quick_xml::Reader::from_str(&xml);
        let (mut failures, mut errors, mut cases) = (0, 0, 0);
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)) => {
                    match e.name().as_ref() {
                        b"testcase" => cases += 1,
                        b"failure" => failures += 1,
                        b"error" => errors += 1,
                        _ => {}
                    }
                }
                Ok(_) => {}
                Err(error) => panic!("invalid XML: {error}\n{xml}"),
            }
        }
        assert_eq!((cases, failures, errors), (4, 1, 1));
        assert!(xml.contains("<system-out>passed with the pending proposal .saffron/proposals/a/import.json"));
        assert!(xml.contains("failures=\"1\" errors=\"1\""));
    }

    #[test]
    fn markdown_and_html_name_every_scenario() {
        let report = sample();
        let md = markdown(&report);
        assert!(md.contains("**1 green**, **1 yellow**, **1 red**, **1 blocked**"));
        assert!(md.contains("| ~ yellow | Import |"), "{md}");
        assert!(md.contains("step 2 \"I see \"€1\"\": expected <1> & found 2"), "{md}");
        let page = html(&report);
        assert!(page.contains("Pay &lt;card&gt;") && page.contains("data:image/png;base64,iVBORw"));
        assert!(!page.contains("<1>"), "page text is escaped");
        // Each scenario's steps, the locator and tier that found each action's element, timings.
        assert!(
            page.contains("<span class=\"kw\">When</span> I pay</span> <span class=\"time\">5.1 s</span>"),
            "{page}"
        );
        assert!(
            page.contains("<code>click button &quot;Pay&quot;</code> found by <code>css &quot;#pay&quot;</code> (css)")
        );
        assert!(
            page.contains(
                "<span class=\"kw\">Then</span> I see the receipt</span> <span class=\"time\">not run</span>"
            )
        );
        // What the page logged before the failure, escaped.
        assert!(page.contains("<li><code>uncaught exception: TypeError: &lt;x&gt; is undefined</code></li>"), "{page}");
        // A filter per verdict, with its count.
        for filter in ["all (4)", "✓ green (1)", "~ yellow (1)", "✗ red (1)", "! blocked (1)"] {
            assert!(page.contains(&format!(">{filter}</button>")), "{filter}");
        }
    }

    #[test]
    fn a_run_clears_earlier_runs_pictures_but_not_a_running_ones_and_reports_are_masked() {
        let project = tempfile::tempdir().expect("temp dir");
        let mut report = sample();
        report.scenarios[1].verdict =
            Verdict::Red { step: Some(1), step_text: None, message: "found \"hunter22\" in /q?hunter22".into() };
        let masker: Masker =
            [&saffron_recording::Secret { name: "PASS".into(), value: "hunter22".into() }].into_iter().collect();
        let artifacts = project.path().join(".saffron/artifacts");
        // A run that is still writing its reports holds its folder's lock.
        let running = artifacts.join("run-0000000000001-1-0");
        std::fs::create_dir_all(&running).expect("mkdir");
        let lock = std::fs::File::create(running.join(artifacts::WRITING_LOCK)).expect("lock file");
        lock.lock().expect("locked");
        write_reports(project.path(), &report, &masker).expect("first run");
        write_reports(project.path(), &report, &masker).expect("second run");
        let mut runs: Vec<String> = std::fs::read_dir(&artifacts)
            .expect("artifacts")
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        runs.sort();
        assert_eq!(runs.len(), 2, "the running run's folder and the last run's: {runs:?}");
        assert_eq!(runs[0], "run-0000000000001-1-0");
        let last = artifacts.join(&runs[1]);
        let mut pictures: Vec<String> = std::fs::read_dir(&last)
            .expect("run folder")
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        pictures.sort();
        assert_eq!(pictures, ["a-b--export-3.png", "a-b--import-3.png", "a-b--pay-card-3.png", "a-b--refund-3.png"]);
        drop(lock);
        write_reports(project.path(), &report, &masker).expect("third run");
        assert_eq!(std::fs::read_dir(&artifacts).expect("artifacts").count(), 1, "once it is done, it is cleared too");

        let latest = std::fs::read_to_string(project.path().join(".saffron/reports/latest.json")).expect("json");
        assert!(!latest.contains("hunter") && latest.contains("{env:PASS}"), "{latest}");
        let named: RunReport = serde_json::from_str(&latest).expect("a report");
        let file = named.scenarios[1].screenshot_file.clone().expect("named");
        assert!(project.path().join(&file).is_file(), "{file}");
        let html = std::fs::read_to_string(project.path().join(".saffron/reports/report.html")).expect("html");
        assert!(html.contains("data:image/png;base64,iVBORw"), "inline pictures are left whole");
    }

    #[test]
    fn shard_reports_merge_into_one_in_file_order() {
        let whole = sample();
        let mut first = whole.clone();
        first.scenarios = vec![whole.scenarios[2].clone(), whole.scenarios[0].clone()];
        first.duration_ms = 2000;
        let mut second = whole.clone();
        second.scenarios = vec![whole.scenarios[1].clone(), whole.scenarios[3].clone()];
        second.scenarios[1].line = 9;
        second.base_url = "http://127.0.0.1:2".into();
        let merged = merge_reports(vec![first.clone(), second]).expect("merged");
        let counts = merged.counts;
        assert_eq!((counts.green, counts.yellow, counts.red, counts.blocked), (1, 1, 1, 1));
        assert_eq!(merged.duration_ms, 3000);
        assert_eq!(merged.base_url, "http://127.0.0.1:1, http://127.0.0.1:2");
        let names: Vec<&str> = merged.scenarios.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Export", "Pay <card>", "Refund", "Import"], "by file, line, then name");
        assert!(merge_reports(vec![first.clone(), first]).expect_err("overlap").to_string().contains("Export"));
        assert_eq!(merge_reports(vec![]).expect_err("nothing"), MergeError::Nothing);
    }

    fn agent_run(cost: Option<f64>) -> crate::AgentRun {
        let mut run = crate::AgentRun {
            agent: "anthropic claude-test".into(),
            usage: crate::AgentUsage {
                input_tokens: 12_345,
                output_tokens: 1_234,
                cache_read_tokens: 9_000,
                cache_write_tokens: 1_000,
                calls: 7,
                model_time_ms: 12_340,
            },
            cost_usd: None,
            cost_source: None,
            seeded_steps: 5,
            steps: 8,
            sessions: 2,
            fragile_targets: vec!["step 4 `click css \"div > span:nth-child(2)\"`: css only".into()],
            saved: Some(".saffron/cache/orders/export-the-orders.json".into()),
            artifacts: None,
            proposal: None,
            repaired_from_step: None,
        };
        if let Some(usd) = cost {
            run.set_cost(saffron_agent::Cost::Known { usd, source: saffron_agent::CostSource::ConfiguredPrices });
        }
        run
    }

    /// The sample, its green scenario recorded with a priced agent and its red one with an agent
    /// whose cost no one reported.
    fn sample_with_agent() -> RunReport {
        let mut scenarios = sample().scenarios;
        scenarios[0].agent = Some(agent_run(Some(0.0421)));
        let mut unpriced = agent_run(None);
        unpriced.saved = None;
        unpriced.artifacts = Some(".saffron/artifacts/run-1/refund".into());
        unpriced.fragile_targets.clear();
        scenarios[1].agent = Some(unpriced);
        RunReport::new("http://127.0.0.1:1", 3000, scenarios)
    }

    #[test]
    fn every_report_shows_what_the_agent_used() {
        let report = sample_with_agent();
        let totals = report.agent.clone().expect("totals");
        assert_eq!((totals.scenarios, totals.priced_scenarios, totals.seeded_steps, totals.steps), (2, 1, 10, 16));
        assert_eq!(
            (totals.usage.input_tokens, totals.usage.calls, totals.sessions, totals.fragile_targets),
            (24_690, 14, 4, 1)
        );
        let line = "2 scenario(s) recorded: 44,690 tokens in (20,000 cached), 2,468 out, 14 calls, 24.7 s; \
                    $0.0421 for 1 of 2 recorded scenarios (the rest: cost not reported); 10 of 16 steps seeded; \
                    4 sessions; 1 fragile target";
        assert_eq!(totals.summary(), line);
        let priced = "anthropic claude-test: 22,345 tokens in (10,000 cached), 1,234 out, 7 calls, 12.3 s; \
                      $0.0421 (configured prices); 5 of 8 steps seeded; 2 sessions";
        let unpriced = "anthropic claude-test: 22,345 tokens in (10,000 cached), 1,234 out, 7 calls, 12.3 s; \
                        cost not reported; 5 of 8 steps seeded; 2 sessions";

        let md = markdown(&report);
        assert!(md.contains(&format!("## Agent\n\n{line}.")), "{md}");
        assert!(md.contains("| Pay <card> | anthropic claude-test | 12345 | 10000 | 1234 | 7 | 12.3 s | $0.0421 (configured prices) | 5 of 8 | 2 |"), "{md}");
        assert!(md.contains("| cost not reported | 5 of 8 | 2 |"), "{md}");
        assert!(
            md.contains(&format!(
                "- recorded by {priced}\n- saved .saffron/cache/orders/export-the-orders.json\n- fragile target: step 4"
            )),
            "{md}"
        );
        assert!(
            md.contains(&format!(
                "- recorded by {unpriced}\n- nothing saved; the evidence is in .saffron/artifacts/run-1/refund"
            )),
            "{md}"
        );
        assert!(!md.contains("$0.0000") && !md.contains("$0 "), "an unknown cost is never $0: {md}");

        let xml = junit(&report);
        assert!(xml.contains("<property name=\"saffron.agent.inputTokens\" value=\"12345\"/>"), "{xml}");
        assert!(xml.contains("<property name=\"saffron.agent.cacheReadTokens\" value=\"9000\"/>"));
        assert!(xml.contains("<property name=\"saffron.agent.cost\" value=\"cost not reported\"/>"));
        assert!(xml.contains("<property name=\"saffron.agent.seededSteps\" value=\"5 of 8\"/>"));
        assert!(xml.contains(&format!("<system-out>recorded by {priced}\nsaved .saffron/cache/")), "{xml}");
        let mut reader = quick_xml::Reader::from_str(&xml);
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(_) => {}
                Err(error) => panic!("invalid XML: {error}\n{xml}"),
            }
        }

        let page = html(&report);
        assert!(page.contains(&format!("<h2>Agent</h2><p>{line}.</p>")), "{page}");
        assert!(page.contains("<b>Recorded by anthropic claude-test</b>"), "{page}");
        assert!(page.contains("<td>12345</td><td>10000</td><td>1234</td><td>7</td><td>12.3 s</td><td>$0.0421 (configured prices)</td><td>5 of 8 steps</td><td>2</td>"), "{page}");
        assert!(page.contains("<td>cost not reported</td>"), "{page}");
        assert!(page.contains("<div class=\"fragile\">fragile target: step 4 `click css &quot;div &gt; span:nth-child(2)&quot;`: css only</div>"), "{page}");

        let json = serde_json::to_value(&report).expect("json");
        assert_eq!(json["agent"]["usage"]["inputTokens"], 24_690);
        assert_eq!(json["agent"]["costUsd"], 0.0421);
        assert_eq!(json["scenarios"][0]["agent"]["usage"]["cacheReadTokens"], 9_000);
        assert_eq!(json["scenarios"][0]["agent"]["costSource"], "configured prices");
        assert!(json["scenarios"][1]["agent"].get("costUsd").is_none(), "no cost, no number");
        let back: RunReport = serde_json::from_value(json).expect("reads back");
        assert_eq!(back.agent, report.agent);
        assert_eq!(back.scenarios[1].agent.as_ref().map(crate::AgentRun::cost), Some(saffron_agent::Cost::NotReported));
        assert_eq!(
            back.scenarios[0].agent.as_ref().map(|run| run.cost().to_string()).as_deref(),
            Some("$0.0421 (configured prices)")
        );
    }

    #[test]
    fn no_agent_no_agent_lines() {
        let report = sample();
        assert_eq!(report.agent, None);
        let texts = [markdown(&report), junit(&report), html(&report), serde_json::to_string(&report).expect("json")];
        for text in texts {
            for word in ["Agent", "\"agent\"", "class=\"agent", "recorded by", "Recorded by", "seeded", "<properties>"]
            {
                assert!(!text.contains(word), "{word} in {text}");
            }
        }
        let priced_totals = AgentTotals::of(&sample_with_agent().scenarios[..1]).expect("one recorded");
        assert_eq!(priced_totals.cost_text(), "$0.0421");
        let mut none_priced = sample_with_agent().scenarios;
        none_priced[0].agent = Some(agent_run(None));
        assert_eq!(AgentTotals::of(&none_priced).expect("two").cost_text(), "cost not reported");
    }

    #[test]
    fn a_written_report_reads_back_as_it_was() {
        let report = sample();
        let json = serde_json::to_string(&report).expect("serializes");
        assert!(json.contains("\"stepText\""), "fields are camelCase: {json}");
        let back: RunReport = serde_json::from_str(&json).expect("deserializes");
        let strip = |mut s: ScenarioResult| {
            s.screenshot = None;
            s
        };
        let expected: Vec<ScenarioResult> = report.scenarios.into_iter().map(strip).collect();
        assert_eq!(back.scenarios, expected);
    }
}
