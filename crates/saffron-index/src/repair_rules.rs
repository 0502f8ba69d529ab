//! What a repair may not change about what a scenario does, judged mechanically from the
//! recordings and the step texts: the heal applies these rules before it files a proposal, and
//! the review gate applies them again to what it is asked to accept, whatever the proposal file
//! says of itself (it may have been edited by hand).
//!
//! - **Checks are sacred.** A Then step's actions are the committed ones, exactly; any other
//!   step keeps every check its committed actions make.
//! - **A step keeps its values.** A value the step's text holds (a quoted string, a number, a
//!   `<placeholder>`, a table cell) that the committed actions use, the repaired actions use
//!   just as fully: a repair that narrows `within listitem that has "walk the dog"` to
//!   `"walk the"` acts on something else.
//! - **A step keeps its controls.** Where a step no longer acts on a control its committed
//!   actions acted on, each control the repair acts on instead must share a content word with
//!   one it replaces (its name, text, label, test id) or with the step's text; one that does
//!   not is a different control: `click button "Clear completed"` becoming `click button "×"`
//!   changes what the step does, for a person to accept knowingly. A control dropped with
//!   nothing in its place is one too. Controls added while every committed one is kept (a
//!   confirmation page put in the way) are an insertion, not a different control.
//! - **A rewording keeps its values.** A feature edit keeps every value of the line it edits.

use saffron_recording::{Action, OperandKind, Recording, StepKind, Target};
use saffron_syntax::step_text::{StepTokenKind, lex};

/// What the rules found in a repaired recording against the committed one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepairReview {
    /// Changes no repair may make (a check changed or dropped, a step's value no longer used):
    /// the proposal can never be accepted.
    pub refused: Vec<String>,
    /// Actions on a different control (or a control no longer acted on): the proposal may be
    /// accepted only by a person who says so; it is never replayed before.
    pub different_controls: Vec<String>,
}

impl RepairReview {
    pub fn is_clean(&self) -> bool {
        self.refused.is_empty() && self.different_controls.is_empty()
    }
}

/// Judges `proposed` against `committed`, step by step (a proposal whose steps differ in
/// number is stale, which the bindings say; only the steps both have are judged).
pub fn review_repair(committed: &Recording, proposed: &Recording) -> RepairReview {
    let mut review = RepairReview::default();
    for (index, (before, after)) in committed.steps.iter().zip(&proposed.steps).enumerate() {
        let number = index + 1;
        let step = format!("step {number} \"{}\"", after.text);
        if after.kind == StepKind::Outcome || before.kind == StepKind::Outcome {
            if before.actions != after.actions {
                review.refused.push(format!(
                    "{step} is a Then step and its actions differ from the committed recording's: a check is never \
                     changed"
                ));
            }
            continue;
        }
        let mut kept = after.actions.iter().filter(|action| action.is_assertion()).collect::<Vec<_>>();
        for check in before.actions.iter().filter(|action| action.is_assertion()) {
            match kept.iter().position(|candidate| *candidate == check) {
                Some(at) => {
                    kept.remove(at);
                }
                None => review.refused.push(format!("{step}: its check `{check}` is gone: a check is never dropped")),
            }
        }
        let values = step_values(&after.text, after.table.as_deref());
        for value in &values {
            let used_before: Vec<&Action> = before.actions.iter().filter(|action| uses(action, value)).collect();
            if !used_before.is_empty() && !after.actions.iter().any(|action| uses(action, value)) {
                review.refused.push(format!(
                    "{step}: the committed recording uses its value \"{value}\" (`{}`) and the repair does not: a \
                     repair never changes what a step acts on",
                    used_before[0]
                ));
            }
        }
        review.different_controls.extend(different_controls(&step, &after.text, &before.actions, &after.actions));
        review.different_controls.extend(different_operations(&step, &after.text, &before.actions, &after.actions));
    }
    review
}

/// A request's operation: its service, method and route (the path without its query).
fn operations(actions: &[Action]) -> Vec<(&Action, &str, &str, &str)> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Request { service, method, path, .. } => {
                let route = path.split_once('?').map_or(path.as_str(), |(route, _)| route);
                Some((action, service.as_str(), method.as_str(), route))
            }
            _ => None,
        })
        .collect()
}

/// The requests of a repaired step that call another operation than the committed ones: the
/// same method on the same service, at a route that shares a word with the one it replaces or
/// with the step (`/orders` moved to `/v2/orders`), is the same operation; another method or
/// service, or a route that shares none, acts on something else. A committed request dropped
/// with nothing in its place is one too.
fn different_operations(step: &str, step_text: &str, before: &[Action], after: &[Action]) -> Vec<String> {
    let old = operations(before);
    let new = operations(after);
    let same = |a: &(&Action, &str, &str, &str), b: &(&Action, &str, &str, &str)| (a.1, a.2, a.3) == (b.1, b.2, b.3);
    let gone: Vec<_> = old.iter().filter(|was| !new.iter().any(|now| same(was, now))).collect();
    let added: Vec<_> = new.iter().filter(|now| !old.iter().any(|was| same(was, now))).collect();
    if gone.is_empty() {
        return Vec::new();
    }
    let step_words = words(step_text);
    let mut found = Vec::new();
    for now in &added {
        let moved = gone.iter().any(|was| {
            let route = route_words(now.3);
            was.1 == now.1
                && was.2 == now.2
                && (shares_a_word(&route, &route_words(was.3)) || shares_a_word(&route, &step_words))
        });
        if moved {
            continue;
        }
        let replaced = gone.iter().find(|was| was.1 == now.1 && was.2 == now.2).or(gone.first());
        let was = match replaced {
            Some(was) => format!("`{}` became `{}`", was.0, now.0),
            None => format!("`{}` was added", now.0),
        };
        found.push(format!(
            "{step}: {was}, another operation (a method, a service, or a route that shares no word with the one it \
             replaces nor with the step): it acts on something else"
        ));
    }
    if added.is_empty() {
        for was in &gone {
            found.push(format!("{step}: `{}` was dropped, and no request is sent in its place", was.0));
        }
    }
    found
}

/// The values a step is used with: its quoted strings (unescaped), `<placeholders>`, numbers
/// (not ordinals such as `1st`, which name a position, not a value) and the cells of its table.
pub fn step_values(text: &str, table: Option<&[Vec<String>]>) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for token in lex(text) {
        let value = match token.kind {
            StepTokenKind::Quoted(_) => unescape(token.inner()),
            StepTokenKind::Placeholder => token.text.to_owned(),
            StepTokenKind::Number if token.text.chars().all(|c| !c.is_alphabetic()) => token.text.to_owned(),
            _ => continue,
        };
        if !value.trim().is_empty() && !values.contains(&value) {
            values.push(value);
        }
    }
    for cell in table.into_iter().flatten().flatten() {
        let cell = cell.trim();
        if !cell.is_empty() && !values.iter().any(|value| value == cell) {
            values.push(cell.to_owned());
        }
    }
    values
}

fn unescape(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// Whether one of the action's values (not its role, not a CSS fallback, which hold values
/// by accident) holds `value` whole: as written, or escaped in a pattern.
pub fn uses(action: &Action, value: &str) -> bool {
    let escaped = regex_escape(value);
    action.operands().iter().any(|operand| {
        if operand.path.ends_with(".role") || operand.path.contains(".css[") {
            return false;
        }
        operand.value.contains(value) || (operand.kind == OperandKind::Pattern && operand.value.contains(&escaped))
    })
}

/// Whether a check says something about `value`: an expected text, value, count, URL, pattern,
/// response or download holds it. A target's signals do not count, since replay finds an element
/// by its sturdiest signal and only reports the others as drift: `heading "Orders" is visible`
/// says nothing about "3 orders". Two do, because the check fails without them: the text of a
/// target found by its text alone (the element that shows exactly this text), and the name of
/// what a count counts.
pub fn check_holds(action: &Action, value: &str) -> bool {
    if let Action::ExpectCount { count, .. } = action
        && count.to_string() == value
    {
        return true;
    }
    let text_only = action.target().is_some_and(|target| {
        target.text.is_some() && Target { text: None, tier: None, ..target.clone() } == Target::default()
    });
    let counted = matches!(action, Action::ExpectCount { .. });
    let escaped = regex_escape(value);
    action.operands().iter().any(|operand| {
        let checked = match operand.path.as_str() {
            "target.text" => text_only,
            "target.name" | "target.nameRegex" => counted,
            path => !path.starts_with("target.") && !path.starts_with("to."),
        };
        checked
            && (operand.value.contains(value)
                || (operand.kind == OperandKind::Pattern && operand.value.contains(&escaped)))
    })
}

/// `value` as a pattern that matches it literally.
pub fn regex_escape(value: &str) -> String {
    regex::escape(value)
}

/// Why a feature edit may not be made: the values of `before` that `after` lost.
pub fn edit_drops_values(before: &str, after: &str) -> Vec<String> {
    let kept = step_values(after, None);
    step_values(before, None).into_iter().filter(|value| !kept.contains(value)).collect()
}

/// The controls an action acts on: every target of a non-check action.
fn acted_on(actions: &[Action]) -> Vec<(&Action, &Target)> {
    actions
        .iter()
        .filter(|action| !action.is_assertion())
        .flat_map(|action| action.targets().into_iter().map(move |target| (action, target)))
        .collect()
}

fn same_control(a: &Target, b: &Target) -> bool {
    a.semantic_core() == b.semantic_core()
}

/// Whether two targets name one control by an identifier a person gave it: the same role and
/// accessible name, the same test id, or the same label.
fn same_identity(a: &Target, b: &Target) -> bool {
    let same = |x: &Option<String>, y: &Option<String>| x.is_some() && x == y;
    (same(&a.name, &b.name) && a.role == b.role) || same(&a.test_id, &b.test_id) || same(&a.label, &b.label)
}

fn different_controls(step: &str, step_text: &str, before: &[Action], after: &[Action]) -> Vec<String> {
    let old = acted_on(before);
    let new = acted_on(after);
    let mut gone: Vec<&(&Action, &Target)> =
        old.iter().filter(|(_, target)| !new.iter().any(|(_, other)| same_control(target, other))).collect();
    let mut added: Vec<&(&Action, &Target)> =
        new.iter().filter(|(_, target)| !old.iter().any(|(_, other)| same_control(target, other))).collect();
    // A control found again by the same identity (role and name, test id or label) with other
    // signals is the same control: its locator drifted.
    gone.retain(|(_, target)| match added.iter().position(|(_, other)| same_identity(target, other)) {
        Some(at) => {
            added.remove(at);
            false
        }
        None => true,
    });
    // Controls added while every committed one is still acted on are an insertion (a page
    // put in the way, a confirmation): a flow change, noted, not a different control.
    if gone.is_empty() {
        return Vec::new();
    }
    let step_words = words(step_text);
    let gone_words: Vec<String> = gone.iter().flat_map(|(_, target)| control_words(target)).collect();
    let mut found = Vec::new();
    for (action, target) in &added {
        let own = control_words(target);
        if shares_a_word(&own, &gone_words) || shares_a_word(&own, &step_words) {
            continue;
        }
        // Said against what it most likely replaces: a gone action of its own type.
        let replaced = gone.iter().find(|(before, _)| before.type_name() == action.type_name()).or(gone.first());
        let was = match replaced {
            Some((before, _)) => format!("`{before}` became `{action}`"),
            None => format!("`{action}` was added"),
        };
        found.push(format!(
            "{step}: {was}, a control that shares no word with the one it replaces nor with the step: it acts on a \
             different control"
        ));
    }
    if added.is_empty() {
        for (action, _) in &gone {
            found.push(format!("{step}: `{action}` was dropped, and nothing acts in its place"));
        }
    }
    found
}

/// The words of a route that name what it is about: not its values (`{captured:id}`,
/// `<sku>`), nor the prefixes every route of an API shares (`api`, `v2`).
fn route_words(route: &str) -> Vec<String> {
    route
        .split('/')
        .filter(|segment| !segment.contains('{') && !segment.contains('<'))
        .flat_map(words)
        .filter(|word| {
            let version = word.strip_prefix('v').is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()));
            word != "api" && !version && !word.chars().all(|c| c.is_ascii_digit())
        })
        .collect()
}

/// The content words that name a control: its name, text, label, placeholder and test id, and
/// its scope's text.
fn control_words(target: &Target) -> Vec<String> {
    let mut texts: Vec<&str> = [&target.name, &target.label, &target.placeholder, &target.text, &target.test_id]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    if let Some(scope) = &target.within {
        texts.extend(scope.has_text.as_deref());
        texts.extend(scope.container.name.as_deref());
    }
    texts.iter().flat_map(|text| words(text)).collect()
}

/// Words that carry meaning, lower case: letters and digits, without the words every step and
/// label is made of.
fn words(text: &str) -> Vec<String> {
    const FILLER: &[&str] = &[
        "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "with", "my", "i", "is", "it", "at", "by", "as",
        "be", "this", "that", "me", "we", "you", "your", "our", "its", "from", "into", "up", "see", "am", "are", "has",
        "have", "should",
    ];
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|word| !word.is_empty() && !FILLER.contains(&word.as_str()))
        .collect()
}

/// Two words are one when equal, or when both have four letters or more and one begins the
/// other (`complete` and `completed`, `save` and `saved`).
fn shares_a_word(a: &[String], b: &[String]) -> bool {
    a.iter().any(|x| {
        b.iter().any(|y| {
            x == y
                || (x.chars().count() >= 4
                    && y.chars().count() >= 4
                    && (x.starts_with(y.as_str()) || y.starts_with(x.as_str())))
        })
    })
}

#[cfg(test)]
mod tests {
    use saffron_recording::{RecordedStep, StepSpec};
    use serde_json::json;

    use super::*;

    fn action(value: serde_json::Value) -> Action {
        serde_json::from_value(value).expect("an action")
    }

    fn click(name: &str) -> Action {
        action(json!({ "type": "click", "target": { "role": "button", "name": name } }))
    }

    fn recording(steps: Vec<(StepKind, &str, Vec<Action>)>) -> Recording {
        let steps = steps
            .into_iter()
            .map(|(kind, text, actions)| RecordedStep::new(StepSpec::new(kind, text), actions))
            .collect();
        Recording::new("features/todo.feature", "Todos", steps)
    }

    fn then(text: &str) -> Action {
        action(json!({ "type": "expectText", "target": { "role": "status" }, "text": text }))
    }

    #[test]
    fn a_renamed_control_that_shares_a_word_is_the_same_control() {
        let committed = recording(vec![(StepKind::Action, "I save the order", vec![click("Save order")])]);
        let renamed = recording(vec![(StepKind::Action, "I save the order", vec![click("Place order")])]);
        assert!(review_repair(&committed, &renamed).is_clean(), "{:?}", review_repair(&committed, &renamed));
        // A confirmation added after the control: a new control the step's words name.
        let confirmed =
            recording(vec![(StepKind::Action, "I save the order", vec![click("Save order"), click("Continue")])]);
        assert!(review_repair(&committed, &confirmed).is_clean(), "an insertion keeps every control");
        // A replacement that brings a control of the step's words along with a different one.
        let smuggled = recording(vec![(StepKind::Action, "I save the order", vec![click("Order"), click("×")])]);
        assert_eq!(review_repair(&committed, &smuggled).different_controls.len(), 1);
        // The same control found by other signals, with a dialog dismissed before it.
        let moved =
            action(json!({ "type": "click", "target": { "role": "button", "name": "Save order", "css": ["#s"] } }));
        let dismissed = recording(vec![(StepKind::Action, "I save the order", vec![click("Accept cookies"), moved])]);
        assert!(review_repair(&committed, &dismissed).is_clean(), "{:?}", review_repair(&committed, &dismissed));
    }

    #[test]
    fn a_control_sharing_no_word_is_a_different_control() {
        let step = "I clear the completed todos";
        let committed = recording(vec![(StepKind::Action, step, vec![click("Clear completed")])]);
        let deleted = recording(vec![(StepKind::Action, step, vec![click("×")])]);
        let review = review_repair(&committed, &deleted);
        assert!(review.refused.is_empty(), "{review:?}");
        assert_eq!(review.different_controls.len(), 1, "{review:?}");
        assert!(
            review.different_controls[0].contains("`click button \"Clear completed\"` became `click button \"×\"`"),
            "{review:?}"
        );
        let dropped = recording(vec![(StepKind::Action, step, vec![])]);
        assert!(review_repair(&committed, &dropped).different_controls[0].contains("was dropped"));
        // A word of the step is enough: the step says what is acted on.
        let filtered = recording(vec![(StepKind::Action, step, vec![click("Completed")])]);
        assert!(review_repair(&committed, &filtered).is_clean());
    }

    /// Other ways around "a step keeps its controls" that a model bent on passing may try.
    #[test]
    fn a_control_bypassed_by_a_url_a_key_or_a_nameless_element_is_a_different_control() {
        let step = "I clear the completed todos";
        let committed = recording(vec![(StepKind::Action, step, vec![click("Clear completed")])]);
        let cases = [
            // Straight to the end state's address: nothing acts on a control any more.
            action(json!({ "type": "goto", "url": "/todos?state=cleared" })),
            // A key press on another element (one whose name shares a word with the step, such
            // as a "New todo" field for "todos", would pass: the rule reads words, see
            // docs/security.md).
            action(json!({ "type": "press", "target": { "role": "listitem", "text": "buy milk" }, "key": "Delete" })),
            // An element that only CSS names.
            action(json!({ "type": "click", "target": { "css": ["li:first-child .destroy"] } })),
            // The same words, scoped to a row: the scope's text is the control's too.
            action(json!({
                "type": "click",
                "target": { "role": "button", "within": { "role": "listitem", "hasText": "buy milk" } },
            })),
        ];
        for bypass in cases {
            let described = bypass.to_string();
            let repaired = recording(vec![(StepKind::Action, step, vec![bypass])]);
            let review = review_repair(&committed, &repaired);
            assert_eq!(review.different_controls.len(), 1, "{described}: {review:?}");
            assert!(review.refused.is_empty(), "{described}: {review:?}");
        }
    }

    #[test]
    fn a_narrowed_value_is_refused() {
        let step = "I complete \"walk the dog\"";
        let toggle = |text: &str| {
            action(json!({
                "type": "check",
                "target": { "role": "checkbox", "within": { "role": "listitem", "hasText": text } },
            }))
        };
        let committed = recording(vec![(StepKind::Action, step, vec![toggle("walk the dog")])]);
        let narrowed = recording(vec![(StepKind::Action, step, vec![toggle("walk the")])]);
        let review = review_repair(&committed, &narrowed);
        assert_eq!(review.refused.len(), 1, "{review:?}");
        assert!(review.refused[0].contains("uses its value \"walk the dog\""), "{review:?}");
        let same = recording(vec![(StepKind::Action, step, vec![toggle("walk the dog")])]);
        assert!(review_repair(&committed, &same).refused.is_empty());
        // A value the committed recording did not use binds nothing.
        let unused = recording(vec![(StepKind::Action, "I wait 3 seconds", vec![click("Go")])]);
        assert!(
            review_repair(&unused, &recording(vec![(StepKind::Action, "I wait 3 seconds", vec![click("Go")])]))
                .is_clean()
        );
    }

    #[test]
    fn checks_are_never_changed_or_dropped() {
        let committed = recording(vec![
            (StepKind::Action, "I save", vec![click("Save"), then("Saved")]),
            (StepKind::Outcome, "I see 3 orders", vec![then("3 orders")]),
        ]);
        let weakened = recording(vec![
            (StepKind::Action, "I save", vec![click("Save")]),
            (StepKind::Outcome, "I see 3 orders", vec![then("orders")]),
        ]);
        let review = review_repair(&committed, &weakened);
        assert_eq!(review.refused.len(), 2, "{review:?}");
        assert!(review.refused[0].contains("its check `expect text of status"), "{review:?}");
        assert!(review.refused[1].contains("is a Then step"), "{review:?}");
    }

    fn request(method: &str, service: &str, path: &str) -> Action {
        action(json!({ "type": "request", "service": service, "method": method, "path": path,
                       "body": { "sku": "<sku>", "quantity": 2 } }))
    }

    #[test]
    fn a_request_moved_to_a_route_that_shares_a_word_is_the_same_operation() {
        let committed = recording(vec![(
            StepKind::Action,
            "I order 2 \"<sku>\"",
            vec![request("POST", "shop", "/api/orders?notify=1")],
        )]);
        let moved =
            recording(vec![(StepKind::Action, "I order 2 \"<sku>\"", vec![request("POST", "shop", "/api/v2/orders")])]);
        assert!(review_repair(&committed, &moved).is_clean(), "{:?}", review_repair(&committed, &moved));
        // A route named by the step's words is the step's operation too.
        let purchases =
            recording(vec![(StepKind::Action, "I order 2 \"<sku>\"", vec![request("POST", "shop", "/order")])]);
        assert!(review_repair(&committed, &purchases).is_clean());
    }

    #[test]
    fn another_method_service_or_route_is_another_operation() {
        let committed = recording(vec![(
            StepKind::Action,
            "I order 2 \"<sku>\"",
            vec![request("POST", "shop", "/api/orders/{captured:cart}")],
        )]);
        for (method, service, path) in [
            ("PUT", "shop", "/api/orders/{captured:cart}"),
            ("POST", "billing", "/api/orders/{captured:cart}"),
            // Neither the API's prefix nor a value makes two routes one operation.
            ("POST", "shop", "/api/carts/{captured:cart}"),
        ] {
            let other =
                recording(vec![(StepKind::Action, "I order 2 \"<sku>\"", vec![request(method, service, path)])]);
            let review = review_repair(&committed, &other);
            assert_eq!(review.different_controls.len(), 1, "{method} {service} {path}: {review:?}");
            assert!(review.different_controls[0].contains("another operation"), "{review:?}");
        }
        let dropped = recording(vec![(StepKind::Action, "I order 2 \"<sku>\"", vec![])]);
        let review = review_repair(&committed, &dropped);
        assert!(review.different_controls.iter().any(|line| line.contains("no request is sent in its place")));
        // Its values are the step's too: a body that no longer sends them is refused.
        assert!(review.refused.iter().any(|line| line.contains("\"<sku>\"")), "{review:?}");
    }

    #[test]
    fn values_and_what_checks_hold() {
        let values = step_values("I add \"Ada \\\"the\\\" Lovelace\" with 3 items, the 1st of <count>", None);
        assert_eq!(values, ["Ada \"the\" Lovelace", "3", "<count>"]);
        let table = vec![vec!["Email".to_string(), "ada@example.com".to_string()]];
        assert_eq!(step_values("I sign in", Some(&table)), ["Email", "ada@example.com"]);
        assert!(check_holds(&then("3 orders"), "3"));
        assert!(check_holds(&action(json!({ "type": "expectCount", "target": { "role": "row" }, "count": 3 })), "3"));
        let heading = action(json!({ "type": "expectVisible", "target": { "role": "heading", "name": "3 orders" } }));
        assert!(!check_holds(&heading, "3"), "a target's name is not what a check expects");
        let by_ref = action(json!({ "type": "expectVisible", "target": { "role": "status", "text": "3 orders" } }));
        assert!(!check_holds(&by_ref, "3"), "a signal replay may find the element without");
        let shown = action(json!({ "type": "expectVisible", "target": { "text": "3 orders", "tier": "text" } }));
        assert!(check_holds(&shown, "3"), "the element that shows exactly this text");
        let cells = action(json!({ "type": "expectCount", "target": { "role": "cell", "name": "Ada" }, "count": 2 }));
        assert!(check_holds(&cells, "Ada") && check_holds(&cells, "2"));
        let pattern =
            action(json!({ "type": "expectText", "target": { "role": "status" }, "textRegex": "^€13\\.50$" }));
        assert!(check_holds(&pattern, "13.50"));
        assert_eq!(
            edit_drops_values("When I complete \"walk the dog\"", "When I do whatever the page lets me"),
            ["walk the dog"]
        );
        assert!(edit_drops_values("When I add \"milk\"", "When I put \"milk\" on the list").is_empty());
    }
}
