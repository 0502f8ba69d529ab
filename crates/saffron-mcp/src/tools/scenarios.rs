//! `list_scenarios` and `status`: each scenario's recording, and the project at a glance.
//!
//! Recordings as they are: fresh, stale, missing or unreadable, and the proposals waiting for
//! review. Verdicts come from the `run` tool; `status` repeats the last run's counts.

use std::fmt::Write as _;

use saffron_index::{RecordingState, ScenarioStatus, Snapshot, StepStatus};
use saffron_recording::layout;
use saffron_runner::RunReport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::proposals::{self, ProposalSummary};
use super::vocabulary::block_name;
use super::{Render, ToolError, file_filter, page, under};
use crate::config::McpConfig;
use crate::project::{Project, display_path};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecordingFilter {
    Fresh,
    Stale,
    Unrecorded,
    Unreadable,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListScenariosArgs {
    /// Only scenarios of this feature file or folder, relative to the project root.
    #[serde(default)]
    pub file: Option<String>,
    /// Only scenarios whose recording is in this state.
    #[serde(default)]
    pub recording: Option<RecordingFilter>,
    /// At most this many scenarios (default 100, at most 1000).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Skip this many first, to page on.
    #[serde(default)]
    pub offset: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListScenariosOutput {
    pub total: usize,
    pub offset: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    pub scenarios: Vec<ScenarioInfo>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioInfo {
    pub file: String,
    pub line: u32,
    pub name: String,
    /// `scenario` or `fixture`.
    pub kind: String,
    /// Examples rows of an Outline (they share one recording); 0 for a plain scenario.
    pub rows: usize,
    /// `fresh` (replays as recorded), `stale` (edited since: records again), `unrecorded`
    /// (the first run records it) or `unreadable` (see `reason`; never recorded over).
    pub recording: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub recording_path: String,
    /// A proposal waiting for review, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_proposal: Option<String>,
}

pub fn scenario_info(status: &ScenarioStatus) -> ScenarioInfo {
    ScenarioInfo {
        file: display_path(&status.file),
        line: status.location.line,
        name: status.name.clone(),
        kind: block_name(status.kind).to_string(),
        rows: status.rows,
        recording: status.recording.as_str().to_string(),
        reason: match &status.recording {
            RecordingState::Unreadable { reason } => Some(reason.clone()),
            _ => None,
        },
        recording_path: display_path(&status.recording_path),
        pending_proposal: status.pending_proposal.as_deref().map(display_path),
    }
}

pub fn list(snapshot: &Snapshot, args: ListScenariosArgs) -> Result<ListScenariosOutput, ToolError> {
    let (limit, offset) = page(args.limit, args.offset, 100, 1000)?;
    let filter = file_filter(snapshot, args.file.as_deref())?;
    let wanted = args.recording.map(|state| match state {
        RecordingFilter::Fresh => "fresh",
        RecordingFilter::Stale => "stale",
        RecordingFilter::Unrecorded => "unrecorded",
        RecordingFilter::Unreadable => "unreadable",
    });
    let all: Vec<ScenarioStatus> = snapshot
        .scenarios()
        .into_iter()
        .filter(|s| filter.as_deref().is_none_or(|filter| under(&s.file, filter)))
        .filter(|s| wanted.is_none_or(|wanted| s.recording.as_str() == wanted))
        .collect();
    let total = all.len();
    let scenarios: Vec<ScenarioInfo> = all.iter().skip(offset).take(limit).map(scenario_info).collect();
    let next_offset = (offset + scenarios.len() < total).then_some(offset + scenarios.len());
    Ok(ListScenariosOutput { total, offset, next_offset, scenarios })
}

impl Render for ListScenariosOutput {
    fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} scenario(s); showing {} from offset {}{}",
            self.total,
            self.scenarios.len(),
            self.offset,
            self.next_offset.map_or(String::new(), |next| format!(" (next page: offset {next})"))
        );
        for s in &self.scenarios {
            let rows = if s.rows > 0 { format!(" ({} rows)", s.rows) } else { String::new() };
            let _ = write!(out, "{:<11} {}:{}  {}{rows}", s.recording, s.file, s.line, s.name);
            if let Some(reason) = &s.reason {
                let _ = write!(out, "  ({reason})");
            }
            if let Some(proposal) = &s.pending_proposal {
                let _ = write!(out, "  [proposal pending: {proposal}]");
            }
            out.push('\n');
        }
        out
    }
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusOutput {
    /// The project root the server answers for.
    pub root: String,
    pub feature_files: usize,
    pub scenarios: ScenarioCounts,
    pub steps: StepCounts,
    pub proposals: ProposalCounts,
    /// Scenarios that need something: stale, unrecorded or unreadable recordings and pending
    /// proposals (the first 25; list_scenarios has them all).
    pub attention: Vec<ScenarioInfo>,
    /// Files that could not be used, with the reason.
    pub problems: Vec<Problem>,
    /// Whether the accept and reject tools are enabled (`[mcp] allow_accept` in saffron.toml).
    pub accept_enabled: bool,
    /// The last run's verdict counts (`.saffron/reports/latest.json`), or that there was none.
    pub verdicts: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioCounts {
    pub total: usize,
    pub fresh: usize,
    pub stale: usize,
    pub unrecorded: usize,
    pub unreadable: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepCounts {
    pub total: usize,
    pub recorded: usize,
    pub divergent: usize,
    pub unrecorded: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalCounts {
    pub pending: usize,
    /// Pending proposals that can no longer be accepted (re-run their scenarios).
    pub stale: usize,
    pub unreadable: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub path: String,
    pub problem: String,
}

const ATTENTION: usize = 25;

pub fn status(project: &Project, _args: StatusArgs) -> Result<StatusOutput, ToolError> {
    let snapshot = project.snapshot();
    let scenarios = snapshot.scenarios();
    let count = |state: &str| scenarios.iter().filter(|s| s.recording.as_str() == state).count();
    let entries = snapshot.entries();
    let steps = |status: StepStatus| entries.iter().filter(|e| e.status() == status).count();
    let summaries: Vec<ProposalSummary> = proposals::summaries(&snapshot);
    let mut problems: Vec<Problem> = snapshot
        .unreadable_recordings()
        .map(|(path, reason)| Problem { path: display_path(path), problem: reason.to_string() })
        .collect();
    problems.extend(
        project
            .unreadable_proposals()
            .iter()
            .chain(project.problems())
            .map(|(path, problem)| Problem { path: display_path(path), problem: problem.clone() }),
    );
    // Read again: a key fixed since the server started is no longer reported.
    let config = McpConfig::read(project.root());
    let config_problems = config.problem.iter().chain(&config.warnings);
    problems
        .extend(config_problems.map(|problem| Problem { path: "saffron.toml".to_string(), problem: problem.clone() }));
    let attention: Vec<ScenarioInfo> = scenarios
        .iter()
        .filter(|s| !matches!(s.recording, RecordingState::Fresh) || s.pending_proposal.is_some())
        .take(ATTENTION)
        .map(scenario_info)
        .collect();
    Ok(StatusOutput {
        root: display_path(project.root()),
        feature_files: snapshot.files().count(),
        scenarios: ScenarioCounts {
            total: scenarios.len(),
            fresh: count("fresh"),
            stale: count("stale"),
            unrecorded: count("unrecorded"),
            unreadable: count("unreadable"),
        },
        steps: StepCounts {
            total: entries.len(),
            recorded: steps(StepStatus::Recorded),
            divergent: steps(StepStatus::Divergent),
            unrecorded: steps(StepStatus::Unrecorded),
        },
        proposals: ProposalCounts {
            pending: summaries.len(),
            stale: summaries.iter().filter(|p| p.stale).count(),
            unreadable: project.unreadable_proposals().len(),
        },
        attention,
        problems,
        accept_enabled: project.config().allow_accept,
        verdicts: last_run(project.root()),
    })
}

/// The verdict counts of the last run, in words.
fn last_run(root: &std::path::Path) -> String {
    let path = root.join(layout::LATEST_REPORT);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return "no run yet: the run tool replays scenarios and gives each a verdict".to_string();
    };
    let Ok(report) = serde_json::from_str::<RunReport>(&text) else {
        return format!("the last run's report ({}) cannot be read", layout::LATEST_REPORT);
    };
    format!("last run ({}): {}", layout::LATEST_REPORT, report.counts)
}

impl Render for StatusOutput {
    fn render(&self) -> String {
        let mut out = String::new();
        let s = &self.scenarios;
        let _ = writeln!(out, "Project {} ({} feature file(s))", self.root, self.feature_files);
        let _ = writeln!(
            out,
            "Scenarios: {} ({} fresh, {} stale, {} unrecorded, {} unreadable)",
            s.total, s.fresh, s.stale, s.unrecorded, s.unreadable
        );
        let _ = writeln!(
            out,
            "Steps: {} ({} recorded, {} divergent, {} unrecorded)",
            self.steps.total, self.steps.recorded, self.steps.divergent, self.steps.unrecorded
        );
        let _ = writeln!(
            out,
            "Proposals: {} pending ({} stale), {} unreadable; accept/reject tools {}",
            self.proposals.pending,
            self.proposals.stale,
            self.proposals.unreadable,
            if self.accept_enabled { "enabled" } else { "disabled" }
        );
        let _ = writeln!(out, "Verdicts: {}", self.verdicts);
        for scenario in &self.attention {
            let _ =
                writeln!(out, "  {:<11} {}:{}  {}", scenario.recording, scenario.file, scenario.line, scenario.name);
        }
        for problem in &self.problems {
            let _ = writeln!(out, "  problem: {}: {}", problem.path, problem.problem);
        }
        out
    }
}
