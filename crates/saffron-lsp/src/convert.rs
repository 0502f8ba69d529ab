//! Plain editor data (saffron-ide) to LSP types.

use std::collections::HashMap;

use ls_types as lsp;
use saffron_ide::{FoldKind, Severity, SourceChange, SymbolKind};

use crate::context::RequestContext;
use crate::line_index::LineIndex;

pub fn severity(severity: Severity) -> lsp::DiagnosticSeverity {
    match severity {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Information => lsp::DiagnosticSeverity::INFORMATION,
        Severity::Hint => lsp::DiagnosticSeverity::HINT,
    }
}

pub fn symbol_kind(kind: SymbolKind) -> lsp::SymbolKind {
    match kind {
        SymbolKind::Feature => lsp::SymbolKind::MODULE,
        SymbolKind::Rule => lsp::SymbolKind::NAMESPACE,
        SymbolKind::Background => lsp::SymbolKind::CONSTRUCTOR,
        SymbolKind::Scenario | SymbolKind::ScenarioOutline => lsp::SymbolKind::FUNCTION,
        SymbolKind::StepSet => lsp::SymbolKind::INTERFACE,
        SymbolKind::Fixture => lsp::SymbolKind::CLASS,
        SymbolKind::Examples => lsp::SymbolKind::ARRAY,
    }
}

pub fn fold_kind(kind: FoldKind) -> lsp::FoldingRangeKind {
    match kind {
        FoldKind::Region => lsp::FoldingRangeKind::Region,
        FoldKind::Comment => lsp::FoldingRangeKind::Comment,
    }
}

/// A project-wide change as a workspace edit (text edits per file, and file renames).
pub fn workspace_edit(context: &RequestContext, change: &SourceChange) -> lsp::WorkspaceEdit {
    let mut operations: Vec<lsp::DocumentChangeOperation> = Vec::new();
    let mut changes: HashMap<lsp::Uri, Vec<lsp::TextEdit>> = HashMap::new();
    for (path, edits) in &change.edits {
        let (Some(uri), Some(text)) = (context.uri(path), context.text(path)) else { continue };
        let index = LineIndex::new(text);
        let edits: Vec<lsp::TextEdit> = edits
            .iter()
            .map(|edit| lsp::TextEdit { range: index.range(edit.span), new_text: edit.new_text.clone() })
            .collect();
        changes.insert(uri, edits);
    }
    for (from, to) in &change.renamed_files {
        if let (Some(old_uri), Some(new_uri)) = (context.uri(from), context.uri(to)) {
            operations.push(lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Rename(lsp::RenameFile {
                old_uri,
                new_uri,
                options: None,
                annotation_id: None,
            })));
        }
    }
    if operations.is_empty() {
        return lsp::WorkspaceEdit { changes: Some(changes), ..lsp::WorkspaceEdit::default() };
    }
    for (uri, edits) in changes {
        operations.push(lsp::DocumentChangeOperation::Edit(lsp::TextDocumentEdit {
            text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version: None },
            edits: edits.into_iter().map(lsp::OneOf::Left).collect(),
        }));
    }
    lsp::WorkspaceEdit {
        document_changes: Some(lsp::DocumentChanges::Operations(operations)),
        ..lsp::WorkspaceEdit::default()
    }
}
