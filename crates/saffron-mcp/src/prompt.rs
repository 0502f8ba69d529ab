//! The `draft_feature` prompt: drafts a feature file from prose with the project's vocabulary
//! as the required wording, recorded steps first (the MCP twin of `saffron author`).

use std::fmt::Write as _;

use saffron_index::Snapshot;

use crate::tools::Status;

pub const NAME: &str = "draft_feature";
pub const DESCRIPTION: &str = "Draft a .saffron feature file from a prose description, reusing the project's \
     existing step wordings (recorded ones replay for free) and its StepSets.";

/// How many vocabulary lines the prompt carries; the rest are a `find_steps` call away.
const MAX_STEPS: usize = 300;

pub fn text(snapshot: &Snapshot, description: &str, path: Option<&str>) -> String {
    let mut entries: Vec<_> =
        snapshot.entries().into_iter().filter(|entry| !entry.uses.is_empty() || !entry.recordings.is_empty()).collect();
    entries.sort_by(|a, b| {
        (Status::from(a.status()).rank(), std::cmp::Reverse(a.count()), &a.text).cmp(&(
            Status::from(b.status()).rank(),
            std::cmp::Reverse(b.count()),
            &b.text,
        ))
    });
    let mut out = String::new();
    let _ = writeln!(out, "Draft a Saffron feature file for this behaviour:\n\n{}\n", description.trim());
    if let Some(path) = path {
        let _ = writeln!(out, "It will be saved as `{path}`.\n");
    }
    out.push_str(
        "Rules (Saffron records each step's browser actions once and replays them by the step's exact text):\n\
         1. Reuse the wordings below exactly, character for character, wherever they say what you mean. A \
         recorded text replays for free; any other text, even one with only a different quoted value, is \
         recorded once by an AI agent. Keep the wording and change only the value when you need another value, \
         and use an Outline's <column> when one scenario runs with several.\n\
         2. Prefer ✓ recorded over ○ unrecorded wordings; avoid ⚠ divergent ones when another fits.\n\
         3. Given sets the state, When acts, Then checks. Put the scenario's Then steps last; never a When after the \
         final Thens.\n\
         4. No secret or volatile literals: write {env:NAME} for passwords and tokens, {unique:name} for values \
         that must differ per run, {date+N} for dates.\n\
         5. Invoke a StepSet as a step without a colon: `StepSet signed in as the demo user`. `StepSet: name` with \
         a colon defines a new set; never write that to call one.\n\
         6. Write a .saffron file (Gherkin plus StepSets). Then call check_feature with the draft and fix every \
         error and near-duplicate warning before saving.\n\n",
    );
    let sets = snapshot.step_sets().definitions();
    if !sets.is_empty() {
        out.push_str("StepSets you can invoke (`StepSet <name>`):\n");
        for set in sets {
            let _ = writeln!(out, "- {}", set.name);
        }
        out.push('\n');
    }
    if entries.is_empty() {
        out.push_str(
            "The project has no steps yet: choose short, plain wordings that say what the user does and sees.\n",
        );
    } else {
        let _ = writeln!(out, "Existing step wordings ({} in all; recorded first, most used first):", entries.len());
        for entry in entries.iter().take(MAX_STEPS) {
            let status = Status::from(entry.status());
            let _ = writeln!(out, "- {} {}", status.badge(), entry.text);
        }
        if entries.len() > MAX_STEPS {
            let _ =
                writeln!(out, "({} more: call find_steps with an intent to search them)", entries.len() - MAX_STEPS);
        }
    }
    out
}
