//! The recording gateway: the only way the agent touches the browser, and the only recorder.
//!
//! Each action the agent asks for is built as a recording-format [`Action`] (its target from
//! the selector ladder walked against the element behind the ref), its tokens are filled in
//! the way replay fills them, and it runs through the page's `perform`: what is recorded is
//! what was performed, tokens kept, values never. Every answer is masked here, before the
//! session masks it again.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use saffron_agent::{BoxFuture, ToolGateway, ToolOutput, ToolSpec};
use saffron_recording::{Action, Date, ElementState, Masker, ResponseMatcher, StepSpec, TokenKind, tokenize};
use serde_json::Value;

use super::lease::{Refusal, Ticket, clock, handback_notice, overtaken_notice};
use super::ledger::{Ledger, step_values};
use super::page::{LivePage, PageError};
use super::takeover::SharedLease;
use super::tools::{self, AssertInput, CheckKind, StateInput};
use crate::orchestrator::run::EnvLookup;
use crate::resolve::{ExecutionValues, resolve_action};
use saffron_index::repair_rules::check_holds;

/// How long a check waits for the page before it is refused: the agent looks at the page as it
/// is; replay waits the configured assertion timeout.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a call waits while a person holds the browser before it is answered that they
/// still do (the agent may call again to wait longer).
pub(crate) const HOLD_WAIT: Duration = Duration::from_secs(300);

/// One performed action, with the step it was performed under (`None`: before any announced
/// step, diagnosis).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub step: Option<usize>,
    pub action: Action,
    /// `step 4 click css "#x"`: only CSS or position identifies the element.
    pub fragile: Option<String>,
}

/// How the agent ended the session, as the gateway judged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    Success,
    /// Success claimed twice while Then steps had no verified check (their 0-based indices).
    Unverified(Vec<usize>),
    /// The agent found the application not doing what a step says.
    Failure(String),
    /// The browser went away under the session.
    BrowserLost(String),
}

/// The values the scenario's execution fills tokens with.
pub struct Values {
    pub params: Vec<(String, String)>,
    pub unique_seed: String,
    pub today: Date,
    pub env: EnvLookup,
    /// The steps' tables with the row's values, for `<table:key>`.
    pub tables: Vec<Option<Vec<Vec<String>>>>,
    /// Names the agent may type as `{env:NAME}`.
    pub secret_names: Vec<String>,
    /// Where a secret may go (see [`saffron_browser::SecretOrigins`]).
    pub secret_origins: saffron_browser::SecretOrigins,
    /// The project folder, which uploads are relative to.
    pub root: std::path::PathBuf,
    /// The files the agent may upload (see [`super::fixtures`]).
    pub upload_files: Vec<String>,
}

impl Values {
    /// The data table of step `index` (0-based), with the row's values, for `<table:key>`.
    pub(crate) fn table(&self, index: usize) -> Option<&Vec<Vec<String>>> {
        self.tables.get(index)?.as_ref()
    }

    /// The values an action is resolved with, `captured` the values kept from responses so far.
    pub(crate) fn execution<'a>(&'a self, captured: &'a [(String, String)]) -> ExecutionValues<'a> {
        ExecutionValues {
            params: &self.params,
            unique_seed: &self.unique_seed,
            today: self.today,
            env: self.env.clone(),
            root: &self.root,
            captured,
        }
    }

    /// Only secrets the project declares may be used: an agent must not read the environment
    /// into the application.
    pub(crate) fn check_secrets(&self, action: &Action) -> Result<(), String> {
        let json = serde_json::to_string(action).unwrap_or_default();
        for token in tokenize(&json) {
            if let TokenKind::Env(name) = token.kind
                && !self.secret_names.iter().any(|known| known == name)
            {
                return Err(format!(
                    "`{{env:{name}}}` is not a secret this project declares (in the scenario's steps or its .env)"
                ));
            }
        }
        Ok(())
    }
}

pub struct Gateway<P: LivePage> {
    page: P,
    ledger: Ledger,
    base_url: String,
    values: Arc<Values>,
    masker: Masker,
    /// `masker` plus each Outline and table value as its token (`<customer>`,
    /// `<table:Customer>`): what the model reads holds tokens, never those values.
    shown: Masker,
    action_timeout: Duration,
    navigation_timeout: Duration,
    entries: Vec<Entry>,
    finish: Option<Finish>,
    /// The target of the action being built is fragile.
    pending_fragile: bool,
    /// A repair: nothing may change the page before a step is announced.
    announce_first: bool,
    account: Account,
    /// Set when a person may take the browser over (a headed run): every call that touches
    /// the page takes a ticket of it first.
    lease: Option<SharedLease>,
    /// The ticket of the call under way.
    ticket: Option<Ticket>,
    /// The request tools, beside the page, in a project with an API.
    requests: Option<crate::record::api::gateway::Requests>,
}

/// What the agent said about its work when it ended the session (repairs use it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Account {
    pub narrative: String,
    pub change: Option<tools::ChangeKind>,
    /// (0-based step, new text), as the agent asked.
    pub rewrites: Vec<(usize, String)>,
}

impl Account {
    /// What `saffron_done` said, masked.
    pub(crate) fn of(done: &tools::DoneInput, masker: &Masker) -> Account {
        Account {
            narrative: masker.mask(&done.narrative),
            change: done.change,
            rewrites: done
                .rewrites
                .iter()
                .map(|rewrite| (rewrite.step.wrapping_sub(1), masker.mask(&rewrite.text)))
                .collect(),
        }
    }
}

impl<P: LivePage> Gateway<P> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        page: P,
        steps: Vec<StepSpec>,
        segment: Range<usize>,
        base_url: String,
        values: Arc<Values>,
        masker: Masker,
        action_timeout: Duration,
        navigation_timeout: Duration,
    ) -> Gateway<P> {
        let ledger = Ledger::new(steps, segment, &values);
        let shown = shown_masker(&masker, &values);
        Gateway {
            page,
            ledger,
            base_url,
            values,
            masker,
            shown,
            action_timeout,
            navigation_timeout,
            entries: Vec::new(),
            finish: None,
            pending_fragile: false,
            announce_first: false,
            account: Account::default(),
            lease: None,
            ticket: None,
            requests: None,
        }
    }

    /// A gateway that also sends requests beside the page, with its cookies.
    pub(crate) fn with_requests(mut self, requests: Option<crate::record::api::gateway::Requests>) -> Gateway<P> {
        self.requests = requests;
        self
    }

    /// A request tool's call, on the requests beside the page.
    async fn request_tool(&mut self, name: &str, input: &Value) -> Result<String, String> {
        use crate::record::api::tools as api_tools;
        let Some(requests) = self.requests.as_mut() else {
            return Err(format!(
                "there is no tool `{name}` here: this project configures no API ([api.services] in saffron.toml)"
            ));
        };
        let mut books = crate::record::api::gateway::Books {
            ledger: &mut self.ledger,
            entries: &mut self.entries,
            masker: &mut self.masker,
            shown: &mut self.shown,
        };
        match name {
            api_tools::REQUEST => {
                let input = tools::parse(name, input)?;
                let mut jar = PageJar(&mut self.page);
                requests.request(&mut books, Some(&mut jar), input).await
            }
            api_tools::EXTRACT => requests.extract(&mut books, tools::parse(name, input)?),
            _ => requests.assert(&mut books, tools::parse(name, input)?).await,
        }
    }

    /// A gateway whose page a person may take over, held under `lease` (see
    /// [`super::lease`]).
    pub(crate) fn with_lease(mut self, lease: Option<SharedLease>) -> Gateway<P> {
        self.lease = lease;
        self
    }

    /// A repair on a page replay stopped on: until the failed step is announced, the agent
    /// may look (snapshots, checks) but not act. What it would do before that is diagnosis,
    /// and a state-changing diagnosis would land on the page the repair starts from.
    pub fn announcing_first(mut self) -> Gateway<P> {
        self.announce_first = true;
        self
    }

    pub fn account(&self) -> &Account {
        &self.account
    }

    pub fn finish(&self) -> Option<&Finish> {
        self.finish.as_ref()
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The masker with every secret substituted so far.
    pub fn masker(&self) -> &Masker {
        &self.masker
    }

    pub fn into_page(self) -> P {
        self.page
    }

    /// The page as the agent reads it, masked.
    pub async fn snapshot_text(&mut self) -> Result<String, PageError> {
        Ok(self.page.snapshot(&self.shown).await?.text)
    }

    async fn call_inner(&mut self, name: &str, input: &Value) -> Result<String, String> {
        match name {
            tools::SNAPSHOT => {
                tools::parse::<tools::NoInput>(name, input)?;
                self.snapshot_text().await.map_err(|error| self.page_error(error))
            }
            tools::STEP => {
                let input: tools::StepInput = tools::parse(name, input)?;
                self.announce(input.step)
            }
            tools::ASSERT => {
                let input: AssertInput = tools::parse(name, input)?;
                let action = self.assertion(&input).await?;
                self.run(action, true).await
            }
            tools::DONE => {
                let input: tools::DoneInput = tools::parse(name, input)?;
                self.account = Account::of(&input, &self.masker);
                self.done(input.success, &input.narrative)
            }
            // Reading a response is looking; sending a request is acting.
            crate::record::api::tools::EXTRACT | crate::record::api::tools::ASSERT_RESPONSE => {
                self.request_tool(name, input).await
            }
            _ if self.announce_first && self.ledger.current().is_none() => Err(format!(
                "announce step {} with saffron_step before you act: until then you may only look \
                 (browser_snapshot, saffron_assert), and nothing is performed",
                self.ledger.segment().start + 1
            )),
            crate::record::api::tools::REQUEST => self.request_tool(name, input).await,
            _ => {
                let action = self.action(name, input).await?;
                self.run(action, false).await
            }
        }
    }

    fn announce(&mut self, number: usize) -> Result<String, String> {
        let answer = self.ledger.announce(
            number,
            " It is a Then step: verify it with saffron_assert; do not change the page to make it pass.",
        )?;
        self.page.begin_step();
        Ok(answer)
    }

    fn done(&mut self, success: bool, narrative: &str) -> Result<String, String> {
        if success
            && let Some(refused) = self.requests.as_ref().and_then(|requests| requests.unexpected_errors(&self.entries))
        {
            return Err(refused);
        }
        let (answer, finish) = self.ledger.done(success, narrative, &self.masker);
        if finish.is_some() {
            self.finish = finish;
        }
        answer
    }

    /// The recording-format action of a browser tool call, tokens as the agent typed them.
    async fn action(&mut self, name: &str, input: &Value) -> Result<Action, String> {
        Ok(match name {
            tools::CLICK => {
                let input: tools::RefInput = tools::parse(name, input)?;
                Action::Click { target: self.target(&input.element).await?, timeout_ms: None }
            }
            tools::DOUBLE_CLICK => {
                let input: tools::RefInput = tools::parse(name, input)?;
                Action::DoubleClick { target: self.target(&input.element).await?, timeout_ms: None }
            }
            tools::HOVER => {
                let input: tools::RefInput = tools::parse(name, input)?;
                Action::Hover { target: self.target(&input.element).await?, timeout_ms: None }
            }
            tools::DRAG => {
                let input: tools::DragInput = tools::parse(name, input)?;
                let target = self.target(&input.element).await?;
                Action::Drag { target, to: self.target(&input.to).await?, timeout_ms: None }
            }
            tools::CHECK => {
                let input: tools::RefInput = tools::parse(name, input)?;
                Action::Check { target: self.target(&input.element).await?, timeout_ms: None }
            }
            tools::UNCHECK => {
                let input: tools::RefInput = tools::parse(name, input)?;
                Action::Uncheck { target: self.target(&input.element).await?, timeout_ms: None }
            }
            tools::FILL => {
                let input: tools::FillInput = tools::parse(name, input)?;
                Action::Fill { target: self.target(&input.element).await?, value: input.value, timeout_ms: None }
            }
            tools::TYPE => {
                let input: tools::TypeInput = tools::parse(name, input)?;
                if input.text.is_empty() {
                    return Err("`text` is empty: to clear a field, fill it with \"\"".into());
                }
                Action::TypeText { target: self.target(&input.element).await?, text: input.text, timeout_ms: None }
            }
            tools::UPLOAD => {
                let input: tools::UploadInput = tools::parse(name, input)?;
                self.check_uploads(&input.files)?;
                Action::Upload { target: self.target(&input.element).await?, files: input.files, timeout_ms: None }
            }
            tools::SELECT => {
                let input: tools::SelectInput = tools::parse(name, input)?;
                Action::Select {
                    target: self.target(&input.element).await?,
                    values: vec![input.option],
                    timeout_ms: None,
                }
            }
            tools::PRESS => {
                let input: tools::PressInput = tools::parse(name, input)?;
                let target = match &input.element {
                    Some(element) => Some(self.target(element).await?),
                    None => None,
                };
                Action::Press { target, key: input.key, timeout_ms: None }
            }
            tools::GOTO => {
                let input: tools::GotoInput = tools::parse(name, input)?;
                let url = saffron_browser::relativize_url(&self.base_url, input.url.trim());
                Action::Goto { url, timeout_ms: None }
            }
            tools::SWITCH_TAB => {
                let input: tools::SwitchTabInput = tools::parse(name, input)?;
                if input.index.is_some() == input.url_pattern.is_some() {
                    return Err("give either `index` or `url_pattern`".into());
                }
                Action::SwitchTab { index: input.index, url_pattern: input.url_pattern, timeout_ms: None }
            }
            tools::DIALOG => {
                let input: tools::DialogInput = tools::parse(name, input)?;
                Action::Dialog { accept: input.accept, prompt_text: input.text, timeout_ms: None }
            }
            tools::WAIT_RESPONSE => {
                let input: tools::WaitResponseInput = tools::parse(name, input)?;
                Action::WaitForResponse {
                    response: ResponseMatcher {
                        url_regex: input.url_pattern,
                        method: input.method.map(|method| method.to_ascii_uppercase()),
                        status: input.status,
                        body_regex: input.body_pattern,
                    },
                    timeout_ms: None,
                }
            }
            other => {
                let names: Vec<String> = tools::specs().into_iter().map(|spec| spec.name).collect();
                return Err(format!("there is no tool `{other}`; the tools are: {}", names.join(", ")));
            }
        })
    }

    async fn assertion(&mut self, input: &AssertInput) -> Result<Action, String> {
        let needs = |field: Option<&String>, what: &str| {
            field.cloned().ok_or_else(|| format!("check `{:?}` needs `{what}`", input.check).to_lowercase())
        };
        Ok(match input.check {
            CheckKind::Visible => Action::ExpectVisible { target: self.check_target(input).await?, timeout_ms: None },
            CheckKind::Hidden => Action::ExpectHidden { target: self.check_target(input).await?, timeout_ms: None },
            CheckKind::Text => {
                if input.text.is_none() && input.pattern.is_none() {
                    return Err("check `text` needs `text` or `pattern`".into());
                }
                Action::ExpectText {
                    target: self.check_target(input).await?,
                    text: input.text.clone().filter(|_| input.pattern.is_none()),
                    text_regex: input.pattern.clone(),
                    timeout_ms: None,
                }
            }
            CheckKind::Value => Action::ExpectValue {
                target: self.check_target(input).await?,
                value: needs(input.value.as_ref().or(input.text.as_ref()), "value")?,
                timeout_ms: None,
            },
            CheckKind::Url => {
                let url = input.url.as_ref().map(|url| saffron_browser::relativize_url(&self.base_url, url.trim()));
                if url.is_none() && input.pattern.is_none() {
                    return Err("check `url` needs `url` or `pattern`".into());
                }
                Action::ExpectUrl {
                    url: url.filter(|_| input.pattern.is_none()),
                    url_regex: input.pattern.clone(),
                    timeout_ms: None,
                }
            }
            CheckKind::State => {
                let state = match input.state.ok_or("check `state` needs `state`")? {
                    StateInput::Checked => ElementState::Checked,
                    StateInput::Unchecked => ElementState::Unchecked,
                    StateInput::Enabled => ElementState::Enabled,
                    StateInput::Disabled => ElementState::Disabled,
                    StateInput::Focused => ElementState::Focused,
                };
                Action::ExpectState { target: self.check_target(input).await?, state, timeout_ms: None }
            }
            CheckKind::Count => Action::ExpectCount {
                target: saffron_recording::Target {
                    role: Some(needs(input.role.as_ref(), "role")?),
                    name: input.name.clone(),
                    ..saffron_recording::Target::default()
                },
                count: input.count.ok_or("check `count` needs `count`")?,
                timeout_ms: None,
            },
            CheckKind::Response => Action::ExpectResponse {
                response: ResponseMatcher {
                    url_regex: needs(input.pattern.as_ref().or(input.url.as_ref()), "pattern")?,
                    method: input.method.as_ref().map(|method| method.to_ascii_uppercase()),
                    status: input.status.clone(),
                    body_regex: None,
                },
                timeout_ms: None,
            },
            CheckKind::Download => Action::ExpectDownload {
                file_name: input.text.clone().filter(|_| input.pattern.is_none()),
                file_name_regex: input.pattern.clone(),
                contains: input.value.clone(),
                timeout_ms: None,
            },
            CheckKind::NoConsoleErrors => Action::ExpectNoConsoleErrors { timeout_ms: None },
        })
    }

    /// The element a check is about: a ref, or a role and name (which may hold tokens such as
    /// `<customer>`, for an element whose name is a value the agent does not see).
    async fn check_target(&mut self, input: &AssertInput) -> Result<saffron_recording::Target, String> {
        match (&input.element, &input.role) {
            (Some(element), _) => self.target(element).await,
            (None, Some(role)) => Ok(saffron_recording::Target {
                role: Some(role.clone()),
                name: input.name.clone(),
                ..saffron_recording::Target::default()
            }),
            // Text the page shows outside any element with a ref ("2 items left"): the element
            // that shows exactly this text, found by the text tier as replay will find it.
            (None, None) if matches!(input.check, CheckKind::Visible | CheckKind::Text) && input.text.is_some() => {
                Ok(saffron_recording::Target {
                    text: input.text.clone(),
                    tier: Some(saffron_recording::Tier::Text),
                    ..saffron_recording::Target::default()
                })
            }
            (None, None) => Err(format!(
                "check `{}` needs `ref` (or `role` and `name`; a visible or text check may give only `text`)",
                check_name(input.check)
            )),
        }
    }

    async fn target(&mut self, element: &str) -> Result<saffron_recording::Target, String> {
        let prefer = self.current_step_values();
        match self.page.target_for_ref(element, &prefer).await {
            Ok(found) => {
                if found.fragile {
                    self.pending_fragile = true;
                }
                Ok(found.target)
            }
            Err(error) => Err(self.page_error(error)),
        }
    }

    /// The values the step being worked on names (row values filled in): a row the agent
    /// targets is found by them.
    fn current_step_values(&self) -> Vec<String> {
        let Some(index) = self.ledger.current() else { return Vec::new() };
        let step = self.ledger.step(index);
        // An Outline value would end up in a pattern, which the row tokens leave alone: the
        // recording would then only serve this row.
        let params = &self.values.params;
        step_values(&step.text, self.values.table(index), params)
            .into_iter()
            .filter(|value| !params.iter().any(|(_, row_value)| row_value == value))
            .collect()
    }

    /// Turns a page error into the tool error; a lost browser also ends the session.
    fn page_error(&mut self, error: PageError) -> String {
        match error {
            PageError::Refused(message) => message,
            PageError::BrowserLost(cause) => {
                self.finish = Some(Finish::BrowserLost(cause.clone()));
                format!("the browser went away: {cause}")
            }
        }
    }

    /// The agent uploads only the project's fixtures, named as it was told them.
    fn check_uploads(&self, files: &[String]) -> Result<(), String> {
        let allowed = &self.values.upload_files;
        let Some(other) = files.iter().find(|file| !allowed.contains(file)) else { return Ok(()) };
        if allowed.is_empty() {
            return Err(format!(
                "{other:?} cannot be uploaded: this project has no files in a folder named fixtures, and only those \
                 may be uploaded"
            ));
        }
        Err(format!("{other:?} is not one of the files you may upload: {}", allowed.join(", ")))
    }

    /// Fills the tokens in, performs, records, answers with the new page.
    async fn run(&mut self, action: Action, is_check: bool) -> Result<String, String> {
        let fragile = std::mem::take(&mut self.pending_fragile);
        self.values.check_secrets(&action)?;
        let table = self.ledger.current().and_then(|index| self.values.table(index));
        let (resolved, secrets) = resolve_action(&action, &self.values.execution(&[]), table)
            .map_err(|error| format!("cannot fill in the values of `{action}`: {error}"))?;
        self.masker.add_all(&secrets);
        self.shown.add_all(&secrets);
        // A Then step's check must be about the step: it holds one of the step's values.
        let then_values: Vec<String> = match self.ledger.current() {
            Some(step) if is_check => {
                let all = self.ledger.then_values(step);
                if !all.is_empty() && !all.iter().any(|value| check_holds(&resolved, value)) {
                    return Err(format!(
                        "{} (an expected text, value, count, URL, pattern or response that holds them), not by what \
                         is merely on the page; nothing was checked or recorded",
                        self.ledger.not_about(step)
                    ));
                }
                all.iter().filter(|value| check_holds(&resolved, value)).cloned().collect()
            }
            _ => Vec::new(),
        };
        let timeout = if is_check {
            CHECK_TIMEOUT
        } else if matches!(action, Action::Goto { .. }) {
            self.navigation_timeout
        } else {
            self.action_timeout
        };
        // Every comparison the agent makes is judged on the page as it sees it, masked: no
        // answer may depend on a secret's value.
        let guard = saffron_browser::Guard {
            secret_origins: (!secrets.is_empty()).then(|| self.values.secret_origins.clone()),
            judge_masked: Some(self.masker.clone()),
            fence: self.fence(),
            inside: None,
        };
        let performed = self.page.perform(&resolved, timeout, guard.clone()).await;
        // A person took over while it was under way: stopped before any more input, and
        // whatever of it was done is not recorded.
        if self.overtaken() {
            return Err(overtaken_notice());
        }
        let notes = match performed {
            Ok(notes) => notes,
            Err(PageError::Refused(message)) if is_check => {
                return Err(format!("the check does not hold, so it is not recorded: {message}"));
            }
            Err(error) => return Err(self.page_error(error)),
        };
        // A pattern can hold a value and match without it (`/|3`, `(3)?`): a value counts only if
        // the check stops holding once the value in its patterns can match nothing.
        let mut then_values = then_values;
        for value in then_values.clone() {
            let Some(without) = without_value(&resolved, &value) else { continue };
            match self.page.perform(&without, COUNTERFACTUAL_TIMEOUT, guard.clone()).await {
                Ok(_) => then_values.retain(|kept| *kept != value),
                Err(PageError::Refused(_)) => {}
                Err(error) => return Err(self.page_error(error)),
            }
        }
        if let Some(step) = self.ledger.current()
            && is_check
            && then_values.is_empty()
            && !self.ledger.then_values(step).is_empty()
        {
            return Err(format!(
                "this check holds whether or not the page shows the values of step {} \"{}\" (its pattern matches \
                 without them), so it says nothing about the step; nothing was recorded",
                step + 1,
                self.ledger.step(step).text
            ));
        }
        if is_check {
            self.ledger.credit(&then_values);
        }
        let fragile = fragile.then(|| match self.ledger.current() {
            Some(step) => format!("step {} `{action}`", step + 1),
            None => format!("`{action}`"),
        });
        let said = match self.ledger.current() {
            Some(step) if is_check => format!("The check holds; recorded under step {}: {action}.", step + 1),
            Some(step) => format!("Performed and recorded under step {}: {action}.", step + 1),
            None if is_check => format!("The check holds; not recorded (no step announced yet): {action}."),
            None => format!("Performed, not recorded (no step announced yet): {action}."),
        };
        let action = with_row_tokens(action, &self.values.params);
        if self.overtaken() {
            return Err(overtaken_notice());
        }
        self.entries.push(Entry { step: self.ledger.current(), action, fragile });
        let mut answer = said;
        for note in notes {
            answer.push_str(&format!("\nNote: {note}"));
        }
        // A check leaves the page as it was: the last snapshot still holds, and a new one would
        // cost the agent tokens and the recording time.
        if !is_check {
            match self.snapshot_text().await {
                Ok(snapshot) => answer.push_str(&format!("\n\n{snapshot}")),
                Err(error) => answer.push_str(&format!("\n\n(no snapshot: {})", self.page_error(error))),
            }
        }
        Ok(answer)
    }

    /// Takes the call's ticket when a person may take the browser over: waits while they hold
    /// it, and answers instead of performing when the agent must first hear of a give-back
    /// (with the page as the person left it) or the person keeps the browser. Announcing a
    /// step touches no page and needs no ticket.
    async fn admit(&mut self, name: &str) -> Result<(), Result<String, String>> {
        let Some(lease) = self.lease.clone() else { return Ok(()) };
        if name == tools::STEP {
            return Ok(());
        }
        match lease.acquire(HOLD_WAIT).await {
            Ok(ticket) => {
                self.ticket = Some(ticket);
                Ok(())
            }
            Err(Refusal::HandedBack(handback)) => {
                let (url, page) = match self.snapshot_text().await {
                    Ok(snapshot) => (snapshot_url(&snapshot), snapshot),
                    Err(error) => (None, format!("(no snapshot: {})", self.page_error(error))),
                };
                let notice = handback_notice(&handback, url.as_deref());
                Err(match name {
                    tools::SNAPSHOT => Ok(format!("{notice}\n\n{page}")),
                    _ => Err(format!("Nothing was performed. {notice}\n\n{page}")),
                })
            }
            Err(Refusal::PersonHolds(since)) => Err(Err(format!(
                "A person has had control of the browser since {} UTC and has not given it back yet; nothing was \
                 performed. Call browser_snapshot to wait for them again.",
                clock(since)
            ))),
            Err(Refusal::Stale) => Err(Err(overtaken_notice())),
        }
    }

    /// The call under way is over.
    fn release(&mut self) {
        if let (Some(lease), Some(ticket)) = (&self.lease, self.ticket.take()) {
            lease.end(ticket);
        }
    }

    /// The fence of the call under way's actions, when a person may take over.
    fn fence(&self) -> Option<saffron_browser::Fence> {
        Some(self.lease.as_ref()?.fence(self.ticket?))
    }

    /// Whether a person took over since the call under way began.
    fn overtaken(&self) -> bool {
        match (&self.lease, self.ticket) {
            (Some(lease), Some(ticket)) => !lease.admits(ticket),
            _ => false,
        }
    }
}

/// The page's cookies, for a request sent beside it.
struct PageJar<'a, P: LivePage>(&'a mut P);

impl<P: LivePage> crate::record::api::gateway::CookieJar for PageJar<'_, P> {
    fn cookie_header<'a>(&'a mut self, url: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move { self.0.cookie_header(url).await.map_err(page_error_text) })
    }

    fn store<'a>(&'a mut self, url: &'a str, set_cookies: Vec<String>) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move { self.0.store_cookies(url, set_cookies).await.map_err(page_error_text) })
    }
}

fn page_error_text(error: PageError) -> String {
    match error {
        PageError::Refused(reason) | PageError::BrowserLost(reason) => reason,
    }
}

impl<P: LivePage> ToolGateway for Gateway<P> {
    fn tools(&self) -> Vec<ToolSpec> {
        let mut specs = tools::specs();
        if self.requests.is_some() {
            // Beside the page's own check, before the end.
            let at = specs.len().saturating_sub(1);
            specs.splice(at..at, crate::record::api::tools::beside_page_specs());
        }
        specs
    }

    fn call<'a>(&'a mut self, name: &'a str, input: &'a Value) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if self.finish.is_some() {
                return ToolOutput::error("the session is over");
            }
            let answer = match self.admit(name).await {
                Ok(()) => {
                    let answer = self.call_inner(name, input).await;
                    self.release();
                    answer
                }
                Err(answer) => answer,
            };
            match answer {
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
         perform it, verify each Then step with saffron_assert, and end with saffron_done."
            .into()
    }
}

/// The address a snapshot's header gives (`url: /signup`).
fn snapshot_url(snapshot: &str) -> Option<String> {
    snapshot.lines().find_map(|line| line.strip_prefix("url: ")).map(str::to_owned)
}

/// How long the check that a pattern needs its value is given: a check that holds answers at
/// once, and one that does not need not be waited for.
const COUNTERFACTUAL_TIMEOUT: Duration = Duration::from_millis(250);

/// The check with `value` (as is, or escaped) in its patterns replaced by a pattern that
/// matches nothing; `None` when no pattern holds it.
fn without_value(check: &Action, value: &str) -> Option<Action> {
    const NOTHING: &str = r"[^\s\S]";
    let mut changed = check.clone();
    let mut any = false;
    let escaped = saffron_index::repair_rules::regex_escape(value);
    for operand in changed.operands_mut() {
        if operand.kind != saffron_recording::OperandKind::Pattern {
            continue;
        }
        for spelling in [escaped.as_str(), value] {
            if operand.value.contains(spelling) {
                *operand.value = operand.value.replace(spelling, NOTHING);
                any = true;
            }
        }
    }
    // A value the check holds outside its patterns too (an exact text) needs no test.
    let elsewhere = saffron_index::repair_rules::check_holds(&without_patterns(check), value);
    (any && !elsewhere).then_some(changed)
}

/// The check with its patterns emptied, to see whether another of its values holds `value`.
fn without_patterns(check: &Action) -> Action {
    let mut plain = check.clone();
    for operand in plain.operands_mut() {
        if operand.kind == saffron_recording::OperandKind::Pattern {
            operand.value.clear();
        }
    }
    plain
}

/// The masker of what the model reads: the secrets, then every Outline value as `<name>` and
/// every value of a step's two-column table as `<table:key>`, as the model was told them (values
/// shorter than [`Masker::MIN_LEN`] stay: a `3` is in too many places).
pub(crate) fn shown_masker(masker: &Masker, values: &Values) -> Masker {
    let mut shown = masker.clone();
    for (name, value) in &values.params {
        shown.add_as(value, &format!("<{name}>"));
    }
    for table in values.tables.iter().flatten() {
        for row in table.iter().filter(|row| row.len() == 2) {
            shown.add_as(&row[1], &format!("<table:{}>", row[0]));
        }
    }
    shown
}

fn check_name(check: CheckKind) -> String {
    serde_json::to_value(check).ok().and_then(|value| value.as_str().map(str::to_owned)).unwrap_or_default()
}

/// The action with each Outline value that a locator took from the page written back as its
/// `<param>`: the recording serves every row, and another row's page shows another value.
/// Values shorter than three characters are left alone (a `1` is in too many places), and so
/// are patterns, where the value may be escaped.
pub fn with_row_tokens(action: Action, params: &[(String, String)]) -> Action {
    if params.iter().all(|(_, value)| value.chars().count() < 3) {
        return action;
    }
    let Ok(mut json) = serde_json::to_value(&action) else { return action };
    replace_values(&mut json, None, params);
    serde_json::from_value(json).unwrap_or(action)
}

fn replace_values(value: &mut Value, key: Option<&str>, params: &[(String, String)]) {
    match value {
        Value::String(text) => {
            let vocabulary = matches!(key, Some("type" | "tier" | "kind"));
            let pattern = key.is_some_and(|key| key.ends_with("Regex") || key == "urlPattern");
            if vocabulary || pattern {
                return;
            }
            for (name, row_value) in params.iter().filter(|(_, value)| value.chars().count() >= 3) {
                if text.contains(row_value.as_str()) {
                    *text = text.replace(row_value.as_str(), &format!("<{name}>"));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| replace_values(item, key, params)),
        Value::Object(map) => map.iter_mut().for_each(|(name, item)| replace_values(item, Some(name), params)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use saffron_recording::{StepKind, Target};
    use serde_json::json;

    use super::super::page::{PageView, RefTarget};
    use super::*;

    const SECRET: &str = "hunter2-secret";

    /// A page that shows the secret in its text, has one element (`e1`), and refuses checks
    /// of the text "nope".
    struct FakePage {
        performed: Arc<Mutex<Vec<Action>>>,
    }

    impl LivePage for FakePage {
        fn snapshot(&mut self, masker: &Masker) -> BoxFuture<'_, Result<PageView, PageError>> {
            // Masked at the source, as a live page does.
            let text = masker.mask(&format!("textbox \"Password\" [ref=e1]: {SECRET}"));
            Box::pin(async move { Ok(PageView { text }) })
        }

        fn target_for_ref<'a>(
            &'a mut self,
            element: &'a str,
            _prefer: &'a [String],
        ) -> BoxFuture<'a, Result<RefTarget, PageError>> {
            Box::pin(async move {
                match element {
                    "e1" => Ok(RefTarget { target: Target::role("textbox", "Password"), fragile: false }),
                    "e2" => Ok(RefTarget { target: Target::role("region", "Done"), fragile: false }),
                    other => Err(PageError::Refused(format!("there is no element {other}"))),
                }
            })
        }

        fn perform<'a>(
            &'a mut self,
            action: &'a Action,
            _: Duration,
            _: saffron_browser::Guard,
        ) -> BoxFuture<'a, Result<Vec<String>, PageError>> {
            Box::pin(async move {
                if matches!(action, Action::ExpectText { text: Some(text), .. } if text == "nope") {
                    return Err(PageError::Refused(format!("expected text \"nope\", found \"{SECRET}\"")));
                }
                self.performed.lock().expect("lock").push(action.clone());
                Ok(Vec::new())
            })
        }

        fn begin_step(&mut self) {}
    }

    fn gateway() -> (Gateway<FakePage>, Arc<Mutex<Vec<Action>>>) {
        gateway_with(|page| page)
    }

    /// [`gateway`] on the page `wrap` makes of the fake one.
    fn gateway_with<P: LivePage>(wrap: impl FnOnce(FakePage) -> P) -> (Gateway<P>, Arc<Mutex<Vec<Action>>>) {
        let performed = Arc::new(Mutex::new(Vec::new()));
        let env: EnvLookup = Arc::new(|name: &str| (name == "PASSWORD").then(|| SECRET.to_string()));
        let values = Values {
            params: Vec::new(),
            unique_seed: "seed".into(),
            today: Date::today_utc(),
            env,
            tables: vec![None, None],
            secret_names: vec!["PASSWORD".into()],
            secret_origins: saffron_browser::SecretOrigins::new("http://127.0.0.1:1", &[]).expect("an origin"),
            root: project_root(),
            upload_files: vec!["fixtures/receipt.txt".into()],
        };
        let mut masker = Masker::new();
        masker.add(&saffron_recording::Secret { name: "PASSWORD".into(), value: SECRET.into() });
        let steps = vec![StepSpec::new(StepKind::Action, "I sign in"), StepSpec::new(StepKind::Outcome, "I see it")];
        let page = wrap(FakePage { performed: Arc::clone(&performed) });
        let gateway = Gateway::new(
            page,
            steps,
            0..2,
            "http://127.0.0.1:1".into(),
            Arc::new(values),
            masker,
            Duration::from_secs(1),
            Duration::from_secs(1),
        );
        (gateway, performed)
    }

    /// A project with one fixture and a `.env`, made once for the test binary.
    fn project_root() -> std::path::PathBuf {
        static ROOT: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
        let root = ROOT.get_or_init(|| {
            let root = tempfile::tempdir().expect("a folder");
            std::fs::create_dir(root.path().join("fixtures")).expect("made");
            std::fs::write(root.path().join("fixtures/receipt.txt"), "paid").expect("written");
            std::fs::write(root.path().join(".env"), format!("PASSWORD={SECRET}")).expect("written");
            root
        });
        root.path().to_path_buf()
    }

    fn call(gateway: &mut Gateway<FakePage>, name: &str, input: serde_json::Value) -> ToolOutput {
        futures::executor::block_on(ToolGateway::call(gateway, name, &input))
    }

    #[test]
    fn a_secret_is_typed_as_a_token_performed_as_its_value_recorded_as_the_token_and_never_shown() {
        let (mut gateway, performed) = gateway();
        let snapshot = call(&mut gateway, tools::SNAPSHOT, json!({}));
        assert!(!snapshot.content.contains(SECRET) && snapshot.content.contains("{env:PASSWORD}"), "{snapshot:?}");
        assert!(!call(&mut gateway, tools::STEP, json!({ "step": 1 })).is_error);
        let filled = call(&mut gateway, tools::FILL, json!({ "ref": "e1", "value": "{env:PASSWORD}" }));
        assert!(!filled.is_error && !filled.content.contains(SECRET), "{filled:?}");
        assert!(matches!(&performed.lock().expect("lock")[0], Action::Fill { value, .. } if value == SECRET));
        assert!(matches!(&gateway.entries()[0].action, Action::Fill { value, .. } if value == "{env:PASSWORD}"));
        // A failed check quotes the page, masked too.
        let refused = call(&mut gateway, tools::ASSERT, json!({ "check": "text", "ref": "e1", "text": "nope" }));
        assert!(refused.is_error && !refused.content.contains(SECRET), "{refused:?}");
        // The environment is not the agent's to read.
        let home = call(&mut gateway, tools::FILL, json!({ "ref": "e1", "value": "{env:HOME}" }));
        assert!(home.is_error && home.content.contains("not a secret this project declares"), "{home:?}");
    }

    #[test]
    fn done_is_refused_once_while_a_then_is_unverified_then_ends_unverified() {
        let (mut gateway, _) = gateway();
        assert!(call(&mut gateway, "run_shell", json!({ "command": "ls" })).is_error);
        assert!(call(&mut gateway, tools::CLICK, json!({ "ref": "e7" })).is_error);
        assert!(!gateway.is_done(), "a refusal does not end the session");
        call(&mut gateway, tools::STEP, json!({ "step": 2 }));
        let first = call(&mut gateway, tools::DONE, json!({ "success": true, "narrative": "ok" }));
        assert!(first.is_error && first.content.contains("2 \"I see it\""), "{first:?}");
        assert!(!gateway.is_done());
        let second = call(&mut gateway, tools::DONE, json!({ "success": true, "narrative": "ok" }));
        assert!(!second.is_error);
        assert_eq!(gateway.finish(), Some(&Finish::Unverified(vec![1])));
    }

    #[test]
    fn the_agent_uploads_only_listed_fixtures_performed_from_the_project_and_recorded_as_written() {
        let (mut gateway, performed) = gateway();
        call(&mut gateway, tools::STEP, json!({ "step": 1 }));
        for other in [".env", "../etc/passwd", "/etc/passwd", "fixtures/other.txt"] {
            let refused = call(&mut gateway, tools::UPLOAD, json!({ "ref": "e1", "files": [other] }));
            assert!(refused.is_error, "{other}: {refused:?}");
            assert!(
                refused.content.contains("is not one of the files you may upload: fixtures/receipt.txt"),
                "{refused:?}"
            );
        }
        assert!(performed.lock().expect("lock").is_empty(), "nothing refused was performed");

        let uploaded = call(&mut gateway, tools::UPLOAD, json!({ "ref": "e1", "files": ["fixtures/receipt.txt"] }));
        assert!(!uploaded.is_error, "{uploaded:?}");
        let sent = project_root().canonicalize().expect("the project").join("fixtures/receipt.txt");
        assert!(
            matches!(&performed.lock().expect("lock")[0], Action::Upload { files, .. } if files == &[sent.to_string_lossy()]),
            "the browser is given the file's absolute path"
        );
        assert!(
            matches!(&gateway.entries()[0].action, Action::Upload { files, .. } if files == &["fixtures/receipt.txt"]),
            "the recording keeps the path as written"
        );
        assert!(tools::specs().iter().any(|spec| spec.name == tools::UPLOAD));
    }

    #[test]
    fn a_double_click_is_performed_and_recorded_as_one() {
        let (mut gateway, performed) = gateway();
        call(&mut gateway, tools::STEP, json!({ "step": 1 }));
        let clicked = call(&mut gateway, tools::DOUBLE_CLICK, json!({ "ref": "e1" }));
        assert!(!clicked.is_error, "{clicked:?}");
        assert!(matches!(&performed.lock().expect("lock")[0], Action::DoubleClick { .. }));
        assert!(matches!(&gateway.entries()[0].action, Action::DoubleClick { .. }));
        assert!(tools::specs().iter().any(|spec| spec.name == tools::DOUBLE_CLICK));
    }

    #[test]
    fn typing_is_recorded_as_typed_with_its_secret_as_a_token() {
        let (mut gateway, performed) = gateway();
        call(&mut gateway, tools::STEP, json!({ "step": 1 }));
        let empty = call(&mut gateway, tools::TYPE, json!({ "ref": "e1", "text": "" }));
        assert!(empty.is_error && empty.content.contains("fill it with"), "{empty:?}");
        let typed = call(&mut gateway, tools::TYPE, json!({ "ref": "e1", "text": "{env:PASSWORD}" }));
        assert!(!typed.is_error, "{typed:?}");
        let typed_secret =
            Action::TypeText { target: Target::role("textbox", "Password"), text: SECRET.into(), timeout_ms: None };
        assert_eq!(performed.lock().expect("lock").as_slice(), std::slice::from_ref(&typed_secret));
        assert!(
            matches!(&gateway.entries()[0].action, Action::TypeText { text, .. } if text == "{env:PASSWORD}"),
            "the recording keeps the token, never the value: {:?}",
            gateway.entries()[0].action
        );
        assert!(tools::specs().iter().any(|spec| spec.name == tools::TYPE));
    }

    #[test]
    fn a_drag_needs_both_refs_and_is_recorded_with_its_drop_target() {
        let (mut gateway, performed) = gateway();
        call(&mut gateway, tools::STEP, json!({ "step": 1 }));
        let refused = call(&mut gateway, tools::DRAG, json!({ "ref": "e1", "to": "e9" }));
        assert!(refused.is_error && refused.content.contains("there is no element e9"), "{refused:?}");
        assert!(performed.lock().expect("lock").is_empty(), "nothing refused was performed");
        let dragged = call(&mut gateway, tools::DRAG, json!({ "ref": "e1", "to": "e2" }));
        assert!(!dragged.is_error, "{dragged:?}");
        let expected = Action::Drag {
            target: Target::role("textbox", "Password"),
            to: Target::role("region", "Done"),
            timeout_ms: None,
        };
        assert_eq!(performed.lock().expect("lock").as_slice(), std::slice::from_ref(&expected));
        assert_eq!(gateway.entries()[0].action, expected);
        assert!(tools::specs().iter().any(|spec| spec.name == tools::DRAG));
    }

    #[test]
    fn a_verified_then_lets_done_succeed_and_actions_before_a_step_are_diagnosis() {
        let (mut gateway, _) = gateway();
        call(&mut gateway, tools::CLICK, json!({ "ref": "e1" }));
        call(&mut gateway, tools::STEP, json!({ "step": 2 }));
        assert!(!call(&mut gateway, tools::ASSERT, json!({ "check": "visible", "ref": "e1" })).is_error);
        assert!(!call(&mut gateway, tools::DONE, json!({ "success": true, "narrative": "ok" })).is_error);
        assert_eq!(gateway.finish(), Some(&Finish::Success));
        assert_eq!(gateway.entries()[0].step, None);
        assert_eq!(gateway.entries()[1].step, Some(1));
    }

    #[test]
    fn text_outside_any_element_with_a_ref_is_checked_by_its_text() {
        let (mut gateway, performed) = gateway();
        call(&mut gateway, tools::STEP, json!({ "step": 2 }));
        let checked = call(&mut gateway, tools::ASSERT, json!({ "check": "text", "text": "2 items left" }));
        assert!(!checked.is_error, "{checked:?}");
        let expected = Target {
            text: Some("2 items left".into()),
            tier: Some(saffron_recording::Tier::Text),
            ..Target::default()
        };
        assert!(
            matches!(&performed.lock().expect("lock")[0], Action::ExpectText { target, .. } if *target == expected),
            "{:?}",
            performed.lock().expect("lock")
        );
        let no_target = call(&mut gateway, tools::ASSERT, json!({ "check": "value", "value": "x" }));
        assert!(no_target.is_error && no_target.content.contains("needs `ref`"), "{no_target:?}");
    }

    /// A page a person takes over while the agent's action waits in it: the action dispatches
    /// only if its fence lets it, as the browser's perform does.
    struct OvertakenPage {
        inner: FakePage,
        lease: super::super::takeover::SharedLease,
        take_over_during_perform: bool,
    }

    impl LivePage for OvertakenPage {
        fn snapshot(&mut self, masker: &Masker) -> BoxFuture<'_, Result<PageView, PageError>> {
            let text = masker.mask(&format!("url: /signup\ntextbox \"Password\" [ref=e1]: {SECRET}"));
            Box::pin(async move { Ok(PageView { text }) })
        }

        fn target_for_ref<'a>(
            &'a mut self,
            element: &'a str,
            prefer: &'a [String],
        ) -> BoxFuture<'a, Result<RefTarget, PageError>> {
            self.inner.target_for_ref(element, prefer)
        }

        fn perform<'a>(
            &'a mut self,
            action: &'a Action,
            timeout: Duration,
            guard: saffron_browser::Guard,
        ) -> BoxFuture<'a, Result<Vec<String>, PageError>> {
            if std::mem::take(&mut self.take_over_during_perform) {
                self.lease.update(|lease| lease.take_over(std::time::SystemTime::now()));
            }
            if let Some(refusal) = guard.fence.as_ref().and_then(saffron_browser::Fence::refusal) {
                return Box::pin(async move { Err(PageError::Refused(refusal)) });
            }
            self.inner.perform(action, timeout, guard)
        }

        fn begin_step(&mut self) {}
    }

    #[test]
    fn an_action_a_person_overtakes_is_neither_performed_nor_recorded_and_the_agent_hears_of_the_give_back() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime");
        let takeover = crate::takeover::Takeover::new();
        let lease = takeover.register();
        let (gateway, performed) =
            gateway_with(|inner| OvertakenPage { inner, lease: lease.clone(), take_over_during_perform: true });
        let mut gateway = gateway.with_lease(Some(lease.clone()));
        let click = json!({ "ref": "e1" });
        runtime.block_on(async {
            assert!(!ToolGateway::call(&mut gateway, tools::STEP, &json!({ "step": 1 })).await.is_error);
            let overtaken = ToolGateway::call(&mut gateway, tools::CLICK, &click).await;
            assert!(overtaken.is_error && overtaken.content.contains("A person took over"), "{overtaken:?}");
            assert!(performed.lock().expect("lock").is_empty(), "nothing was dispatched");
            assert!(gateway.entries().is_empty(), "nothing was recorded");
            // While the person holds the browser, the agent's next call waits; it is answered
            // once they give it back, with what changed, and performs nothing.
            let person = async {
                takeover.wait_until(|leases| leases[0].waiting() == 1).await;
                assert!(performed.lock().expect("lock").is_empty(), "nothing while the person holds it");
                lease.update(|lease| lease.give_back(std::time::SystemTime::now()));
            };
            let (told, ()) = tokio::join!(ToolGateway::call(&mut gateway, tools::CLICK, &click), person);
            assert!(told.is_error, "{told:?}");
            assert!(told.content.starts_with("Nothing was performed. A person had control of the browser from "));
            assert!(told.content.contains("the page is now at /signup") && told.content.contains("[ref=e1]"));
            assert!(performed.lock().expect("lock").is_empty());
            // Told once: the agent acts again, and that is recorded.
            let clicked = ToolGateway::call(&mut gateway, tools::CLICK, &click).await;
            assert!(!clicked.is_error, "{clicked:?}");
        });
        assert_eq!(performed.lock().expect("lock").len(), 1);
        assert_eq!(gateway.entries().len(), 1);
        assert_eq!(lease.read(|lease| (lease.acting(), lease.waiting())), (0, 0));
    }

    #[test]
    fn outline_values_from_the_page_become_their_params() {
        let params = vec![("customer".to_string(), "Ada Lovelace".to_string()), ("qty".to_string(), "3".to_string())];
        let action = Action::ExpectText {
            target: Target { role: Some("cell".into()), name: Some("Ada Lovelace".into()), ..Target::default() },
            text: Some("Order for Ada Lovelace, 3 items".into()),
            text_regex: Some("Ada Lovelace".into()),
            timeout_ms: None,
        };
        let Action::ExpectText { target, text, text_regex, .. } = with_row_tokens(action, &params) else {
            panic!("same action type")
        };
        assert_eq!(target.name.as_deref(), Some("<customer>"));
        assert_eq!(text.as_deref(), Some("Order for <customer>, 3 items"), "short values are left alone");
        assert_eq!(text_regex.as_deref(), Some("Ada Lovelace"), "patterns are left alone");
    }
}
