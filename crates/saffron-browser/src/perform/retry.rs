//! Actionability and auto-wait: find the element, wait until it can be acted on, retry with
//! backoff until the deadline, and word the failure when time runs out.

use std::time::{Duration, Instant};

use crate::page::Page;
use saffron_recording::{Target, Tier};
use serde_json::{Value, json};

use crate::cdp::{self, CdpFail};
use crate::context::{Context, ensure_front};
use crate::drift::{self, Drift};
use crate::error::{ActionFailure, FailureKind};
use crate::interruption::Looks;
use crate::js;
use crate::locate::{self, Found, Located, Report};
use crate::lock;

use super::{browser_failure, seconds};

/// Pauses between attempts, as Playwright's: quick at first, then steady.
pub(super) const BACKOFF_MS: [u64; 6] = [0, 20, 50, 100, 100, 200];

/// Each attempt gets at least this long, even when the deadline is closer: a last check made
/// right at the deadline must be able to finish, and the first role query of a page (Chromium
/// builds its accessibility tree then) may take a few hundred milliseconds. Only a page that
/// stops answering runs into this limit.
pub(super) const MIN_ATTEMPT: Duration = Duration::from_secs(2);

pub(super) struct Backoff {
    pub(super) deadline: Instant,
    pub(super) step: usize,
}

impl Backoff {
    pub(super) fn new(deadline: Instant) -> Backoff {
        Backoff { deadline, step: 0 }
    }

    /// Sleeps before the next attempt; `false` when the deadline has passed. The sleep is cut
    /// to the deadline, so one last attempt is made at the deadline itself.
    pub(super) async fn next(&mut self) -> bool {
        self.next_or(std::future::pending::<()>()).await
    }

    /// Like [`Backoff::next`], but the pause also ends as soon as `wake` completes (an event
    /// that may have changed what the attempt looks at).
    pub(super) async fn next_or(&mut self, wake: impl Future) -> bool {
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

    pub(super) fn attempt_deadline(&self) -> Instant {
        self.deadline.max(Instant::now() + MIN_ATTEMPT)
    }
}

tokio::task_local! {
    /// The action being performed asks for the element's target as it would be recorded now
    /// when its drift is read (see `Context::refresh_drift`).
    pub(super) static REFRESH: bool;
}

/// What an element action found: by which locator, and what drifted.
pub(super) struct Resolved {
    pub(super) tier: Tier,
    pub(super) locator: String,
    pub(super) drift: Vec<Drift>,
    /// The element's target as the ladder records it now, when asked for and drift was read.
    pub(super) fresh: Option<Target>,
}

impl Resolved {
    /// Reads the drift of `found`: before acting on it, since acting may take it away.
    pub(super) async fn observe(page: &Page, target: &Target, found: &Found) -> Resolved {
        let _timed = crate::timing::span("drift");
        let drift = drift::observe(page, target, found).await;
        let fresh = match !drift.is_empty() && REFRESH.try_with(|refresh| *refresh).unwrap_or(false) {
            true => crate::ladder::target_of_found(page, &found.object_id, target.frame.as_deref()).await,
            false => None,
        };
        Resolved { fresh, ..Resolved::without_drift(found).with_drift(drift) }
    }

    pub(super) fn without_drift(found: &Found) -> Resolved {
        Resolved { tier: found.tier, locator: found.locator(), drift: Vec::new(), fresh: None }
    }

    pub(super) fn with_drift(mut self, drift: Vec<Drift>) -> Resolved {
        self.drift = drift;
        self
    }
}

/// Why the last attempt did not succeed.
#[derive(Debug, Clone)]
pub(super) enum Pending {
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
pub(super) enum Attempt<T> {
    Done(T),
    Retry(Pending),
    Fail(ActionFailure),
}

impl<T> Attempt<T> {
    pub(super) fn map<U>(self, change: impl FnOnce(T) -> U) -> Attempt<U> {
        match self {
            Attempt::Done(value) => Attempt::Done(change(value)),
            Attempt::Retry(pending) => Attempt::Retry(pending),
            Attempt::Fail(failure) => Attempt::Fail(failure),
        }
    }
}

/// Which actionability checks an action needs (Playwright's table).
#[derive(Debug, Clone, Default)]
pub(super) struct Checks {
    visible: bool,
    enabled: bool,
    editable: bool,
    stable: bool,
    hit: bool,
    scroll: bool,
    fill: Option<String>,
}

impl Checks {
    pub(super) fn click() -> Checks {
        Checks { visible: true, enabled: true, stable: true, hit: true, scroll: true, ..Checks::default() }
    }

    pub(super) fn hover() -> Checks {
        Checks { visible: true, stable: true, hit: true, scroll: true, ..Checks::default() }
    }

    /// A field typed into key by key: it takes text (as for `fill`), but its value is not
    /// set beforehand.
    pub(super) fn typing() -> Checks {
        Checks { visible: true, enabled: true, editable: true, scroll: true, ..Checks::default() }
    }

    /// Where something is dropped: in view and visible; what is on top of it may be the
    /// dragged element itself.
    pub(super) fn drop_target() -> Checks {
        Checks { visible: true, stable: true, scroll: true, ..Checks::default() }
    }

    pub(super) fn fill(value: &str) -> Checks {
        Checks {
            visible: true,
            enabled: true,
            editable: true,
            scroll: true,
            fill: Some(value.to_owned()),
            ..Checks::default()
        }
    }

    pub(super) fn to_json(&self) -> Value {
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
pub(super) struct Ready {
    pub(super) page: Page,
    pub(super) found: Found,
    /// The point input goes to, in the page's viewport.
    pub(super) x: f64,
    pub(super) y: f64,
    /// The same point in the viewport of the element's own frame (the page's, outside frames).
    pub(super) local: (f64, f64),
    /// `fill` already set the value (date-like inputs).
    pub(super) done: bool,
}

/// The actionable point `answer` gives in the element's frame, moved out through each frame
/// around it into the page's viewport; at each frame it must be in view, and (`hit`) the frame
/// must be what is on top there. Input events are dispatched in the page's coordinates.
async fn in_page_viewport(page: &Page, found: &Found, mut answer: Value, hit: bool) -> Result<Value, CdpFail> {
    for iframe in found.frames() {
        let (x, y) = (answer.get("x").cloned().unwrap_or_default(), answer.get("y").cloned().unwrap_or_default());
        let point = cdp::call_value(page, &iframe.object_id, js::FRAME_POINT, &[x, y, json!(hit)]).await?;
        if point.get("ok").and_then(Value::as_bool) != Some(true) {
            return Ok(point);
        }
        answer["x"] = point.get("x").cloned().unwrap_or_default();
        answer["y"] = point.get("y").cloned().unwrap_or_default();
    }
    Ok(answer)
}

/// Sorts a failed call into retry (the page moved on) or fail (the browser is gone).
pub(super) fn on_cdp<T>(error: CdpFail) -> Attempt<T> {
    match error {
        CdpFail::Dead(message) => Attempt::Fail(ActionFailure::new(FailureKind::Browser, message)),
        unsupported @ CdpFail::Unsupported(_) => {
            Attempt::Fail(ActionFailure::new(FailureKind::Browser, unsupported.to_string()))
        }
        CdpFail::Protocol(message) => Attempt::Retry(Pending::Unsettled(message)),
        CdpFail::Timeout => Attempt::Retry(Pending::Unsettled("the page did not answer".to_owned())),
    }
}

impl Context {
    /// Resolves the target and waits until it passes `checks`; the heart of every element
    /// action. Nothing here dispatches input, so all of it may be retried.
    pub(super) async fn ready(
        &self,
        verb: &str,
        target: &Target,
        checks: &Checks,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Ready, ActionFailure> {
        retry(self, verb, target, deadline, timeout, async || self.try_ready(target, checks, group).await).await
    }

    /// A handler's action acts inside its interruption, or not at all: asked of every element
    /// an input action has found (through `ready` or `resolve_then`), right before acting on it.
    async fn within_bounds<T>(&self, page: &Page, found: &Found, group: &str) -> Result<(), Attempt<T>> {
        match &self.guard.inside {
            Some(bounds) => self.acts_inside(page, found, bounds, group).await,
            None => Ok(()),
        }
    }

    /// `Ok` when `found` is where a handler may act (see [`crate::HandlerBounds`]), else the
    /// refusal: a handler clears its interruption and touches nothing else. Asked on every
    /// attempt, right before the element is acted on: a page that moved on while the action
    /// waited (a sign-in that led back to the app) is no longer the interruption.
    async fn acts_inside<T>(
        &self,
        page: &Page,
        found: &Found,
        bounds: &crate::HandlerBounds,
        group: &str,
    ) -> Result<(), Attempt<T>> {
        let refused = |why: String| {
            Attempt::Fail(ActionFailure::new(
                FailureKind::Refused,
                format!("refused: {why}, and a handler acts only inside the interruption it clears"),
            ))
        };
        let url = page.url().await.ok().flatten().unwrap_or_default();
        if bounds.own_page.as_deref() == Some(url.as_str()) {
            return Ok(());
        }
        let detector = &bounds.detector;
        if detector.url_regex.is_some() && !detector.at(&url, &self.base_url) {
            return Err(refused(format!("the page is at {url}, no longer the interruption's address")));
        }
        let Some(inside) = &detector.target else { return Ok(()) };
        let container = match locate::locate(page, inside, group).await {
            Ok(Located::One(container)) => container,
            Ok(Located::None(_)) => return Err(refused(format!("the interruption ({inside}) no longer shows"))),
            Err(error) => return Err(on_cdp(error)),
        };
        let within = cdp::call_with(
            page,
            &container.object_id,
            crate::js::INSIDE_INTERRUPTION,
            &[cdp::Argument::Object(found.object_id.clone())],
            true,
        )
        .await
        .map_err(on_cdp)?;
        if within.value == Some(Value::Bool(true)) {
            Ok(())
        } else {
            Err(refused(format!("the element {} is outside the interruption ({inside})", found.locator())))
        }
    }

    /// The active tab, brought to the front, or the attempt's outcome when it cannot be.
    pub(super) async fn front_page<T>(&self) -> Result<Page, Attempt<T>> {
        let page = self.active_page().map_err(|error| Attempt::Fail(browser_failure(error)))?;
        self.front(&page).await.map_err(on_cdp)?;
        Ok(page)
    }

    pub(super) async fn try_ready(&self, target: &Target, checks: &Checks, group: &str) -> Attempt<Ready> {
        let page = match self.front_page().await {
            Ok(page) => page,
            Err(attempt) => return attempt,
        };
        let found = match locate::locate(&page, target, group).await {
            Ok(Located::One(found)) => found,
            Ok(Located::None(report)) => return Attempt::Retry(Pending::Unresolved(report)),
            Err(error) => return on_cdp(error),
        };
        if let Err(attempt) = self.within_bounds(&page, &found, group).await {
            return attempt;
        }
        // Typing goes where the field is: a secret only into a page of its own origins.
        if (checks.fill.is_some() || checks.editable)
            && let Err(attempt) = self.secret_may_go_into(&page, &found).await
        {
            return attempt;
        }
        let actionable = crate::timing::span("actionable");
        if checks.scroll
            && found.frame.is_some()
            && let Err(error) = scroll_into_view(&page, &found.object_id).await
        {
            // The page's script scrolls only the frame's own document, not the pages around it.
            return on_cdp(error);
        }
        let mut answer = match cdp::call_value(&page, &found.object_id, js::ACTIONABLE, &[checks.to_json()]).await {
            Ok(answer) => answer,
            Err(error) => return on_cdp(error),
        };
        let local = (
            answer.get("x").and_then(Value::as_f64).unwrap_or(0.0),
            answer.get("y").and_then(Value::as_f64).unwrap_or(0.0),
        );
        if answer.get("ok").and_then(Value::as_bool) == Some(true) {
            let (x, y) = (answer.get("x").and_then(Value::as_f64), answer.get("y").and_then(Value::as_f64));
            answer = match in_page_viewport(&page, &found, answer, checks.hit).await {
                Ok(answer) => answer,
                Err(error) => return on_cdp(error),
            };
            // The box moves out of its frames as its point did.
            if let (Some(x), Some(y), Some(rect)) = (x, y, answer.get("box")) {
                let shift =
                    |name: &str, from: f64| answer.get(name).and_then(Value::as_f64).map_or(0.0, |to| to - from);
                let number = |name: &str| rect.get(name).and_then(Value::as_f64).unwrap_or(0.0);
                lock(&self.trail).bounds = Some(crate::observed::Bounds {
                    x: number("x") + shift("x", x),
                    y: number("y") + shift("y", y),
                    width: number("width"),
                    height: number("height"),
                });
            }
        }
        drop(actionable);
        if answer.get("ok").and_then(Value::as_bool) == Some(true) {
            let coordinate = |name: &str| answer.get(name).and_then(Value::as_f64).unwrap_or(0.0);
            let done = answer.get("done").and_then(Value::as_bool).unwrap_or(false);
            return Attempt::Done(Ready { x: coordinate("x"), y: coordinate("y"), local, done, page, found });
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
    pub(super) async fn resolve_then<T>(
        &self,
        verb: &str,
        target: &Target,
        deadline: Instant,
        timeout: Duration,
        group: &str,
        mut step: impl AsyncFnMut(&Page, &Found) -> Attempt<T>,
    ) -> Result<(T, Found), ActionFailure> {
        retry(self, verb, target, deadline, timeout, async || {
            let page = match self.front_page().await {
                Ok(page) => page,
                Err(attempt) => return attempt,
            };
            match locate::locate(&page, target, group).await {
                Ok(Located::One(found)) => match self.within_bounds(&page, &found, group).await {
                    Err(attempt) => attempt,
                    Ok(()) => match step(&page, &found).await {
                        Attempt::Done(value) => Attempt::Done((value, found)),
                        Attempt::Retry(pending) => Attempt::Retry(pending.found_by(found.fallback_locator(target))),
                        Attempt::Fail(failure) => Attempt::Fail(failure.found_by(found.fallback_locator(target))),
                    },
                },
                Ok(Located::None(report)) => Attempt::Retry(Pending::Unresolved(report)),
                Err(error) => on_cdp(error),
            }
        })
        .await
    }
}

impl ActionFailure {
    /// Puts `verb target:` in front of a message that does not say what it is about yet, with
    /// the fallback that found the element when one did.
    pub(super) fn prefixed(mut self, verb: &str, target: &Target) -> ActionFailure {
        self.message = format!("{}: {}", about(verb, target, self.found_by.as_deref()), self.message);
        self
    }
}

/// `click button "Save"`, or `click button "Save" (found by css "#save")` when a fallback
/// found the element: a message must name what it looked at.
pub(super) fn about(verb: &str, target: &Target, found_by: Option<&str>) -> String {
    match found_by {
        Some(locator) => format!("{verb} {target} (found by {locator})"),
        None => format!("{verb} {target}"),
    }
}

impl Pending {
    /// Why the look did not do, in a few words, for a trace.
    pub(super) fn reason(&self) -> String {
        match self {
            Pending::Unresolved(report) if report.ambiguous => "several elements matched".to_owned(),
            Pending::Unresolved(_) => "no element matched".to_owned(),
            Pending::NotActionable { reason, .. } => reason.clone(),
            Pending::Assertion { expected, found, .. } => format!("expected {expected}, found {found}"),
            Pending::Unsettled(_) => "the page did not settle".to_owned(),
        }
    }

    /// Names the fallback that found the element, for a state that is about the element.
    pub(super) fn found_by(self, locator: Option<String>) -> Pending {
        match self {
            Pending::NotActionable { reason, .. } => Pending::NotActionable { reason, found_by: locator },
            Pending::Assertion { expected, found, .. } => Pending::Assertion { expected, found, found_by: locator },
            other => other,
        }
    }
}

/// Runs `attempt` until it is done or fails for good, with backoff until `deadline`. Each try is
/// bounded on its own, so a page that stops answering cannot hold the run past its timeout.
pub(super) async fn retry<T>(
    context: &Context,
    verb: &str,
    target: &Target,
    deadline: Instant,
    timeout: Duration,
    mut attempt: impl AsyncFnMut() -> Attempt<T>,
) -> Result<T, ActionFailure> {
    let mut backoff = Backoff::new(deadline);
    let mut looks = Looks::default();
    loop {
        // Asked before each attempt (some attempts act: a select, a focus) and once it is done
        // (the caller dispatches input right after).
        context.guard.fenced(verb)?;
        let outcome = tokio::time::timeout_at(backoff.attempt_deadline().into(), attempt()).await;
        lock(&context.trail).attempts += 1;
        let last = match outcome {
            Ok(Attempt::Done(done)) => return context.guard.fenced(verb).map(|()| done),
            Ok(Attempt::Fail(failure)) => return Err(failure.prefixed(verb, target)),
            Ok(Attempt::Retry(pending)) => pending,
            Err(_) => Pending::Unsettled("the page did not answer".to_owned()),
        };
        lock(&context.trail).waited_for(last.reason());
        if let Some(interrupted) = context.interrupted(verb, &mut looks).await {
            return Err(interrupted);
        }
        if !backoff.next().await {
            return Err(give_up(verb, Some(target), last, timeout));
        }
    }
}

/// The failure after the timeout ran out, from the last attempt's state.
pub(super) fn give_up(verb: &str, target: Option<&Target>, last: Pending, timeout: Duration) -> ActionFailure {
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

/// `{ ok }` / `{ ok: false, reason, fatal }` from a page script.
pub(super) fn script_outcome(answer: &Value) -> Attempt<()> {
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

/// Scrolls an element in a frame into view, the frames around it too.
async fn scroll_into_view(page: &Page, object_id: &str) -> Result<(), CdpFail> {
    match page {
        Page::Firefox(tab) => tab.scroll_into_view(object_id).await,
        Page::Chromium(_) => {
            cdp::call(page, "DOM.scrollIntoViewIfNeeded", json!({ "objectId": object_id })).await.map(drop)
        }
    }
}
