//! One file per LSP request: each turns LSP parameters into a saffron-ide call on one snapshot
//! and the answer back into LSP types.

pub mod author;
pub mod code_action;
pub mod code_lens;
pub mod completion;
pub mod definition;
pub mod diagnostics;
pub mod document_symbol;
pub mod execute_command;
pub mod folding_range;
pub mod formatting;
pub mod hover;
pub mod initialize;
pub mod references;
pub mod rename;
pub mod semantic_tokens;
