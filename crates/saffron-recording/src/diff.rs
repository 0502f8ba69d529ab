//! The action-level diff between a committed recording and a proposed one.
//!
//! A small LCS rather than the `similar` crate: steps hold a handful of actions, and the diff
//! needs a pass `similar` does not do, pairing a removed and an added action of the same type
//! as one *changed* action, so a renamed button reads as a locator change and not as a flow
//! change.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::model::{RecordedStep, Recording, StepKind};

/// The changes to one step's actions. Only steps with changes are listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a step diff (a JSON object)")]
pub struct StepDiff {
    /// The step's kind.
    pub kind: StepKind,
    /// The step's text.
    pub text: String,
    /// Index of the step in the committed recording; absent for a new step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<usize>,
    /// Index of the step in the proposed recording; absent for a removed step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<usize>,
    /// The action changes, in order.
    pub changes: Vec<ActionChange>,
}

/// One action added, removed or changed, tagged by `"change"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "change",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    expecting = "an action change (a JSON object)"
)]
pub enum ActionChange {
    /// An action only the proposal has.
    Added {
        /// Its index in the proposed step.
        index: usize,
        /// The action.
        action: Action,
    },
    /// An action only the committed recording has.
    Removed {
        /// Its index in the committed step.
        index: usize,
        /// The action.
        action: Action,
    },
    /// An action of the same type with different operands.
    Changed {
        /// Its index in the committed step.
        before_index: usize,
        /// Its index in the proposed step.
        after_index: usize,
        /// The committed action.
        before: Box<Action>,
        /// The proposed action.
        after: Box<Action>,
    },
}

/// The diff from `committed` (none: a first recording) to `proposed`, step by step. Steps
/// are matched by kind, text, table and doc string.
pub fn diff_recordings(committed: Option<&Recording>, proposed: &Recording) -> Vec<StepDiff> {
    let old_steps: &[RecordedStep] = committed.map_or(&[], |recording| &recording.steps);
    let new_steps = &proposed.steps;
    let same_step = |a: &RecordedStep, b: &RecordedStep| {
        a.kind == b.kind && a.text == b.text && a.table == b.table && a.doc_string == b.doc_string
    };
    let mut diffs = Vec::new();
    let mut push = |diff: StepDiff| {
        if !diff.changes.is_empty() {
            diffs.push(diff);
        }
    };
    let mut old_next = 0;
    let mut new_next = 0;
    let anchors = lcs(old_steps, new_steps, same_step);
    for (old_anchor, new_anchor) in anchors.into_iter().chain(std::iter::once((old_steps.len(), new_steps.len()))) {
        for (index, step) in old_steps[old_next..old_anchor].iter().enumerate() {
            push(step_diff(step, Some(old_next + index), None, &step.actions, &[]));
        }
        for (index, step) in new_steps[new_next..new_anchor].iter().enumerate() {
            push(step_diff(step, None, Some(new_next + index), &[], &step.actions));
        }
        if let (Some(old), Some(new)) = (old_steps.get(old_anchor), new_steps.get(new_anchor)) {
            push(step_diff(new, Some(old_anchor), Some(new_anchor), &old.actions, &new.actions));
        }
        old_next = old_anchor + 1;
        new_next = new_anchor + 1;
    }
    diffs
}

/// The action changes between two action lists.
pub fn diff_actions(before: &[Action], after: &[Action]) -> Vec<ActionChange> {
    let mut changes = Vec::new();
    let mut old_next = 0;
    let mut new_next = 0;
    let anchors = lcs(before, after, |a, b| a == b);
    for (old_anchor, new_anchor) in anchors.into_iter().chain(std::iter::once((before.len(), after.len()))) {
        gap_changes(before, old_next..old_anchor, after, new_next..new_anchor, &mut changes);
        old_next = old_anchor + 1;
        new_next = new_anchor + 1;
    }
    changes
}

fn step_diff(
    step: &RecordedStep,
    before: Option<usize>,
    after: Option<usize>,
    old_actions: &[Action],
    new_actions: &[Action],
) -> StepDiff {
    StepDiff {
        kind: step.kind,
        text: step.text.clone(),
        before,
        after,
        changes: diff_actions(old_actions, new_actions),
    }
}

fn gap_changes(
    before: &[Action],
    old_range: std::ops::Range<usize>,
    after: &[Action],
    new_range: std::ops::Range<usize>,
    changes: &mut Vec<ActionChange>,
) {
    let mut paired = vec![false; new_range.len()];
    for old_index in old_range {
        let old = &before[old_index];
        let partner = new_range
            .clone()
            .zip(paired.iter_mut())
            .find(|(new_index, used)| !**used && after[*new_index].type_name() == old.type_name());
        match partner {
            Some((new_index, used)) => {
                *used = true;
                changes.push(ActionChange::Changed {
                    before_index: old_index,
                    after_index: new_index,
                    before: Box::new(old.clone()),
                    after: Box::new(after[new_index].clone()),
                });
            }
            None => changes.push(ActionChange::Removed { index: old_index, action: old.clone() }),
        }
    }
    for (new_index, used) in new_range.zip(paired) {
        if !used {
            changes.push(ActionChange::Added { index: new_index, action: after[new_index].clone() });
        }
    }
}

// Index pairs of a longest common subsequence, in order.
fn lcs<T>(a: &[T], b: &[T], same: impl Fn(&T, &T) -> bool) -> Vec<(usize, usize)> {
    let width = b.len() + 1;
    let mut lengths = vec![0usize; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lengths[i * width + j] = if same(&a[i], &b[j]) {
                lengths[(i + 1) * width + j + 1] + 1
            } else {
                lengths[(i + 1) * width + j].max(lengths[i * width + j + 1])
            };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if same(&a[i], &b[j]) {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StepSpec;
    use crate::target::Target;

    fn click(name: &str) -> Action {
        Action::Click { target: Target::role("button", name), timeout_ms: None }
    }

    fn goto(url: &str) -> Action {
        Action::Goto { url: url.into(), timeout_ms: None }
    }

    fn recording(steps: &[(&str, Vec<Action>)]) -> Recording {
        Recording::new(
            "features/a.feature",
            "A",
            steps
                .iter()
                .map(|(text, actions)| RecordedStep::new(StepSpec::new(StepKind::Action, *text), actions.clone()))
                .collect(),
        )
    }

    #[test]
    fn identical_lists_have_no_changes() {
        let actions = [goto("/"), click("A")];
        assert!(diff_actions(&actions, &actions).is_empty());
    }

    #[test]
    fn same_type_rewrites_pair_as_changes() {
        let before = [goto("/"), click("Buy"), click("Pay")];
        let after = [goto("/"), click("Buy now"), click("Pay")];
        assert_eq!(
            diff_actions(&before, &after),
            vec![ActionChange::Changed {
                before_index: 1,
                after_index: 1,
                before: Box::new(click("Buy")),
                after: Box::new(click("Buy now")),
            }]
        );
    }

    #[test]
    fn different_types_are_removed_and_added() {
        let before = [click("Rooms"), goto("/guest")];
        let after = [goto("/rooms"), goto("/guest"), click("Next")];
        assert_eq!(
            diff_actions(&before, &after),
            vec![
                ActionChange::Removed { index: 0, action: click("Rooms") },
                ActionChange::Added { index: 0, action: goto("/rooms") },
                ActionChange::Added { index: 2, action: click("Next") },
            ]
        );
    }

    #[test]
    fn recordings_diff_by_step_and_list_only_changed_steps() {
        let committed = recording(&[
            ("I open the shop", vec![goto("/")]),
            ("I buy", vec![click("Buy")]),
            ("I leave", vec![click("Bye")]),
        ]);
        let proposed = recording(&[
            ("I open the shop", vec![goto("/")]),
            ("I buy", vec![click("Buy now")]),
            ("I pay", vec![click("Pay")]),
        ]);
        let diff = diff_recordings(Some(&committed), &proposed);
        let summary: Vec<(&str, Option<usize>, Option<usize>, usize)> =
            diff.iter().map(|step| (step.text.as_str(), step.before, step.after, step.changes.len())).collect();
        assert_eq!(
            summary,
            [("I buy", Some(1), Some(1), 1), ("I leave", Some(2), None, 1), ("I pay", None, Some(2), 1),]
        );
        assert!(matches!(diff[1].changes[0], ActionChange::Removed { .. }));
        assert!(matches!(diff[2].changes[0], ActionChange::Added { .. }));
    }

    #[test]
    fn a_positional_target_replaced_by_a_scope_is_a_changed_action() {
        let positional = Action::Check {
            target: Target { css: vec!["tr:nth-child(2) input".into()], ..Target::default() },
            timeout_ms: None,
        };
        let scoped = Action::Check {
            target: Target {
                role: Some("checkbox".into()),
                within: Some(Box::new(crate::target::Scope {
                    container: Target { role: Some("row".into()), ..Target::default() },
                    has_text: Some("Order 1002".into()),
                    has_text_regex: None,
                })),
                ..Target::default()
            },
            timeout_ms: None,
        };
        let changes = diff_actions(std::slice::from_ref(&positional), std::slice::from_ref(&scoped));
        assert_eq!(
            changes,
            vec![ActionChange::Changed {
                before_index: 0,
                after_index: 0,
                before: Box::new(positional),
                after: Box::new(scoped.clone()),
            }]
        );
        let mut other_row = scoped.clone();
        if let Some(scope) = other_row.target_mut().and_then(|target| target.within.as_mut()) {
            scope.has_text = Some("Order 1003".into());
        }
        assert_eq!(diff_actions(std::slice::from_ref(&scoped), std::slice::from_ref(&other_row)).len(), 1);
    }

    #[test]
    fn a_first_recording_is_all_additions() {
        let proposed = recording(&[("I open", vec![goto("/"), click("Go")]), ("idle", vec![])]);
        let diff = diff_recordings(None, &proposed);
        assert_eq!(diff.len(), 1);
        assert_eq!(diff[0].changes.len(), 2);
        assert_eq!(diff[0].after, Some(0));
    }
}
