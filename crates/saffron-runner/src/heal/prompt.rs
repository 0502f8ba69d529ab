//! What the repairing agent is told: the rules, and the failure on the page it takes over.

use std::fmt::Write as _;

use saffron_recording::{Action, StepSpec};

pub const SYSTEM: &str = "\
You repair a browser test whose replay just failed. You act only through the tools. What you do \
after announcing a step is recorded and replayed later without you.
Rules:
- First diagnose by looking (browser_snapshot, saffron_assert): did the interface change (a control \
renamed or moved, a page added or removed, slower loading), or does the application no longer do what \
the steps say (a defect)?
- A defect: call saffron_done with success=false and say what you saw. Never work around a defect.
- An interface change: announce the failed step with saffron_step before any action, do what remains \
of it, then every later step in order, verifying each Then step with saffron_assert. The Then steps' \
recorded checks are kept exactly as they are; yours only confirm them.
- Use refs from the latest snapshot. Type values as the step gives them: `<param>`, `<table:Key>` and \
`{env:NAME}` exactly as written.
- End with saffron_done success=true, `change` (what kind of change you adapted to) and, only when \
the new flow makes a Given or When step's wording untrue, `rewrites` with its new wording.";

pub struct Task<'a> {
    pub feature: &'a str,
    pub scenario: &'a str,
    pub steps: &'a [StepSpec],
    /// 0-based.
    pub failed_step: usize,
    /// The actions of the failed step replay performed before the failure.
    pub performed: &'a [Action],
    pub failed_action: &'a Action,
    pub failure: &'a str,
    pub url: &'a str,
    pub params: Vec<&'a str>,
    pub secret_names: &'a [String],
    /// The API services requests beside the page may go to; empty without request tools.
    pub services: &'a [(String, String, bool)],
    pub snapshot: &'a str,
    /// Set for the refine after a failed proof replay.
    pub refine: bool,
}

pub fn task(task: &Task<'_>) -> String {
    let mut text = String::new();
    write_head(&mut text, task.feature, task.scenario, task.refine);
    crate::record::prompt::write_values(&mut text, &task.params, task.secret_names, "type");
    crate::record::prompt::write_requests_beside(&mut text, task.services);
    write_failure(&mut text, task.steps, task.failed_step, task.failed_action, task.failure, task.performed);
    let number = task.failed_step + 1;
    let _ = write!(
        text,
        "Live page (it is where replay stopped): {}\nRepair steps {number} to {}. The page now:\n{}",
        task.url,
        task.steps.len(),
        task.snapshot
    );
    text
}

/// Which scenario is repaired and, for the refine after a failed proof, that its repair was
/// replayed and failed: how a repairing agent's task begins, whatever the medium.
pub(crate) fn write_head(text: &mut String, feature: &str, scenario: &str, refine: bool) {
    let _ = writeln!(text, "Feature file: {feature}\nScenario: {scenario}");
    if refine {
        text.push_str(
            "Your repair of this scenario was replayed from the start without you, and that replay failed below. \
             Repair it again from there.\n",
        );
    }
}

/// The steps with where replay failed marked, the failure, and what replay already did in the
/// failed step: what a repairing agent is told, whatever the medium.
pub(crate) fn write_failure(
    text: &mut String,
    steps: &[StepSpec],
    failed_step: usize,
    failed_action: &Action,
    failure: &str,
    performed: &[Action],
) {
    crate::record::prompt::write_steps(text, steps, |index| {
        if index < failed_step {
            " (replayed, passed)"
        } else if index == failed_step {
            " (FAILED here)"
        } else {
            ""
        }
    });
    let number = failed_step + 1;
    // The failure says which action it is about first; the task says it once.
    let named = format!("`{failed_action}`");
    let failure = failure.strip_prefix(&named).map_or(failure, |rest| rest.trim_start_matches(": "));
    let _ = writeln!(text, "Replay failed at step {number} on `{failed_action}`: {failure}");
    if !performed.is_empty() {
        let done: Vec<String> = performed.iter().map(|action| format!("`{action}`")).collect();
        let _ = writeln!(text, "Already performed in step {number} (do not repeat): {}", done.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use saffron_recording::{StepKind, Target};

    use super::*;

    #[test]
    fn the_task_marks_the_failed_step_and_what_replay_already_did_there() {
        let steps = vec![
            StepSpec::new(StepKind::Context, "I am on the sign-in page"),
            StepSpec::new(StepKind::Action, "I save the order"),
            StepSpec::new(StepKind::Outcome, "I see \"Order saved\""),
        ];
        let fill = Action::Fill { target: Target::role("textbox", "Customer"), value: "Ada".into(), timeout_ms: None };
        let click = Action::Click { target: Target::role("button", "Save order"), timeout_ms: None };
        let text = task(&Task {
            feature: "features/x.feature",
            scenario: "Save",
            steps: &steps,
            failed_step: 1,
            performed: std::slice::from_ref(&fill),
            failed_action: &click,
            // As the replay's red says it: the action first.
            failure: "`click button \"Save order\"`: no element matched",
            url: "http://127.0.0.1:1/orders/new",
            params: vec![],
            secret_names: &[],
            services: &[],
            snapshot: "- button \"Place order\" [ref=e4]",
            refine: false,
        });
        assert!(text.contains(
            "1. Given I am on the sign-in page (replayed, passed)\n2. When I save the order (FAILED here)\n3. Then"
        ));
        assert!(
            text.contains("Replay failed at step 2 on `click button \"Save order\"`: no element matched\n"),
            "{text}"
        );
        assert!(text.contains("Already performed in step 2 (do not repeat): `fill textbox \"Customer\" with \"Ada\"`"));
        assert!(text.contains("Live page (it is where replay stopped): http://127.0.0.1:1/orders/new"));
        assert!(!text.contains("replayed from the start without you"));
    }
}
