//! A WebDriver BiDi connection: commands go out as `{id, method, params}` and their answers come
//! back by id; events (`{type: "event", method, params}`) go to every subscriber.
//!
//! Written over the WebSocket client the workspace has already (async-tungstenite, which
//! chromiumoxide uses) rather than a BiDi crate: the one published (`webdriverbidi` 0.2) is young
//! and generated from one revision of the specification, and Saffron needs a handful of commands
//! read as JSON, as its DevTools calls are (see `cdp.rs`), so that a browser a version newer
//! cannot break a call with a field a generated type does not know.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_tungstenite::tungstenite::Message;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};

/// How long a command may go unanswered before the call gives up.
const ANSWER_PATIENCE: Duration = Duration::from_secs(30);

/// Events buffered per subscriber before the slowest one loses the oldest.
const EVENT_BUFFER: usize = 1024;

/// Why a BiDi call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BidiError {
    /// The browser answered with an error (`no such frame`, `invalid argument`, ...).
    #[error("{error}: {message}")]
    Command {
        /// The error code (`no such frame`).
        error: String,
        /// The browser's words for it.
        message: String,
    },
    /// The connection is gone.
    #[error("the browser's connection closed: {0}")]
    Closed(String),
    /// No answer within [`ANSWER_PATIENCE`].
    #[error("the browser did not answer {0} within {secs} s", secs = ANSWER_PATIENCE.as_secs())]
    Timeout(String),
}

/// An event the browser sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `browsingContext.load`, `network.responseCompleted`, ...
    pub method: String,
    /// What the event says.
    pub params: Value,
    /// Its place among the connection's events, from 1.
    pub seq: u64,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, BidiError>>>>>;

/// One open connection.
pub struct Bidi {
    outgoing: mpsc::UnboundedSender<Message>,
    pending: Pending,
    events: broadcast::Sender<Event>,
    /// How many events have been handed to the subscribers.
    sent: Arc<AtomicU64>,
    next_id: AtomicU64,
    /// Set once the connection ended, with why.
    closed: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for Bidi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bidi").field("closed", &*lock(&self.closed)).finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Bidi {
    /// Connects to a BiDi endpoint (`ws://127.0.0.1:PORT/session`). Two tasks are spawned on the
    /// current runtime: one writes, one reads and dispatches.
    pub async fn connect(url: &str) -> Result<Bidi, BidiError> {
        let (socket, _) = async_tungstenite::tokio::connect_async(url)
            .await
            .map_err(|error| BidiError::Closed(format!("cannot connect to {url}: {error}")))?;
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut queue) = mpsc::unbounded_channel::<Message>();
        let pending: Pending = Arc::default();
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let closed: Arc<Mutex<Option<String>>> = Arc::default();
        tokio::spawn(async move {
            while let Some(message) = queue.recv().await {
                if sink.send(message).await.is_err() {
                    break;
                }
            }
            let _ = sink.close(None).await;
        });
        let sent = Arc::new(AtomicU64::new(0));
        let (reader_pending, reader_events, reader_closed, reader_sent) =
            (Arc::clone(&pending), events.clone(), Arc::clone(&closed), Arc::clone(&sent));
        tokio::spawn(async move {
            let why = loop {
                let text = match stream.next().await {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None => break "the browser closed it".to_owned(),
                    Some(Ok(_)) => continue,
                    Some(Err(error)) => break error.to_string(),
                };
                let Ok(message) = serde_json::from_str::<Value>(text.as_str()) else { continue };
                dispatch(message, &reader_pending, &reader_events, &reader_sent);
            };
            *lock(&reader_closed) = Some(why.clone());
            for (_, waiting) in lock(&reader_pending).drain() {
                let _ = waiting.send(Err(BidiError::Closed(why.clone())));
            }
        });
        Ok(Bidi { outgoing, pending, events, sent, next_id: AtomicU64::new(1), closed })
    }

    /// Sends `method` with `params` and waits for its result.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, BidiError> {
        if let Some(why) = lock(&self.closed).clone() {
            return Err(BidiError::Closed(why));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        lock(&self.pending).insert(id, answer);
        let command = json!({ "id": id, "method": method, "params": params });
        if self.outgoing.send(Message::text(command.to_string())).is_err() {
            lock(&self.pending).remove(&id);
            return Err(BidiError::Closed("the writer stopped".into()));
        }
        match tokio::time::timeout(ANSWER_PATIENCE, answered).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(BidiError::Closed("the reader stopped".into())),
            Err(_) => {
                lock(&self.pending).remove(&id);
                Err(BidiError::Timeout(method.to_owned()))
            }
        }
    }

    /// Every event from now on (subscribe to them with `session.subscribe` as well).
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// How many events have arrived so far. An event sent before a command's answer has
    /// arrived by the time the command returns: with [`Event::seq`], a subscriber can tell
    /// when it has seen everything up to a call.
    pub fn events_sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }

    /// Why the connection ended, once it has.
    pub fn closed(&self) -> Option<String> {
        lock(&self.closed).clone()
    }
}

/// Hands an answer to its caller, or an event to the subscribers.
fn dispatch(message: Value, pending: &Pending, events: &broadcast::Sender<Event>, sent: &AtomicU64) {
    match message.get("type").and_then(Value::as_str) {
        Some("event") => {
            let method = message.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            let seq = sent.fetch_add(1, Ordering::SeqCst) + 1;
            let _ = events.send(Event { method, params, seq });
        }
        Some(kind) => {
            let Some(id) = message.get("id").and_then(Value::as_u64) else { return };
            let Some(waiting) = lock(pending).remove(&id) else { return };
            let answer = if kind == "success" {
                Ok(message.get("result").cloned().unwrap_or(Value::Null))
            } else {
                let text = |field: &str| message.get(field).and_then(Value::as_str).unwrap_or_default().to_owned();
                Err(BidiError::Command { error: text("error"), message: text("message") })
            };
            let _ = waiting.send(answer);
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_go_to_their_caller_and_events_to_every_subscriber() {
        let pending: Pending = Arc::default();
        let (events, mut subscriber) = broadcast::channel(4);
        let (ok, mut ok_answer) = oneshot::channel();
        let (failed, mut failed_answer) = oneshot::channel();
        let sent = AtomicU64::new(0);
        lock(&pending).insert(1, ok);
        lock(&pending).insert(2, failed);
        dispatch(json!({ "type": "success", "id": 1, "result": { "context": "c1" } }), &pending, &events, &sent);
        dispatch(
            json!({ "type": "error", "id": 2, "error": "no such frame", "message": "gone" }),
            &pending,
            &events,
            &sent,
        );
        dispatch(
            json!({ "type": "event", "method": "log.entryAdded", "params": { "level": "error" } }),
            &pending,
            &events,
            &sent,
        );
        // An answer nobody waits for (a timed-out call's) is dropped.
        dispatch(json!({ "type": "success", "id": 9, "result": {} }), &pending, &events, &sent);
        assert_eq!(ok_answer.try_recv().expect("answered"), Ok(json!({ "context": "c1" })));
        assert_eq!(
            failed_answer.try_recv().expect("answered"),
            Err(BidiError::Command { error: "no such frame".into(), message: "gone".into() })
        );
        let event = subscriber.try_recv().expect("an event");
        assert_eq!((event.method.as_str(), &event.params), ("log.entryAdded", &json!({ "level": "error" })));
        assert_eq!((event.seq, sent.load(Ordering::SeqCst)), (1, 1), "events are counted as they go out");
        assert!(lock(&pending).is_empty());
    }
}
