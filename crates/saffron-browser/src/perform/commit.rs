//! An action that starts a navigation waits for it to commit, as Playwright's actions do.
//!
//! A click on a link or a submit button, Enter in a form, a select that posts back: the frame
//! asks for a new document while the input is handled. Until the new document commits, the old
//! one is still there, and the next action could find its element in it: a "Back to menu" link
//! on the form just posted, clicked while the post is on its way, cancels the post. So after
//! the input, the navigations it asked for (in the page or any of its frames, same tab) are
//! waited for until they commit, or stop (a download, a 204, a navigation cancelled), or the
//! action's timeout runs out; the action itself is over either way and is never repeated.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::page::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    ClientNavigationDisposition, EventFrameNavigated, EventFrameRequestedNavigation, EventFrameStoppedLoading,
    EventNavigatedWithinDocument,
};
use chromiumoxide::listeners::EventStream;
use futures::{FutureExt, StreamExt};

use crate::cdp;
use crate::context::Context;

/// The navigations one action may start, followed from before its input is dispatched.
pub(super) enum Navigations {
    /// Chromium's `Page` events of the tab.
    Chromium(ChromiumNavigations),
    /// Firefox's BiDi navigation events, kept by the context's task (see `firefox/context.rs`):
    /// those of the tab counted after `mark`.
    Firefox { tab: crate::firefox::Tab, mark: u64 },
}

/// The navigation events of one Chromium page.
pub(super) struct ChromiumNavigations {
    page: Page,
    requested: EventStream<EventFrameRequestedNavigation>,
    committed: EventStream<EventFrameNavigated>,
    stopped: EventStream<EventFrameStoppedLoading>,
    within: EventStream<EventNavigatedWithinDocument>,
}

/// A round trip to the page, one task later: whatever it announced while handling the input
/// arrives before the answer, and so does what it queued as a task then (a frame's form
/// submitted by a click asks for its navigation in a task of its own). Bounded: a page whose
/// timers are held back answers the round trip all the same, later.
const NEXT_TASK: &str = "new Promise((resolve) => setTimeout(resolve, 0))";
const NEXT_TASK_PATIENCE: Duration = Duration::from_millis(500);

impl Navigations {
    /// Starts listening on `page` of `context`; `None` when its events cannot be followed.
    pub(super) async fn listen(context: &Context, page: &Page) -> Option<Navigations> {
        match page {
            Page::Chromium(events) => {
                let mut navigations = ChromiumNavigations {
                    page: page.clone(),
                    requested: events.event_listener::<EventFrameRequestedNavigation>().await.ok()?,
                    committed: events.event_listener::<EventFrameNavigated>().await.ok()?,
                    stopped: events.event_listener::<EventFrameStoppedLoading>().await.ok()?,
                    within: events.event_listener::<EventNavigatedWithinDocument>().await.ok()?,
                };
                navigations.forget_earlier().await;
                Some(Navigations::Chromium(navigations))
            }
            // A navigation from before the input that is counted after the mark all the same is
            // one that was still under way: waiting for it as well does no harm.
            Page::Firefox(tab) => {
                let mark = context.shared.read(|state| state.navigations_started);
                Some(Navigations::Firefox { tab: tab.clone(), mark })
            }
        }
    }

    /// After the input: waits until every navigation it asked for in this tab has committed or
    /// stopped, or `deadline` passes.
    pub(super) async fn settle(self, context: &Context, deadline: Instant) {
        match self {
            Navigations::Chromium(chromium) => chromium.settle(deadline).await,
            Navigations::Firefox { tab, mark } => {
                let _ = tokio::time::timeout(NEXT_TASK_PATIENCE, tab.evaluate(NEXT_TASK, true)).await;
                context.caught_up().await;
                let tab = tab.context.as_str();
                if !context.shared.read(|state| state.navigating_since(tab, mark)) {
                    return;
                }
                let _timed = crate::timing::span("navigation commit");
                context.wait_for(deadline, |state| !state.navigating_since(tab, mark)).await;
            }
        }
    }
}

impl ChromiumNavigations {
    /// Drops what the page reported before the input: the previous navigation's last
    /// `frameStoppedLoading` may still be on its way when an action starts, and would be taken
    /// for the end of the one the input starts. A round trip first, so that it has arrived.
    async fn forget_earlier(&mut self) {
        let turn = serde_json::json!({ "expression": "0" });
        let _ = cdp::call_within(&self.page, "Runtime.evaluate", turn, NEXT_TASK_PATIENCE).await;
        while let Some(Some(_)) = self.requested.next().now_or_never() {}
        while let Some(Some(_)) = self.committed.next().now_or_never() {}
        while let Some(Some(_)) = self.stopped.next().now_or_never() {}
        while let Some(Some(_)) = self.within.next().now_or_never() {}
    }

    async fn settle(mut self, deadline: Instant) {
        let turn = serde_json::json!({ "expression": NEXT_TASK, "awaitPromise": true });
        let _ = cdp::call_within(&self.page, "Runtime.evaluate", turn, NEXT_TASK_PATIENCE).await;
        let mut pending: HashSet<String> = HashSet::new();
        while let Some(Some(event)) = self.requested.next().now_or_never() {
            if event.disposition == ClientNavigationDisposition::CurrentTab {
                pending.insert(event.frame_id.as_ref().to_owned());
            }
        }
        if pending.is_empty() {
            return;
        }
        let _timed = crate::timing::span("navigation commit");
        let wait = async {
            while !pending.is_empty() {
                let done = tokio::select! {
                    Some(event) = self.committed.next() => event.frame.id.as_ref().to_owned(),
                    Some(event) = self.stopped.next() => event.frame_id.as_ref().to_owned(),
                    Some(event) = self.within.next() => event.frame_id.as_ref().to_owned(),
                    else => return,
                };
                pending.remove(&done);
            }
        };
        let _ = tokio::time::timeout_at(deadline.into(), wait).await;
    }
}
