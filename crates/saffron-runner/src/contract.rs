//! Pinned OpenAPI 3 contracts: fetching a service's document into the project (`saffron api
//! pin`), and checking a response against what it says the operation answers.
//!
//! A response is checked against the schema of its operation (the path template its request's
//! path matches, its method) for its status (exact, then the class `2XX`, then `default`), with
//! the contract's own `$ref`s resolved in the document. OpenAPI 3.0 schemas are read as draft 7
//! writes them (a boolean `exclusiveMinimum` becomes the bound it qualifies, `nullable` adds
//! `null` to the type); 3.1 schemas are JSON Schema 2020-12 already. A status whose response
//! the contract gives no body passes when the response has none (a 204).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

/// The most a contract document may weigh.
pub const MAX_CONTRACT_BYTES: usize = 20 * 1024 * 1024;
/// How long `saffron api pin` waits for the document.
pub const PIN_TIMEOUT: Duration = Duration::from_secs(30);

/// A parsed OpenAPI 3 document.
pub struct Contract {
    document: Value,
    /// 3.0 (draft-4-style schemas) rather than 3.1 (JSON Schema 2020-12).
    legacy: bool,
    /// Each response schema's validator, by its pointer, built the first time it is needed:
    /// building one compiles the whole document.
    validators: std::sync::Mutex<std::collections::BTreeMap<String, Arc<jsonschema::Validator>>>,
}

impl std::fmt::Debug for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contract").field("legacy", &self.legacy).finish_non_exhaustive()
    }
}

/// Why a document is not a contract Saffron can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    #[error("it is neither JSON nor YAML that describes an object ({0})")]
    NotReadable(String),
    #[error("it is not an OpenAPI 3 document (its `openapi` field is {0})")]
    NotOpenApi3(String),
    #[error("it is over {} MB", MAX_CONTRACT_BYTES / 1024 / 1024)]
    TooLarge,
}

impl Contract {
    /// Reads a document (JSON or YAML).
    pub fn parse(bytes: &[u8]) -> Result<Contract, ContractError> {
        Contract::from_document(document_json(bytes)?.0)
    }

    /// The contract a document read by [`document_json`] describes.
    pub fn from_document(document: Value) -> Result<Contract, ContractError> {
        let version = document.get("openapi").and_then(Value::as_str).unwrap_or_default().to_owned();
        if !version.starts_with("3.") {
            let shown = document.get("openapi").map_or_else(|| "missing".to_owned(), Value::to_string);
            return Err(ContractError::NotOpenApi3(shown));
        }
        let legacy = version.starts_with("3.0");
        let document = if legacy { draft7(document) } else { document };
        Ok(Contract { document, legacy, validators: std::sync::Mutex::default() })
    }

    /// Reads the document at `path` (JSON or YAML).
    pub fn load(path: &Path) -> Result<Contract, String> {
        let bytes =
            std::fs::read(path).map_err(|error| format!("the contract {} cannot be read: {error}", path.display()))?;
        Contract::parse(&bytes).map_err(|error| format!("the contract {} cannot be used: {error}", path.display()))
    }

    /// How many operations the document describes.
    pub fn operations(&self) -> usize {
        self.document["paths"].as_object().map_or(0, |paths| {
            paths
                .values()
                .filter_map(Value::as_object)
                .map(|item| item.keys().filter(|key| is_method(key)).count())
                .sum()
        })
    }

    /// Checks a response to `method path` (the path relative to the service's base URL, its
    /// query ignored) with `status` and `body` (`None` for an empty body).
    pub fn check(&self, method: &str, path: &str, status: u16, body: Option<&Value>) -> Result<(), String> {
        let path = path.split('?').next().unwrap_or_default();
        // The document's server path (`servers: [{url: "/api"}]`) is where its paths start.
        let path = match self.server_path() {
            Some(prefix) if path.starts_with(&format!("{prefix}/")) => &path[prefix.len()..],
            _ => path,
        };
        let method = method.to_ascii_lowercase();
        let Some((template, operation)) = self.operation(&method, path) else {
            return Err(format!("the contract has no operation {} {path}", method.to_ascii_uppercase()));
        };
        let responses = &operation["responses"];
        let class = format!("{}XX", status / 100);
        let Some((key, response)) = [status.to_string(), class, "default".to_owned()]
            .into_iter()
            .find_map(|key| responses.get(&key).map(|response| (key, response)))
        else {
            return Err(format!("the contract gives {} {template} no response {status}", method.to_ascii_uppercase()));
        };
        let response = self.resolve(response);
        let media = response["content"].as_object().and_then(|content| {
            content.iter().find(|(media, _)| media.starts_with("application/json") || media.ends_with("+json"))
        });
        let what = format!("{} {template} {status}", method.to_ascii_uppercase());
        let Some((media, media_object)) = media else {
            return match body {
                None => Ok(()),
                Some(_) if response.get("content").is_none() => {
                    Err(format!("the contract gives {what} no body, and the response has one"))
                }
                // A body in a media type this check does not read (text, XML).
                Some(_) => Ok(()),
            };
        };
        if media_object.get("schema").is_none() {
            return Ok(());
        }
        let Some(body) = body else {
            return Err(format!("the contract gives {what} a body, and the response has none"));
        };
        // A referenced response object is pointed at where it is defined.
        let pointer = match responses[&key].get("$ref").and_then(Value::as_str) {
            Some(reference) => format!("{reference}/content/{}/schema", escape(media)),
            None => format!(
                "#/paths/{}/{method}/responses/{}/content/{}/schema",
                escape(template),
                escape(&key),
                escape(media)
            ),
        };
        let validator = self
            .validator(pointer)
            .map_err(|error| format!("the contract's schema for {what} cannot be read: {error}"))?;
        let problems: Vec<String> = validator
            .iter_errors(body)
            .take(3)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() { error.to_string() } else { format!("{at}: {error}") }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("the response does not match the contract ({what}): {}", problems.join("; ")))
        }
    }

    /// The path of the document's first server (`/api` of `https://shop.example/api`), when it
    /// has one.
    fn server_path(&self) -> Option<String> {
        let url = self.document["servers"][0]["url"].as_str()?;
        let path = match url::Url::parse(url) {
            Ok(parsed) => parsed.path().to_owned(),
            Err(_) => url.to_owned(),
        };
        let path = path.trim_end_matches('/');
        (path.starts_with('/') && path.len() > 1).then(|| path.to_owned())
    }

    /// The validator of the schema at `pointer`: the whole document, which its `$ref`s resolve
    /// in, with a `$ref` to that schema.
    fn validator(&self, pointer: String) -> Result<Arc<jsonschema::Validator>, String> {
        let mut validators = self.validators.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(validator) = validators.get(&pointer) {
            return Ok(Arc::clone(validator));
        }
        let mut root = self.document.clone();
        if let Some(object) = root.as_object_mut() {
            object.insert("$ref".into(), Value::String(pointer.clone()));
        }
        let draft = if self.legacy { jsonschema::Draft::Draft7 } else { jsonschema::Draft::Draft202012 };
        let validator =
            Arc::new(jsonschema::options().with_draft(draft).build(&root).map_err(|error| error.to_string())?);
        validators.insert(pointer, Arc::clone(&validator));
        Ok(validator)
    }

    /// The operation for `method` whose path template matches `path`: a literal template first.
    fn operation(&self, method: &str, path: &str) -> Option<(&str, &Value)> {
        let paths = self.document["paths"].as_object()?;
        let mut matches: Vec<(&str, &Value)> = paths
            .iter()
            .filter(|(template, _)| template_matches(template, path))
            .filter_map(|(template, item)| Some((template.as_str(), self.resolve(item).get(method)?)))
            .collect();
        matches.sort_by_key(|(template, _)| template.matches('{').count());
        matches.into_iter().next()
    }

    /// `value`, or what its `$ref` (inside the document) points at.
    fn resolve<'a>(&'a self, value: &'a Value) -> &'a Value {
        match value.get("$ref").and_then(Value::as_str).and_then(|reference| reference.strip_prefix('#')) {
            Some(pointer) => self.document.pointer(pointer).unwrap_or(value),
            None => value,
        }
    }
}

fn is_method(key: &str) -> bool {
    matches!(key, "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace")
}

/// `/orders/{id}` matches `/orders/42`: a `{name}` segment matches any one segment.
fn template_matches(template: &str, path: &str) -> bool {
    let wanted: Vec<&str> = template.trim_end_matches('/').split('/').collect();
    let got: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    wanted.len() == got.len()
        && wanted
            .iter()
            .zip(&got)
            .all(|(want, got)| (want.starts_with('{') && want.ends_with('}') && !got.is_empty()) || want == got)
}

/// A pointer segment as it may stand in a URI fragment: `~` and `/` escaped as JSON Pointer
/// has them, then every character a fragment does not allow percent-encoded (`{id}`).
fn escape(segment: &str) -> String {
    let pointer = saffron_recording::http::escape_pointer(segment);
    let mut out = String::with_capacity(pointer.len());
    for byte in pointer.bytes() {
        let allowed = byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&byte);
        if allowed {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// An OpenAPI 3.0 document's schemas as draft 7 reads them.
fn draft7(value: Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(draft7).collect()),
        Value::Object(object) => {
            let mut object: Map<String, Value> = object.into_iter().map(|(key, value)| (key, draft7(value))).collect();
            for (flag, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
                match object.get(flag) {
                    Some(Value::Bool(true)) => match object.remove(bound) {
                        Some(limit) => {
                            object.insert(flag.into(), limit);
                        }
                        None => {
                            object.remove(flag);
                        }
                    },
                    Some(Value::Bool(false)) => {
                        object.remove(flag);
                    }
                    _ => {}
                }
            }
            if object.get("nullable") == Some(&Value::Bool(true)) {
                object.remove("nullable");
                if let Some(Value::String(kind)) = object.get("type").cloned() {
                    object.insert("type".into(), Value::Array(vec![Value::String(kind), Value::String("null".into())]));
                }
            }
            Value::Object(object)
        }
        other => other,
    }
}

/// The document at `url`, for `saffron api pin`: within [`PIN_TIMEOUT`], at most
/// [`MAX_CONTRACT_BYTES`].
pub async fn fetch(url: &str) -> Result<Vec<u8>, String> {
    use crate::medium::http::{Capped, read_capped, root_cause};
    let parsed = url::Url::parse(url).map_err(|error| format!("`{url}` is not a URL: {error}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("`{url}` is not an http:// or https:// address"));
    }
    saffron_agent::install_crypto_provider();
    let short = |error: reqwest::Error| {
        if error.is_timeout() { format!("no answer within {} s", PIN_TIMEOUT.as_secs()) } else { root_cause(&error) }
    };
    let client = reqwest::Client::builder().timeout(PIN_TIMEOUT).build().map_err(short)?;
    let response =
        client.get(parsed).send().await.map_err(|error| format!("{url} did not answer: {}", short(error)))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    read_capped(response, MAX_CONTRACT_BYTES).await.map_err(|problem| match problem {
        Capped::TooLarge => {
            format!("the document at {url} is over {} MB: it was not pinned", MAX_CONTRACT_BYTES / 1024 / 1024)
        }
        Capped::Unreadable(cause) => format!("{url}: {cause}"),
    })
}

/// Where a service's contract is pinned: `contract` in its table, else
/// `contracts/<service>.openapi.json`, under the project root.
pub fn contract_path(root: &Path, name: &str, service: &crate::config::ServiceSection) -> PathBuf {
    match service.contract.as_deref().map(str::trim).filter(|path| !path.is_empty()) {
        Some(path) => root.join(path),
        None => root.join("contracts").join(format!("{name}.openapi.json")),
    }
}

/// A document's JSON, read as JSON or else as YAML (many OpenAPI documents are written in
/// YAML), and whether it was YAML. It must be an object.
pub fn document_json(bytes: &[u8]) -> Result<(Value, bool), ContractError> {
    if bytes.len() > MAX_CONTRACT_BYTES {
        return Err(ContractError::TooLarge);
    }
    let json_error = match serde_json::from_slice::<Value>(bytes) {
        Ok(document) if document.is_object() => return Ok((document, false)),
        Ok(_) => "a JSON value that is not an object".to_owned(),
        Err(error) => format!("as JSON: {error}"),
    };
    let text =
        std::str::from_utf8(bytes).map_err(|_| ContractError::NotReadable(format!("{json_error}; not UTF-8")))?;
    match serde_saphyr::from_str::<Value>(text) {
        Ok(document) if document.is_object() => Ok((document, true)),
        Ok(_) => Err(ContractError::NotReadable(format!("{json_error}; as YAML: not a mapping"))),
        Err(error) => {
            let first = error.to_string().lines().next().unwrap_or_default().to_owned();
            Err(ContractError::NotReadable(format!("{json_error}; as YAML: {first}")))
        }
    }
}

/// The SHA-256 of a contract file's bytes, in hex.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn contract(version: &str) -> Contract {
        let document = json!({
            "openapi": version,
            "info": { "title": "shop", "version": "1" },
            "paths": {
                "/orders": { "post": { "responses": {
                    "201": { "description": "made", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Made" } } } },
                    "4XX": { "$ref": "#/components/responses/Problem" }
                } } },
                "/orders/{id}": {
                    "get": { "responses": { "200": { "description": "one", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Order" } } } } } },
                    "delete": { "responses": { "204": { "description": "gone" } } }
                },
                "/orders/latest": { "get": { "responses": { "200": { "description": "x", "content": { "application/json": { "schema": { "type": "string" } } } } } } }
            },
            "components": {
                "schemas": {
                    "Made": { "type": "object", "required": ["id"], "properties": { "id": { "type": "integer", "minimum": 0, "exclusiveMinimum": true } } },
                    "Order": { "type": "object", "required": ["id", "note"], "properties": { "id": { "type": "integer" }, "note": { "type": "string", "nullable": true } } }
                },
                "responses": { "Problem": { "description": "a problem", "content": { "application/json": { "schema": { "type": "object", "required": ["error"] } } } } }
            }
        });
        Contract::parse(document.to_string().as_bytes()).expect("a contract")
    }

    #[test]
    fn a_response_is_checked_against_its_operation_and_status() {
        let contract = contract("3.0.3");
        assert_eq!(contract.operations(), 4);
        // The server's path is where the document's paths start.
        let mut document = contract.document.clone();
        document["servers"] = json!([{ "url": "/api" }]);
        let served = Contract::parse(document.to_string().as_bytes()).expect("a contract");
        assert_eq!(served.check("POST", "/api/orders", 201, Some(&json!({ "id": 3 }))), Ok(()));
        assert_eq!(served.check("POST", "/orders", 201, Some(&json!({ "id": 3 }))), Ok(()));
        assert_eq!(contract.check("POST", "/orders", 201, Some(&json!({ "id": 3 }))), Ok(()));
        let missing = contract.check("POST", "/orders", 201, Some(&json!({ "number": 3 }))).expect_err("no id");
        assert!(missing.contains("POST /orders 201") && missing.contains("\"id\" is a required property"), "{missing}");
        // The class, through a referenced response.
        assert_eq!(contract.check("POST", "/orders", 422, Some(&json!({ "error": "x" }))), Ok(()));
        assert!(contract.check("POST", "/orders", 422, Some(&json!({}))).is_err());
        assert!(
            contract.check("POST", "/orders", 500, Some(&json!({}))).expect_err("none").contains("no response 500")
        );
        // A template's segment, the query ignored; a literal path wins over a template.
        assert_eq!(contract.check("GET", "/orders/7?x=1", 200, Some(&json!({ "id": 7, "note": null }))), Ok(()));
        assert_eq!(contract.check("GET", "/orders/latest", 200, Some(&json!("x"))), Ok(()));
        assert!(
            contract.check("PUT", "/orders/7", 200, None).expect_err("no op").contains("no operation PUT /orders/7")
        );
        // A 204 the contract gives no body passes with none, not with one.
        assert_eq!(contract.check("DELETE", "/orders/7", 204, None), Ok(()));
        assert!(contract.check("DELETE", "/orders/7", 204, Some(&json!({}))).is_err());
    }

    #[test]
    fn openapi_3_0_booleans_are_read_as_draft_7_writes_them() {
        let contract = contract("3.0.0");
        // `exclusiveMinimum: true` with `minimum: 0`: 0 is out, 1 is in.
        assert!(contract.check("POST", "/orders", 201, Some(&json!({ "id": 0 }))).is_err());
        assert_eq!(contract.check("POST", "/orders", 201, Some(&json!({ "id": 1 }))), Ok(()));
        // `nullable: true`: null is a string's other value.
        assert!(contract.check("GET", "/orders/1", 200, Some(&json!({ "id": 1, "note": 5 }))).is_err());
    }

    #[test]
    fn only_openapi_3_documents_in_json_or_yaml_are_contracts() {
        assert!(matches!(Contract::parse(b"just some text"), Err(ContractError::NotReadable(_))));
        assert!(matches!(Contract::parse(b"[1, 2]"), Err(ContractError::NotReadable(_))));
        assert!(matches!(Contract::parse(b"paths: [unclosed"), Err(ContractError::NotReadable(_))));
        assert_eq!(
            Contract::parse(br#"{"swagger": "2.0"}"#).expect_err("v2"),
            ContractError::NotOpenApi3("missing".into())
        );
        assert_eq!(digest(b"abc").len(), 64);
    }

    #[test]
    fn a_yaml_document_is_read_as_the_json_it_says() {
        let yaml = r##"
openapi: 3.0.3
info: { title: shop, version: "1" }
paths:
  /orders/{id}:
    get:
      responses:
        "200":
          description: one
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Order" }
components:
  schemas:
    Order:
      type: object
      required: [id]
      properties:
        id: { type: integer, minimum: 0, exclusiveMinimum: true }
"##;
        let (document, was_yaml) = document_json(yaml.as_bytes()).expect("YAML");
        assert!(was_yaml);
        assert_eq!(document["paths"]["/orders/{id}"]["get"]["responses"]["200"]["description"], "one");
        let contract = Contract::parse(yaml.as_bytes()).expect("a contract");
        assert_eq!(contract.operations(), 1);
        assert_eq!(contract.check("GET", "/orders/7", 200, Some(&json!({ "id": 7 }))), Ok(()));
        let zero = contract.check("GET", "/orders/7", 200, Some(&json!({ "id": 0 }))).expect_err("exclusive");
        assert!(zero.contains("GET /orders/{id} 200"), "{zero}");
        let (_, was_yaml) = document_json(br#"{"openapi": "3.1.0"}"#).expect("JSON");
        assert!(!was_yaml);
    }
}
