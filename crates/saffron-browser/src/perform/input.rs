//! Input actions: fill, select, press, check and uncheck, and the mouse and keyboard events
//! they dispatch once (never retried).

use std::time::{Duration, Instant};

use crate::page::Page;
use saffron_recording::Target;
use serde_json::{Value, json};

use crate::cdp::{self, CdpFail};
use crate::context::Context;
use crate::drift;
use crate::error::{ActionFailure, FailureKind};
use crate::js;
use crate::keys;
use crate::locate::Found;

use super::browser_failure;
use super::retry::{Attempt, Checks, Ready, Resolved, give_up, on_cdp, script_outcome};

impl Context {
    pub(super) async fn fill(
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
                    let delete = keys::parse("Delete").map_err(|error| CdpFail::Protocol(error.to_string()))?;
                    send_keys(page, keys::events(&delete)).await?;
                } else {
                    // The browser fires `beforeinput` and `input` itself. No `change`: it comes
                    // when the value is committed, by a later Enter, Tab or click elsewhere, as
                    // for a person who types.
                    insert_text(page, &ready.found.object_id, value).await?;
                }
                Ok(())
            };
            acknowledged(typed).await.map_err(|error| dispatched("fill", target, &ready.found, error))?;
        }
        Ok(resolved)
    }

    /// Focuses the field, then types `text` key by key after what it holds.
    pub(super) async fn type_text(
        &self,
        target: &Target,
        text: &str,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Resolved, ActionFailure> {
        let ready = self.ready("typeText", target, &Checks::typing(), deadline, timeout, group).await?;
        let resolved = Resolved::observe(&ready.page, target, &ready.found).await;
        let page = &ready.page;
        let focused = cdp::call_value(page, &ready.found.object_id, js::FOCUS_AT_END, &[]).await.map_err(|error| {
            ActionFailure::new(FailureKind::Browser, error.to_string()).prefixed("typeText", target)
        })?;
        if focused.get("ok").and_then(Value::as_bool) != Some(true) {
            let reason = focused.get("reason").and_then(Value::as_str).unwrap_or("it could not be focused").to_owned();
            return Err(ActionFailure::new(FailureKind::NotActionable { reason: reason.clone() }, reason)
                .found_by(ready.found.fallback_locator(target))
                .prefixed("typeText", target));
        }
        let typed = async {
            for character in text.chars() {
                // A person who takes over mid-word gets the field as it is: no key after that.
                if let Err(failure) = self.guard.fenced("typeText") {
                    return Err(CdpFail::Protocol(failure.message));
                }
                match keys::typing(character) {
                    Some(events) => send_keys(page, events).await?,
                    None => insert_text(page, &ready.found.object_id, &character.to_string()).await?,
                }
            }
            Ok(())
        };
        acknowledged(typed).await.map_err(|error| dispatched("typeText", target, &ready.found, error))?;
        Ok(resolved)
    }

    pub(super) async fn select(
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
                if let Err(attempt) = self.secret_may_go_into(page, found).await {
                    return attempt;
                }
                let drift = drift::observe(page, target, found).await;
                match cdp::call_value(page, &found.object_id, js::SELECT, std::slice::from_ref(&values)).await {
                    Ok(answer) => script_outcome(&answer).map(|()| drift),
                    Err(error) => on_cdp(error),
                }
            })
            .await?;
        Ok(Resolved::without_drift(&found).with_drift(drift))
    }

    pub(super) async fn press(
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
                        if let Err(attempt) = self.secret_may_go_into(page, found).await {
                            return attempt;
                        }
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
                self.secret_may_go_to_the_page(&format!("press {key:?}")).await?;
                let page = self.active_page().map_err(browser_failure)?;
                self.front(&page)
                    .await
                    .map_err(|error| ActionFailure::new(FailureKind::Browser, format!("press {key:?}: {error}")))?;
                (page, None)
            }
        };
        let typed = send_keys(&page, keys::events(&chord));
        acknowledged(typed).await.map_err(|error| {
            ActionFailure::new(
                FailureKind::Browser,
                format!("press {key:?}: the key events failed midway: {error}; not retried"),
            )
        })?;
        Ok(resolved)
    }

    /// Check or uncheck: click only if the state differs, then verify the click changed it.
    pub(super) async fn check(
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
        acknowledged(click_at(&ready, 1)).await.map_err(|error| dispatched(verb, target, &ready.found, error))?;
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
}

/// A failure after input was dispatched: reported, never retried.
pub(super) fn dispatched(verb: &str, target: &Target, found: &Found, error: CdpFail) -> ActionFailure {
    ActionFailure::new(
        FailureKind::Browser,
        format!("the input was (partly) dispatched, then the browser failed: {error}; not retried"),
    )
    .found_by(found.fallback_locator(target))
    .prefixed(verb, target)
}

/// Whether a checkbox or radio is checked; a radio cannot be unchecked by clicking it.
pub(super) async fn checked_state(page: &Page, object_id: &str, want: bool) -> Attempt<bool> {
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

pub(super) async fn mouse(page: &Page, kind: &str, x: f64, y: f64) -> Result<Value, CdpFail> {
    button(page, kind, x, y, 1).await
}

/// Moves the pointer onto the element's actionable point (in its own frame, in Firefox: see
/// [`click_at`]).
pub(super) async fn hover_at(ready: &Ready) -> Result<(), CdpFail> {
    if let Page::Firefox(tab) = &ready.page {
        let (frame, _) = crate::firefox::parse_handle(&ready.found.object_id)?;
        return tab.mouse(frame, "mouseMoved", ready.local).await;
    }
    mouse(&ready.page, "mouseMoved", ready.x, ready.y).await.map(drop)
}

/// A mouse event; `click_count` is the press's place in a run of clicks (2 for the second
/// press of a double-click, on whose release the browser fires `dblclick`).
async fn button(page: &Page, kind: &str, x: f64, y: f64, click_count: u32) -> Result<Value, CdpFail> {
    if let Page::Firefox(tab) = page {
        return tab.mouse(&tab.context, kind, (x, y)).await.map(|()| Value::Null);
    }
    let mut params = json!({ "type": kind, "x": x, "y": y });
    if kind != "mouseMoved" {
        params["button"] = json!("left");
        params["clickCount"] = json!(click_count);
        params["buttons"] = json!(if kind == "mousePressed" { 1 } else { 0 });
    }
    cdp::call(page, "Input.dispatchMouseEvent", params).await
}

/// Key events (see `keys.rs`), in order, to the focused element.
pub(super) async fn send_keys(page: &Page, events: Vec<Value>) -> Result<(), CdpFail> {
    if let Page::Firefox(tab) = page {
        return tab.keys(&events).await;
    }
    for event in events {
        cdp::call(page, "Input.dispatchKeyEvent", event).await?;
    }
    Ok(())
}

/// Text at the caret of the focused field (`field`, focused by the caller), in one input event
/// and without key events.
async fn insert_text(page: &Page, field: &str, text: &str) -> Result<(), CdpFail> {
    if let Page::Firefox(tab) = page {
        return tab.insert_text(field, text).await;
    }
    cdp::call(page, "Input.insertText", json!({ "text": text })).await.map(|_| ())
}

/// How long dispatched input may take to be acknowledged before the action is reported as
/// failed (it is not retried either way).
pub(super) const DISPATCH_LIMIT: Duration = Duration::from_secs(10);

/// Bounds the wait for Chromium to acknowledge input events.
pub(super) async fn acknowledged<T>(dispatch: impl Future<Output = Result<T, CdpFail>>) -> Result<T, CdpFail> {
    let _timed = crate::timing::span("input");
    tokio::time::timeout(DISPATCH_LIMIT, dispatch).await.unwrap_or(Err(CdpFail::Timeout))
}

/// A tap at the element's centre, as a finger's: a touch starts and ends there, and the
/// browser fires the touch events and then the click (touch emulation is on for the device).
pub(super) async fn tap_at(page: &Page, x: f64, y: f64) -> Result<(), CdpFail> {
    let point = json!([{ "x": x, "y": y, "radiusX": 1, "radiusY": 1, "force": 1 }]);
    cdp::call(page, "Input.dispatchTouchEvent", json!({ "type": "touchStart", "touchPoints": point })).await?;
    cdp::call(page, "Input.dispatchTouchEvent", json!({ "type": "touchEnd", "touchPoints": [] })).await?;
    Ok(())
}

/// Real clicks at the element's actionable point, as a person's: move, then `clicks` presses
/// and releases in place, each counted as its place in the run (on the second release the
/// browser fires `dblclick`).
pub(super) async fn click_at(ready: &Ready, clicks: u32) -> Result<(), CdpFail> {
    let (page, x, y) = (&ready.page, ready.x, ready.y);
    if let Page::Firefox(tab) = page {
        // In the element's frame (WebDriver input at the page's viewport does not reach into a
        // frame of another site), in one sequence, so that Firefox counts the presses as one
        // run of clicks.
        let (frame, _) = crate::firefox::parse_handle(&ready.found.object_id)?;
        return tab.click(frame, ready.local, clicks).await;
    }
    mouse(page, "mouseMoved", x, y).await?;
    for click_count in 1..=clicks {
        button(page, "mousePressed", x, y, click_count).await?;
        button(page, "mouseReleased", x, y, click_count).await?;
    }
    Ok(())
}
