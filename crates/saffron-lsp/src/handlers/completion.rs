use saffron_ide::CompletionKind;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types as lsp;

use crate::context::RequestContext;

/// `open_text` is the document as the editor has it, when it is open.
pub fn handle(
    context: &RequestContext,
    params: lsp::CompletionParams,
    open_text: Option<String>,
) -> Result<Option<lsp::CompletionResponse>> {
    let position = params.text_document_position;
    let path = context.path(&position.text_document.uri)?;
    let Some(text) = open_text.as_deref().or_else(|| context.text(&path)) else { return Ok(None) };
    let index = crate::line_index::LineIndex::new(text);
    let offset = index.offset(position.position);
    let (items, incomplete) = saffron_ide::completions_in(&context.snapshot, &path, text, offset);
    let items = items
        .into_iter()
        .map(|item| {
            let label_text = item.label.clone();
            let snippet = item.is_snippet && context.snippet_support;
            let new_text = if item.is_snippet && !snippet { item.label.clone() } else { item.insert_text.clone() };
            lsp::CompletionItem {
                label: item.label,
                label_details: item.description.map(|description| lsp::CompletionItemLabelDetails {
                    detail: None,
                    description: Some(description),
                }),
                kind: Some(match item.kind {
                    CompletionKind::Step => lsp::CompletionItemKind::TEXT,
                    CompletionKind::StepSet => lsp::CompletionItemKind::MODULE,
                    CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
                }),
                detail: item.detail,
                documentation: item.documentation.map(|markdown| {
                    lsp::Documentation::MarkupContent(lsp::MarkupContent {
                        kind: lsp::MarkupKind::Markdown,
                        value: markdown,
                    })
                }),
                sort_text: Some(item.sort_text),
                filter_text: Some(item.filter_text),
                insert_text_format: Some(if snippet {
                    lsp::InsertTextFormat::SNIPPET
                } else {
                    lsp::InsertTextFormat::PLAIN_TEXT
                }),
                text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
                    range: index.range(item.replace),
                    new_text,
                })),
                data: (item.kind == CompletionKind::Step).then(|| serde_json::json!({ "step": label_text })),
                ..lsp::CompletionItem::default()
            }
        })
        .collect();
    Ok(Some(lsp::CompletionResponse::List(lsp::CompletionList { is_incomplete: incomplete, items })))
}

/// Fills in a step item's documentation (status, recorded actions, near-duplicates) when the
/// editor shows it, so the list itself stays cheap.
pub fn resolve(context: &RequestContext, mut item: lsp::CompletionItem) -> Result<lsp::CompletionItem> {
    let Some(text) = item.data.as_ref().and_then(|data| data["step"].as_str()) else { return Ok(item) };
    if let Some(markdown) = saffron_ide::completion_documentation(&context.snapshot, text) {
        item.documentation = Some(lsp::Documentation::MarkupContent(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: markdown,
        }));
    }
    Ok(item)
}
