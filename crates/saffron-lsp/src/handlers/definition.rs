use crate::context::Result;
use ls_types as lsp;

use crate::context::RequestContext;

pub fn handle(
    context: &RequestContext,
    params: lsp::GotoDefinitionParams,
) -> Result<Option<lsp::GotoDefinitionResponse>> {
    let position = params.text_document_position_params;
    let path = context.path(&position.text_document.uri)?;
    let offset = context.offset(&path, position.position)?;
    let Some(target) = saffron_ide::definition(&context.snapshot, &path, offset) else { return Ok(None) };
    let (Some(uri), Some(range)) = (context.uri(&target.file), context.range(&target.file, target.span)) else {
        return Ok(None);
    };
    Ok(Some(lsp::GotoDefinitionResponse::Scalar(lsp::Location { uri, range })))
}
