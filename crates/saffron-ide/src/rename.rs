//! Renaming a step text across the project (every file that writes it, and the step inside
//! every recording that holds it, so the recordings stay fresh), or a StepSet (its definition
//! and every invocation).

use std::path::Path;

use saffron_index::Snapshot;
use saffron_recording::Recording;
use saffron_syntax::Span;

use crate::navigation::{FileRange, Subject, step_set_ranges, step_text_ranges, subject_at};
use crate::{SourceChange, TextEdit};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenameTarget {
    Step,
    StepSet,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenameError {
    NothingToRename,
    InvalidText(&'static str),
    StepSetExists(String),
}

impl std::fmt::Display for RenameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenameError::NothingToRename => f.write_str("place the cursor on a step or a StepSet name to rename it"),
            RenameError::InvalidText(why) => f.write_str(why),
            RenameError::StepSetExists(name) => write!(f, "a StepSet named '{name}' already exists"),
        }
    }
}

/// What would be renamed at `offset`, and its current text's span.
pub fn prepare_rename(snapshot: &Snapshot, path: &Path, offset: usize) -> Option<(RenameTarget, Span, String)> {
    let (subject, span) = subject_at(snapshot, path, offset)?;
    Some(match subject {
        Subject::Step(text) => (RenameTarget::Step, span, text),
        Subject::StepSet(name) => (RenameTarget::StepSet, span, name),
    })
}

pub fn rename(snapshot: &Snapshot, path: &Path, offset: usize, new_text: &str) -> Result<SourceChange, RenameError> {
    let (subject, _) = subject_at(snapshot, path, offset).ok_or(RenameError::NothingToRename)?;
    let new_text = new_text.trim();
    if new_text.is_empty() {
        return Err(RenameError::InvalidText("the new text is empty"));
    }
    if new_text.contains(['\n', '\r']) {
        return Err(RenameError::InvalidText("a step is one line"));
    }
    let (ranges, recordings) = match subject {
        Subject::Step(text) => (step_text_ranges(snapshot, &text), renamed_recordings(snapshot, &text, new_text)),
        Subject::StepSet(name) => {
            if name != new_text && snapshot.step_sets().get(new_text).is_some() {
                return Err(RenameError::StepSetExists(new_text.to_string()));
            }
            (step_set_ranges(snapshot, &name), Vec::new())
        }
    };
    let mut change = SourceChange { recordings, ..SourceChange::default() };
    let mut by_file: Vec<FileRange> = ranges;
    by_file.sort();
    for range in by_file {
        let edit = TextEdit { span: range.span, new_text: new_text.to_string() };
        match change.edits.iter_mut().find(|(file, _)| *file == range.file) {
            Some((_, edits)) => edits.push(edit),
            None => change.edits.push((range.file.clone(), vec![edit])),
        }
    }
    Ok(change)
}

/// Every recording that holds `old` as a step text, with the step renamed and its steps digest
/// recomputed.
fn renamed_recordings(snapshot: &Snapshot, old: &str, new: &str) -> Vec<(std::path::PathBuf, Recording)> {
    let Some(entry) = snapshot.entry(old) else { return Vec::new() };
    let mut paths: Vec<&std::sync::Arc<Path>> = entry.recordings.iter().map(|r| &r.recording).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|path| {
            let data = snapshot.recording(path)?;
            let mut recording = data.recording.clone();
            for step in recording.steps.iter_mut().filter(|step| step.text == old) {
                step.text = new.to_string();
            }
            recording.update_steps_digest();
            Some((path.to_path_buf(), recording))
        })
        .collect()
}
