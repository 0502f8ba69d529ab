//! What can go wrong: with the browser itself ([`BrowserError`]) or with one action
//! ([`ActionFailure`]).

use std::fmt;
use std::path::PathBuf;

/// The browser could not be found, started, or talked to. Never a verdict about the app: the
/// runner reports these as "blocked".
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// No Chromium at any of the places looked at.
    #[error(
        "Chromium was not found (looked at: {}). Install it with `apt-get install chromium` (Debian/Ubuntu), \
         or set SAFFRON_CHROMIUM to a Chromium or Chrome executable",
        searched.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NotFound {
        /// Every path tried, in order.
        searched: Vec<PathBuf>,
    },
    /// Chromium was found but did not start or did not open its DevTools endpoint.
    #[error("could not launch Chromium at {}: {message}", executable.display())]
    Launch {
        /// The executable that was started.
        executable: PathBuf,
        /// Why it failed.
        message: String,
    },
    /// The remote browser at `url` could not be reached, or did not answer as a browser does.
    #[error("could not connect to the browser at {url}: {message}")]
    Connect {
        /// The endpoint, as it may be shown (no credentials, no query).
        url: String,
        /// Why it failed.
        message: String,
    },
    /// No Firefox at any of the places looked at.
    #[error(
        "Firefox was not found (looked at: {}). Install it with `apt-get install firefox-esr` (Debian/Ubuntu), \
         or set SAFFRON_FIREFOX to a Firefox executable",
        searched.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    FirefoxNotFound {
        /// Every path tried, in order.
        searched: Vec<PathBuf>,
    },
    /// Firefox was found but did not start or did not open its WebDriver BiDi endpoint.
    #[error("could not launch Firefox at {}: {message}", executable.display())]
    FirefoxLaunch {
        /// The executable that was started.
        executable: PathBuf,
        /// Why it failed.
        message: String,
    },
    /// A DevTools protocol call failed.
    #[error("browser protocol error: {0}")]
    Protocol(String),
    /// The browser (or the context) was closed, or its connection died.
    #[error("the browser is closed: {0}")]
    Closed(String),
}

/// Why an action failed, for the runner to decide between heal, red and blocked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// No tier of the target matched any element.
    NotFound,
    /// No tier matched exactly one element, and at least one matched several.
    Ambiguous,
    /// The element was found but never became actionable (hidden, disabled, covered, ...).
    NotActionable {
        /// What stood in the way at the last check, e.g. `<div role="dialog" aria-label="Cookie
        /// consent"> intercepts pointer events`.
        reason: String,
    },
    /// An assertion kept failing until its timeout.
    AssertionFailed,
    /// A wait ran out (a response or a tab never came, the page stopped answering).
    Timeout,
    /// A `goto` failed (network error, or the page did not load in time).
    Navigation,
    /// The action itself cannot be performed as written (a pattern that does not compile, an
    /// unknown key, a `switchTab` without index or pattern).
    Invalid,
    /// The browser failed underneath the action (connection lost, tab closed).
    Browser,
    /// A guard refused the action before anything was sent (a secret bound for another
    /// origin): not the application's failure, and not one for a repair to work around.
    Refused,
    /// An interruption showed while the action waited (a detector given with
    /// [`crate::Context::watch_for`], by its index): nothing was dispatched.
    Interrupted {
        /// The index of the detector that showed.
        detector: usize,
    },
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::NotFound => "not found",
            FailureKind::Ambiguous => "ambiguous",
            FailureKind::NotActionable { .. } => "not actionable",
            FailureKind::AssertionFailed => "assertion failed",
            FailureKind::Timeout => "timeout",
            FailureKind::Navigation => "navigation failed",
            FailureKind::Invalid => "invalid action",
            FailureKind::Browser => "browser error",
            FailureKind::Refused => "refused",
            FailureKind::Interrupted { .. } => "interrupted",
        })
    }
}

/// One action that did not do what it should, with what was expected and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionFailure {
    /// The kind of failure.
    pub kind: FailureKind,
    /// A sentence for people: what was expected and what was found, e.g.
    /// `expectText on status "Order saved": expected text "Order saved", found "Could not save the order"`.
    pub message: String,
    /// What the action expected, when that is one value (a text, a URL, a count, ...).
    pub expected: Option<String>,
    /// What the page showed instead, at the last check.
    pub found: Option<String>,
    /// The locator that found the element, when the failure came after a fallback found it
    /// (another tier than the recorded one, a later CSS fallback), e.g. `css "#save"`: the
    /// message names it too, so nobody looks at the wrong element.
    pub found_by: Option<String>,
}

impl ActionFailure {
    pub(crate) fn new(kind: FailureKind, message: impl Into<String>) -> ActionFailure {
        ActionFailure { kind, message: message.into(), expected: None, found: None, found_by: None }
    }

    pub(crate) fn found_by(mut self, locator: Option<String>) -> ActionFailure {
        self.found_by = locator;
        self
    }

    pub(crate) fn with(mut self, expected: Option<String>, found: Option<String>) -> ActionFailure {
        self.expected = expected;
        self.found = found;
        self
    }
}

impl fmt::Display for ActionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ActionFailure {}
