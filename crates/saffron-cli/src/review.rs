//! What `saffron proposals`, `diff`, `accept`, `reject` and `status` share: a proposal in words
//! and in JSON, and a review refusal as the terminal shows it. The rules themselves are
//! `saffron_index::review`'s.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use saffron_index::review::{self, Assessment, ReviewError};
use saffron_index::{ProposalData, Snapshot};
use saffron_recording::layout;
use saffron_recording::{Action, Proposal, Target};
use serde_json::{Value, json};

use crate::project;
use crate::terminal::escape_controls;

/// The project and its proposals as they are on disk, with the proposal files that could not be
/// read (path, reason).
pub struct Loaded {
    pub snapshot: Snapshot,
    pub unreadable: Vec<(PathBuf, String)>,
}

pub fn load() -> Result<Loaded> {
    let root = project::find_root()?;
    let (host, report) = saffron_index::IndexHost::load(&root);
    let unreadable = report
        .problems
        .iter()
        .filter(|problem| layout::in_proposals(&problem.path))
        .map(|problem| (problem.path.clone(), problem.message.clone()))
        .collect();
    Ok(Loaded { snapshot: host.snapshot(), unreadable })
}

/// The proposal a command line names (a path or a `feature/scenario` id), relative to the root.
pub fn resolve(id: &str) -> Result<PathBuf, ReviewError> {
    review::proposal_path(id).ok_or_else(|| ReviewError::NotAProposal { given: id.to_string() })
}

/// Prints a review error on stderr and gives its exit code: 1 for a refusal, 2 otherwise.
pub fn fail(verb: &str, error: &ReviewError) -> ExitCode {
    let what = if error.is_refusal() { "refused" } else { "failed" };
    eprintln!("saffron {verb}: {what}: {}", escape_controls(&error.to_string()));
    eprintln!("  hint: {}", escape_controls(&error.hint()));
    ExitCode::from(if error.is_refusal() { 1 } else { 2 })
}

pub fn summary_json(snapshot: &Snapshot, data: &ProposalData, assessment: &Assessment) -> Value {
    let proposal = &data.proposal;
    let changes = review::diff(snapshot, proposal);
    json!({
        "path": review::display_path(&data.path),
        "id": review::proposal_id(&data.path),
        "feature": proposal.scenario.feature,
        "scenario": proposal.scenario.name,
        "cachePath": proposal.scenario.cache_path,
        "filedAt": proposal.filed_at,
        "changedSteps": changes.len(),
        "actionChanges": action_changes(&changes),
        "featureEdits": proposal.feature_edits.len(),
        "narrative": proposal.narrative,
        "usage": proposal.usage,
        "stale": assessment.is_stale(),
        "staleReasons": assessment.stale_reasons,
        "unverified": assessment.unverified,
        "refused": assessment.refused,
        "differentControls": assessment.different_controls,
        "acceptable": assessment.is_acceptable(),
    })
}

pub fn action_changes(changes: &[saffron_recording::StepDiff]) -> usize {
    changes.iter().map(|step| step.changes.len()).sum()
}

/// Tokens and cost as the provider reported them, or `None` when nothing was reported.
pub fn usage_line(proposal: &Proposal) -> Option<String> {
    let usage = proposal.usage.as_ref()?;
    let mut parts = Vec::new();
    if let Some(tokens) = usage.input_tokens {
        parts.push(format!("{tokens} input tokens"));
    }
    if let Some(tokens) = usage.output_tokens {
        parts.push(format!("{tokens} output tokens"));
    }
    if let Some(cost) = usage.cost_usd {
        parts.push(format!("${cost:.4}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The staleness and proof lines under a proposal, indented by `indent`.
pub fn assessment_lines(assessment: &Assessment, indent: &str) -> Vec<String> {
    let mut lines: Vec<String> =
        assessment.stale_reasons.iter().map(|reason| format!("{indent}STALE: {reason}")).collect();
    if let Some(failure) = &assessment.unverified {
        lines.push(format!("{indent}UNVERIFIED: its proof replay failed: {failure}"));
    }
    lines.extend(assessment.refused.iter().map(|reason| format!("{indent}REFUSED: {reason}")));
    lines.extend(assessment.different_controls.iter().map(|change| format!("{indent}DIFFERENT CONTROL: {change}")));
    lines
}

/// One action change as `-`/`+` lines: `- [2] click button "Save"`, `+ [2] click button "Place"`.
pub fn change_lines(change: &saffron_recording::ActionChange) -> Vec<String> {
    use saffron_recording::ActionChange;
    match change {
        ActionChange::Added { index, action } => vec![format!("+ [{}] {}", index + 1, describe_action(action))],
        ActionChange::Removed { index, action } => vec![format!("- [{}] {}", index + 1, describe_action(action))],
        ActionChange::Changed { before_index, after_index, before, after } => vec![
            format!("- [{}] {}", before_index + 1, describe_action(before)),
            format!("+ [{}] {}", after_index + 1, describe_action(after)),
        ],
    }
}

/// One action as a person reads it: `click button "Buy now"`, `fill label "Email" with "a@b.c"`.
pub fn describe_action(action: &Action) -> String {
    let mut value = serde_json::to_value(action).unwrap_or(Value::Null);
    let mut words = vec![action.type_name().to_string()];
    if let Some(target) = action.target() {
        words.push(describe_target(target));
    }
    if let Value::Object(fields) = &mut value {
        fields.remove("type");
        fields.remove("target");
        for (key, field) in fields.iter() {
            let shown = match field {
                Value::String(text) => format!("{text:?}"),
                other => other.to_string(),
            };
            words.push(format!("{key} {shown}"));
        }
    }
    words.join(" ")
}

/// A target's locators, sturdiest first: `button "Buy" (css #buy)`.
pub fn describe_target(target: &Target) -> String {
    let mut parts = Vec::new();
    match (&target.role, &target.name, &target.name_regex) {
        (Some(role), Some(name), _) => parts.push(format!("{role} {name:?}")),
        (Some(role), None, Some(pattern)) => parts.push(format!("{role} /{pattern}/")),
        (Some(role), None, None) => parts.push(role.clone()),
        _ => {}
    }
    let mut named = |key: &str, value: &Option<String>| {
        if let Some(value) = value {
            parts.push(format!("{key} {value:?}"));
        }
    };
    named("label", &target.label);
    named("placeholder", &target.placeholder);
    named("testId", &target.test_id);
    named("text", &target.text);
    if !target.css.is_empty() {
        parts.push(format!("(css {})", target.css.join(" | ")));
    }
    if let Some(scope) = &target.within {
        let mut within = format!("within {}", describe_target(&scope.container));
        if let Some(text) = &scope.has_text {
            within.push_str(&format!(" that has {text:?}"));
        }
        if let Some(pattern) = &scope.has_text_regex {
            within.push_str(&format!(" that matches /{pattern}/"));
        }
        parts.push(within);
    }
    if let Some(frame) = &target.frame {
        parts.push(format!("in frame {}", describe_target(frame)));
    }
    parts.join(" ")
}

/// Whether `path` (relative to the root) is a proposal the snapshot holds.
pub fn find<'a>(snapshot: &'a Snapshot, path: &Path) -> Option<&'a ProposalData> {
    snapshot.proposal(path).map(AsRef::as_ref)
}
