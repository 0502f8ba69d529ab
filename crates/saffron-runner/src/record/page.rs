//! The live page the gateway works on: a browser context, seen through the few operations the
//! gateway needs. Actions go through the same `perform` replay uses, so what is recorded is
//! exactly what was performed.

use std::time::Duration;

use saffron_agent::BoxFuture;
use saffron_browser::Guard;
use saffron_recording::{Action, Masker, Target};

/// The page as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageView {
    /// The trimmed accessibility snapshot: a header (URL, title, the tabs when there are
    /// several), then the elements with their refs.
    pub text: String,
}

/// The recording-format target of the element behind a ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefTarget {
    pub target: Target,
    /// Only CSS or position identifies it.
    pub fragile: bool,
}

/// What went wrong with a page operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageError {
    /// The agent's fault (a ref that does not exist, a check that does not hold): a tool error.
    Refused(String),
    /// The browser went away: the session cannot go on.
    BrowserLost(String),
}

pub trait LivePage: Send {
    /// The page as the agent reads it, every secret `masker` knows masked at the source.
    fn snapshot(&mut self, masker: &Masker) -> BoxFuture<'_, Result<PageView, PageError>>;

    /// The target of the element behind a ref; `prefer` are the values the current step names
    /// (a table row is found by them).
    fn target_for_ref<'a>(
        &'a mut self,
        element: &'a str,
        prefer: &'a [String],
    ) -> BoxFuture<'a, Result<RefTarget, PageError>>;

    /// Performs an action whose tokens are already resolved, under `guard`; `Ok` carries
    /// notes worth telling.
    fn perform<'a>(
        &'a mut self,
        action: &'a Action,
        timeout: Duration,
        guard: Guard,
    ) -> BoxFuture<'a, Result<Vec<String>, PageError>>;

    /// A new step begins: response waits look from here on.
    fn begin_step(&mut self);

    /// The `Cookie` header the context would send to `url` (a request sent beside the page
    /// carries it). A page with no cookies of its own has none.
    fn cookie_header<'a>(&'a mut self, _url: &'a str) -> BoxFuture<'a, Result<Option<String>, PageError>> {
        Box::pin(async { Ok(None) })
    }

    /// Keeps the cookies a response from `url` set (its `Set-Cookie` headers), as if the page
    /// had sent the request.
    fn store_cookies<'a>(&'a mut self, _url: &'a str, _set: Vec<String>) -> BoxFuture<'a, Result<(), PageError>> {
        Box::pin(async { Ok(()) })
    }
}

/// A live browser context, driven on a thread of its own.
///
/// The gateway must be `Send` (an MCP server runs it on any thread), and the browser's
/// `perform` future is not accepted as `Send` by the compiler (borrows held inside it lose
/// their lifetimes in the check, rust-lang/rust#102211). So the context lives on its own
/// thread, with a runtime of its own, and the gateway sends it commands.
pub struct ContextPage {
    commands: tokio::sync::mpsc::UnboundedSender<Command>,
    thread: Option<std::thread::JoinHandle<()>>,
}

type Reply<T> = tokio::sync::oneshot::Sender<Result<T, PageError>>;

enum Command {
    Snapshot(Box<Masker>, Reply<PageView>),
    Target(String, Vec<String>, Reply<RefTarget>),
    Perform(Box<Action>, Duration, Box<Guard>, Reply<Vec<String>>),
    BeginStep,
    CookieHeader(String, Reply<Option<String>>),
    StoreCookies(String, Vec<String>, Reply<()>),
    RestoreSession(Box<crate::sign_in_once::Saved>, Reply<()>),
    SaveSession(Reply<crate::sign_in_once::Saved>),
}

const GONE: &str = "the thread driving the browser context stopped";

/// Why the live page could not start.
#[derive(Debug, thiserror::Error)]
pub enum PageStartError {
    #[error("cannot start a runtime for the live page: {0}")]
    Runtime(std::io::Error),
    #[error("cannot start the live page's thread: {0}")]
    Thread(std::io::Error),
}

impl ContextPage {
    /// Takes `context` over; it is closed when the page is dropped or closed.
    pub fn start(
        context: saffron_browser::Context,
        browser: saffron_browser::Browser,
    ) -> Result<ContextPage, PageStartError> {
        let (commands, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Command>();
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(PageStartError::Runtime)?;
        let thread = std::thread::Builder::new()
            .name("saffron-live-page".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let mut live = Live { context, browser };
                    while let Some(command) = receiver.recv().await {
                        live.handle(command).await;
                    }
                    live.context.close().await;
                });
            })
            .map_err(PageStartError::Thread)?;
        Ok(ContextPage { commands, thread: Some(thread) })
    }

    /// Closes the context and waits for it.
    pub async fn close(mut self) {
        let (commands, _) = tokio::sync::mpsc::unbounded_channel();
        drop(std::mem::replace(&mut self.commands, commands));
        if let Some(thread) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }

    fn ask<T: Send + 'static>(
        &self,
        command: impl FnOnce(Reply<T>) -> Command,
    ) -> BoxFuture<'static, Result<T, PageError>> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let sent = self.commands.send(command(reply));
        Box::pin(async move {
            if sent.is_err() {
                return Err(PageError::BrowserLost(GONE.into()));
            }
            answer.await.unwrap_or_else(|_| Err(PageError::BrowserLost(GONE.into())))
        })
    }
}

impl ContextPage {
    /// Puts a session a sign-in saved into the context, where its sign-in ended.
    pub fn restore_session(&mut self, saved: &crate::sign_in_once::Saved) -> BoxFuture<'static, Result<(), PageError>> {
        let saved = Box::new(saved.clone());
        self.ask(move |reply| Command::RestoreSession(saved, reply))
    }

    /// The session the context holds now, after a sign-in.
    pub fn save_session(&mut self) -> BoxFuture<'static, Result<crate::sign_in_once::Saved, PageError>> {
        self.ask(Command::SaveSession)
    }
}

impl LivePage for ContextPage {
    fn snapshot(&mut self, masker: &Masker) -> BoxFuture<'_, Result<PageView, PageError>> {
        let masker = Box::new(masker.clone());
        self.ask(move |reply| Command::Snapshot(masker, reply))
    }

    fn target_for_ref<'a>(
        &'a mut self,
        element: &'a str,
        prefer: &'a [String],
    ) -> BoxFuture<'a, Result<RefTarget, PageError>> {
        let (element, prefer) = (element.to_owned(), prefer.to_vec());
        self.ask(move |reply| Command::Target(element, prefer, reply))
    }

    fn perform<'a>(
        &'a mut self,
        action: &'a Action,
        timeout: Duration,
        guard: Guard,
    ) -> BoxFuture<'a, Result<Vec<String>, PageError>> {
        let action = Box::new(action.clone());
        self.ask(move |reply| Command::Perform(action, timeout, Box::new(guard), reply))
    }

    fn begin_step(&mut self) {
        let _ = self.commands.send(Command::BeginStep);
    }

    fn cookie_header<'a>(&'a mut self, url: &'a str) -> BoxFuture<'a, Result<Option<String>, PageError>> {
        let url = url.to_owned();
        self.ask(move |reply| Command::CookieHeader(url, reply))
    }

    fn store_cookies<'a>(&'a mut self, url: &'a str, set: Vec<String>) -> BoxFuture<'a, Result<(), PageError>> {
        let url = url.to_owned();
        self.ask(move |reply| Command::StoreCookies(url, set, reply))
    }
}

struct Live {
    context: saffron_browser::Context,
    browser: saffron_browser::Browser,
}

impl Live {
    async fn handle(&mut self, command: Command) {
        match command {
            Command::Snapshot(masker, reply) => {
                let answer = match self.context.snapshot_masked(&masker).await {
                    Ok(snapshot) => Ok(PageView { text: snapshot.text }),
                    Err(error) => Err(self.lost_or(format!("no snapshot: {error}")).await),
                };
                let _ = reply.send(answer);
            }
            Command::Target(element, prefer, reply) => {
                let answer = match self.context.target_for_ref_preferring(&element, &prefer).await {
                    Ok(found) => Ok(RefTarget { target: found.target, fragile: found.fragile }),
                    Err(saffron_browser::RefError::Browser(error)) => Err(self.lost_or(error.to_string()).await),
                    Err(error) => Err(PageError::Refused(error.to_string())),
                };
                let _ = reply.send(answer);
            }
            Command::Perform(action, timeout, guard, reply) => {
                let answer = match self.context.perform_guarded(&action, Some(timeout), *guard).await {
                    Ok(performed) => Ok(performed.notes),
                    Err(failure) => Err(self.lost_or(failure.message).await),
                };
                let _ = reply.send(answer);
            }
            Command::BeginStep => self.context.begin_step(),
            Command::CookieHeader(url, reply) => {
                let answer = match self.context.cookie_header(&url).await {
                    Ok(header) => Ok(header),
                    Err(error) => Err(self.lost_or(format!("the context's cookies cannot be read: {error}")).await),
                };
                let _ = reply.send(answer);
            }
            Command::StoreCookies(url, set, reply) => {
                let mut answer = Ok(());
                for cookie in set.iter().filter_map(|header| crate::medium::browser::set_cookie(header)) {
                    if let Err(error) = self.context.store_cookie(&url, &cookie).await {
                        answer = Err(self.lost_or(format!("a cookie the response set cannot be kept: {error}")).await);
                        break;
                    }
                }
                let _ = reply.send(answer);
            }
            Command::RestoreSession(saved, reply) => {
                let answer = match crate::sign_in_once::restore(&mut self.context, &saved).await {
                    Ok(()) => Ok(()),
                    Err(error) => Err(self.lost_or(error).await),
                };
                let _ = reply.send(answer);
            }
            Command::SaveSession(reply) => {
                let answer = match crate::sign_in_once::saved_of(&self.context).await {
                    Ok(saved) => Ok(saved),
                    Err(error) => Err(self.lost_or(error).await),
                };
                let _ = reply.send(answer);
            }
        }
    }

    async fn lost_or(&self, refused: String) -> PageError {
        match self.browser.lost_connection().await {
            Some(cause) => PageError::BrowserLost(cause),
            None => PageError::Refused(refused),
        }
    }
}
