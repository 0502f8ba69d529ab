//! Saffron's editor features as plain data: each function takes an index [`Snapshot`] (with
//! the edited file's current text already applied), a file and a byte offset, and returns
//! spans, texts and edits. No LSP types here: `saffron-lsp` translates, so every feature is
//! tested without a server.

mod author;
mod code_actions;
mod code_lens;
mod completion;
mod context;
mod diagnostics;
mod folding;
mod format;
mod hover;
mod navigation;
mod ranking;
mod rename;
mod semantic_tokens;
mod snippet;
mod symbols;
mod syntax_tree;

use std::path::PathBuf;
use std::sync::Arc;

pub use author::{Insertion, draft_to_append, prose_in_description};
pub use code_actions::{CodeAction, code_actions};
pub use code_lens::{CodeLens, LensCommand, code_lenses};
pub use completion::{
    CompletionItem, CompletionKind, Description, MAX_STEP_ITEMS, PREVIOUS_STEP_LINES, SortText, badge,
    completion_detail, completion_documentation, completions, completions_in, completions_on_line,
};
pub use diagnostics::{IdeDiagnostic, diagnostics, diagnostics_against};
pub use folding::{FoldKind, FoldingRange, folding_ranges};
pub use format::format;
pub use hover::{Hover, hover};
pub use navigation::{FileRange, definition, references};
pub use ranking::{Excluded, RankedStep, StepContext, next_steps, rank_steps};
pub use rename::{RenameError, RenameTarget, prepare_rename, rename};
pub use saffron_index::Snapshot;
pub use saffron_syntax::{Severity, Span};
pub use semantic_tokens::{SemanticToken, TokenType, semantic_tokens};
pub use snippet::snippet_body;
pub use symbols::{Symbol, SymbolKind, document_symbols};
pub use syntax_tree::{SyntaxTree, TextChange};

/// A replacement of `span` by `new_text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub span: Span,
    pub new_text: String,
}

/// Edits across the project, applied together.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SourceChange {
    /// Per file (relative to the project root), edits that do not overlap.
    pub edits: Vec<(Arc<std::path::Path>, Vec<TextEdit>)>,
    /// Files to rename, `(from, to)`.
    pub renamed_files: Vec<(PathBuf, PathBuf)>,
    /// Recordings to rewrite (they stay fresh after a step rename); written by the caller,
    /// atomically, through the store.
    pub recordings: Vec<(PathBuf, saffron_recording::Recording)>,
}
