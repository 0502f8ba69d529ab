//! What a request handler gets: one snapshot of the index and the facts to map paths and
//! positions. Handlers are plain functions of it, run under a panic guard.

use std::path::{Path, PathBuf};

use ls_types::{Position, Range, Uri};
use lsp_server::{ErrorCode, ResponseError};
use saffron_index::Snapshot;

use crate::line_index::LineIndex;

pub type Result<T> = std::result::Result<T, Error>;

/// An error reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: i32,
    pub message: String,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error { code: code as i32, message: message.into() }
    }

    pub fn invalid_params(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::InvalidParams, message)
    }

    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::InternalError, message)
    }

    pub fn to_response_error(&self) -> ResponseError {
        ResponseError { code: self.code, message: self.message.clone(), data: None }
    }
}

#[derive(Clone)]
pub struct RequestContext {
    pub snapshot: Snapshot,
    pub root: PathBuf,
    pub client: ClientFeatures,
}

/// What the editor said it can do, in `initialize`.
#[derive(Debug, Clone, Default)]
pub struct ClientFeatures {
    pub snippets: bool,
    /// `completionItem.resolveSupport` covers `detail`: it can wait until an item is resolved.
    pub lazy_detail: bool,
    /// `completionList.itemDefaults` has `editRange`: a list may state its range once.
    pub default_edit_range: bool,
    /// `completionList.itemDefaults` has `insertTextFormat`.
    pub default_insert_text_format: bool,
    /// `window.workDoneProgress`: the server may show progress it starts itself.
    pub work_done_progress: bool,
    /// Commands the client carries out itself (`experimental.commands.commands`, as
    /// rust-analyzer's client declares them): the server does not offer to execute those.
    pub client_commands: Vec<String>,
}

impl ClientFeatures {
    pub fn from_capabilities(capabilities: &ls_types::ClientCapabilities) -> ClientFeatures {
        let completion = capabilities.text_document.as_ref().and_then(|t| t.completion.as_ref());
        let item = completion.and_then(|c| c.completion_item.as_ref());
        let defaults = completion.and_then(|c| c.completion_list.as_ref()).and_then(|l| l.item_defaults.as_ref());
        let has_default = |name: &str| defaults.is_some_and(|names| names.iter().any(|n| n == name));
        let client_commands = capabilities
            .experimental
            .as_ref()
            .and_then(|experimental| experimental.pointer("/commands/commands"))
            .and_then(serde_json::Value::as_array)
            .map(|commands| commands.iter().filter_map(|c| c.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        ClientFeatures {
            default_edit_range: has_default("editRange"),
            default_insert_text_format: has_default("insertTextFormat"),
            snippets: item.and_then(|i| i.snippet_support).unwrap_or(false),
            lazy_detail: item
                .and_then(|i| i.resolve_support.as_ref())
                .is_some_and(|support| support.properties.iter().any(|p| p == "detail")),
            work_done_progress: capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false),
            client_commands,
        }
    }
}

impl RequestContext {
    /// The project-relative path of a document URI (absolute when outside the root).
    pub fn path(&self, uri: &Uri) -> Result<PathBuf> {
        let path =
            uri.to_file_path().ok_or_else(|| Error::invalid_params(format!("not a file URI: {}", uri.as_str())))?;
        Ok(relative_path(&self.root, &path))
    }

    pub fn uri(&self, path: &Path) -> Option<Uri> {
        Uri::from_file_path(self.root.join(path))
    }

    pub fn text(&self, path: &Path) -> Option<&str> {
        self.snapshot.file(path).map(|file| file.source.text.as_str())
    }

    /// The byte offset of a position in an indexed file.
    pub fn offset(&self, path: &Path, position: Position) -> Result<usize> {
        let text = self.text(path).ok_or_else(|| not_indexed(path))?;
        Ok(LineIndex::new(text).offset(position))
    }

    pub fn range(&self, path: &Path, span: saffron_ide::Span) -> Option<Range> {
        Some(LineIndex::new(self.text(path)?).range(span))
    }
}

pub fn relative_path(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

pub fn not_indexed(path: &Path) -> Error {
    Error::invalid_params(format!("{} is not a .feature or .saffron file of this workspace", path.display()))
}

/// Runs a handler, turning a panic into an error reply: no request may take the server down.
pub fn guarded<T>(method: &str, handler: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(handler)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(Error::internal(format!("{method} failed: {what}")))
        }
    }
}
