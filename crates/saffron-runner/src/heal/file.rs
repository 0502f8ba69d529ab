//! Filing a repair as a proposal: bound to the scenario and the committed recording it repairs,
//! with the action diff, the feature edits the agent's rewordings make (in the StepSet's file
//! when the step comes from one), the adaptation and flow-change notes, the narrative and what
//! it cost. Written atomically under the store lock.

use saffron_agent::{Cost, Usage};
use saffron_recording::{
    FeatureEdit, Masker, Proposal, ProposalDraft, Recording, ScenarioRef, StepKind, Store, StoreError,
};

use super::Repair;
use super::merge::flow_changes;
use crate::orchestrator::run::RunOptions;
use crate::plan::Execution;

/// Files `repair` (against `replayed`, the recording it repairs) and returns the proposal's
/// path relative to the project root. `unverified` is the proof failure of a repair that did
/// not pass its proof.
#[allow(clippy::too_many_arguments)]
pub(crate) fn file(
    options: &RunOptions,
    execution: &Execution,
    repair: &Repair,
    replayed: &Recording,
    usage: &Usage,
    cost: &Cost,
    unverified: Option<String>,
    masker: &Masker,
) -> Result<String, StoreError> {
    let root = &options.root;
    let mut adaptations: Vec<String> = Vec::new();
    // What the repair changes is judged from the recordings; the agent's word is kept beside.
    let different_controls = &repair.review.different_controls;
    match (repair.account.change, different_controls.is_empty()) {
        (Some(change), true) => adaptations.push(format!("change: {}", change.describe())),
        (Some(change), false) => adaptations.push(format!(
            "change: a flow change, it acts on a different control (the agent said: {})",
            change.describe()
        )),
        (None, false) => adaptations.push("change: a flow change, it acts on a different control".into()),
        (None, true) => {}
    }
    adaptations.extend(different_controls.iter().map(|change| format!("flow change: {change}")));
    adaptations.extend(repair.notes.iter().cloned());
    adaptations.extend(flow_changes(replayed, &repair.recording));
    let (feature_edits, refused) = feature_edits(root, execution, &repair.account.rewrites);
    adaptations.extend(refused);
    let relative = |path: &std::path::Path| path.to_string_lossy().replace('\\', "/");
    let draft = ProposalDraft {
        scenario: ScenarioRef {
            feature: relative(&execution.file),
            name: execution.template_name.clone(),
            cache_path: relative(&execution.recording_path),
        },
        // Scrubbed of the page's secrets before its proof: what is filed is what was proven.
        recording: repair.recording.clone(),
        feature_edits,
        narrative: masker.mask(&repair.account.narrative),
        adaptations: adaptations.iter().map(|line| masker.mask(line)).collect(),
        // An agent that reports no model call (an external program) reported no usage: absent
        // numbers read "not reported", never zero.
        usage: (usage.calls > 0).then_some(saffron_recording::Usage {
            input_tokens: Some(usage.input_tokens),
            output_tokens: Some(usage.output_tokens),
            cost_usd: match cost {
                Cost::Known { usd, .. } => Some(*usd),
                Cost::NotReported => None,
            },
        }),
        filed_at: Some(saffron_recording::now_rfc3339()),
        unverified: unverified.map(|failure| masker.mask(&failure)),
    };
    let proposal = Proposal::file(draft, execution.committed.as_ref());
    let store = Store::open(root)?;
    let lock = store.lock()?;
    lock.write_proposal(&root.join(&execution.proposal_path), &proposal)?;
    Ok(relative(&execution.proposal_path))
}

/// Files the recording `saffron run --refresh-drift` made from a replay that drifted: the
/// committed recording with the drifted signals set to what the page has now. No model took
/// part (no usage), and no step's wording changes. Returns the path relative to the root.
pub(crate) fn file_refresh(
    options: &RunOptions,
    execution: &Execution,
    recording: Recording,
    changes: &[String],
    masker: &Masker,
) -> Result<String, StoreError> {
    let root = &options.root;
    let relative = |path: &std::path::Path| path.to_string_lossy().replace('\\', "/");
    let mut adaptations = vec!["change: drift refreshed (saffron run --refresh-drift, no model involved)".to_owned()];
    adaptations.extend(changes.iter().cloned());
    let draft = ProposalDraft {
        scenario: ScenarioRef {
            feature: relative(&execution.file),
            name: execution.template_name.clone(),
            cache_path: relative(&execution.recording_path),
        },
        recording,
        feature_edits: Vec::new(),
        narrative: "The replay passed, but found elements through signals that no longer describe them. Each \
                    drifted signal now says what the page has: the same elements, found by their sturdiest \
                    signals again. No assertion's expected value changed."
            .to_owned(),
        adaptations: adaptations.iter().map(|line| masker.mask(line)).collect(),
        usage: None,
        filed_at: Some(saffron_recording::now_rfc3339()),
        unverified: None,
    };
    let proposal = Proposal::file(draft, execution.committed.as_ref());
    let store = Store::open(root)?;
    let lock = store.lock()?;
    lock.write_proposal(&root.join(&execution.proposal_path), &proposal)?;
    Ok(relative(&execution.proposal_path))
}

/// One edit per reworded Given/When step, on the line the step is written on; the rewordings
/// that cannot be made become notes (a Then step's wording is what the scenario checks).
fn feature_edits(
    root: &std::path::Path,
    execution: &Execution,
    rewrites: &[(usize, String)],
) -> (Vec<FeatureEdit>, Vec<String>) {
    let mut edits: Vec<FeatureEdit> = Vec::new();
    let mut refused = Vec::new();
    for (index, text) in rewrites {
        let number = index.wrapping_add(1);
        let text = text.trim();
        let (Some(step), Some(origin)) = (execution.template_steps.get(*index), execution.step_origins.get(*index))
        else {
            refused.push(format!("rewording of step {number} ignored: the scenario has no such step"));
            continue;
        };
        if step.kind == StepKind::Outcome {
            refused.push(format!(
                "rewording of Then step {number} refused: a Then step's wording is what the scenario checks"
            ));
            continue;
        }
        if text.is_empty() || text == step.text || text.contains('\n') {
            continue;
        }
        let dropped = saffron_index::repair_rules::edit_drops_values(&step.text, text);
        if !dropped.is_empty() {
            let dropped: Vec<String> = dropped.iter().map(|value| format!("\"{value}\"")).collect();
            refused.push(format!(
                "rewording of step {number} refused: it drops the step's value(s) {}, and a rewording keeps every \
                 value of the step",
                dropped.join(", ")
            ));
            continue;
        }
        let source = match saffron_recording::read_inside(root, &root.join(&origin.file)) {
            Ok(source) => source,
            Err(error) => {
                refused.push(format!("rewording of step {number} not proposed: {error}"));
                continue;
            }
        };
        let Some(before) = source.lines().nth(origin.line.saturating_sub(1) as usize) else { continue };
        if !before.contains(step.text.as_str()) {
            refused.push(format!(
                "rewording of step {number} not proposed: line {} of {} no longer holds the step",
                origin.line,
                origin.file.display()
            ));
            continue;
        }
        let file = origin.file.to_string_lossy().replace('\\', "/");
        if edits.iter().any(|edit| edit.file == file && edit.line == origin.line) {
            continue;
        }
        edits.push(FeatureEdit {
            file,
            line: origin.line,
            before: before.to_string(),
            after: before.replacen(step.text.as_str(), text, 1),
            from_set: origin.from_set.clone(),
        });
    }
    (edits, refused)
}
