//! Navigation: go to a URL, switch tabs, and assert the URL while the page navigates.

use std::time::{Duration, Instant};

use crate::page::Page;
use chromiumoxide::cdp::browser_protocol::page::{EventFrameNavigated, EventNavigatedWithinDocument, NavigateParams};
use chromiumoxide::listeners::EventStream;
use futures::StreamExt;

use crate::context::{Context, ensure_front};
use crate::error::{ActionFailure, FailureKind};
use crate::url::{path_and_query, relativize_url, resolve_url};

use super::retry::Backoff;
use super::{browser_failure, compiled, quote, seconds};

impl Context {
    pub(super) async fn goto(&mut self, url: &str, deadline: Instant, timeout: Duration) -> Result<(), ActionFailure> {
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
        if let Some(refusal) = self.guard.refuses_destination(&absolute) {
            return Err(ActionFailure::new(FailureKind::Refused, format!("goto {absolute}: {refusal}")));
        }
        let _timed = crate::timing::span("navigate");
        let navigation = async {
            match &page {
                Page::Firefox(tab) => tab.navigate(&absolute).await.map_err(|error| error.to_string()),
                Page::Chromium(page) => match page.execute(NavigateParams::new(absolute.clone())).await {
                    Err(error) => Err(error.to_string()),
                    Ok(answer) => answer.result.error_text.map_or(Ok(()), Err),
                },
            }
        };
        match tokio::time::timeout_at(deadline.into(), navigation).await {
            Err(_) => Err(failure(format!("the page did not finish loading within {}", seconds(timeout)))),
            Ok(loaded) => loaded.map_err(failure),
        }
    }

    pub(super) async fn switch_tab(
        &mut self,
        index: Option<u32>,
        pattern: Option<&str>,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), ActionFailure> {
        let pattern = compiled("switchTab", "urlPattern", pattern)?;
        if index.is_none() && pattern.is_none() {
            return Err(ActionFailure::new(FailureKind::Invalid, "switchTab needs an index or a urlPattern"));
        }
        let wanted = match (index, &pattern) {
            (Some(index), _) => format!("tab {index}"),
            (None, Some(pattern)) => format!("a tab whose URL matches /{pattern}/"),
            (None, None) => String::new(),
        };
        let mut seen = Vec::new();
        let mut looks = crate::interruption::Looks::default();
        // Its own handle: the wait may make another tab the active one.
        let shared = self.shared.clone();
        loop {
            let notified = shared.changed.notified();
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
            if let Some(interrupted) = self.interrupted_elsewhere(&tabs, &mut looks).await {
                return Err(interrupted);
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

    pub(super) async fn expect_url(
        &self,
        url: Option<&str>,
        pattern: Option<&str>,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), ActionFailure> {
        let pattern = pattern.map(|pattern| self.guard.judged_pattern(pattern));
        let pattern = compiled("expectUrl", "urlRegex", pattern.as_deref())?;
        // Both sides in the recording's terms: relative to the base URL when under it.
        let expected = match (url, &pattern) {
            (Some(url), _) => {
                self.guard.judged_owned(relativize_url(&self.base_url, &resolve_url(&self.base_url, url)))
            }
            (None, Some(pattern)) => format!("/{pattern}/"),
            (None, None) => return Err(ActionFailure::new(FailureKind::Invalid, "expectUrl needs url or urlRegex")),
        };
        let mut backoff = Backoff::new(deadline);
        let mut found: String;
        // The address changes only by a navigation, so a pause ends at the tab's next one; the
        // pauses still bound the wait if the events cannot be followed. Listening starts before
        // the first look, so a navigation between a look and the pause is not missed.
        let mut navigations = self.navigation_events().await;
        let mut looks = crate::interruption::Looks::default();
        loop {
            let current = self.url().await.map_err(browser_failure)?;
            found = self.guard.judged_owned(relativize_url(&self.base_url, &current));
            let pass = match &pattern {
                Some(pattern) => {
                    pattern.is_match(&self.guard.judged_owned(path_and_query(&current))) || pattern.is_match(&found)
                }
                None => found == expected,
            };
            if pass {
                return Ok(());
            }
            if let Some(interrupted) = self.interrupted("expectUrl", &mut looks).await {
                return Err(interrupted);
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
    pub(super) async fn navigation_events(
        &self,
    ) -> Option<(EventStream<EventFrameNavigated>, EventStream<EventNavigatedWithinDocument>)> {
        let page = self.active_page().ok()?;
        let page = page.chromium("following navigations").ok()?;
        let documents = page.event_listener::<EventFrameNavigated>().await.ok()?;
        let fragments = page.event_listener::<EventNavigatedWithinDocument>().await.ok()?;
        Some((documents, fragments))
    }
}
