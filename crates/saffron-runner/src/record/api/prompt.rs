//! What the agent recording an `@api` scenario is told.

use std::fmt::Write as _;

use saffron_recording::StepSpec;

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
    let names: Vec<&str> = task.services.iter().map(|(name, _, _)| name.as_str()).collect();
    let default = crate::record::api::gateway::default_service(&names).map_or_else(
        |_| "name one in each request".to_owned(),
        |name| format!("without one, a request goes to {name}"),
    );
    let _ = writeln!(text, "Services ({default}):");
    for (name, base_url, pinned) in task.services {
        let contract = if *pinned { "contract pinned: check schema works" } else { "no contract pinned" };
        let _ = writeln!(text, "- {name}: {base_url} ({contract})");
    }
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
