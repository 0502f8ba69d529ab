//! `textDocument/completion` and `completionItem/resolve`.
//!
//! The reply is LSP 3.17's `CompletionList`, written here because ls-types 0.0.6 (the types
//! tower-lsp-server uses) has neither `itemDefaults` nor `textEditText`. With them, a list
//! states the replaced range and the text format once instead of in every item: a third of a
//! list's bytes, and of the work of building, sending and reading it. Clients that do not
//! declare `completionList.itemDefaults` get a `textEdit` in every item. The transport routes
//! both requests here (see `transport::ROUTES`).

use saffron_ide::{CompletionKind, Description, SortText};
use serde::{Serialize, Serializer};
use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types as lsp;

use crate::context::RequestContext;
use crate::line_index::LineIndex;

/// The list as written: it borrows from the IDE's items, which borrow from the snapshot, so
/// writing it allocates nothing per item but the JSON itself.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionList<'a> {
    pub is_incomplete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_defaults: Option<ItemDefaults>,
    pub items: Vec<CompletionItem<'a>>,
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
pub struct CompletionItem<'a> {
    pub label: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_details: Option<LabelDetails<'a>>,
    pub kind: lsp::CompletionItemKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documentation: Option<Markdown<'a>>,
    #[serde(serialize_with = "as_text")]
    pub sort_text: SortText,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub insert_text_format: Option<lsp::InsertTextFormat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_edit: Option<TextEdit<'a>>,
    /// The text to insert over the list's default edit range, when it is not the label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_edit_text: Option<&'a str>,
}

#[derive(Debug, Serialize)]
pub struct LabelDetails<'a> {
    #[serde(serialize_with = "as_text")]
    pub description: &'a Description,
}

/// `MarkupContent` of kind markdown.
#[derive(Debug, Serialize)]
pub struct Markdown<'a> {
    kind: &'static str,
    value: &'a str,
}

impl<'a> Markdown<'a> {
    fn new(value: &'a str) -> Markdown<'a> {
        Markdown { kind: "markdown", value }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TextEdit<'a> {
    pub range: lsp::Range,
    pub new_text: &'a str,
}

/// Written as a JSON string straight from its `Display` (no intermediate `String`).
fn as_text<S: Serializer>(value: &impl std::fmt::Display, serializer: S) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// The completion list at the request's position as JSON (`None` for no list). `open_text` is
/// the document as the editor has it, when it is open.
pub fn json(
    context: &RequestContext,
    params: lsp::CompletionParams,
    open_text: Option<String>,
) -> Result<Option<Vec<u8>>> {
    let position = params.text_document_position;
    let path = context.path(&position.text_document.uri)?;
    let Some(text) = open_text.as_deref().or_else(|| context.text(&path)) else { return Ok(None) };
    let index = LineIndex::new(text);
    let offset = index.offset(position.position);
    let (items, incomplete) = saffron_ide::completions_in(&context.snapshot, &path, text, offset);
    let list = to_list(context, &index, &items, incomplete);
    // About what an item takes as JSON, so the text is written without growing its buffer.
    let mut json = Vec::with_capacity(128 + 192 * items.len());
    serde_json::to_writer(&mut json, &list).map_err(|error| Error {
        code: ErrorCode::InternalError,
        message: format!("cannot write the list: {error}").into(),
        data: None,
    })?;
    Ok(Some(json))
}

fn to_list<'a>(
    context: &RequestContext,
    index: &LineIndex,
    items: &'a [saffron_ide::CompletionItem<'_>],
    incomplete: bool,
) -> CompletionList<'a> {
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
                (None, new_text)
            } else {
                let new_text = new_text.unwrap_or(&item.label);
                (Some(TextEdit { range: index.range(item.replace), new_text }), None)
            };
            let is_step = item.kind == CompletionKind::Step;
            CompletionItem {
                label: &item.label,
                label_details: item.description.as_ref().map(|description| LabelDetails { description }),
                kind: kind(item.kind),
                // A step's detail and documentation come with `completionItem/resolve` when the
                // client asks for them there: most items are never looked at.
                detail: if is_step && client.lazy_detail { None } else { item.detail.as_deref() },
                documentation: item.documentation.as_deref().map(Markdown::new),
                sort_text: item.sort_text(),
                filter_text: item.filter_text.as_deref(),
                insert_text_format,
                text_edit,
                text_edit_text,
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
        let documentation = serde_json::to_value(Markdown::new(&documentation))
            .map_err(|error| Error::invalid_params(format!("cannot write the documentation: {error}")))?;
        fields.insert("documentation".to_string(), documentation);
    }
    Ok(item)
}
