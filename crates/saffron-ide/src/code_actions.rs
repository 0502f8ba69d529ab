//! Quick fixes: use the existing wording of a near-duplicate, invoke the set that was meant,
//! remove an accidental colon, close or remove a lone quote, and rename a `.feature` that uses
//! the dialect.

use std::path::Path;

use saffron_index::Snapshot;
use saffron_syntax::Span;

use crate::context;
use crate::diagnostics::diagnostics;
use crate::{SourceChange, TextEdit};

#[derive(Debug, Clone, PartialEq)]
pub struct CodeAction {
    pub title: String,
    /// The diagnostic code it fixes.
    pub fixes: String,
    pub change: SourceChange,
    pub is_preferred: bool,
}

/// The fixes for the diagnostics that touch `range`.
pub fn code_actions(snapshot: &Snapshot, path: &Path, range: Span) -> Vec<CodeAction> {
    let Some(file) = context::file(snapshot, path) else { return Vec::new() };
    let text = file.text();
    let mut actions = Vec::new();
    let edit = |span: Span, new_text: String| SourceChange {
        edits: vec![(file.path.clone(), vec![TextEdit { span, new_text }])],
        ..SourceChange::default()
    };
    for diagnostic in diagnostics(snapshot, path) {
        let touches = diagnostic.span.start <= range.end && range.start <= diagnostic.span.end;
        if !touches {
            continue;
        }
        match diagnostic.code.as_str() {
            "near-duplicate" => {
                let Some(wording) = diagnostic.replacement.clone() else { continue };
                let recorded = snapshot
                    .entry(&wording)
                    .is_some_and(|entry| entry.status() != saffron_index::StepStatus::Unrecorded);
                let suffix = if recorded { " (recorded: replays for free)" } else { "" };
                actions.push(CodeAction {
                    title: format!("Use the existing wording '{wording}'{suffix}"),
                    fixes: diagnostic.code.clone(),
                    change: edit(diagnostic.span, wording),
                    is_preferred: true,
                });
            }
            "unknown-step-set" => {
                let Some(hint) = &diagnostic.hint else { continue };
                let Some(name) = hint.strip_prefix("did you mean 'StepSet ").and_then(|h| h.strip_suffix("'?")) else {
                    continue;
                };
                actions.push(CodeAction {
                    title: format!("Invoke 'StepSet {name}'"),
                    fixes: diagnostic.code.clone(),
                    change: edit(diagnostic.span, name.to_string()),
                    is_preferred: true,
                });
            }
            "duplicate-step-set" => {
                let Some(scenario) = file.document().scenarios().find(|s| s.header.name_span == diagnostic.span) else {
                    continue;
                };
                // `StepSet: name` → `StepSet name`: the colon made an invocation a block.
                let colon = scenario.header.keyword_span.end;
                let after =
                    text[colon..].find(|c: char| c != ':' && c != ' ' && c != '\t').map_or(colon, |i| colon + i);
                actions.push(CodeAction {
                    title: format!("Remove the colon: invoke 'StepSet {}'", scenario.header.name),
                    fixes: diagnostic.code.clone(),
                    change: edit(Span::new(colon, after), " ".to_string()),
                    is_preferred: true,
                });
            }
            "unclosed-quote" => {
                // The value the quote opens runs to the end of the step's text.
                let quote = diagnostic.span.start;
                let steps = file.document().steps();
                let Some(step) = steps.iter().find(|step| step.text_span.start <= quote && quote < step.text_span.end)
                else {
                    continue;
                };
                let end = step.text_span.end;
                actions.push(CodeAction {
                    title: "Close the quote at the end of the step".to_string(),
                    fixes: diagnostic.code.clone(),
                    change: edit(Span::new(end, end), "\"".to_string()),
                    is_preferred: true,
                });
                actions.push(CodeAction {
                    title: "Remove the quote".to_string(),
                    fixes: diagnostic.code.clone(),
                    change: edit(diagnostic.span, String::new()),
                    is_preferred: false,
                });
            }
            "dialect-in-feature-file" => {
                let target = path.with_extension("saffron");
                if actions.iter().any(|a: &CodeAction| a.change.renamed_files.iter().any(|(_, to)| *to == target)) {
                    continue;
                }
                actions.push(CodeAction {
                    title: format!(
                        "Rename the file to {}",
                        target.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
                    ),
                    fixes: diagnostic.code.clone(),
                    change: SourceChange {
                        renamed_files: vec![(path.to_path_buf(), target)],
                        ..SourceChange::default()
                    },
                    is_preferred: true,
                });
            }
            _ => {}
        }
    }
    actions
}
