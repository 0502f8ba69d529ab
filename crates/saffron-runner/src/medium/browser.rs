//! The browser medium: one shared Chromium, a fresh browser context per execution. An
//! execution performs actions through the context's waits and guards, clears the project's
//! interruptions, keeps the trace, and takes the screenshot, URL and console errors of a
//! failure.

use std::sync::Arc;

use saffron_browser::{
    ActionFailure, ActionTrail, Browser, Context, ContextOptions, FailureKind, Performed, SetCookie, Signal,
};
use saffron_recording::http::Header;
use saffron_recording::{Action, Masker};

use super::http::{HttpLive, HttpMedium};

use super::{ActionAt, Done, Evidence, Failure, FailureClass, Live, Medium, Outcome};
use crate::ActionResult;
use crate::orchestrator::run::{Refresh, RunOptions};
use crate::plan::Execution;
use crate::trace::{Trace, TraceKind, Tracer};

/// Chromium, when the run started one.
pub(crate) struct BrowserMedium {
    browser: Option<Browser>,
}

impl BrowserMedium {
    pub(crate) fn new(browser: Option<Browser>) -> BrowserMedium {
        BrowserMedium { browser }
    }
}

impl Medium for BrowserMedium {
    type Live = BrowserLive;

    async fn open(&self, execution: &Execution, options: &RunOptions, trace: TraceKind) -> Result<BrowserLive, String> {
        let Some(browser) = &self.browser else { return Err("no browser was started".into()) };
        let mut context = match browser.new_context(ContextOptions { base_url: options.base_url.clone() }).await {
            Ok(context) => context,
            Err(error) => return Err(browser.lost_connection().await.unwrap_or_else(|| error.to_string())),
        };
        let tracer = Tracer::start(options.trace, trace, execution, &options.base_url)
            .map(|tracer| tracer.in_browser(browser.config().engine.name()));
        // Only the committed recording is refreshed: a pending proposal is what a person reviews.
        let refresh = options.refresh_drift && execution.pending_proposal.is_none() && execution.committed.is_some();
        context.refresh_drift(refresh);
        let handlers = options.handlers.clone();
        if !handlers.is_empty() {
            context.watch_for(handlers.detectors());
        }
        // Where the page was before an accepted action matters only to a handler that returns
        // to the page: only then is it read.
        let returns = handlers.list.iter().any(|handler| handler.resume == saffron_recording::Resume::ReturnToPage);
        Ok(BrowserLive {
            context,
            tracer,
            handlers,
            returns,
            urls_before: Vec::new(),
            action_mark: 0,
            failed: None,
            http: None,
        })
    }

    async fn lost(&self) -> Option<String> {
        match &self.browser {
            Some(browser) => browser.lost_connection().await,
            None => Some("no browser was started".into()),
        }
    }
}

/// One browser context, for one execution.
pub(crate) struct BrowserLive {
    context: Context,
    tracer: Option<Tracer>,
    handlers: Arc<crate::interrupt::Handlers>,
    /// Whether a handler returns to the page it interrupted (see `urls_before`).
    returns: bool,
    /// Where the page was before each action of the step that may have been accepted: taking
    /// the step up after an interruption, an action that led elsewhere is not done again.
    urls_before: Vec<Option<String>>,
    /// Where the action being performed began, in the trace's time.
    action_mark: u64,
    /// The last failure and how the action went on its way, until its evidence is taken.
    failed: Option<(ActionFailure, ActionTrail)>,
    /// The requests the recording sends beside the page, with the context's cookies (opened at
    /// the first).
    http: Option<HttpLive>,
}

impl BrowserLive {
    /// The context, for a repair that continues on the page the replay stopped on.
    pub(crate) fn into_context(self) -> Context {
        self.context
    }

    /// A request or a check of its response, sent beside the page with the context's cookies;
    /// a cookie the response sets is the context's from then on, as if the page had sent it.
    /// No repair works on one: a failure is red, as a refused action is.
    async fn perform_http(&mut self, at: &ActionAt<'_>, masker: &mut Masker) -> Outcome<FailureKind> {
        let services = Arc::clone(&at.options.services);
        let http = self.http.get_or_insert_with(|| HttpMedium::new(services).open_beside_browser());
        // Where a request went and whose it was: the cookies its answer sets are kept for that URL.
        let mut sent = None;
        let with_cookies = match at.resolved {
            Action::Request { service, path, headers, session, .. } => {
                let url = match http.url_of(service, path) {
                    Ok(url) => url,
                    Err(reason) => return refused(reason),
                };
                let mut action = at.resolved.clone();
                let has_cookie = headers.iter().any(|header| header.name.eq_ignore_ascii_case("cookie"));
                match self.context.cookie_header(url.as_str()).await {
                    Ok(Some(cookie)) if !has_cookie => {
                        // The page's session is a credential: masked wherever it would show.
                        for pair in cookie.split("; ") {
                            if let Some((name, value)) = pair.split_once('=') {
                                masker.add_as(value, &format!("{{cookie:{name}}}"));
                            }
                        }
                        if let Action::Request { headers, .. } = &mut action {
                            headers.push(Header { name: "Cookie".into(), value: cookie });
                        }
                    }
                    Ok(_) => {}
                    Err(error) => return refused(format!("the context's cookies cannot be read: {error}")),
                }
                sent = Some((url, session.as_deref()));
                Some(action)
            }
            _ => None,
        };
        let resolved = with_cookies.as_ref().unwrap_or(at.resolved);
        let http_at = ActionAt { resolved, ..*at };
        let outcome = http.perform(&http_at, masker).await;
        if let Some((url, session)) = sent
            && let Some(response) = http.latest_response(session)
        {
            for (name, value) in &response.exchange.response_headers {
                if !name.eq_ignore_ascii_case("set-cookie") {
                    continue;
                }
                if let Some(cookie) = set_cookie(value)
                    && let Err(error) = self.context.store_cookie(url.as_str(), &cookie).await
                {
                    return refused(format!("a cookie the response set cannot be kept: {error}"));
                }
            }
        }
        match outcome {
            Outcome::Done(done) => Outcome::Done(done),
            Outcome::Cleared { name, next } => Outcome::Cleared { name, next },
            Outcome::Failed(failure) => refused(failure.reason),
        }
    }
}

/// A failure no repair works on.
fn refused(reason: String) -> Outcome<FailureKind> {
    Outcome::Failed(Failure {
        class: FailureClass::Refused,
        reason,
        found_by: String::new(),
        locator: None,
        attempts: 1,
        waited: Vec::new(),
        detail: FailureKind::Refused,
    })
}

/// A `Set-Cookie` header as the browser stores it.
pub(crate) fn set_cookie(header: &str) -> Option<SetCookie> {
    let cookie = cookie::Cookie::parse(header.to_owned()).ok()?;
    let expires = match (cookie.max_age(), cookie.expires_datetime()) {
        (Some(age), _) => Some(cookie::time::OffsetDateTime::now_utc().unix_timestamp() + age.whole_seconds()),
        (None, Some(at)) => Some(at.unix_timestamp()),
        (None, None) => None,
    };
    Some(SetCookie {
        name: cookie.name().to_owned(),
        value: cookie.value().to_owned(),
        domain: cookie.domain().map(str::to_owned),
        path: cookie.path().map(str::to_owned),
        secure: cookie.secure().unwrap_or(false),
        http_only: cookie.http_only().unwrap_or(false),
        same_site: cookie.same_site().map(|same_site| same_site.to_string()),
        expires,
    })
}

impl Live for BrowserLive {
    type Detail = FailureKind;

    fn mark(&self) -> u64 {
        self.tracer.as_ref().map_or(0, Tracer::mark)
    }

    fn begin_step(&mut self) {
        self.context.begin_step();
        self.urls_before.clear();
    }

    fn end_step(&mut self, report: &crate::StepResult, mark: u64) {
        if let Some(tracer) = self.tracer.as_mut() {
            tracer.step(report, mark);
        }
    }

    async fn perform(&mut self, at: &ActionAt<'_>, masker: &mut Masker) -> Outcome<FailureKind> {
        if at.resolved.is_http() {
            return self.perform_http(at, masker).await;
        }
        let step = &at.steps[at.step];
        if self.urls_before.len() < step.actions.len() {
            self.urls_before.resize(step.actions.len(), None);
        }
        let timeout = at.options.timeouts.for_action(at.resolved);
        let guard = at.options.secret_guard(at.secrets);
        if self.returns && !at.recorded.may_repeat() {
            self.urls_before[at.action] = self.context.url().await.ok();
        }
        self.action_mark = self.mark();
        let mut attempt = self.context.perform_guarded(at.resolved, Some(timeout), guard).await;
        if at.may_clear
            && let Err(failure) = &attempt
            && let Some(detector) = crate::interrupt::interrupted_by(&failure.kind)
        {
            let cleared = if at.cleared >= crate::interrupt::MAX_CLEARS_PER_STEP {
                Err(format!(
                    "the step was interrupted {} times, and the interruption came back each time it was cleared",
                    at.cleared + 1
                ))
            } else {
                let interrupted = crate::interrupt::Interrupted {
                    step,
                    next_step: at.steps.get(at.step + 1),
                    table: at.table,
                    action: at.action,
                    urls_before: &self.urls_before,
                };
                crate::interrupt::clear(
                    &mut self.context,
                    &self.handlers,
                    detector,
                    interrupted,
                    at.values,
                    at.options,
                    masker,
                )
                .await
            };
            match cleared {
                Ok(cleared) => return Outcome::Cleared { name: cleared.name, next: cleared.next },
                Err(message) => {
                    attempt = Err(ActionFailure {
                        kind: FailureKind::Interrupted { detector },
                        message,
                        expected: None,
                        found: None,
                        found_by: None,
                    });
                }
            }
        }
        let trail = self.context.last_trail();
        match attempt {
            Ok(performed) => {
                let refresh = performed.fresh.as_ref().and_then(|fresh| {
                    let refreshed = crate::refresh::refreshed(at.recorded, fresh, &performed.drift)?;
                    let mut action_now = at.recorded.clone();
                    if let Some(target) = action_now.target_mut() {
                        *target = refreshed.target;
                    }
                    // A value of this Outline row the page shows is the row's token again.
                    let action_now = crate::record::gateway::with_row_tokens(action_now, &at.execution.params);
                    Some(Refresh {
                        step: at.step,
                        action: at.action,
                        action_before: at.recorded.to_string(),
                        action_now,
                        changes: refreshed.changes,
                    })
                });
                let drift = drift_lines(at.step + 1, at.recorded, &performed);
                if let Some(tracer) = self.tracer.as_mut() {
                    let done = Ok(&performed);
                    let (step, mark) = (at.step + 1, self.action_mark);
                    tracer.action(&self.context, step, at.recorded, mark, done, &trail, &drift, masker).await;
                }
                let report = ActionResult {
                    action: at.recorded.to_string(),
                    passed: true,
                    tier: performed.tier,
                    locator: performed.locator.clone(),
                    duration_ms: performed.duration.as_millis() as u64,
                    drift: drift.clone(),
                    notes: performed.notes.clone(),
                    attempts: trail.attempts,
                    waited: trail.waited,
                    matched: trail.matched,
                };
                Outcome::Done(Box::new(Done { report, drift, refresh, captured: Vec::new() }))
            }
            Err(failure) => {
                let class = if failure.kind == FailureKind::Refused {
                    FailureClass::Refused
                } else if crate::interrupt::interrupted_by(&failure.kind).is_some() {
                    FailureClass::Interrupted
                } else {
                    FailureClass::Application
                };
                // The browser's message names the action first; the report names it once.
                let (found_by, reason) = failure_reason(&failure.message, at.resolved);
                let failed = Failure {
                    class,
                    reason: reason.to_owned(),
                    found_by: found_by.to_owned(),
                    locator: failure.found_by.clone(),
                    attempts: trail.attempts,
                    waited: trail.waited.clone(),
                    detail: failure.kind.clone(),
                };
                self.failed = Some((failure, trail));
                Outcome::Failed(failed)
            }
        }
    }

    async fn evidence(&mut self, at: &ActionAt<'_>, masker: &Masker) -> Evidence {
        let failed = self.failed.take();
        if let (Some(tracer), Some((failure, trail))) = (self.tracer.as_mut(), &failed) {
            let (step, mark) = (at.step + 1, self.action_mark);
            tracer.action(&self.context, step, at.recorded, mark, Err(failure), trail, &[], masker).await;
        }
        // A field that holds a secret is blanked for the picture, whatever its type, and text
        // that shows one in any spelling is covered.
        let secrets: Vec<&str> = masker.spellings().collect();
        let screenshot = self.context.screenshot_hiding(&secrets).await.ok();
        let url = self.context.url().await.ok();
        let mut console_errors = self.context.console_errors().await;
        console_errors.truncate(crate::CONSOLE_ERRORS_KEPT);
        let hint = match &failed {
            Some((failure, _)) if self.handlers.is_empty() => {
                crate::interrupt::suggestion(&failure.kind, url.as_deref(), &at.options.base_url, at.steps)
            }
            _ => None,
        };
        Evidence { screenshot, url, console_errors, hint }
    }

    async fn failed(&mut self, message: &str, evidence: &Evidence, masker: &Masker) {
        if let Some(tracer) = self.tracer.as_mut() {
            let url = evidence.url.clone();
            tracer.failure(&self.context, message, url, evidence.screenshot.as_deref(), masker).await;
        }
    }

    fn finish(&mut self, verdict: &crate::Verdict, duration_ms: u64) -> Option<Trace> {
        let mut tracer = self.tracer.take()?;
        tracer.observe(&self.context);
        if let Some(http) = &self.http {
            tracer.exchanges(http.sent_exchanges());
        }
        Some(tracer.finish(verdict, duration_ms))
    }

    fn exchanges(&mut self) -> Vec<crate::transcript::Exchange> {
        self.http.as_mut().map(Live::exchanges).unwrap_or_default()
    }

    async fn restore_session(&mut self, saved: &crate::sign_in_once::Saved) -> Result<(), String> {
        crate::sign_in_once::restore(&mut self.context, saved).await
    }

    async fn save_session(&mut self) -> Result<crate::sign_in_once::Saved, String> {
        crate::sign_in_once::saved_of(&self.context).await
    }

    async fn signed_out(&mut self, saved: &crate::sign_in_once::Saved) -> Option<String> {
        crate::sign_in_once::signed_out(&self.context, saved).await
    }

    async fn close(self) {
        self.context.close().await;
    }
}

/// One line per drifted signal, e.g. ``step 2 `fill searchbox "Search" with "Ada"`: placeholder
/// "Search…" → "Find orders…" (found by role searchbox "Search")``. A signal line names the
/// locator that found the element; a tier line says it itself.
fn drift_lines(step: usize, action: &Action, performed: &Performed) -> Vec<String> {
    performed
        .drift
        .iter()
        .map(|drift| match (&drift.signal, &performed.locator) {
            (Signal::Tier, _) | (_, None) => format!("step {step} `{action}`: {drift}"),
            (_, Some(locator)) => format!("step {step} `{action}`: {drift} (found by {locator})"),
        })
        .collect()
}

/// The browser's failure `message` of `performed` without the action it names first (`click
/// button "Save": `), which the report says already: ` (found by css "#save")` (kept apart,
/// since it says which element failed) and the reason.
fn failure_reason<'a>(message: &'a str, performed: &Action) -> (&'a str, &'a str) {
    let subject = match performed.target() {
        Some(target) => format!("{} {target}", performed.type_name()),
        None => performed.type_name().to_owned(),
    };
    let Some(rest) = message.strip_prefix(subject.as_str()) else { return ("", message) };
    if let Some(reason) = rest.strip_prefix(": ") {
        return ("", reason);
    }
    if rest.starts_with(" (found by ")
        && let Some(end) = rest.find("): ")
    {
        return (&rest[..=end], &rest[end + 3..]);
    }
    ("", message)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use saffron_browser::Drift;
    use saffron_recording::{Target, Tier};

    use super::*;

    #[test]
    fn a_failure_names_its_action_once() {
        let click = Action::Click { target: Target::role("button", "Save"), timeout_ms: None };
        let missing = r#"click button "Save": no element matched within 10.0 s: role button "Save": 0 matches"#;
        assert_eq!(
            failure_reason(missing, &click),
            ("", r#"no element matched within 10.0 s: role button "Save": 0 matches"#)
        );
        let covered = r##"click button "Save" (found by css "#save"): not actionable after 5.0 s: covered"##;
        assert_eq!(
            failure_reason(covered, &click),
            (r##" (found by css "#save")"##, "not actionable after 5.0 s: covered")
        );
        // A message that does not start with the action is kept whole.
        assert_eq!(failure_reason("the browser went away", &click), ("", "the browser went away"));
    }

    #[test]
    fn each_drifted_signal_is_one_line_naming_the_locator_that_matched() {
        let action = Action::Fill {
            target: Target { placeholder: Some("Search…".into()), css: vec!["#q".into()], ..Target::default() },
            value: "Ada".into(),
            timeout_ms: None,
        };
        let drift = |scope, signal, recorded: &str, now: &str| Drift {
            scope,
            frame: 0,
            signal,
            recorded: recorded.into(),
            now: Some(now.into()),
            renamed: false,
        };
        let performed = Performed {
            tier: Some(Tier::Css),
            locator: Some(r##"css "#q""##.into()),
            drift: vec![
                drift(0, Signal::Tier, r#"placeholder "Search…""#, r##"css "#q""##),
                drift(0, Signal::Placeholder, "Search…", "Find orders…"),
                drift(1, Signal::Tier, "role row", r#"css "tr" with text "1002""#),
            ],
            duration: Duration::ZERO,
            notes: Vec::new(),
            fresh: None,
        };
        assert_eq!(
            drift_lines(2, &action, &performed),
            [
                r##"step 2 `fill placeholder "Search…" with "Ada"`: found by css "#q" (recorded: placeholder "Search…")"##,
                r##"step 2 `fill placeholder "Search…" with "Ada"`: placeholder "Search…" → "Find orders…" (found by css "#q")"##,
                r##"step 2 `fill placeholder "Search…" with "Ada"`: scope: found by css "tr" with text "1002" (recorded: role row)"##,
            ]
        );
    }
}
