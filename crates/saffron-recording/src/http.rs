//! The HTTP family of actions: what a request is, as recorded. A request names its service
//! (`[api.services]`), never a host; its body is typed JSON, so a recording never sends `"3"`
//! for `3`.

use std::fmt;
use std::hash::{Hash, Hasher};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON value as recorded. Its strings may hold tokens (`<param>`, `{env:NAME}`,
/// `{captured:name}`, `{unique:name}`); an object `{"$value": "<seats>", "$type": "number"}` is a
/// typed leaf: its `$value` is resolved, then read as its `$type` (`number`, `integer`,
/// `boolean` or `string`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct JsonTemplate(pub Value);

impl Hash for JsonTemplate {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_string().hash(state);
    }
}

/// The key of a typed leaf's value.
pub const TYPED_VALUE: &str = "$value";
/// The key of a typed leaf's type.
pub const TYPED_TYPE: &str = "$type";

/// Why a resolved template is not the JSON it says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct TypedLeafError {
    /// Where, as a JSON Pointer into the body.
    pub path: String,
    /// What is wrong there.
    pub problem: String,
}

impl JsonTemplate {
    /// The JSON to send, every typed leaf read as its type (call it after the tokens are
    /// resolved).
    pub fn to_json(&self) -> Result<Value, TypedLeafError> {
        typed(&self.0, "")
    }

    /// A template of `value` as it is (no typed leaves).
    pub fn literal(value: Value) -> JsonTemplate {
        JsonTemplate(value)
    }
}

/// The leaf `{"$value": …, "$type": …}` in `object`, when it is one.
pub fn typed_leaf(object: &serde_json::Map<String, Value>) -> Option<(&Value, &str)> {
    if object.len() != 2 {
        return None;
    }
    Some((object.get(TYPED_VALUE)?, object.get(TYPED_TYPE)?.as_str()?))
}

fn typed(value: &Value, path: &str) -> Result<Value, TypedLeafError> {
    match value {
        Value::Object(object) => {
            if let Some((leaf, kind)) = typed_leaf(object) {
                return read_typed(leaf, kind).map_err(|problem| TypedLeafError { path: path.to_owned(), problem });
            }
            let mut out = serde_json::Map::new();
            for (key, item) in object {
                out.insert(key.clone(), typed(item, &format!("{path}/{}", escape_pointer(key)))?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, item)| typed(item, &format!("{path}/{index}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

fn read_typed(leaf: &Value, kind: &str) -> Result<Value, String> {
    let Some(text) = leaf.as_str() else {
        // Written already as its type (a literal the agent typed as a number).
        return Ok(leaf.clone());
    };
    let text = text.trim();
    match kind {
        "string" => Ok(Value::String(text.to_owned())),
        "integer" => text.parse::<i64>().map(Value::from).map_err(|_| format!("the value {text:?} is not an integer")),
        "number" => {
            if let Ok(integer) = text.parse::<i64>() {
                return Ok(Value::from(integer));
            }
            text.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| format!("the value {text:?} is not a number"))
        }
        "boolean" => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(format!("the value {text:?} is not true or false")),
        },
        other => Err(format!("unknown $type {other:?} (number, integer, boolean or string)")),
    }
}

/// `a/b~c` as a JSON Pointer segment: `a~1b~0c`.
pub fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// One request header.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a header (a JSON object with name and value)")]
pub struct Header {
    /// The header's name, e.g. `Authorization`.
    pub name: String,
    /// Its value; it may hold tokens.
    pub value: String,
}

/// A value kept from a response, reached later as `{captured:name}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "an extract (a JSON object with name and pointer)")]
pub struct Extract {
    /// The name `{captured:name}` reads.
    pub name: String,
    /// A JSON Pointer into the response's body, e.g. `/id` or `/items/0/sku`.
    pub pointer: String,
}

/// True for the methods a replay may send again: they change nothing on the server.
pub fn is_safe_method(method: &str) -> bool {
    matches!(method.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS")
}

/// True for a status an `expectStatus` names: a code (`"201"`) or a class (`"4xx"`).
pub fn is_status(status: &str) -> bool {
    let (code, digits) = match status.strip_suffix("xx") {
        Some(class) => (class, 1),
        None => (status, 3),
    };
    code.len() == digits && code.chars().all(|c| c.is_ascii_digit()) && !code.starts_with('0')
}

/// True when `status` is `expected`: an exact code (`"201"`) or a class (`"2xx"`).
pub fn status_matches(expected: &str, status: u16) -> bool {
    let actual = status.to_string();
    match expected.strip_suffix("xx") {
        Some(class) => actual.len() == 3 && actual.starts_with(class),
        None => actual == expected,
    }
}

/// `GET /orders/{captured:order} to shop`, for lines and reports.
pub struct RequestLine<'a> {
    /// The service's name.
    pub service: &'a str,
    /// The method.
    pub method: &'a str,
    /// The path, relative to the service's base URL.
    pub path: &'a str,
}

impl fmt::Display for RequestLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} to {}", self.method, self.path, self.service)
    }
}

/// Every string of `value` that may hold a token, with its JSON Pointer: object values and
/// array items (keys are names, never values).
pub(crate) fn json_strings<'a>(value: &'a Value, path: String, visit: &mut impl FnMut(String, &'a String)) {
    match value {
        Value::String(text) => visit(path, text),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                json_strings(item, format!("{path}/{index}"), visit);
            }
        }
        Value::Object(object) => {
            for (key, item) in object {
                if key == TYPED_TYPE && typed_leaf(object).is_some() {
                    continue;
                }
                json_strings(item, format!("{path}/{}", escape_pointer(key)), visit);
            }
        }
        _ => {}
    }
}

/// [`json_strings`], to rewrite.
pub(crate) fn json_strings_mut<'a>(value: &'a mut Value, path: String, visit: &mut impl FnMut(String, &'a mut String)) {
    match value {
        Value::String(text) => visit(path, text),
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                json_strings_mut(item, format!("{path}/{index}"), visit);
            }
        }
        Value::Object(object) => {
            let leaf = typed_leaf(object).is_some();
            for (key, item) in object.iter_mut() {
                if leaf && key == TYPED_TYPE {
                    continue;
                }
                let item_path = format!("{path}/{}", escape_pointer(key));
                json_strings_mut(item, item_path, visit);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn typed_leaves_are_read_as_their_type_and_the_rest_is_kept() {
        let template = JsonTemplate(json!({
            "seats": { "$value": "3", "$type": "number" },
            "price": { "$value": "12.5", "$type": "number" },
            "vip": { "$value": "true", "$type": "boolean" },
            "code": { "$value": "007", "$type": "string" },
            "name": "Ada",
            "lines": [{ "qty": { "$value": "2", "$type": "integer" } }],
        }));
        assert_eq!(
            template.to_json().expect("typed"),
            json!({ "seats": 3, "price": 12.5, "vip": true, "code": "007", "name": "Ada", "lines": [{ "qty": 2 }] })
        );
        let wrong = JsonTemplate(json!({ "lines": [{ "qty": { "$value": "two", "$type": "integer" } }] }));
        let error = wrong.to_json().expect_err("not an integer");
        assert_eq!(error.path, "/lines/0/qty");
        assert!(error.problem.contains("\"two\" is not an integer"), "{error}");
    }

    #[test]
    fn the_strings_of_a_body_are_walked_by_pointer_without_a_typed_leafs_type() {
        let mut body = json!({ "a/b": ["<x>", { "$value": "<n>", "$type": "number" }], "k": 1 });
        let mut seen = Vec::new();
        json_strings(&body, String::new(), &mut |path, text| seen.push((path, text.clone())));
        assert_eq!(seen, [("/a~1b/0".to_owned(), "<x>".to_owned()), ("/a~1b/1/$value".to_owned(), "<n>".to_owned())]);
        json_strings_mut(&mut body, String::new(), &mut |_, text| *text = text.replace('<', "[").replace('>', "]"));
        assert_eq!(body, json!({ "a/b": ["[x]", { "$value": "[n]", "$type": "number" }], "k": 1 }));
    }

    #[test]
    fn statuses_match_exactly_or_by_class_and_only_reads_are_safe_to_repeat() {
        assert!(status_matches("201", 201) && !status_matches("201", 200));
        assert!(status_matches("4xx", 404) && !status_matches("4xx", 500));
        assert!(is_safe_method("get") && is_safe_method("OPTIONS") && !is_safe_method("POST"));
    }
}
