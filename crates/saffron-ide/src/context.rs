//! Finding what the cursor is on.

use std::path::Path;
use std::sync::Arc;

use saffron_index::{FileData, Snapshot};
use saffron_syntax::{Document, Scenario, Span, Step};

/// A file of the index with its text and tree.
pub(crate) struct FileContext<'a> {
    pub path: &'a Arc<Path>,
    pub data: &'a FileData,
}

impl<'a> FileContext<'a> {
    pub fn text(&self) -> &'a str {
        &self.data.source.text
    }

    pub fn document(&self) -> &'a Document {
        &self.data.source.parsed.document
    }
}

pub(crate) fn file<'a>(snapshot: &'a Snapshot, path: &Path) -> Option<FileContext<'a>> {
    let (path, data) = snapshot.file_entry(path)?;
    Some(FileContext { path, data })
}

/// The byte range of the line holding `offset`, without its line ending.
pub(crate) fn line_at(text: &str, offset: usize) -> Span {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let end = if end > start && text.as_bytes()[end - 1] == b'\r' { end - 1 } else { end };
    Span::new(start, end)
}

/// The step whose line holds `offset`.
pub(crate) fn step_at<'d>(document: &'d Document, text: &str, offset: usize) -> Option<&'d Step> {
    let line = line_at(text, offset);
    document
        .steps()
        .into_iter()
        .find(|step| step.keyword_span.start >= line.start && step.keyword_span.start <= line.end)
}

/// The scenario-like block whose header line holds `offset`.
pub(crate) fn scenario_header_at<'d>(document: &'d Document, text: &str, offset: usize) -> Option<&'d Scenario> {
    let line = line_at(text, offset);
    document.scenarios().find(|scenario| line.contains(scenario.header.line_span.start))
}
