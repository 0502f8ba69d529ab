//! Watching for interruptions while an action waits.
//!
//! The runner hands the context the detectors of the project's handlers. Whenever an action or
//! a check has to wait (its element is missing, covered or not as expected, its response has
//! not come, the address is not the one expected), the detectors are looked at now and then;
//! when one shows, the action stops at once with [`FailureKind::Interrupted`], before anything
//! was dispatched, so the runner can clear the interruption and take the action up again. An
//! action whose element is ready never looks: the happy path pays nothing.

use std::time::{Duration, Instant};

use regex::Regex;
use saffron_recording::Target;

use crate::context::Context;
use crate::error::{ActionFailure, FailureKind};
use crate::locate::{self, Located};
use crate::url::{path_and_query, relativize_url, resolve_url};
use crate::{cdp, js};

/// How often a waiting action looks for interruptions: often enough that an overlay costs a
/// fraction of a second, rarely enough that a page that is merely slow is not slowed further.
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// What shows one interruption; both parts must hold when both are given.
#[derive(Debug, Clone)]
pub struct Detector {
    /// An element that is visible while the interruption shows.
    pub target: Option<Target>,
    /// A pattern the page's address matches (relative to the base URL, or its path and query).
    pub url_regex: Option<Regex>,
}

impl Detector {
    /// A detector from a handler's signals; the pattern as `expectUrl`'s `urlRegex`.
    pub fn new(target: Option<Target>, url_regex: Option<&str>) -> Result<Detector, String> {
        let url_regex = url_regex.map(Regex::new).transpose().map_err(|error| error.to_string())?;
        Ok(Detector { target, url_regex })
    }

    /// Whether the address `url` is one the interruption shows at (`false` without a pattern).
    pub(crate) fn at(&self, url: &str, base_url: &str) -> bool {
        self.url_regex.as_ref().is_some_and(|pattern| {
            pattern.is_match(&path_and_query(url)) || pattern.is_match(&relativize_url(base_url, url))
        })
    }
}

/// The detectors a context watches for, and when it last looked.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    detectors: Vec<Detector>,
    /// Off while a handler clears an interruption: its own waits must not stop on it.
    paused: bool,
}

/// When a waiting action last looked, kept by the action's own wait loop.
#[derive(Debug, Default)]
pub(crate) struct Looks {
    last: Option<Instant>,
}

impl Context {
    /// Watches for these interruptions from the next action on (replacing any before).
    pub fn watch_for(&mut self, detectors: Vec<Detector>) {
        self.watch = Watch { detectors, paused: false };
    }

    /// Stops (`true`) or resumes watching, for the actions of a handler.
    pub fn pause_watch(&mut self, paused: bool) {
        self.watch.paused = paused;
    }

    /// Whether waiting actions look for interruptions now.
    pub(crate) fn watches(&self) -> bool {
        !self.watch.paused && !self.watch.detectors.is_empty()
    }

    /// Which detector shows on the active tab now (the first, in the order given), if any.
    pub async fn interruption(&self) -> Option<usize> {
        for index in 0..self.watch.detectors.len() {
            if self.interruption_shows(index).await? {
                return Some(index);
            }
        }
        None
    }

    /// Whether detector `index` shows on the active tab now; `None` when there is no such
    /// detector or no tab to look at.
    pub async fn interruption_shows(&self, index: usize) -> Option<bool> {
        let page = self.active_page().ok()?;
        self.shows_on(&page, index).await
    }

    /// Whether `detector` shows on the active tab now (`None` when there is no tab to look
    /// at): a handler acts only while its interruption shows.
    pub async fn interruption_shows_now(&self, detector: &Detector) -> Option<bool> {
        let page = self.active_page().ok()?;
        Some(self.detector_shows(&page, detector).await)
    }

    /// Whether detector `index` shows on `page` now.
    async fn shows_on(&self, page: &crate::page::Page, index: usize) -> Option<bool> {
        let detector = self.watch.detectors.get(index)?;
        Some(self.detector_shows(page, detector).await)
    }

    async fn detector_shows(&self, page: &crate::page::Page, detector: &Detector) -> bool {
        if detector.url_regex.is_some() {
            let url = page.url().await.ok().flatten().unwrap_or_default();
            if !detector.at(&url, &self.base_url) {
                return false;
            }
        }
        match &detector.target {
            Some(target) => self.shows(page, target).await,
            None => true,
        }
    }

    /// Whether `target` is on the page once and visible.
    async fn shows(&self, page: &crate::page::Page, target: &Target) -> bool {
        let group = "saffron-watch";
        let shown = match locate::locate(page, target, group).await {
            Ok(Located::One(found)) => {
                cdp::call_value(page, &found.object_id, js::VISIBLE, &[]).await.ok().and_then(|v| v.as_bool())
                    == Some(true)
            }
            _ => false,
        };
        let _ = cdp::call(page, "Runtime.releaseObjectGroup", serde_json::json!({ "objectGroup": group })).await;
        shown
    }

    /// The page the active tab was on, or was going to, before the interruption took it to the
    /// page it shows now: the last page it asked for by GET, other than the one it is on and
    /// any at the interruption's own address (`skip`'s pattern). A page that redirected to
    /// the interruption counts, so a save accepted just before a session expired returns to
    /// the page the save led to, not to the form.
    pub async fn page_before_interruption(&self, skip: &Detector) -> Option<String> {
        let now = self.url().await.ok()?;
        let active = self.active.clone();
        let fits = |url: &str| !url.is_empty() && url != "about:blank" && url != now && !skip.at(url, &self.base_url);
        self.shared.read(|state| {
            let asked = state
                .net
                .iter()
                .rev()
                .filter(|entry| entry.document && entry.target_id == active && entry.method == "GET")
                .map(|entry| entry.url.clone())
                .find(|url| fits(url));
            // A tab opened by a link asked for its first page before its log began: the
            // address it was opened for, as announced, or as its opener asked for it.
            let opened_for = || {
                let tab = state.tabs.iter().find(|tab| tab.target_id == active)?;
                if fits(&tab.opened_for) {
                    return Some(tab.opened_for.clone());
                }
                let opener = state.tabs.iter().find(|other| Some(&other.target_id) == tab.opener.as_ref())?;
                let url = resolve_url(&self.base_url, opener.window_opened.as_deref()?);
                fits(&url).then_some(url)
            };
            asked.or_else(opened_for)
        })
    }

    /// For a wait for a tab: an interruption on another open tab than the active one (a tab
    /// that opened at a sign-in page, its session expired), which becomes the active tab so
    /// that its handler clears it there.
    pub(crate) async fn interrupted_elsewhere(
        &mut self,
        tabs: &[(String, crate::page::Page)],
        looks: &mut Looks,
    ) -> Option<ActionFailure> {
        if !self.watches() || looks.last.is_some_and(|last| last.elapsed() < LOOK_EVERY) {
            return None;
        }
        looks.last = Some(Instant::now());
        for (target_id, page) in tabs.iter().filter(|(target_id, _)| *target_id != self.active) {
            for detector in 0..self.watch.detectors.len() {
                if self.shows_on(page, detector).await == Some(true) {
                    self.active = target_id.clone();
                    return Some(ActionFailure::new(
                        FailureKind::Interrupted { detector },
                        format!("switchTab: interrupted: a tab shows what handler {detector} clears"),
                    ));
                }
            }
        }
        None
    }

    /// Called by a wait loop after an attempt that did not succeed: the failure that stops the
    /// action when an interruption shows (looked at no more often than [`LOOK_EVERY`]).
    pub(crate) async fn interrupted(&self, verb: &str, looks: &mut Looks) -> Option<ActionFailure> {
        if !self.watches() {
            return None;
        }
        if looks.last.is_some_and(|last| last.elapsed() < LOOK_EVERY) {
            return None;
        }
        looks.last = Some(Instant::now());
        let _timed = crate::timing::span("interruptions");
        let detector = self.interruption().await?;
        Some(ActionFailure::new(
            FailureKind::Interrupted { detector },
            format!("{verb}: interrupted: the page shows what handler {detector} clears"),
        ))
    }
}
