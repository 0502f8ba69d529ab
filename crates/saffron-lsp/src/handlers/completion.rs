//! `textDocument/completion` and `completionItem/resolve`, answered on the main loop: they are
//! what the editor waits for while the user types.
//!
//! The list is LSP 3.17's (see `ext`): when the client declares `completionList.itemDefaults`,
//! the replaced range and the text format are stated once for the list; other clients get a
//! `textEdit` in every item.

use ls_types as lsp;
use saffron_ide::CompletionKind;
use serde_json::Value;

use crate::context::{Error, RequestContext, Result};
use crate::ext::{CompletionItem, CompletionItemDefaults, CompletionList};
use crate::line_index::LineIndex;
use crate::main_loop::GlobalState;

/// Answered from the editor's text and the vocabulary as last indexed, without waiting for the
/// index to catch up with the last keystrokes (it takes microseconds; the step being typed is
/// the only thing the index may not have yet, and it is never offered).
///
/// Only the cursor's line is read (from the open document, or the indexed copy of a file that
/// is not open), and, on a step's line, the lines above it up to the previous step (for the
/// ranking by what follows it), read from the rope one at a time and never more than
/// [`saffron_ide::PREVIOUS_STEP_LINES`]: a keystroke's completion costs the same in a file of
/// any size.
pub fn handle(state: &GlobalState, params: lsp::CompletionParams) -> Result<Option<CompletionList>> {
    let position = params.text_document_position;
    let context = state.context_as_indexed();
    let path = context.path(&position.text_document.uri)?;
    let (line, character) = (position.position.line, position.position.character);
    let line_number = line + 1;
    let (items, line_text, incomplete) = if let Some(document) = state.opened(&position.text_document.uri) {
        let Some((line_text, column)) = document.line(line, character) else { return Ok(None) };
        let (items, incomplete) = saffron_ide::completions_on_line(
            &context.snapshot,
            &path,
            &line_text,
            line_number,
            column,
            document.lines_above(line),
        );
        (items, line_text, incomplete)
    } else {
        let Some(text) = context.text(&path) else { return Ok(None) };
        let Some((start, line_text, column)) = indexed_line(text, position.position) else { return Ok(None) };
        let lines_above = text[..start].lines().rev();
        let (items, incomplete) =
            saffron_ide::completions_on_line(&context.snapshot, &path, &line_text, line_number, column, lines_above);
        (items, line_text, incomplete)
    };
    let index = LineIndex::of_line(&line_text, line);
    Ok(Some(to_list(&context, &index, &items, incomplete)))
}

/// Line `position.line` of an indexed file's text: where it starts, its text and the byte
/// column of the position in it.
fn indexed_line(text: &str, position: lsp::Position) -> Option<(usize, String, usize)> {
    let index = LineIndex::new(text);
    if position.line as usize >= index.line_count() {
        return None;
    }
    let offset = index.offset(position);
    let start = index.offset(lsp::Position { line: position.line, character: 0 });
    let end = index.offset(lsp::Position { line: position.line, character: u32::MAX });
    Some((start, text[start..end].to_string(), offset - start))
}

fn to_list(
    context: &RequestContext,
    index: &LineIndex,
    items: &[saffron_ide::CompletionItem<'_>],
    incomplete: bool,
) -> CompletionList {
    let client = &context.client;
    let shared_range =
        items.first().map(|first| first.replace).filter(|range| items.iter().all(|i| i.replace == *range));
    let edit_range = shared_range.filter(|_| client.default_edit_range).map(|span| index.range(span));
    let snippet_default =
        client.snippets && client.default_insert_text_format && items.iter().any(|item| item.is_snippet);
    let item_defaults = (edit_range.is_some() || snippet_default).then(|| CompletionItemDefaults {
        edit_range,
        insert_text_format: snippet_default.then_some(lsp::InsertTextFormat::SNIPPET),
    });
    let items = items
        .iter()
        .map(|item| {
            let snippet = item.is_snippet && client.snippets;
            // The inserted text when it is not the label (a client without snippets gets the
            // label for a snippet item: its plain text).
            let new_text = item.insert_text.as_deref().filter(|_| snippet || !item.is_snippet);
            let insert_text_format = if snippet_default {
                // Plain text is a snippet too, unless it holds a snippet's special characters.
                let inserted = new_text.unwrap_or(&item.label);
                (!snippet && inserted.contains(['$', '\\', '}'])).then_some(lsp::InsertTextFormat::PLAIN_TEXT)
            } else {
                snippet.then_some(lsp::InsertTextFormat::SNIPPET)
            };
            let (text_edit, text_edit_text) = if edit_range.is_some() {
                (None, new_text.map(str::to_string))
            } else {
                let new_text = new_text.unwrap_or(&item.label).to_string();
                (Some(lsp::TextEdit { range: index.range(item.replace), new_text }), None)
            };
            let is_step = item.kind == CompletionKind::Step;
            CompletionItem {
                label: item.label.to_string(),
                label_details: item.description.as_ref().map(|description| lsp::CompletionItemLabelDetails {
                    detail: None,
                    description: Some(description.to_string()),
                }),
                kind: kind(item.kind),
                // A step's detail and documentation come with `completionItem/resolve` when the
                // client asks for them there: most items are never looked at.
                detail: if is_step && client.lazy_detail { None } else { item.detail.as_deref().map(str::to_string) },
                documentation: item.documentation.as_deref().map(markdown),
                sort_text: item.sort_text().to_string(),
                filter_text: item.filter_text.as_deref().map(str::to_string),
                insert_text_format,
                text_edit,
                text_edit_text,
            }
        })
        .collect();
    CompletionList { is_incomplete: incomplete, item_defaults, items }
}

fn markdown(value: &str) -> lsp::MarkupContent {
    lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value: value.to_string() }
}

fn kind(kind: CompletionKind) -> lsp::CompletionItemKind {
    match kind {
        CompletionKind::Step => lsp::CompletionItemKind::TEXT,
        CompletionKind::StepSet => lsp::CompletionItemKind::MODULE,
        CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
        CompletionKind::Session => lsp::CompletionItemKind::VARIABLE,
    }
}

/// Fills in a step item's detail and documentation (status, recorded actions, near-duplicates)
/// when the editor shows it, so the list itself stays cheap. Every field the client sent is sent
/// back: a client may rely on fields ls-types does not know.
pub fn resolve(state: &GlobalState, mut item: Value) -> Result<Value> {
    let context = state.context_as_indexed();
    let Some(fields) = item.as_object_mut() else {
        return Err(Error::invalid_params("a completion item is an object"));
    };
    let Some(label) = fields.get("label").and_then(Value::as_str).map(str::to_string) else {
        return Err(Error::invalid_params("a completion item has a label"));
    };
    let kind = fields.get("kind").and_then(|kind| serde_json::from_value(kind.clone()).ok());
    let is_step = kind == Some(lsp::CompletionItemKind::TEXT);
    if !is_step {
        return Ok(item);
    }
    if fields.get("detail").is_none_or(Value::is_null)
        && let Some(detail) = saffron_ide::completion_detail(&context.snapshot, &label)
    {
        fields.insert("detail".to_string(), Value::String(detail));
    }
    if let Some(documentation) = saffron_ide::completion_documentation(&context.snapshot, &label) {
        let documentation = serde_json::to_value(markdown(&documentation))
            .map_err(|error| Error::internal(format!("cannot write the documentation: {error}")))?;
        fields.insert("documentation".to_string(), documentation);
    }
    Ok(item)
}
