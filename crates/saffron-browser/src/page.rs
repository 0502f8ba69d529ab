//! The tab an action goes to, in the engine that runs it.
//!
//! Locating, actionability, drift and assertions are written once, as page functions (see
//! `js.rs`) called on elements; [`crate::cdp`] carries those calls to whichever engine holds
//! the tab. Chromium is reached over the DevTools protocol, Firefox over WebDriver BiDi (see
//! [`crate::firefox`]). What only one engine can do is asked of [`Page::chromium`], and fails
//! in the other with [`crate::cdp::CdpFail::Unsupported`], so that a step says so instead of
//! passing.

use crate::cdp::CdpFail;

/// One tab.
#[derive(Clone, Debug)]
pub(crate) enum Page {
    Chromium(chromiumoxide::Page),
    Firefox(crate::firefox::Tab),
}

impl Page {
    /// The Chromium tab, for what has no Firefox counterpart yet; `what` names it in the
    /// failure.
    pub(crate) fn chromium(&self, what: &str) -> Result<&chromiumoxide::Page, CdpFail> {
        match self {
            Page::Chromium(page) => Ok(page),
            Page::Firefox(_) => Err(CdpFail::Unsupported(what.to_owned())),
        }
    }

    /// The tab's id: a DevTools target id, or a BiDi browsing context id.
    pub(crate) fn target_id(&self) -> String {
        match self {
            Page::Chromium(page) => page.target_id().as_ref().to_owned(),
            Page::Firefox(tab) => tab.context.clone(),
        }
    }

    /// The address of the tab's document.
    pub(crate) async fn url(&self) -> Result<Option<String>, CdpFail> {
        match self {
            Page::Chromium(page) => Ok(page.url().await?),
            Page::Firefox(tab) => tab.url().await.map(Some),
        }
    }
}

impl From<chromiumoxide::Page> for Page {
    fn from(page: chromiumoxide::Page) -> Page {
        Page::Chromium(page)
    }
}
