//! Routing a request to its handler by the request type's `METHOD` (so a method is named once),
//! and the execution model each handler gets, as in rust-analyzer's `handlers/dispatch.rs`:
//!
//! - `on_sync_mut`: on the main loop, with `&mut GlobalState` (initialize, commands);
//! - `on_sync`: on the main loop, reading the state (completion: typing waits for it);
//! - `on_deferred`: prepared on the loop (what only the loop can take), finished on the pool;
//! - `on`: on the pool, from a snapshot in step with the open documents;
//! - `on_then_apply`: on the pool, and what the handler wrote to disk is applied to the index on
//!   the loop before the reply goes out.
//!
//! Every handler runs under a panic guard: a panic is an error reply, never a crash.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crossbeam_channel::Sender;
use ls_types::request::Request as LspRequest;
use lsp_server::{Request, RequestId};

use saffron_index::Change;

use crate::context::{Error, RequestContext, Result, guarded};
use crate::main_loop::{GlobalState, Task, method_not_found};
use crate::transport::Output;

pub struct RequestDispatcher<'a> {
    request: Option<Request>,
    state: &'a mut GlobalState,
}

impl<'a> RequestDispatcher<'a> {
    pub fn new(state: &'a mut GlobalState, request: Request) -> RequestDispatcher<'a> {
        RequestDispatcher { request: Some(request), state }
    }

    /// The request's id and parameters when it is `R`; parameters that cannot be read are
    /// answered with `-32602` here.
    fn take<R: LspRequest>(&mut self) -> Option<(RequestId, R::Params)> {
        let request = self.request.take_if(|request| request.method == R::METHOD)?;
        match serde_json::from_value(request.params) {
            Ok(params) => Some((request.id, params)),
            Err(error) => {
                let error = Error::invalid_params(format!("{}: {error}", R::METHOD));
                self.state.output.respond::<()>(Some(&request.id), Err(error));
                None
            }
        }
    }

    pub fn on_sync_mut<R: LspRequest>(mut self, handler: fn(&mut GlobalState, R::Params) -> Result<R::Result>) -> Self {
        if let Some((id, params)) = self.take::<R>() {
            let result = guarded(R::METHOD, || handler(self.state, params));
            self.state.output.respond(Some(&id), result);
        }
        self
    }

    pub fn on_sync<R: LspRequest>(mut self, handler: fn(&GlobalState, R::Params) -> Result<R::Result>) -> Self {
        if let Some((id, params)) = self.take::<R>() {
            let result = guarded(R::METHOD, || handler(self.state, params));
            self.state.output.respond(Some(&id), result);
        }
        self
    }

    pub fn on_deferred<R>(mut self, prepare: Preparing<R>) -> Self
    where
        R: LspRequest,
    {
        if let Some((id, params)) = self.take::<R>() {
            match guarded(R::METHOD, || prepare(self.state, params)) {
                Ok(job) => {
                    let output = self.state.output.clone();
                    self.state.pool.spawn(move || output.respond(Some(&id), guarded(R::METHOD, job)));
                }
                Err(error) => self.state.output.respond::<()>(Some(&id), Err(error)),
            }
        }
        self
    }

    pub fn on<R>(mut self, handler: fn(&RequestContext, R::Params) -> Result<R::Result>) -> Self
    where
        R: LspRequest,
        R::Params: Send,
    {
        if let Some((id, params)) = self.take::<R>() {
            self.state.when_indexed(move |state| {
                let context = state.context_as_indexed();
                let output = state.output.clone();
                state.pool.spawn(move || {
                    let result = guarded(R::METHOD, || handler(&context, params));
                    output.respond(Some(&id), result);
                });
            });
        }
        self
    }

    pub fn on_then_apply<R>(mut self, handler: Changing<R>) -> Self
    where
        R: LspRequest,
        R::Params: Send,
        R::Result: Send,
    {
        if let Some((id, params)) = self.take::<R>() {
            self.state.when_indexed(move |state| {
                let context = state.context_as_indexed();
                let tasks = state.tasks.clone();
                state.pool.spawn(move || {
                    let (result, changes) = match guarded(R::METHOD, || handler(&context, params)) {
                        Ok((result, changes)) => (Ok(result), changes),
                        Err(error) => (Err(error), Vec::new()),
                    };
                    let respond = Box::new(move |output: &Output| output.respond(Some(&id), result));
                    let _ = tasks.send(Task::ApplyThenRespond { changes, respond });
                });
            });
        }
        self
    }

    /// Answers a request no handler took.
    pub fn finish(self) {
        if let Some(request) = self.request {
            method_not_found(&self.state.output, &request.id, &request.method);
        }
    }
}

/// The part of a request's work that goes to the pool, prepared on the loop.
pub type Deferred<T> = Box<dyn FnOnce() -> Result<T> + Send>;

/// Prepares a request on the loop (see [`RequestDispatcher::on_deferred`]).
type Preparing<R> = fn(&mut GlobalState, <R as LspRequest>::Params) -> Result<Deferred<<R as LspRequest>::Result>>;

/// A handler whose reply waits for its changes to reach the index.
type Changing<R> = fn(&RequestContext, <R as LspRequest>::Params) -> Result<(<R as LspRequest>::Result, Vec<Change>)>;

type Job = Box<dyn FnOnce() + Send>;

/// Threads that answer requests from snapshots, as many as the machine has cores.
pub struct Pool {
    jobs: Sender<Job>,
}

impl Pool {
    pub fn new() -> Pool {
        let (jobs, queue) = crossbeam_channel::unbounded::<Job>();
        let threads = std::thread::available_parallelism().map_or(2, usize::from).clamp(2, 8);
        for index in 0..threads {
            let queue = queue.clone();
            let spawned = std::thread::Builder::new().name(format!("saffron-lsp-{index}")).spawn(move || {
                for job in queue {
                    // Jobs guard their handlers; this keeps the thread for the next job whatever
                    // slips through.
                    let _ = catch_unwind(AssertUnwindSafe(job));
                }
            });
            // Without a worker the jobs wait in the queue; the loop itself goes on.
            drop(spawned);
        }
        Pool { jobs }
    }

    pub fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        let _ = self.jobs.send(Box::new(job));
    }
}
