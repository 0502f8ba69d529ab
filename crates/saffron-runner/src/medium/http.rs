//! The HTTP medium: `@api` scenarios, performed by Saffron's own HTTP client. An execution has
//! a client per session (`As "alice"`), each with its own cookies, and the latest response of
//! each, which the checks read. It keeps a transcript of every exchange.
//!
//! What it never does: send a request to a host the configuration did not name (a request
//! names its service, and a redirect is followed only within the service's origin), or to a
//! link-local address (a cloud's metadata service); send a write twice (only a read, or a
//! request the recording marks idempotent, is sent again after a failure); report a request
//! that got no response with more than a short cause (never its headers).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use saffron_recording::http::{Header, JsonTemplate, status_matches};
use saffron_recording::{Action, Masker};
use serde_json::Value;

use super::{ActionAt, Done, Evidence, Failure, FailureClass, Live, Medium, Outcome};
use crate::ActionResult;
use crate::contract::Contract;
use crate::orchestrator::run::RunOptions;
use crate::plan::Execution;
use crate::trace::{Trace, TraceKind, Tracer};
use crate::transcript::Exchange;

/// How long a request waits for its response when the recording sets no timeout.
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The most of a response's body that is read and kept.
const MAX_BODY: usize = 10 * 1024 * 1024;

/// The service every project has: the application itself, at the run's base URL (a request
/// to `/api/orders` of `app` goes to the base URL's `/api/orders`).
pub const APP_SERVICE: &str = "app";

/// The services of a run, by name: their base URLs as the configuration and `--api-url` give
/// them.
#[derive(Debug, Clone, Default)]
pub struct Services {
    pub by_name: BTreeMap<String, Service>,
    /// Each service's contract as read once in the run (or why it could not be): every HTTP
    /// execution of the run, `@api` or beside a page, reads it from here.
    contracts: Arc<Contracts>,
}

/// One service.
#[derive(Debug, Clone)]
pub struct Service {
    pub base_url: url::Url,
    /// Where its pinned contract is (it may not be there yet).
    pub contract: PathBuf,
}

impl Services {
    /// The services of `[api.services]`, with `overrides` (`--api-url NAME=URL`) winning. A base
    /// URL that is a path (`/api`) is on the application's own origin: it is read under
    /// `app_base_url` (the run's base URL).
    pub fn from_config(
        root: &std::path::Path,
        section: &crate::config::ApiSection,
        overrides: &[(String, String)],
        app_base_url: &str,
    ) -> Result<Services, String> {
        if let Some((name, _)) =
            overrides.iter().find(|(name, _)| name != APP_SERVICE && !section.services.contains_key(name))
        {
            return Err(format!("--api-url {name}=…: there is no service `{name}` in [api.services]"));
        }
        let overridden = |name: &str| overrides.iter().find(|(key, _)| key == name).map(|(_, url)| url.as_str());
        let mut by_name = BTreeMap::new();
        for (name, service) in &section.services {
            let base = match overridden(name).unwrap_or(&service.base_url).trim() {
                path if path.starts_with('/') => format!("{}{path}", app_base_url.trim_end_matches('/')),
                url => url.to_owned(),
            };
            let contract = crate::contract::contract_path(root, name, service);
            by_name.insert(name.clone(), Service { base_url: parse_base(name, &base)?, contract });
        }
        // `app`: the application itself, under the run's base URL, unless configured.
        if !by_name.contains_key(APP_SERVICE) && !app_base_url.trim().is_empty() {
            let base = overridden(APP_SERVICE).unwrap_or(app_base_url);
            let contract = crate::contract::contract_path(root, APP_SERVICE, &crate::config::ServiceSection::default());
            by_name.insert(APP_SERVICE.to_owned(), Service { base_url: parse_base(APP_SERVICE, base)?, contract });
        }
        Ok(Services { by_name, contracts: Arc::default() })
    }
}

fn parse_base(name: &str, base: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(base.trim())
        .map_err(|error| format!("the base URL of the service `{name}` ({base}) cannot be read: {error}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(format!("the base URL of the service `{name}` ({base}) must be an http:// or https:// address"));
    }
    Ok(url)
}

/// The HTTP medium of a run.
pub(crate) struct HttpMedium {
    services: Arc<Services>,
}

/// Each service's contract as read once in a run (or why it could not be), by service.
type Contracts = std::sync::Mutex<BTreeMap<String, Result<Arc<Contract>, String>>>;

impl HttpMedium {
    pub(crate) fn new(services: Arc<Services>) -> HttpMedium {
        HttpMedium { services }
    }

    /// An execution the recording agent drives: an error status is shown to the agent, which
    /// decides whether the step names it, instead of failing the request.
    pub(crate) fn open_for_recording(&self) -> HttpLive {
        self.live(false)
    }

    pub(crate) fn services(&self) -> &Services {
        &self.services
    }

    /// An execution beside a browser context, whose cookies its requests carry: its clients
    /// keep no cookies of their own.
    pub(crate) fn open_beside_browser(&self) -> HttpLive {
        HttpLive { own_cookies: false, ..self.live(true) }
    }

    /// The requests the recording or repairing agent sends beside a browser context (whose
    /// cookies they carry): an error status is shown to the agent, as in an `@api` recording.
    pub(crate) fn open_beside_page_for_agent(&self) -> HttpLive {
        HttpLive { own_cookies: false, ..self.live(false) }
    }

    fn live(&self, unexpected_errors_fail: bool) -> HttpLive {
        saffron_agent::install_crypto_provider();
        HttpLive {
            services: Arc::clone(&self.services),
            clients: BTreeMap::new(),
            latest: BTreeMap::new(),
            sent: Vec::new(),
            started: Instant::now(),
            unexpected_errors_fail,
            own_cookies: true,
            tracer: None,
        }
    }
}

impl Medium for HttpMedium {
    type Live = HttpLive;

    async fn open(&self, execution: &Execution, options: &RunOptions, trace: TraceKind) -> Result<HttpLive, String> {
        let tracer = Tracer::start(options.trace, trace, execution, &options.base_url).map(Tracer::over_http);
        Ok(HttpLive { tracer, ..self.live(true) })
    }

    async fn lost(&self) -> Option<String> {
        // A client of its own: nothing that can go away underneath.
        None
    }
}

/// One execution: a client per session.
pub(crate) struct HttpLive {
    services: Arc<Services>,
    /// By session ("" for the scenario's own).
    clients: BTreeMap<String, reqwest::Client>,
    /// By session: its latest request, in `sent`.
    latest: BTreeMap<String, usize>,
    sent: Vec<Sent>,
    started: Instant,
    /// A response with an error status (4xx, 5xx) fails its request unless the recording
    /// checks its status next (replay); off while the agent records.
    unexpected_errors_fail: bool,
    /// Each session's client keeps the cookies its responses set (off beside a browser, whose
    /// context holds them).
    own_cookies: bool,
    /// The trace of an `@api` execution (none beside a browser, whose trace takes the
    /// exchanges, nor while the agent records).
    tracer: Option<Tracer>,
}

/// The latest response of a session, as the recording agent reads it.
pub(crate) struct Response<'a> {
    pub exchange: &'a Exchange,
    pub json: Option<&'a Value>,
}

/// A request sent, with what the checks read of it.
struct Sent {
    exchange: Exchange,
    /// Its response's body as JSON, when it is JSON.
    body: Option<Value>,
    /// Its path, relative to its service (what a contract's operations are).
    path: String,
}

/// A failure: a repair reads what it needs from the execution it takes over (its sessions and
/// latest responses), so a failure carries nothing for one.
fn failed(class: FailureClass, reason: String) -> Outcome<()> {
    Outcome::Failed(Failure {
        class,
        reason,
        found_by: String::new(),
        locator: None,
        attempts: 1,
        waited: Vec::new(),
        detail: (),
    })
}

fn passed(action: &Action, started: Instant, notes: Vec<String>, captured: Vec<(String, String)>) -> Outcome<()> {
    Outcome::Done(Box::new(Done {
        report: ActionResult {
            action: action.to_string(),
            passed: true,
            tier: None,
            locator: None,
            duration_ms: started.elapsed().as_millis() as u64,
            drift: Vec::new(),
            notes,
            attempts: 1,
            waited: Vec::new(),
            matched: None,
        },
        drift: Vec::new(),
        refresh: None,
        captured,
    }))
}

impl HttpLive {
    fn client(&mut self, session: &str) -> Result<reqwest::Client, String> {
        if let Some(client) = self.clients.get(session) {
            return Ok(client.clone());
        }
        let client = reqwest::Client::builder()
            .cookie_store(self.own_cookies)
            // A redirect is followed only within the origin it started from: a secret sent to
            // a service never follows a redirect to another host.
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let same_origin =
                    attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
                if same_origin && attempt.previous().len() < 10 { attempt.follow() } else { attempt.stop() }
            }))
            .build()
            .map_err(|error| format!("the HTTP client could not be made: {error}"))?;
        self.clients.insert(session.to_owned(), client.clone());
        Ok(client)
    }

    fn latest(&self, session: Option<&str>) -> Option<&Sent> {
        self.sent.get(*self.latest.get(session.unwrap_or_default())?)
    }

    /// Where a request of `service` to `path` goes.
    pub(crate) fn url_of(&self, service: &str, path: &str) -> Result<url::Url, String> {
        let target = self.services.by_name.get(service).ok_or_else(|| format!("there is no service `{service}`"))?;
        join(&target.base_url, path)
    }

    /// The execution a replay stopped in, for the repairing agent: its sessions keep their
    /// cookies and latest responses, and an error status is shown to the agent, which decides
    /// whether a step names it, instead of failing the request.
    pub(crate) fn for_repair(self) -> HttpLive {
        HttpLive { unexpected_errors_fail: false, tracer: None, ..self }
    }

    /// Every exchange so far (they stay for the transcript).
    pub(crate) fn sent_exchanges(&self) -> Vec<Exchange> {
        self.sent.iter().map(|sent| sent.exchange.clone()).collect()
    }

    /// The latest response `session` got (the scenario's own client when `None`).
    pub(crate) fn latest_response(&self, session: Option<&str>) -> Option<Response<'_>> {
        self.latest(session).map(|sent| Response { exchange: &sent.exchange, json: sent.body.as_ref() })
    }

    /// The contract of `service`, read once in the run.
    fn contract(&self, service: &str, path: &std::path::Path) -> Result<Arc<Contract>, String> {
        let mut contracts = self.services.contracts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        contracts.entry(service.to_owned()).or_insert_with(|| Contract::load(path).map(Arc::new)).clone()
    }

    async fn send(&mut self, at: &ActionAt<'_>, masker: &mut Masker, started: Instant) -> Outcome<()> {
        let Action::Request { service, method, path, session, headers, body, extract, .. } = at.resolved else {
            return failed(FailureClass::Refused, "not a request".into());
        };
        let Some(target) = self.services.by_name.get(service) else {
            let known: Vec<&str> = self.services.by_name.keys().map(String::as_str).collect();
            let known = if known.is_empty() { "none is configured".to_owned() } else { known.join(", ") };
            return failed(
                FailureClass::Refused,
                format!("there is no service `{service}` in [api.services] ({known})"),
            );
        };
        let url = match join(&target.base_url, path) {
            Ok(url) => url,
            Err(problem) => return failed(FailureClass::Refused, problem),
        };
        if let Some(problem) = link_local(&url).await {
            return failed(FailureClass::Refused, problem);
        }
        let json = match body.as_ref().map(JsonTemplate::to_json).transpose() {
            Ok(json) => json,
            Err(error) => {
                return failed(FailureClass::Refused, format!("the body is not the JSON it says: {error}"));
            }
        };
        let session_name = session.clone().unwrap_or_default();
        let client = match self.client(&session_name) {
            Ok(client) => client,
            Err(problem) => return failed(FailureClass::Refused, problem),
        };
        let timeout = at.recorded.timeout_ms().map_or(DEFAULT_REQUEST_TIMEOUT, Duration::from_millis);
        let deadline = Instant::now() + timeout;
        let method_value = match reqwest::Method::from_bytes(method.as_bytes()) {
            Ok(method) => method,
            Err(_) => {
                return failed(FailureClass::Refused, format!("{method} is not an HTTP method"));
            }
        };
        let may_repeat = at.recorded.may_repeat();
        let mut attempts = 0;
        let mut notes = Vec::new();
        let (response, error) = loop {
            attempts += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            let mut request =
                client.request(method_value.clone(), url.clone()).timeout(left.max(Duration::from_millis(1)));
            for Header { name, value } in headers {
                request = request.header(name.as_str(), value.as_str());
            }
            if let Some(json) = &json {
                request = request.header("content-type", "application/json").body(json.to_string());
            }
            match request.send().await {
                Ok(response) => break (Some(response), None),
                // A read may be sent again while time is left; a write never is.
                Err(error)
                    if may_repeat && error.is_connect() && Instant::now() + Duration::from_millis(200) < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
                Err(error) => break (None, Some(short_cause(&error, timeout, may_repeat))),
            }
        };
        if attempts > 1 {
            notes.push(format!("sent {attempts} times: the service did not accept the connection at first"));
        }
        let mut exchange = Exchange {
            attempt: 1,
            step: at.step + 1,
            service: service.clone(),
            session: session.clone(),
            method: method.clone(),
            url: url.to_string(),
            request_headers: headers.iter().map(|header| (header.name.clone(), header.value.clone())).collect(),
            request_body: json.as_ref().map(Value::to_string),
            status: None,
            response_headers: Vec::new(),
            response_body: None,
            error: error.clone(),
            duration_ms: 0,
        };
        let mut json_body = None;
        let outcome = match response {
            None => failed(FailureClass::Application, error.unwrap_or_else(|| "no response".into())),
            Some(response) => {
                exchange.status = Some(response.status().as_u16());
                exchange.response_headers = response
                    .headers()
                    .iter()
                    .map(|(name, value)| (name.to_string(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
                    .collect();
                match read_body(response).await {
                    Ok(text) => {
                        json_body = serde_json::from_str::<Value>(&text).ok();
                        exchange.response_body = Some(text);
                        let mut kept = Vec::new();
                        let mut missing = None;
                        for wanted in extract {
                            match json_body.as_ref().and_then(|json| json.pointer(&wanted.pointer)) {
                                Some(Value::String(text)) => kept.push((wanted.name.clone(), text.clone())),
                                Some(value) => kept.push((wanted.name.clone(), value.to_string())),
                                None => {
                                    let status = exchange.status.unwrap_or_default();
                                    // An error answer's body says why the field is not there.
                                    let answer = match status {
                                        400.. => format!(
                                            "{status} {}{}",
                                            reason_of(status),
                                            said_of(exchange.response_body.as_deref())
                                                .map_or_else(String::new, |said| format!(": {said}"))
                                        ),
                                        _ => status.to_string(),
                                    };
                                    missing = Some(format!(
                                        "the response ({}) has no field {} to keep as {:?}",
                                        answer.trim_end(),
                                        wanted.pointer,
                                        wanted.name
                                    ));
                                    break;
                                }
                            }
                        }
                        // A value kept from the answer to a request that carried a secret (a sign-in),
                        // or one named as a credential, is masked from now on, as a secret is.
                        for (name, value) in &kept {
                            if !at.secrets.is_empty() || is_credential(name, extract) {
                                masker.add_as(value, &format!("{{captured:{name}}}"));
                            }
                        }
                        let status = exchange.status.unwrap_or_default();
                        // An error answer says more than a field it lacks for that reason.
                        if status >= 400 && self.unexpected_errors_fail && !status_checked_next(at) {
                            failed(
                                FailureClass::Application,
                                unexpected_error(status, method, path, exchange.response_body.as_deref()),
                            )
                        } else {
                            match missing {
                                Some(problem) => failed(FailureClass::Application, problem),
                                None => passed(at.recorded, started, notes, kept),
                            }
                        }
                    }
                    Err(problem) => failed(FailureClass::Application, problem),
                }
            }
        };
        exchange.duration_ms = started.elapsed().as_millis() as u64;
        self.sent.push(Sent { exchange, body: json_body, path: path.clone() });
        self.latest.insert(session_name, self.sent.len() - 1);
        outcome
    }

    fn check(&self, at: &ActionAt<'_>, started: Instant) -> Outcome<()> {
        let session = at.resolved.session();
        let Some(Sent { exchange: latest, body, path: relative }) = self.latest(session) else {
            let whose = session.map_or_else(String::new, |session| format!(" as {session:?}"));
            return failed(
                FailureClass::Application,
                format!("no request was sent{whose} before this check: a check reads the latest response"),
            );
        };
        let Some(status) = latest.status else {
            return failed(
                FailureClass::Application,
                format!("the latest request ({} {}) got no response", latest.method, latest.url),
            );
        };
        let fail = |reason: String| failed(FailureClass::Application, reason);
        match at.resolved {
            Action::ExpectStatus { status: expected, .. } => {
                if status_matches(expected, status) {
                    passed(at.recorded, started, Vec::new(), Vec::new())
                } else {
                    fail(format!(
                        "expected status {expected}, found {status} ({} {})",
                        latest.method,
                        path_of(&latest.url)
                    ))
                }
            }
            Action::ExpectField { pointer, value, pattern, .. } => {
                let Some(json) = body.as_ref() else {
                    return fail(format!("the response ({status}) has no JSON body"));
                };
                let Some(found) = json.pointer(pointer) else {
                    return fail(format!("the response ({status}) has no field {pointer}"));
                };
                let text = match found {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                match (value, pattern) {
                    (Some(expected), _) => match expected.to_json() {
                        Ok(expected) if &expected == found => passed(at.recorded, started, Vec::new(), Vec::new()),
                        Ok(expected) => fail(format!("field {pointer} is {found}, expected {expected}")),
                        Err(error) => failed(FailureClass::Refused, format!("the expected value: {error}")),
                    },
                    (None, Some(pattern)) => match regex::Regex::new(pattern) {
                        Ok(regex) if regex.is_match(&text) => passed(at.recorded, started, Vec::new(), Vec::new()),
                        Ok(_) => fail(format!("field {pointer} is {found}, which does not match /{pattern}/")),
                        Err(error) => failed(FailureClass::Refused, format!("the pattern: {error}")),
                    },
                    (None, None) => failed(FailureClass::Refused, "nothing to compare the field with".into()),
                }
            }
            Action::ExpectSchema { .. } => {
                let Some(service) = self.services.by_name.get(&latest.service) else {
                    return failed(
                        FailureClass::Refused,
                        format!("there is no service `{}` in [api.services]", latest.service),
                    );
                };
                let contract = match self.contract(&latest.service, &service.contract) {
                    Ok(contract) => contract,
                    Err(problem) => {
                        let hint = format!("{problem} (`saffron api pin {}` writes it)", latest.service);
                        return failed(FailureClass::Refused, hint);
                    }
                };
                let empty = latest.response_body.as_deref().is_none_or(|text| text.trim().is_empty());
                // A body that is not JSON is checked as a string.
                let text_body = latest.response_body.clone().map(Value::String);
                let checked = if empty { None } else { body.as_ref().or(text_body.as_ref()) };
                match contract.check(&latest.method, relative, status, checked) {
                    Ok(()) => passed(at.recorded, started, Vec::new(), Vec::new()),
                    Err(problem) => fail(problem),
                }
            }
            _ => failed(FailureClass::Refused, "not a check".into()),
        }
    }
}

impl Live for HttpLive {
    type Detail = ();

    fn mark(&self) -> u64 {
        match &self.tracer {
            Some(tracer) => tracer.mark(),
            None => self.started.elapsed().as_millis() as u64,
        }
    }

    fn begin_step(&mut self) {}

    fn end_step(&mut self, report: &crate::StepResult, mark: u64) {
        if let Some(tracer) = self.tracer.as_mut() {
            tracer.step(report, mark);
        }
    }

    async fn perform(&mut self, at: &ActionAt<'_>, masker: &mut Masker) -> Outcome<()> {
        let started = Instant::now();
        let mark = self.mark();
        let outcome = match at.resolved {
            Action::Request { .. } => self.send(at, masker, started).await,
            Action::ExpectStatus { .. } | Action::ExpectField { .. } | Action::ExpectSchema { .. } => {
                self.check(at, started)
            }
            other => failed(
                FailureClass::Refused,
                format!("an @api scenario performs only requests and their checks, not `{}`", other.type_name()),
            ),
        };
        if let Some(tracer) = self.tracer.as_mut() {
            let failure = match &outcome {
                Outcome::Failed(failure) => Some(failure.reason.as_str()),
                _ => None,
            };
            tracer.http_action(at.step + 1, at.recorded, mark, failure);
        }
        outcome
    }

    async fn evidence(&mut self, _: &ActionAt<'_>, _: &Masker) -> Evidence {
        let url = self.sent.last().map(|sent| sent.exchange.url.clone());
        Evidence { url, ..Evidence::default() }
    }

    async fn failed(&mut self, _: &str, _: &Evidence, _: &Masker) {}

    fn finish(&mut self, verdict: &crate::Verdict, duration_ms: u64) -> Option<Trace> {
        let mut tracer = self.tracer.take()?;
        tracer.exchanges(self.sent_exchanges());
        Some(tracer.finish(verdict, duration_ms))
    }

    fn exchanges(&mut self) -> Vec<Exchange> {
        // Copies: a repair that takes the execution over reads its latest responses.
        self.sent_exchanges()
    }

    async fn close(self) {}
}

/// Whether the recording checks the status of the request at `at` before the next request
/// (in this step or a later one: `When` sends, `Then` expects the 404): an error status is
/// then the check's to judge.
fn status_checked_next(at: &ActionAt<'_>) -> bool {
    let Some(step) = at.steps.get(at.step) else { return false };
    let later = at.steps.iter().skip(at.step + 1).flat_map(|step| step.actions.iter());
    step.actions
        .iter()
        .skip(at.action + 1)
        .chain(later)
        .take_while(|action| !matches!(action, Action::Request { .. }))
        .any(|action| matches!(action, Action::ExpectStatus { .. }))
}

/// Why a request whose answer is an error status failed.
pub(crate) fn unexpected_error(status: u16, method: &str, path: &str, body: Option<&str>) -> String {
    let reason = reason_of(status);
    let said = said_of(body).map_or_else(String::new, |said| format!(" ({said})"));
    format!("{method} {path} was answered {status} {reason}{said}, and no step expects that status").replace("  ", " ")
}

/// `Not Found` for 404; empty for a status without one.
fn reason_of(status: u16) -> &'static str {
    reqwest::StatusCode::from_u16(status).ok().and_then(|code| code.canonical_reason()).unwrap_or("")
}

/// What the body says, its start, on one line: an error answer's body names the problem.
fn said_of(body: Option<&str>) -> Option<String> {
    let said = body.map(|body| body.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|body| !body.is_empty());
    said.map(|body| match body.char_indices().nth(SAID_CHARS) {
        Some((cut, _)) => format!("{}…", &body[..cut]),
        None => body,
    })
}

/// How much of an error answer's body a failure quotes.
const SAID_CHARS: usize = 200;

/// Whether the value kept as `name` is a credential, by its name or its pointer's last segment
/// (`token`, `/auth/access_token`, `sessionId`, `apiKey`).
pub(crate) fn is_credential(name: &str, extract: &[saffron_recording::http::Extract]) -> bool {
    const WORDS: [&str; 8] = ["token", "secret", "password", "session", "key", "auth", "jwt", "cookie"];
    let pointer = extract.iter().find(|kept| kept.name == name).map_or("", |kept| kept.pointer.as_str());
    let last = pointer.rsplit('/').next().unwrap_or_default();
    [name, last].iter().any(|text| {
        let text = text.to_ascii_lowercase();
        WORDS.iter().any(|word| text.contains(word))
    })
}

/// `base` joined with `path` (its own path kept as a prefix: `http://h/api` + `/orders` is
/// `http://h/api/orders`), never another host.
fn join(base: &url::Url, path: &str) -> Result<url::Url, String> {
    if !path.starts_with('/') || path.starts_with("//") {
        return Err(format!("the path {path:?} must start with one /: it is relative to the service's base URL"));
    }
    let prefix = base.as_str().trim_end_matches('/');
    let url = url::Url::parse(&format!("{prefix}{path}")).map_err(|error| format!("{path:?}: {error}"))?;
    if url.origin() != base.origin() {
        return Err(format!("{path:?} leaves the service's origin"));
    }
    Ok(url)
}

/// Why no request may go to `url`: its host is, or resolves to, a link-local address.
async fn link_local(url: &url::Url) -> Option<String> {
    let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']').to_owned();
    let port = url.port_or_known_default().unwrap_or(80);
    let addresses: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(address) => vec![address],
        Err(_) => tokio::net::lookup_host((host.as_str(), port))
            .await
            .map(|found| found.map(|address| address.ip()).collect())
            .unwrap_or_default(),
    };
    addresses.iter().any(is_link_local).then(|| {
        format!("{host} is a link-local address (a cloud's metadata service answers there): no request goes to it")
    })
}

fn is_link_local(address: &IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => {
            (v6.segments()[0] & 0xffc0) == 0xfe80 || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_link_local())
        }
    }
}

/// A short cause for a request that got no response: never the request's headers.
fn short_cause(error: &reqwest::Error, timeout: Duration, may_repeat: bool) -> String {
    let again = if may_repeat { "" } else { " (a request that may write is never sent twice)" };
    if error.is_timeout() {
        return format!("no response within {:.1} s{again}", timeout.as_secs_f64());
    }
    if error.is_connect() {
        return format!("the service did not accept the connection{again}");
    }
    if error.is_redirect() {
        return "a redirect left the service's origin, and was not followed".into();
    }
    format!("no response ({}){again}", root_cause(error))
}

/// The innermost error's words: the I/O reason, without the URL reqwest puts first.
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(source) = current.source() {
        current = source;
    }
    current.to_string()
}

async fn read_body(response: reqwest::Response) -> Result<String, String> {
    let bytes = read_capped(response, MAX_BODY).await.map_err(|problem| match problem {
        Capped::TooLarge => format!("the response's body is over {} MB", MAX_BODY / 1024 / 1024),
        Capped::Unreadable(cause) => format!("the response's body could not be read ({cause})"),
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Why a body was not read whole.
pub(crate) enum Capped {
    TooLarge,
    /// The innermost cause.
    Unreadable(String),
}

/// A response's body, read as it comes and refused past `max` bytes (never buffered whole
/// first).
pub(crate) async fn read_capped(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, Capped> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| Capped::Unreadable(root_cause(&error)))? {
        if bytes.len() + chunk.len() > max {
            return Err(Capped::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// The path and query of `url`, for a failure's words.
pub(crate) fn path_of(url: &str) -> String {
    url::Url::parse(url).map_or_else(
        |_| url.to_owned(),
        |url| {
            let mut path = url.path().to_owned();
            if let Some(query) = url.query() {
                path.push('?');
                path.push_str(query);
            }
            path
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_joins_the_base_url_and_never_leaves_its_origin() {
        let base = url::Url::parse("http://127.0.0.1:8080/api").expect("url");
        assert_eq!(join(&base, "/orders?x=1").expect("joined").as_str(), "http://127.0.0.1:8080/api/orders?x=1");
        let slash = url::Url::parse("http://127.0.0.1:8080/").expect("url");
        assert_eq!(join(&slash, "/orders").expect("joined").as_str(), "http://127.0.0.1:8080/orders");
        assert!(join(&base, "//evil.example/x").is_err());
        assert!(join(&base, "orders").is_err());
        assert!(join(&base, "@evil.example/x").is_err());
    }

    #[test]
    fn credentials_are_known_by_their_name_or_their_field() {
        use saffron_recording::http::Extract;
        let kept = |name: &str, pointer: &str| vec![Extract { name: name.into(), pointer: pointer.into() }];
        assert!(is_credential("token", &kept("token", "/t")));
        assert!(is_credential("bearer", &kept("bearer", "/auth/access_token")));
        assert!(is_credential("apiKey", &kept("apiKey", "/k")));
        assert!(!is_credential("order", &kept("order", "/id")));
    }

    #[test]
    fn link_local_addresses_are_recognised_in_both_families() {
        assert!(is_link_local(&"169.254.169.254".parse().expect("ip")));
        assert!(is_link_local(&"fe80::1".parse().expect("ip")));
        assert!(!is_link_local(&"127.0.0.1".parse().expect("ip")));
        assert!(!is_link_local(&"10.0.0.1".parse().expect("ip")));
    }

    #[test]
    fn services_take_their_base_url_from_the_configuration_and_overrides() {
        let mut section = crate::config::ApiSection::default();
        section.services.insert(
            "shop".into(),
            crate::config::ServiceSection { base_url: "http://127.0.0.1:1/api".into(), ..Default::default() },
        );
        let root = std::path::Path::new("/project");
        let services = Services::from_config(root, &section, &[], "http://app").expect("services");
        assert_eq!(services.by_name["shop"].contract, root.join("contracts/shop.openapi.json"));
        assert_eq!(services.by_name["shop"].base_url.as_str(), "http://127.0.0.1:1/api");
        let shop_override = [("shop".to_owned(), "http://127.0.0.1:2/v2".to_owned())];
        let overridden = Services::from_config(root, &section, &shop_override, "http://app").expect("ok");
        assert_eq!(overridden.by_name["shop"].base_url.as_str(), "http://127.0.0.1:2/v2");
        let unknown = Services::from_config(root, &section, &[("billing".into(), "http://x".into())], "http://app");
        // `app` is the application itself.
        assert_eq!(services.by_name["app"].base_url.as_str(), "http://app/");
        assert_eq!(services.by_name["app"].contract, root.join("contracts/app.openapi.json"));
        assert!(unknown.expect_err("unknown").contains("no service `billing`"));
        // A path: on the application's own origin.
        section.services.get_mut("shop").expect("shop").base_url = "/api".into();
        let same_origin = Services::from_config(root, &section, &[], "http://127.0.0.1:7/").expect("ok");
        assert_eq!(same_origin.by_name["shop"].base_url.as_str(), "http://127.0.0.1:7/api");
        section.services.get_mut("shop").expect("shop").base_url = "ftp://x".into();
        assert!(Services::from_config(root, &section, &[], "http://app").is_err());
    }
}
