//! The tools of an `@api` recording: requests and their checks, and no browser. The input
//! schemas are generated from these types, as the browser tools' are.

use std::collections::BTreeMap;

use saffron_agent::ToolSpec;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::record::tools::{ASSERT, DONE, DoneInput, STEP, StepInput, spec};

pub const REQUEST: &str = "saffron_request";
pub const EXTRACT: &str = "saffron_extract";
/// The response checks beside a page, whose `saffron_assert` checks the page.
pub const ASSERT_RESPONSE: &str = "saffron_assert_response";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestInput {
    /// The service's name, from the task's list; when absent, the one service the project
    /// configures, else `app`.
    #[serde(default)]
    pub service: Option<String>,
    /// GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS.
    pub method: String,
    /// The path and query, relative to the service's base URL, starting with `/`. Write values
    /// as the step gives them (`<param>`, `{unique:name}`) and values kept from responses as
    /// `{captured:name}`.
    pub path: String,
    /// Whose client sends it, each with its own cookies: the name a step gives (`As "alice"`);
    /// the scenario's own when absent.
    #[serde(default)]
    pub session: Option<String>,
    /// Request headers, tokens allowed (`Authorization: Bearer {captured:token}`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A JSON body. A token that stands where a number or boolean goes is written as a typed
    /// leaf: `{"$value": "<quantity>", "$type": "number"}` (or "boolean", "string").
    #[serde(default)]
    pub body: Option<Value>,
    /// Sending it twice has the effect of sending it once (a PUT of a whole resource): replay
    /// may send it again when the service refuses the connection.
    #[serde(default)]
    pub idempotent: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractInput {
    /// The name later requests and checks use, as `{captured:name}` (letters, digits, _).
    pub name: String,
    /// A JSON Pointer into the latest response's body, e.g. `/id` or `/items/0/sku`.
    pub pointer: String,
}

/// What an `@api` check reads of the latest response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ApiCheck {
    /// Its status is `status` (`404`, or a class such as `4xx`): only where the step names it.
    Status,
    /// The field at `pointer` equals `value` (JSON), or its text matches `pattern`.
    Field,
    /// It is what the service's pinned contract says its operation answers with that status.
    Schema,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApiAssertInput {
    pub check: ApiCheck,
    #[serde(default)]
    pub status: Option<String>,
    /// A JSON Pointer into the body (field).
    #[serde(default)]
    pub pointer: Option<String>,
    /// The expected value as JSON (field), tokens as in a request body.
    #[serde(default)]
    pub value: Option<Value>,
    /// A regular expression the field's text matches, for volatile parts (field).
    #[serde(default)]
    pub pattern: Option<String>,
    /// Whose latest response (the scenario's own when absent).
    #[serde(default)]
    pub session: Option<String>,
}

/// Every tool of an `@api` recording, in the order the model sees them.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        spec::<StepInput>(STEP, "Announce the step you perform next, by its number. Call it before its requests."),
        spec::<RequestInput>(REQUEST, "Send a request to a service and see its response; it is recorded."),
        spec::<ExtractInput>(
            EXTRACT,
            "Keep a field of the latest response under a name, for later requests and checks as {captured:name}.",
        ),
        spec::<ApiAssertInput>(
            ASSERT,
            "Check the latest response: its status (only a status the step names), a field, or its schema. A check \
             that does not hold is refused with what was found.",
        ),
        spec::<DoneInput>(DONE, "End the session: success, or the defect you found."),
    ]
}

/// The request tools a browser session gets beside the page in a project with an API: requests
/// sent with the page's cookies, and checks of their responses.
pub fn beside_page_specs() -> Vec<ToolSpec> {
    vec![
        spec::<RequestInput>(
            REQUEST,
            "Send a request to a service, with this browser's cookies, and see its response; it is recorded.",
        ),
        spec::<ExtractInput>(
            EXTRACT,
            "Keep a field of the latest response under a name, for later requests and checks as {captured:name}.",
        ),
        spec::<ApiAssertInput>(
            ASSERT_RESPONSE,
            "Check the latest response of a request you sent: its status (only a status the step names), a field, \
             or its schema. A check that does not hold is refused with what was found.",
        ),
    ]
}
