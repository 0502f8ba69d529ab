//! The repaired recording, merged mechanically from what replay proved and what the agent did.
//! The rules do not trust the agent:
//!
//! - every step before the failed one keeps the recording that replay just performed;
//! - the failed step keeps the actions replay performed before the failure, then takes the
//!   agent's;
//! - a Then step keeps its committed actions whatever the agent did under it;
//! - any other step whose committed recording has assertions keeps exactly those assertions and
//!   never takes one the agent recorded: the agent may change how a run reaches a check, never
//!   what it checks.
//!
//! Each discard is written down as an adaptation note.

use saffron_recording::{Action, ActionChange, Recording, StepKind, diff_recordings};

/// What the merge starts from.
pub struct MergeInput<'a> {
    /// The recording replay performed (the committed one, or a pending proposal's).
    pub replayed: &'a Recording,
    /// The committed recording, whose assertions are sacred (the replayed one when there is
    /// no other).
    pub committed: &'a Recording,
    /// 0-based step replay stopped on, and how many of its actions it had performed.
    pub failed_step: usize,
    pub performed: usize,
    /// The agent's actions per step (empty for steps it did not perform).
    pub agent: &'a [Vec<Action>],
}

/// The merged actions per step, and one note per adaptation the merge made.
pub fn merge(input: &MergeInput<'_>) -> (Vec<Vec<Action>>, Vec<String>) {
    let mut notes = Vec::new();
    let mut merged = Vec::with_capacity(input.replayed.steps.len());
    for (index, step) in input.replayed.steps.iter().enumerate() {
        let number = index + 1;
        let agent = input.agent.get(index).map(Vec::as_slice).unwrap_or_default();
        if index < input.failed_step {
            if !agent.is_empty() {
                notes.push(format!(
                    "recording: step {number}: the agent's {} action(s) discarded; the step replayed as recorded",
                    agent.len()
                ));
            }
            merged.push(step.actions.clone());
            continue;
        }
        let committed = input.committed.steps.get(index).map(|step| step.actions.as_slice()).unwrap_or_default();
        if step.kind == StepKind::Outcome {
            if agent != committed && !agent.is_empty() {
                notes.push(format!(
                    "recording: step {number} is a Then step: the agent's {} action(s) discarded, its {} committed \
                     action(s) kept as recorded",
                    agent.len(),
                    committed.len()
                ));
            }
            merged.push(committed.to_vec());
            continue;
        }
        let mut actions: Vec<Action> = if index == input.failed_step {
            step.actions.iter().take(input.performed).cloned().collect()
        } else {
            Vec::new()
        };
        let sacred: Vec<&Action> = committed.iter().filter(|action| action.is_assertion()).collect();
        if sacred.is_empty() {
            actions.extend(agent.iter().cloned());
        } else {
            let discarded = agent.iter().filter(|action| action.is_assertion()).count();
            if discarded > 0 {
                notes.push(format!(
                    "recording: step {number}: the agent's {discarded} check(s) discarded; the committed check(s) kept"
                ));
            }
            actions.extend(agent.iter().filter(|action| !action.is_assertion()).cloned());
            // The checks replay already performed in the failed step are in the prefix.
            let kept_before = if index == input.failed_step {
                step.actions.iter().take(input.performed).filter(|action| action.is_assertion()).count()
            } else {
                0
            };
            actions.extend(sacred.into_iter().skip(kept_before).cloned());
        }
        if index > input.failed_step && agent.is_empty() && !step.actions.is_empty() {
            notes.push(format!("recording: step {number}: the agent performed no action under it"));
        }
        merged.push(actions);
    }
    (merged, notes)
}

/// `flow change:` notes: navigation actions (clicks, press, goto, tab moves) the repair added
/// or dropped, per step. A same-type rewrite (a renamed button) is a locator change, not a
/// flow change, and adds no note.
pub fn flow_changes(before: &Recording, after: &Recording) -> Vec<String> {
    let navigates = |action: &Action| {
        matches!(
            action,
            Action::Click { .. }
                | Action::DoubleClick { .. }
                | Action::Press { .. }
                | Action::Goto { .. }
                | Action::SwitchTab { .. }
        )
    };
    let mut notes = Vec::new();
    for step in diff_recordings(Some(before), after) {
        for change in &step.changes {
            match change {
                ActionChange::Added { action, .. } if navigates(action) => {
                    notes.push(format!("flow change: step \"{}\": added `{action}`", step.text));
                }
                ActionChange::Removed { action, .. } if navigates(action) => {
                    notes.push(format!("flow change: step \"{}\": dropped `{action}`", step.text));
                }
                _ => {}
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use saffron_recording::{RecordedStep, StepSpec, Target};

    use super::*;

    fn click(name: &str) -> Action {
        Action::Click { target: Target::role("button", name), timeout_ms: None }
    }

    fn fill(name: &str) -> Action {
        Action::Fill { target: Target::role("textbox", name), value: "x".into(), timeout_ms: None }
    }

    fn text(expected: &str) -> Action {
        Action::ExpectText {
            target: Target::role("status", ""),
            text: Some(expected.into()),
            text_regex: None,
            timeout_ms: None,
        }
    }

    fn recording(steps: Vec<(StepKind, Vec<Action>)>) -> Recording {
        Recording::new(
            "features/a.feature",
            "A",
            steps
                .into_iter()
                .enumerate()
                .map(|(index, (kind, actions))| {
                    RecordedStep::new(StepSpec::new(kind, format!("step {index}")), actions)
                })
                .collect(),
        )
    }

    #[test]
    fn the_failed_step_keeps_what_replay_performed_and_takes_the_agents_rest() {
        let committed = recording(vec![
            (StepKind::Context, vec![click("Start")]),
            (StepKind::Action, vec![fill("Name"), click("Save")]),
            (StepKind::Outcome, vec![text("Saved")]),
        ]);
        let agent = vec![vec![], vec![click("Place order")], vec![text("Saved")]];
        let (merged, notes) = merge(&MergeInput {
            replayed: &committed,
            committed: &committed,
            failed_step: 1,
            performed: 1,
            agent: &agent,
        });
        assert_eq!(merged, vec![vec![click("Start")], vec![fill("Name"), click("Place order")], vec![text("Saved")]]);
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_then_step_keeps_its_committed_checks_whatever_the_agent_recorded() {
        let committed =
            recording(vec![(StepKind::Action, vec![click("Save")]), (StepKind::Outcome, vec![text("Total: €13.50")])]);
        // The agent "verified" the wrong total the defect shows, and clicked to get there.
        let agent = vec![vec![click("Place order")], vec![click("Recalculate"), text("Total: €14.50")]];
        let (merged, notes) = merge(&MergeInput {
            replayed: &committed,
            committed: &committed,
            failed_step: 0,
            performed: 0,
            agent: &agent,
        });
        assert_eq!(merged[1], vec![text("Total: €13.50")]);
        assert!(notes[0].contains("step 2 is a Then step"), "{notes:?}");
    }

    #[test]
    fn an_action_step_with_checks_keeps_the_committed_checks_after_the_agents_actions() {
        let committed = recording(vec![(StepKind::Action, vec![click("Save"), text("Order saved")])]);
        let agent = vec![vec![click("Place order"), click("Confirm"), text("Saved!")]];
        let (merged, notes) = merge(&MergeInput {
            replayed: &committed,
            committed: &committed,
            failed_step: 0,
            performed: 0,
            agent: &agent,
        });
        assert_eq!(merged[0], vec![click("Place order"), click("Confirm"), text("Order saved")]);
        assert!(notes[0].contains("1 check(s) discarded"), "{notes:?}");

        // Failed on the check itself after the click passed: the click stays, the check too.
        let agent = vec![vec![click("Continue")]];
        let (merged, _) = merge(&MergeInput {
            replayed: &committed,
            committed: &committed,
            failed_step: 0,
            performed: 1,
            agent: &agent,
        });
        assert_eq!(merged[0], vec![click("Save"), click("Continue"), text("Order saved")]);
    }

    #[test]
    fn steps_before_the_failure_replay_as_recorded() {
        let committed =
            recording(vec![(StepKind::Context, vec![click("Start")]), (StepKind::Action, vec![click("Go")])]);
        let agent = vec![vec![click("Elsewhere")], vec![click("Go now")]];
        let (merged, notes) = merge(&MergeInput {
            replayed: &committed,
            committed: &committed,
            failed_step: 1,
            performed: 0,
            agent: &agent,
        });
        assert_eq!(merged, vec![vec![click("Start")], vec![click("Go now")]]);
        assert!(notes[0].contains("step 1: the agent's 1 action(s) discarded"), "{notes:?}");
    }

    #[test]
    fn an_added_or_dropped_navigation_is_a_flow_change_and_a_renamed_button_is_not() {
        let before = recording(vec![(StepKind::Action, vec![click("Save")])]);
        let renamed = recording(vec![(StepKind::Action, vec![click("Place order")])]);
        assert!(flow_changes(&before, &renamed).is_empty());
        let inserted = recording(vec![(StepKind::Action, vec![click("Save"), click("Continue")])]);
        let notes = flow_changes(&before, &inserted);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("flow change: step \"step 0\": added `click"), "{notes:?}");
    }
}
