//! Why a recording is stale: which of the scenario's steps differ from those it was recorded
//! for, and how. The steps are aligned first (a diff of the two step lists), so one step added
//! to a scenario reads as one missing step, not as every later step changed.

use std::collections::{BTreeSet, HashMap};

use saffron_recording::{Recording, StepKind, StepSpec, steps_digest_reading, table_keys_of};
use serde::Serialize;
use similar::{Algorithm, DiffOp, capture_diff_slices};

/// One way the scenario's steps and the recording's differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepDifference {
    pub change: StepChange,
    /// 1-based position of the step in the scenario; `None` for a step only the recording has.
    pub step: Option<usize>,
    /// 1-based position of the step in the recording; `None` for a step only the scenario has.
    pub recorded_step: Option<usize>,
    /// The step as recorded.
    pub recorded: Option<StepSpec>,
    /// The step as the scenario writes it now.
    pub now: Option<StepSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepChange {
    /// The same place in both, written differently.
    Changed(Vec<StepAspect>),
    /// The scenario has a step the recording lacks.
    Missing,
    /// The recording has a step the scenario no longer has.
    Extra,
}

/// What differs in a changed step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StepAspect {
    Kind,
    Text,
    Table,
    DocString,
}

impl StepChange {
    pub fn as_str(&self) -> &'static str {
        match self {
            StepChange::Changed(_) => "changed",
            StepChange::Missing => "missing",
            StepChange::Extra => "extra",
        }
    }
}

impl StepAspect {
    pub fn as_str(self) -> &'static str {
        match self {
            StepAspect::Kind => "kind",
            StepAspect::Text => "text",
            StepAspect::Table => "table",
            StepAspect::DocString => "docString",
        }
    }
}

/// How `current` (the scenario's steps now) differs from the steps `recording` was made for,
/// in scenario order. Empty when they differ in nothing the steps digest holds.
pub fn step_differences(recording: &Recording, current: &[StepSpec]) -> Vec<StepDifference> {
    let recorded = recording.step_specs();
    let reads: Vec<_> = recording.steps.iter().map(|step| table_keys_of(&step.actions)).collect();
    // Steps as small numbers, so the diff needs no ordering of steps.
    let mut ids: HashMap<&StepSpec, usize> = HashMap::new();
    let mut id = |spec| {
        let next = ids.len();
        *ids.entry(spec).or_insert(next)
    };
    let old: Vec<usize> = recorded.iter().map(&mut id).collect();
    let new: Vec<usize> = current.iter().map(&mut id).collect();
    let mut differences = Vec::new();
    let no_reads = BTreeSet::new();
    for op in capture_diff_slices(Algorithm::Myers, &old, &new) {
        let (old_index, old_len, new_index, new_len) = match op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete { old_index, old_len, new_index } => (old_index, old_len, new_index, 0),
            DiffOp::Insert { old_index, new_index, new_len } => (old_index, 0, new_index, new_len),
            DiffOp::Replace { old_index, old_len, new_index, new_len } => (old_index, old_len, new_index, new_len),
        };
        for offset in 0..old_len.max(new_len) {
            let before = (offset < old_len).then(|| old_index + offset);
            let after = (offset < new_len).then(|| new_index + offset);
            let change = match (before, after) {
                (Some(before), Some(after)) => {
                    let aspects = aspects(&recorded[before], &current[after], reads.get(before).unwrap_or(&no_reads));
                    if aspects.is_empty() {
                        continue;
                    }
                    StepChange::Changed(aspects)
                }
                (Some(_), None) => StepChange::Extra,
                _ => StepChange::Missing,
            };
            differences.push(StepDifference {
                change,
                step: after.map(|index| index + 1),
                recorded_step: before.map(|index| index + 1),
                recorded: before.map(|index| recorded[index].clone()),
                now: after.map(|index| current[index].clone()),
            });
        }
    }
    differences
}

fn aspects(recorded: &StepSpec, now: &StepSpec, reads: &BTreeSet<String>) -> Vec<StepAspect> {
    // Tables compare as the digest sees them: a value read through <table:key> is no difference.
    let table_digest = |table: &Option<Vec<Vec<String>>>| {
        let only_table = StepSpec { table: table.clone(), ..StepSpec::new(StepKind::Context, "") };
        steps_digest_reading(&[only_table], std::slice::from_ref(reads))
    };
    let mut aspects = Vec::new();
    if recorded.kind != now.kind {
        aspects.push(StepAspect::Kind);
    }
    if recorded.text != now.text {
        aspects.push(StepAspect::Text);
    }
    if table_digest(&recorded.table) != table_digest(&now.table) {
        aspects.push(StepAspect::Table);
    }
    if recorded.doc_string != now.doc_string {
        aspects.push(StepAspect::DocString);
    }
    aspects
}

#[cfg(test)]
mod tests {
    use saffron_recording::{Action, RecordedStep, Target};

    use super::*;

    fn step(kind: StepKind, text: &str) -> StepSpec {
        StepSpec::new(kind, text)
    }

    fn recording(steps: &[StepSpec]) -> Recording {
        let recorded = steps.iter().map(|spec| RecordedStep::new(spec.clone(), Vec::new())).collect();
        Recording::new("features/a.feature", "A", recorded)
    }

    fn summary(differences: &[StepDifference]) -> Vec<(String, Option<usize>, Option<usize>)> {
        differences
            .iter()
            .map(|difference| {
                let change = match &difference.change {
                    StepChange::Changed(aspects) => {
                        aspects.iter().map(|aspect| aspect.as_str()).collect::<Vec<_>>().join("+")
                    }
                    other => other.as_str().to_string(),
                };
                (change, difference.step, difference.recorded_step)
            })
            .collect()
    }

    #[test]
    fn each_kind_of_difference_is_named_at_its_step() {
        let base = vec![
            step(StepKind::Context, "I am on the shop"),
            step(StepKind::Action, "I search for \"tea\""),
            step(StepKind::Outcome, "I see 2 products"),
        ];
        let recorded = recording(&base);
        assert!(step_differences(&recorded, &base).is_empty());

        let mut edited = base.clone();
        edited[1].text = "I search for \"coffee\"".into();
        edited[2].kind = StepKind::Action;
        edited[2].doc_string = Some("note".into());
        assert_eq!(
            summary(&step_differences(&recorded, &edited)),
            [("text".to_string(), Some(2), Some(2)), ("kind+docString".to_string(), Some(3), Some(3))]
        );

        // One step added and one removed: the others stay aligned.
        let mut edited = base.clone();
        edited.insert(1, step(StepKind::Action, "I sign in"));
        edited.remove(3);
        assert_eq!(
            summary(&step_differences(&recorded, &edited)),
            [("missing".to_string(), Some(2), None), ("extra".to_string(), None, Some(3))]
        );
    }

    #[test]
    fn a_table_value_read_through_table_key_is_no_difference_and_a_key_is() {
        let table = |value: &str| Some(vec![vec!["Email".to_string(), value.to_string()]]);
        let spec = StepSpec { table: table("a@b.c"), ..step(StepKind::Context, "I sign in with") };
        let fill = Action::Fill {
            target: Target { label: Some("Email".into()), ..Target::default() },
            value: "<table:Email>".into(),
            timeout_ms: None,
        };
        let recorded = Recording::new("features/a.feature", "A", vec![RecordedStep::new(spec.clone(), vec![fill])]);
        let value_edit = StepSpec { table: table("x@y.z"), ..spec.clone() };
        assert!(step_differences(&recorded, &[value_edit]).is_empty());
        let key_edit = StepSpec { table: Some(vec![vec!["Mail".into(), "a@b.c".into()]]), ..spec };
        assert_eq!(summary(&step_differences(&recorded, &[key_edit])), [("table".to_string(), Some(1), Some(1))]);
    }
}
