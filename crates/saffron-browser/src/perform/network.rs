//! Network: wait for, or assert, a response observed by the tab.

use std::time::{Duration, Instant};

use crate::context::Context;
use crate::error::{ActionFailure, FailureKind};
use crate::network::{Body, Matcher, describe_entry};

use super::seconds;

/// How long a response wait sleeps before it looks for interruptions again.
const LOOK_AGAIN: Duration = Duration::from_millis(250);

impl Context {
    /// Waits for a response matching `source` with a sequence number from `since` on.
    pub(super) async fn wait_response(
        &self,
        verb: &str,
        source: &saffron_recording::ResponseMatcher,
        since: u64,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), ActionFailure> {
        let matcher = Matcher::new(source, &self.guard)
            .map_err(|error| ActionFailure::new(FailureKind::Invalid, format!("{verb}: {error}")))?;
        let mut looks = crate::interruption::Looks::default();
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
                        Some(true) => return (Some(index), Vec::new()),
                        Some(false) => {}
                        None if entry.finished => {
                            unread.push((index, entry.target_id.clone(), entry.request_id.clone()))
                        }
                        None => {}
                    }
                }
                (None, unread)
            });
            if let Some(index) = hit {
                let matched = self.shared.update(|state| {
                    let entry = &mut state.net[index];
                    // The check read the body: a trace may show it.
                    entry.checked = matcher.needs_body();
                    describe_entry(entry)
                });
                crate::lock(&self.trail).matched = Some(matched);
                return Ok(());
            }
            if !unread.is_empty() {
                self.read_bodies(unread).await;
                continue;
            }
            if let Some(interrupted) = self.interrupted(verb, &mut looks).await {
                return Err(interrupted);
            }
            // With interruptions watched, the wait wakes now and then to look for them.
            let wake = if self.watches() { deadline.min(Instant::now() + LOOK_AGAIN) } else { deadline };
            if tokio::time::timeout_at(wake.into(), notified).await.is_err() && Instant::now() >= deadline {
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
    pub(super) async fn read_bodies(&self, unread: Vec<(usize, String, String)>) {
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
}
