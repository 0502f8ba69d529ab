//! Diagnostics are pushed (`textDocument/publishDiagnostics`) for open documents after each
//! change; this computes one document's list.

use std::path::Path;

use ls_types as lsp;

use crate::context::RequestContext;
use crate::convert::severity;
use crate::line_index::LineIndex;

pub fn compute(context: &RequestContext, path: &Path) -> Vec<lsp::Diagnostic> {
    let Some(text) = context.text(path) else { return Vec::new() };
    let index = LineIndex::new(text);
    saffron_ide::diagnostics(&context.snapshot, path)
        .into_iter()
        .map(|d| {
            let message = match &d.hint {
                Some(hint) => format!("{}\nhint: {hint}", d.message),
                None => d.message.clone(),
            };
            lsp::Diagnostic {
                range: index.range(d.span),
                severity: Some(severity(d.severity)),
                code: Some(lsp::NumberOrString::String(d.code.clone())),
                source: Some("saffron".to_string()),
                message,
                data: d.replacement.as_ref().map(|wording| serde_json::json!({ "replacement": wording })),
                ..lsp::Diagnostic::default()
            }
        })
        .collect()
}
