//! What a recording session knows of the scenario's steps, whatever the medium: which step the
//! agent announced, which Then steps a check verified, and whether the agent may end. The
//! browser gateway and the API gateway keep one each, so the rules are the same for both: steps
//! in order, a Then step verified only by checks that hold its values, and success refused once
//! while a Then step is unverified.

use std::ops::Range;

use saffron_recording::{Masker, StepKind, StepSpec};

use super::gateway::{Finish, Values};

pub(crate) struct Ledger {
    steps: Vec<StepSpec>,
    segment: Range<usize>,
    current: Option<usize>,
    verified: Vec<bool>,
    /// Per Then step, the values its text and table hold (row values filled in); empty for
    /// the other steps.
    then_values: Vec<Vec<String>>,
    /// Per step, those of its values no check of it holds yet: a Then step is verified once
    /// each is in one of its checks.
    unchecked: Vec<Vec<String>>,
    refused_done: bool,
}

impl Ledger {
    pub(crate) fn new(steps: Vec<StepSpec>, segment: Range<usize>, values: &Values) -> Ledger {
        let then_values: Vec<Vec<String>> = steps
            .iter()
            .enumerate()
            .map(|(index, step)| match step.kind {
                StepKind::Outcome => step_values(&step.text, values.table(index), &values.params),
                _ => Vec::new(),
            })
            .collect();
        Ledger {
            verified: vec![false; steps.len()],
            unchecked: then_values.clone(),
            then_values,
            steps,
            segment,
            current: None,
            refused_done: false,
        }
    }

    /// The 0-based step the agent announced last.
    pub(crate) fn current(&self) -> Option<usize> {
        self.current
    }

    pub(crate) fn step(&self, index: usize) -> &StepSpec {
        &self.steps[index]
    }

    pub(crate) fn segment(&self) -> &Range<usize> {
        &self.segment
    }

    /// The values a check of Then step `index` must hold one of (none for other steps).
    pub(crate) fn then_values(&self, index: usize) -> &[String] {
        &self.then_values[index]
    }

    /// Step `number` (from 1) is the one the agent performs now; `then_hint` is said of a Then
    /// step.
    pub(crate) fn announce(&mut self, number: usize, then_hint: &str) -> Result<String, String> {
        let index = number.wrapping_sub(1);
        if !self.segment.contains(&index) {
            return Err(format!(
                "there is no step {number} to perform here: announce one of steps {} to {}",
                self.segment.start + 1,
                self.segment.end
            ));
        }
        if self.current.is_some_and(|current| index < current) {
            return Err(format!(
                "step {number} comes before the step you announced last ({}): steps are performed in order",
                self.current.map_or(0, |current| current + 1)
            ));
        }
        self.current = Some(index);
        let step = &self.steps[index];
        let then = if step.kind == StepKind::Outcome { then_hint } else { "" };
        Ok(format!("Step {number} announced: {}.{then}", step.text))
    }

    /// A check of the current step held, and holds `values` of it.
    pub(crate) fn credit(&mut self, values: &[String]) {
        if let Some(step) = self.current {
            self.unchecked[step].retain(|value| !values.contains(value));
            self.verified[step] = self.unchecked[step].is_empty();
        }
    }

    /// Why a check that holds none of the current Then step's values is not taken.
    pub(crate) fn not_about(&self, step: usize) -> String {
        let quoted: Vec<String> = self.then_values[step].iter().map(|value| format!("\"{value}\"")).collect();
        format!(
            "this check is not about step {} \"{}\": it holds none of the step's values ({}), and a Then step is \
             verified by checks that do",
            step + 1,
            self.steps[step].text,
            quoted.join(", ")
        )
    }

    /// The agent ends the session: the answer, and how it ended once it has.
    pub(crate) fn done(
        &mut self,
        success: bool,
        narrative: &str,
        masker: &Masker,
    ) -> (Result<String, String>, Option<Finish>) {
        if !success {
            return (
                Ok("Recorded as a failure of the application.".into()),
                Some(Finish::Failure(masker.mask(narrative))),
            );
        }
        let missing: Vec<usize> = self
            .segment
            .clone()
            .filter(|&index| self.steps[index].kind == StepKind::Outcome && !self.verified[index])
            .collect();
        if missing.is_empty() {
            return (Ok("Done.".into()), Some(Finish::Success));
        }
        if !self.refused_done {
            self.refused_done = true;
            let list: Vec<String> = missing
                .iter()
                .map(|index| {
                    let unchecked = &self.unchecked[*index];
                    let values = if unchecked.is_empty() {
                        String::new()
                    } else {
                        let quoted: Vec<String> = unchecked.iter().map(|value| format!("\"{value}\"")).collect();
                        format!(" (no check holds {})", quoted.join(", "))
                    };
                    format!("{} \"{}\"{values}", index + 1, self.steps[*index].text)
                })
                .collect();
            let message = format!(
                "not done: Then step(s) {} have no verified check. Announce each and verify it with saffron_assert, \
                 or call saffron_done with success=false if the application does not do what it says.",
                list.join(", ")
            );
            return (Err(message), None);
        }
        (Ok("Ended, unverified: the scenario is not green.".into()), Some(Finish::Unverified(missing)))
    }
}

/// The values of a step's text and table, each `<param>` as the row fills it in.
pub(crate) fn step_values(text: &str, table: Option<&Vec<Vec<String>>>, params: &[(String, String)]) -> Vec<String> {
    saffron_index::repair_rules::step_values(text, table.map(Vec::as_slice))
        .into_iter()
        .map(|value| {
            let name = value.strip_prefix('<').and_then(|rest| rest.strip_suffix('>'));
            match name.and_then(|name| params.iter().find(|(param, _)| param == name)) {
                Some((_, row_value)) => row_value.clone(),
                None => value,
            }
        })
        .collect()
}
