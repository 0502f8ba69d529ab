//! Performing one action: resolve, wait for actionability, act once; or check, retrying until
//! the timeout.
//!
//! Waiting and retrying happen only before an action is dispatched. Once the mouse or keyboard
//! events of a click, a key press or a dialog answer are sent, the action is over, whatever
//! comes next: "the click was lost" and "the click worked and the answer is slow" look the
//! same from outside, and only the first may be retried safely.

use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{EventFrameNavigated, EventNavigatedWithinDocument, NavigateParams};
use chromiumoxide::listeners::EventStream;
use futures::StreamExt;
use regex::Regex;
use saffron_recording::{Action, ElementState, Target, Tier};
use serde_json::{Value, json};

use crate::cdp::{self, CdpFail};
use crate::context::{Context, DialogAnswer, ensure_front};
use crate::drift::{self, Drift};
use crate::error::{ActionFailure, BrowserError, FailureKind};
use crate::keys;
use crate::locate::{self, Found, Located, Report};
use crate::network::{Body, Matcher, describe_entry};
use crate::url::{path_and_query, relativize_url, resolve_url};
use crate::{js, normalize_whitespace};

/// What a successful action reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Performed {
    /// The tier that found the element (`None` for actions without a target, and for an
    /// `expectHidden` whose element is absent).
    pub tier: Option<Tier>,
    /// The locator that found it, scope included, e.g. `css "#q"` or `role checkbox within
    /// role row with text "Order 1002"`.
    pub locator: Option<String>,
    /// Every recorded signal the element no longer has, in ladder order: a weaker tier than
    /// the recorded one (or, without `tier`, than the sturdiest one the target has), a changed
    /// role and name, label, placeholder, test id or text, a CSS fallback that no longer
    /// selects it alone. Empty when the recording still describes the element.
    pub drift: Vec<Drift>,
    /// Wall time of the action, waits included.
    pub duration: Duration,
    /// Things worth a line in the report that did not fail the action, e.g. an unexpected
    /// dialog that was dismissed.
    pub notes: Vec<String>,
}

/// Pauses between attempts, as Playwright's: quick at first, then steady.
const BACKOFF_MS: [u64; 6] = [0, 20, 50, 100, 100, 200];

/// Each attempt gets at least this long, even when the deadline is closer: a last check made
/// right at the deadline must be able to finish, and the first role query of a page (Chromium
/// builds its accessibility tree then) may take a few hundred milliseconds. Only a page that
/// stops answering runs into this limit.
const MIN_ATTEMPT: Duration = Duration::from_secs(2);

struct Backoff {
    deadline: Instant,
    step: usize,
}

impl Backoff {
    fn new(deadline: Instant) -> Backoff {
        Backoff { deadline, step: 0 }
    }

    /// Sleeps before the next attempt; `false` when the deadline has passed. The sleep is cut
    /// to the deadline, so one last attempt is made at the deadline itself.
    async fn next(&mut self) -> bool {
        self.next_or(std::future::pending::<()>()).await
    }

    /// Like [`Backoff::next`], but the pause also ends as soon as `wake` completes (an event
    /// that may have changed what the attempt looks at).
    async fn next_or(&mut self, wake: impl Future) -> bool {
        let now = Instant::now();
        if now >= self.deadline {
            return false;
        }
        let delay = Duration::from_millis(BACKOFF_MS[self.step.min(BACKOFF_MS.len() - 1)]);
        self.step += 1;
        let _timed = crate::timing::span("retry pause");
        tokio::select! {
            () = tokio::time::sleep(delay.min(self.deadline - now)) => {}
            _ = wake => {}
        }
        true
    }

    fn attempt_deadline(&self) -> Instant {
        self.deadline.max(Instant::now() + MIN_ATTEMPT)
    }
}

/// What an element action found: by which locator, and what drifted.
struct Resolved {
    tier: Tier,
    locator: String,
    drift: Vec<Drift>,
}

impl Resolved {
    /// Reads the drift of `found`: before acting on it, since acting may take it away.
    async fn observe(page: &Page, target: &Target, found: &Found) -> Resolved {
        let _timed = crate::timing::span("drift");
        Resolved::without_drift(found).with_drift(drift::observe(page, target, found).await)
    }

    fn without_drift(found: &Found) -> Resolved {
        Resolved { tier: found.tier, locator: found.locator(), drift: Vec::new() }
    }

    fn with_drift(mut self, drift: Vec<Drift>) -> Resolved {
        self.drift = drift;
        self
    }
}

/// Why the last attempt did not succeed.
#[derive(Debug, Clone)]
enum Pending {
    /// No tier had exactly one match.
    Unresolved(Report),
    /// Found (by `found_by` when a fallback found it), but not actionable.
    NotActionable { reason: String, found_by: Option<String> },
    /// Found, but the assertion does not hold.
    Assertion { expected: String, found: String, found_by: Option<String> },
    /// The page answered with an error or not at all (usually: it was navigating).
    Unsettled(String),
}

/// One attempt's outcome.
enum Attempt<T> {
    Done(T),
    Retry(Pending),
    Fail(ActionFailure),
}

impl<T> Attempt<T> {
    fn map<U>(self, change: impl FnOnce(T) -> U) -> Attempt<U> {
        match self {
            Attempt::Done(value) => Attempt::Done(change(value)),
            Attempt::Retry(pending) => Attempt::Retry(pending),
            Attempt::Fail(failure) => Attempt::Fail(failure),
        }
    }
}

/// Which actionability checks an action needs (Playwright's table).
#[derive(Debug, Clone, Default)]
struct Checks {
    visible: bool,
    enabled: bool,
    editable: bool,
    stable: bool,
    hit: bool,
    scroll: bool,
    fill: Option<String>,
}

impl Checks {
    fn click() -> Checks {
        Checks { visible: true, enabled: true, stable: true, hit: true, scroll: true, ..Checks::default() }
    }

    fn hover() -> Checks {
        Checks { visible: true, stable: true, hit: true, scroll: true, ..Checks::default() }
    }

    fn fill(value: &str) -> Checks {
        Checks {
            visible: true,
            enabled: true,
            editable: true,
            scroll: true,
            fill: Some(value.to_owned()),
            ..Checks::default()
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "visible": self.visible,
            "enabled": self.enabled,
            "editable": self.editable,
            "stable": self.stable,
            "hit": self.hit,
            "scroll": self.scroll,
            "fill": self.fill,
        })
    }
}

/// An element that passed its checks.
struct Ready {
    page: Page,
    found: Found,
    x: f64,
    y: f64,
    /// `fill` already set the value (date-like inputs).
    done: bool,
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

fn browser_failure(error: BrowserError) -> ActionFailure {
    ActionFailure::new(FailureKind::Browser, error.to_string())
}

fn quote(text: &str) -> String {
    format!("{text:?}")
}

/// Sorts a failed call into retry (the page moved on) or fail (the browser is gone).
fn on_cdp<T>(error: CdpFail) -> Attempt<T> {
    match error {
        CdpFail::Dead(message) => Attempt::Fail(ActionFailure::new(FailureKind::Browser, message)),
        CdpFail::Protocol(message) => Attempt::Retry(Pending::Unsettled(message)),
        CdpFail::Timeout => Attempt::Retry(Pending::Unsettled("the page did not answer".to_owned())),
    }
}

impl Context {
    /// Performs one resolved action or assertion in the active tab.
    ///
    /// The timeout is the action's own `timeoutMs` when it has one, else `timeout`, else the
    /// browser's default timeout. Element actions wait (up to it) for their element to be found
    /// uniquely and to become actionable, then act once; assertions retry until it runs out.
    pub async fn perform(&mut self, action: &Action, timeout: Option<Duration>) -> Result<Performed, ActionFailure> {
        let started = Instant::now();
        let _timed = crate::timing::action(action.type_name());
        let timeout = action_timeout(action).or(timeout).unwrap_or(self.default_timeout);
        let deadline = started + timeout;
        self.group_counter += 1;
        let group = format!("saffron-{}", self.group_counter);
        let outcome = self.dispatch(action, deadline, timeout, &group).await;
        self.release(group);
        let (tier, locator, drift) = match outcome? {
            Some(resolved) => (Some(resolved.tier), Some(resolved.locator), resolved.drift),
            None => (None, None, Vec::new()),
        };
        let notes = self.shared.update(|state| std::mem::take(&mut state.notes));
        Ok(Performed { tier, locator, drift, duration: started.elapsed(), notes })
    }

    /// Frees the page objects the action held, without making the caller wait for it.
    fn release(&self, group: String) {
        if let Ok(page) = self.active_page() {
            tokio::spawn(async move {
                let _ = cdp::call(&page, "Runtime.releaseObjectGroup", json!({ "objectGroup": group })).await;
            });
        }
    }

    async fn dispatch(
        &mut self,
        action: &Action,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Option<Resolved>, ActionFailure> {
        let name = action.type_name();
        match action {
            Action::Goto { url, .. } => self.goto(url, deadline, timeout).await.map(|()| None),
            Action::Click { target, .. } => {
                let ready = self.ready(name, target, &Checks::click(), deadline, timeout, group).await?;
                let resolved = Resolved::observe(&ready.page, target, &ready.found).await;
                acknowledged(click_at(&ready.page, ready.x, ready.y))
                    .await
                    .map_err(|error| dispatched(name, target, &ready.found, error))?;
                Ok(Some(resolved))
            }
            Action::Hover { target, .. } => {
                let ready = self.ready(name, target, &Checks::hover(), deadline, timeout, group).await?;
                let resolved = Resolved::observe(&ready.page, target, &ready.found).await;
                acknowledged(mouse(&ready.page, "mouseMoved", ready.x, ready.y))
                    .await
                    .map_err(|error| dispatched(name, target, &ready.found, error))?;
                Ok(Some(resolved))
            }
            Action::Fill { target, value, .. } => self.fill(target, value, deadline, timeout, group).await.map(Some),
            Action::Select { target, values, .. } => {
                self.select(target, values, deadline, timeout, group).await.map(Some)
            }
            Action::Press { target, key, .. } => self.press(target.as_ref(), key, deadline, timeout, group).await,
            Action::Check { target, .. } => self.check(name, target, true, deadline, timeout, group).await.map(Some),
            Action::Uncheck { target, .. } => self.check(name, target, false, deadline, timeout, group).await.map(Some),
            Action::SwitchTab { index, url_pattern, .. } => {
                self.switch_tab(*index, url_pattern.as_deref(), deadline, timeout).await.map(|()| None)
            }
            Action::Dialog { accept, prompt_text, .. } => {
                // Armed, not answered: the dialog comes from the next action, and the tab's
                // dialog task answers it the moment it opens.
                let answer = DialogAnswer { accept: *accept, prompt_text: prompt_text.clone() };
                self.shared.update(|state| state.dialog = Some(answer));
                Ok(None)
            }
            Action::WaitForResponse { response, .. } => {
                self.wait_response(name, response, self.step_mark, deadline, timeout).await.map(|()| None)
            }
            Action::ExpectResponse { response, .. } => {
                self.wait_response(name, response, 0, deadline, timeout).await.map(|()| None)
            }
            Action::ExpectNoConsoleErrors { .. } => {
                // Errors never go away, so there is nothing to wait for: fail at once.
                let errors = self.console_errors_now().await;
                if errors.is_empty() {
                    Ok(None)
                } else {
                    let found = errors.join("; ");
                    Err(ActionFailure::new(
                        FailureKind::AssertionFailed,
                        format!("{name}: expected no console errors, found {}: {found}", errors.len()),
                    )
                    .with(Some("no console errors".to_owned()), Some(found)))
                }
            }
            Action::ExpectUrl { url, url_regex, .. } => {
                self.expect_url(url.as_deref(), url_regex.as_deref(), deadline, timeout).await.map(|()| None)
            }
            Action::ExpectVisible { target, .. }
            | Action::ExpectHidden { target, .. }
            | Action::ExpectText { target, .. }
            | Action::ExpectValue { target, .. }
            | Action::ExpectState { target, .. } => self.expect_element(action, target, deadline, timeout, group).await,
            Action::ExpectCount { target, count, .. } => {
                let tier = self.expect_count(target, *count, deadline, timeout, group).await?;
                let locator = target.describe_locator(tier, 0);
                Ok(Some(Resolved { tier, locator, drift: Vec::new() }))
            }
        }
    }

    async fn goto(&mut self, url: &str, deadline: Instant, timeout: Duration) -> Result<(), ActionFailure> {
        let page = self.active_page().map_err(browser_failure)?;
        let absolute = resolve_url(&self.base_url, url);
        let failure = |message: String| {
            ActionFailure::new(FailureKind::Navigation, format!("goto {absolute}: {message}"))
                .with(Some(absolute.clone()), None)
        };
        // Checked after tokens are filled in: `{env:URL}` may hold anything.
        if let Some(problem) = saffron_recording::navigation::navigation_problem(&absolute) {
            return Err(failure(format!("refused: {problem}")));
        }
        let _timed = crate::timing::span("navigate");
        let navigation = page.execute(NavigateParams::new(absolute.clone()));
        match tokio::time::timeout_at(deadline.into(), navigation).await {
            Err(_) => Err(failure(format!("the page did not finish loading within {}", seconds(timeout)))),
            Ok(Err(error)) => Err(failure(error.to_string())),
            Ok(Ok(answer)) => match answer.result.error_text {
                Some(error) => Err(failure(error)),
                None => Ok(()),
            },
        }
    }

    /// Resolves the target and waits until it passes `checks`; the heart of every element
    /// action. Nothing here dispatches input, so all of it may be retried.
    async fn ready(
        &self,
        verb: &str,
        target: &Target,
        checks: &Checks,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Ready, ActionFailure> {
        retry(verb, target, deadline, timeout, async || self.try_ready(target, checks, group).await).await
    }

    async fn try_ready(&self, target: &Target, checks: &Checks, group: &str) -> Attempt<Ready> {
        let page = match self.active_page() {
            Ok(page) => page,
            Err(error) => return Attempt::Fail(browser_failure(error)),
        };
        if let Err(error) = self.front(&page).await {
            return on_cdp(error);
        }
        let found = match locate::locate(&page, target, group).await {
            Ok(Located::One(found)) => found,
            Ok(Located::None(report)) => return Attempt::Retry(Pending::Unresolved(report)),
            Err(error) => return on_cdp(error),
        };
        let actionable = crate::timing::span("actionable");
        let answer = match cdp::call_value(&page, &found.object_id, js::ACTIONABLE, &[checks.to_json()]).await {
            Ok(answer) => answer,
            Err(error) => return on_cdp(error),
        };
        drop(actionable);
        if answer.get("ok").and_then(Value::as_bool) == Some(true) {
            let coordinate = |name: &str| answer.get(name).and_then(Value::as_f64).unwrap_or(0.0);
            let done = answer.get("done").and_then(Value::as_bool).unwrap_or(false);
            return Attempt::Done(Ready { x: coordinate("x"), y: coordinate("y"), done, page, found });
        }
        let reason = answer.get("reason").and_then(Value::as_str).unwrap_or("not actionable").to_owned();
        if answer.get("background").and_then(Value::as_bool) == Some(true)
            && let Err(error) = ensure_front(&page).await
        {
            // A tab opened since the check above took the front; the retry finds ours there.
            return on_cdp(error);
        }
        let found_by = found.fallback_locator(target);
        if answer.get("fatal").and_then(Value::as_bool) == Some(true) {
            return Attempt::Fail(
                ActionFailure::new(FailureKind::NotActionable { reason: reason.clone() }, reason).found_by(found_by),
            );
        }
        Attempt::Retry(Pending::NotActionable { reason, found_by })
    }

    /// Resolves the target once (retrying only resolution), for actions whose own script does
    /// the checking. A failure of `step` names the fallback that found the element.
    async fn resolve_then<T>(
        &self,
        verb: &str,
        target: &Target,
        deadline: Instant,
        timeout: Duration,
        group: &str,
        mut step: impl AsyncFnMut(&Page, &Found) -> Attempt<T>,
    ) -> Result<(T, Found), ActionFailure> {
        retry(verb, target, deadline, timeout, async || {
            let page = match self.active_page() {
                Ok(page) => page,
                Err(error) => return Attempt::Fail(browser_failure(error)),
            };
            if let Err(error) = self.front(&page).await {
                return on_cdp(error);
            }
            match locate::locate(&page, target, group).await {
                Ok(Located::One(found)) => match step(&page, &found).await {
                    Attempt::Done(value) => Attempt::Done((value, found)),
                    Attempt::Retry(pending) => Attempt::Retry(pending.found_by(found.fallback_locator(target))),
                    Attempt::Fail(failure) => Attempt::Fail(failure.found_by(found.fallback_locator(target))),
                },
                Ok(Located::None(report)) => Attempt::Retry(Pending::Unresolved(report)),
                Err(error) => on_cdp(error),
            }
        })
        .await
    }

    async fn fill(
        &self,
        target: &Target,
        value: &str,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Resolved, ActionFailure> {
        let ready = self.ready("fill", target, &Checks::fill(value), deadline, timeout, group).await?;
        let resolved = Resolved::observe(&ready.page, target, &ready.found).await;
        if !ready.done {
            let page = &ready.page;
            let typed = async {
                if value.is_empty() {
                    // The content is selected: Delete clears it, firing `input` like a user would.
                    let delete = keys::parse("Delete").map_err(CdpFail::Protocol)?;
                    for event in keys::events(&delete) {
                        cdp::call(page, "Input.dispatchKeyEvent", event).await?;
                    }
                } else {
                    // The browser fires `beforeinput` and `input` itself. No `change`: it comes
                    // when the value is committed, by a later Enter, Tab or click elsewhere, as
                    // for a person who types.
                    cdp::call(page, "Input.insertText", json!({ "text": value })).await?;
                }
                Ok(())
            };
            acknowledged(typed).await.map_err(|error| dispatched("fill", target, &ready.found, error))?;
        }
        Ok(resolved)
    }

    async fn select(
        &self,
        target: &Target,
        values: &[String],
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Resolved, ActionFailure> {
        let values = json!(values);
        let (drift, found) = self
            .resolve_then("select", target, deadline, timeout, group, async |page: &Page, found: &Found| {
                let drift = drift::observe(page, target, found).await;
                match cdp::call_value(page, &found.object_id, js::SELECT, std::slice::from_ref(&values)).await {
                    Ok(answer) => script_outcome(&answer).map(|()| drift),
                    Err(error) => on_cdp(error),
                }
            })
            .await?;
        Ok(Resolved::without_drift(&found).with_drift(drift))
    }

    async fn press(
        &self,
        target: Option<&Target>,
        key: &str,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Option<Resolved>, ActionFailure> {
        let chord = keys::parse(key)
            .map_err(|error| ActionFailure::new(FailureKind::Invalid, format!("press {key:?}: {error}")))?;
        let (page, resolved) = match target {
            Some(target) => {
                let ((page, drift), found) = self
                    .resolve_then("press", target, deadline, timeout, group, async |page: &Page, found: &Found| {
                        let drift = drift::observe(page, target, found).await;
                        match cdp::call_value(page, &found.object_id, js::FOCUS, &[]).await {
                            Ok(answer) => script_outcome(&answer).map(|()| (page.clone(), drift)),
                            Err(error) => on_cdp(error),
                        }
                    })
                    .await?;
                (page, Some(Resolved::without_drift(&found).with_drift(drift)))
            }
            None => {
                let page = self.active_page().map_err(browser_failure)?;
                self.front(&page)
                    .await
                    .map_err(|error| ActionFailure::new(FailureKind::Browser, format!("press {key:?}: {error}")))?;
                (page, None)
            }
        };
        let typed = async {
            for event in keys::events(&chord) {
                cdp::call(&page, "Input.dispatchKeyEvent", event).await?;
            }
            Ok(())
        };
        acknowledged(typed).await.map_err(|error| {
            ActionFailure::new(
                FailureKind::Browser,
                format!("press {key:?}: the key events failed midway: {error}; not retried"),
            )
        })?;
        Ok(resolved)
    }

    /// Check or uncheck: click only if the state differs, then verify the click changed it.
    async fn check(
        &self,
        verb: &str,
        target: &Target,
        want: bool,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Resolved, ActionFailure> {
        let (checked, found) = self
            .resolve_then(verb, target, deadline, timeout, group, async |page: &Page, found: &Found| {
                checked_state(page, &found.object_id, want).await
            })
            .await?;
        if checked == want {
            let page = self.active_page().map_err(browser_failure)?;
            return Ok(Resolved::observe(&page, target, &found).await);
        }
        let ready = self.ready(verb, target, &Checks::click(), deadline, timeout, group).await?;
        let resolved = Resolved::observe(&ready.page, target, &ready.found).await;
        acknowledged(click_at(&ready.page, ready.x, ready.y))
            .await
            .map_err(|error| dispatched(verb, target, &ready.found, error))?;
        let found_by = ready.found.fallback_locator(target);
        match checked_state(&ready.page, &ready.found.object_id, want).await {
            Attempt::Done(now) if now == want => Ok(resolved),
            Attempt::Done(_) => {
                let reason = format!("clicking did not {verb} it");
                Err(ActionFailure::new(FailureKind::NotActionable { reason: reason.clone() }, reason)
                    .with(
                        Some(if want { "checked" } else { "unchecked" }.to_owned()),
                        Some(if want { "unchecked" } else { "checked" }.to_owned()),
                    )
                    .found_by(found_by)
                    .prefixed(verb, target))
            }
            Attempt::Fail(failure) => Err(failure.found_by(found_by).prefixed(verb, target)),
            Attempt::Retry(pending) => Err(give_up(verb, Some(target), pending.found_by(found_by), timeout)),
        }
    }

    async fn switch_tab(
        &mut self,
        index: Option<u32>,
        pattern: Option<&str>,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), ActionFailure> {
        let pattern = match pattern.map(Regex::new) {
            Some(Ok(pattern)) => Some(pattern),
            Some(Err(error)) => {
                return Err(ActionFailure::new(
                    FailureKind::Invalid,
                    format!("switchTab: invalid urlPattern: {error}"),
                ));
            }
            None => None,
        };
        if index.is_none() && pattern.is_none() {
            return Err(ActionFailure::new(FailureKind::Invalid, "switchTab needs an index or a urlPattern"));
        }
        let wanted = match (index, &pattern) {
            (Some(index), _) => format!("tab {index}"),
            (None, Some(pattern)) => format!("a tab whose URL matches /{pattern}/"),
            (None, None) => String::new(),
        };
        let mut seen = Vec::new();
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let tabs: Vec<(String, Page)> = self.shared.read(|state| {
                let open = state.tabs.iter().filter(|tab| !tab.closed && tab.ready);
                open.filter_map(|tab| Some((tab.target_id.clone(), tab.page.clone()?))).collect()
            });
            seen.clear();
            let mut chosen = None;
            for (position, (target_id, page)) in tabs.iter().enumerate() {
                let url = page.url().await.ok().flatten().unwrap_or_default();
                let fits = match (index, &pattern) {
                    (Some(index), _) => position == index as usize,
                    (None, Some(pattern)) => {
                        pattern.is_match(&url)
                            || pattern.is_match(&path_and_query(&url))
                            || pattern.is_match(&relativize_url(&self.base_url, &url))
                    }
                    (None, None) => false,
                };
                seen.push(format!("{position}: {}", relativize_url(&self.base_url, &url)));
                if fits && chosen.is_none() {
                    chosen = Some(target_id.clone());
                }
            }
            if let Some(target_id) = chosen {
                self.active = target_id;
                // The tab switched to is the one in front from now on, as for a user.
                let page = self.active_page().map_err(browser_failure)?;
                return ensure_front(&page)
                    .await
                    .map_err(|error| ActionFailure::new(FailureKind::Browser, format!("switchTab: {error}")));
            }
            // A new tab's URL changes as it navigates, which no update announces; look again
            // soon even without one.
            let wake = deadline.min(Instant::now() + Duration::from_millis(100));
            let _ = tokio::time::timeout_at(wake.into(), notified).await;
            if Instant::now() >= deadline {
                let found = if seen.is_empty() { "no tabs".to_owned() } else { seen.join(", ") };
                return Err(ActionFailure::new(
                    FailureKind::Timeout,
                    format!("switchTab: no {wanted} within {}; open tabs: {found}", seconds(timeout)),
                )
                .with(Some(wanted), Some(found)));
            }
        }
    }

    /// Waits for a response matching `source` with a sequence number from `since` on.
    async fn wait_response(
        &self,
        verb: &str,
        source: &saffron_recording::ResponseMatcher,
        since: u64,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), ActionFailure> {
        let matcher = Matcher::new(source)
            .map_err(|error| ActionFailure::new(FailureKind::Invalid, format!("{verb}: {error}")))?;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let (hit, unread) = self.shared.read(|state| {
                let mut unread = Vec::new();
                for (index, entry) in state.net.iter().enumerate() {
                    if entry.seq.is_none_or(|seq| seq < since) || !matcher.matches_head(entry, &self.base_url) {
                        continue;
                    }
                    match matcher.matches_body(entry) {
                        Some(true) => return (true, Vec::new()),
                        Some(false) => {}
                        None if entry.finished => {
                            unread.push((index, entry.target_id.clone(), entry.request_id.clone()))
                        }
                        None => {}
                    }
                }
                (false, unread)
            });
            if hit {
                return Ok(());
            }
            if !unread.is_empty() {
                self.read_bodies(unread).await;
                continue;
            }
            if tokio::time::timeout_at(deadline.into(), notified).await.is_err() {
                let found = self.shared.read(|state| {
                    let since_mark = state.net.iter().filter(|entry| entry.seq.is_some_and(|seq| seq >= since));
                    let mut lines: Vec<String> = since_mark
                        .filter(|entry| !matcher.needs_body() || matcher.matches_head(entry, &self.base_url))
                        .map(|entry| {
                            let mut line = describe_entry(entry);
                            if let Body::Text(text) = &entry.body
                                && matcher.needs_body()
                            {
                                let short: String = text.chars().take(80).collect();
                                line.push_str(&format!(" body {short:?}"));
                            }
                            line
                        })
                        .collect();
                    if lines.len() > 12 {
                        lines.drain(..lines.len() - 12);
                    }
                    if lines.is_empty() { "no responses".to_owned() } else { lines.join(", ") }
                });
                let scope = if since == 0 { "during the scenario" } else { "since the step began" };
                return Err(ActionFailure::new(
                    FailureKind::Timeout,
                    format!(
                        "{verb}: expected a response {} {scope} within {}, found {found}",
                        matcher.describe(),
                        seconds(timeout)
                    ),
                )
                .with(Some(matcher.describe()), Some(found)));
            }
        }
    }

    /// Reads bodies the network task did not read ahead.
    async fn read_bodies(&self, unread: Vec<(usize, String, String)>) {
        for (index, target_id, request_id) in unread {
            let page = self.shared.read(|state| {
                state.tabs.iter().find(|tab| tab.target_id == target_id && !tab.closed).and_then(|tab| tab.page.clone())
            });
            let body = match page {
                Some(page) => crate::context::read_body(&page, &request_id).await,
                None => Body::Unavailable("its tab is closed".to_owned()),
            };
            self.shared.update(|state| {
                if let Some(entry) = state.net.get_mut(index) {
                    entry.body = body;
                }
            });
        }
    }

    async fn expect_url(
        &self,
        url: Option<&str>,
        pattern: Option<&str>,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), ActionFailure> {
        let pattern = match pattern.map(Regex::new) {
            Some(Ok(pattern)) => Some(pattern),
            Some(Err(error)) => {
                return Err(ActionFailure::new(FailureKind::Invalid, format!("expectUrl: invalid urlRegex: {error}")));
            }
            None => None,
        };
        // Both sides in the recording's terms: relative to the base URL when under it.
        let expected = match (url, &pattern) {
            (Some(url), _) => relativize_url(&self.base_url, &resolve_url(&self.base_url, url)),
            (None, Some(pattern)) => format!("/{pattern}/"),
            (None, None) => return Err(ActionFailure::new(FailureKind::Invalid, "expectUrl needs url or urlRegex")),
        };
        let mut backoff = Backoff::new(deadline);
        let mut found: String;
        // The address changes only by a navigation, so a pause ends at the tab's next one; the
        // pauses still bound the wait if the events cannot be followed. Listening starts before
        // the first look, so a navigation between a look and the pause is not missed.
        let mut navigations = self.navigation_events().await;
        loop {
            let current = self.url().await.map_err(browser_failure)?;
            found = relativize_url(&self.base_url, &current);
            let pass = match &pattern {
                Some(pattern) => pattern.is_match(&path_and_query(&current)) || pattern.is_match(&found),
                None => found == expected,
            };
            if pass {
                return Ok(());
            }
            let navigated = async {
                match navigations.as_mut() {
                    Some((documents, fragments)) => {
                        let ended = tokio::select! {
                            event = documents.next() => event.is_none(),
                            event = fragments.next() => event.is_none(),
                        };
                        // A stream that ended (the tab is gone) wakes nothing: the pause runs out.
                        if ended {
                            std::future::pending::<()>().await;
                        }
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            if !backoff.next_or(navigated).await {
                break;
            }
        }
        let what = if pattern.is_some() { "URL matching" } else { "URL" };
        Err(ActionFailure::new(
            FailureKind::AssertionFailed,
            format!(
                "expectUrl: expected {what} {}, found {} (after {})",
                quote(&expected),
                quote(&found),
                seconds(timeout)
            ),
        )
        .with(Some(expected), Some(found)))
    }

    /// The active tab's navigations, to and within a document; `None` if they cannot be
    /// followed.
    async fn navigation_events(
        &self,
    ) -> Option<(EventStream<EventFrameNavigated>, EventStream<EventNavigatedWithinDocument>)> {
        let page = self.active_page().ok()?;
        let documents = page.event_listener::<EventFrameNavigated>().await.ok()?;
        let fragments = page.event_listener::<EventNavigatedWithinDocument>().await.ok()?;
        Some((documents, fragments))
    }

    async fn expect_element(
        &self,
        action: &Action,
        target: &Target,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Option<Resolved>, ActionFailure> {
        let verb = action.type_name();
        if let Action::ExpectText { text: None, text_regex: None, .. } = action {
            return Err(ActionFailure::new(FailureKind::Invalid, format!("{verb}: needs text or textRegex")));
        }
        let text_regex = match action {
            Action::ExpectText { text_regex: Some(pattern), .. } => match Regex::new(pattern) {
                Ok(pattern) => Some(pattern),
                Err(error) => {
                    return Err(ActionFailure::new(
                        FailureKind::Invalid,
                        format!("{verb}: invalid textRegex: {error}"),
                    ));
                }
            },
            _ => None,
        };
        retry(verb, target, deadline, timeout, async || {
            self.check_element(action, target, text_regex.as_ref(), group).await
        })
        .await
    }

    /// One check of an element assertion.
    async fn check_element(
        &self,
        action: &Action,
        target: &Target,
        text_regex: Option<&Regex>,
        group: &str,
    ) -> Attempt<Option<Resolved>> {
        let page = match self.active_page() {
            Ok(page) => page,
            Err(error) => return Attempt::Fail(browser_failure(error)),
        };
        if let Err(error) = self.front(&page).await {
            return on_cdp(error);
        }
        let found = match locate::locate(&page, target, group).await {
            Ok(Located::One(found)) => found,
            // Absent counts as hidden; several are a strictness failure, as in Playwright.
            Ok(Located::None(report)) if !report.ambiguous && matches!(action, Action::ExpectHidden { .. }) => {
                return Attempt::Done(None);
            }
            Ok(Located::None(report)) => return Attempt::Retry(Pending::Unresolved(report)),
            Err(error) => return on_cdp(error),
        };
        let object = found.object_id.as_str();
        let checked = crate::timing::span("check");
        let verdict: Result<(bool, String, String), CdpFail> = async {
            Ok(match action {
                Action::ExpectVisible { .. } | Action::ExpectHidden { .. } => {
                    let visible = cdp::call_value(&page, object, js::VISIBLE, &[]).await?.as_bool().unwrap_or(false);
                    let want = matches!(action, Action::ExpectVisible { .. });
                    let word = |visible: bool| if visible { "visible" } else { "hidden" }.to_owned();
                    (visible == want, word(want), word(visible))
                }
                Action::ExpectText { text, .. } => {
                    let raw = cdp::call_value(&page, object, js::TEXT, &[]).await?;
                    let actual = normalize_whitespace(raw.as_str().unwrap_or_default());
                    match (text, text_regex) {
                        (_, Some(pattern)) => {
                            (pattern.is_match(&actual), format!("text matching /{pattern}/"), quote(&actual))
                        }
                        (Some(text), None) => {
                            (actual == normalize_whitespace(text), format!("text {}", quote(text)), quote(&actual))
                        }
                        (None, None) => {
                            return Err(CdpFail::Protocol("expectText needs text or textRegex".to_owned()));
                        }
                    }
                }
                Action::ExpectValue { value, .. } => {
                    let answer = cdp::call_value(&page, object, js::VALUE, &[]).await?;
                    match answer.get("value").and_then(Value::as_str) {
                        Some(actual) => (actual == value, format!("value {}", quote(value)), quote(actual)),
                        None => {
                            let error = answer.get("error").and_then(Value::as_str).unwrap_or("no value").to_owned();
                            (false, format!("value {}", quote(value)), error)
                        }
                    }
                }
                Action::ExpectState { state, .. } => {
                    let state_json = serde_json::to_value(state).unwrap_or(Value::Null);
                    let answer = cdp::call_value(&page, object, js::STATE, &[state_json]).await?;
                    let pass = answer.get("pass").and_then(Value::as_bool).unwrap_or(false);
                    let found = answer.get("found").and_then(Value::as_str).unwrap_or_default().to_owned();
                    (pass, describe_state(state), found)
                }
                _ => (false, String::new(), "not an element assertion".to_owned()),
            })
        }
        .await;
        drop(checked);
        match verdict {
            // A hidden element is not in the accessibility tree, so the role tier cannot see
            // what `expectHidden` checks: a weaker tier finding it is no sign of drift.
            Ok((true, _, _)) if matches!(action, Action::ExpectHidden { .. }) => {
                Attempt::Done(Some(Resolved::without_drift(&found)))
            }
            Ok((true, _, _)) => Attempt::Done(Some(Resolved::observe(&page, target, &found).await)),
            Ok((false, expected, actual)) => {
                Attempt::Retry(Pending::Assertion { expected, found: actual, found_by: found.fallback_locator(target) })
            }
            Err(error) => on_cdp(error),
        }
    }

    async fn expect_count(
        &self,
        target: &Target,
        count: u32,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Tier, ActionFailure> {
        let mut backoff = Backoff::new(deadline);
        let mut last: Pending;
        loop {
            let attempt = async {
                let page = self.active_page().map_err(|error| CdpFail::Dead(error.to_string()))?;
                self.front(&page).await?;
                locate::count(&page, target, group).await
            };
            match tokio::time::timeout_at(backoff.attempt_deadline().into(), attempt).await {
                Ok(Ok(Ok((Some(tier), actual)))) if actual == count as usize => return Ok(tier),
                Ok(Ok(Ok((_, actual)))) => {
                    last = Pending::Assertion {
                        expected: format!("{count} elements"),
                        found: format!("{actual}"),
                        found_by: None,
                    };
                }
                Ok(Ok(Err(report))) => last = Pending::Unresolved(report),
                Ok(Err(CdpFail::Dead(message))) => return Err(ActionFailure::new(FailureKind::Browser, message)),
                Ok(Err(error)) => last = Pending::Unsettled(error.to_string()),
                Err(_) => last = Pending::Unsettled("the page did not answer".to_owned()),
            }
            if !backoff.next().await {
                return Err(give_up("expectCount", Some(target), last, timeout));
            }
        }
    }
}

impl ActionFailure {
    /// Puts `verb target:` in front of a message that does not say what it is about yet, with
    /// the fallback that found the element when one did.
    fn prefixed(mut self, verb: &str, target: &Target) -> ActionFailure {
        self.message = format!("{}: {}", about(verb, target, self.found_by.as_deref()), self.message);
        self
    }
}

/// `click button "Save"`, or `click button "Save" (found by css "#save")` when a fallback
/// found the element: a message must name what it looked at.
fn about(verb: &str, target: &Target, found_by: Option<&str>) -> String {
    match found_by {
        Some(locator) => format!("{verb} {target} (found by {locator})"),
        None => format!("{verb} {target}"),
    }
}

impl Pending {
    /// Names the fallback that found the element, for a state that is about the element.
    fn found_by(self, locator: Option<String>) -> Pending {
        match self {
            Pending::NotActionable { reason, .. } => Pending::NotActionable { reason, found_by: locator },
            Pending::Assertion { expected, found, .. } => Pending::Assertion { expected, found, found_by: locator },
            other => other,
        }
    }
}

/// Runs `attempt` until it is done or fails for good, with backoff until `deadline`. Each try is
/// bounded on its own, so a page that stops answering cannot hold the run past its timeout.
async fn retry<T>(
    verb: &str,
    target: &Target,
    deadline: Instant,
    timeout: Duration,
    mut attempt: impl AsyncFnMut() -> Attempt<T>,
) -> Result<T, ActionFailure> {
    let mut backoff = Backoff::new(deadline);
    loop {
        let last = match tokio::time::timeout_at(backoff.attempt_deadline().into(), attempt()).await {
            Ok(Attempt::Done(done)) => return Ok(done),
            Ok(Attempt::Fail(failure)) => return Err(failure.prefixed(verb, target)),
            Ok(Attempt::Retry(pending)) => pending,
            Err(_) => Pending::Unsettled("the page did not answer".to_owned()),
        };
        if !backoff.next().await {
            return Err(give_up(verb, Some(target), last, timeout));
        }
    }
}

/// The failure after the timeout ran out, from the last attempt's state.
fn give_up(verb: &str, target: Option<&Target>, last: Pending, timeout: Duration) -> ActionFailure {
    let found_by = match &last {
        Pending::NotActionable { found_by, .. } | Pending::Assertion { found_by, .. } => found_by.clone(),
        Pending::Unresolved(_) | Pending::Unsettled(_) => None,
    };
    let about = match target {
        Some(target) => about(verb, target, found_by.as_deref()),
        None => verb.to_owned(),
    };
    let after = seconds(timeout);
    match last {
        Pending::Unresolved(report) => {
            let (kind, what) = if report.ambiguous {
                (FailureKind::Ambiguous, "no tier matched exactly one element")
            } else {
                (FailureKind::NotFound, "no element matched")
            };
            let found = report.summary();
            ActionFailure::new(kind, format!("{about}: {what} within {after}: {found}"))
                .with(target.map(ToString::to_string), Some(found))
        }
        Pending::NotActionable { reason, .. } => ActionFailure::new(
            FailureKind::NotActionable { reason: reason.clone() },
            format!("{about}: not actionable after {after}: {reason}"),
        )
        .with(None, Some(reason))
        .found_by(found_by),
        Pending::Assertion { expected, found, .. } => ActionFailure::new(
            FailureKind::AssertionFailed,
            format!("{about}: expected {expected}, found {found} (after {after})"),
        )
        .with(Some(expected), Some(found))
        .found_by(found_by),
        Pending::Unsettled(message) => ActionFailure::new(
            FailureKind::Timeout,
            format!("{about}: the page did not settle within {after}: {message}"),
        )
        .with(None, Some(message)),
    }
}

/// A failure after input was dispatched: reported, never retried.
fn dispatched(verb: &str, target: &Target, found: &Found, error: CdpFail) -> ActionFailure {
    ActionFailure::new(
        FailureKind::Browser,
        format!("the input was (partly) dispatched, then the browser failed: {error}; not retried"),
    )
    .found_by(found.fallback_locator(target))
    .prefixed(verb, target)
}

/// `{ ok }` / `{ ok: false, reason, fatal }` from a page script.
fn script_outcome(answer: &Value) -> Attempt<()> {
    if answer.get("ok").and_then(Value::as_bool) == Some(true) {
        return Attempt::Done(());
    }
    let reason = answer.get("reason").and_then(Value::as_str).unwrap_or("the page refused").to_owned();
    if answer.get("fatal").and_then(Value::as_bool) == Some(true) {
        Attempt::Fail(ActionFailure::new(FailureKind::NotActionable { reason: reason.clone() }, reason))
    } else {
        Attempt::Retry(Pending::NotActionable { reason, found_by: None })
    }
}

/// Whether a checkbox or radio is checked; a radio cannot be unchecked by clicking it.
async fn checked_state(page: &Page, object_id: &str, want: bool) -> Attempt<bool> {
    match cdp::call_value(page, object_id, js::CHECKED, &[]).await {
        Ok(answer) => {
            if let Some(error) = answer.get("error").and_then(Value::as_str) {
                let reason = error.to_owned();
                return Attempt::Fail(ActionFailure::new(
                    FailureKind::NotActionable { reason: reason.clone() },
                    reason,
                ));
            }
            let checked = answer.get("checked").and_then(Value::as_bool).unwrap_or(false);
            if !want && checked && answer.get("radio").and_then(Value::as_bool) == Some(true) {
                let reason = "a radio button cannot be unchecked".to_owned();
                return Attempt::Fail(ActionFailure::new(
                    FailureKind::NotActionable { reason: reason.clone() },
                    reason,
                ));
            }
            Attempt::Done(checked)
        }
        Err(error) => on_cdp(error),
    }
}

fn describe_state(state: &ElementState) -> String {
    match state {
        ElementState::Class { token } => format!("class {token:?}"),
        ElementState::Attribute { name, value: Some(value) } => format!("attribute {name}={value:?}"),
        ElementState::Attribute { name, value: None } => format!("attribute {name}"),
        ElementState::Css { property, value } => format!("css {property}: {value}"),
        ElementState::Checked => "checked".to_owned(),
        ElementState::Unchecked => "unchecked".to_owned(),
        ElementState::Disabled => "disabled".to_owned(),
        ElementState::Enabled => "enabled".to_owned(),
        ElementState::Focused => "focused".to_owned(),
    }
}

async fn mouse(page: &Page, kind: &str, x: f64, y: f64) -> Result<Value, CdpFail> {
    let mut params = json!({ "type": kind, "x": x, "y": y });
    if kind != "mouseMoved" {
        params["button"] = json!("left");
        params["clickCount"] = json!(1);
        params["buttons"] = json!(if kind == "mousePressed" { 1 } else { 0 });
    }
    cdp::call(page, "Input.dispatchMouseEvent", params).await
}

/// How long dispatched input may take to be acknowledged before the action is reported as
/// failed (it is not retried either way).
const DISPATCH_LIMIT: Duration = Duration::from_secs(10);

/// Bounds the wait for Chromium to acknowledge input events.
async fn acknowledged<T>(dispatch: impl Future<Output = Result<T, CdpFail>>) -> Result<T, CdpFail> {
    let _timed = crate::timing::span("input");
    tokio::time::timeout(DISPATCH_LIMIT, dispatch).await.unwrap_or(Err(CdpFail::Timeout))
}

/// A real click: move, press, release, at the element's centre.
async fn click_at(page: &Page, x: f64, y: f64) -> Result<(), CdpFail> {
    mouse(page, "mouseMoved", x, y).await?;
    mouse(page, "mousePressed", x, y).await?;
    mouse(page, "mouseReleased", x, y).await?;
    Ok(())
}

fn action_timeout(action: &Action) -> Option<Duration> {
    action.timeout_ms().map(Duration::from_millis)
}
