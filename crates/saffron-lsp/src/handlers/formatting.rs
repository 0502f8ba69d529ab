use crate::context::Result;
use ls_types as lsp;

use crate::context::RequestContext;
use crate::line_index::LineIndex;

pub fn handle(context: &RequestContext, params: lsp::DocumentFormattingParams) -> Result<Option<Vec<lsp::TextEdit>>> {
    let path = context.path(&params.text_document.uri)?;
    let Some(file) = context.snapshot.file(&path) else { return Ok(None) };
    let text = &file.source.text;
    let parsed = &file.source.parsed;
    let Some(formatted) = saffron_ide::format(text, &parsed.document, !parsed.errors.is_empty()) else {
        return Ok(None);
    };
    if formatted == *text {
        return Ok(Some(Vec::new()));
    }
    let index = LineIndex::new(text);
    let whole = index.range(saffron_ide::Span::new(0, text.len()));
    Ok(Some(vec![lsp::TextEdit { range: whole, new_text: formatted }]))
}
