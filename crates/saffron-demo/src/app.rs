//! Shared state, the router, and the middleware every request passes through: the request log,
//! the latency fault, and the session check (with the session-expiry and interstitial faults).

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::config::{DemoConfig, Fault};
use crate::shop::Shop;
use crate::{api, pages};

/// The name of the session cookie.
pub const SESSION_COOKIE: &str = "session";

/// How many request-log entries are kept; older ones are dropped so a long-running demo does
/// not grow without bound. Far more than any scenario makes.
const LOG_CAPACITY: usize = 10_000;

/// Status recorded for a request whose client went away before the response was sent
/// (nginx's convention). This is what a replay that gave up on a slow POST leaves behind.
pub const STATUS_CLIENT_CLOSED: u16 = 499;

/// One request as the server saw it, in arrival order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLog {
    pub method: String,
    /// The path without the query string.
    pub path: String,
    /// The response status; 0 while the request is still being handled, 499 when the client
    /// disconnected before the response was sent.
    pub status: u16,
}

/// The log keeps entries in arrival order (so "which POST came first" is answerable even when
/// latency makes responses finish out of order) and fills in each status when it is known.
#[derive(Debug, Default)]
struct LogBook {
    entries: VecDeque<RequestLog>,
    /// Sequence number of `entries[0]`; sequence numbers survive dropping old entries.
    first_seq: u64,
}

impl LogBook {
    fn begin(&mut self, method: &str, path: &str) -> u64 {
        if self.entries.len() == LOG_CAPACITY {
            self.entries.pop_front();
            self.first_seq += 1;
        }
        self.entries.push_back(RequestLog { method: method.to_owned(), path: path.to_owned(), status: 0 });
        self.first_seq + self.entries.len() as u64 - 1
    }

    fn finish(&mut self, seq: u64, status: u16) {
        // An entry dropped by capacity or by `clear` has a sequence number below `first_seq`.
        let Some(index) = seq.checked_sub(self.first_seq) else { return };
        if let Some(entry) = usize::try_from(index).ok().and_then(|i| self.entries.get_mut(i)) {
            entry.status = status;
        }
    }

    fn clear(&mut self) {
        self.first_seq += self.entries.len() as u64;
        self.entries.clear();
    }
}

#[derive(Debug, Default)]
struct Session {
    /// Requests served with this session, for `Fault::SessionExpiry`.
    requests: u64,
    /// Whether the cookie-consent interstitial was accepted.
    consented: bool,
    /// Signed in again after an expiry: `Fault::SessionExpiry` spares it, as a real app lets a
    /// person who signed in again carry on.
    lasting: bool,
}

/// Everything the handlers share.
pub struct App {
    config: Mutex<DemoConfig>,
    shop: Mutex<Shop>,
    sessions: Mutex<HashMap<String, Session>>,
    /// Every session token handed out, ended ones included (tests look for them in outputs).
    issued: Mutex<Vec<String>>,
    log: Mutex<LogBook>,
    /// Turns true when the server shuts down, so latency sleeps end early instead of holding
    /// up graceful shutdown.
    stopping: watch::Receiver<bool>,
    token_counter: AtomicU64,
    /// Set once `Fault::FlakyOnce` has failed its one page load.
    flaked: std::sync::atomic::AtomicBool,
    /// The lab's ledger (`/lab/ledger`).
    pub ledger: Mutex<crate::ledger::Ledger>,
    /// Payments posted to the lab's back office (`/lab/meridian`).
    pub meridian_posts: AtomicU64,
}

/// Locks a mutex, ignoring poisoning: a panicking handler must not take the whole demo down,
/// and every critical section here leaves the data consistent at each step.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the session check decided.
enum Admission {
    Granted { token: String, overlay: bool },
    NoSession,
    Expired,
}

/// Put into the request extensions of every signed-in request.
#[derive(Debug, Clone)]
pub struct SessionCtx {
    pub token: String,
    /// Whether the page must show the cookie-consent interstitial.
    pub overlay: bool,
}

impl App {
    pub fn new(config: DemoConfig, stopping: watch::Receiver<bool>) -> App {
        App {
            config: Mutex::new(config),
            shop: Mutex::new(Shop::seeded()),
            sessions: Mutex::new(HashMap::new()),
            issued: Mutex::new(Vec::new()),
            log: Mutex::new(LogBook::default()),
            stopping,
            token_counter: AtomicU64::new(0),
            flaked: std::sync::atomic::AtomicBool::new(false),
            ledger: Mutex::new(crate::ledger::Ledger::default()),
            meridian_posts: AtomicU64::new(0),
        }
    }

    /// A snapshot: each request reads the switches once, so flipping them mid-request cannot
    /// give a half-old, half-new response.
    pub fn config(&self) -> DemoConfig {
        lock(&self.config).clone()
    }

    pub fn set_config(&self, config: DemoConfig) {
        *lock(&self.config) = config;
    }

    pub fn shop(&self) -> MutexGuard<'_, Shop> {
        lock(&self.shop)
    }

    pub fn requests(&self) -> Vec<RequestLog> {
        lock(&self.log).entries.iter().cloned().collect()
    }

    /// Back to the seed data: orders, export jobs, sessions and the request log. The switches
    /// stay as they are.
    pub fn reset(&self) {
        *lock(&self.shop) = Shop::seeded();
        lock(&self.sessions).clear();
        lock(&self.log).clear();
    }

    /// A fresh, unguessable session token. std's `RandomState` is seeded from the OS per
    /// process; hashing a counter and the clock with it gives 128 bits that another local
    /// process cannot predict, which is all a loopback demo needs (and avoids a `rand` dep).
    pub fn new_session(&self, lasting: bool) -> String {
        let mut token = String::with_capacity(32);
        for _ in 0..2 {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u64(self.token_counter.fetch_add(1, Ordering::Relaxed));
            let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
            hasher.write_u128(nanos);
            token.push_str(&format!("{:016x}", hasher.finish()));
        }
        lock(&self.sessions).insert(token.clone(), Session { lasting, ..Session::default() });
        lock(&self.issued).push(token.clone());
        token
    }

    /// Every session token handed out so far.
    pub fn issued_sessions(&self) -> Vec<String> {
        lock(&self.issued).clone()
    }

    pub fn consent(&self, token: &str) {
        if let Some(session) = lock(&self.sessions).get_mut(token) {
            session.consented = true;
        }
    }

    fn admit(&self, token: Option<&str>, config: &DemoConfig) -> Admission {
        let Some(token) = token else { return Admission::NoSession };
        let mut sessions = lock(&self.sessions);
        let Some(session) = sessions.get_mut(token) else { return Admission::NoSession };
        if config.has_fault(Fault::SessionExpiry) && !session.lasting && session.requests >= 1 {
            // Forget it for good, as a real expiry would: turning the fault off afterwards
            // does not bring the session back.
            sessions.remove(token);
            return Admission::Expired;
        }
        session.requests += 1;
        let overlay = config.has_fault(Fault::Interstitial) && !session.consented;
        Admission::Granted { token: token.to_owned(), overlay }
    }

    /// Sleeps for `delay`, or less if the server is shutting down.
    async fn pause(&self, delay: Duration) {
        let mut stopping = self.stopping.clone();
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            _ = stopping.wait_for(|s| *s) => {}
        }
    }
}

/// Set when a session expires: the browser's next sign-in gets a session that lasts.
const EXPIRED_BEFORE_COOKIE: &str = "expired_before=1; Path=/; SameSite=Lax";

/// True when the browser saw its session expire (the cookie [`EXPIRED_BEFORE_COOKIE`] sets).
pub fn expired_before(headers: &HeaderMap) -> bool {
    cookie(headers, "expired_before") == Some("1")
}

/// The value of the `session` cookie, if the request has one.
pub fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    cookie(headers, SESSION_COOKIE).filter(|value| !value.is_empty())
}

/// The session a request names: its cookie, or a bearer token (`POST /api/token` gives one).
fn session_of(headers: &HeaderMap) -> Option<&str> {
    let bearer = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty());
    session_cookie(headers).or(bearer)
}

/// The value of the cookie `name`, if the request sends it.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A 302 Found: the status the contract promises for "redirects to /login".
pub fn found(location: &'static str) -> Response {
    (StatusCode::FOUND, [(LOCATION, HeaderValue::from_static(location))]).into_response()
}

/// Ends the session the request names and sends the browser to the sign-in page.
async fn sign_out(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(token) = session_cookie(&headers) {
        lock(&app.sessions).remove(token);
    }
    let mut response = (StatusCode::SEE_OTHER, [(LOCATION, HeaderValue::from_static("/login"))]).into_response();
    response.headers_mut().insert(SET_COOKIE, clear_session_cookie());
    response
}

fn clear_session_cookie() -> HeaderValue {
    HeaderValue::from_static("session=; HttpOnly; Path=/; SameSite=Lax; Max-Age=0")
}

/// Records a request in the log when it arrives and its status when it is answered; if the
/// client disconnects first, the handler future is dropped and `Drop` records 499 instead.
struct LogGuard {
    app: Arc<App>,
    seq: u64,
    finished: bool,
}

impl LogGuard {
    fn finish(mut self, status: u16) {
        lock(&self.app.log).finish(self.seq, status);
        self.finished = true;
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        if !self.finished {
            lock(&self.app.log).finish(self.seq, STATUS_CLIENT_CLOSED);
        }
    }
}

/// Outermost middleware: request log and `Fault::Latency`.
async fn observe(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    // The control plane is not the app under test: logging it would put the test's own
    // bookkeeping requests between the app requests it wants to assert on.
    if path.starts_with("/__demo/") {
        return next.run(req).await;
    }
    let seq = lock(&app.log).begin(req.method().as_str(), &path);
    let guard = LogGuard { app: app.clone(), seq, finished: false };
    let config = app.config();
    if config.has_fault(Fault::FlakyOnce)
        && req.method() == axum::http::Method::GET
        && path == "/login"
        && !app.flaked.swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        guard.finish(503);
        let page = axum::response::Html("<!doctype html><title>Unavailable</title><h1>Service unavailable</h1>");
        return (axum::http::StatusCode::SERVICE_UNAVAILABLE, page).into_response();
    }
    let response = next.run(req).await;
    if path.starts_with("/api/") && config.has_fault(Fault::Latency) {
        // The delay comes after the handler ran: the server has already acted and only the
        // answer is slow, which is the case where a client that retries posts twice.
        app.pause(Duration::from_millis(config.latency_ms)).await;
    }
    guard.finish(response.status().as_u16());
    response
}

/// The session check for every page except /login and every API call except sign-in.
async fn require_session(State(app): State<Arc<App>>, mut req: Request, next: Next) -> Response {
    let api = req.uri().path().starts_with("/api/");
    let config = app.config();
    match app.admit(session_of(req.headers()), &config) {
        Admission::Granted { token, overlay } => {
            req.extensions_mut().insert(SessionCtx { token, overlay });
            next.run(req).await
        }
        Admission::NoSession if api => api::error(StatusCode::UNAUTHORIZED, "not signed in"),
        Admission::NoSession => found("/login"),
        Admission::Expired => {
            let mut response =
                if api { api::error(StatusCode::UNAUTHORIZED, "session expired") } else { found("/login?expired=1") };
            response.headers_mut().insert(SET_COOKIE, clear_session_cookie());
            response.headers_mut().append(SET_COOKIE, HeaderValue::from_static(EXPIRED_BEFORE_COOKIE));
            response
        }
    }
}

/// Unknown paths: JSON under /api/, an HTML page elsewhere.
async fn not_found(State(app): State<Arc<App>>, req: Request) -> Response {
    if req.uri().path().starts_with("/api/") {
        api::error(StatusCode::NOT_FOUND, "no such endpoint")
    } else {
        pages::not_found(&app.config(), "Page not found")
    }
}

/// A page whose body arrives 800 ms after its head, as a slow server's does: the document is
/// still being parsed (`readyState` "loading") for that long after it replaced the last one.
/// The lab's report, as `/lab/download/report.csv` serves it.
const LAB_REPORT: &str = "number,customer,total\n1001,Margaret Hamilton,120.00\n1002,Katherine Johnson,80.50\n";

/// An invoice the server names: `Content-Disposition: attachment; filename="invoice-N.txt"`.
async fn lab_invoice(axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>) -> Response {
    let number: String = query.get("number").map_or("0", String::as_str).chars().filter(char::is_ascii_digit).collect();
    let disposition = format!("attachment; filename=\"invoice-{number}.txt\"");
    let body = format!("Invoice {number}\nTotal: 120.00\n");
    ([(CONTENT_TYPE, "text/plain".to_owned()), (CONTENT_DISPOSITION, disposition)], body).into_response()
}

/// A report whose last rows come 600 ms after its first: a download that takes a while.
async fn lab_slow_report() -> Response {
    let chunks = futures::stream::unfold(0, |sent| async move {
        let chunk = match sent {
            0 => "number,customer,total\n1001,Margaret Hamilton,120.00\n",
            1 => {
                tokio::time::sleep(Duration::from_millis(600)).await;
                "1002,Katherine Johnson,80.50\nend of report\n"
            }
            _ => return None,
        };
        Some((Ok::<_, std::convert::Infallible>(chunk), sent + 1))
    });
    ([(CONTENT_TYPE, "text/csv")], axum::body::Body::from_stream(chunks)).into_response()
}

async fn slow_body() -> Response {
    const HEAD: &str =
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Lab: slow body</title></head><body>";
    const BODY: &str = "<h1>Slow body</h1><p><a href=\"/lab/slow-body?again=1\">Again</a></p></body></html>";
    let chunks = futures::stream::unfold(0, |sent| async move {
        let chunk = match sent {
            0 => HEAD,
            1 => {
                tokio::time::sleep(Duration::from_millis(800)).await;
                BODY
            }
            _ => return None,
        };
        Some((Ok::<_, std::convert::Infallible>(chunk), sent + 1))
    });
    ([(CONTENT_TYPE, "text/html; charset=utf-8")], axum::body::Body::from_stream(chunks)).into_response()
}

/// How long `/lab/slow-page` takes to answer at all.
pub const SLOW_PAGE_MS: u64 = 800;

/// A link, or (`?arrived`) the page it opens, answered only after [`SLOW_PAGE_MS`]: an action
/// that follows the link ends once that page commits, not before.
async fn slow_page(axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>) -> Response {
    const HEAD: &str =
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Lab: slow page</title></head>";
    if !query.contains_key("arrived") {
        return axum::response::Html(format!(
            "{HEAD}<body><h1>Before</h1><a href=\"/lab/slow-page?arrived\">Slow page</a></body></html>"
        ))
        .into_response();
    }
    tokio::time::sleep(Duration::from_millis(SLOW_PAGE_MS)).await;
    axum::response::Html(format!("{HEAD}<body><h1>Arrived</h1></body></html>")).into_response()
}

async fn method_not_allowed(req: Request) -> Response {
    if req.uri().path().starts_with("/api/") {
        api::error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
    } else {
        StatusCode::METHOD_NOT_ALLOWED.into_response()
    }
}

const CONSOLE_ERRORS_PAGE: &str = "<!doctype html><title>Errors</title>\
<script>console.error('boom', 42)</script><script>throw new Error('kaboom')</script>";

pub fn router(app: Arc<App>) -> Router {
    let signed_in = Router::new()
        .route("/orders", get(pages::orders))
        .route("/orders/new", get(pages::new_order))
        .route("/orders/{id}", get(pages::order))
        .route("/orders/{id}/confirm", get(pages::confirm_order))
        .route("/invoices/{id}", get(pages::invoice))
        .route("/api/orders", get(api::list_orders).post(api::create_order))
        .route("/api/orders/{id}", get(api::get_order).delete(api::delete_order))
        .route("/api/orders/{id}/notes", post(api::add_note))
        .route("/api/orders/{id}/attachments", post(api::add_attachment))
        .route("/api/exports", post(api::start_export))
        .route("/api/exports/{id}", get(api::export_status))
        .route("/api/exports/{id}/orders.csv", get(api::export_file))
        .route("/api/consent", post(api::consent))
        .route_layer(from_fn_with_state(app.clone(), require_session));
    Router::new()
        .route("/", get(|| async { found("/login") }))
        .route("/login", get(pages::login))
        // Browsers ask for it on every page; answering here keeps it out of the session check
        // (it would otherwise count as a request for `Fault::SessionExpiry`).
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/api/session", post(api::sign_in))
        // Signing out ends the session on the server: a copy of its cookie is refused after.
        // A plain address (as many apps' /logout), so the shop's pages keep their controls.
        .route("/sign-out", get(sign_out).post(sign_out))
        // The same sign-in for API clients: a bearer token in the answer instead of a cookie.
        .route("/api/token", post(api::token))
        // The API's OpenAPI 3 document, for `saffron api pin` (public, as such documents are).
        .route(
            "/api/openapi.json",
            get(|| async { ([("content-type", "application/json")], include_str!("openapi.json")) }),
        )
        .route("/__demo/config", get(api::get_config).put(api::put_config))
        .route("/__demo/requests", get(api::get_requests))
        .route("/__demo/reset", post(api::reset))
        // A page that logs an error and throws while it loads, for the console-error checks.
        .route("/__demo/console-errors", get(|| async { axum::response::Html(CONSOLE_ERRORS_PAGE) }))
        .route("/lab/events", get(|| async { axum::response::Html(include_str!("pages/lab/events.html")) }))
        .route("/lab/device", get(|| async { axum::response::Html(include_str!("pages/lab/device.html")) }))
        .route("/lab/storage", get(|| async { axum::response::Html(include_str!("pages/lab/storage.html")) }))
        .route("/lab/rows", get(|| async { axum::response::Html(include_str!("pages/lab/rows.html")) }))
        .route("/lab/renamed", get(|| async { axum::response::Html(include_str!("pages/lab/renamed.html")) }))
        .route("/lab/echo", get(|| async { axum::response::Html(include_str!("pages/lab/echo.html")) }))
        .route("/lab/vault", get(|| async { axum::response::Html(include_str!("pages/lab/vault.html")) }))
        .route("/lab/todos", get(|| async { axum::response::Html(include_str!("pages/lab/todos.html")) }))
        .route("/lab/moving", get(|| async { axum::response::Html(include_str!("pages/lab/moving.html")) }))
        .route("/lab/ladder", get(|| async { axum::response::Html(include_str!("pages/lab/ladder.html")) }))
        .route("/lab/late", get(|| async { axum::response::Html(include_str!("pages/lab/late.html")) }))
        .route("/lab/names", get(|| async { axum::response::Html(include_str!("pages/lab/names.html")) }))
        .route("/lab/shadow", get(|| async { axum::response::Html(include_str!("pages/lab/shadow.html")) }))
        .route("/lab/upload", get(|| async { axum::response::Html(include_str!("pages/lab/upload.html")) }))
        .route("/lab/slow-body", get(slow_body))
        .route("/lab/slow-page", get(slow_page))
        .route("/lab/drag", get(|| async { axum::response::Html(include_str!("pages/lab/drag.html")) }))
        .route("/lab/drag-frame", get(|| async { axum::response::Html(include_str!("pages/lab/drag-frame.html")) }))
        .route("/lab/download", get(|| async { axum::response::Html(include_str!("pages/lab/download.html")) }))
        .route("/lab/download/report.csv", get(|| async { ([(CONTENT_TYPE, "text/csv")], LAB_REPORT) }))
        .route("/lab/download/invoice", get(lab_invoice))
        .route("/lab/download/slow.csv", get(lab_slow_report))
        .route("/lab/frame", get(|| async { axum::response::Html(include_str!("pages/lab/frame.html")) }))
        .route("/lab/frames", get(|| async { axum::response::Html(include_str!("pages/lab/frames.html")) }))
        .route("/lab/frames/card", get(|| async { axum::response::Html(include_str!("pages/lab/frames-card.html")) }))
        .route("/lab/meridian", get(crate::meridian::frameset))
        .route("/lab/meridian/banner", get(crate::meridian::banner))
        .route("/lab/meridian/menu", get(crate::meridian::menu))
        .route("/lab/meridian/payment", get(crate::meridian::payment).post(crate::meridian::post_payment))
        .route("/lab/meridian/member", get(crate::meridian::member))
        .route("/lab/meridian/login", get(crate::meridian::login).post(crate::meridian::post_login))
        .route("/lab/ledger", get(crate::ledger::form_page))
        .route("/lab/ledger/login", get(crate::ledger::login_page).post(crate::ledger::sign_in))
        .route("/lab/ledger/payments", post(crate::ledger::post_payment))
        .route("/lab/ledger/payments/{id}", get(crate::ledger::payment_page))
        .route("/lab/ledger/payments.json", get(crate::ledger::payments))
        .route("/lab/ledger/notice", get(crate::ledger::notice))
        .route("/lab/ledger/switches", post(crate::ledger::switches))
        .merge(signed_in)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(app.clone(), observe))
        .with_state(app)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_static("theme=dark; session=abc123; x=y"));
        assert_eq!(session_cookie(&headers), Some("abc123"));
        headers.insert(COOKIE, HeaderValue::from_static("mysession=abc; session="));
        assert_eq!(session_cookie(&headers), None);
    }

    #[test]
    fn log_book_fills_statuses_by_arrival_and_survives_capacity_and_clear() {
        let mut book = LogBook::default();
        let a = book.begin("POST", "/api/orders");
        let b = book.begin("GET", "/orders");
        book.finish(b, 200);
        book.finish(a, 201);
        let statuses: Vec<_> = book.entries.iter().map(|e| (e.method.as_str(), e.status)).collect();
        assert_eq!(statuses, [("POST", 201), ("GET", 200)]);
        book.clear();
        book.finish(a, 500); // a stale guard must not touch the new entries
        let c = book.begin("GET", "/login");
        book.finish(c, 200);
        assert_eq!(book.entries.len(), 1);
        assert_eq!(book.entries[0].status, 200);
        for _ in 0..LOG_CAPACITY {
            book.begin("GET", "/x");
        }
        assert_eq!(book.entries.len(), LOG_CAPACITY);
        book.finish(c, 404); // dropped by capacity: ignored
        assert!(book.entries.iter().all(|e| e.path == "/x"));
    }

    #[test]
    fn session_tokens_are_distinct_and_long() {
        let (_tx, rx) = watch::channel(false);
        let app = App::new(DemoConfig::default(), rx);
        let a = app.new_session(false);
        let b = app.new_session(false);
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
