use std::path::PathBuf;

use saffron_recording::Recording;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types as lsp;

use crate::context::RequestContext;
use crate::convert::workspace_edit;

pub fn prepare(
    context: &RequestContext,
    params: lsp::TextDocumentPositionParams,
) -> Result<Option<lsp::PrepareRenameResponse>> {
    let path = context.path(&params.text_document.uri)?;
    let offset = context.offset(&path, params.position)?;
    let Some((_, span, placeholder)) = saffron_ide::prepare_rename(&context.snapshot, &path, offset) else {
        return Ok(None);
    };
    let Some(range) = context.range(&path, span) else { return Ok(None) };
    Ok(Some(lsp::PrepareRenameResponse::RangeWithPlaceholder { range, placeholder }))
}

/// The workspace edit for the feature files, and the recordings the server must rewrite.
pub fn handle(
    context: &RequestContext,
    params: lsp::RenameParams,
) -> Result<(lsp::WorkspaceEdit, Vec<(PathBuf, Recording)>)> {
    let position = params.text_document_position;
    let path = context.path(&position.text_document.uri)?;
    let offset = context.offset(&path, position.position)?;
    let change = saffron_ide::rename(&context.snapshot, &path, offset, &params.new_name)
        .map_err(|error| Error::invalid_params(error.to_string()))?;
    Ok((workspace_edit(context, &change), change.recordings))
}
