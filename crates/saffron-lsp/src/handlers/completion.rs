//! `textDocument/completion` and `completionItem/resolve`.
//!
//! The reply is LSP 3.17's `CompletionList`, written here because ls-types 0.0.6 (the types
//! tower-lsp-server uses) has neither `itemDefaults` nor `textEditText`. With them, a list
//! states the replaced range and the text format once instead of in every item: a third of a
//! list's bytes, and of the work of building, sending and reading it. Clients that do not
//! declare `completionList.itemDefaults` get a `textEdit` in every item. The transport routes
//! both requests here (see `transport::ROUTES`).

use std::borrow::Cow;

use saffron_ide::CompletionKind;
use serde::Serialize;
use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types as lsp;

use crate::context::RequestContext;
use crate::line_index::LineIndex;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionList {
    pub is_incomplete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_defaults: Option<ItemDefaults>,
    pub items: Vec<CompletionItem>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemDefaults {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit_range: Option<lsp::Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub insert_text_format: Option<lsp::InsertTextFormat>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionItem {
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_details: Option<lsp::CompletionItemLabelDetails>,
    pub kind: lsp::CompletionItemKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documentation: Option<lsp::Documentation>,
    pub sort_text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub insert_text_format: Option<lsp::InsertTextFormat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_edit: Option<lsp::TextEdit>,
    /// The text to insert over the list's default edit range, when it is not the label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_edit_text: Option<String>,
}

/// `open_text` is the document as the editor has it, when it is open.
pub fn handle(
    context: &RequestContext,
    params: lsp::CompletionParams,
    open_text: Option<String>,
) -> Result<Option<CompletionList>> {
    let position = params.text_document_position;
    let path = context.path(&position.text_document.uri)?;
    let Some(text) = open_text.as_deref().or_else(|| context.text(&path)) else { return Ok(None) };
    let index = LineIndex::new(text);
    let offset = index.offset(position.position);
    let (items, incomplete) = saffron_ide::completions_in(&context.snapshot, &path, text, offset);
    Ok(Some(to_list(context, &index, items, incomplete)))
}

fn to_list(
    context: &RequestContext,
    index: &LineIndex,
    items: Vec<saffron_ide::CompletionItem>,
    incomplete: bool,
) -> CompletionList {
    let client = context.client;
    let shared_range =
        items.first().map(|first| first.replace).filter(|range| items.iter().all(|i| i.replace == *range));
    let edit_range = shared_range.filter(|_| client.default_edit_range).map(|span| index.range(span));
    let snippet_default =
        client.snippets && client.default_insert_text_format && items.iter().any(|item| item.is_snippet);
    let item_defaults = (edit_range.is_some() || snippet_default).then(|| ItemDefaults {
        edit_range,
        insert_text_format: snippet_default.then_some(lsp::InsertTextFormat::SNIPPET),
    });
    let items = items
        .into_iter()
        .map(|item| {
            let snippet = item.is_snippet && client.snippets;
            // The inserted text when it is not the label (a client without snippets gets the
            // label for a snippet item: its plain text).
            let new_text = item.insert_text.filter(|_| snippet || !item.is_snippet);
            let insert_text_format = if snippet_default {
                // Plain text is a snippet too, unless it holds a snippet's special characters.
                let inserted = new_text.as_deref().unwrap_or(&item.label);
                (!snippet && inserted.contains(['$', '\\', '}'])).then_some(lsp::InsertTextFormat::PLAIN_TEXT)
            } else {
                snippet.then_some(lsp::InsertTextFormat::SNIPPET)
            };
            let (text_edit, text_edit_text) = if edit_range.is_some() {
                (None, new_text)
            } else {
                let new_text = new_text.unwrap_or_else(|| item.label.clone());
                (Some(lsp::TextEdit { range: index.range(item.replace), new_text }), None)
            };
            let is_step = item.kind == CompletionKind::Step;
            CompletionItem {
                label_details: item.description.map(|description| lsp::CompletionItemLabelDetails {
                    detail: None,
                    description: Some(description),
                }),
                kind: kind(item.kind),
                // A step's detail and documentation come with `completionItem/resolve` when the
                // client asks for them there: most items are never looked at.
                detail: if is_step && client.lazy_detail { None } else { item.detail.map(Cow::into_owned) },
                documentation: item.documentation.map(markdown),
                sort_text: item.sort_text,
                filter_text: item.filter_text,
                insert_text_format,
                text_edit,
                text_edit_text,
                label: item.label,
            }
        })
        .collect();
    CompletionList { is_incomplete: incomplete, item_defaults, items }
}

fn kind(kind: CompletionKind) -> lsp::CompletionItemKind {
    match kind {
        CompletionKind::Step => lsp::CompletionItemKind::TEXT,
        CompletionKind::StepSet => lsp::CompletionItemKind::MODULE,
        CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
    }
}

fn markdown(value: String) -> lsp::Documentation {
    lsp::Documentation::MarkupContent(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value })
}

/// Fills in a step item's detail and documentation (status, recorded actions, near-duplicates)
/// when the editor shows it, so the list itself stays cheap. The item is taken as JSON and
/// every field the client sent is sent back: a client may rely on fields ls-types does not know.
pub fn resolve(context: &RequestContext, mut item: Value) -> Result<Value> {
    let Some(fields) = item.as_object_mut() else {
        return Err(Error::invalid_params("a completion item is an object"));
    };
    let Some(label) = fields.get("label").and_then(Value::as_str).map(str::to_string) else {
        return Err(Error::invalid_params("a completion item has a label"));
    };
    if fields.get("kind") != Some(&serde_json::json!(lsp::CompletionItemKind::TEXT)) {
        return Ok(item);
    }
    if fields.get("detail").is_none_or(Value::is_null)
        && let Some(detail) = saffron_ide::completion_detail(&context.snapshot, &label)
    {
        fields.insert("detail".to_string(), Value::String(detail));
    }
    if let Some(documentation) = saffron_ide::completion_documentation(&context.snapshot, &label) {
        let documentation = serde_json::to_value(markdown(documentation))
            .map_err(|error| Error::invalid_params(format!("cannot write the documentation: {error}")))?;
        fields.insert("documentation".to_string(), documentation);
    }
    Ok(item)
}
