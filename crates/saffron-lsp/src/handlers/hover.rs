use crate::context::Result;
use ls_types as lsp;

use crate::context::RequestContext;

pub fn handle(context: &RequestContext, params: lsp::HoverParams) -> Result<Option<lsp::Hover>> {
    let position = params.text_document_position_params;
    let path = context.path(&position.text_document.uri)?;
    let offset = context.offset(&path, position.position)?;
    let Some(hover) = saffron_ide::hover(&context.snapshot, &path, offset) else { return Ok(None) };
    Ok(Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: hover.markdown,
        }),
        range: context.range(&path, hover.span),
    }))
}
