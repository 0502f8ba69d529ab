//! Interruption handlers: a page that can show up in any scenario (a cookie-consent dialog, a
//! maintenance notice, an expired session) is never recorded into a scenario. A handler names
//! what shows it (its detector) and the actions that clear it; replay consults the project's
//! handlers when an action cannot go on, and carries on once the interruption is gone.
//!
//! Handlers live in `.saffron/handlers/<slug>.json`, are committed beside the recordings and
//! are read through the same validator.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::target::Target;

/// The handler format's version.
pub const HANDLER_VERSION: u32 = 1;

/// One interruption and how to clear it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Handler {
    /// Format version ([`HANDLER_VERSION`]).
    pub version: u32,
    /// What the interruption is, as reports say it: "cleared: Cookie consent".
    pub name: String,
    /// What shows that the interruption is on the page.
    pub detect: Detector,
    /// The actions that clear it, in the recording format's vocabulary. Exclusive with
    /// `stepSet`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
    /// A StepSet whose recorded actions clear it (the sign-in set, for an expired session): the
    /// handler follows the set's recording as it is re-recorded or repaired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_set: Option<String>,
    /// Where the run carries on once the interruption is cleared.
    #[serde(default, skip_serializing_if = "Resume::is_here")]
    pub resume: Resume,
}

/// What shows an interruption: an element that is visible, a page address, or both (then both
/// must hold). Derived from a signal the scenario's normal pages never show, so that page
/// chrome present on every screen cannot set a handler off.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Detector {
    /// An element the interruption shows (a dialog by role and name, a heading, a text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// A pattern the page's address matches while the interruption shows, matched as
    /// `expectUrl`'s `urlRegex` is (relative to the base URL, and the path and query).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_regex: Option<String>,
}

/// Where a run carries on after a handler cleared its interruption.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Resume {
    /// On the page as the handler leaves it, with the interrupted action (an overlay that
    /// covered the page goes away and the page is as it was).
    #[default]
    Here,
    /// Back on the page the run was on before the interruption took it elsewhere (an expired
    /// session's sign-in lands on a start page), where the interrupted step is taken up again:
    /// what it already did is not done twice.
    ReturnToPage,
}

impl Resume {
    fn is_here(&self) -> bool {
        *self == Resume::Here
    }
}

impl Handler {
    /// A handler with inline actions that resumes where it left the page.
    pub fn new(name: impl Into<String>, detect: Detector, actions: Vec<Action>) -> Handler {
        Handler { version: HANDLER_VERSION, name: name.into(), detect, actions, step_set: None, resume: Resume::Here }
    }
}
