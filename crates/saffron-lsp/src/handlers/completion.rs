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
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types as lsp;

use crate::context::RequestContext;
use crate::json_text;
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

#[derive(Debug, Clone, Serialize)]
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

#[derive(Debug, Clone, Serialize)]
pub struct LabelDetails<'a> {
    #[serde(serialize_with = "as_text")]
    pub description: &'a Description,
}

/// `MarkupContent` of kind markdown.
#[derive(Debug, Clone, Serialize)]
pub struct Markdown<'a> {
    kind: &'static str,
    value: &'a str,
}

impl<'a> Markdown<'a> {
    fn new(value: &'a str) -> Markdown<'a> {
        Markdown { kind: "markdown", value }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TextEdit<'a> {
    pub range: lsp::Range,
    pub new_text: &'a str,
}

/// Written as a JSON string straight from its `Display` (no intermediate `String`).
fn as_text<S: Serializer>(value: &impl std::fmt::Display, serializer: S) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// The completion list at the request's position as JSON, appended to `out` (a reply being
/// written around it); `false` for no list. `open_text` is the document as the editor has it,
/// when it is open.
pub fn write_json(
    out: &mut Vec<u8>,
    context: &RequestContext,
    params: lsp::CompletionParams,
    open_text: Option<String>,
) -> Result<bool> {
    let position = params.text_document_position;
    let path = context.path(&position.text_document.uri)?;
    let Some(text) = open_text.as_deref().or_else(|| context.text(&path)) else { return Ok(false) };
    let index = LineIndex::new(text);
    let offset = index.offset(position.position);
    let (items, incomplete) = saffron_ide::completions_in(&context.snapshot, &path, text, offset);
    let list = to_list(context, &index, &items, incomplete);
    // About what an item takes as JSON, so the text is written without growing its buffer.
    out.reserve(128 + 192 * items.len());
    write_list(out, &list);
    Ok(true)
}

/// `list` as JSON: the bytes serde_json writes for it (the tests check), by hand (see
/// `json_text`).
fn write_list(out: &mut Vec<u8>, list: &CompletionList) {
    out.push(b'{');
    json_text::key(out, "isIncomplete");
    out.extend_from_slice(if list.is_incomplete { b"true" } else { b"false" });
    if let Some(defaults) = &list.item_defaults {
        json_text::next_key(out, "itemDefaults");
        out.push(b'{');
        let mut first = true;
        if let Some(range) = &defaults.edit_range {
            json_text::key(out, "editRange");
            write_range(out, range);
            first = false;
        }
        if let Some(format) = defaults.insert_text_format {
            if !first {
                out.push(b',');
            }
            json_text::key(out, "insertTextFormat");
            write_format(out, format);
        }
        out.push(b'}');
    }
    json_text::next_key(out, "items");
    out.push(b'[');
    for (at, item) in list.items.iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        write_item(out, item);
    }
    out.extend_from_slice(b"]}");
}

fn write_item(out: &mut Vec<u8>, item: &CompletionItem) {
    out.push(b'{');
    json_text::key(out, "label");
    json_text::string(out, item.label);
    if let Some(details) = &item.label_details {
        json_text::next_key(out, "labelDetails");
        out.push(b'{');
        json_text::key(out, "description");
        json_text::display_string(out, details.description);
        out.push(b'}');
    }
    json_text::next_key(out, "kind");
    write_kind(out, item.kind);
    let optional_string = |out: &mut Vec<u8>, name: &str, value: Option<&str>| {
        if let Some(value) = value {
            json_text::next_key(out, name);
            json_text::string(out, value);
        }
    };
    optional_string(out, "detail", item.detail);
    if let Some(documentation) = &item.documentation {
        json_text::next_key(out, "documentation");
        out.push(b'{');
        json_text::key(out, "kind");
        json_text::string(out, documentation.kind);
        json_text::next_key(out, "value");
        json_text::string(out, documentation.value);
        out.push(b'}');
    }
    json_text::next_key(out, "sortText");
    json_text::display_string(out, &item.sort_text);
    optional_string(out, "filterText", item.filter_text);
    if let Some(format) = item.insert_text_format {
        json_text::next_key(out, "insertTextFormat");
        write_format(out, format);
    }
    if let Some(edit) = &item.text_edit {
        json_text::next_key(out, "textEdit");
        out.push(b'{');
        json_text::key(out, "range");
        write_range(out, &edit.range);
        json_text::next_key(out, "newText");
        json_text::string(out, edit.new_text);
        out.push(b'}');
    }
    optional_string(out, "textEditText", item.text_edit_text);
    out.push(b'}');
}

fn write_range(out: &mut Vec<u8>, range: &lsp::Range) {
    let position = |out: &mut Vec<u8>, position: &lsp::Position| {
        out.push(b'{');
        json_text::key(out, "line");
        json_text::number(out, position.line);
        json_text::next_key(out, "character");
        json_text::number(out, position.character);
        out.push(b'}');
    };
    out.push(b'{');
    json_text::key(out, "start");
    position(out, &range.start);
    json_text::next_key(out, "end");
    position(out, &range.end);
    out.push(b'}');
}

fn write_kind(out: &mut Vec<u8>, kind: lsp::CompletionItemKind) {
    // ls-types writes these as their protocol numbers; so does this, through serde.
    let _ = serde_json::to_writer(&mut *out, &kind);
}

fn write_format(out: &mut Vec<u8>, format: lsp::InsertTextFormat) {
    let _ = serde_json::to_writer(&mut *out, &format);
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

#[cfg(test)]
mod tests {
    use saffron_ide::{Description, SortText};
    use saffron_index::StepStatus;
    use tower_lsp_server::ls_types as lsp;

    use super::{CompletionItem, CompletionList, ItemDefaults, LabelDetails, Markdown, TextEdit};

    fn range(line: u32, from: u32, to: u32) -> lsp::Range {
        lsp::Range::new(lsp::Position::new(line, from), lsp::Position::new(line, to))
    }

    #[test]
    fn lists_are_written_as_serde_json_writes_them() {
        let step = Description::Step { status: StepStatus::Recorded, count: 12 };
        let text = Description::Text("StepSet · \"3\" steps".to_string());
        let plain = CompletionItem {
            label: "I see the orders page",
            label_details: Some(LabelDetails { description: &step }),
            kind: lsp::CompletionItemKind::TEXT,
            detail: None,
            documentation: None,
            sort_text: SortText(0),
            filter_text: None,
            insert_text_format: None,
            text_edit: None,
            text_edit_text: None,
        };
        let full = CompletionItem {
            label: "I add \"Tea\" to the \\ cart\t",
            label_details: Some(LabelDetails { description: &text }),
            kind: lsp::CompletionItemKind::MODULE,
            detail: Some("recorded: replays for free"),
            documentation: Some(Markdown::new("```gherkin\nStepSet: a\n```")),
            sort_text: SortText(12345),
            filter_text: Some("Feature: "),
            insert_text_format: Some(lsp::InsertTextFormat::PLAIN_TEXT),
            text_edit: Some(TextEdit { range: range(3, 9, 40), new_text: "I add \"${1:Tea}\" to the cart" }),
            text_edit_text: Some("I add \"${1:Tea}\""),
        };
        let bare = CompletionItem { label_details: None, ..plain.clone() };
        let lists = [
            CompletionList { is_incomplete: false, item_defaults: None, items: Vec::new() },
            CompletionList { is_incomplete: true, item_defaults: None, items: vec![plain.clone()] },
            CompletionList {
                is_incomplete: false,
                item_defaults: Some(ItemDefaults {
                    edit_range: Some(range(14, 13, 43)),
                    insert_text_format: Some(lsp::InsertTextFormat::SNIPPET),
                }),
                items: vec![plain.clone(), full, bare],
            },
            CompletionList {
                is_incomplete: false,
                item_defaults: Some(ItemDefaults {
                    edit_range: None,
                    insert_text_format: Some(lsp::InsertTextFormat::SNIPPET),
                }),
                items: vec![plain.clone()],
            },
            CompletionList {
                is_incomplete: false,
                item_defaults: Some(ItemDefaults { edit_range: Some(range(0, 0, 1)), insert_text_format: None }),
                items: vec![plain],
            },
        ];
        for list in &lists {
            let mut ours = Vec::new();
            super::write_list(&mut ours, list);
            let theirs = serde_json::to_vec(list).expect("serializable");
            assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs));
        }
    }
}
