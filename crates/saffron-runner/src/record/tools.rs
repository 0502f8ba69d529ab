//! The recording agent's tools: their names, descriptions and input types. The input schemas
//! the model sees are generated from the same serde types the gateway parses calls with, so
//! the two cannot disagree.

use saffron_agent::ToolSpec;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An element of the last snapshot, by its ref.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefInput {
    /// The element's ref, as the last snapshot shows it.
    #[serde(rename = "ref")]
    pub element: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FillInput {
    /// The field's ref.
    #[serde(rename = "ref")]
    pub element: String,
    /// The text, as the step gives it: `<param>`, `<table:Key>` and `{env:NAME}` are typed as
    /// written and filled in by Saffron.
    pub value: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeInput {
    /// The field's ref.
    #[serde(rename = "ref")]
    pub element: String,
    /// The text typed after what the field holds (tokens as in fill).
    pub text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectInput {
    /// The select's ref.
    #[serde(rename = "ref")]
    pub element: String,
    /// The option's label or value (tokens as in fill).
    pub option: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadInput {
    /// The file input, or the button or label that opens its file chooser.
    #[serde(rename = "ref")]
    pub element: String,
    /// Files from the list in the task, as written there; none clears the choice.
    pub files: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragInput {
    /// The ref of the element dragged.
    #[serde(rename = "ref")]
    pub element: String,
    /// The ref of the element it is dropped on.
    pub to: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PressInput {
    /// The key, e.g. `Enter`, `Tab`, `Control+A`.
    pub key: String,
    /// The element to press it on; the page when absent.
    #[serde(default, rename = "ref")]
    pub element: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GotoInput {
    /// An address of the application: a path such as `/login`, or a full URL under the base URL.
    pub url: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchTabInput {
    /// The tab's index in the snapshot's tab list, from 0.
    #[serde(default)]
    pub index: Option<u32>,
    /// A regular expression the tab's URL matches (steadier than an index), e.g. `/invoices/1001$`.
    #[serde(default)]
    pub url_pattern: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DialogInput {
    /// Accept (true) or dismiss (false) the next dialog. Call it before the action that opens it.
    pub accept: bool,
    /// Text typed into a prompt dialog.
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepInput {
    /// The step's number in the task's list, from 1.
    pub step: usize,
}

/// What `saffron_assert` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CheckKind {
    /// The element (`ref`) is visible.
    Visible,
    /// The element (`ref`) is hidden or gone.
    Hidden,
    /// The element's (`ref`) text is `text`, or matches `pattern`.
    Text,
    /// The field's (`ref`) value is `value`.
    Value,
    /// The page's URL is `url` (a path such as `/orders`), or matches `pattern`.
    Url,
    /// The element (`ref`) is in `state`.
    State,
    /// `count` elements have the role `role` (and the name `name`).
    Count,
    /// A response was seen whose path matches `pattern` (with `method`, `status`).
    Response,
    /// A file was downloaded during the scenario, named `text` (or a name matching `pattern`),
    /// holding the text `value` when given (a row of an export, an invoice's number).
    Download,
    /// The page logged no console error.
    NoConsoleErrors,
}

/// A checkable state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StateInput {
    Checked,
    Unchecked,
    Enabled,
    Disabled,
    Focused,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssertInput {
    pub check: CheckKind,
    /// The element checked (visible, hidden, text, value, state); or give `role` and `name`; a
    /// visible or text check of text outside any element with a ref may give only `text`.
    #[serde(default, rename = "ref")]
    pub element: Option<String>,
    /// Exact text (text), exact value (value), exact URL path (url), or a downloaded file's
    /// name (download).
    #[serde(default)]
    pub text: Option<String>,
    /// A field's exact value (value), or text a downloaded file holds (download).
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    /// A regular expression instead of an exact text or URL, for volatile parts (ids, counts).
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub state: Option<StateInput>,
    /// For count, or instead of `ref`: the elements' role and accessible name (tokens such as
    /// `<param>` allowed).
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub count: Option<u32>,
    /// For response: the HTTP method, and the status (`201`, or a class such as `2xx`).
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitResponseInput {
    /// A regular expression on the response's path and query, e.g. `^/api/orders$`.
    pub url_pattern: String,
    #[serde(default)]
    pub method: Option<String>,
    /// `200`, or a class such as `2xx`.
    #[serde(default)]
    pub status: Option<String>,
    /// A regular expression the body must match (a polling wait).
    #[serde(default)]
    pub body_pattern: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneInput {
    /// True when every step was performed and every Then step verified; false when the
    /// application does not do what a step says (a defect): say what you saw.
    pub success: bool,
    /// What you did and saw, in a few sentences.
    pub narrative: String,
    /// Repairs only: what kind of change you adapted to.
    #[serde(default)]
    pub change: Option<ChangeKind>,
    /// Repairs only: new wording for Given/When steps that the changed flow no longer
    /// describes truly (Then steps are never reworded).
    #[serde(default)]
    pub rewrites: Vec<RewriteInput>,
}

/// The kind of change a repair adapted to, as the agent classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// A control or label renamed, moved or restyled.
    Locator,
    /// A page or dialog added to the flow.
    PageAdded,
    /// A page removed from or merged into the flow.
    PageRemoved,
    /// Pages or steps in another order.
    Reordered,
    /// The page was slower or faster than recorded.
    Timing,
}

impl ChangeKind {
    pub fn describe(self) -> &'static str {
        match self {
            ChangeKind::Locator => "a control or label changed",
            ChangeKind::PageAdded => "a page was added to the flow",
            ChangeKind::PageRemoved => "a page was removed from the flow",
            ChangeKind::Reordered => "the flow was reordered",
            ChangeKind::Timing => "the timing changed",
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RewriteInput {
    /// The step's number.
    pub step: usize,
    /// The step's new text, without its keyword.
    pub text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

pub const SNAPSHOT: &str = "browser_snapshot";
pub const CLICK: &str = "browser_click";
pub const DOUBLE_CLICK: &str = "browser_double_click";
pub const FILL: &str = "browser_fill";
pub const TYPE: &str = "browser_type";
pub const SELECT: &str = "browser_select";
pub const UPLOAD: &str = "browser_upload";
pub const PRESS: &str = "browser_press";
pub const CHECK: &str = "browser_check";
pub const UNCHECK: &str = "browser_uncheck";
pub const HOVER: &str = "browser_hover";
pub const DRAG: &str = "browser_drag";
pub const GOTO: &str = "browser_goto";
pub const SWITCH_TAB: &str = "browser_switch_tab";
pub const DIALOG: &str = "browser_dialog";
pub const STEP: &str = "saffron_step";
pub const ASSERT: &str = "saffron_assert";
pub const WAIT_RESPONSE: &str = "saffron_wait_response";
pub const DONE: &str = "saffron_done";

/// Every tool, in the order the model sees them.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        spec::<NoInput>(SNAPSHOT, "The page now: URL, tabs, and its elements with their refs."),
        spec::<RefInput>(CLICK, "Click an element."),
        spec::<RefInput>(DOUBLE_CLICK, "Double-click an element (for pages that act on a double-click only)."),
        spec::<FillInput>(FILL, "Replace a field's text."),
        spec::<TypeInput>(
            TYPE,
            "Type into a field key by key, after what it holds (for fields that react to each key, such as \
             suggestions as you type; otherwise use fill).",
        ),
        spec::<SelectInput>(SELECT, "Choose an option of a select."),
        spec::<UploadInput>(UPLOAD, "Choose files for a file input, as in its file chooser."),
        spec::<PressInput>(PRESS, "Press a key, on an element or the page."),
        spec::<RefInput>(CHECK, "Check a checkbox or radio."),
        spec::<RefInput>(UNCHECK, "Uncheck a checkbox."),
        spec::<RefInput>(HOVER, "Move the pointer over an element."),
        spec::<DragInput>(DRAG, "Drag an element with the mouse and drop it on another."),
        spec::<GotoInput>(GOTO, "Open an address of the application."),
        spec::<SwitchTabInput>(SWITCH_TAB, "Work in another tab (by URL pattern or index)."),
        spec::<DialogInput>(DIALOG, "Answer the next dialog; call it before the action that opens it."),
        spec::<StepInput>(STEP, "Announce the step you perform next, by its number. Call it before its actions."),
        spec::<AssertInput>(
            ASSERT,
            "Check what a Then step says, on the page now. A check that does not hold is refused with what was \
             found.",
        ),
        spec::<WaitResponseInput>(
            WAIT_RESPONSE,
            "Wait for a response of the application's server (since the step began).",
        ),
        spec::<DoneInput>(DONE, "End the session: success, or the defect you found."),
    ]
}

pub(crate) fn spec<T: JsonSchema>(name: &str, description: &str) -> ToolSpec {
    let settings = schemars::generate::SchemaSettings::draft07().with(|settings| settings.inline_subschemas = true);
    let mut schema = settings.into_generator().into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        // Vendors want a plain object schema: no meta-schema, no title.
        object.remove("$schema");
        object.remove("title");
        object.entry("properties").or_insert_with(|| Value::Object(Default::default()));
    }
    ToolSpec { name: name.into(), description: description.into(), input_schema: schema }
}

/// The input of a call, or a sentence saying what is wrong with it.
pub fn parse<T: DeserializeOwned>(tool: &str, input: &Value) -> Result<T, String> {
    serde_json::from_value(input.clone())
        .map_err(|error| format!("the input of `{tool}` does not match its schema: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_a_plain_object_and_calls_parse_against_it() {
        for spec in specs() {
            assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
            assert!(spec.input_schema.get("$schema").is_none(), "{}", spec.name);
        }
        let fill: FillInput = parse(FILL, &serde_json::json!({ "ref": "e3", "value": "x" })).expect("parses");
        assert_eq!(fill.element, "e3");
        assert!(parse::<FillInput>(FILL, &serde_json::json!({ "ref": 3 })).is_err());
        assert!(parse::<RefInput>(CLICK, &serde_json::json!({ "ref": "e1", "shell": "rm" })).is_err());
    }
}
