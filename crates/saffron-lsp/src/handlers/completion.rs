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
    let client = context.client;
    let items = items
        .into_iter()
        .map(|item| {
            let snippet = item.is_snippet && client.snippets;
            let new_text = if item.is_snippet && !snippet { item.label.clone() } else { item.insert_text.clone() };
            let is_step = item.kind == CompletionKind::Step;
            let text_edit = lsp::CompletionTextEdit::Edit(lsp::TextEdit { range: index.range(item.replace), new_text });
            lsp::CompletionItem {
                label_details: item.description.map(|description| lsp::CompletionItemLabelDetails {
                    detail: None,
                    description: Some(description),
                }),
                kind: Some(match item.kind {
                    CompletionKind::Step => lsp::CompletionItemKind::TEXT,
                    CompletionKind::StepSet => lsp::CompletionItemKind::MODULE,
                    CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
                }),
                // A step's detail and documentation come with `completionItem/resolve` when the
                // client asks for them there: most items are never looked at.
                detail: if is_step && client.lazy_detail { None } else { item.detail },
                documentation: item.documentation.map(|markdown| {
                    lsp::Documentation::MarkupContent(lsp::MarkupContent {
                        kind: lsp::MarkupKind::Markdown,
                        value: markdown,
                    })
                }),
                sort_text: Some(item.sort_text),
                filter_text: (item.filter_text != item.label).then_some(item.filter_text),
                insert_text_format: snippet.then_some(lsp::InsertTextFormat::SNIPPET),
                text_edit: Some(text_edit),
                label: item.label,
                ..lsp::CompletionItem::default()
            }
        })
        .collect();
    Ok(Some(lsp::CompletionResponse::List(lsp::CompletionList { is_incomplete: incomplete, items })))
}

/// Fills in a step item's documentation (status, recorded actions, near-duplicates) when the
/// editor shows it, so the list itself stays cheap.
pub fn resolve(context: &RequestContext, mut item: lsp::CompletionItem) -> Result<lsp::CompletionItem> {
    if item.kind != Some(lsp::CompletionItemKind::TEXT) {
        return Ok(item);
    }
    let text = item.label.clone();
    if item.detail.is_none() {
        item.detail = saffron_ide::completion_detail(&context.snapshot, &text);
    }
    if let Some(markdown) = saffron_ide::completion_documentation(&context.snapshot, &text) {
        item.documentation = Some(lsp::Documentation::MarkupContent(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: markdown,
        }));
    }
    Ok(item)
}
