//! The server: document sync and file watching feed the index; every request is answered from
//! one snapshot of it, under a panic guard: on a blocking thread, except completion, which is
//! answered at once from the input guard (see `transport::DIRECT_METHODS`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use saffron_index::{Change, IndexHost, Snapshot};
use saffron_recording::Store;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::{Client, LanguageServer};

use crate::context::{ClientFeatures, RequestContext, guarded, relative_path};
use crate::documents::OpenDocument;
use crate::handlers;
use crate::transport::{DirectHandler, Handled, PreparedReplies};

/// How long diagnostics wait for typing to pause before they are computed.
const DIAGNOSTICS_DEBOUNCE: Duration = Duration::from_millis(40);

pub struct Backend {
    client: Client,
    state: Arc<State>,
    replies: Arc<PreparedReplies>,
}

#[derive(Default)]
struct State {
    root: RwLock<PathBuf>,
    host: Mutex<IndexHost>,
    snapshot: RwLock<Option<Snapshot>>,
    documents: Mutex<HashMap<lsp::Uri, OpenDocument>>,
    /// Open documents edited since the index last saw them. A keystroke only edits the rope;
    /// the index catches up when a request needs it or typing pauses (`flush`).
    dirty: Mutex<HashSet<lsp::Uri>>,
    /// The last semantic tokens sent per document, for deltas: (result id, data).
    semantic: Mutex<HashMap<lsp::Uri, (String, Vec<u32>)>>,
    client: RwLock<ClientFeatures>,
    /// Bumped on every change; a diagnostics run that sees a newer value gives way.
    generation: AtomicU64,
    /// Set when a change asks for diagnostics, until the diagnostics task takes it up.
    diagnostics_wanted: AtomicBool,
    diagnostics_requested: tokio::sync::Notify,
    next_result_id: AtomicU64,
    /// From `initialized` to `shutdown`: the span in which the input guard may answer a
    /// request itself (outside it the framework answers with the proper error).
    serving: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock means a handler panicked while holding it; the data is still usable
    // (every update is a whole replacement), and refusing it would take the server down.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl State {
    fn root(&self) -> PathBuf {
        self.root.read().map(|r| r.clone()).unwrap_or_default()
    }

    /// A snapshot in step with every open document.
    fn context(&self) -> RequestContext {
        self.flush();
        self.context_as_indexed()
    }

    /// The last snapshot, which may lag the open documents by the edits of the last moments.
    fn context_as_indexed(&self) -> RequestContext {
        let snapshot = self.snapshot.read().ok().and_then(|s| s.clone()).unwrap_or_else(|| lock(&self.host).snapshot());
        let client = self.client.read().map(|client| *client).unwrap_or_default();
        RequestContext { snapshot, root: self.root(), client }
    }

    /// Something changed: index it, and let pending diagnostics runs give way to a new one.
    fn apply(&self, changes: Vec<Change>) {
        self.apply_to_index(changes);
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn apply_to_index(&self, changes: Vec<Change>) {
        let mut host = lock(&self.host);
        host.apply_all(changes);
        let snapshot = host.snapshot();
        if let Ok(mut current) = self.snapshot.write() {
            *current = Some(snapshot);
        }
    }

    /// Brings the index up to date with the edited open documents. The edits were counted
    /// as changes when they came in, so this does not bump the generation.
    fn flush(&self) {
        let dirty: Vec<lsp::Uri> = lock(&self.dirty).drain().collect();
        if dirty.is_empty() {
            return;
        }
        let changes: Vec<Change> = {
            let documents = lock(&self.documents);
            dirty
                .iter()
                .filter_map(|uri| Some(Change::SetFile { path: self.path_of(uri)?, text: documents.get(uri)?.text() }))
                .collect()
        };
        self.apply_to_index(changes);
    }

    /// The current text of an open document.
    fn open_text(&self, uri: &lsp::Uri) -> Option<String> {
        lock(&self.documents).get(uri).map(OpenDocument::text)
    }

    fn path_of(&self, uri: &lsp::Uri) -> Option<PathBuf> {
        Some(relative_path(&self.root(), &uri.to_file_path()?))
    }

    /// Asks for diagnostics of every open document once typing pauses. A keystroke only sets
    /// a flag: the one diagnostics task (`start_diagnostics`) is woken when it is idle, not
    /// once per keystroke.
    fn schedule_diagnostics(&self) {
        if !self.diagnostics_wanted.swap(true, Ordering::SeqCst) {
            self.diagnostics_requested.notify_one();
        }
    }

    fn open_document(&self, params: lsp::DidOpenTextDocumentParams) {
        let document = params.text_document;
        lock(&self.documents).insert(document.uri.clone(), OpenDocument::new(&document.text, document.version));
        lock(&self.dirty).remove(&document.uri);
        if let Some(path) = self.path_of(&document.uri) {
            self.apply(vec![Change::SetFile { path, text: document.text }]);
            self.schedule_diagnostics();
        }
    }

    fn change_document(&self, params: lsp::DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        {
            let mut documents = lock(&self.documents);
            let Some(document) = documents.get_mut(&uri) else { return };
            document.apply(params.content_changes, params.text_document.version);
        }
        lock(&self.dirty).insert(uri);
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.schedule_diagnostics();
    }

    /// Forgets the document; the caller clears its diagnostics.
    fn close_document(&self, uri: &lsp::Uri) {
        lock(&self.documents).remove(uri);
        lock(&self.dirty).remove(uri);
        lock(&self.semantic).remove(uri);
        // The file on disk is the truth again (the editor may have discarded changes).
        if let Some(path) = uri.to_file_path()
            && let Some(change) = disk_change(&self.root(), &path, !path.exists())
        {
            self.apply(vec![change]);
            self.schedule_diagnostics();
        }
    }

    /// A message the input guard offers before the framework (see `transport::DIRECT_METHODS`).
    fn take_directly(&self, method: &str, body: &[u8]) -> Handled {
        #[derive(serde::Deserialize)]
        struct Notification<P> {
            params: P,
        }
        fn params<P: serde::de::DeserializeOwned>(body: &[u8]) -> Option<P> {
            serde_json::from_slice::<Notification<P>>(body).ok().map(|message| message.params)
        }
        // A notification that cannot be read goes to the framework, which logs and drops it.
        let taken = |done: bool| if done { Handled::Taken(Vec::new()) } else { Handled::Passed };
        match method {
            "textDocument/didOpen" => taken(params(body).map(|params| self.open_document(params)).is_some()),
            "textDocument/didChange" => taken(params(body).map(|params| self.change_document(params)).is_some()),
            "textDocument/didClose" => match params::<lsp::DidCloseTextDocumentParams>(body) {
                Some(params) => {
                    self.close_document(&params.text_document.uri);
                    let cleared = lsp::PublishDiagnosticsParams::new(params.text_document.uri, Vec::new(), None);
                    let notification = serde_json::json!({
                        "jsonrpc": "2.0",
                        "method": "textDocument/publishDiagnostics",
                        "params": cleared,
                    });
                    Handled::Taken(vec![notification.to_string().into_bytes()])
                }
                None => Handled::Passed,
            },
            "textDocument/completion" if self.serving.load(Ordering::SeqCst) => self.complete_directly(body),
            _ => Handled::Passed,
        }
    }

    /// `textDocument/completion` answered from the input guard. Anything but a list (a request
    /// that cannot be read, an error) is passed to the framework, which answers it properly.
    fn complete_directly(&self, body: &[u8]) -> Handled {
        #[derive(serde::Deserialize)]
        struct Request<'a> {
            #[serde(borrow)]
            id: &'a serde_json::value::RawValue,
            params: lsp::CompletionParams,
        }
        let Ok(request) = serde_json::from_slice::<Request>(body) else { return Handled::Passed };
        let mut reply = Vec::new();
        reply.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        reply.extend_from_slice(request.id.get().as_bytes());
        reply.extend_from_slice(br#","result":"#);
        match self.write_completion(&mut reply, request.params) {
            Ok(true) => {}
            Ok(false) => reply.extend_from_slice(b"null"),
            Err(_) => return Handled::Passed,
        }
        reply.push(b'}');
        Handled::Taken(vec![reply])
    }

    /// The completion list as JSON, appended to `out`; `false` for no list. Answered from the
    /// editor's text and the vocabulary as last indexed, without waiting for the index (it
    /// takes microseconds; the keystroke's own step is the only thing the index may not have
    /// yet).
    fn write_completion(&self, out: &mut Vec<u8>, params: lsp::CompletionParams) -> Result<bool> {
        let text = self.open_text(&params.text_document_position.text_document.uri);
        let context = self.context_as_indexed();
        guarded("completion", || handlers::completion::write_json(out, &context, params, text))
    }
}

impl Backend {
    /// `replies` is shared with the output (see `transport::PreparedReplies`).
    pub fn new(client: Client, replies: Arc<PreparedReplies>) -> Backend {
        Backend { client, state: Arc::new(State::default()), replies }
    }

    /// The handler the input guard offers document sync and completion to (see `transport`).
    pub fn direct_handler(&self) -> DirectHandler {
        let state = self.state.clone();
        Arc::new(move |method: &str, body: &[u8]| {
            // A panic must not take the reader down; the framework then gets the message and
            // answers a request with the error (a notification is dropped either way).
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| state.take_directly(method, body)))
                .unwrap_or(Handled::Passed)
        })
    }

    /// Answers a frame the transport guard could not pass on (see `transport`).
    pub async fn malformed_message(&self, params: serde_json::Value) -> Result<()> {
        Err(if params["kind"] == "parse" { Error::parse_error() } else { Error::invalid_request() })
    }

    /// `textDocument/completion`, routed here by the transport (see `handlers::completion`).
    pub async fn completion(&self, params: lsp::CompletionParams) -> Result<serde_json::Value> {
        // Answered here, not on a blocking thread; the list is written to JSON here, not by the
        // framework (see `PreparedReplies`).
        let mut list = Vec::new();
        Ok(if self.state.write_completion(&mut list, params)? {
            self.replies.hold(list)
        } else {
            serde_json::Value::Null
        })
    }

    /// `completionItem/resolve`, routed here by the transport.
    pub async fn completion_resolve(&self, item: serde_json::Value) -> Result<serde_json::Value> {
        self.run("completionItem/resolve", move |context| handlers::completion::resolve(&context, item)).await
    }

    /// Runs a handler on a blocking thread with its own snapshot.
    async fn run<T: Send + 'static>(
        &self,
        method: &'static str,
        handler: impl FnOnce(RequestContext) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let context = self.state.context();
        tokio::task::spawn_blocking(move || guarded(method, || handler(context)))
            .await
            .unwrap_or_else(|error| Err(internal(format!("{method} failed: {error}"))))
    }

    /// The incrementally maintained syntax tree of an open document (cheap to clone).
    fn open_tree(&self, uri: &lsp::Uri) -> Option<saffron_ide::SyntaxTree> {
        lock(&self.state.documents).get_mut(uri).and_then(OpenDocument::tree)
    }

    /// The diagnostics task: started once, in `initialized`.
    fn start_diagnostics(&self) {
        let state = self.state.clone();
        let client = self.client.clone();
        tokio::spawn(async move {
            loop {
                state.diagnostics_requested.notified().await;
                // Wait until no change came in for a whole debounce period.
                let mut seen = state.generation.load(Ordering::SeqCst);
                loop {
                    tokio::time::sleep(DIAGNOSTICS_DEBOUNCE).await;
                    let now = state.generation.load(Ordering::SeqCst);
                    if now == seen {
                        break;
                    }
                    seen = now;
                }
                // A change from here on asks again (and wakes this task when it is done). One
                // that came in just before is covered: a change bumps the generation before it
                // asks, so the generation read after the flag is cleared includes it.
                state.diagnostics_wanted.store(false, Ordering::SeqCst);
                let generation = state.generation.load(Ordering::SeqCst);
                publish_diagnostics(&state, &client, generation).await;
            }
        });
    }

    async fn register_watchers(&self) {
        let watchers =
            ["**/*.feature", "**/*.saffron", "**/.saffron/cache/**/*.json", "**/.saffron/proposals/**/*.json"]
                .into_iter()
                .map(|glob| lsp::FileSystemWatcher {
                    glob_pattern: lsp::GlobPattern::String(glob.to_string()),
                    kind: None,
                })
                .collect();
        let options = lsp::DidChangeWatchedFilesRegistrationOptions { watchers };
        let registration = lsp::Registration {
            id: "saffron-files".to_string(),
            method: "workspace/didChangeWatchedFiles".to_string(),
            register_options: serde_json::to_value(options).ok(),
        };
        if let Err(error) = self.client.register_capability(vec![registration]).await {
            self.client.log_message(lsp::MessageType::WARNING, format!("cannot watch files: {error}")).await;
        }
    }
}

/// Computes and publishes the diagnostics of every open document, unless a change makes them
/// stale on the way.
async fn publish_diagnostics(state: &Arc<State>, client: &Client, generation: u64) {
    let documents: Vec<(lsp::Uri, i32)> =
        lock(&state.documents).iter().map(|(uri, doc)| (uri.clone(), doc.version)).collect();
    let context = state.context();
    let computed = tokio::task::spawn_blocking(move || {
        documents
            .into_iter()
            .filter_map(|(uri, version)| {
                let path = context.path(&uri).ok()?;
                let diagnostics = guarded("diagnostics", || Ok(handlers::diagnostics::compute(&context, &path)));
                Some((uri, version, diagnostics.unwrap_or_default()))
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    for (uri, version, diagnostics) in computed {
        if state.generation.load(Ordering::SeqCst) != generation {
            return;
        }
        client.publish_diagnostics(uri, diagnostics, Some(version)).await;
    }
}

fn internal(message: String) -> Error {
    Error { code: ErrorCode::InternalError, message: message.into(), data: None }
}

/// What a change on disk means for the index.
fn disk_change(root: &Path, path: &Path, deleted: bool) -> Option<Change> {
    let relative = relative_path(root, path);
    let in_store = |folder: &str| relative.starts_with(Path::new(".saffron").join(folder));
    if in_store("cache") && path.extension().is_some_and(|e| e == "json") {
        if deleted {
            return Some(Change::RemoveRecording { path: relative });
        }
        let store = Store::open(root).ok()?;
        return Some(match store.read_recording(path) {
            Ok(recording) => Change::SetRecording { path: relative, recording: Box::new(recording) },
            Err(error) => Change::SetUnreadableRecording { path: relative, reason: error.to_string() },
        });
    }
    if in_store("proposals") && path.extension().is_some_and(|e| e == "json") {
        if deleted {
            return Some(Change::RemoveProposal { path: relative });
        }
        let store = Store::open(root).ok()?;
        return match store.read_proposal(path) {
            Ok(proposal) => Some(Change::SetProposal { path: relative, proposal: Box::new(proposal) }),
            Err(_) => Some(Change::RemoveProposal { path: relative }),
        };
    }
    saffron_syntax::SourceKind::from_path(path)?;
    match std::fs::read_to_string(path) {
        Ok(text) if !deleted => Some(Change::SetFile { path: relative, text }),
        _ => Some(Change::RemoveFile { path: relative }),
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: lsp::InitializeParams) -> Result<lsp::InitializeResult> {
        #[allow(deprecated)] // root_uri is still what many clients send.
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|folders| folders.first())
            .and_then(|folder| folder.uri.to_file_path().map(|p| p.into_owned()))
            .or_else(|| params.root_uri.as_ref().and_then(|uri| uri.to_file_path().map(|p| p.into_owned())))
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        if let Ok(mut client) = self.state.client.write() {
            *client = ClientFeatures::from_capabilities(&params.capabilities);
        }
        if let Ok(mut current) = self.state.root.write() {
            *current = root.clone();
        }
        let (changes, report) = tokio::task::spawn_blocking(move || saffron_index::load_project(&root))
            .await
            .map_err(|error| internal(format!("cannot load the workspace: {error}")))?;
        self.state.apply(changes);
        for problem in report.problems {
            let message = format!("skipped {}: {}", problem.path.display(), problem.message);
            self.client.log_message(lsp::MessageType::WARNING, message).await;
        }

        Ok(lsp::InitializeResult {
            server_info: Some(lsp::ServerInfo {
                name: "saffron".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            capabilities: lsp::ServerCapabilities {
                position_encoding: Some(lsp::PositionEncodingKind::UTF16),
                text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(lsp::TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                    ..lsp::TextDocumentSyncOptions::default()
                })),
                completion_provider: Some(lsp::CompletionOptions {
                    trigger_characters: Some(vec![" ".to_string()]),
                    resolve_provider: Some(true),
                    ..lsp::CompletionOptions::default()
                }),
                hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
                definition_provider: Some(lsp::OneOf::Left(true)),
                references_provider: Some(lsp::OneOf::Left(true)),
                rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
                    prepare_provider: Some(true),
                    work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
                })),
                code_action_provider: Some(lsp::CodeActionProviderCapability::Options(lsp::CodeActionOptions {
                    code_action_kinds: Some(vec![lsp::CodeActionKind::QUICKFIX]),
                    ..lsp::CodeActionOptions::default()
                })),
                code_lens_provider: Some(lsp::CodeLensOptions { resolve_provider: Some(false) }),
                document_symbol_provider: Some(lsp::OneOf::Left(true)),
                folding_range_provider: Some(lsp::FoldingRangeProviderCapability::Simple(true)),
                document_formatting_provider: Some(lsp::OneOf::Left(true)),
                semantic_tokens_provider: Some(lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                    lsp::SemanticTokensOptions {
                        legend: handlers::semantic_tokens::legend(),
                        full: Some(lsp::SemanticTokensFullOptions::Delta { delta: Some(true) }),
                        range: None,
                        work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
                    },
                )),
                ..lsp::ServerCapabilities::default()
            },
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: lsp::InitializedParams) {
        self.start_diagnostics();
        self.state.serving.store(true, Ordering::SeqCst);
        self.register_watchers().await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.state.serving.store(false, Ordering::SeqCst);
        Ok(())
    }

    // Document sync normally comes through the input guard (`State::take_directly`); these
    // are the framework's path for the same messages.
    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        self.state.open_document(params);
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        self.state.change_document(params);
    }

    async fn did_close(&self, params: lsp::DidCloseTextDocumentParams) {
        self.state.close_document(&params.text_document.uri);
        self.client.publish_diagnostics(params.text_document.uri, Vec::new(), None).await;
    }

    async fn did_change_watched_files(&self, params: lsp::DidChangeWatchedFilesParams) {
        let root = self.state.root();
        let open: Vec<lsp::Uri> = lock(&self.state.documents).keys().cloned().collect();
        let changes: Vec<Change> = params
            .changes
            .into_iter()
            .filter(|event| !open.contains(&event.uri))
            .filter_map(|event| {
                let path = event.uri.to_file_path()?.into_owned();
                disk_change(&root, &path, event.typ == lsp::FileChangeType::DELETED)
            })
            .collect();
        if !changes.is_empty() {
            self.state.apply(changes);
            self.state.schedule_diagnostics();
        }
    }

    async fn hover(&self, params: lsp::HoverParams) -> Result<Option<lsp::Hover>> {
        self.run("hover", move |context| handlers::hover::handle(&context, params)).await
    }

    async fn goto_definition(&self, params: lsp::GotoDefinitionParams) -> Result<Option<lsp::GotoDefinitionResponse>> {
        self.run("definition", move |context| handlers::definition::handle(&context, params)).await
    }

    async fn references(&self, params: lsp::ReferenceParams) -> Result<Option<Vec<lsp::Location>>> {
        self.run("references", move |context| handlers::references::handle(&context, params)).await
    }

    async fn prepare_rename(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> Result<Option<lsp::PrepareRenameResponse>> {
        self.run("prepareRename", move |context| handlers::rename::prepare(&context, params)).await
    }

    async fn rename(&self, params: lsp::RenameParams) -> Result<Option<lsp::WorkspaceEdit>> {
        let root = self.state.root();
        let (edit, recordings) = self.run("rename", move |context| handlers::rename::handle(&context, params)).await?;
        if !recordings.is_empty() {
            // Recordings are not open in the editor: the server rewrites them itself, atomically
            // and under the store's lock, so they stay fresh with the renamed step.
            let store = Store::open(&root).map_err(|error| internal(error.to_string()))?;
            let lock = store.lock().map_err(|error| internal(error.to_string()))?;
            let mut changes = Vec::new();
            for (path, recording) in recordings {
                lock.write_recording(&root.join(&path), &recording).map_err(|error| internal(error.to_string()))?;
                changes.push(Change::SetRecording { path, recording: Box::new(recording) });
            }
            drop(lock);
            self.state.apply(changes);
        }
        Ok(Some(edit))
    }

    async fn code_action(&self, params: lsp::CodeActionParams) -> Result<Option<lsp::CodeActionResponse>> {
        self.run("codeAction", move |context| handlers::code_action::handle(&context, params)).await
    }

    async fn code_lens(&self, params: lsp::CodeLensParams) -> Result<Option<Vec<lsp::CodeLens>>> {
        self.run("codeLens", move |context| handlers::code_lens::handle(&context, params)).await
    }

    async fn document_symbol(&self, params: lsp::DocumentSymbolParams) -> Result<Option<lsp::DocumentSymbolResponse>> {
        self.run("documentSymbol", move |context| handlers::document_symbol::handle(&context, params)).await
    }

    async fn folding_range(&self, params: lsp::FoldingRangeParams) -> Result<Option<Vec<lsp::FoldingRange>>> {
        self.run("foldingRange", move |context| handlers::folding_range::handle(&context, params)).await
    }

    async fn formatting(&self, params: lsp::DocumentFormattingParams) -> Result<Option<Vec<lsp::TextEdit>>> {
        self.run("formatting", move |context| handlers::formatting::handle(&context, params)).await
    }

    async fn semantic_tokens_full(
        &self,
        params: lsp::SemanticTokensParams,
    ) -> Result<Option<lsp::SemanticTokensResult>> {
        let uri = params.text_document.uri;
        let encode_uri = uri.clone();
        let tree = self.open_tree(&uri);
        let data = self
            .run("semanticTokens", move |context| handlers::semantic_tokens::encode(&context, &encode_uri, tree))
            .await?;
        let id = self.state.next_result_id.fetch_add(1, Ordering::Relaxed).to_string();
        let tokens = handlers::semantic_tokens::to_tokens(&data, id.clone());
        lock(&self.state.semantic).insert(uri, (id, data));
        Ok(Some(lsp::SemanticTokensResult::Tokens(tokens)))
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: lsp::SemanticTokensDeltaParams,
    ) -> Result<Option<lsp::SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri;
        let encode_uri = uri.clone();
        let tree = self.open_tree(&uri);
        let data = self
            .run("semanticTokens", move |context| handlers::semantic_tokens::encode(&context, &encode_uri, tree))
            .await?;
        let id = self.state.next_result_id.fetch_add(1, Ordering::Relaxed).to_string();
        let previous = lock(&self.state.semantic).get(&uri).cloned();
        let result = match previous {
            Some((previous_id, previous_data)) if previous_id == params.previous_result_id => {
                lsp::SemanticTokensFullDeltaResult::TokensDelta(lsp::SemanticTokensDelta {
                    result_id: Some(id.clone()),
                    edits: handlers::semantic_tokens::delta(&previous_data, &data),
                })
            }
            _ => lsp::SemanticTokensFullDeltaResult::Tokens(handlers::semantic_tokens::to_tokens(&data, id.clone())),
        };
        lock(&self.state.semantic).insert(uri, (id, data));
        Ok(Some(result))
    }
}
