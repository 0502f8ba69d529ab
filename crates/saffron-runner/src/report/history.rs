//! A run's lines of `.saffron/reports/history.jsonl` (see [`saffron_index::history`], which
//! reads, appends and summarizes the file: the editor's code lenses read it too).

use saffron_recording::Masker;

pub use saffron_index::history::*;

use super::RunReport;
use crate::Verdict;

/// What a run knows about itself that the report does not: where it ran.
#[derive(Debug, Clone, Default)]
pub struct RunContext {
    pub commit: Option<String>,
    pub branch: Option<String>,
    /// The run's browser (`chromium`, `firefox`), for results that name none (a run with one).
    pub browser: String,
}

/// The lines of one run, one per scenario, masked.
pub fn lines_of(report: &RunReport, context: &RunContext, time: &str, masker: &Masker) -> Vec<HistoryLine> {
    let shard = report.shard.map(|shard| format!("{}/{}", shard.index, shard.total));
    report
        .scenarios
        .iter()
        .map(|scenario| {
            let agent = scenario.agent.as_ref();
            let proposal = match &scenario.verdict {
                Verdict::Yellow { proposal } => Some(proposal.clone()),
                _ => agent.and_then(|run| run.proposal.clone()),
            };
            HistoryLine {
                time: time.to_string(),
                commit: context.commit.clone(),
                branch: context.branch.as_deref().map(|branch| masker.mask(branch)),
                shard: shard.clone(),
                browser: scenario.browser.clone().unwrap_or_else(|| context.browser.clone()),
                file: scenario.file.clone(),
                line: scenario.line,
                name: masker.mask(scenario.bare_name()),
                verdict: scenario.verdict.name().to_string(),
                flaky: scenario.flaky,
                attempts: scenario.retried.len() as u32 + 1,
                duration_ms: scenario.duration_ms,
                drift: scenario.drift.len(),
                tokens: agent.map_or(0, |run| run.usage.input_tokens + run.usage.output_tokens),
                cost_usd: agent.and_then(|run| run.cost_usd),
                proposal,
            }
        })
        .collect()
}
