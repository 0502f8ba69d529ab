use crate::context::Result;
use ls_types as lsp;

use crate::context::RequestContext;

pub fn handle(context: &RequestContext, params: lsp::ReferenceParams) -> Result<Option<Vec<lsp::Location>>> {
    let position = params.text_document_position;
    let path = context.path(&position.text_document.uri)?;
    let offset = context.offset(&path, position.position)?;
    let locations = saffron_ide::references(&context.snapshot, &path, offset)
        .into_iter()
        .filter_map(|range| {
            Some(lsp::Location { uri: context.uri(&range.file)?, range: context.range(&range.file, range.span)? })
        })
        .collect();
    Ok(Some(locations))
}
