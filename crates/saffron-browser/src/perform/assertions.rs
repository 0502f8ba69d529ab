//! Element assertions: visible, hidden, text, value, state and count, retried until the
//! timeout.

use std::time::{Duration, Instant};

use regex::Regex;
use saffron_recording::{Action, ElementState, Target, Tier};
use serde_json::Value;

use crate::cdp::{self, CdpFail};
use crate::context::Context;
use crate::error::{ActionFailure, FailureKind};
use crate::locate::{self, Located};
use crate::{js, normalize_whitespace};

use super::retry::{Attempt, Backoff, Pending, Resolved, give_up, on_cdp, retry};
use super::{compiled, quote};

impl Context {
    pub(super) async fn expect_element(
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
            Action::ExpectText { text_regex, .. } => {
                let pattern = text_regex.as_deref().map(|pattern| self.guard.judged_pattern(pattern));
                compiled(verb, "textRegex", pattern.as_deref())?
            }
            _ => None,
        };
        retry(self, verb, target, deadline, timeout, async || {
            self.check_element(action, target, text_regex.as_ref(), group).await
        })
        .await
    }

    /// One check of an element assertion.
    pub(super) async fn check_element(
        &self,
        action: &Action,
        target: &Target,
        text_regex: Option<&Regex>,
        group: &str,
    ) -> Attempt<Option<Resolved>> {
        let page = match self.front_page().await {
            Ok(page) => page,
            Err(attempt) => return attempt,
        };
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
                    let actual = self.guard.judged_owned(normalize_whitespace(raw.as_str().unwrap_or_default()));
                    match (text, text_regex) {
                        (_, Some(pattern)) => {
                            (pattern.is_match(&actual), format!("text matching /{pattern}/"), quote(&actual))
                        }
                        (Some(text), None) => {
                            let expected = self.guard.judged_owned(normalize_whitespace(text));
                            (actual == expected, format!("text {}", quote(text)), quote(&actual))
                        }
                        (None, None) => {
                            return Err(CdpFail::Protocol("expectText needs text or textRegex".to_owned()));
                        }
                    }
                }
                Action::ExpectValue { value, .. } => {
                    let answer = cdp::call_value(&page, object, js::VALUE, &[]).await?;
                    match answer.get("value").and_then(Value::as_str) {
                        Some(actual) => {
                            let (actual, expected) = (self.guard.judged(actual), self.guard.judged(value));
                            (actual == expected, format!("value {}", quote(value)), quote(&actual))
                        }
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
            Ok((true, _, _)) => {
                let resolved = Resolved::observe(&page, target, &found).await;
                // Found by a fallback, but another element than the one recorded: the check
                // holds of the wrong thing, so it does not hold yet. (Found by the recorded
                // locator, it is the recorded element, whatever else changed.)
                let text_is_checked = matches!(action, Action::ExpectText { .. });
                let contradiction = if found.by_recorded_locator(target) {
                    None
                } else {
                    resolved.drift.iter().find(|drift| drift.contradicts(text_is_checked))
                };
                match contradiction {
                    Some(contradiction) => Attempt::Retry(Pending::Assertion {
                        expected: contradiction.recorded_signal(),
                        found: contradiction.found_signal(),
                        found_by: found.fallback_locator(target),
                    }),
                    None => Attempt::Done(Some(resolved)),
                }
            }
            Ok((false, expected, actual)) => {
                Attempt::Retry(Pending::Assertion { expected, found: actual, found_by: found.fallback_locator(target) })
            }
            Err(error) => on_cdp(error),
        }
    }

    pub(super) async fn expect_count(
        &self,
        target: &Target,
        count: u32,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Tier, ActionFailure> {
        let mut backoff = Backoff::new(deadline);
        let mut looks = crate::interruption::Looks::default();
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
            if let Some(interrupted) = self.interrupted("expectCount", &mut looks).await {
                return Err(interrupted);
            }
            if !backoff.next().await {
                return Err(give_up("expectCount", Some(target), last, timeout));
            }
        }
    }
}

pub(super) fn describe_state(state: &ElementState) -> String {
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
