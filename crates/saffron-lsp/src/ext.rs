//! Request types of saffron's own on standard method names, where ls-types lags the protocol
//! (as rust-analyzer's `lsp/ext.rs` does for lsp-types).
//!
//! - `textDocument/completion` answers LSP 3.17's `CompletionList` with `itemDefaults` and
//!   `textEditText`, which ls-types 0.0.6 lacks. With them a list states the replaced range and
//!   the text format once instead of in every item: a third of a list's bytes.
//! - `completionItem/resolve` takes and gives the item as JSON, so every field the client sent
//!   goes back, including fields ls-types does not know.

use ls_types::request::Request;
use ls_types::{CompletionItemKind, CompletionParams, InsertTextFormat, Range};
use serde::{Deserialize, Serialize};

pub enum Completion {}

impl Request for Completion {
    type Params = CompletionParams;
    type Result = Option<CompletionList>;
    const METHOD: &'static str = "textDocument/completion";
}

pub enum ResolveCompletionItem {}

impl Request for ResolveCompletionItem {
    type Params = serde_json::Value;
    type Result = serde_json::Value;
    const METHOD: &'static str = "completionItem/resolve";
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionList {
    pub is_incomplete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_defaults: Option<CompletionItemDefaults>,
    pub items: Vec<CompletionItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionItemDefaults {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_range: Option<Range>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_text_format: Option<InsertTextFormat>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionItem {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_details: Option<ls_types::CompletionItemLabelDetails>,
    pub kind: CompletionItemKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation: Option<ls_types::MarkupContent>,
    pub sort_text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_text_format: Option<InsertTextFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_edit: Option<ls_types::TextEdit>,
    /// The text to insert over the list's default edit range, when it is not the label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_edit_text: Option<String>,
}
