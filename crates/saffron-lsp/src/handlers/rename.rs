use ls_types as lsp;
use saffron_index::Change;
use saffron_recording::Store;

use crate::context::{Error, RequestContext, Result};
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

/// The workspace edit for the feature files. Recordings are not open in the editor: the server
/// rewrites those that hold the step itself, atomically and under the store's lock (digests
/// recomputed, so the scenarios stay fresh), and the index takes them in before the reply.
pub fn handle(
    context: &RequestContext,
    params: lsp::RenameParams,
) -> Result<(Option<lsp::WorkspaceEdit>, Vec<Change>)> {
    let position = params.text_document_position;
    let path = context.path(&position.text_document.uri)?;
    let offset = context.offset(&path, position.position)?;
    let change = saffron_ide::rename(&context.snapshot, &path, offset, &params.new_name)
        .map_err(|error| Error::invalid_params(error.to_string()))?;
    let edit = workspace_edit(context, &change);
    let mut changes = Vec::new();
    if !change.recordings.is_empty() {
        let store = Store::open(&context.root).map_err(|error| Error::internal(error.to_string()))?;
        let lock = store.lock().map_err(|error| Error::internal(error.to_string()))?;
        for (path, recording) in change.recordings {
            lock.write_recording(&context.root.join(&path), &recording)
                .map_err(|error| Error::internal(error.to_string()))?;
            changes.push(Change::SetRecording { path, recording: Box::new(recording) });
        }
    }
    Ok((Some(edit), changes))
}
