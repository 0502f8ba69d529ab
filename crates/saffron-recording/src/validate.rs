//! The one validator at the door: every recording and proposal is read through it.
//!
//! It names the first problem by JSON path (`steps[2].actions[0].target: a click needs a
//! target`). The typed model is the one truth about the shape: the file is read into
//! [`Recording`] or [`Proposal`] (so which action types exist, and which operands each one
//! needs, is what the enum says), and serde's complaint is worded for people and placed at its
//! path. Then the checks types cannot express run on the typed values: tokens, patterns, empty
//! values, exclusive operands, locators, digests. Unknown fields are ignored, so a file written
//! by a newer saffron of the same version still reads; an unknown action type or a newer version
//! is refused with "update saffron".

use regex::RegexBuilder;
use serde::de::DeserializeOwned;
use serde_json::Value;
use thiserror::Error;

use crate::action::{Action, ElementState, ResponseMatcher};
use crate::diff::ActionChange;
use crate::digest::is_digest;
use crate::handler::{Detector, HANDLER_VERSION, Handler};
use crate::model::{RECORDING_VERSION, Recording, StepKind};
use crate::operands::{Operand, OperandKind};
use crate::proposal::{PROPOSAL_VERSION, Proposal};
use crate::target::{MAX_FRAME_DEPTH, MAX_SCOPE_DEPTH, Scope, Target};
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
    /// The file is not UTF-8 text.
    #[error(
        "not UTF-8 at {line}:{column}: the byte at offset {offset} starts no valid UTF-8 character; save the file as UTF-8"
    )]
    NotUtf8 {
        /// 1-based line of the first byte that is not UTF-8.
        line: usize,
        /// 1-based column (in characters).
        column: usize,
        /// Its byte offset.
        offset: usize,
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
            ValidationError::Syntax { line, column, .. } | ValidationError::NotUtf8 { line, column, .. } => {
                Some((*line, *column))
            }
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

/// Validate a recording skeleton and read it: a recording written to be filled in by hand
/// ([`Recording::new`] with empty steps), checked as a recording is except that its `Then`
/// steps may check nothing yet. Only the writer of skeletons uses it; every reader validates
/// with [`validate_recording`], which refuses such a step.
pub fn validate_skeleton(value: &Value) -> Result<Recording, ValidationError> {
    read_recording(value, ThenChecks::MayBeMissing)
}

/// Parse and validate a recording file's text.
pub fn parse_recording(text: &str) -> Result<Recording, ValidationError> {
    validate_recording(&parse_json(text)?).map_err(|error| error.located_in(text))
}

/// Parse and validate a proposal file's text.
pub fn parse_proposal(text: &str) -> Result<Proposal, ValidationError> {
    validate_proposal(&parse_json(text)?).map_err(|error| error.located_in(text))
}

/// Parse and validate a handler file's text.
pub fn parse_handler(text: &str) -> Result<Handler, ValidationError> {
    validate_handler(&parse_json(text)?).map_err(|error| error.located_in(text))
}

/// Validate an interruption handler and read it: a name, a detector with an element or an
/// address pattern, and either actions or a StepSet that clear it.
pub fn validate_handler(value: &Value) -> Result<Handler, ValidationError> {
    version(value, "", "handler", HANDLER_VERSION)?;
    let handler: Handler = typed(value, "handler")?;
    non_empty(&handler.name, "name")?;
    let Detector { target, url_regex } = &handler.detect;
    if target.is_none() && url_regex.is_none() {
        return Err(invalid(
            "detect",
            "a detector needs a target (an element the interruption shows) or a urlRegex (the address it is at)",
        ));
    }
    if let Some(target) = target {
        check_target(target, "detect.target", "target", 0, 0)?;
    }
    if let Some(pattern) = url_regex
        && let Some(problem) =
            if pattern.is_empty() { Some("must not be empty".to_string()) } else { pattern_problem(pattern) }
    {
        return Err(invalid("detect.urlRegex", problem));
    }
    one_of(
        "",
        ("actions", !handler.actions.is_empty()),
        ("stepSet", handler.step_set.is_some()),
        "a handler needs the actions that clear the interruption, or the stepSet whose recorded actions do",
    )?;
    if let Some(name) = &handler.step_set {
        non_empty(name, "stepSet")?;
    }
    let raw_actions = value.get("actions");
    for (j, action) in handler.actions.iter().enumerate() {
        check_action(action, raw_actions.and_then(|actions| actions.get(j)), &index("actions", j))?;
    }
    Ok(handler)
}

/// Validate a recording and read it.
pub fn validate_recording(value: &Value) -> Result<Recording, ValidationError> {
    read_recording(value, ThenChecks::Required)
}

fn read_recording(value: &Value, then_checks: ThenChecks) -> Result<Recording, ValidationError> {
    version(value, "", "recording", RECORDING_VERSION)?;
    let recording: Recording = typed(value, "recording").map_err(|error| with_digest_to_write(value, error))?;
    check_recording_as(&recording, value, "", then_checks)?;
    Ok(recording)
}

/// A recording written by hand without its `stepsDigest`: the error names the value to write,
/// when the rest of it reads.
fn with_digest_to_write(value: &Value, error: ValidationError) -> ValidationError {
    let Some(object) = value.as_object().filter(|object| !object.contains_key("stepsDigest")) else { return error };
    let mut filled = object.clone();
    filled.insert("stepsDigest".into(), Value::String(String::new()));
    match typed::<Recording>(&Value::Object(filled), "recording") {
        Ok(recording) => {
            let expected = recording.digest_for(&recording.step_specs());
            invalid(
                "stepsDigest",
                format!(
                    "a recording needs its steps digest: the steps in this file have {expected} (`saffron skeleton` \
                     writes a recording with it)"
                ),
            )
        }
        Err(_) => error,
    }
}

/// Validate a proposal and read it. Its recording is validated as a recording, under
/// `recording`. The binding is checked for shape only: whether it still fits is
/// [`Proposal::stale_reasons`]'s question.
pub fn validate_proposal(value: &Value) -> Result<Proposal, ValidationError> {
    version(value, "", "proposal", PROPOSAL_VERSION)?;
    if let Some(recording) = value.get("recording") {
        version(recording, "recording", "recording", RECORDING_VERSION)?;
    }
    let proposal: Proposal = typed(value, "proposal")?;
    check_proposal(&proposal, value)?;
    Ok(proposal)
}

type Check = Result<(), ValidationError>;

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

// ---- paths -----------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

fn key(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

fn render(steps: &[Step]) -> String {
    steps.iter().fold(String::new(), |path, step| match step {
        Step::Key(name) => key(&path, name),
        Step::Index(i) => index(&path, *i),
    })
}

fn child<'v>(value: &'v Value, step: &Step) -> Option<&'v Value> {
    match step {
        Step::Key(name) => value.get(name),
        Step::Index(i) => value.get(i),
    }
}

fn child_mut<'v>(value: &'v mut Value, step: &Step) -> Option<&'v mut Value> {
    match step {
        Step::Key(name) => value.get_mut(name),
        Step::Index(i) => value.get_mut(i),
    }
}

fn at<'v>(root: &'v Value, path: &[Step]) -> Option<&'v Value> {
    path.iter().try_fold(root, child)
}

fn at_mut<'v>(root: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(root, child_mut)
}

// The key the value at the end of `path` sits under (an array's key for its items).
fn last_key(path: &[Step]) -> Option<&str> {
    path.iter().rev().find_map(|step| match step {
        Step::Key(name) => Some(name.as_str()),
        Step::Index(_) => None,
    })
}

// ---- reading through the types ---------------------------------------------------------

/// The document read into `T`, or its first problem, worded and placed.
fn typed<T: DeserializeOwned>(root: &Value, what: &str) -> Result<T, ValidationError> {
    let error = match serde_path_to_error::deserialize::<_, T>(root) {
        Ok(read) => return Ok(read),
        Err(error) => error,
    };
    let message = error.inner().to_string();
    let path: Vec<Step> = error
        .path()
        .iter()
        .filter_map(|segment| match segment {
            serde_path_to_error::Segment::Map { key } => Some(Step::Key(key.clone())),
            serde_path_to_error::Segment::Seq { index } => Some(Step::Index(*index)),
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => None,
        })
        .collect();
    let path = narrowed::<T>(root, path, &message);
    let (path, message) = match array_for_object::<T>(root, &path) {
        Some((place, complaint)) => worded(root, place, &complaint, what),
        None => worded(root, path, &message, what),
    };
    Err(invalid(&render(&path), message))
}

/// serde reads a struct from an array too (its fields in order), so an array where an object
/// belongs gets a complaint about its length or its first items. Find the array on the path
/// whose place wants something else, and serde's complaint about that place.
fn array_for_object<T: DeserializeOwned>(root: &Value, path: &[Step]) -> Option<(Vec<Step>, String)> {
    (0..=path.len()).find_map(|depth| {
        let place = &path[..depth];
        if !at(root, place)?.is_array() {
            return None;
        }
        let mut trial = root.clone();
        *at_mut(&mut trial, place)? = Value::Bool(true);
        let complaint = serde_json::from_value::<T>(trial).err()?.to_string();
        let wanted = complaint.strip_prefix("invalid type: boolean `true`, expected ")?;
        (wanted != "a sequence").then(|| (place.to_vec(), complaint))
    })
}

/// serde tracks no path inside an internally tagged enum (an action, a state, a change) or a
/// flattened struct (a scope), so the path it gives may stop at the action
/// (dtolnay/path-to-error#1). Narrow it down by trial, reading the whole document again each
/// time (only a file with a problem pays for this): a missing field lies in the child that
/// changes the complaint once it has that field; any other problem lies in the last child of
/// the shortest run of first children that still draws the same complaint (serde reads the
/// children in order and stops at the first problem).
fn narrowed<T: DeserializeOwned>(root: &Value, mut path: Vec<Step>, message: &str) -> Vec<Step> {
    let complaint = |trial: Value| serde_json::from_value::<T>(trial).err().map(|error| error.to_string());
    let missing = missing_field(message);
    loop {
        let children: Vec<Step> = match at(root, &path) {
            Some(Value::Object(map)) => {
                map.keys().filter(|name| !TAGS.contains(&name.as_str())).map(|name| Step::Key(name.clone())).collect()
            }
            Some(Value::Array(items)) if missing.is_none() => (0..items.len()).map(Step::Index).collect(),
            _ => return path,
        };
        let culprit = (0..children.len()).find(|&i| {
            let mut trial = root.clone();
            let Some(node) = at_mut(&mut trial, &path) else { return false };
            match (missing, node) {
                (Some(field), node) => match child_mut(node, &children[i]) {
                    Some(Value::Object(object)) if !object.contains_key(field) => {
                        object.insert(field.to_string(), Value::Null);
                        complaint(trial).as_deref() != Some(message)
                    }
                    _ => false,
                },
                (None, Value::Object(object)) => {
                    let kept = &children[..=i];
                    object.retain(|name, _| TAGS.contains(&name.as_str()) || kept.contains(&Step::Key(name.clone())));
                    complaint(trial).as_deref() == Some(message)
                }
                (None, Value::Array(items)) => {
                    items.truncate(i + 1);
                    complaint(trial).as_deref() == Some(message)
                }
                (None, _) => false,
            }
        });
        match culprit {
            Some(i) => path.push(children[i].clone()),
            None => return path,
        }
    }
}

/// The tags of the internally tagged enums (an action's type, a state's kind, a change's
/// kind). serde reads a tag first and places a problem with it itself; removing one only ever
/// changes the complaint, so it is never the child a problem lies in.
const TAGS: [&str; 3] = ["type", "kind", "change"];

fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.strip_suffix('`')
}

/// serde's complaint about the value at `path`, in the validator's words, and where it is.
fn worded(root: &Value, mut path: Vec<Step>, message: &str, what: &str) -> (Vec<Step>, String) {
    let node = at(root, &path);
    if let Some(field) = missing_field(message) {
        let text = needs(root, &path, field, what);
        path.push(Step::Key(field.to_string()));
        return (path, text);
    }
    if let Some(rest) = message.strip_prefix("unknown variant `")
        && let Some((variant, expected)) = rest.split_once("`, expected ")
    {
        // Inside a tagged enum that is itself inside one, the path stops at the object.
        if let Some(tag) =
            TAGS.into_iter().find(|tag| node.and_then(|node| node.get(tag)) == Some(&Value::from(variant)))
        {
            path.push(Step::Key(tag.to_string()));
        }
        let list = expected.strip_prefix("one of ").unwrap_or(expected).replace('`', "");
        let mut names: Vec<&str> = list.split(", ").flat_map(|name| name.split(" or ")).collect();
        let last = names.pop().unwrap_or_default();
        let choices = if names.is_empty() { last.to_string() } else { format!("{} or {last}", names.join(", ")) };
        let text = match last_key(&path) {
            Some("type") => {
                path.pop();
                return (path, format!("unknown action type {variant:?}: update saffron"));
            }
            Some("kind") if path.len() > 1 && last_key(&path[..path.len() - 1]) == Some("state") => {
                format!("unknown state kind {variant:?}: expected {choices}")
            }
            Some("kind") => format!("unknown step kind {variant:?}: expected {choices}"),
            Some(field) => format!("unknown {field} {variant:?}: expected {choices}"),
            None => format!("unknown {variant:?}: expected {choices}"),
        };
        return (path, text);
    }
    let complaint = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: "));
    let Some((_, expected)) = complaint.and_then(|rest| rest.rsplit_once(", expected ")) else {
        return (path, message.to_string());
    };
    let whole_number = matches!(expected, "u8" | "u16" | "u32" | "u64" | "usize");
    if whole_number && let Some(number) = node.and_then(Value::as_u64) {
        let max = match expected {
            "u8" => u64::from(u8::MAX),
            "u16" => u64::from(u16::MAX),
            "u32" | "usize" => u64::from(u32::MAX),
            _ => u64::MAX,
        };
        if number > max {
            return (path, format!("must be at most {max}"));
        }
    }
    let expected = match expected {
        _ if whole_number => "a whole number, 0 or more",
        "a boolean" => "true or false",
        "f32" | "f64" => "a number",
        "variant identifier" | "string or map" => "a string",
        "a sequence" if matches!(path.as_slice(), [.., Step::Key(name), Step::Index(_)] if name == "table") => {
            "a row (an array of cells)"
        }
        "a sequence" => "an array",
        other => other,
    };
    let found = node.map_or_else(|| "nothing".to_string(), describe);
    (path, format!("expected {expected}, found {found}"))
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

fn with_article(word: &str) -> String {
    // `a url`: the u of url is said as "you".
    let vowel = word.chars().next().is_some_and(|c| "aeiouAEIOU".contains(c)) && !word.starts_with("url");
    format!("{} {word}", if vowel { "an" } else { "a" })
}

/// What the object at `path` needs, in words: `a click needs a target`, `a class state needs a
/// token`, `a step needs its text`. `what` names the document (`recording`, `proposal`).
fn needs(root: &Value, path: &[Step], field: &str, what: &str) -> String {
    let node = at(root, path);
    let tag = |name: &str| node.and_then(|node| node.get(name)).and_then(Value::as_str);
    let under = last_key(path).unwrap_or(what);
    if let Some(kind) = tag("type") {
        let operand = match field {
            "values" | "files" => field.to_string(),
            "accept" => "accept (true or false)".to_string(),
            "to" => "to: the element it is dropped on".to_string(),
            other => with_article(other),
        };
        return format!("{} needs {operand}", with_article(kind));
    }
    if let Some(change) = tag("change") {
        return format!("{} change needs {field}", with_article(change));
    }
    if under == "state"
        && let Some(kind) = tag("kind")
    {
        return format!("{} state needs {}", with_article(kind), with_article(field));
    }
    let context = match under {
        "steps" => "step",
        "scenario" => "scenario reference",
        "diff" => "step diff",
        "featureEdits" => "feature edit",
        "changes" => "change",
        "response" => "response matcher",
        "actions" | "action" | "before" | "after" => "action",
        other => other,
    };
    let wanted = match (context, field) {
        ("recording", "feature") => "its feature file's path",
        ("recording", "stepsDigest") => "its steps digest",
        ("recording", "steps") => "steps",
        ("step", "text") => "its text",
        ("step", "actions") => "its list of actions",
        ("proposal", "scenario" | "recording") => return format!("a proposal needs its {field}"),
        ("proposal", "binding") => "its binding: file it again with this saffron",
        ("scenario reference", "feature") => "its feature file",
        ("scenario reference", "name") => "the scenario's name",
        ("scenario reference", "cachePath") => "the recording's path",
        ("step diff", "kind" | "text") => return format!("a step diff needs the step's {field}"),
        ("step diff", "changes") => "its changes",
        ("feature edit", "file" | "line") => return format!("a feature edit needs its {field}"),
        ("feature edit", "before") => "the line as it is",
        ("feature edit", "after") => "the line as proposed",
        ("change", "change") => "its kind",
        ("response matcher" | "binding", _) => return format!("{} needs {}", with_article(context), a_field(field)),
        _ => return format!("{} needs {}", with_article(context), with_article(field)),
    };
    format!("{} needs {wanted}", with_article(context))
}

// A field named as written: `a urlRegex`, `stepsDigest` (a field that is a name, not a noun).
fn a_field(field: &str) -> String {
    if field.ends_with("Regex") { format!("a {field}") } else { field.to_string() }
}

// ---- checks on the typed values --------------------------------------------------------

fn version(value: &Value, path: &str, what: &str, supported: u32) -> Check {
    let Some(object) = value.as_object() else { return Ok(()) };
    let path = key(path, "version");
    let value = object
        .get("version")
        .filter(|value| !value.is_null())
        .ok_or_else(|| invalid(&path, format!("{} needs a version", with_article(what))))?;
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

fn non_empty(text: &str, path: &str) -> Check {
    if text.is_empty() { Err(invalid(path, "must not be empty")) } else { Ok(()) }
}

// What is wrong with an operand, if anything. Paths are only made for a problem: a valid file
// with thousands of actions makes none.
fn operand_problem(operand: &Operand<'_>) -> Option<String> {
    if operand.value.is_empty() && (operand.kind == OperandKind::Pattern || !may_be_empty(&operand.path)) {
        return Some("must not be empty".to_string());
    }
    first_problem(operand.value).or_else(|| match operand.kind {
        OperandKind::Pattern => pattern_problem(operand.value),
        OperandKind::Text => None,
    })
}

fn pattern_problem(text: &str) -> Option<String> {
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
        .err()
        .map(|error| format!("invalid regex: {}", regex_problem(&error)))
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

fn relative_path(text: &str, path: &str) -> Check {
    non_empty(text, path)?;
    let bytes = text.as_bytes();
    let drive = bytes.len() > 1 && bytes[1] == b':';
    if text.starts_with('/') || text.contains('\\') || drive {
        return Err(invalid(path, "must be relative to the project root, with / separators"));
    }
    Ok(())
}

fn digest(text: &str, path: &str) -> Check {
    if is_digest(text) { Ok(()) } else { Err(invalid(path, "expected a SHA-256 digest, 64 lowercase hex digits")) }
}

/// Whether a `Then` step must hold an assertion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThenChecks {
    Required,
    /// A skeleton's, not filled in yet.
    MayBeMissing,
}

fn check_recording(recording: &Recording, raw: &Value, path: &str) -> Check {
    check_recording_as(recording, raw, path, ThenChecks::Required)
}

fn check_recording_as(recording: &Recording, raw: &Value, path: &str, then_checks: ThenChecks) -> Check {
    relative_path(&recording.feature, &key(path, "feature"))?;
    non_empty(&recording.scenario, &key(path, "scenario"))?;
    let steps_path = key(path, "steps");
    let raw_steps = raw.get("steps");
    for (i, step) in recording.steps.iter().enumerate() {
        let step_path = index(&steps_path, i);
        non_empty(&step.text, &key(&step_path, "text"))?;
        if let Some(rows) = &step.table {
            check_table(rows, &key(&step_path, "table"))?;
        }
        let actions_path = key(&step_path, "actions");
        let raw_actions = raw_steps.and_then(|steps| steps.get(i)).and_then(|step| step.get("actions"));
        for (j, action) in step.actions.iter().enumerate() {
            check_action(action, raw_actions.and_then(|actions| actions.get(j)), &index(&actions_path, j))?;
        }
        // A Then step that asserts nothing passes whatever the page shows: replay would call
        // the scenario green without having checked it.
        if then_checks == ThenChecks::Required
            && step.kind == StepKind::Outcome
            && !step.actions.iter().any(Action::is_assertion)
        {
            return Err(invalid(
                &actions_path,
                format!(
                    "the Then step `{}` checks nothing: it needs at least one expect* action (expectText, \
                     expectVisible, ...), or it would pass whatever the page shows",
                    step.text
                ),
            ));
        }
    }
    let digest_path = key(path, "stepsDigest");
    digest(&recording.steps_digest, &digest_path)?;
    let expected = recording.digest_for(&recording.step_specs());
    if expected != recording.steps_digest {
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

fn check_table(rows: &[Vec<String>], path: &str) -> Check {
    let Some(width) = rows.first().map(Vec::len) else { return Ok(()) };
    let cells = |count: usize| match count {
        1 => "1 cell".to_string(),
        count => format!("{count} cells"),
    };
    match rows.iter().position(|row| row.len() != width) {
        Some(i) => Err(invalid(
            &index(path, i),
            format!("this row has {} where the first row has {}", cells(rows[i].len()), cells(width)),
        )),
        None => Ok(()),
    }
}

// ---- actions ---------------------------------------------------------------------------

// Operands that may be empty: an empty fill is a recorded clear, an empty expected value or
// text is a check that the field or element is empty. Every other operand must say something.
fn may_be_empty(operand: &str) -> bool {
    matches!(operand, "value" | "text" | "promptText" | "state.value" | "response.method" | "response.status")
        || operand.starts_with("values[")
}

fn check_action(action: &Action, raw: Option<&Value>, path: &str) -> Check {
    if action.timeout_ms() == Some(0) {
        return Err(invalid(&key(path, "timeoutMs"), "must be a positive number of milliseconds"));
    }
    if let Some(raw_target) = raw.and_then(|raw| raw.get("target")) {
        misplaced_scope_text(raw_target, path)?;
    }
    let needs = |operands: &str| format!("{} needs {operands}", with_article(action.type_name()));
    match action {
        Action::SwitchTab { index, url_pattern, .. } => one_of(
            path,
            ("index", index.is_some()),
            ("urlPattern", url_pattern.is_some()),
            &needs("index or urlPattern"),
        )?,
        Action::ExpectText { text, text_regex, .. } => {
            one_of(path, ("text", text.is_some()), ("textRegex", text_regex.is_some()), &needs("text or textRegex"))?
        }
        Action::ExpectUrl { url, url_regex, .. } => {
            one_of(path, ("url", url.is_some()), ("urlRegex", url_regex.is_some()), &needs("url or urlRegex"))?
        }
        // Neither is a check of any download at all; both is ambiguous.
        Action::ExpectDownload { file_name: Some(_), file_name_regex: Some(_), .. } => {
            return Err(invalid(&key(path, "fileNameRegex"), "fileName and fileNameRegex are exclusive: keep one"));
        }
        Action::ExpectField { value, pattern, .. } => {
            one_of(path, ("value", value.is_some()), ("pattern", pattern.is_some()), &needs("value or pattern"))?
        }
        Action::Request { .. } | Action::ExpectStatus { .. } => check_http(action, path)?,
        _ => {}
    }
    for operand in action.operands() {
        if let Some(problem) = operand_problem(&operand) {
            return Err(invalid(&key(path, &operand.path), problem));
        }
    }
    if let Action::Goto { url, .. } = action
        && let Some(problem) = crate::navigation::navigation_problem(url)
    {
        return Err(invalid(&key(path, "url"), problem));
    }
    if let Action::Upload { files, .. } = action
        && let Some((i, problem)) =
            files.iter().enumerate().find_map(|(i, file)| crate::upload::upload_path_problem(file).map(|p| (i, p)))
    {
        return Err(invalid(&index(&key(path, "files"), i), problem));
    }
    if let Action::TypeText { text, .. } = action
        && text.is_empty()
    {
        return Err(invalid(&key(path, "text"), "must not be empty: clear a field with a fill of \"\""));
    }
    if let Action::ExpectDownload { file_name: Some(name), .. } = action
        && name.contains(['/', '\\'])
    {
        return Err(invalid(&key(path, "fileName"), "a file's name as the browser suggests it, without folders"));
    }
    if let Some(target) = action.target() {
        check_target(target, &key(path, "target"), "target", 0, 0)?;
    }
    if let Action::Drag { to, .. } = action {
        check_target(to, &key(path, "to"), "target", 0, 0)?;
    }
    match action {
        Action::WaitForResponse { response, .. } | Action::ExpectResponse { response, .. } => {
            check_response(response, &key(path, "response"))
        }
        Action::ExpectState { state: ElementState::Class { token }, .. } if token.chars().any(char::is_whitespace) => {
            Err(invalid(&key(path, "state.token"), "one class token, without spaces: use one expectState per class"))
        }
        _ => Ok(()),
    }
}

// What a request and a status check must be to be sent or read: a service to send to, a method
// HTTP knows, a path under the service's base URL, names a header and `{captured:…}` take.
fn check_http(action: &Action, path: &str) -> Check {
    let is_name = crate::tokens::is_value_name;
    match action {
        Action::Request { service, method, path: request_path, session, headers, extract, .. } => {
            if !is_name(service) {
                return Err(invalid(
                    &key(path, "service"),
                    "the name of a service of [api.services] (letters, digits, _ - .)",
                ));
            }
            const METHODS: [&str; 7] = ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"];
            if !METHODS.contains(&method.as_str()) {
                return Err(invalid(&key(path, "method"), format!("one of {}, in capitals", METHODS.join(", "))));
            }
            if !request_path.starts_with('/') {
                return Err(invalid(
                    &key(path, "path"),
                    "a path relative to the service's base URL, starting with / (the host is the configuration's)",
                ));
            }
            if session.as_deref().is_some_and(|session| session.trim().is_empty()) {
                return Err(invalid(&key(path, "session"), "a session's name, or no session for the scenario's own"));
            }
            for (i, header) in headers.iter().enumerate() {
                if !is_name(&header.name) {
                    return Err(invalid(&key(&index(&key(path, "headers"), i), "name"), "a header's name"));
                }
            }
            for (i, kept) in extract.iter().enumerate() {
                let at = index(&key(path, "extract"), i);
                if !is_name(&kept.name) {
                    return Err(invalid(&key(&at, "name"), "the name {captured:name} reads (letters, digits, _ - .)"));
                }
                if !kept.pointer.is_empty() && !kept.pointer.starts_with('/') {
                    return Err(invalid(&key(&at, "pointer"), "a JSON Pointer into the body, such as /id"));
                }
            }
            Ok(())
        }
        Action::ExpectStatus { status, .. } => {
            let token = status.starts_with('<') || status.starts_with('{');
            if token || crate::http::is_status(status) {
                Ok(())
            } else {
                Err(invalid(&key(path, "status"), "a status code such as \"201\", or a class such as \"4xx\""))
            }
        }
        _ => Ok(()),
    }
}

// Exactly one of two alternative operands; both is ambiguous, neither is a check of nothing.
fn one_of(path: &str, (first, has_first): (&str, bool), (second, has_second): (&str, bool), missing: &str) -> Check {
    match (has_first, has_second) {
        (false, false) => Err(invalid(&key(path, first), missing)),
        (true, true) => Err(invalid(&key(path, second), format!("{first} and {second} are exclusive: keep one"))),
        _ => Ok(()),
    }
}

// A pattern filter written on the target itself, where the type has no place for it (it would
// be dropped without a word): a target filters by the text it holds (`hasText`), and only a
// scope's container by a pattern.
fn misplaced_scope_text(target: &Value, action_path: &str) -> Check {
    if target.get("hasTextRegex").is_some_and(|value| !value.is_null()) {
        return Err(invalid(
            &key(&key(action_path, "target"), "hasTextRegex"),
            "hasTextRegex narrows a scope: put it in within, next to the container's locators (a target itself \
             filters by the text it holds, hasText)",
        ));
    }
    Ok(())
}

// The locators of a target, of a scope's container or of a frame, the tier they were found by,
// the frame, which may be in a frame itself, and the scope, which may have a scope of its own.
// `depth` counts the scopes around, `frames` the frames.
fn check_target(target: &Target, path: &str, what: &str, depth: usize, frames: usize) -> Check {
    if target.name.is_some() && target.name_regex.is_some() {
        return Err(invalid(&key(path, "nameRegex"), "name and nameRegex are exclusive: keep one"));
    }
    for (qualifier, present) in [("name", target.name.is_some()), ("nameRegex", target.name_regex.is_some())] {
        if present && target.role.is_none() {
            return Err(invalid(&key(path, qualifier), format!("{qualifier} qualifies a role: add the role")));
        }
    }
    if target.tiers().is_empty() {
        return Err(invalid(
            path,
            format!("a {what} needs at least one of role, label, placeholder, text, testId or css"),
        ));
    }
    if let Some(tier) = target.tier
        && !target.has_tier(tier)
    {
        return Err(invalid(
            &key(path, "tier"),
            format!("the {what} has no {tier}, so it cannot have been found by it"),
        ));
    }
    if let Some(frame) = &target.frame {
        let path = key(path, "frame");
        if what == "scope" {
            return Err(invalid(&path, "a scope is looked for in its target's frame: put frame on the target"));
        }
        if frames + 1 > MAX_FRAME_DEPTH {
            return Err(invalid(
                &path,
                format!("frames nest at most {MAX_FRAME_DEPTH} deep: a provider's form inside an embedded widget"),
            ));
        }
        check_target(frame, &path, "frame", 0, frames + 1)?;
    }
    let Some(scope) = &target.within else { return Ok(()) };
    let Scope { container, has_text, has_text_regex } = &**scope;
    let path = key(path, "within");
    if depth + 1 > MAX_SCOPE_DEPTH {
        return Err(invalid(
            &path,
            format!("scopes nest at most {MAX_SCOPE_DEPTH} deep: a row of a table of a dialog"),
        ));
    }
    if has_text.is_some() && has_text_regex.is_some() {
        return Err(invalid(&key(&path, "hasTextRegex"), "hasText and hasTextRegex are exclusive: keep one"));
    }
    check_target(container, &path, "scope", depth + 1, frames)
}

fn check_response(matcher: &ResponseMatcher, path: &str) -> Check {
    if matcher.url_regex.contains("://") {
        return Err(invalid(
            &key(path, "urlRegex"),
            "match the path only, without scheme and host: they differ between environments",
        ));
    }
    if let Some(method) = &matcher.method
        && (method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Err(invalid(
            &key(path, "method"),
            format!("expected an HTTP method in capitals such as GET, found {method:?}"),
        ));
    }
    if let Some(status) = &matcher.status {
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
    Ok(())
}

// ---- proposals -------------------------------------------------------------------------

fn check_proposal(proposal: &Proposal, raw: &Value) -> Check {
    let scenario = &proposal.scenario;
    relative_path(&scenario.feature, "scenario.feature")?;
    non_empty(&scenario.name, "scenario.name")?;
    relative_path(&scenario.cache_path, "scenario.cachePath")?;
    check_recording(&proposal.recording, raw.get("recording").unwrap_or(&Value::Null), "recording")?;
    for (i, step) in proposal.diff.iter().enumerate() {
        let changes_path = key(&index("diff", i), "changes");
        for (j, change) in step.changes.iter().enumerate() {
            let change_path = index(&changes_path, j);
            let actions: Vec<(&str, &Action)> = match change {
                ActionChange::Added { action, .. } | ActionChange::Removed { action, .. } => vec![("action", action)],
                ActionChange::Changed { before, after, .. } => vec![("before", before), ("after", after)],
            };
            let raw_change = raw.pointer(&format!("/diff/{i}/changes/{j}"));
            for (name, action) in actions {
                check_action(action, raw_change.and_then(|change| change.get(name)), &key(&change_path, name))?;
            }
        }
    }
    for (i, edit) in proposal.feature_edits.iter().enumerate() {
        let edit_path = index("featureEdits", i);
        relative_path(&edit.file, &key(&edit_path, "file"))?;
        if edit.line == 0 {
            return Err(invalid(&key(&edit_path, "line"), "lines count from 1"));
        }
    }
    if let Some(cost) = proposal.usage.as_ref().and_then(|usage| usage.cost_usd)
        && !(cost.is_finite() && cost >= 0.0)
    {
        return Err(invalid("usage.costUsd", "must be 0 or more"));
    }
    let binding = &proposal.binding;
    digest(&binding.steps_digest, "binding.stepsDigest")?;
    if let Some(contract) = &binding.contract_digest {
        digest(contract, "binding.contractDigest")?;
    }
    digest(&binding.content_digest, "binding.contentDigest")
}

mod locate;

pub use locate::line_and_column;

#[cfg(test)]
mod tests;
