//! `drag`: press on one element, move onto another, release there, as a person does.
//!
//! Pages drag things in one of two ways, and a recording does not say which:
//! - with the mouse or pointer events themselves (sortable lists, sliders, canvas editors):
//!   the moves and the release are all they need;
//! - with the browser's own drag and drop (`draggable` elements, `dragstart` ... `drop`). Once
//!   such a drag starts, Chromium runs it outside the page's input events, and a headless
//!   browser has no window system to run it in. So the drag is intercepted
//!   (`Input.setInterceptDrags`): Chromium reports the data the page put on it, and the drag
//!   events over the drop target are dispatched from that data (`Input.dispatchDragEvent`),
//!   which the page receives as trusted events from the browser.
//!
//! Which way it went is seen on the first move after the press: a probe in each frame's
//! isolated world hears whether a `dragstart` fired and was not cancelled.

use std::time::{Duration, Instant};

use crate::page::Page;
use chromiumoxide::cdp::browser_protocol::input::EventDragIntercepted;
use futures::StreamExt;
use saffron_recording::Target;
use serde_json::{Value, json};

use crate::cdp::{self, CdpFail};
use crate::context::{Context, isolated_worlds};
use crate::error::ActionFailure;

use super::input::{acknowledged, dispatched, mouse};
use super::retry::{Checks, Resolved};

/// Moves between the drag's start and its drop target: libraries that follow the pointer see
/// it travel, as they would under a hand.
const STEPS: u32 = 5;

/// How far the first move goes: past the few pixels libraries wait for before a press
/// becomes a drag.
const FIRST_MOVE: f64 = 10.0;

/// How long Chromium may take to report a drag the page started.
const DRAG_REPORT_LIMIT: Duration = Duration::from_secs(2);

const PROBE: &str = r#"() => {
  const probe = { event: null };
  addEventListener("dragstart", (event) => { probe.event = event; }, { capture: true, once: true });
  globalThis.__saffronDragProbe = probe;
}"#;

// The page's own `dragstart` listeners run in the same dispatch; a task later, their verdict
// (`preventDefault`) is in.
const PROBE_RESULT: &str = r#"() => new Promise((resolve) => setTimeout(() => {
  const probe = globalThis.__saffronDragProbe;
  delete globalThis.__saffronDragProbe;
  resolve(Boolean(probe && probe.event && !probe.event.defaultPrevented));
}, 0))"#;

impl Context {
    pub(super) async fn drag(
        &self,
        target: &Target,
        to: &Target,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Resolved, ActionFailure> {
        let source = self.ready("drag", target, &Checks::hover(), deadline, timeout, group).await?;
        let resolved = Resolved::observe(&source.page, target, &source.found).await;
        if let Page::Firefox(tab) = &source.page {
            let tab = tab.clone();
            return self.drag_in_firefox(&tab, source, resolved, (target, to), deadline, timeout, group).await;
        }
        let page = source.page.clone();
        let (x, y) = (source.x, source.y);
        let pressed = async {
            mouse(&page, "mouseMoved", x, y).await?;
            pointer(&page, "mousePressed", x, y).await
        };
        acknowledged(pressed).await.map_err(|error| dispatched("drag", target, &source.found, error))?;

        let started = match self.first_move(&page, x + FIRST_MOVE, y).await {
            Ok(started) => started,
            Err(error) => {
                let _ = pointer(&page, "mouseReleased", x + FIRST_MOVE, y).await;
                return Err(dispatched("drag", target, &source.found, error));
            }
        };
        // The drop target is found with the button held, as a person looks for it; it may be
        // under the dragged element's ghost or a placeholder, so what is on top is not checked.
        let over = Checks::drop_target();
        let destination = match self.ready("drag", to, &over, deadline, timeout, group).await {
            Ok(destination) => destination,
            Err(failure) => {
                let _ = abandon(&page, started.as_ref(), x + FIRST_MOVE, y).await;
                return Err(failure);
            }
        };
        let (to_x, to_y) = (destination.x, destination.y);
        let from = (x + FIRST_MOVE, y);
        let finish = async {
            for (step_x, step_y) in path(from, (to_x, to_y)) {
                match &started {
                    Some(data) => drag_event(&page, "dragOver", step_x, step_y, data).await?,
                    None => pointer(&page, "mouseMoved", step_x, step_y).await?,
                };
            }
            match &started {
                Some(data) => drag_event(&page, "drop", to_x, to_y, data).await,
                None => pointer(&page, "mouseReleased", to_x, to_y).await,
            }
        };
        acknowledged(finish).await.map_err(|error| dispatched("drag", target, &source.found, error))?;
        Ok(resolved)
    }

    /// The first move with the button held. Returns the drag's data when it started the
    /// browser's drag and drop (then already entered at that point), `None` when the page
    /// handles the moves itself.
    async fn first_move(&self, page: &Page, x: f64, y: f64) -> Result<Option<Value>, CdpFail> {
        let worlds = isolated_worlds(page).await?;
        for world in &worlds {
            cdp::call_in_world(page, world, PROBE, &[]).await?;
        }
        let mut reports =
            page.chromium("drag and drop")?.event_listener::<EventDragIntercepted>().await.map_err(CdpFail::from)?;
        cdp::call(page, "Input.setInterceptDrags", json!({ "enabled": true })).await?;
        let moved = pointer(page, "mouseMoved", x, y).await;
        let mut started = false;
        for world in &worlds {
            // A frame that went away meanwhile started nothing.
            started |=
                cdp::call_in_world(page, world, PROBE_RESULT, &[]).await.ok().and_then(|v| v.as_bool()) == Some(true);
        }
        let data = match (moved, started) {
            (Err(error), _) => Err(error),
            (Ok(_), false) => Ok(None),
            (Ok(_), true) => match tokio::time::timeout(DRAG_REPORT_LIMIT, reports.next()).await {
                Ok(Some(report)) => serde_json::to_value(&report.data)
                    .map(Some)
                    .map_err(|error| CdpFail::Protocol(format!("the drag's data: {error}"))),
                _ => Err(CdpFail::Protocol("the page started a drag, and Chromium did not report it".to_owned())),
            },
        };
        let _ = cdp::call(page, "Input.setInterceptDrags", json!({ "enabled": false })).await;
        let data = data?;
        if let Some(data) = &data {
            drag_event(page, "dragEnter", x, y, data).await?;
        }
        Ok(data)
    }
}

/// Whether the element starts the browser's drag and drop when dragged: it, or an ancestor,
/// is `draggable`, or it is a link or an image (draggable by default).
const DRAGS_NATIVELY: &str = r#"function () {
  const draggable = this.closest('[draggable]');
  if (draggable) return draggable.getAttribute('draggable') !== 'false';
  return Boolean(this.closest('a[href]')) || this.tagName === 'IMG';
}"#;

/// Drags the element (`this`) onto `drop` with the browser's drag and drop events, sharing
/// one `DataTransfer` as the browser would: `dragstart` (cancelled: no drag), `dragenter` and
/// `dragover` over the drop target, `drop` when a `dragover` was cancelled (the target takes
/// it), and `dragend`.
const DISPATCH_DRAG: &str = r#"function (drop) {
  const data = new DataTransfer();
  const centre = (el) => { const r = el.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; };
  const fire = (el, type) => {
    const [clientX, clientY] = centre(el);
    const event = new DragEvent(type, { bubbles: true, cancelable: true, composed: true, dataTransfer: data, clientX, clientY });
    return el.dispatchEvent(event);
  };
  if (!fire(this, 'dragstart')) return { started: false };
  fire(drop, 'dragenter');
  const taken = !fire(drop, 'dragover');
  if (taken) fire(drop, 'drop'); else fire(drop, 'dragleave');
  fire(this, 'dragend');
  return { started: true, dropped: taken };
}"#;

impl Context {
    /// `drag` in Firefox. WebDriver's input starts no HTML drag and drop in Firefox, so an
    /// element that drags natively gets that drag's events from a page script (they are not
    /// trusted events: a page that checks `isTrusted` refuses them); any other drag is the
    /// pointer's press, moves and release, in one action sequence.
    #[allow(clippy::too_many_arguments)]
    async fn drag_in_firefox(
        &self,
        tab: &crate::firefox::Tab,
        source: super::retry::Ready,
        resolved: Resolved,
        (target, to): (&Target, &Target),
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Resolved, ActionFailure> {
        let destination = self.ready("drag", to, &Checks::drop_target(), deadline, timeout, group).await?;
        let failed = |error: CdpFail| dispatched("drag", target, &source.found, error);
        let native =
            cdp::call_value(&source.page, &source.found.object_id, DRAGS_NATIVELY, &[]).await.map_err(failed)?;
        if native.as_bool() == Some(true) {
            let (from_frame, _) = crate::firefox::parse_handle(&source.found.object_id).map_err(failed)?;
            let (to_frame, _) = crate::firefox::parse_handle(&destination.found.object_id).map_err(failed)?;
            if from_frame != to_frame {
                return Err(failed(CdpFail::Unsupported("dragging between frames".to_owned())));
            }
            let args = [cdp::Argument::Object(destination.found.object_id.clone())];
            cdp::call_with(&source.page, &source.found.object_id, DISPATCH_DRAG, &args, true).await.map_err(failed)?;
            return Ok(resolved);
        }
        // In the frame both are in, in its own viewport; else across the page's.
        let (from_frame, _) = crate::firefox::parse_handle(&source.found.object_id).map_err(failed)?;
        let (to_frame, _) = crate::firefox::parse_handle(&destination.found.object_id).map_err(failed)?;
        let (frame, from, to) = if from_frame == to_frame {
            (from_frame, source.local, destination.local)
        } else {
            (tab.context.as_str(), (source.x, source.y), (destination.x, destination.y))
        };
        let points = path((from.0 + FIRST_MOVE, from.1), to);
        acknowledged(tab.drag_pointer(frame, from, FIRST_MOVE, &points)).await.map_err(failed)?;
        Ok(resolved)
    }
}

/// The [`STEPS`] points a drag moves through from `from` to `to`, `to` last.
fn path(from: (f64, f64), to: (f64, f64)) -> Vec<(f64, f64)> {
    (1..=STEPS)
        .map(|step| {
            let t = f64::from(step) / f64::from(STEPS);
            (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t)
        })
        .collect()
}

/// Lets go where the pointer is, without dropping anything on the page.
async fn abandon(page: &Page, started: Option<&Value>, x: f64, y: f64) -> Result<Value, CdpFail> {
    match started {
        Some(data) => drag_event(page, "dragCancel", x, y, data).await,
        None => pointer(page, "mouseReleased", x, y).await,
    }
}

/// A mouse event with the left button held (`mousePressed` and moves) or let go.
async fn pointer(page: &Page, kind: &str, x: f64, y: f64) -> Result<Value, CdpFail> {
    let held = if kind == "mouseReleased" { 0 } else { 1 };
    let mut params = json!({ "type": kind, "x": x, "y": y, "button": "left", "buttons": held });
    if kind != "mouseMoved" {
        params["clickCount"] = json!(1);
    }
    cdp::call(page, "Input.dispatchMouseEvent", params).await
}

async fn drag_event(page: &Page, kind: &str, x: f64, y: f64, data: &Value) -> Result<Value, CdpFail> {
    cdp::call(page, "Input.dispatchDragEvent", json!({ "type": kind, "x": x, "y": y, "data": data })).await
}
