//! The one validator at the door: every recording and proposal is read through it.
//!
//! It names the first problem by JSON path (`steps[2].actions[0].target: a click needs a
//! target`) and checks the operands each action needs, not only the types of the fields that
//! are present: an `expectUrl` without a URL would otherwise pass on every page. Unknown
//! fields are ignored, so a file written by a newer saffron of the same version still reads;
//! an unknown action type or a newer version is refused with "update saffron".

use regex::RegexBuilder;
use serde::Deserialize;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::digest::{is_digest, steps_digest_reading, table_keys_read};
use crate::model::{RECORDING_VERSION, Recording, StepKind, StepSpec};
use crate::proposal::{PROPOSAL_VERSION, Proposal};
use crate::tokens::{first_problem, tokenize};

/// The first problem found in a recording or proposal.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ValidationError {
    /// The text is not JSON.
    #[error("invalid JSON at {line}:{column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the JSON parser expected.
        message: String,
    },
    /// The JSON is not a valid recording or proposal.
    #[error("{}", located(.path, .message))]
    Invalid {
        /// JSON path of the problem, e.g. `steps[2].actions[0].target`; empty for the root.
        path: String,
        /// What is wrong and, where there is one, what to do.
        message: String,
        /// 1-based line and column of `path` in the file's text, when the error came from a
        /// text (the `parse_*` functions); a missing field is placed at its enclosing value.
        location: Option<(usize, usize)>,
    },
}

impl ValidationError {
    /// The 1-based line and column of the problem in the file's text, when known.
    pub fn location(&self) -> Option<(usize, usize)> {
        match self {
            ValidationError::Syntax { line, column, .. } => Some((*line, *column)),
            ValidationError::Invalid { location, .. } => *location,
        }
    }

    fn located_in(self, text: &str) -> ValidationError {
        match self {
            ValidationError::Invalid { path, message, location: None } => {
                let location = locate::locate(text, &path);
                ValidationError::Invalid { path, message, location }
            }
            other => other,
        }
    }
}

/// Parse and validate a recording file's text.
pub fn parse_recording(text: &str) -> Result<Recording, ValidationError> {
    validate_recording(&parse_json(text)?).map_err(|error| error.located_in(text))
}

/// Parse and validate a proposal file's text.
pub fn parse_proposal(text: &str) -> Result<Proposal, ValidationError> {
    validate_proposal(&parse_json(text)?).map_err(|error| error.located_in(text))
}

/// Validate a recording and read it.
pub fn validate_recording(value: &Value) -> Result<Recording, ValidationError> {
    check_recording(value, "", "recording")?;
    Recording::deserialize(value).map_err(|error| invalid("", format!("unreadable: {error}")))
}

/// Validate a proposal and read it. Its recording is validated as a recording, under
/// `recording`. The binding is checked for shape only: whether it still fits is
/// [`Proposal::stale_reasons`]'s question.
pub fn validate_proposal(value: &Value) -> Result<Proposal, ValidationError> {
    check_proposal(value)?;
    Proposal::deserialize(value).map_err(|error| invalid("", format!("unreadable: {error}")))
}

type Check = Result<(), ValidationError>;
type Object = Map<String, Value>;

fn located(path: &str, message: &str) -> String {
    if path.is_empty() { message.to_string() } else { format!("{path}: {message}") }
}

fn invalid(path: &str, message: impl Into<String>) -> ValidationError {
    ValidationError::Invalid { path: path.to_string(), message: message.into(), location: None }
}

fn parse_json(text: &str) -> Result<Value, ValidationError> {
    serde_json::from_str(text).map_err(|error| {
        let message = error.to_string();
        let suffix = format!(" at line {} column {}", error.line(), error.column());
        ValidationError::Syntax {
            line: error.line(),
            column: error.column(),
            message: message.strip_suffix(&suffix).unwrap_or(&message).to_string(),
        }
    })
}

// ---- paths and JSON shapes -------------------------------------------------------------

fn key(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

fn expected(path: &str, what: &str, found: &Value) -> ValidationError {
    invalid(path, format!("expected {what}, found {}", describe(found)))
}

fn with_article(word: &str) -> String {
    let vowel = word.chars().next().is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {word}", if vowel { "an" } else { "a" })
}

fn object<'a>(value: &'a Value, path: &str, what: &str) -> Result<&'a Object, ValidationError> {
    value.as_object().ok_or_else(|| expected(path, &format!("{what} (a JSON object)"), value))
}

// A null field reads as an absent one, as serde reads it into `None`.
fn field<'a>(object: &'a Object, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|value| !value.is_null())
}

fn optional_string<'a>(object: &'a Object, path: &str, name: &str) -> Result<Option<&'a str>, ValidationError> {
    match field(object, name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(expected(&key(path, name), "a string", other)),
    }
}

fn required_string<'a>(object: &'a Object, path: &str, name: &str, missing: &str) -> Result<&'a str, ValidationError> {
    optional_string(object, path, name)?.ok_or_else(|| invalid(&key(path, name), missing))
}

fn non_empty(text: &str, path: &str) -> Check {
    if text.is_empty() { Err(invalid(path, "must not be empty")) } else { Ok(()) }
}

fn optional_template<'a>(object: &'a Object, path: &str, name: &str) -> Result<Option<&'a str>, ValidationError> {
    let text = optional_string(object, path, name)?;
    if let Some(text) = text {
        template(text, &key(path, name))?;
    }
    Ok(text)
}

fn template(text: &str, path: &str) -> Check {
    match first_problem(text) {
        Some(problem) => Err(invalid(path, problem)),
        None => Ok(()),
    }
}

fn pattern(text: &str, path: &str) -> Check {
    non_empty(text, path)?;
    template(text, path)?;
    // Tokens are substituted (escaped) before matching, so check the pattern with each token
    // standing for a plain word.
    let mut probe = String::with_capacity(text.len());
    let mut position = 0;
    for token in tokenize(text) {
        probe.push_str(&text[position..token.span.start]);
        probe.push('x');
        position = token.span.end;
    }
    probe.push_str(&text[position..]);
    RegexBuilder::new(&probe)
        .size_limit(1 << 20)
        .build()
        .map(drop)
        .map_err(|error| invalid(path, format!("invalid regex: {}", regex_problem(&error))))
}

// The regex crate's syntax errors draw the pattern with a caret over several lines; a path
// message keeps only the final `error: ...` line.
fn regex_problem(error: &regex::Error) -> String {
    match error {
        regex::Error::CompiledTooBig(_) => "the pattern is too large".to_string(),
        other => {
            let text = other.to_string();
            text.lines()
                .rev()
                .find_map(|line| line.strip_prefix("error: "))
                .unwrap_or(text.lines().last().unwrap_or_default())
                .to_string()
        }
    }
}

fn whole_number(value: &Value, path: &str, max: u64) -> Result<u64, ValidationError> {
    match value.as_u64() {
        Some(number) if number <= max => Ok(number),
        Some(_) => Err(invalid(path, format!("must be at most {max}"))),
        None => Err(expected(path, "a whole number, 0 or more", value)),
    }
}

fn optional_array<'a>(object: &'a Object, path: &str, name: &str) -> Result<Option<&'a Vec<Value>>, ValidationError> {
    match field(object, name) {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(expected(&key(path, name), "an array", other)),
    }
}

fn string_list(items: &[Value], path: &str) -> Check {
    for (i, item) in items.iter().enumerate() {
        let item_path = index(path, i);
        let text = item.as_str().ok_or_else(|| expected(&item_path, "a string", item))?;
        template(text, &item_path)?;
    }
    Ok(())
}

fn version(object: &Object, path: &str, what: &str, supported: u32) -> Check {
    let path = key(path, "version");
    let value =
        field(object, "version").ok_or_else(|| invalid(&path, format!("{} needs a version", with_article(what))))?;
    match value.as_u64() {
        Some(version) if version == u64::from(supported) => Ok(()),
        Some(version) if version > u64::from(supported) => Err(invalid(
            &path,
            format!(
                "this {what} is version {version}, newer than this saffron understands: \
                 update saffron"
            ),
        )),
        _ => Err(invalid(&path, format!("expected version {supported}, found {value}"))),
    }
}

// ---- recordings ------------------------------------------------------------------------

fn check_recording(value: &Value, path: &str, what: &str) -> Check {
    let recording = object(value, path, &with_article(what))?;
    version(recording, path, what, RECORDING_VERSION)?;
    let feature = required_string(recording, path, "feature", "a recording needs its feature file's path")?;
    relative_path(feature, &key(path, "feature"))?;
    let scenario = required_string(recording, path, "scenario", "a recording needs a scenario")?;
    non_empty(scenario, &key(path, "scenario"))?;
    let steps_path = key(path, "steps");
    let steps =
        optional_array(recording, path, "steps")?.ok_or_else(|| invalid(&steps_path, "a recording needs steps"))?;
    let mut specs = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        specs.push(check_step(step, &index(&steps_path, i))?);
    }
    let digest_path = key(path, "stepsDigest");
    let digest = required_string(recording, path, "stepsDigest", "a recording needs its steps digest")?;
    if !is_digest(digest) {
        return Err(invalid(&digest_path, "expected a SHA-256 digest, 64 lowercase hex digits"));
    }
    optional_string(recording, path, "recordedAt")?;
    optional_string(recording, path, "baseUrl")?;
    let actions = steps.iter().map(|step| step.get("actions").unwrap_or(&Value::Null));
    let expected = steps_digest_reading(&specs, &table_keys_read(actions));
    if expected != digest {
        return Err(invalid(
            &digest_path,
            format!(
                "does not match the steps in this file, whose digest is {expected}: if you edited the steps on \
                 purpose, write that value here"
            ),
        ));
    }
    Ok(())
}

fn relative_path(text: &str, path: &str) -> Check {
    non_empty(text, path)?;
    let bytes = text.as_bytes();
    let drive = bytes.len() > 1 && bytes[1] == b':';
    if text.starts_with('/') || text.contains('\\') || drive {
        return Err(invalid(path, "must be relative to the project root, with / separators"));
    }
    Ok(())
}

fn check_step(value: &Value, path: &str) -> Result<StepSpec, ValidationError> {
    let step = object(value, path, "a step")?;
    let kind_text = required_string(step, path, "kind", "a step needs a kind")?;
    let kind = match kind_text {
        "context" => StepKind::Context,
        "action" => StepKind::Action,
        "outcome" => StepKind::Outcome,
        other => {
            return Err(invalid(
                &key(path, "kind"),
                format!("unknown step kind {other:?}: expected context, action or outcome"),
            ));
        }
    };
    let text = required_string(step, path, "text", "a step needs its text")?;
    non_empty(text, &key(path, "text"))?;
    let table = match optional_array(step, path, "table")? {
        None => None,
        Some(rows) => Some(check_table(rows, &key(path, "table"))?),
    };
    let doc_string = optional_string(step, path, "docString")?.map(str::to_string);
    let actions_path = key(path, "actions");
    let actions = optional_array(step, path, "actions")?
        .ok_or_else(|| invalid(&actions_path, "a step needs its list of actions"))?;
    for (i, action) in actions.iter().enumerate() {
        check_action(action, &index(&actions_path, i))?;
    }
    Ok(StepSpec { kind, text: text.to_string(), table, doc_string })
}

fn check_table(rows: &[Value], path: &str) -> Result<Vec<Vec<String>>, ValidationError> {
    let mut table = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let row_path = index(path, i);
        let cells = row.as_array().ok_or_else(|| expected(&row_path, "a row (an array of cells)", row))?;
        let mut texts = Vec::with_capacity(cells.len());
        for (j, cell) in cells.iter().enumerate() {
            let text = cell.as_str().ok_or_else(|| expected(&index(&row_path, j), "a string", cell))?;
            texts.push(text.to_string());
        }
        if let Some(first) = table.first().map(Vec::len).filter(|width| *width != texts.len()) {
            let cells = |count: usize| match count {
                1 => "1 cell".to_string(),
                count => format!("{count} cells"),
            };
            return Err(invalid(
                &row_path,
                format!("this row has {} where the first row has {}", cells(texts.len()), cells(first)),
            ));
        }
        table.push(texts);
    }
    Ok(table)
}

// ---- actions ---------------------------------------------------------------------------

const ACTION_TYPES: [&str; 20] = [
    "goto",
    "click",
    "fill",
    "select",
    "press",
    "check",
    "uncheck",
    "hover",
    "switchTab",
    "dialog",
    "waitForResponse",
    "expectVisible",
    "expectHidden",
    "expectText",
    "expectValue",
    "expectUrl",
    "expectState",
    "expectResponse",
    "expectNoConsoleErrors",
    "expectCount",
];

fn check_action(value: &Value, path: &str) -> Check {
    let action = object(value, path, "an action")?;
    let kind = required_string(action, path, "type", "an action needs a type")?;
    if !ACTION_TYPES.contains(&kind) {
        return Err(invalid(path, format!("unknown action type {kind:?}: update saffron")));
    }
    if let Some(timeout) = field(action, "timeoutMs") {
        let timeout_path = key(path, "timeoutMs");
        if whole_number(timeout, &timeout_path, u64::MAX)? == 0 {
            return Err(invalid(&timeout_path, "must be a positive number of milliseconds"));
        }
    }
    let needs = |name: &str| format!("{} needs {name}", with_article(kind));
    let target = |required: bool| -> Check {
        match field(action, "target") {
            Some(target) => check_target(target, &key(path, "target")),
            None if required => Err(invalid(&key(path, "target"), needs("a target"))),
            None => Ok(()),
        }
    };
    match kind {
        "goto" => {
            let url = required_string(action, path, "url", &needs("a url"))?;
            non_empty(url, &key(path, "url"))?;
            if let Some(problem) = crate::navigation::navigation_problem(url) {
                return Err(invalid(&key(path, "url"), problem));
            }
            template(url, &key(path, "url"))
        }
        "click" | "check" | "uncheck" | "hover" | "expectVisible" | "expectHidden" => target(true),
        "fill" | "expectValue" => {
            target(true)?;
            required_string(action, path, "value", &needs("a value"))?;
            optional_template(action, path, "value").map(drop)
        }
        "select" => {
            target(true)?;
            let values = optional_array(action, path, "values")?
                .ok_or_else(|| invalid(&key(path, "values"), needs("values")))?;
            string_list(values, &key(path, "values"))
        }
        "press" => {
            target(false)?;
            let key_name = required_string(action, path, "key", &needs("a key"))?;
            non_empty(key_name, &key(path, "key"))
        }
        "switchTab" => check_switch_tab(action, path, &needs("index or urlPattern")),
        "dialog" => {
            match field(action, "accept") {
                Some(Value::Bool(_)) => {}
                Some(other) => return Err(expected(&key(path, "accept"), "true or false", other)),
                None => {
                    return Err(invalid(&key(path, "accept"), needs("accept (true or false)")));
                }
            }
            optional_template(action, path, "promptText").map(drop)
        }
        "waitForResponse" | "expectResponse" => {
            let response =
                field(action, "response").ok_or_else(|| invalid(&key(path, "response"), needs("a response")))?;
            check_response(response, &key(path, "response"))
        }
        "expectText" => {
            target(true)?;
            one_of(action, path, "text", "textRegex", &needs("text or textRegex"))?;
            optional_template(action, path, "text")?;
            match optional_string(action, path, "textRegex")? {
                Some(regex) => pattern(regex, &key(path, "textRegex")),
                None => Ok(()),
            }
        }
        "expectUrl" => {
            one_of(action, path, "url", "urlRegex", &needs("url or urlRegex"))?;
            if let Some(url) = optional_string(action, path, "url")? {
                non_empty(url, &key(path, "url"))?;
                template(url, &key(path, "url"))?;
            }
            match optional_string(action, path, "urlRegex")? {
                Some(regex) => pattern(regex, &key(path, "urlRegex")),
                None => Ok(()),
            }
        }
        "expectState" => {
            target(true)?;
            let state = field(action, "state").ok_or_else(|| invalid(&key(path, "state"), needs("a state")))?;
            check_state(state, &key(path, "state"))
        }
        "expectCount" => {
            target(true)?;
            let count = field(action, "count").ok_or_else(|| invalid(&key(path, "count"), needs("a count")))?;
            whole_number(count, &key(path, "count"), u64::from(u32::MAX)).map(drop)
        }
        // expectNoConsoleErrors has no operands.
        _ => Ok(()),
    }
}

// Exactly one of two alternative operands; both is ambiguous, neither is a check of nothing.
fn one_of(object: &Object, path: &str, first: &str, second: &str, missing: &str) -> Check {
    match (field(object, first), field(object, second)) {
        (None, None) => Err(invalid(&key(path, first), missing)),
        (Some(_), Some(_)) => Err(invalid(&key(path, second), format!("{first} and {second} are exclusive: keep one"))),
        _ => Ok(()),
    }
}

fn check_switch_tab(action: &Object, path: &str, missing: &str) -> Check {
    one_of(action, path, "index", "urlPattern", missing)?;
    if let Some(tab) = field(action, "index") {
        whole_number(tab, &key(path, "index"), u64::from(u32::MAX))?;
    }
    match optional_string(action, path, "urlPattern")? {
        Some(regex) => pattern(regex, &key(path, "urlPattern")),
        None => Ok(()),
    }
}

const TARGET_STRINGS: [&str; 7] = ["role", "name", "nameRegex", "label", "placeholder", "text", "testId"];

fn check_target(value: &Value, path: &str) -> Check {
    let target = object(value, path, "a target")?;
    for name in ["hasText", "hasTextRegex"] {
        if field(target, name).is_some() {
            return Err(invalid(
                &key(path, name),
                format!("{name} narrows a scope: put it in within, next to the container's locators"),
            ));
        }
    }
    check_locators(target, path, "target")?;
    check_scope(target, path, 1)
}

// A scope is a container target plus its text filter; it may have a scope of its own.
fn check_scope(target: &Object, path: &str, depth: usize) -> Check {
    let Some(value) = field(target, "within") else { return Ok(()) };
    let path = key(path, "within");
    if depth > crate::target::MAX_SCOPE_DEPTH {
        return Err(invalid(
            &path,
            format!("scopes nest at most {} deep: a row of a table of a dialog", crate::target::MAX_SCOPE_DEPTH),
        ));
    }
    let scope = object(value, &path, "a scope")?;
    check_locators(scope, &path, "scope")?;
    if field(scope, "hasText").is_some() && field(scope, "hasTextRegex").is_some() {
        return Err(invalid(&key(&path, "hasTextRegex"), "hasText and hasTextRegex are exclusive: keep one"));
    }
    if let Some(text) = optional_string(scope, &path, "hasText")? {
        non_empty(text, &key(&path, "hasText"))?;
        template(text, &key(&path, "hasText"))?;
    }
    if let Some(regex) = optional_string(scope, &path, "hasTextRegex")? {
        pattern(regex, &key(&path, "hasTextRegex"))?;
    }
    check_scope(scope, &path, depth + 1)
}

// The locators of a target or of a scope's container, and the tier they were found by.
fn check_locators(target: &Object, path: &str, what: &str) -> Check {
    for name in TARGET_STRINGS {
        if let Some(text) = optional_string(target, path, name)? {
            non_empty(text, &key(path, name))?;
            template(text, &key(path, name))?;
        }
    }
    let css = optional_array(target, path, "css")?;
    if let Some(selectors) = css {
        string_list(selectors, &key(path, "css"))?;
        for (i, selector) in selectors.iter().enumerate() {
            non_empty(selector.as_str().unwrap_or_default(), &index(&key(path, "css"), i))?;
        }
    }
    let tier = match optional_string(target, path, "tier")? {
        None => None,
        Some(tier) => {
            Some(crate::target::Tier::LADDER.into_iter().find(|known| known.as_str() == tier).ok_or_else(|| {
                invalid(
                    &key(path, "tier"),
                    format!(
                        "unknown tier {tier:?}: expected role, label, placeholder, testId, \
                             text or css"
                    ),
                )
            })?)
        }
    };
    let has = |name: &str| field(target, name).is_some();
    if has("name") && has("nameRegex") {
        return Err(invalid(&key(path, "nameRegex"), "name and nameRegex are exclusive: keep one"));
    }
    for qualifier in ["name", "nameRegex"] {
        if has(qualifier) && !has("role") {
            return Err(invalid(&key(path, qualifier), format!("{qualifier} qualifies a role: add the role")));
        }
    }
    let has_css = css.is_some_and(|selectors| !selectors.is_empty());
    let semantic = ["role", "label", "placeholder", "text", "testId"];
    if !has_css && !semantic.iter().any(|name| has(name)) {
        return Err(invalid(
            path,
            format!("a {what} needs at least one of role, label, placeholder, text, testId or css"),
        ));
    }
    if let Some(regex) = optional_string(target, path, "nameRegex")? {
        pattern(regex, &key(path, "nameRegex"))?;
    }
    if let Some(tier) = tier {
        let present = match tier {
            crate::target::Tier::Css => has_css,
            other => has(other.as_str()),
        };
        if !present {
            return Err(invalid(
                &key(path, "tier"),
                format!("the {what} has no {tier}, so it cannot have been found by it"),
            ));
        }
    }
    Ok(())
}

fn check_response(value: &Value, path: &str) -> Check {
    let matcher = object(value, path, "a response matcher")?;
    let url = required_string(matcher, path, "urlRegex", "a response matcher needs a urlRegex")?;
    pattern(url, &key(path, "urlRegex"))?;
    if url.contains("://") {
        return Err(invalid(
            &key(path, "urlRegex"),
            "match the path only, without scheme and host: they differ between environments",
        ));
    }
    if let Some(method) = optional_string(matcher, path, "method")?
        && (method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Err(invalid(
            &key(path, "method"),
            format!("expected an HTTP method in capitals such as GET, found {method:?}"),
        ));
    }
    if let Some(status) = optional_string(matcher, path, "status")? {
        let bytes = status.as_bytes();
        let valid = bytes.len() == 3
            && (b'1'..=b'5').contains(&bytes[0])
            && (bytes[1..].iter().all(u8::is_ascii_digit) || &bytes[1..] == b"xx");
        if !valid {
            return Err(invalid(
                &key(path, "status"),
                format!(
                    "expected an exact status such as \"200\" or a class such as \"2xx\", \
                     found {status:?}"
                ),
            ));
        }
    }
    if let Some(body) = optional_string(matcher, path, "bodyRegex")? {
        pattern(body, &key(path, "bodyRegex"))?;
    }
    Ok(())
}

fn check_state(value: &Value, path: &str) -> Check {
    let state = object(value, path, "a state")?;
    let kind = required_string(state, path, "kind", "a state needs a kind")?;
    let required = |name: &str, missing: &str| -> Check {
        let text = required_string(state, path, name, missing)?;
        non_empty(text, &key(path, name))?;
        template(text, &key(path, name))
    };
    match kind {
        "class" => {
            required("token", "a class state needs a token")?;
            let token = optional_string(state, path, "token")?.unwrap_or_default();
            if token.chars().any(char::is_whitespace) {
                return Err(invalid(
                    &key(path, "token"),
                    "one class token, without spaces: use one expectState per class",
                ));
            }
            Ok(())
        }
        "attribute" => {
            required("name", "an attribute state needs a name")?;
            optional_template(state, path, "value").map(drop)
        }
        "css" => {
            required("property", "a css state needs a property")?;
            required_string(state, path, "value", "a css state needs a value")?;
            optional_template(state, path, "value").map(drop)
        }
        "checked" | "unchecked" | "disabled" | "enabled" | "focused" => Ok(()),
        other => Err(invalid(
            &key(path, "kind"),
            format!(
                "unknown state kind {other:?}: expected class, attribute, css, checked, unchecked, \
                 disabled, enabled or focused"
            ),
        )),
    }
}

// ---- proposals -------------------------------------------------------------------------

fn check_proposal(value: &Value) -> Check {
    let proposal = object(value, "", "a proposal")?;
    version(proposal, "", "proposal", PROPOSAL_VERSION)?;
    let scenario = field(proposal, "scenario").ok_or_else(|| invalid("scenario", "a proposal needs its scenario"))?;
    let scenario = object(scenario, "scenario", "a scenario reference")?;
    let feature = required_string(scenario, "scenario", "feature", "a scenario reference needs its feature file")?;
    relative_path(feature, "scenario.feature")?;
    let name = required_string(scenario, "scenario", "name", "a scenario reference needs the scenario's name")?;
    non_empty(name, "scenario.name")?;
    let cache_path =
        required_string(scenario, "scenario", "cachePath", "a scenario reference needs the recording's path")?;
    relative_path(cache_path, "scenario.cachePath")?;
    let recording =
        field(proposal, "recording").ok_or_else(|| invalid("recording", "a proposal needs its recording"))?;
    check_recording(recording, "recording", "recording")?;
    if let Some(diff) = optional_array(proposal, "", "diff")? {
        for (i, step) in diff.iter().enumerate() {
            check_step_diff(step, &index("diff", i))?;
        }
    }
    if let Some(edits) = optional_array(proposal, "", "featureEdits")? {
        for (i, edit) in edits.iter().enumerate() {
            check_feature_edit(edit, &index("featureEdits", i))?;
        }
    }
    optional_string(proposal, "", "narrative")?;
    if let Some(adaptations) = optional_array(proposal, "", "adaptations")? {
        for (i, line) in adaptations.iter().enumerate() {
            if !line.is_string() {
                return Err(expected(&index("adaptations", i), "a string", line));
            }
        }
    }
    if let Some(usage) = field(proposal, "usage") {
        check_usage(usage, "usage")?;
    }
    let binding = field(proposal, "binding")
        .ok_or_else(|| invalid("binding", "a proposal needs its binding: file it again with this saffron"))?;
    check_binding(binding, "binding")?;
    optional_string(proposal, "", "filedAt")?;
    optional_string(proposal, "", "unverified")?;
    Ok(())
}

fn check_step_diff(value: &Value, path: &str) -> Check {
    let step = object(value, path, "a step diff")?;
    let kind = required_string(step, path, "kind", "a step diff needs the step's kind")?;
    if !["context", "action", "outcome"].contains(&kind) {
        return Err(invalid(
            &key(path, "kind"),
            format!("unknown step kind {kind:?}: expected context, action or outcome"),
        ));
    }
    required_string(step, path, "text", "a step diff needs the step's text")?;
    for name in ["before", "after"] {
        if let Some(position) = field(step, name) {
            whole_number(position, &key(path, name), u64::from(u32::MAX))?;
        }
    }
    let changes_path = key(path, "changes");
    let changes = optional_array(step, path, "changes")?
        .ok_or_else(|| invalid(&changes_path, "a step diff needs its changes"))?;
    for (i, change) in changes.iter().enumerate() {
        let change_path = index(&changes_path, i);
        let change = object(change, &change_path, "an action change")?;
        let kind = required_string(change, &change_path, "change", "a change needs its kind")?;
        let (positions, actions): (&[&str], &[&str]) = match kind {
            "added" | "removed" => (&["index"], &["action"]),
            "changed" => (&["beforeIndex", "afterIndex"], &["before", "after"]),
            other => {
                return Err(invalid(
                    &key(&change_path, "change"),
                    format!("unknown change {other:?}: expected added, removed or changed"),
                ));
            }
        };
        for name in positions {
            let position = field(change, name).ok_or_else(|| {
                invalid(&key(&change_path, name), format!("{} change needs {name}", with_article(kind)))
            })?;
            whole_number(position, &key(&change_path, name), u64::from(u32::MAX))?;
        }
        for name in actions {
            let action = field(change, name).ok_or_else(|| {
                invalid(&key(&change_path, name), format!("{} change needs {name}", with_article(kind)))
            })?;
            check_action(action, &key(&change_path, name))?;
        }
    }
    Ok(())
}

fn check_feature_edit(value: &Value, path: &str) -> Check {
    let edit = object(value, path, "a feature edit")?;
    let file = required_string(edit, path, "file", "a feature edit needs its file")?;
    relative_path(file, &key(path, "file"))?;
    let line = field(edit, "line").ok_or_else(|| invalid(&key(path, "line"), "a feature edit needs its line"))?;
    if whole_number(line, &key(path, "line"), u64::from(u32::MAX))? == 0 {
        return Err(invalid(&key(path, "line"), "lines count from 1"));
    }
    required_string(edit, path, "before", "a feature edit needs the line as it is")?;
    required_string(edit, path, "after", "a feature edit needs the line as proposed")?;
    optional_string(edit, path, "fromSet")?;
    Ok(())
}

fn check_usage(value: &Value, path: &str) -> Check {
    let usage = object(value, path, "usage")?;
    for name in ["inputTokens", "outputTokens"] {
        if let Some(count) = field(usage, name) {
            whole_number(count, &key(path, name), u64::MAX)?;
        }
    }
    if let Some(cost) = field(usage, "costUsd") {
        match cost.as_f64() {
            Some(dollars) if dollars.is_finite() && dollars >= 0.0 => {}
            Some(_) => return Err(invalid(&key(path, "costUsd"), "must be 0 or more")),
            None => return Err(expected(&key(path, "costUsd"), "a number", cost)),
        }
    }
    Ok(())
}

fn check_binding(value: &Value, path: &str) -> Check {
    let binding = object(value, path, "a binding")?;
    for (name, required) in [("stepsDigest", true), ("contractDigest", false), ("contentDigest", true)] {
        let digest_path = key(path, name);
        match optional_string(binding, path, name)? {
            Some(digest) if is_digest(digest) => {}
            Some(_) => {
                return Err(invalid(&digest_path, "expected a SHA-256 digest, 64 lowercase hex digits"));
            }
            None if required => {
                return Err(invalid(&digest_path, format!("a binding needs {name}")));
            }
            None => {}
        }
    }
    Ok(())
}

mod locate;

#[cfg(test)]
mod tests;
