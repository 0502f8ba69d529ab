//! The main loop, in rust-analyzer's shape: one thread owns the server's state (`&mut
//! GlobalState`) and takes, one at a time, the client's messages from the reader thread, the
//! results of work done on the pool, and the moment diagnostics are due.
//!
//! Document sync is applied on the loop, in the order the client sent it, and completion (what
//! the editor waits for while the user types) is answered there too, from the editor's text. The
//! other requests get a snapshot of the index taken on the loop and are answered on the pool
//! (`dispatch`), so a slow one never holds typing up. Every handler runs under a panic guard.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use ls_types as lsp;
use ls_types::notification::{self, Notification as _};
use ls_types::request::{self, Request as _};
use lsp_server::{ErrorCode, Message, Notification, ReqQueue, Request, RequestId, Response};
use saffron_index::{Change, IndexHost, Snapshot};
use saffron_recording::{Store, layout};

use crate::context::{ClientFeatures, Error, RequestContext, guarded, relative_path};
use crate::dispatch::{Pool, RequestDispatcher};
use crate::documents::{OpenDocument, Syntax};
use crate::ext;
use crate::handlers;
use crate::transport::{Incoming, Output};

/// How long diagnostics wait for typing to pause before they are computed.
const DIAGNOSTICS_DEBOUNCE: Duration = Duration::from_millis(40);

/// The last semantic tokens sent per document: (result id, data).
pub type SentTokens = Arc<Mutex<HashMap<lsp::Uri, (String, Vec<u32>)>>>;

/// What work done off the loop sends back to it.
pub enum Task {
    /// Diagnostics computed from the index as it was at `generation`.
    Diagnostics { generation: u64, published: Vec<lsp::PublishDiagnosticsParams> },
    /// Changes to apply to the index (files the server wrote itself) before a reply goes out.
    ApplyThenRespond { changes: Vec<Change>, respond: Box<dyn FnOnce(&Output) + Send> },
    /// The index host back from the pool, with every change up to `through` applied.
    Indexed { host: Box<IndexHost>, snapshot: Snapshot, through: u64 },
}

/// Work that needs the index in step with every change made before it.
type Waiting = Box<dyn FnOnce(&mut GlobalState)>;

/// What to do with a reply to a request the server sent.
pub type ResponseHandler = Box<dyn FnOnce(&mut GlobalState, Result<serde_json::Value, lsp_server::ResponseError>)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before `initialize`: requests are refused.
    Starting,
    Running,
    /// After `shutdown`: requests are refused until `exit`.
    ShuttingDown,
}

pub struct GlobalState {
    pub output: Output,
    pub pool: Pool,
    pub tasks: Sender<Task>,
    phase: Phase,
    root: PathBuf,
    pub client: ClientFeatures,
    /// The index's writer; `None` while it is on the pool, catching up (`catch_up`).
    host: Option<IndexHost>,
    snapshot: Snapshot,
    documents: HashMap<lsp::Uri, OpenDocument>,
    /// Open documents edited since the index last saw them. A keystroke only edits the rope;
    /// the index catches up on the pool when a request needs it or typing pauses.
    dirty: HashSet<lsp::Uri>,
    /// Changes to files the editor does not hold (watched files, a closed document's disk
    /// text, the server's own writes), in order, not yet given to the index.
    pending: Vec<Change>,
    /// Changes counted as they come (edits and `pending` alike), and how many of them the
    /// index has: work in `waiting` runs once the index has every change made before it.
    changes_seen: u64,
    indexed_through: u64,
    waiting: Vec<(u64, Waiting)>,
    /// The last semantic tokens sent per document, for deltas: (result id, data). Written by
    /// the pool, which computes them.
    pub semantic_tokens: SentTokens,
    next_result_id: u64,
    /// Bumped on every change; diagnostics computed before a newer change are not sent.
    generation: u64,
    diagnostics_due: Option<Instant>,
    /// A diagnostics run is on the pool. One at a time: a large file's take a second, and runs
    /// made stale by typing must not queue up ahead of requests.
    diagnostics_running: bool,
    server_requests: ReqQueue<(), ResponseHandler>,
}

/// Runs the server until `exit` or the end of input. `true` when the client shut it down
/// properly (`shutdown`, then `exit`).
pub fn run(incoming: Receiver<Incoming>, output: Output) -> bool {
    let (tasks, finished) = crossbeam_channel::unbounded();
    let mut state = GlobalState::new(output, tasks);
    loop {
        let due = state.diagnostics_due.map_or_else(crossbeam_channel::never, crossbeam_channel::at);
        crossbeam_channel::select! {
            recv(incoming) -> message => match message {
                Ok(Incoming::Message(Message::Notification(exit))) if exit.method == notification::Exit::METHOD => {
                    return state.phase == Phase::ShuttingDown;
                }
                Ok(message) => state.guarded("a message", |state| state.handle(message)),
                // The client is gone without `exit`.
                Err(_) => return false,
            },
            recv(finished) -> task => if let Ok(task) = task {
                state.guarded("a result", |state| state.finish(task));
            },
            recv(due) -> _ => state.guarded("diagnostics", GlobalState::start_diagnostics),
        }
    }
}

impl GlobalState {
    fn new(output: Output, tasks: Sender<Task>) -> GlobalState {
        let host = IndexHost::new();
        let snapshot = host.snapshot();
        let host = Some(host);
        GlobalState {
            output,
            pool: Pool::new(),
            tasks,
            phase: Phase::Starting,
            root: PathBuf::new(),
            client: ClientFeatures::default(),
            host,
            snapshot,
            documents: HashMap::new(),
            dirty: HashSet::new(),
            pending: Vec::new(),
            changes_seen: 0,
            indexed_through: 0,
            waiting: Vec::new(),
            semantic_tokens: Arc::default(),
            next_result_id: 0,
            generation: 0,
            diagnostics_due: None,
            diagnostics_running: false,
            server_requests: ReqQueue::default(),
        }
    }

    /// Runs one step of the loop. Requests have their own guard (a panic is their error
    /// reply); a panic anywhere else (a notification, a reply's handler) is logged, and the
    /// loop goes on.
    fn guarded(&mut self, what: &str, step: impl FnOnce(&mut GlobalState)) {
        if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(self))) {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            self.log(lsp::MessageType::ERROR, format!("handling {what} failed: {why}"));
        }
    }

    fn handle(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Malformed { id, error } => self.output.respond::<()>(id.as_ref(), Err(error)),
            Incoming::Message(Message::Request(request)) => self.on_request(request),
            Incoming::Message(Message::Notification(notification)) => self.on_notification(notification),
            Incoming::Message(Message::Response(response)) => self.on_response(response),
        }
    }

    fn on_request(&mut self, request: Request) {
        let refusal = match self.phase {
            Phase::Starting if request.method != request::Initialize::METHOD => {
                Some(Error::new(ErrorCode::ServerNotInitialized, "the server is not initialized yet"))
            }
            Phase::Running if request.method == request::Initialize::METHOD => {
                Some(Error::new(ErrorCode::InvalidRequest, "the server is initialized already"))
            }
            Phase::ShuttingDown => Some(Error::new(ErrorCode::InvalidRequest, "the server is shutting down")),
            _ => None,
        };
        if let Some(error) = refusal {
            self.output.respond::<()>(Some(&request.id), Err(error));
            return;
        }
        RequestDispatcher::new(self, request)
            .on_sync_mut::<request::Initialize>(handlers::initialize::handle)
            .on_sync_mut::<request::Shutdown>(|state, ()| {
                state.phase = Phase::ShuttingDown;
                Ok(())
            })
            .on_sync::<ext::Completion>(handlers::completion::handle)
            .on_sync::<ext::ResolveCompletionItem>(handlers::completion::resolve)
            .on_sync_mut::<request::ExecuteCommand>(handlers::execute_command::handle)
            .on_deferred::<request::SemanticTokensFullRequest>(handlers::semantic_tokens::full)
            .on_deferred::<request::SemanticTokensFullDeltaRequest>(handlers::semantic_tokens::full_delta)
            .on::<request::HoverRequest>(handlers::hover::handle)
            .on::<request::GotoDefinition>(handlers::definition::handle)
            .on::<request::References>(handlers::references::handle)
            .on::<request::PrepareRenameRequest>(handlers::rename::prepare)
            .on_then_apply::<request::Rename>(handlers::rename::handle)
            .on::<request::CodeActionRequest>(handlers::code_action::handle)
            .on::<request::CodeLensRequest>(handlers::code_lens::handle)
            .on::<request::DocumentSymbolRequest>(handlers::document_symbol::handle)
            .on::<request::FoldingRangeRequest>(handlers::folding_range::handle)
            .on::<request::Formatting>(handlers::formatting::handle)
            .finish();
    }

    fn on_notification(&mut self, notification: Notification) {
        if self.phase == Phase::Starting {
            return;
        }
        let method = notification.method.clone();
        let result = match method.as_str() {
            notification::Initialized::METHOD => {
                self.register_watchers();
                Ok(())
            }
            notification::DidOpenTextDocument::METHOD => {
                serde_json::from_value(notification.params).map(|params| self.open_document(params))
            }
            notification::DidChangeTextDocument::METHOD => {
                serde_json::from_value(notification.params).map(|params| self.change_document(params))
            }
            notification::DidCloseTextDocument::METHOD => {
                serde_json::from_value(notification.params).map(|params| self.close_document(params))
            }
            notification::DidChangeWatchedFiles::METHOD => {
                serde_json::from_value(notification.params).map(|params| self.files_changed(params))
            }
            // `$/cancelRequest`, `$/setTrace` and the rest need nothing.
            _ => Ok(()),
        };
        if let Err(error) = result {
            self.log(lsp::MessageType::WARNING, format!("{method}: cannot read the parameters: {error}"));
        }
    }

    fn on_response(&mut self, response: Response) {
        if let Some(handler) = self.server_requests.outgoing.complete(response.id) {
            handler(self, response.response_result);
        }
    }

    /// Sends a request to the client; `handler` gets its reply on the loop.
    pub fn send_request<R: lsp::request::Request>(
        &mut self,
        params: R::Params,
        handler: impl FnOnce(&mut GlobalState, Result<serde_json::Value, lsp_server::ResponseError>) + 'static,
    ) {
        // Serialized here: lsp-server's `register` would panic on parameters serde cannot write.
        let params = match serde_json::to_value(params) {
            Ok(params) => params,
            Err(error) => return self.log(lsp::MessageType::ERROR, format!("cannot send {}: {error}", R::METHOD)),
        };
        let request = self.server_requests.outgoing.register(R::METHOD.to_string(), params, Box::new(handler));
        self.output.request(&request);
    }

    pub fn log(&self, kind: lsp::MessageType, message: String) {
        self.output.notify::<notification::LogMessage>(&lsp::LogMessageParams { typ: kind, message });
    }

    fn finish(&mut self, task: Task) {
        match task {
            Task::Diagnostics { generation, published } => {
                self.diagnostics_running = false;
                // A change since the snapshot: these are stale, and a newer run is due.
                if generation == self.generation {
                    for params in published {
                        self.output.notify::<notification::PublishDiagnostics>(&params);
                    }
                }
            }
            Task::ApplyThenRespond { changes, respond } => {
                if changes.is_empty() {
                    return respond(&self.output);
                }
                self.apply(changes);
                self.schedule_diagnostics();
                let output = self.output.clone();
                self.when_indexed(move |_| respond(&output));
            }
            Task::Indexed { host, snapshot, through } => {
                self.host = Some(*host);
                // The old snapshot may hold the last reference to a large file's old text and
                // tree: freeing them is work for the pool, not the loop.
                let old = std::mem::replace(&mut self.snapshot, snapshot);
                self.pool.spawn(move || drop(old));
                self.indexed_through = through;
                let (ready, waiting): (Vec<_>, Vec<_>) =
                    std::mem::take(&mut self.waiting).into_iter().partition(|(needs, _)| *needs <= through);
                self.waiting = waiting;
                for (_, work) in ready {
                    self.guarded("work waiting for the index", work);
                }
                if !self.waiting.is_empty() {
                    self.catch_up();
                }
            }
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Takes the workspace: called by `initialize`.
    pub fn start(&mut self, root: PathBuf, client: ClientFeatures) {
        self.root = root;
        self.client = client;
        let (changes, report) = saffron_index::load_project(&self.root);
        // Before any document is open: the index is built here, before `initialize` is answered.
        if let Some(host) = &mut self.host {
            host.apply_all(changes);
            self.snapshot = host.snapshot();
        }
        for problem in report.problems {
            let message = format!("skipped {}: {}", problem.path.display(), problem.message);
            self.log(lsp::MessageType::WARNING, message);
        }
        self.phase = Phase::Running;
    }

    /// The last snapshot, which may lag the open documents by the edits of the last moments.
    pub fn context_as_indexed(&self) -> RequestContext {
        RequestContext { snapshot: self.snapshot.clone(), root: self.root.clone(), client: self.client.clone() }
    }

    /// An open document, as the editor has it now.
    pub fn opened(&self, uri: &lsp::Uri) -> Option<&OpenDocument> {
        self.documents.get(uri)
    }

    /// An open document's text and incrementally maintained syntax tree, to be read off the loop.
    pub fn open_syntax(&self, uri: &lsp::Uri) -> Option<Syntax> {
        self.documents.get(uri).map(OpenDocument::syntax)
    }

    pub fn next_result_id(&mut self) -> String {
        self.next_result_id += 1;
        self.next_result_id.to_string()
    }

    /// Something changed: it goes to the index, and diagnostics computed before it give way.
    fn apply(&mut self, changes: Vec<Change>) {
        self.changes_seen += 1;
        self.pending.extend(changes);
        self.generation += 1;
    }

    /// Runs `work` on the loop once the index has every change made so far (at once when it
    /// has them): a request then sees the edits sent before it, and typing is never held up by
    /// the index catching up with a large file, which happens on the pool.
    pub fn when_indexed(&mut self, work: impl FnOnce(&mut GlobalState) + 'static) {
        if self.indexed_through == self.changes_seen {
            return work(self);
        }
        self.waiting.push((self.changes_seen, Box::new(work)));
        self.catch_up();
    }

    /// Sends the index host to the pool with the changes it has not seen (the edited open
    /// documents' texts and `pending`), unless it is there already (it comes back with
    /// `Task::Indexed`, and goes again if more is waiting).
    fn catch_up(&mut self) {
        if self.indexed_through == self.changes_seen {
            return;
        }
        let Some(mut host) = self.host.take() else { return };
        let mut changes = std::mem::take(&mut self.pending);
        let edited: Vec<(PathBuf, ropey::Rope)> = self
            .dirty
            .drain()
            .filter_map(|uri| {
                let path = relative_path(&self.root, &uri.to_file_path()?);
                Some((path, self.documents.get(&uri)?.rope.clone()))
            })
            .collect();
        let through = self.changes_seen;
        let tasks = self.tasks.clone();
        self.pool.spawn(move || {
            // Whatever happens here, the host must go back to the loop.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                changes.extend(edited.into_iter().map(|(path, rope)| Change::SetFile { path, text: rope.to_string() }));
                host.apply_all(changes);
            }));
            let snapshot = host.snapshot();
            let _ = tasks.send(Task::Indexed { host: Box::new(host), snapshot, through });
        });
    }

    fn path_of(&self, uri: &lsp::Uri) -> Option<PathBuf> {
        Some(relative_path(&self.root, &uri.to_file_path()?))
    }

    /// Diagnostics of every open document once typing pauses.
    fn schedule_diagnostics(&mut self) {
        self.diagnostics_due = Some(Instant::now() + DIAGNOSTICS_DEBOUNCE);
    }

    /// Computes the diagnostics of the open documents on the pool, once the index has caught
    /// up with every change so far.
    fn start_diagnostics(&mut self) {
        self.diagnostics_due = None;
        self.when_indexed(GlobalState::compute_diagnostics);
    }

    fn compute_diagnostics(&mut self) {
        // A change came in while the index caught up: its own run is due.
        if self.diagnostics_due.is_some() {
            return;
        }
        if self.diagnostics_running {
            // Once the run on the pool is over.
            self.diagnostics_due = Some(Instant::now() + DIAGNOSTICS_DEBOUNCE);
            return;
        }
        self.diagnostics_running = true;
        let documents: Vec<(lsp::Uri, i32)> =
            self.documents.iter().map(|(uri, document)| (uri.clone(), document.version)).collect();
        let context = self.context_as_indexed();
        let generation = self.generation;
        let tasks = self.tasks.clone();
        self.pool.spawn(move || {
            let published = documents
                .into_iter()
                .filter_map(|(uri, version)| {
                    let path = context.path(&uri).ok()?;
                    let diagnostics = guarded("diagnostics", || Ok(handlers::diagnostics::compute(&context, &path)));
                    Some(lsp::PublishDiagnosticsParams::new(uri, diagnostics.unwrap_or_default(), Some(version)))
                })
                .collect();
            let _ = tasks.send(Task::Diagnostics { generation, published });
        });
    }

    fn open_document(&mut self, params: lsp::DidOpenTextDocumentParams) {
        let document = params.text_document;
        self.documents.insert(document.uri.clone(), OpenDocument::new(&document.text, document.version));
        if self.path_of(&document.uri).is_some() {
            self.edited(document.uri);
        }
    }

    fn change_document(&mut self, params: lsp::DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let Some(document) = self.documents.get_mut(&uri) else { return };
        document.apply(params.content_changes, params.text_document.version);
        self.edited(uri);
    }

    /// An open document's text changed: the index gets it when it next catches up.
    fn edited(&mut self, uri: lsp::Uri) {
        self.dirty.insert(uri);
        self.changes_seen += 1;
        self.generation += 1;
        self.schedule_diagnostics();
    }

    fn close_document(&mut self, params: lsp::DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.documents.remove(&uri);
        self.dirty.remove(&uri);
        self.semantic_tokens.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&uri);
        // The file on disk is the truth again (the editor may have discarded changes).
        if let Some(path) = uri.to_file_path()
            && let Some(change) = disk_change(&self.root, &path, !path.exists())
        {
            self.apply(vec![change]);
            self.schedule_diagnostics();
        }
        self.output.notify::<notification::PublishDiagnostics>(&lsp::PublishDiagnosticsParams::new(
            uri,
            Vec::new(),
            None,
        ));
    }

    fn files_changed(&mut self, params: lsp::DidChangeWatchedFilesParams) {
        let changes: Vec<Change> = params
            .changes
            .into_iter()
            .filter(|event| !self.documents.contains_key(&event.uri))
            .filter_map(|event| {
                let path = event.uri.to_file_path()?.into_owned();
                disk_change(&self.root, &path, event.typ == lsp::FileChangeType::DELETED)
            })
            .collect();
        if !changes.is_empty() {
            self.apply(changes);
            self.schedule_diagnostics();
        }
    }

    fn register_watchers(&mut self) {
        let watchers = ["**/*.feature".to_string(), "**/*.saffron".to_string()]
            .into_iter()
            .chain(layout::indexed_globs())
            // Each run appends to it: the flaky and chronic lenses follow.
            .chain([format!("**/{}", saffron_index::history::HISTORY)])
            .map(|glob| lsp::FileSystemWatcher { glob_pattern: lsp::GlobPattern::String(glob), kind: None })
            .collect();
        let options = lsp::DidChangeWatchedFilesRegistrationOptions { watchers };
        let registration = lsp::Registration {
            id: "saffron-files".to_string(),
            method: notification::DidChangeWatchedFiles::METHOD.to_string(),
            register_options: serde_json::to_value(options).ok(),
        };
        let params = lsp::RegistrationParams { registrations: vec![registration] };
        self.send_request::<request::RegisterCapability>(params, |state, reply| {
            if let Err(error) = reply {
                state.log(lsp::MessageType::WARNING, format!("cannot watch files: {}", error.message));
            }
        });
    }
}

/// What a change on disk means for the index.
fn disk_change(root: &Path, path: &Path, deleted: bool) -> Option<Change> {
    let relative = relative_path(root, path);
    if relative == Path::new(saffron_index::history::HISTORY) {
        return Some(saffron_index::history::change(root));
    }
    if layout::is_recording(&relative) {
        if deleted {
            return Some(Change::RemoveRecording { path: relative });
        }
        let store = Store::open(root).ok()?;
        return Some(match store.read_recording(path) {
            Ok(recording) => Change::SetRecording { path: relative, recording: Box::new(recording) },
            Err(error) => Change::SetUnreadableRecording { path: relative, reason: error.to_string() },
        });
    }
    if layout::is_proposal(&relative) {
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

/// Answers `id` with the error for a request that names no method this server has.
pub fn method_not_found(output: &Output, id: &RequestId, method: &str) {
    output.respond::<()>(Some(id), Err(Error::new(ErrorCode::MethodNotFound, format!("unknown method {method}"))));
}
