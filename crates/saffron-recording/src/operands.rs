//! The one walk over an action's string values: what token substitution, validation and the
//! seeding of recorded steps read and rewrite, each named by its JSON path.
//!
//! The action's own vocabulary (its type, a target's tier, a state's kind) is not an operand:
//! it holds no tokens and no recorded value.

use crate::action::{Action, ElementState, ResponseMatcher};
use crate::target::{Scope, Target};

/// How replay reads an operand, which decides how a token's value goes into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OperandKind {
    /// Plain text: a token's value goes in as it is.
    Text,
    /// A regular expression: a token's value goes in escaped.
    Pattern,
}

/// One string value of an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operand<'a> {
    /// JSON path inside the action, e.g. `value`, `target.within.hasText`, `values[1]`.
    pub path: String,
    /// How replay reads it.
    pub kind: OperandKind,
    /// The value as recorded.
    pub value: &'a str,
}

/// One string value of an action, to rewrite in place.
#[derive(Debug, PartialEq, Eq)]
pub struct OperandMut<'a> {
    /// See [`Operand::path`].
    pub path: String,
    /// See [`Operand::kind`].
    pub kind: OperandKind,
    /// The value, to replace.
    pub value: &'a mut String,
}

impl Action {
    /// Every string value of the action, in the order its fields are declared.
    pub fn operands(&self) -> Vec<Operand<'_>> {
        let mut operands = Vec::new();
        action_operands(self, &mut |path, kind, value| operands.push(Operand { path, kind, value }));
        operands
    }

    /// Every string value of the action, to rewrite (token substitution, seeding).
    pub fn operands_mut(&mut self) -> Vec<OperandMut<'_>> {
        let mut operands = Vec::new();
        action_operands_mut(self, &mut |path, kind, value| operands.push(OperandMut { path, kind, value }));
        operands
    }
}

// Visits an optional value when it is there.
macro_rules! visit_some {
    ($visit:ident, $path:expr, $kind:expr, $value:expr) => {
        if let Some(value) = $value {
            $visit($path, $kind, value);
        }
    };
}

// One walk, written once for shared and once for unique references (the only difference).
macro_rules! walk {
    ($action_fn:ident, $target_fn:ident, $json_fn:path $(, $mut:ident)?) => {
        fn $action_fn<'a>(
            action: &'a $($mut)? Action,
            visit: &mut impl FnMut(String, OperandKind, &'a $($mut)? String),
        ) {
            use OperandKind::{Pattern, Text};
            match action {
                Action::Goto { url, .. } => visit("url".to_owned(), Text, url),
                Action::Click { target, .. }
                | Action::DoubleClick { target, .. }
                | Action::Check { target, .. }
                | Action::Uncheck { target, .. }
                | Action::Hover { target, .. }
                | Action::ExpectVisible { target, .. }
                | Action::ExpectHidden { target, .. }
                | Action::ExpectCount { target, .. } => $target_fn(target, "target", visit),
                Action::Fill { target, value, .. } | Action::ExpectValue { target, value, .. } => {
                    $target_fn(target, "target", visit);
                    visit("value".to_owned(), Text, value);
                }
                Action::TypeText { target, text, .. } => {
                    $target_fn(target, "target", visit);
                    visit("text".to_owned(), Text, text);
                }
                Action::Drag { target, to, .. } => {
                    $target_fn(target, "target", visit);
                    $target_fn(to, "to", visit);
                }
                Action::Select { target, values, .. } => {
                    $target_fn(target, "target", visit);
                    for (i, value) in values.into_iter().enumerate() {
                        visit(format!("values[{i}]"), Text, value);
                    }
                }
                Action::Upload { target, files, .. } => {
                    $target_fn(target, "target", visit);
                    for (i, file) in files.into_iter().enumerate() {
                        visit(format!("files[{i}]"), Text, file);
                    }
                }
                Action::Press { target, key, .. } => {
                    if let Some(target) = target {
                        $target_fn(target, "target", visit);
                    }
                    visit("key".to_owned(), Text, key);
                }
                Action::SwitchTab { url_pattern, .. } => {
                    visit_some!(visit, "urlPattern".to_owned(), Pattern, url_pattern)
                }
                Action::Dialog { prompt_text, .. } => visit_some!(visit, "promptText".to_owned(), Text, prompt_text),
                Action::WaitForResponse { response, .. } | Action::ExpectResponse { response, .. } => {
                    let ResponseMatcher { url_regex, method, status, body_regex } = response;
                    visit("response.urlRegex".to_owned(), Pattern, url_regex);
                    visit_some!(visit, "response.method".to_owned(), Text, method);
                    visit_some!(visit, "response.status".to_owned(), Text, status);
                    visit_some!(visit, "response.bodyRegex".to_owned(), Pattern, body_regex);
                }
                Action::ExpectText { target, text, text_regex, .. } => {
                    $target_fn(target, "target", visit);
                    visit_some!(visit, "text".to_owned(), Text, text);
                    visit_some!(visit, "textRegex".to_owned(), Pattern, text_regex);
                }
                Action::ExpectUrl { url, url_regex, .. } => {
                    visit_some!(visit, "url".to_owned(), Text, url);
                    visit_some!(visit, "urlRegex".to_owned(), Pattern, url_regex);
                }
                Action::ExpectState { target, state, .. } => {
                    $target_fn(target, "target", visit);
                    match state {
                        ElementState::Class { token } => visit("state.token".to_owned(), Text, token),
                        ElementState::Attribute { name, value } => {
                            visit("state.name".to_owned(), Text, name);
                            visit_some!(visit, "state.value".to_owned(), Text, value);
                        }
                        ElementState::Css { property, value } => {
                            visit("state.property".to_owned(), Text, property);
                            visit("state.value".to_owned(), Text, value);
                        }
                        ElementState::Checked
                        | ElementState::Unchecked
                        | ElementState::Disabled
                        | ElementState::Enabled
                        | ElementState::Focused => {}
                    }
                }
                Action::ExpectDownload { file_name, file_name_regex, contains, .. } => {
                    visit_some!(visit, "fileName".to_owned(), Text, file_name);
                    visit_some!(visit, "fileNameRegex".to_owned(), Pattern, file_name_regex);
                    visit_some!(visit, "contains".to_owned(), Text, contains);
                }
                Action::ExpectNoConsoleErrors { .. } | Action::ExpectSchema { .. } => {}
                Action::Request { path, headers, body, extract, .. } => {
                    visit("path".to_owned(), Text, path);
                    for (i, header) in headers.into_iter().enumerate() {
                        visit(format!("headers[{i}].value"), Text, & $($mut)? header.value);
                    }
                    if let Some(body) = body {
                        $json_fn(& $($mut)? body.0, "body".to_owned(), &mut |path, text| visit(path, Text, text));
                    }
                    for (i, kept) in extract.into_iter().enumerate() {
                        visit(format!("extract[{i}].pointer"), Text, & $($mut)? kept.pointer);
                    }
                }
                Action::ExpectStatus { status, .. } => visit("status".to_owned(), Text, status),
                Action::ExpectField { pointer, value, pattern, .. } => {
                    visit("pointer".to_owned(), Text, pointer);
                    if let Some(value) = value {
                        $json_fn(& $($mut)? value.0, "value".to_owned(), &mut |path, text| visit(path, Text, text));
                    }
                    visit_some!(visit, "pattern".to_owned(), Pattern, pattern);
                }
            }
        }

        fn $target_fn<'a>(
            target: &'a $($mut)? Target,
            path: &str,
            visit: &mut impl FnMut(String, OperandKind, &'a $($mut)? String),
        ) {
            use OperandKind::{Pattern, Text};
            let Target { role, name, name_regex, label, placeholder, text, test_id, has_text, css, within, frame, tier: _ } =
                target;
            visit_some!(visit, format!("{path}.role"), Text, role);
            visit_some!(visit, format!("{path}.name"), Text, name);
            visit_some!(visit, format!("{path}.nameRegex"), Pattern, name_regex);
            visit_some!(visit, format!("{path}.label"), Text, label);
            visit_some!(visit, format!("{path}.placeholder"), Text, placeholder);
            visit_some!(visit, format!("{path}.text"), Text, text);
            visit_some!(visit, format!("{path}.testId"), Text, test_id);
            visit_some!(visit, format!("{path}.hasText"), Text, has_text);
            for (i, selector) in css.into_iter().enumerate() {
                visit(format!("{path}.css[{i}]"), Text, selector);
            }
            if let Some(scope) = within {
                let Scope { container, has_text, has_text_regex } = &$($mut)? **scope;
                let path = format!("{path}.within");
                $target_fn(container, &path, visit);
                visit_some!(visit, format!("{path}.hasText"), Text, has_text);
                visit_some!(visit, format!("{path}.hasTextRegex"), Pattern, has_text_regex);
            }
            if let Some(frame) = frame {
                $target_fn(&$($mut)? **frame, &format!("{path}.frame"), visit);
            }
        }
    };
}

walk!(action_operands, target_operands, crate::http::json_strings);
walk!(action_operands_mut, target_operands_mut, crate::http::json_strings_mut, mut);

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::target::Tier;

    // Every optional field set, every value distinct, so a value the walk misses shows.
    fn every_action_in_full() -> Vec<Action> {
        let target = |n: &str| Target {
            role: Some(format!("role{n}")),
            name: Some(format!("name{n}")),
            name_regex: Some(format!("nameRegex{n}")),
            label: Some(format!("label{n}")),
            placeholder: Some(format!("placeholder{n}")),
            text: Some(format!("text{n}")),
            test_id: Some(format!("testId{n}")),
            has_text: Some(format!("ownHasText{n}")),
            css: vec![format!("css{n}a"), format!("css{n}b")],
            within: Some(Box::new(Scope {
                container: Target { role: Some(format!("row{n}")), tier: Some(Tier::Role), ..Target::default() },
                has_text: Some(format!("hasText{n}")),
                has_text_regex: Some(format!("hasTextRegex{n}")),
            })),
            frame: Some(Box::new(Target { css: vec![format!("iframe{n}")], ..Target::default() })),
            tier: Some(Tier::Css),
        };
        let response = ResponseMatcher {
            url_regex: "urlRegex".into(),
            method: Some("GET".into()),
            status: Some("2xx".into()),
            body_regex: Some("bodyRegex".into()),
        };
        let t = Some(5);
        vec![
            Action::Goto { url: "url".into(), timeout_ms: t },
            Action::Click { target: target("1"), timeout_ms: t },
            Action::Fill { target: target("2"), value: "value".into(), timeout_ms: t },
            Action::TypeText { target: target("2b"), text: "text".into(), timeout_ms: t },
            Action::Select { target: target("3"), values: vec!["a".into(), "b".into()], timeout_ms: t },
            Action::Press { target: Some(target("4")), key: "Enter".into(), timeout_ms: t },
            Action::Check { target: target("5"), timeout_ms: t },
            Action::Uncheck { target: target("6"), timeout_ms: t },
            Action::Hover { target: target("7"), timeout_ms: t },
            Action::Drag { target: target("7d"), to: target("7e"), timeout_ms: t },
            Action::DoubleClick { target: target("7b"), timeout_ms: t },
            Action::Upload { target: target("7c"), files: vec!["files[0]".into()], timeout_ms: t },
            Action::SwitchTab { index: Some(1), url_pattern: Some("urlPattern".into()), timeout_ms: t },
            Action::Dialog { accept: true, prompt_text: Some("promptText".into()), timeout_ms: t },
            Action::WaitForResponse { response: response.clone(), timeout_ms: t },
            Action::ExpectVisible { target: target("8"), timeout_ms: t },
            Action::ExpectHidden { target: target("9"), timeout_ms: t },
            Action::ExpectText {
                target: target("10"),
                text: Some("text".into()),
                text_regex: Some("textRegex".into()),
                timeout_ms: t,
            },
            Action::ExpectValue { target: target("11"), value: "value".into(), timeout_ms: t },
            Action::ExpectUrl { url: Some("url".into()), url_regex: Some("urlRegex".into()), timeout_ms: t },
            Action::ExpectState {
                target: target("12"),
                state: ElementState::Attribute { name: "name".into(), value: Some("value".into()) },
                timeout_ms: t,
            },
            Action::ExpectState {
                target: target("13"),
                state: ElementState::Css { property: "property".into(), value: "value".into() },
                timeout_ms: t,
            },
            Action::ExpectState {
                target: target("14"),
                state: ElementState::Class { token: "token".into() },
                timeout_ms: t,
            },
            Action::ExpectResponse { response, timeout_ms: t },
            Action::ExpectDownload {
                file_name: Some("fileName".into()),
                file_name_regex: Some("fileNameRegex".into()),
                contains: Some("contains".into()),
                timeout_ms: t,
            },
            Action::ExpectNoConsoleErrors { timeout_ms: t },
            Action::ExpectCount { target: target("15"), count: 2, timeout_ms: t },
        ]
    }

    // The string leaves of the action's JSON, by path, except its own vocabulary.
    fn strings(value: &Value, path: &str, key: Option<&str>, out: &mut Vec<(String, OperandKind, String)>) {
        let join = |key: &str| if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") };
        match value {
            Value::String(text) if !matches!(key, Some("type" | "tier" | "kind")) => {
                let pattern = key.is_some_and(|key| key.ends_with("Regex") || key == "urlPattern");
                let kind = if pattern { OperandKind::Pattern } else { OperandKind::Text };
                out.push((path.to_owned(), kind, text.clone()));
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    strings(item, &format!("{path}[{i}]"), key, out);
                }
            }
            Value::Object(map) => {
                for (name, item) in map {
                    strings(item, &join(name), Some(name), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn the_walk_visits_every_string_the_json_has_and_nothing_else() {
        for mut action in every_action_in_full() {
            let mut expected = Vec::new();
            strings(&serde_json::to_value(&action).expect("serializes"), "", None, &mut expected);
            expected.sort();
            let mut visited: Vec<_> = action
                .operands()
                .into_iter()
                .map(|operand| (operand.path, operand.kind, operand.value.to_owned()))
                .collect();
            visited.sort();
            assert_eq!(visited, expected, "{}", action.type_name());
            let mutable: Vec<_> = action.operands_mut().into_iter().map(|operand| operand.path).collect();
            assert_eq!(mutable.len(), expected.len(), "{}", action.type_name());
        }
    }

    #[test]
    fn rewriting_operands_rewrites_the_action() {
        let mut action = Action::ExpectText {
            target: Target::role("heading", "<name>"),
            text: Some("Hello <name>".into()),
            text_regex: None,
            timeout_ms: None,
        };
        for operand in action.operands_mut() {
            *operand.value = operand.value.replace("<name>", "Ada");
        }
        assert_eq!(action.to_string(), r#"expect text of heading "Ada" to be "Hello Ada""#);
    }
}
