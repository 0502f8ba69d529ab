use crate::context::Result;
use ls_types as lsp;
use saffron_ide::Symbol;

use crate::context::RequestContext;
use crate::convert::symbol_kind;
use crate::line_index::LineIndex;

pub fn handle(
    context: &RequestContext,
    params: lsp::DocumentSymbolParams,
) -> Result<Option<lsp::DocumentSymbolResponse>> {
    let path = context.path(&params.text_document.uri)?;
    let Some(file) = context.snapshot.file(&path) else { return Ok(None) };
    let index = LineIndex::new(&file.source.text);
    let symbols = saffron_ide::document_symbols(&file.source.parsed.document);
    Ok(Some(lsp::DocumentSymbolResponse::Nested(symbols.iter().map(|s| convert(&index, s)).collect())))
}

#[allow(deprecated)] // `deprecated` is a required field of the LSP type.
fn convert(index: &LineIndex<'_>, symbol: &Symbol) -> lsp::DocumentSymbol {
    lsp::DocumentSymbol {
        name: symbol.name.clone(),
        detail: Some(symbol.detail.clone()),
        kind: symbol_kind(symbol.kind),
        tags: None,
        deprecated: None,
        range: index.range(symbol.span),
        selection_range: index.range(symbol.selection),
        children: Some(symbol.children.iter().map(|child| convert(index, child)).collect()),
    }
}
