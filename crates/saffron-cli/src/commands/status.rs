//! `saffron status`: each scenario's recording (fresh, stale, unrecorded) and pending proposals.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use saffron_index::review::Assessment;
use saffron_index::{RecordingState, ScenarioStatus, Snapshot, StepChange, StepDifference};
use saffron_recording::StepSpec;
use similar::{ChangeTag, TextDiff};

use super::Format;
use crate::problem;
use crate::project;
use crate::review;
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct StatusArgs {
    /// Only scenarios of feature files under these paths.
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(args: StatusArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let filters = project::relative_filters(&root, &args.paths)?;
    let (snapshot, mut problems) = project::load_index(&root);
    problems.splice(0..0, project::config_problems(&root));
    problems.extend(project::orphan_problems(&snapshot));
    project::report(&problems)?;
    let scenarios: Vec<_> = snapshot.scenarios().into_iter().filter(|s| project::selected(&s.file, &filters)).collect();
    let ledger = saffron_ci::ledger::Ledger::read(&root);
    // Flaky and chronic scenarios, from the run history (`saffron history` has the whole of it).
    let recent = saffron_runner::history::summarize(&saffron_runner::history::read(&root), 10);
    let history_of = |file: &std::path::Path, line: u32| {
        let file = file.to_string_lossy().replace('\\', "/");
        recent.iter().filter(|summary| summary.file == file && summary.line == line).collect::<Vec<_>>()
    };
    let imported_from = |proposal: &std::path::Path| ledger.imported_from_file(&root, proposal).cloned();
    // A fresh recording whose schema checks read a contract pinned again since is stale, as a
    // run finds it.
    let mut contracts = saffron_runner::session::load_config(&root)
        .ok()
        .and_then(|config| saffron_runner::PinnedContracts::new(&root, &config));
    let contract_changes: Vec<Option<String>> = scenarios
        .iter()
        .map(|s| {
            let contracts = contracts.as_mut()?;
            if s.recording != RecordingState::Fresh {
                return None;
            }
            let text = std::fs::read_to_string(root.join(&s.recording_path)).ok()?;
            contracts.changed(&saffron_recording::parse_recording(&text).ok()?)
        })
        .collect();
    let state = |index: usize| match &contract_changes[index] {
        Some(_) => "stale",
        None => scenarios[index].recording.as_str(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            let json: Vec<serde_json::Value> = scenarios
                .iter()
                .enumerate()
                .map(|(index, s)| {
                    let mut value = serde_json::json!({
                        "file": s.file.display().to_string(),
                        "line": s.location.line,
                        "name": s.name,
                        "kind": s.kind,
                        "rows": s.rows,
                        "recording": state(index),
                        "recordingPath": s.recording_path.display().to_string(),
                        "pendingProposal": s.pending_proposal.as_ref().map(|p| p.display().to_string()),
                    });
                    if let Some(assessment) = proposal_assessment(&snapshot, s) {
                        value["proposal"] = serde_json::json!({
                            "stale": assessment.is_stale(),
                            "staleReasons": assessment.stale_reasons,
                            "unverified": assessment.unverified,
                            "acceptable": assessment.is_acceptable(),
                        });
                        // Which CI run it came from, while it is the revision `saffron import` filed.
                        if let Some(from) = s.pending_proposal.as_deref().and_then(imported_from) {
                            value["proposal"]["importedFrom"] = serde_json::json!(from);
                        }
                    }
                    if let RecordingState::Unreadable { reason } = &s.recording {
                        value["reason"] = serde_json::json!(reason);
                    }
                    if let Some(reason) = &contract_changes[index] {
                        value["reason"] = serde_json::json!(reason);
                    }
                    let histories: Vec<serde_json::Value> = history_of(&s.file, s.location.line)
                        .iter()
                        .map(|history| {
                            serde_json::json!({
                                "browser": history.browser,
                                "strip": history.strip,
                                "flips": history.flips,
                                "chronic": history.chronic,
                                "flaky": history.flaky,
                            })
                        })
                        .collect();
                    // `history` is the first browser's (Chromium's in a matrix); `histories` has
                    // every browser's when there are more.
                    if let Some(first) = histories.first() {
                        value["history"] = first.clone();
                    }
                    if histories.len() > 1 {
                        value["histories"] = serde_json::json!(histories);
                    }
                    if !s.stale_steps.is_empty() {
                        value["staleSteps"] = s.stale_steps.iter().map(difference_json).collect();
                    }
                    value
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &json)?;
            writeln!(out)?;
        }
        Format::Text => {
            for (index, s) in scenarios.iter().enumerate() {
                let rows = if s.rows > 0 { format!(" ({} rows)", s.rows) } else { String::new() };
                let mut line =
                    format!("{:<11} {}:{}  {}{rows}", state(index), s.file.display(), s.location.line, s.name);
                if let RecordingState::Unreadable { reason } = &s.recording {
                    line.push_str(&format!("  ({reason})"));
                }
                if let Some(reason) = &contract_changes[index] {
                    line.push_str(&format!("  ({reason})"));
                }
                let histories = history_of(&s.file, s.location.line);
                for history in histories.iter().filter(|h| h.chronic || h.flaky) {
                    let kinds: Vec<&str> = [(history.chronic, "CHRONIC"), (history.flaky, "flaky")]
                        .iter()
                        .filter(|k| k.0)
                        .map(|k| k.1)
                        .collect();
                    let browser = history.in_browser(histories.len());
                    line.push_str(&format!("  [{}{browser} {}]", kinds.join(", "), history.strip));
                }
                let assessment = proposal_assessment(&snapshot, s);
                if let Some(proposal) = &s.pending_proposal {
                    let mark = match &assessment {
                        Some(assessment) if assessment.is_stale() => ", STALE",
                        Some(assessment) if assessment.unverified.is_some() => ", UNVERIFIED",
                        _ => "",
                    };
                    let from = match imported_from(proposal) {
                        Some(from) => match &from.run {
                            Some(run) => format!(", from CI run {}", run.id),
                            None => format!(", from {}", from.bundle),
                        },
                        None => String::new(),
                    };
                    line.push_str(&format!("  [proposal pending: {}{mark}{from}]", proposal.display()));
                }
                writeln!(out, "{}", escape_controls(&line))?;
                for line in
                    assessment.iter().flat_map(|assessment| review::assessment_lines(assessment, "            "))
                {
                    writeln!(out, "{}", escape_controls(&line))?;
                }
                for difference in &s.stale_steps {
                    write_difference(&mut out, difference)?;
                }
            }
            let count = |wanted: &str| (0..scenarios.len()).filter(|index| state(*index) == wanted).count();
            eprintln!(
                "{} scenario(s): {} fresh, {} stale, {} unrecorded, {} unreadable; {} proposal(s) pending",
                scenarios.len(),
                count("fresh"),
                count("stale"),
                count("unrecorded"),
                count("unreadable"),
                scenarios.iter().filter(|s| s.pending_proposal.is_some()).count()
            );
        }
    }
    Ok(problem::exit_code(&problems))
}

/// Whether the scenario's pending proposal may be accepted, when it has one.
fn proposal_assessment(snapshot: &Snapshot, scenario: &ScenarioStatus) -> Option<Assessment> {
    let data = snapshot.proposal(scenario.pending_proposal.as_deref()?)?;
    Some(saffron_index::review::assess(snapshot, &data.proposal))
}

fn spec_json(spec: &StepSpec) -> serde_json::Value {
    serde_json::json!({
        "kind": spec.kind.as_str(),
        "text": spec.text,
        "table": spec.table,
        "docString": spec.doc_string,
    })
}

fn difference_json(difference: &StepDifference) -> serde_json::Value {
    let differs: Vec<&str> = match &difference.change {
        StepChange::Changed(aspects) => aspects.iter().map(|aspect| aspect.as_str()).collect(),
        _ => Vec::new(),
    };
    serde_json::json!({
        "change": difference.change.as_str(),
        "differs": differs,
        "step": difference.step,
        "recordedStep": difference.recorded_step,
        "recorded": difference.recorded.as_ref().map(spec_json),
        "now": difference.now.as_ref().map(spec_json),
    })
}

/// A step as a feature file writes it, one line each for the step, its table rows and its doc
/// string, so a difference reads as a diff of the file.
fn step_lines(spec: &StepSpec) -> Vec<String> {
    let keyword = spec.kind.keyword();
    let mut lines = vec![format!("{keyword} {}", spec.text)];
    for row in spec.table.iter().flatten() {
        lines.push(format!("  | {} |", row.join(" | ")));
    }
    if let Some(doc) = &spec.doc_string {
        lines.push("  \"\"\"".to_string());
        lines.extend(doc.lines().map(|line| format!("  {line}")));
        lines.push("  \"\"\"".to_string());
    }
    lines
}

/// Under a stale scenario: which step differs and how, as a small diff of its lines (`-` as
/// recorded, `+` as written now; the step's own line is kept for context).
fn write_difference(out: &mut impl Write, difference: &StepDifference) -> std::io::Result<()> {
    let heading = match (&difference.change, difference.step, difference.recorded_step) {
        (StepChange::Changed(aspects), Some(step), _) => {
            let aspects: Vec<&str> = aspects.iter().map(|aspect| aspect.as_str()).collect();
            format!("step {step}: {} changed since it was recorded", aspects.join(", "))
        }
        (StepChange::Missing, Some(step), _) => format!("step {step}: not in the recording"),
        (_, _, Some(recorded)) => format!("recorded step {recorded}: no longer in the scenario"),
        _ => "a step differs".to_string(),
    };
    writeln!(out, "            {heading}")?;
    let before = difference.recorded.as_ref().map(step_lines).unwrap_or_default();
    let after = difference.now.as_ref().map(step_lines).unwrap_or_default();
    let before: Vec<&str> = before.iter().map(String::as_str).collect();
    let after: Vec<&str> = after.iter().map(String::as_str).collect();
    for change in TextDiff::from_slices(&before, &after).iter_all_changes() {
        let sign = match change.tag() {
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
            ChangeTag::Equal if change.old_index() == Some(0) => ' ',
            ChangeTag::Equal => continue,
        };
        writeln!(out, "              {sign} {}", escape_controls(change.value()))?;
    }
    Ok(())
}
