//! Performing one action: resolve, wait for actionability, act once; or check, retrying until
//! the timeout.
//!
//! Waiting and retrying happen only before an action is dispatched. Once the mouse or keyboard
//! events of a click, a key press or a dialog answer are sent, the action is over, whatever
//! comes next: "the click was lost" and "the click worked and the answer is slow" look the
//! same from outside, and only the first may be retried safely.

mod assertions;
mod commit;
mod download;
mod drag;
mod input;
mod navigation;
mod network;
mod retry;
mod upload;

use std::time::{Duration, Instant};

use saffron_recording::{Action, Tier};
use serde_json::json;

use crate::cdp;
use crate::context::{Context, DialogAnswer};
use crate::drift::Drift;
use crate::error::{ActionFailure, BrowserError, FailureKind};
use crate::js;

use input::{acknowledged, click_at, dispatched};
use retry::{Checks, Resolved};

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
    /// With [`Context::refresh_drift`] on and drift read: the target the ladder records for
    /// the element found, read before the action (as a recording would have it today).
    pub fresh: Option<saffron_recording::Target>,
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

fn browser_failure(error: BrowserError) -> ActionFailure {
    ActionFailure::new(FailureKind::Browser, error.to_string())
}

/// An action's optional pattern, compiled; one that does not compile fails the action.
fn compiled(verb: &str, operand: &str, pattern: Option<&str>) -> Result<Option<regex::Regex>, ActionFailure> {
    pattern
        .map(regex::Regex::new)
        .transpose()
        .map_err(|error| ActionFailure::new(FailureKind::Invalid, format!("{verb}: invalid {operand}: {error}")))
}

fn quote(text: &str) -> String {
    format!("{text:?}")
}

impl Context {
    /// Performs one resolved action or assertion in the active tab.
    ///
    /// The timeout is the action's own `timeoutMs` when it has one, else `timeout`, else the
    /// browser's default timeout. Element actions wait (up to it) for their element to be found
    /// uniquely and to become actionable, then act once; assertions retry until it runs out.
    pub async fn perform(&mut self, action: &Action, timeout: Option<Duration>) -> Result<Performed, ActionFailure> {
        self.perform_guarded(action, timeout, crate::guard::Guard::default()).await
    }

    /// [`Context::perform`] under `guard`: where the action's secret may go, and whether a check
    /// is judged on masked text.
    pub async fn perform_guarded(
        &mut self,
        action: &Action,
        timeout: Option<Duration>,
        guard: crate::guard::Guard,
    ) -> Result<Performed, ActionFailure> {
        self.guard = guard;
        let performed = self.perform_now(action, timeout).await;
        self.guard = crate::guard::Guard::default();
        performed
    }

    async fn perform_now(&mut self, action: &Action, timeout: Option<Duration>) -> Result<Performed, ActionFailure> {
        let started = Instant::now();
        *crate::lock(&self.trail) = crate::observed::ActionTrail::default();
        let _timed = crate::timing::action(action.type_name());
        let timeout = action_timeout(action).or(timeout).unwrap_or(self.default_timeout);
        let deadline = started + timeout;
        self.group_counter += 1;
        let group = format!("saffron-{}", self.group_counter);
        let navigations = match starts_navigations(action) {
            true => match self.active_page() {
                Ok(page) => commit::Navigations::listen(self, &page).await,
                Err(_) => None,
            },
            false => None,
        };
        let outcome = retry::REFRESH.scope(self.refresh_drift, self.dispatch(action, deadline, timeout, &group)).await;
        if let (Ok(_), Some(navigations)) = (&outcome, navigations) {
            navigations.settle(self, Instant::now() + timeout).await;
        }
        self.release(group);
        let (tier, locator, drift, fresh) = match outcome? {
            Some(resolved) => (Some(resolved.tier), Some(resolved.locator), resolved.drift, resolved.fresh),
            None => (None, None, Vec::new(), None),
        };
        let notes = self.shared.update(|state| std::mem::take(&mut state.notes));
        Ok(Performed { tier, locator, drift, duration: started.elapsed(), notes, fresh })
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
        self.guard.fenced(name)?;
        match action {
            Action::Goto { url, .. } => self.goto(url, deadline, timeout).await.map(|()| None),
            Action::Click { target, .. } | Action::DoubleClick { target, .. } => {
                let clicks = if matches!(action, Action::DoubleClick { .. }) { 2 } else { 1 };
                let ready = self.ready(name, target, &Checks::click(), deadline, timeout, group).await?;
                let resolved = Resolved::observe(&ready.page, target, &ready.found).await;
                // On a touch screen a click is a tap: touch events, then the click the browser
                // makes of them (a page that listens for touches gets them).
                let tap = clicks == 1 && self.browser.config().device.is_some_and(|device| device.touch);
                let dispatch = if tap {
                    acknowledged(input::tap_at(&ready.page, ready.x, ready.y)).await
                } else {
                    acknowledged(click_at(&ready, clicks)).await
                };
                dispatch.map_err(|error| dispatched(name, target, &ready.found, error))?;
                Ok(Some(resolved))
            }
            Action::Hover { target, .. } => {
                let ready = self.ready(name, target, &Checks::hover(), deadline, timeout, group).await?;
                let resolved = Resolved::observe(&ready.page, target, &ready.found).await;
                acknowledged(input::hover_at(&ready))
                    .await
                    .map_err(|error| dispatched(name, target, &ready.found, error))?;
                Ok(Some(resolved))
            }
            Action::TypeText { target, text, .. } => {
                self.type_text(target, text, deadline, timeout, group).await.map(Some)
            }
            Action::Drag { target, to, .. } => self.drag(target, to, deadline, timeout, group).await.map(Some),
            Action::Fill { target, value, .. } => self.fill(target, value, deadline, timeout, group).await.map(Some),
            Action::Select { target, values, .. } => {
                self.select(target, values, deadline, timeout, group).await.map(Some)
            }
            Action::Upload { target, files, .. } => {
                self.upload(target, files, deadline, timeout, group).await.map(Some)
            }
            Action::Press { target, key, .. } => self.press(target.as_ref(), key, deadline, timeout, group).await,
            Action::Check { target, .. } => self.check(name, target, true, deadline, timeout, group).await.map(Some),
            Action::Uncheck { target, .. } => self.check(name, target, false, deadline, timeout, group).await.map(Some),
            Action::SwitchTab { index, url_pattern, .. } => {
                self.switch_tab(*index, url_pattern.as_deref(), deadline, timeout).await.map(|()| None)
            }
            Action::Dialog { accept, prompt_text, .. } => {
                if prompt_text.is_some() {
                    self.secret_may_go_to_the_page(name).await?;
                }
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
            Action::ExpectDownload { file_name, file_name_regex, contains, .. } => {
                let wanted = download::Wanted {
                    file_name: file_name.as_deref(),
                    file_name_regex: file_name_regex.as_deref(),
                    contains: contains.as_deref(),
                };
                self.expect_download(name, wanted, deadline, timeout).await.map(|()| None)
            }
            // The HTTP family is performed by the runner's HTTP client, never by a page.
            Action::Request { .. }
            | Action::ExpectStatus { .. }
            | Action::ExpectField { .. }
            | Action::ExpectSchema { .. } => Err(ActionFailure::new(
                FailureKind::Invalid,
                format!("{action}: an API action is sent by Saffron's HTTP client, not performed in the page"),
            )),
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
                Ok(Some(Resolved { tier, locator, drift: Vec::new(), fresh: None }))
            }
        }
    }
}

impl Context {
    /// With a secret in the action: refused unless the active tab shows a page of one of the
    /// secret's origins (a key press or a prompt's answer goes to that page).
    async fn secret_may_go_to_the_page(&self, verb: &str) -> Result<(), ActionFailure> {
        let Some(origins) = &self.guard.secret_origins else { return Ok(()) };
        let url = self.url().await.map_err(browser_failure)?;
        if origins.allows(&url) {
            return Ok(());
        }
        Err(ActionFailure::new(FailureKind::Refused, format!("{verb}: {}", crate::guard::refusal(origins, &url))))
    }

    /// With a secret in the action: refused unless the element's own document (its frame's,
    /// whichever frame that is) is of one of the secret's origins.
    async fn secret_may_go_into<T>(
        &self,
        page: &crate::page::Page,
        found: &crate::locate::Found,
    ) -> Result<(), retry::Attempt<T>> {
        let Some(origins) = &self.guard.secret_origins else { return Ok(()) };
        let origin = match cdp::call_value(page, &found.object_id, js::DOCUMENT_ORIGIN, &[]).await {
            Ok(origin) => origin.as_str().unwrap_or("null").to_owned(),
            Err(error) => return Err(retry::on_cdp(error)),
        };
        if origins.allows(&origin) {
            return Ok(());
        }
        let refusal = crate::guard::refusal(origins, &origin);
        Err(retry::Attempt::Fail(ActionFailure::new(
            FailureKind::Refused,
            format!("{refusal} (the field is in a frame of {origin})"),
        )))
    }
}

/// Whether the action's input may start a navigation that the action then waits for.
fn starts_navigations(action: &Action) -> bool {
    matches!(
        action,
        Action::Click { .. }
            | Action::DoubleClick { .. }
            | Action::Press { .. }
            | Action::TypeText { .. }
            | Action::Check { .. }
            | Action::Uncheck { .. }
            | Action::Select { .. }
    )
}

fn action_timeout(action: &Action) -> Option<Duration> {
    action.timeout_ms().map(Duration::from_millis)
}
