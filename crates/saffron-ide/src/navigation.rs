//! Go to definition (a `StepSet name` invocation → its set) and find references (every place a
//! step text is written; a set's definition and invocations).

use std::path::Path;
use std::sync::Arc;

use saffron_index::Snapshot;
use saffron_syntax::Span;

use crate::context::{self, scenario_header_at, step_at};

/// A span in a file of the project.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileRange {
    pub file: Arc<Path>,
    pub span: Span,
}

pub fn definition(snapshot: &Snapshot, path: &Path, offset: usize) -> Option<FileRange> {
    let file = context::file(snapshot, path)?;
    let step = step_at(file.document(), file.text(), offset)?;
    if !step.is_invocation {
        return None;
    }
    let set = snapshot.step_sets().get(&step.text)?;
    Some(FileRange { file: snapshot.file_key(&set.file)?.clone(), span: set.scenario.header.name_span })
}

/// What the cursor names: a step text, or a StepSet.
pub(crate) enum Subject {
    Step(String),
    StepSet(String),
}

pub(crate) fn subject_at(snapshot: &Snapshot, path: &Path, offset: usize) -> Option<(Subject, Span)> {
    let file = context::file(snapshot, path)?;
    let document = file.document();
    if let Some(step) = step_at(document, file.text(), offset) {
        let subject =
            if step.is_invocation { Subject::StepSet(step.text.clone()) } else { Subject::Step(step.text.clone()) };
        return Some((subject, step.text_span));
    }
    let scenario = scenario_header_at(document, file.text(), offset)?;
    (scenario.kind == saffron_syntax::ScenarioKind::StepSet)
        .then(|| (Subject::StepSet(scenario.header.name.clone()), scenario.header.name_span))
}

/// Every written place of a step text, as text spans.
pub(crate) fn step_text_ranges(snapshot: &Snapshot, text: &str) -> Vec<FileRange> {
    let Some(entry) = snapshot.entry(text) else { return Vec::new() };
    let mut out = Vec::new();
    for use_ in &entry.uses {
        let Some(file) = snapshot.file(&use_.file) else { continue };
        let document = &file.source.parsed.document;
        if let Some(step) = document.steps().into_iter().find(|s| s.text_location == use_.location && s.text == text) {
            out.push(FileRange { file: use_.file.clone(), span: step.text_span });
        }
    }
    out
}

/// A set's definition name and every invocation's name.
pub(crate) fn step_set_ranges(snapshot: &Snapshot, name: &str) -> Vec<FileRange> {
    let mut out = Vec::new();
    if let Some(set) = snapshot.step_sets().get(name)
        && let Some(file) = snapshot.file_key(&set.file)
    {
        out.push(FileRange { file: file.clone(), span: set.scenario.header.name_span });
    }
    for invocation in snapshot.invocations(name) {
        if let Some(file) = snapshot.file_key(invocation.file) {
            out.push(FileRange { file: file.clone(), span: invocation.step.text_span });
        }
    }
    out
}

pub fn references(snapshot: &Snapshot, path: &Path, offset: usize) -> Vec<FileRange> {
    let Some((subject, _)) = subject_at(snapshot, path, offset) else { return Vec::new() };
    let mut ranges = match subject {
        Subject::Step(text) => step_text_ranges(snapshot, &text),
        Subject::StepSet(name) => step_set_ranges(snapshot, &name),
    };
    ranges.sort();
    ranges
}
