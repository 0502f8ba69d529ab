//! What the agent is told: the rules (system prompt) and the task (the scenario, its numbered
//! steps, the first snapshot). Short on purpose: every word is paid for on every turn.

use std::fmt::Write as _;
use std::ops::Range;

use saffron_recording::StepSpec;

pub const SYSTEM: &str = "\
You record a browser test. You act only through the tools; your tool calls are recorded and \
replayed later without you.
Rules:
- Before the actions of a step, announce it with saffron_step (its number). Perform the steps in order.
- Verify every Then step with saffron_assert under its announcement. Never change the page to make a check pass.
- Use refs from the latest snapshot. Type values as the step gives them: `<param>`, `<table:Key>` and \
`{env:NAME}` exactly as written; Saffron fills them in. Never invent data the step does not give.
- If the application does not do what a step says, call saffron_done with success=false and say what you saw.
- When every step is done and verified, call saffron_done with success=true.";

/// Everything the task names about the scenario.
pub struct Task<'a> {
    pub feature: &'a str,
    pub scenario: &'a str,
    pub steps: &'a [StepSpec],
    /// The steps the agent performs (0-based); the others are done already or follow later.
    pub segment: Range<usize>,
    pub base_url: &'a str,
    /// Outline column names.
    pub params: Vec<&'a str>,
    pub secret_names: &'a [String],
    /// The project's files the agent may upload.
    pub upload_files: &'a [String],
    /// The API services requests beside the page may go to (name, base URL, whether a contract
    /// is pinned); empty when the agent has no request tools.
    pub services: &'a [(String, String, bool)],
    pub snapshot: &'a str,
    /// Why this is a second attempt: the step and message the proof replay failed with.
    pub refine: Option<String>,
}

pub fn task(task: &Task<'_>) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "Feature file: {}\nScenario: {}\nBase URL: {}", task.feature, task.scenario, task.base_url);
    if let Some(why) = &task.refine {
        let _ = writeln!(
            text,
            "A first recording of this scenario failed when replayed without you: {why}\nRecord it again so that \
             it replays; choose steadier elements or add a wait where the page was not ready."
        );
    }
    write_values(&mut text, &task.params, task.secret_names, "type");
    if !task.upload_files.is_empty() {
        let _ = writeln!(text, "Files you may upload (as written): {}", task.upload_files.join(", "));
    }
    write_requests_beside(&mut text, task.services);
    write_steps(&mut text, task.steps, |index| {
        if task.segment.contains(&index) { "" } else { " (done by Saffron, not by you)" }
    });
    let _ = write!(
        text,
        "Perform steps {} to {}. The page now:\n{}",
        task.segment.start + 1,
        task.segment.end,
        task.snapshot
    );
    text
}

/// The services a step may call beside the page, and how, when the agent may.
pub fn write_requests_beside(text: &mut String, services: &[(String, String, bool)]) {
    if services.is_empty() {
        return;
    }
    text.push_str(
        "A step about the API: send its request with saffron_request (with this browser's cookies: signed in \
         here, signed in there), keep a value with saffron_extract and write {captured:name}, and check the \
         response with saffron_assert_response (a status only where the step names it).\n",
    );
    crate::record::api::prompt::write_services(text, services);
}

/// The Outline's columns and the secrets the agent may use, as it writes them (`verb`: type,
/// send).
pub fn write_values(text: &mut String, params: &[&str], secret_names: &[String], verb: &str) {
    if !params.is_empty() {
        let names: Vec<String> = params.iter().map(|name| format!("<{name}>")).collect();
        let _ = writeln!(text, "Outline values ({verb} them as written): {}", names.join(", "));
    }
    if !secret_names.is_empty() {
        let names: Vec<String> = secret_names.iter().map(|name| format!("{{env:{name}}}")).collect();
        let _ = writeln!(text, "Secrets you may {verb} (as written): {}", names.join(", "));
    }
}

/// The numbered steps with their tables and doc strings, each step followed by `mark(index)`.
pub fn write_steps(text: &mut String, steps: &[StepSpec], mark: impl Fn(usize) -> &'static str) {
    text.push_str("Steps:\n");
    for (index, step) in steps.iter().enumerate() {
        let _ = writeln!(text, "{}. {} {}{}", index + 1, step.kind.keyword(), step.text, mark(index));
        for row in step.table.iter().flatten() {
            let _ = writeln!(text, "   | {} |", row.join(" | "));
        }
        if let Some(doc) = &step.doc_string {
            let _ = writeln!(text, "   \"\"\"\n{}\n   \"\"\"", indent(doc));
        }
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|line| format!("   {line}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use saffron_recording::StepKind;

    use super::*;

    #[test]
    fn the_task_numbers_the_steps_with_tables_and_doc_strings_and_names_no_value() {
        let steps = vec![
            StepSpec::new(StepKind::Context, "I am on the sign-in page"),
            StepSpec {
                table: Some(vec![vec!["Customer".into(), "<customer>".into()]]),
                ..StepSpec::new(StepKind::Action, "I fill in the order form:")
            },
            StepSpec { doc_string: Some("Deliver\nsoon".into()), ..StepSpec::new(StepKind::Outcome, "I see the note") },
        ];
        let secrets = vec!["DEMO_PASSWORD".to_string()];
        let text = task(&Task {
            feature: "features/x.feature",
            scenario: "Order for <customer>",
            steps: &steps,
            segment: 0..3,
            base_url: "http://127.0.0.1:1",
            params: vec!["customer"],
            secret_names: &secrets,
            upload_files: &["features/fixtures/receipt.txt".to_string()],
            services: &[],
            snapshot: "- heading \"Sign in\" [ref=e1]",
            refine: None,
        });
        assert!(text.contains(
            "1. Given I am on the sign-in page\n2. When I fill in the order form:\n   | Customer | <customer> |"
        ));
        assert!(text.contains("3. Then I see the note\n   \"\"\"\n   Deliver\n   soon\n   \"\"\""));
        assert!(text.contains("{env:DEMO_PASSWORD}") && text.contains("<customer>"));
        assert!(text.contains("Files you may upload (as written): features/fixtures/receipt.txt\n"));
        assert!(text.ends_with("- heading \"Sign in\" [ref=e1]"));
    }
}
