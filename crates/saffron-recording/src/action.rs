//! Recorded actions: what replay does, as data.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::http::{Extract, Header, JsonTemplate, RequestLine};
use crate::target::Target;

// This enum is the one list of action types. A new type is a variant here (the compiler then
// asks for its arm in this file's accessors and `Display`, and in the operand walk of
// `operands.rs`) and its behaviour in `saffron-browser`'s `perform`. The validator, the JSON
// Schemas (`UPDATE_SCHEMA=1`), token substitution, seeding and hovers follow from it. (Not a
// doc comment: those go into the schema users read.)
/// One recorded browser action or assertion, tagged by `"type"` in JSON.
///
/// Every string operand may hold tokens (`<param>`, `{env:NAME}`, ...). `timeoutMs`
/// overrides the runner's default wait for that action.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    expecting = "an action (a JSON object)"
)]
pub enum Action {
    /// Navigate. A URL starting with `/` is relative to the base URL.
    Goto {
        /// Where to go.
        url: String,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Click an element.
    Click {
        /// The element.
        target: Target,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Double-click an element (two clicks in a row, the second with a click count of 2, so
    /// the page sees `click`, `click`, `dblclick`).
    #[serde(rename = "dblclick")]
    DoubleClick {
        /// The element.
        target: Target,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Replace a field's content. An empty value is a recorded clear.
    Fill {
        /// The field.
        target: Target,
        /// The text to type.
        value: String,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Type text into a field key by key, after what it holds, as a person types: each
    /// character is a key press (`keydown`, `keypress`, `input`, `keyup`), for pages that act
    /// on keys (suggestions as you type, masked inputs). Characters no key of a US keyboard
    /// types are inserted as text.
    TypeText {
        /// The field, focused first.
        target: Target,
        /// The text to type.
        text: String,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Choose the files of a file input, as a person does in the file chooser (the page gets
    /// `input` and `change`). Paths are relative to the project folder; an empty list clears
    /// the choice.
    Upload {
        /// The file input (`<input type=file>`), or a label of one.
        target: Target,
        /// The files, relative to the project folder (the folder of `saffron.toml`).
        files: Vec<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Select options of a `<select>` by value or label. An empty list deselects all.
    Select {
        /// The select element.
        target: Target,
        /// The options to select.
        values: Vec<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Press a key (Playwright key syntax, e.g. `Enter`, `Control+A`), on an element or the page.
    Press {
        /// The focused element, or none for the page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
        /// The key.
        key: String,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Make a checkbox or radio checked.
    Check {
        /// The checkbox or radio.
        target: Target,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Make a checkbox unchecked.
    Uncheck {
        /// The checkbox.
        target: Target,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Move the pointer over an element.
    Hover {
        /// The element.
        target: Target,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Drag an element onto another with the mouse, as a person does: press on the element's
    /// centre, move to the other's centre, release there. Pages that use the browser's own
    /// drag and drop (`draggable`) get its drag events; others get the mouse and pointer
    /// events of the move.
    Drag {
        /// The element dragged.
        target: Target,
        /// The element it is dropped on.
        to: Target,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Switch to another tab of the context, by index or by URL pattern (one of them).
    SwitchTab {
        /// Tab index in opening order, from 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<u32>,
        /// Regex matched against the tab's URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url_pattern: Option<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Answer the next dialog (alert, confirm, prompt).
    Dialog {
        /// Accept (true) or dismiss (false).
        accept: bool,
        /// Text typed into a prompt before accepting.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt_text: Option<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Wait for a response observed since the step began (synchronization, may be healed).
    WaitForResponse {
        /// Which response.
        response: ResponseMatcher,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert the element is visible.
    ExpectVisible {
        /// The element.
        target: Target,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert the element is hidden or absent.
    ExpectHidden {
        /// The element.
        target: Target,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert the element's text (whitespace-normalized): exactly `text`, or matching
    /// `textRegex` (one of them).
    ExpectText {
        /// The element.
        target: Target,
        /// Expected text, exact.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Expected text, as a pattern.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text_regex: Option<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert a field's current value.
    ExpectValue {
        /// The field.
        target: Target,
        /// Expected value, exact (may be empty).
        value: String,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert the page URL: exactly `url` (relative to the base URL when it starts with `/`),
    /// or matching `urlRegex` (one of them).
    ExpectUrl {
        /// Expected URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// Expected URL, as a pattern.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url_regex: Option<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert a visual or structural state that visibility does not capture.
    ExpectState {
        /// The element.
        target: Target,
        /// The state.
        state: ElementState,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert that a matching response was observed during the scenario (never healed).
    ExpectResponse {
        /// Which response.
        response: ResponseMatcher,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert that a file was downloaded during the scenario: its name as the browser
    /// suggests it is exactly `fileName` or matches `fileNameRegex` (any name when neither is
    /// given), and, with `contains`, its contents (read as UTF-8) hold that text. Waits for the
    /// download to complete.
    ExpectDownload {
        /// The file's name, exact, e.g. `orders.csv`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_name: Option<String>,
        /// The file's name, as a pattern, e.g. `^orders-\d+\.csv$`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_name_regex: Option<String>,
        /// Text the file holds, e.g. a row of an export.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        contains: Option<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert that the page logged no console error and threw no uncaught error.
    ExpectNoConsoleErrors {
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert how many elements match the target.
    ExpectCount {
        /// The elements.
        target: Target,
        /// Expected number of matches.
        count: u32,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Send an HTTP request to a service of `[api.services]`. Its response becomes the
    /// session's latest, which `expectStatus`, `expectField` and `expectSchema` read. Replay
    /// sends it again after a failure only when that cannot write twice: a `GET`, `HEAD` or
    /// `OPTIONS`, or a request marked `idempotent`.
    Request {
        /// The service's name in `[api.services]`: its base URL is the configuration's, never
        /// the recording's.
        service: String,
        /// The method, in capitals.
        method: String,
        /// The path and query, relative to the service's base URL, e.g.
        /// `/orders/{captured:order}`.
        path: String,
        /// The client it is sent with, each with its own cookies (`As "alice"`); the scenario's
        /// own when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
        /// Request headers.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        headers: Vec<Header>,
        /// The JSON body, typed (see `JsonTemplate`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<JsonTemplate>,
        /// Values kept from the response's body, reached later as `{captured:name}`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        extract: Vec<Extract>,
        /// Sending it twice has the effect of sending it once (a `PUT` of a whole resource):
        /// replay may send it again.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        idempotent: bool,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert the status of the session's latest response: exact (`"201"`) or a class
    /// (`"4xx"`).
    ExpectStatus {
        /// The status.
        status: String,
        /// Whose latest response (see `request`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert a field of the session's latest response's JSON body, by JSON Pointer: equal
    /// to `value` (typed JSON), or its text matching `pattern` (one of them).
    ExpectField {
        /// A JSON Pointer into the body, e.g. `/total` or `/items/0/sku`.
        pointer: String,
        /// The value, as JSON (`13`, `"Ada"`, `true`, `null`, an object).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<JsonTemplate>,
        /// A pattern the field's text matches (a string as it is, any other value as JSON).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pattern: Option<String>,
        /// Whose latest response (see `request`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Assert that the session's latest response is what the service's pinned contract
    /// (OpenAPI 3) says its operation answers with that status.
    ExpectSchema {
        /// Whose latest response (see `request`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
        /// Per-action timeout in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
}

/// The state checked by `expectState`, tagged by `"kind"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase", expecting = "a state (a JSON object)")]
pub enum ElementState {
    /// The element's class list holds `token`.
    Class {
        /// One class token, without spaces.
        token: String,
    },
    /// The element has attribute `name`, equal to `value` when given.
    Attribute {
        /// Attribute name.
        name: String,
        /// Expected value; any value when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<String>,
    },
    /// The computed style property `property` equals `value`.
    Css {
        /// CSS property name, e.g. `opacity`.
        property: String,
        /// Expected computed value, e.g. `0`.
        value: String,
    },
    /// A checkbox or radio is checked.
    Checked,
    /// A checkbox or radio is not checked.
    Unchecked,
    /// The element is disabled.
    Disabled,
    /// The element is enabled.
    Enabled,
    /// The element has focus.
    Focused,
}

/// Which network response a wait or assertion is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a response matcher (a JSON object)")]
pub struct ResponseMatcher {
    /// Pattern matched against the URL's path and query only (never scheme or host, which
    /// differ between environments). Volatile ids must be patterns.
    pub url_regex: String,
    /// HTTP method in capitals; any method when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Exact status (`"201"`) or class (`"2xx"`); any status when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Pattern the response body must match (for polling waits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_regex: Option<String>,
}

impl ResponseMatcher {
    /// A matcher on the URL path pattern alone.
    pub fn url(url_regex: impl Into<String>) -> ResponseMatcher {
        ResponseMatcher { url_regex: url_regex.into(), method: None, status: None, body_regex: None }
    }

    /// True when `status` satisfies the matcher's status (exact or class); an absent or
    /// malformed matcher status accepts any status.
    pub fn status_matches(&self, status: u16) -> bool {
        self.status.as_deref().is_none_or(|expected| crate::http::status_matches(expected, status))
    }
}

// The target of an action by shared or unique reference: one list for both accessors.
macro_rules! element_target {
    ($action:expr) => {
        match $action {
            Action::Click { target, .. }
            | Action::DoubleClick { target, .. }
            | Action::Fill { target, .. }
            | Action::TypeText { target, .. }
            | Action::Select { target, .. }
            | Action::Upload { target, .. }
            | Action::Press { target: Some(target), .. }
            | Action::Check { target, .. }
            | Action::Uncheck { target, .. }
            | Action::Hover { target, .. }
            | Action::Drag { target, .. }
            | Action::ExpectVisible { target, .. }
            | Action::ExpectHidden { target, .. }
            | Action::ExpectText { target, .. }
            | Action::ExpectValue { target, .. }
            | Action::ExpectState { target, .. }
            | Action::ExpectCount { target, .. } => Some(target),
            Action::Press { target: None, .. }
            | Action::Goto { .. }
            | Action::SwitchTab { .. }
            | Action::Dialog { .. }
            | Action::WaitForResponse { .. }
            | Action::ExpectUrl { .. }
            | Action::ExpectResponse { .. }
            | Action::ExpectDownload { .. }
            | Action::ExpectNoConsoleErrors { .. }
            | Action::Request { .. }
            | Action::ExpectStatus { .. }
            | Action::ExpectField { .. }
            | Action::ExpectSchema { .. } => None,
        }
    };
}

impl Action {
    /// The action's `type` as written in JSON.
    pub fn type_name(&self) -> &'static str {
        match self {
            Action::Goto { .. } => "goto",
            Action::Click { .. } => "click",
            Action::DoubleClick { .. } => "dblclick",
            Action::Fill { .. } => "fill",
            Action::TypeText { .. } => "typeText",
            Action::Select { .. } => "select",
            Action::Upload { .. } => "upload",
            Action::Press { .. } => "press",
            Action::Check { .. } => "check",
            Action::Uncheck { .. } => "uncheck",
            Action::Hover { .. } => "hover",
            Action::Drag { .. } => "drag",
            Action::SwitchTab { .. } => "switchTab",
            Action::Dialog { .. } => "dialog",
            Action::WaitForResponse { .. } => "waitForResponse",
            Action::ExpectVisible { .. } => "expectVisible",
            Action::ExpectHidden { .. } => "expectHidden",
            Action::ExpectText { .. } => "expectText",
            Action::ExpectValue { .. } => "expectValue",
            Action::ExpectUrl { .. } => "expectUrl",
            Action::ExpectState { .. } => "expectState",
            Action::ExpectResponse { .. } => "expectResponse",
            Action::ExpectDownload { .. } => "expectDownload",
            Action::ExpectNoConsoleErrors { .. } => "expectNoConsoleErrors",
            Action::ExpectCount { .. } => "expectCount",
            Action::Request { .. } => "request",
            Action::ExpectStatus { .. } => "expectStatus",
            Action::ExpectField { .. } => "expectField",
            Action::ExpectSchema { .. } => "expectSchema",
        }
    }

    /// True for the HTTP family (`request` and the checks of its response), which Saffron's HTTP
    /// client performs in any scenario.
    pub fn is_http(&self) -> bool {
        matches!(
            self,
            Action::Request { .. }
                | Action::ExpectStatus { .. }
                | Action::ExpectField { .. }
                | Action::ExpectSchema { .. }
        )
    }

    /// The session (`As "alice"`) whose client sends a request, or whose latest response a
    /// check reads; `None` for the scenario's own, and for every other action.
    pub fn session(&self) -> Option<&str> {
        match self {
            Action::Request { session, .. }
            | Action::ExpectStatus { session, .. }
            | Action::ExpectField { session, .. }
            | Action::ExpectSchema { session, .. } => session.as_deref(),
            _ => None,
        }
    }

    /// True for the `expect*` actions. Assertions are sacred: a heal never rewrites them.
    pub fn is_assertion(&self) -> bool {
        matches!(
            self,
            Action::ExpectVisible { .. }
                | Action::ExpectHidden { .. }
                | Action::ExpectText { .. }
                | Action::ExpectValue { .. }
                | Action::ExpectUrl { .. }
                | Action::ExpectState { .. }
                | Action::ExpectResponse { .. }
                | Action::ExpectDownload { .. }
                | Action::ExpectNoConsoleErrors { .. }
                | Action::ExpectCount { .. }
                | Action::ExpectStatus { .. }
                | Action::ExpectField { .. }
                | Action::ExpectSchema { .. }
        )
    }

    /// True when running the action twice has the effect of running it once, so replay may
    /// retry it. A click, a key press or a dialog answer may submit or toggle something, so
    /// they are never repeated; nor is an upload, which may click to open a file chooser, or a
    /// request that may write (anything but a read, unless the recording vouches for it).
    pub fn may_repeat(&self) -> bool {
        if let Action::Request { method, idempotent, .. } = self {
            return *idempotent || crate::http::is_safe_method(method);
        }
        !matches!(
            self,
            Action::Click { .. }
                | Action::DoubleClick { .. }
                | Action::Upload { .. }
                | Action::Drag { .. }
                | Action::TypeText { .. }
                | Action::Press { .. }
                | Action::Dialog { .. }
        )
    }

    /// The element the action is about, if it has one.
    pub fn target(&self) -> Option<&Target> {
        element_target!(self)
    }

    /// Mutable access to the target, for rewriting locators (heal propagation).
    pub fn target_mut(&mut self) -> Option<&mut Target> {
        element_target!(self)
    }

    /// Every element the action is about: its target, and a drag's drop target after it.
    pub fn targets(&self) -> Vec<&Target> {
        match self {
            Action::Drag { target, to, .. } => vec![target, to],
            other => other.target().into_iter().collect(),
        }
    }

    /// Mutable access to every element the action is about, in the order of [`Action::targets`].
    pub fn targets_mut(&mut self) -> Vec<&mut Target> {
        match self {
            Action::Drag { target, to, .. } => vec![target, to],
            other => other.target_mut().into_iter().collect(),
        }
    }

    /// The per-action timeout, if the recording sets one.
    pub fn timeout_ms(&self) -> Option<u64> {
        match self {
            Action::Goto { timeout_ms, .. }
            | Action::Click { timeout_ms, .. }
            | Action::DoubleClick { timeout_ms, .. }
            | Action::Fill { timeout_ms, .. }
            | Action::TypeText { timeout_ms, .. }
            | Action::Select { timeout_ms, .. }
            | Action::Upload { timeout_ms, .. }
            | Action::Press { timeout_ms, .. }
            | Action::Check { timeout_ms, .. }
            | Action::Uncheck { timeout_ms, .. }
            | Action::Hover { timeout_ms, .. }
            | Action::Drag { timeout_ms, .. }
            | Action::SwitchTab { timeout_ms, .. }
            | Action::Dialog { timeout_ms, .. }
            | Action::WaitForResponse { timeout_ms, .. }
            | Action::ExpectVisible { timeout_ms, .. }
            | Action::ExpectHidden { timeout_ms, .. }
            | Action::ExpectText { timeout_ms, .. }
            | Action::ExpectValue { timeout_ms, .. }
            | Action::ExpectUrl { timeout_ms, .. }
            | Action::ExpectState { timeout_ms, .. }
            | Action::ExpectResponse { timeout_ms, .. }
            | Action::ExpectDownload { timeout_ms, .. }
            | Action::ExpectNoConsoleErrors { timeout_ms }
            | Action::ExpectCount { timeout_ms, .. }
            | Action::Request { timeout_ms, .. }
            | Action::ExpectStatus { timeout_ms, .. }
            | Action::ExpectField { timeout_ms, .. }
            | Action::ExpectSchema { timeout_ms, .. } => *timeout_ms,
        }
    }
}

/// The download an `expectDownload` wants, in words: `a download named "orders.csv" holding
/// "1001"` (said the same way in its line and in its failure).
pub fn describe_download(file_name: Option<&str>, file_name_regex: Option<&str>, contains: Option<&str>) -> String {
    let mut text = "a download".to_owned();
    match (file_name, file_name_regex) {
        (Some(name), _) => text.push_str(&format!(" named {name:?}")),
        (None, Some(pattern)) => text.push_str(&format!(" named like /{pattern}/")),
        (None, None) => {}
    }
    if let Some(held) = contains {
        text.push_str(&format!(" holding {held:?}"));
    }
    text
}

impl fmt::Display for ResponseMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(method) = &self.method {
            write!(f, "{method} ")?;
        }
        write!(f, "/{}/", self.url_regex)?;
        if let Some(status) = &self.status {
            write!(f, " status {status}")?;
        }
        if let Some(body) = &self.body_regex {
            write!(f, " body /{body}/")?;
        }
        Ok(())
    }
}

impl fmt::Display for ElementState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementState::Class { token } => write!(f, "have class {token:?}"),
            ElementState::Attribute { name, value: None } => write!(f, "have attribute {name:?}"),
            ElementState::Attribute { name, value: Some(value) } => write!(f, "have attribute {name:?} = {value:?}"),
            ElementState::Css { property, value } => write!(f, "have css {property} = {value:?}"),
            ElementState::Checked => f.write_str("be checked"),
            ElementState::Disabled => f.write_str("be disabled"),
            ElementState::Enabled => f.write_str("be enabled"),
            ElementState::Focused => f.write_str("be focused"),
            ElementState::Unchecked => f.write_str("be unchecked"),
        }
    }
}

impl fmt::Display for Action {
    /// One readable line for hovers and reports, e.g. `click button "Save"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Goto { url, .. } => write!(f, "go to {url:?}"),
            Action::Click { target, .. } => write!(f, "click {target}"),
            Action::DoubleClick { target, .. } => write!(f, "double-click {target}"),
            Action::Fill { target, value, .. } => write!(f, "fill {target} with {value:?}"),
            Action::TypeText { target, text, .. } => write!(f, "type {text:?} into {target}"),
            Action::Select { target, values, .. } => {
                let quoted: Vec<String> = values.iter().map(|value| format!("{value:?}")).collect();
                if quoted.is_empty() {
                    write!(f, "deselect all in {target}")
                } else {
                    write!(f, "select {} in {target}", quoted.join(", "))
                }
            }
            Action::Upload { target, files, .. } => {
                let quoted: Vec<String> = files.iter().map(|file| format!("{file:?}")).collect();
                if quoted.is_empty() {
                    write!(f, "clear the files of {target}")
                } else {
                    write!(f, "upload {} to {target}", quoted.join(", "))
                }
            }
            Action::Press { target: Some(target), key, .. } => write!(f, "press {key:?} in {target}"),
            Action::Press { target: None, key, .. } => write!(f, "press {key:?}"),
            Action::Check { target, .. } => write!(f, "check {target}"),
            Action::Uncheck { target, .. } => write!(f, "uncheck {target}"),
            Action::Hover { target, .. } => write!(f, "hover {target}"),
            Action::Drag { target, to, .. } => write!(f, "drag {target} onto {to}"),
            Action::SwitchTab { index: Some(index), .. } => write!(f, "switch to tab {index}"),
            Action::SwitchTab { url_pattern: Some(pattern), .. } => write!(f, "switch to the tab matching /{pattern}/"),
            Action::SwitchTab { .. } => f.write_str("switch tab"),
            Action::Dialog { accept: true, prompt_text: Some(text), .. } => {
                write!(f, "accept the dialog with {text:?}")
            }
            Action::Dialog { accept: true, .. } => f.write_str("accept the dialog"),
            Action::Dialog { accept: false, .. } => f.write_str("dismiss the dialog"),
            Action::WaitForResponse { response, .. } => write!(f, "wait for response {response}"),
            Action::ExpectVisible { target, .. } => write!(f, "expect {target} to be visible"),
            Action::ExpectHidden { target, .. } => write!(f, "expect {target} to be hidden"),
            Action::ExpectText { target, text: Some(text), .. } => write!(f, "expect text of {target} to be {text:?}"),
            Action::ExpectText { target, text_regex, .. } => {
                write!(f, "expect text of {target} to match /{}/", text_regex.as_deref().unwrap_or_default())
            }
            Action::ExpectValue { target, value, .. } => {
                write!(f, "expect value of {target} to be {value:?}")
            }
            Action::ExpectUrl { url: Some(url), .. } => write!(f, "expect url to be {url:?}"),
            Action::ExpectUrl { url_regex, .. } => {
                write!(f, "expect url to match /{}/", url_regex.as_deref().unwrap_or_default())
            }
            Action::ExpectState { target, state, .. } => write!(f, "expect {target} to {state}"),
            Action::ExpectResponse { response, .. } => write!(f, "expect response {response}"),
            Action::ExpectDownload { file_name, file_name_regex, contains, .. } => write!(
                f,
                "expect {}",
                describe_download(file_name.as_deref(), file_name_regex.as_deref(), contains.as_deref())
            ),
            Action::ExpectNoConsoleErrors { .. } => f.write_str("expect no console errors"),
            Action::ExpectCount { target, count, .. } => {
                write!(f, "expect {count} of {target}")
            }
            Action::Request { service, method, path, session, extract, .. } => {
                write!(f, "send {}", RequestLine { service, method, path })?;
                if let Some(session) = session {
                    write!(f, " as {session:?}")?;
                }
                for kept in extract {
                    write!(f, ", keep {} as {:?}", kept.pointer, kept.name)?;
                }
                Ok(())
            }
            Action::ExpectStatus { status, .. } => write!(f, "expect status {status}"),
            Action::ExpectField { pointer, value: Some(value), .. } => {
                write!(f, "expect field {pointer} to be {}", value.0)
            }
            Action::ExpectField { pointer, pattern, .. } => {
                write!(f, "expect field {pointer} to match /{}/", pattern.as_deref().unwrap_or_default())
            }
            Action::ExpectSchema { .. } => f.write_str("expect the response to match the contract"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn button(name: &str) -> Target {
        Target::role("button", name)
    }

    fn every_action() -> Vec<Action> {
        let target = button("Save");
        let response = ResponseMatcher::url("^/api/cart$");
        vec![
            Action::Goto { url: "/".into(), timeout_ms: None },
            Action::Click { target: target.clone(), timeout_ms: None },
            Action::DoubleClick { target: target.clone(), timeout_ms: None },
            Action::Fill { target: target.clone(), value: String::new(), timeout_ms: None },
            Action::TypeText { target: target.clone(), text: "Ada".into(), timeout_ms: None },
            Action::Select { target: target.clone(), values: vec![], timeout_ms: None },
            Action::Upload { target: target.clone(), files: vec!["fixtures/a.png".into()], timeout_ms: None },
            Action::Press { target: None, key: "Enter".into(), timeout_ms: None },
            Action::Check { target: target.clone(), timeout_ms: None },
            Action::Uncheck { target: target.clone(), timeout_ms: None },
            Action::Hover { target: target.clone(), timeout_ms: None },
            Action::Drag { target: target.clone(), to: button("Done"), timeout_ms: None },
            Action::SwitchTab { index: Some(1), url_pattern: None, timeout_ms: None },
            Action::Dialog { accept: true, prompt_text: None, timeout_ms: None },
            Action::WaitForResponse { response: response.clone(), timeout_ms: None },
            Action::ExpectVisible { target: target.clone(), timeout_ms: None },
            Action::ExpectHidden { target: target.clone(), timeout_ms: None },
            Action::ExpectText { target: target.clone(), text: Some("x".into()), text_regex: None, timeout_ms: None },
            Action::ExpectValue { target: target.clone(), value: "x".into(), timeout_ms: None },
            Action::ExpectUrl { url: Some("/".into()), url_regex: None, timeout_ms: None },
            Action::ExpectState { target: target.clone(), state: ElementState::Checked, timeout_ms: None },
            Action::ExpectResponse { response, timeout_ms: None },
            Action::ExpectDownload {
                file_name: Some("orders.csv".into()),
                file_name_regex: None,
                contains: None,
                timeout_ms: None,
            },
            Action::ExpectNoConsoleErrors { timeout_ms: None },
            Action::ExpectCount { target, count: 2, timeout_ms: Some(500) },
            Action::Request {
                service: "shop".into(),
                method: "POST".into(),
                path: "/orders".into(),
                session: None,
                headers: Vec::new(),
                body: Some(JsonTemplate(serde_json::json!({ "seats": { "$value": "<seats>", "$type": "number" } }))),
                extract: vec![Extract { name: "order".into(), pointer: "/id".into() }],
                idempotent: false,
                timeout_ms: None,
            },
            Action::ExpectStatus { status: "201".into(), session: None, timeout_ms: None },
            Action::ExpectField {
                pointer: "/total".into(),
                value: Some(JsonTemplate(serde_json::json!(13))),
                pattern: None,
                session: None,
                timeout_ms: None,
            },
            Action::ExpectSchema { session: None, timeout_ms: None },
        ]
    }

    #[test]
    fn classification_of_every_action_type() {
        let actions = every_action();
        assert_eq!(actions.len(), 29, "one of each type");
        for action in &actions {
            let name = action.type_name();
            assert_eq!(action.is_assertion(), name.starts_with("expect"), "{name}");
            // A POST may write: never sent twice.
            let never_repeated =
                matches!(name, "click" | "dblclick" | "upload" | "drag" | "typeText" | "press" | "dialog" | "request");
            assert_eq!(action.may_repeat(), !never_repeated, "{name}");
            let json = serde_json::to_value(action).expect("serializes");
            assert_eq!(json["type"], name, "type tag of {name}");
        }
    }

    #[test]
    fn target_accessors_agree() {
        for mut action in every_action() {
            let had = action.target().cloned();
            assert_eq!(action.target_mut().map(|t| t.clone()), had);
            let all: Vec<Target> = action.targets().into_iter().cloned().collect();
            assert_eq!(all.first(), had.as_ref(), "the target comes first");
            assert_eq!(action.targets_mut().into_iter().map(|t| t.clone()).collect::<Vec<_>>(), all);
            assert_eq!(all.len(), usize::from(had.is_some()) + usize::from(action.type_name() == "drag"));
        }
        let press = Action::Press { target: Some(button("OK")), key: "Enter".into(), timeout_ms: Some(10) };
        assert_eq!(press.target(), Some(&button("OK")));
        assert_eq!(press.timeout_ms(), Some(10));
    }

    #[test]
    fn renders_one_readable_line() {
        let email = Target::role("textbox", "Email");
        let total = Target::role("heading", "Total");
        let cases = [
            (Action::Click { target: button("Save"), timeout_ms: None }, r#"click button "Save""#),
            (
                Action::DoubleClick { target: Target::role("listitem", "Buy milk"), timeout_ms: None },
                r#"double-click listitem "Buy milk""#,
            ),
            (
                Action::Fill { target: email.clone(), value: "{env:USER_EMAIL}".into(), timeout_ms: None },
                r#"fill textbox "Email" with "{env:USER_EMAIL}""#,
            ),
            (
                Action::ExpectText {
                    target: total.clone(),
                    text: Some("€12.00".into()),
                    text_regex: None,
                    timeout_ms: None,
                },
                r#"expect text of heading "Total" to be "€12.00""#,
            ),
            (
                Action::ExpectText { target: total, text: None, text_regex: Some("^€\\d+".into()), timeout_ms: None },
                r#"expect text of heading "Total" to match /^€\d+/"#,
            ),
            (
                Action::Select { target: email.clone(), values: vec!["a".into(), "b".into()], timeout_ms: None },
                r#"select "a", "b" in textbox "Email""#,
            ),
            (
                Action::Upload {
                    target: Target::role("button", "Photo"),
                    files: vec!["fixtures/cat.png".into()],
                    timeout_ms: None,
                },
                r#"upload "fixtures/cat.png" to button "Photo""#,
            ),
            (
                Action::Upload { target: Target::role("button", "Photo"), files: vec![], timeout_ms: None },
                r#"clear the files of button "Photo""#,
            ),
            (
                Action::Press { target: Some(email.clone()), key: "Enter".into(), timeout_ms: None },
                r#"press "Enter" in textbox "Email""#,
            ),
            (
                Action::WaitForResponse {
                    response: ResponseMatcher {
                        url_regex: "^/api/status$".into(),
                        method: Some("GET".into()),
                        status: Some("2xx".into()),
                        body_regex: Some("READY".into()),
                    },
                    timeout_ms: None,
                },
                "wait for response GET /^/api/status$/ status 2xx body /READY/",
            ),
            (
                Action::ExpectState {
                    target: email.clone(),
                    state: ElementState::Attribute { name: "aria-invalid".into(), value: Some("true".into()) },
                    timeout_ms: None,
                },
                r#"expect textbox "Email" to have attribute "aria-invalid" = "true""#,
            ),
            (
                Action::ExpectState {
                    target: email.clone(),
                    state: ElementState::Css { property: "opacity".into(), value: "0".into() },
                    timeout_ms: None,
                },
                r#"expect textbox "Email" to have css opacity = "0""#,
            ),
            (
                Action::ExpectCount { target: Target::role("listitem", "Item"), count: 3, timeout_ms: None },
                r#"expect 3 of listitem "Item""#,
            ),
            (Action::Dialog { accept: false, prompt_text: None, timeout_ms: None }, "dismiss the dialog"),
            (
                Action::TypeText { target: Target::role("combobox", "City"), text: "Ams".into(), timeout_ms: None },
                r#"type "Ams" into combobox "City""#,
            ),
            (
                Action::Drag {
                    target: Target::role("listitem", "Write tests"),
                    to: Target::role("region", "Done"),
                    timeout_ms: None,
                },
                r#"drag listitem "Write tests" onto region "Done""#,
            ),
            (
                Action::SwitchTab { index: None, url_pattern: Some("/checkout".into()), timeout_ms: None },
                "switch to the tab matching //checkout/",
            ),
            (
                Action::ExpectUrl { url: None, url_regex: Some("^/orders/\\d+$".into()), timeout_ms: None },
                r"expect url to match /^/orders/\d+$/",
            ),
            (Action::ExpectNoConsoleErrors { timeout_ms: None }, "expect no console errors"),
            (
                Action::ExpectDownload {
                    file_name: Some("orders.csv".into()),
                    file_name_regex: None,
                    contains: Some("1001,Margaret Hamilton".into()),
                    timeout_ms: None,
                },
                r#"expect a download named "orders.csv" holding "1001,Margaret Hamilton""#,
            ),
            (
                Action::ExpectDownload {
                    file_name: None,
                    file_name_regex: Some(r"^invoice-\d+\.pdf$".into()),
                    contains: None,
                    timeout_ms: None,
                },
                r"expect a download named like /^invoice-\d+\.pdf$/",
            ),
            (
                Action::ExpectDownload { file_name: None, file_name_regex: None, contains: None, timeout_ms: None },
                "expect a download",
            ),
        ];
        for (action, expected) in cases {
            assert_eq!(action.to_string(), expected);
        }
    }

    #[test]
    fn status_matcher_exact_and_class() {
        let mut matcher = ResponseMatcher::url("/");
        assert!(matcher.status_matches(500));
        matcher.status = Some("2xx".into());
        assert!(matcher.status_matches(201));
        assert!(!matcher.status_matches(301));
        matcher.status = Some("404".into());
        assert!(matcher.status_matches(404));
        assert!(!matcher.status_matches(400));
    }
}
