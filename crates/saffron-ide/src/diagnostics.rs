//! Diagnostics of one file: syntax errors and dialect problems (each with a hint),
//! near-duplicate step wordings, and the state of each scenario's recording.

use std::collections::HashMap;
use std::path::Path;

use saffron_index::{RecordingState, Snapshot, StepStatus, drift, review};
use saffron_syntax::{DiagnosticCode, Severity, Span};

use crate::completion::badge;
use crate::context;

#[derive(Debug, Clone, PartialEq)]
pub struct IdeDiagnostic {
    pub span: Span,
    pub severity: Severity,
    /// Stable, kebab-case: `near-duplicate`, `stale-recording`, `unknown-step-set`...
    pub code: String,
    pub message: String,
    pub hint: Option<String>,
    /// For a near-duplicate: the existing wording to use instead.
    pub replacement: Option<String>,
}

fn code_name(code: DiagnosticCode) -> String {
    serde_json_code(code)
}

/// The kebab-case name the CLI prints for a syntax code.
fn serde_json_code(code: DiagnosticCode) -> String {
    format!("{code:?}")
        .chars()
        .enumerate()
        .flat_map(|(index, c)| {
            let dash = (index > 0 && c.is_ascii_uppercase()).then_some('-');
            dash.into_iter().chain(std::iter::once(c.to_ascii_lowercase()))
        })
        .collect()
}

fn rank(status: StepStatus) -> u8 {
    match status {
        StepStatus::Recorded => 0,
        StepStatus::Divergent => 1,
        StepStatus::Unrecorded => 2,
    }
}

pub fn diagnostics(snapshot: &Snapshot, path: &Path) -> Vec<IdeDiagnostic> {
    diagnostics_against(snapshot, path, snapshot)
}

/// [`diagnostics`], with near-duplicate wordings ranked by how established they are in
/// `established`: a draft checked before it is saved is ranked against the project without
/// it, so that writing the less-used of two wordings is flagged even when the draft's own uses
/// would make it the more used.
pub fn diagnostics_against(snapshot: &Snapshot, path: &Path, established: &Snapshot) -> Vec<IdeDiagnostic> {
    let Some(file) = context::file(snapshot, path) else { return Vec::new() };
    let document = file.document();
    let mut out: Vec<IdeDiagnostic> = Vec::new();

    let syntax = file.data.source.parsed.errors.iter().cloned();
    let checks = saffron_syntax::document_checks(path, document, snapshot.step_sets());
    for problem in syntax.chain(checks) {
        out.push(IdeDiagnostic {
            span: problem.span,
            severity: problem.severity,
            code: code_name(problem.code),
            message: problem.message,
            hint: problem.hint,
            replacement: None,
        });
    }

    // One lookup per distinct text; a wording is flagged only against a better-established
    // one (recorded over unrecorded, then the wording more used with any values, then the text
    // more used), so two near-duplicates do not flag each other.
    let standing = |text: &str| {
        let (status, count) =
            established.entry(text).map_or((StepStatus::Unrecorded, 0), |entry| (entry.status(), entry.count()));
        (rank(status), std::cmp::Reverse(established.wording_uses(text)), std::cmp::Reverse(count))
    };
    let mut checked: HashMap<&str, Option<(String, String, f64, StepStatus)>> = HashMap::new();
    for step in document.steps() {
        if step.is_invocation || step.text.is_empty() {
            continue;
        }
        let better = checked.entry(step.text.as_str()).or_insert_with(|| {
            let own = (standing(&step.text), step.text.as_str());
            snapshot
                .near_duplicates(&step.text)
                .into_iter()
                .find(|candidate| (standing(&candidate.text), candidate.text.as_ref()) < own)
                .map(|candidate| {
                    // The existing wording with this step's own values: the fix changes the
                    // wording, never what the step is written with.
                    let replacement = drift::reworded(&step.text, &candidate.text);
                    (candidate.text.to_string(), replacement, candidate.similarity, candidate.status)
                })
        });
        let Some((wording, replacement, similarity, status)) = better.clone() else { continue };
        let recorded = match status {
            StepStatus::Recorded => ", which is recorded and replays for free",
            StepStatus::Divergent => ", which is recorded",
            StepStatus::Unrecorded => "",
        };
        out.push(IdeDiagnostic {
            span: step.text_span,
            severity: Severity::Warning,
            code: "near-duplicate".to_string(),
            message: format!(
                "near-duplicate of the existing step \"{wording}\" (similarity {similarity:.2}){recorded}"
            ),
            hint: Some(format!(
                "use the existing wording: a different wording is another step to record ({})",
                badge(status)
            )),
            replacement: Some(replacement),
        });
    }

    // By location, once: a search per scenario is quadratic in a file of thousands of them.
    let mut scenarios = HashMap::new();
    for scenario in document.scenarios() {
        scenarios.entry(scenario.header.location).or_insert(scenario);
    }
    for status in snapshot.scenarios_in(path) {
        let Some(scenario) = scenarios.get(&status.location) else { continue };
        let span = scenario.header.line_span;
        match &status.recording {
            RecordingState::Stale => out.push(IdeDiagnostic {
                span,
                severity: Severity::Information,
                code: "stale-recording".to_string(),
                message: "the recording of this scenario is stale: its steps changed since it was recorded".to_string(),
                hint: Some(format!(
                    "the next run records it again ({}); steps that are already recorded elsewhere are reused",
                    status.recording_path.display()
                )),
                replacement: None,
            }),
            RecordingState::Unreadable { reason } => out.push(IdeDiagnostic {
                span,
                severity: Severity::Warning,
                code: "unreadable-recording".to_string(),
                message: format!("the recording of this scenario cannot be used: {reason}"),
                hint: Some(format!("fix or delete {}; Saffron never records over it", status.recording_path.display())),
                replacement: None,
            }),
            RecordingState::Fresh | RecordingState::Unrecorded => {}
        }
        if let Some(proposal) = &status.pending_proposal {
            let assessment = snapshot.proposal(proposal).map(|data| review::assess(snapshot, &data.proposal));
            let shown = proposal.display();
            let (message, hint) = match assessment {
                Some(assessment) if !assessment.is_acceptable() => (
                    format!(
                        "a proposal for this scenario is waiting for review and cannot be accepted: {} ({shown})",
                        assessment.refusals().join("; ")
                    ),
                    "read it, reject it, and run the scenario again for a proposal bound to the files as they are",
                ),
                _ => (
                    format!("a proposal for this scenario is waiting for review: {shown}"),
                    "review it, then accept or reject it",
                ),
            };
            out.push(IdeDiagnostic {
                span,
                severity: Severity::Information,
                code: "pending-proposal".to_string(),
                message,
                hint: Some(hint.to_string()),
                replacement: None,
            });
        }
    }
    out.sort_by_key(|d| (d.span.start, d.span.end));
    out
}

#[cfg(test)]
mod tests {
    use super::serde_json_code;
    use saffron_syntax::DiagnosticCode;

    #[test]
    fn codes_are_kebab_case() {
        assert_eq!(serde_json_code(DiagnosticCode::UnknownStepSet), "unknown-step-set");
        assert_eq!(serde_json_code(DiagnosticCode::UnexpectedEof), "unexpected-eof");
    }
}
