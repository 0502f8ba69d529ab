//! What the agent recording an `@api` scenario is told.

use std::fmt::Write as _;

use saffron_recording::{Action, StepSpec};

use crate::record::prompt::{write_steps, write_values};

pub const SYSTEM: &str = "\
You record an API test. You act only through the tools; your tool calls are recorded and \
replayed later without you.
Rules:
- Before the requests of a step, announce it with saffron_step (its number). Perform the steps in order.
- Send requests with saffron_request. Write values as the step gives them: `<param>`, `<table:Key>` and \
`{env:NAME}` exactly as written; Saffron fills them in. Use `{unique:name}` for a value that must be new on \
every run (a name or an email a record must not share). Never invent data the step does not give.
- A value you need from a response (an id, a token): keep it with saffron_extract and write \
`{captured:name}`. Never copy it by hand.
- A step that names who acts (As \"alice\", \"bob\" signs in) sends its requests with that session \
(session: \"alice\"): each session has its own client and cookies; checks read that session's latest response.
- Verify every Then step with saffron_assert (status, field or schema) under its announcement. Expect a \
status only where the step names it.
- If the application does not do what a step says, call saffron_done with success=false and say what you saw.
- When every step is done and verified, call saffron_done with success=true.";

/// Everything the task names about the scenario.
pub struct Task<'a> {
    pub feature: &'a str,
    pub scenario: &'a str,
    pub steps: &'a [StepSpec],
    /// (name, base URL, whether its contract is pinned).
    pub services: &'a [(String, String, bool)],
    /// Outline column names.
    pub params: Vec<&'a str>,
    pub secret_names: &'a [String],
    /// Values the feature's Fixture kept, by name.
    pub captured: &'a [&'a str],
    /// Why this is a second attempt: the step and message the proof replay failed with.
    pub refine: Option<String>,
}

pub fn task(task: &Task<'_>) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "Feature file: {}\nScenario: {}", task.feature, task.scenario);
    write_services(&mut text, task.services);
    if let Some(why) = &task.refine {
        let _ = writeln!(
            text,
            "A first recording of this scenario failed when replayed without you: {why}\nRecord it again so that \
             it replays: values kept from responses as {{captured:name}}, new records with {{unique:name}}."
        );
    }
    write_values(&mut text, &task.params, task.secret_names, "send");
    if !task.captured.is_empty() {
        let names: Vec<String> = task.captured.iter().map(|name| format!("{{captured:{name}}}")).collect();
        let _ = writeln!(text, "Kept by the feature's Fixture: {}", names.join(", "));
    }
    write_steps(&mut text, task.steps, |_| "");
    let _ = write!(text, "Perform steps 1 to {}.", task.steps.len());
    text
}

/// The services a request may name, and the one it goes to without a name.
pub(crate) fn write_services(text: &mut String, services: &[(String, String, bool)]) {
    let names: Vec<&str> = services.iter().map(|(name, _, _)| name.as_str()).collect();
    let default = crate::record::api::gateway::default_service(&names).map_or_else(
        |_| "name one in each request".to_owned(),
        |name| format!("without one, a request goes to {name}"),
    );
    let _ = writeln!(text, "Services ({default}):");
    for (name, base_url, pinned) in services {
        let contract = if *pinned { "contract pinned: check schema works" } else { "no contract pinned" };
        let _ = writeln!(text, "- {name}: {base_url} ({contract})");
    }
}

pub const REPAIR_SYSTEM: &str = "\
You repair an API test whose replay just failed. You act only through the tools. What you do after \
announcing a step is recorded and replayed later without you.
Rules:
- First diagnose from the failure and the response, and by sending requests before you announce a step \
(those are not recorded; prefer GET): did the API change how it is called (a path moved, a field or \
header renamed or now required), or does it no longer do what the steps say (a defect)?
- A defect: call saffron_done with success=false and say what you saw. Never work around a defect.
- A change in how it is called: announce the failed step with saffron_step, send what remains of it, \
then perform every later step in order, verifying each Then step with saffron_assert. The Then steps' \
recorded checks are kept exactly as they are; yours only confirm them. A step keeps its values and its \
operation: the same method on the same service.
- Write values as the step gives them: `<param>`, `<table:Key>` and `{env:NAME}` exactly as written; \
`{unique:name}` for a value that must be new on every run. A value you need from a response: keep it \
with saffron_extract and write `{captured:name}`. Never copy it by hand.
- Expect a status only where the step names it.
- End with saffron_done success=true and, only when the changed API makes a Given or When step's wording \
untrue, `rewrites` with its new wording.";

/// What the agent repairing an `@api` scenario is told of it.
pub struct RepairTask<'a> {
    pub feature: &'a str,
    pub scenario: &'a str,
    pub steps: &'a [StepSpec],
    pub services: &'a [(String, String, bool)],
    /// 0-based.
    pub failed_step: usize,
    /// The actions of the failed step replay performed before the failure.
    pub performed: &'a [Action],
    pub failed_action: &'a Action,
    /// The replay's failure, masked.
    pub failure: &'a str,
    /// The latest response the replay got, as the agent reads a response (masked).
    pub response: Option<&'a str>,
    pub params: Vec<&'a str>,
    pub secret_names: &'a [String],
    /// The values the replay kept (a Fixture's among them), by name.
    pub captured: &'a [&'a str],
    /// Set for the refine after a failed proof replay.
    pub refine: bool,
}

pub fn repair_task(task: &RepairTask<'_>) -> String {
    let mut text = String::new();
    crate::heal::prompt::write_head(&mut text, task.feature, task.scenario, task.refine);
    write_services(&mut text, task.services);
    write_values(&mut text, &task.params, task.secret_names, "send");
    if !task.captured.is_empty() {
        let names: Vec<String> = task.captured.iter().map(|name| format!("{{captured:{name}}}")).collect();
        let _ = writeln!(text, "Kept so far (use them as written): {}", names.join(", "));
    }
    crate::heal::prompt::write_failure(
        &mut text,
        task.steps,
        task.failed_step,
        task.failed_action,
        task.failure,
        task.performed,
    );
    let number = task.failed_step + 1;
    if let Some(response) = task.response {
        let _ = writeln!(text, "The latest response the replay got:\n{response}");
    }
    let _ = write!(text, "Repair steps {number} to {}.", task.steps.len());
    text
}
