//! Hover: what a step costs and does, what a StepSet expands to, and a scenario's recording.

use std::path::Path;
use std::sync::Arc;

use saffron_index::{Entry, RecordingState, Snapshot, StepStatus};
use saffron_syntax::Span;

use crate::completion::{badge, status_detail};
use crate::context::{self, scenario_header_at, step_at};

#[derive(Debug, Clone, PartialEq)]
pub struct Hover {
    /// Markdown.
    pub markdown: String,
    /// What the hover is about.
    pub span: Span,
}

pub fn hover(snapshot: &Snapshot, path: &Path, offset: usize) -> Option<Hover> {
    let file = context::file(snapshot, path)?;
    let document = file.document();
    if let Some(step) = step_at(document, file.text(), offset) {
        if step.is_invocation {
            return Some(Hover { markdown: step_set_markdown(snapshot, &step.text), span: step.span });
        }
        let markdown = match snapshot.entry(&step.text) {
            Some(entry) => entry_markdown(snapshot, entry),
            None => format!("**{}**", badge(StepStatus::Unrecorded)),
        };
        return Some(Hover { markdown, span: step.span });
    }
    let scenario = scenario_header_at(document, file.text(), offset)?;
    if scenario.kind == saffron_syntax::ScenarioKind::StepSet {
        return Some(Hover {
            markdown: step_set_markdown(snapshot, &scenario.header.name),
            span: scenario.header.line_span,
        });
    }
    let status = snapshot.scenarios_in(path).into_iter().find(|status| status.location == scenario.header.location)?;
    let mut markdown = match &status.recording {
        RecordingState::Fresh => "**recording: fresh**: replays at zero tokens".to_string(),
        RecordingState::Stale => {
            "**recording: stale**: the steps changed since it was recorded; the next run records it again".to_string()
        }
        RecordingState::Unrecorded => "**not recorded yet**: the first run is performed by the agent".to_string(),
        RecordingState::Unreadable { reason } => format!("**recording unreadable**: {reason}"),
    };
    markdown.push_str(&format!("\n\n`{}`", status.recording_path.display()));
    if status.rows > 0 {
        markdown.push_str(&format!(" · one recording for {} Examples rows", status.rows));
    }
    if let Some(proposal) = &status.pending_proposal {
        markdown.push_str(&format!("\n\n**proposal pending review**: `{}`", proposal.display()));
    }
    Some(Hover { markdown, span: scenario.header.line_span })
}

/// Status, usage and the recorded actions of a step text, in Markdown.
pub(crate) fn entry_markdown(snapshot: &Snapshot, entry: &Arc<Entry>) -> String {
    let status = entry.status();
    let mut out = format!(
        "**{}** · written {}× · {}",
        badge(status),
        entry.count(),
        match entry.recordings.len() {
            0 => "in no recording".to_string(),
            1 => "in 1 recording".to_string(),
            n => format!("in {n} recordings"),
        }
    );
    out.push_str(&format!("\n\n_{}_", status_detail(status)));
    if entry.over_http() {
        out.push_str("\n\n_an API step: Saffron's HTTP client sends its requests, in an `@api` scenario_");
    }
    let lists = entry.action_lists();
    for (index, actions) in lists.iter().enumerate() {
        if lists.len() > 1 {
            out.push_str(&format!("\n\nrecorded as ({} of {}):", index + 1, lists.len()));
        } else {
            out.push_str("\n\nrecorded as:");
        }
        if actions.is_empty() {
            out.push_str("\n- (no browser action)");
        }
        for action in actions.iter() {
            out.push_str(&format!("\n- `{action}`"));
        }
    }
    let near = snapshot.near_duplicates(&entry.text);
    if !near.is_empty() {
        out.push_str("\n\nnear-duplicates:");
        for duplicate in near.iter().take(5) {
            out.push_str(&format!("\n- \"{}\" ({}, {}×)", duplicate.text, badge(duplicate.status), duplicate.count));
        }
    }
    let same = snapshot.same_behaviour(&entry.text);
    if !same.is_empty() {
        out.push_str("\n\nsame recorded behaviour as:");
        for text in same.iter().take(5) {
            out.push_str(&format!("\n- \"{text}\""));
        }
    }
    out
}

fn step_set_markdown(snapshot: &Snapshot, name: &str) -> String {
    let Some(set) = snapshot.step_sets().get(name) else {
        return format!("**unknown StepSet** `{name}`");
    };
    let mut out =
        format!("**StepSet** `{}` · {}:{}\n\n```gherkin\n", set.name, set.file.display(), set.location().line);
    for step in set.steps() {
        out.push_str(&format!("{}{}\n", step.keyword, step.text));
    }
    out.push_str("```\n");
    for step in set.steps() {
        let status = snapshot.entry(&step.text).map_or(StepStatus::Unrecorded, |entry| entry.status());
        out.push_str(&format!("\n- {} {}", badge(status), step.text));
    }
    let invocations = snapshot.invocations(name).len();
    out.push_str(&format!("\n\ninvoked {invocations}×"));
    if set.signs_in() {
        out.push_str(
            "\n\n**signs in once per run** (`@session`): the first scenario that starts with it performs it; \
             the later ones restore the session it left (cookies, localStorage) instead",
        );
    }
    out
}
