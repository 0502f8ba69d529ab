//! The `@api` recording gateway: the agent's requests and checks, performed on the HTTP
//! medium and recorded as performed, tokens kept.
//!
//! Three guards keep a recording honest:
//! - a check is run on the latest response first, and one that does not hold is refused;
//! - a value the agent kept from a response is written back as `{captured:name}` wherever it
//!   reuses it, and an id it copies without keeping it is refused: a recording never holds the
//!   id its recording run happened to get;
//! - a status is expected only where the step names it, and an error status that no step names
//!   stops `saffron_done` from claiming success: the agent cannot make a failure the expected
//!   answer.

use std::collections::BTreeMap;
use std::sync::Arc;

use saffron_agent::{BoxFuture, ToolGateway, ToolOutput, ToolSpec};
use saffron_recording::http::{Extract, Header, JsonTemplate};
use saffron_recording::{Action, Masker};
use serde_json::Value;

use super::tools::{self as api_tools, ApiAssertInput, ApiCheck, ExtractInput, RequestInput};
use crate::medium::http::{APP_SERVICE, HttpLive, is_credential, path_of};
use crate::medium::{ActionAt, Live, Outcome};
use crate::orchestrator::run::RunOptions;
use crate::plan::Execution;
use crate::record::gateway::{Account, Entry, Finish, Values, shown_masker, with_row_tokens};
use crate::record::ledger::Ledger;
use crate::record::tools::{self, DoneInput, StepInput};
use crate::resolve::resolve_action;

/// The most of a response body the agent reads (it is told when there is more).
const SHOWN_BODY: usize = 6000;

/// One request the agent sent and Saffron recorded.
struct Sent {
    /// Its entry (the recorded request); none for a request the replay sent before a repair
    /// took over.
    entry: Option<usize>,
    session: Option<String>,
    line: String,
    status: u16,
    /// An error status some check of its step expects.
    status_checked: bool,
    /// It carried a secret: what it answers is a credential.
    carried_secret: bool,
    /// The id-like fields of its response (pointer, value as text).
    ids: Vec<(String, String)>,
}

/// The request tools of a recording or repair session: `saffron_request`, `saffron_extract` and
/// the checks of a response, on an HTTP execution of their own. The `@api` gateway is these and
/// nothing else; the browser gateway adds them beside the page in a project with API services.
pub(crate) struct Requests {
    live: HttpLive,
    execution: Execution,
    options: RunOptions,
    values: Arc<Values>,
    /// Values kept so far, the Fixture's first: (name, value).
    captured: Vec<(String, String)>,
    sent: Vec<Sent>,
    /// How many requests the replay a repair took over had sent.
    prior: usize,
}

/// What the session the requests belong to keeps, that a request adds to.
pub(crate) struct Books<'a> {
    pub ledger: &'a mut Ledger,
    pub entries: &'a mut Vec<Entry>,
    pub masker: &'a mut Masker,
    /// What the model reads is masked with this.
    pub shown: &'a mut Masker,
}

/// The cookies of the browser context requests are sent beside.
pub(crate) trait CookieJar: Send {
    /// The `Cookie` header the context would send to `url`.
    fn cookie_header<'a>(&'a mut self, url: &'a str) -> BoxFuture<'a, Result<Option<String>, String>>;
    /// Keeps the cookies a response from `url` set (its `Set-Cookie` headers).
    fn store<'a>(&'a mut self, url: &'a str, set_cookies: Vec<String>) -> BoxFuture<'a, Result<(), String>>;
}

pub(crate) struct ApiGateway {
    requests: Requests,
    ledger: Ledger,
    masker: Masker,
    shown: Masker,
    entries: Vec<Entry>,
    finish: Option<Finish>,
    /// What the agent said when it ended (a repair files it).
    account: Account,
}

impl ApiGateway {
    pub(crate) fn new(
        live: HttpLive,
        execution: &Execution,
        options: &RunOptions,
        values: Arc<Values>,
        masker: Masker,
        seeds: &[(String, String)],
    ) -> ApiGateway {
        let segment = 0..execution.template_steps.len();
        let requests = Requests::new(live, execution, options, Arc::clone(&values), seeds);
        ApiGateway::over(requests, execution, &values, masker, segment)
    }

    /// A repair's gateway, on the execution a replay stopped in (its sessions' cookies and
    /// latest responses kept), from step `from` (0-based) on. `captured` holds what the replay
    /// kept; an id of a response the replay got counts as one a request may not copy by hand.
    pub(crate) fn repairing(
        live: HttpLive,
        execution: &Execution,
        options: &RunOptions,
        values: Arc<Values>,
        masker: Masker,
        captured: &[(String, String)],
        from: usize,
    ) -> ApiGateway {
        let segment = from..execution.template_steps.len();
        let requests = Requests::taking_over(live, execution, options, Arc::clone(&values), captured);
        ApiGateway::over(requests, execution, &values, masker, segment)
    }

    fn over(
        requests: Requests,
        execution: &Execution,
        values: &Values,
        masker: Masker,
        segment: std::ops::Range<usize>,
    ) -> ApiGateway {
        let shown = shown_masker(&masker, values);
        ApiGateway {
            requests,
            ledger: Ledger::new(execution.template_steps.clone(), segment, values),
            masker,
            shown,
            entries: Vec::new(),
            finish: None,
            account: Account::default(),
        }
    }

    /// The exchanges of this session (not those of the replay it took over).
    pub(crate) fn own_exchanges(&self) -> Vec<crate::transcript::Exchange> {
        self.requests.own_exchanges()
    }

    /// The latest response of `session`, as the agent reads one (masked).
    pub(crate) fn latest_shown(&self, session: Option<&str>) -> Option<String> {
        self.requests.latest_shown(&self.shown, session)
    }

    pub(crate) fn account(&self) -> &Account {
        &self.account
    }

    pub(crate) fn finish(&self) -> Option<&Finish> {
        self.finish.as_ref()
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub(crate) fn masker(&self) -> &Masker {
        &self.masker
    }

    /// The requests, and the books they add to.
    fn parts(&mut self) -> (&mut Requests, Books<'_>) {
        let books = Books {
            ledger: &mut self.ledger,
            entries: &mut self.entries,
            masker: &mut self.masker,
            shown: &mut self.shown,
        };
        (&mut self.requests, books)
    }

    async fn call_inner(&mut self, name: &str, input: &Value) -> Result<String, String> {
        match name {
            tools::STEP => {
                let input: StepInput = tools::parse(name, input)?;
                self.ledger.announce(
                    input.step,
                    " It is a Then step: verify it with saffron_assert on the response; do not send a request to \
                     make it pass.",
                )
            }
            api_tools::REQUEST => {
                let input: RequestInput = tools::parse(name, input)?;
                let (requests, mut books) = self.parts();
                requests.request(&mut books, None, input).await
            }
            api_tools::EXTRACT => {
                let input: ExtractInput = tools::parse(name, input)?;
                let (requests, mut books) = self.parts();
                requests.extract(&mut books, input)
            }
            tools::ASSERT => {
                let input: ApiAssertInput = tools::parse(name, input)?;
                let (requests, mut books) = self.parts();
                requests.assert(&mut books, input).await
            }
            tools::DONE => {
                let input: DoneInput = tools::parse(name, input)?;
                self.account = Account::of(&input, &self.masker);
                self.done(input.success, &input.narrative)
            }
            other => {
                let names: Vec<String> = api_tools::specs().into_iter().map(|spec| spec.name).collect();
                Err(format!(
                    "there is no tool `{other}` in an @api scenario (it has no browser); the tools are: {}",
                    names.join(", ")
                ))
            }
        }
    }

    fn done(&mut self, success: bool, narrative: &str) -> Result<String, String> {
        if success && let Some(refused) = self.requests.unexpected_errors(&self.entries) {
            return Err(refused);
        }
        let (answer, finish) = self.ledger.done(success, narrative, &self.masker);
        if finish.is_some() {
            self.finish = finish;
        }
        answer
    }
}

impl Requests {
    pub(crate) fn new(
        live: HttpLive,
        execution: &Execution,
        options: &RunOptions,
        values: Arc<Values>,
        seeds: &[(String, String)],
    ) -> Requests {
        Requests {
            live,
            execution: execution.clone(),
            options: options.clone(),
            values,
            captured: seeds.to_vec(),
            sent: Vec::new(),
            prior: 0,
        }
    }

    /// Requests on the execution a replay stopped in: what it sent counts as sent (an id its
    /// responses hold may not be copied by hand), and its responses are the latest.
    pub(crate) fn taking_over(
        live: HttpLive,
        execution: &Execution,
        options: &RunOptions,
        values: Arc<Values>,
        captured: &[(String, String)],
    ) -> Requests {
        let prior: Vec<Sent> = live
            .sent_exchanges()
            .into_iter()
            .map(|exchange| {
                let mut ids = Vec::new();
                if let Some(json) = exchange.response_body.as_deref().and_then(|body| serde_json::from_str(body).ok()) {
                    id_fields(&json, "", None, &mut ids);
                }
                Sent {
                    entry: None,
                    session: exchange.session.clone(),
                    line: format!("{} {}, sent by the replay", exchange.method, path_of(&exchange.url)),
                    status: exchange.status.unwrap_or_default(),
                    status_checked: true,
                    carried_secret: false,
                    ids,
                }
            })
            .collect();
        let mut requests = Requests::new(live, execution, options, values, captured);
        requests.prior = prior.len();
        requests.sent = prior;
        requests
    }

    /// The exchanges of this session (not those of the replay it took over).
    pub(crate) fn own_exchanges(&self) -> Vec<crate::transcript::Exchange> {
        self.live.sent_exchanges().into_iter().skip(self.prior).collect()
    }

    /// The latest response of `session`, as the agent reads one (masked with `shown`).
    pub(crate) fn latest_shown(&self, shown: &Masker, session: Option<&str>) -> Option<String> {
        let response = self.live.latest_response(session)?;
        let exchange = response.exchange;
        let line = format!("{} {}", exchange.method, path_of(&exchange.url));
        let described = describe(exchange.status, &exchange.response_headers, exchange.response_body.as_deref());
        Some(shown.mask(&format!("{line}\n{described}")))
    }

    /// `saffron_request`: sends the request (beside a browser context, with its cookies from
    /// `jar`), shows the response, and records it under the announced step.
    pub(crate) async fn request(
        &mut self,
        books: &mut Books<'_>,
        jar: Option<&mut dyn CookieJar>,
        input: RequestInput,
    ) -> Result<String, String> {
        let service = match input.service {
            Some(service) => service,
            None => self.default_service()?,
        };
        let method = input.method.to_ascii_uppercase();
        if !matches!(method.as_str(), "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS") {
            return Err(format!(
                "{method} is not a method a request may use (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS)"
            ));
        }
        let mut path = input.path;
        let mut headers: Vec<Header> = input.headers.into_iter().map(|(name, value)| Header { name, value }).collect();
        let mut body = input.body;
        // Values kept from responses are written back as their names, before anything is checked.
        path = self.path_with_captured(&path);
        for header in &mut headers {
            header.value = self.text_with_captured(&header.value);
        }
        if let Some(body) = &mut body {
            self.json_with_captured(body, None);
        }
        self.refuse_copied_ids(books.ledger, &path, body.as_ref())?;
        let action = Action::Request {
            service,
            method,
            path,
            session: input.session.clone(),
            headers,
            body: body.map(JsonTemplate),
            extract: Vec::new(),
            idempotent: input.idempotent,
            timeout_ms: None,
        };
        self.values.check_secrets(&action)?;
        let (mut resolved, secrets) = self.resolve(books.ledger.current(), &action)?;
        books.masker.add_all(&secrets);
        books.shown.add_all(&secrets);
        // Beside a browser context, the request carries the context's cookies (not recorded:
        // replay sends the context's cookies of its own run), and a cookie it sets is the
        // context's from then on.
        let mut jar = jar;
        let url = match (&jar, &resolved) {
            (Some(_), Action::Request { service, path, .. }) => Some(self.live.url_of(service, path)?),
            _ => None,
        };
        if let (Some(jar), Some(url)) = (jar.as_deref_mut(), &url) {
            let cookie = jar.cookie_header(url.as_str()).await?;
            if let (Some(cookie), Action::Request { headers, .. }) = (cookie, &mut resolved)
                && !headers.iter().any(|header| header.name.eq_ignore_ascii_case("cookie"))
            {
                for (name, value) in cookie.split("; ").filter_map(|pair| pair.split_once('=')) {
                    books.masker.add_as(value, &format!("{{cookie:{name}}}"));
                    books.shown.add_as(value, &format!("{{cookie:{name}}}"));
                }
                headers.push(Header { name: "Cookie".into(), value: cookie });
            }
        }
        let outcome = self.perform(books.ledger.current(), books.masker, &action, &resolved, &secrets).await;
        if let Outcome::Failed(failure) = outcome {
            return Err(format!("{}; nothing was recorded", failure.reason));
        }
        let Some(response) = self.live.latest_response(input.session.as_deref()) else {
            return Err("the request got no response; nothing was recorded".into());
        };
        if let (Some(jar), Some(url)) = (jar, &url) {
            let set: Vec<String> = response
                .exchange
                .response_headers
                .iter()
                .filter(|(name, _)| name.eq_ignore_ascii_case("set-cookie"))
                .map(|(_, value)| value.clone())
                .collect();
            if !set.is_empty() {
                jar.store(url.as_str(), set).await?;
            }
        }
        let Some(response) = self.live.latest_response(input.session.as_deref()) else {
            return Err("the request got no response; nothing was recorded".into());
        };
        let status = response.exchange.status.unwrap_or_default();
        let mut ids = Vec::new();
        if let Some(json) = response.json {
            id_fields(json, "", None, &mut ids);
        }
        let shown_response = describe(
            response.exchange.status,
            &response.exchange.response_headers,
            response.exchange.response_body.as_deref(),
        );
        let line = format!("{} {}", response.exchange.method, path_of(&response.exchange.url));
        let recorded = with_row_tokens(action, &self.values.params);
        let step = books.ledger.current();
        books.entries.push(Entry { step, action: recorded.clone(), fragile: None });
        // 1-based, in the order sent: how the agent is told of it.
        let number = self.sent.len() + 1;
        self.sent.push(Sent {
            entry: Some(books.entries.len() - 1),
            session: input.session,
            line: line.clone(),
            status,
            status_checked: false,
            carried_secret: !secrets.is_empty(),
            ids,
        });
        let mut answer = match step {
            Some(step) => format!("Request {number}, recorded under step {}: {recorded}\n{shown_response}", step + 1),
            None => {
                format!("Request {number}, sent but not recorded (no step announced yet): {line}\n{shown_response}")
            }
        };
        if status >= 400 && step.is_some() {
            answer.push_str(
                "\nNote: an error status. Expect it with saffron_assert (check status) only if the step names \
                 it; otherwise the step fails here when replayed. If the application should not answer this, call \
                 saffron_done with success=false.",
            );
        }
        Ok(answer)
    }

    /// The service a request without one goes to: the one service the project configures,
    /// else `app` (the application itself); with several and no `app`, the agent must say.
    fn default_service(&self) -> Result<String, String> {
        default_service(&self.options.services.by_name.keys().map(String::as_str).collect::<Vec<_>>())
    }

    /// `saffron_extract`: keeps a field of the latest response, on the request that got it.
    pub(crate) fn extract(&mut self, books: &mut Books<'_>, input: ExtractInput) -> Result<String, String> {
        let valid = input.name.chars().next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
            && input.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!("{:?} cannot be a name: use letters, digits and _", input.name));
        }
        if self.captured.iter().any(|(name, _)| *name == input.name) {
            return Err(format!("a value is kept as {:?} already: choose another name", input.name));
        }
        let Some(sent) = self.sent.last() else {
            return Err("no request was sent yet: a value is kept from the latest response".into());
        };
        let (entry, carried_secret, session) = (sent.entry, sent.carried_secret, sent.session.clone());
        let Some(entry) = entry else {
            return Err("the latest response is the one the replay got, and no request of yours keeps values from \
                        it: send the request again under its step, then keep the value"
                .into());
        };
        let response = self.live.latest_response(session.as_deref()).ok_or("no response to keep a value from")?;
        let Some(json) = response.json else {
            return Err("the latest response has no JSON body".into());
        };
        let Some(found) = json.pointer(&input.pointer) else {
            let fields: Vec<String> = match json {
                Value::Object(map) => map.keys().map(|key| format!("/{key}")).collect(),
                _ => Vec::new(),
            };
            return Err(format!(
                "the latest response has no field {} (its fields: {})",
                input.pointer,
                fields.join(", ")
            ));
        };
        let value = match found {
            Value::String(text) => text.clone(),
            Value::Number(_) | Value::Bool(_) => found.to_string(),
            _ => return Err(format!("{} is not a single value (a string, number or boolean)", input.pointer)),
        };
        let kept = Extract { name: input.name.clone(), pointer: input.pointer.clone() };
        if let Some(Entry { action: Action::Request { extract, .. }, .. }) = books.entries.get_mut(entry) {
            extract.push(kept.clone());
        }
        if carried_secret || is_credential(&input.name, &[kept]) {
            let token = format!("{{captured:{}}}", input.name);
            books.masker.add_as(&value, &token);
            books.shown.add_as(&value, &token);
        }
        self.captured.push((input.name.clone(), value.clone()));
        Ok(format!("Kept {} as {{captured:{}}}: {value}", input.pointer, input.name))
    }

    /// A check of the latest response, run first and recorded only if it holds.
    pub(crate) async fn assert(&mut self, books: &mut Books<'_>, input: ApiAssertInput) -> Result<String, String> {
        let session = input.session.clone();
        if self.live.latest_response(session.as_deref()).is_none() {
            return Err("no request was sent yet: a check reads the latest response".into());
        }
        let action = match input.check {
            ApiCheck::Status => {
                let status = input.status.ok_or("check `status` needs `status`")?;
                if !saffron_recording::http::is_status(&status) {
                    return Err(format!("{status:?} is not a status: write 404, or a class such as 4xx"));
                }
                if let Some(step) = books.ledger.current()
                    && !self.step_names_status(step, &status)
                {
                    return Err(format!(
                        "step {} \"{}\" does not name status {status}: a status is expected only where the step \
                         says it. If the application should have answered otherwise, call saffron_done with \
                         success=false; nothing was checked or recorded",
                        step + 1,
                        books.ledger.step(step).text
                    ));
                }
                Action::ExpectStatus { status, session: session.clone(), timeout_ms: None }
            }
            ApiCheck::Field => {
                let pointer = input.pointer.ok_or("check `field` needs `pointer`")?;
                let value = match input.value {
                    Some(mut value) => {
                        self.json_with_captured(&mut value, None);
                        Some(JsonTemplate(value))
                    }
                    None => None,
                };
                if value.is_some() == input.pattern.is_some() {
                    return Err("check `field` needs one of `value` and `pattern`".into());
                }
                Action::ExpectField {
                    pointer,
                    value,
                    pattern: input.pattern,
                    session: session.clone(),
                    timeout_ms: None,
                }
            }
            ApiCheck::Schema => Action::ExpectSchema { session: session.clone(), timeout_ms: None },
        };
        self.values.check_secrets(&action)?;
        let (resolved, secrets) = self.resolve(books.ledger.current(), &action)?;
        // A Then step's check must be about the step: it holds one of the step's values.
        let mut credited: Vec<String> = match books.ledger.current() {
            Some(step) => {
                let all = books.ledger.then_values(step);
                if !all.is_empty() && !all.iter().any(|value| holds_value(&resolved, value)) {
                    return Err(format!(
                        "{} (an expected status or field value, or a pattern that holds them); nothing was checked \
                         or recorded",
                        books.ledger.not_about(step)
                    ));
                }
                all.iter().filter(|value| holds_value(&resolved, value)).cloned().collect()
            }
            None => Vec::new(),
        };
        if let Outcome::Failed(failure) =
            self.perform(books.ledger.current(), books.masker, &action, &resolved, &secrets).await
        {
            return Err(format!("the check does not hold, so it is not recorded: {}", failure.reason));
        }
        // A pattern can hold a value and match without it (`3|.*`): a value counts only if the
        // pattern stops matching once that value can match nothing.
        if let Action::ExpectField { pointer, pattern: Some(pattern), .. } = &resolved {
            let text = self.field_text(session.as_deref(), pointer);
            credited.retain(|value| session.as_ref() == Some(value) || !matches_without(pattern, value, &text));
            if let Some(step) = books.ledger.current()
                && credited.is_empty()
                && !books.ledger.then_values(step).is_empty()
            {
                return Err(format!(
                    "this pattern matches whether or not the field holds the values of step {} \"{}\", so it says \
                     nothing about the step; nothing was recorded",
                    step + 1,
                    books.ledger.step(step).text
                ));
            }
        }
        let Some(step) = books.ledger.current() else {
            return Ok(format!("The check holds; not recorded (no step announced yet): {action}."));
        };
        books.ledger.credit(&credited);
        if matches!(action, Action::ExpectStatus { .. })
            && let Some(sent) = self.sent.iter_mut().rev().find(|sent| sent.session == session)
        {
            sent.status_checked = true;
        }
        let action = with_row_tokens(action, &self.values.params);
        books.entries.push(Entry { step: Some(step), action: action.clone(), fragile: None });
        Ok(format!("The check holds; recorded under step {}: {action}.", step + 1))
    }

    /// Why the agent may not end in success: each request of a step answered with an error
    /// status that no check expects.
    pub(crate) fn unexpected_errors(&self, entries: &[Entry]) -> Option<String> {
        let unexpected: Vec<String> = self
            .sent
            .iter()
            .enumerate()
            .filter(|(_, sent)| sent.status >= 400 && !sent.status_checked)
            .filter(|(_, sent)| {
                sent.entry.and_then(|entry| entries.get(entry)).is_some_and(|entry| entry.step.is_some())
            })
            .map(|(index, sent)| format!("request {} ({}) was answered {}", index + 1, sent.line, sent.status))
            .collect();
        (!unexpected.is_empty()).then(|| {
            format!(
                "not done: {}, and no step names that status. If a step says it, announce that step and check \
                 the status; otherwise the application does not do what the scenario says: call saffron_done \
                 with success=false",
                unexpected.join("; ")
            )
        })
    }

    /// Whether step `index` (with its row's values and table) names `status`: its code, its
    /// class, or its reason phrase ("Not Found").
    fn step_names_status(&self, index: usize, status: &str) -> bool {
        // The step as this row runs it: its values and table filled in.
        let step = &self.execution.steps[index];
        let mut text = step.text.clone();
        for row in step.table.iter().flatten() {
            text.push(' ');
            text.push_str(&row.join(" "));
        }
        let words: Vec<&str> = text.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        if words.iter().any(|word| word.eq_ignore_ascii_case(status)) {
            return true;
        }
        let reason = status
            .parse::<u16>()
            .ok()
            .and_then(|code| reqwest::StatusCode::from_u16(code).ok())
            .and_then(|code| code.canonical_reason());
        reason.is_some_and(|reason| text.to_ascii_lowercase().contains(&reason.to_ascii_lowercase()))
    }

    fn resolve(
        &self,
        current: Option<usize>,
        action: &Action,
    ) -> Result<(Action, Vec<saffron_recording::Secret>), String> {
        let table = current.and_then(|index| self.values.table(index));
        resolve_action(action, &self.values.execution(&self.captured), table)
            .map_err(|error| format!("cannot fill in the values of `{action}`: {error}"))
    }

    async fn perform(
        &mut self,
        current: Option<usize>,
        masker: &mut Masker,
        recorded: &Action,
        resolved: &Action,
        secrets: &[saffron_recording::Secret],
    ) -> Outcome<()> {
        let values = self.values.execution(&self.captured);
        let at = ActionAt {
            execution: &self.execution,
            steps: &[],
            step: current.unwrap_or(0),
            action: 0,
            recorded,
            resolved,
            secrets,
            table: current.and_then(|index| self.values.table(index)),
            values: &values,
            options: &self.options,
            cleared: 0,
            may_clear: false,
        };
        self.live.perform(&at, masker).await
    }

    /// The text of the field at `pointer` of `session`'s latest response.
    fn field_text(&self, session: Option<&str>, pointer: &str) -> String {
        let found = self.live.latest_response(session).and_then(|response| response.json?.pointer(pointer).cloned());
        match found {
            Some(Value::String(text)) => text,
            Some(other) => other.to_string(),
            None => String::new(),
        }
    }

    /// `path` with each segment that is a kept value written as its name.
    fn path_with_captured(&self, path: &str) -> String {
        let (route, query) = path.split_once('?').map_or((path, None), |(route, query)| (route, Some(query)));
        let swap = |part: &str| match self.captured_name(part) {
            Some(name) => format!("{{captured:{name}}}"),
            None => part.to_owned(),
        };
        let route: Vec<String> = route.split('/').map(swap).collect();
        let mut written = route.join("/");
        if let Some(query) = query {
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, value)) => format!("{key}={}", swap(value)),
                    None => pair.to_owned(),
                })
                .collect();
            written.push('?');
            written.push_str(&pairs.join("&"));
        }
        written
    }

    /// A header value with each kept value of eight characters or more written as its name
    /// (a bearer token), or the whole value when it is one.
    fn text_with_captured(&self, text: &str) -> String {
        if let Some(name) = self.captured_name(text) {
            return format!("{{captured:{name}}}");
        }
        let mut written = text.to_owned();
        for (name, value) in self.captured.iter().filter(|(_, value)| value.chars().count() >= 8) {
            written = written.replace(value.as_str(), &format!("{{captured:{name}}}"));
        }
        written
    }

    /// Each leaf of `json` that is a kept value, written as its name: a number or boolean as a
    /// typed leaf, so it is sent as the type it was.
    fn json_with_captured(&self, json: &mut Value, key: Option<&str>) {
        match json {
            Value::Object(map) => {
                if saffron_recording::http::typed_leaf(map).is_some() {
                    return;
                }
                for (name, item) in map.iter_mut() {
                    self.json_with_captured(item, Some(name));
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.json_with_captured(item, key)),
            Value::String(text) => {
                if let Some(name) = self.captured_name(text) {
                    *json = Value::String(format!("{{captured:{name}}}"));
                }
            }
            Value::Number(_) | Value::Bool(_) => {
                let text = json.to_string();
                // A small number is in too many places (a quantity of 1): only an id-like field's.
                let distinct = text.len() >= 4 || key.is_some_and(is_id_key);
                if distinct && let Some(name) = self.captured_name(&text) {
                    let kind = if json.is_boolean() { "boolean" } else { "number" };
                    *json = serde_json::json!({ "$value": format!("{{captured:{name}}}"), "$type": kind });
                }
            }
            Value::Null => {}
        }
    }

    /// The name a value was kept as (the latest), when it was.
    fn captured_name(&self, value: &str) -> Option<&str> {
        if value.is_empty() {
            return None;
        }
        self.captured.iter().rev().find(|(_, kept)| kept == value).map(|(name, _)| name.as_str())
    }

    /// Refuses an id copied from a response without being kept: replay would send the id this
    /// run happened to get.
    fn refuse_copied_ids(&self, ledger: &Ledger, path: &str, body: Option<&Value>) -> Result<(), String> {
        let mut used: Vec<String> = path
            .split(['/', '?', '&', '='])
            .filter(|part| !part.is_empty() && !part.contains('{') && !part.contains('<'))
            .map(str::to_owned)
            .collect();
        if let Some(body) = body {
            let mut ids = Vec::new();
            id_fields(body, "", None, &mut ids);
            used.extend(ids.into_iter().map(|(_, value)| value));
        }
        let step_values: Vec<String> = match ledger.current() {
            Some(index) => crate::record::ledger::step_values(
                &ledger.step(index).text,
                self.values.table(index),
                &self.values.params,
            ),
            None => Vec::new(),
        };
        for (index, sent) in self.sent.iter().enumerate() {
            for (pointer, value) in &sent.ids {
                let copied = used.iter().any(|part| part == value);
                let given = step_values.contains(value) || self.values.params.iter().any(|(_, row)| row == value);
                if copied && !given {
                    return Err(format!(
                        "{value} is the {pointer} of the response to request {} ({}): a recording must not hold an id \
                         one run happened to get. Keep it with saffron_extract (pointer {pointer}) and write \
                         {{captured:NAME}} instead; nothing was sent",
                        index + 1,
                        sent.line
                    ));
                }
            }
        }
        Ok(())
    }
}

impl ToolGateway for ApiGateway {
    fn tools(&self) -> Vec<ToolSpec> {
        api_tools::specs()
    }

    fn call<'a>(&'a mut self, name: &'a str, input: &'a Value) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if self.finish.is_some() {
                return ToolOutput::error("the session is over");
            }
            match self.call_inner(name, input).await {
                Ok(text) => ToolOutput::ok(self.shown.mask(&text)),
                Err(text) => ToolOutput::error(self.shown.mask(&text)),
            }
        })
    }

    fn is_done(&self) -> bool {
        self.finish.is_some()
    }

    fn nudge(&self) -> String {
        "You answered without calling a tool. Act only through the tools: announce each step with saffron_step, \
         send its requests with saffron_request, verify each Then step with saffron_assert, and end with \
         saffron_done."
            .into()
    }
}

/// See [`ApiGateway::default_service`].
pub(crate) fn default_service(names: &[&str]) -> Result<String, String> {
    let configured: Vec<&&str> = names.iter().filter(|name| **name != APP_SERVICE).collect();
    match (configured.as_slice(), names.contains(&APP_SERVICE)) {
        ([only], _) => Ok((**only).to_owned()),
        (_, true) => Ok(APP_SERVICE.to_owned()),
        _ => Err(format!("name the request's service: one of {}", names.join(", "))),
    }
}

/// `id`, `orderId`, `order_id`, `uuid`: a field whose value names a record.
fn is_id_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    lower == "id" || lower == "uuid" || lower.ends_with("_id") || lower.ends_with("uuid") || key.ends_with("Id")
}

/// The id-like fields of `json`, as (pointer, value text).
fn id_fields(json: &Value, pointer: &str, key: Option<&str>, out: &mut Vec<(String, String)>) {
    match json {
        Value::Object(map) => {
            for (name, item) in map {
                let child = format!("{pointer}/{}", saffron_recording::http::escape_pointer(name));
                id_fields(item, &child, Some(name), out);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                id_fields(item, &format!("{pointer}/{index}"), key, out);
            }
        }
        Value::String(text) if key.is_some_and(is_id_key) && !text.is_empty() => {
            out.push((pointer.to_owned(), text.clone()));
        }
        Value::Number(number) if key.is_some_and(is_id_key) => out.push((pointer.to_owned(), number.to_string())),
        _ => {}
    }
}

/// Whether a check holds `value` of a Then step: the session whose response it reads, an
/// expected status that is it, an expected field value with a leaf that is or holds it, or a
/// pattern that spells it.
fn holds_value(check: &Action, value: &str) -> bool {
    // `As "alice"`: a check of alice's latest response is about alice.
    if check.session() == Some(value) {
        return true;
    }
    match check {
        Action::ExpectStatus { status, .. } => status == value,
        Action::ExpectField { value: Some(expected), .. } => {
            let Ok(json) = expected.to_json() else { return false };
            let mut leaves = Vec::new();
            json_leaves(&json, &mut leaves);
            let number = value.parse::<f64>().ok();
            leaves.iter().any(|leaf| match leaf {
                Value::String(text) => text.contains(value),
                Value::Number(found) => found.to_string() == value || (number.is_some() && found.as_f64() == number),
                Value::Bool(found) => found.to_string() == value,
                _ => false,
            })
        }
        Action::ExpectField { pattern: Some(pattern), .. } => {
            pattern.contains(value) || pattern.contains(&regex::escape(value))
        }
        _ => false,
    }
}

fn json_leaves<'a>(json: &'a Value, out: &mut Vec<&'a Value>) {
    match json {
        Value::Object(map) => map.values().for_each(|item| json_leaves(item, out)),
        Value::Array(items) => items.iter().for_each(|item| json_leaves(item, out)),
        leaf => out.push(leaf),
    }
}

/// Whether `pattern` still matches `text` once `value` in it can match nothing.
fn matches_without(pattern: &str, value: &str, text: &str) -> bool {
    let escaped = regex::escape(value);
    // `[^\s\S]` matches no character (the regex crate has no lookaround to say it otherwise).
    let without = pattern.replace(&escaped, "[^\\s\\S]").replace(value, "[^\\s\\S]");
    regex::Regex::new(&without).is_ok_and(|regex| regex.is_match(text))
}

/// What the agent reads in place of a credential a response holds.
const HIDDEN_CREDENTIAL: &str = "(a credential, not shown: keep it with saffron_extract and send {captured:NAME})";

/// Each field of `json` named as a credential (`token`, `access_token`, `apiKey`, `password`,
/// `sessionId`, …) in place of its value: the model never reads one, and it can only be sent
/// again through a kept value.
fn hide_credentials(json: &mut Value) {
    match json {
        Value::Object(map) => {
            for (name, item) in map.iter_mut() {
                match item {
                    Value::String(_) | Value::Number(_) if is_credential_key(name) => {
                        *item = Value::String(HIDDEN_CREDENTIAL.into());
                    }
                    _ => hide_credentials(item),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(hide_credentials),
        _ => {}
    }
}

/// A field name that says its value is a credential (not `author`, not `keyboard`).
fn is_credential_key(name: &str) -> bool {
    const ENDINGS: [&str; 11] = [
        "token",
        "secret",
        "password",
        "passwd",
        "apikey",
        "jwt",
        "sessionid",
        "cookie",
        "authorization",
        "credential",
        "credentials",
    ];
    let name: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
    name == "session" || ENDINGS.iter().any(|ending| name.ends_with(ending))
}

/// The response as the agent reads it: status, headers that say something, and the body
/// (the start of it when long).
fn describe(status: Option<u16>, headers: &[(String, String)], body: Option<&str>) -> String {
    let Some(status) = status else { return "no response".into() };
    let reason = reqwest::StatusCode::from_u16(status).ok().and_then(|code| code.canonical_reason()).unwrap_or("");
    let mut text = format!("→ {status} {reason}\n");
    let shown: BTreeMap<&str, &str> = headers
        .iter()
        .filter(|(name, _)| matches!(name.as_str(), "content-type" | "location" | "www-authenticate"))
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    for (name, value) in shown {
        text.push_str(&format!("{name}: {value}\n"));
    }
    if headers.iter().any(|(name, _)| name == "set-cookie") {
        text.push_str("set-cookie: (kept by the session's client, sent with its next requests)\n");
    }
    match body {
        Some(body) if !body.trim().is_empty() => {
            let pretty = serde_json::from_str::<Value>(body)
                .ok()
                .and_then(|mut json| {
                    hide_credentials(&mut json);
                    serde_json::to_string_pretty(&json).ok()
                })
                .unwrap_or_else(|| body.to_owned());
            if pretty.len() > SHOWN_BODY {
                let cut = (0..=SHOWN_BODY).rev().find(|index| pretty.is_char_boundary(*index)).unwrap_or(0);
                text.push_str(&format!("{}\n… ({} bytes in all)", &pretty[..cut], pretty.len()));
            } else {
                text.push_str(&pretty);
            }
        }
        _ => text.push_str("(no body)"),
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_without_a_service_goes_to_the_one_configured_else_to_app() {
        assert_eq!(default_service(&["app", "shop"]), Ok("shop".to_owned()));
        assert_eq!(default_service(&["app"]), Ok("app".to_owned()));
        assert_eq!(default_service(&["app", "billing", "shop"]), Ok("app".to_owned()));
        assert!(default_service(&["billing", "shop"]).is_err_and(|why| why.contains("billing, shop")));
    }

    #[test]
    fn a_pattern_counts_for_a_value_only_if_it_stops_matching_without_it() {
        assert!(matches_without("900|.*", "900", "900"));
        assert!(!matches_without("^900$", "900", "900"));
        assert!(!matches_without(r"^Total: 9\.00$", "9.00", "Total: 9.00"));
    }

    #[test]
    fn credentials_in_a_response_are_hidden_from_the_agent_and_nothing_else_is() {
        let mut json = serde_json::json!({
            "token": "abc", "tokenType": "Bearer", "author": "Austen",
            "auth": { "access_token": "x", "refresh-token": "y", "expires_in": 3600 },
            "users": [{ "apiKey": 7, "keyboard": "qwerty", "sessionId": "s" }],
        });
        hide_credentials(&mut json);
        let hidden = serde_json::Value::String(HIDDEN_CREDENTIAL.into());
        for pointer in ["/token", "/auth/access_token", "/auth/refresh-token", "/users/0/apiKey", "/users/0/sessionId"]
        {
            assert_eq!(json.pointer(pointer), Some(&hidden), "{pointer}");
        }
        for (pointer, kept) in [("/tokenType", "Bearer"), ("/author", "Austen"), ("/users/0/keyboard", "qwerty")] {
            assert_eq!(json.pointer(pointer), Some(&serde_json::json!(kept)), "{pointer}");
        }
        assert_eq!(json.pointer("/auth/expires_in"), Some(&serde_json::json!(3600)));
    }

    #[test]
    fn id_fields_are_found_by_their_names_at_any_depth() {
        let mut ids = Vec::new();
        let json =
            serde_json::json!({ "id": 7, "quantity": 1, "lines": [{ "productId": "p-9", "sku": "x" }], "order_id": 3 });
        id_fields(&json, "", None, &mut ids);
        ids.sort();
        assert_eq!(
            ids,
            [
                ("/id".to_owned(), "7".to_owned()),
                ("/lines/0/productId".to_owned(), "p-9".to_owned()),
                ("/order_id".to_owned(), "3".to_owned())
            ]
        );
    }
}
