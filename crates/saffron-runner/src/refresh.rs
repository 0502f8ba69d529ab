//! Drift that refreshes itself: a replay that found its elements through fallbacks proposes
//! recordings whose targets say what the page has now (`saffron run --refresh-drift`).
//!
//! Only a target's locator signals change, and only those that drifted, to the value the
//! ladder reads on the element the replay found: the element is the same one, so nothing a
//! step acts on or checks changes. An assertion's expected value is never touched, and on an
//! assertion's target neither are its text and name (they are what the check is about). A
//! signal that holds a token (`<customer>`, `{captured:id}`) is left alone: the page shows the
//! value, and the recording serves other values. A scope's or a frame's drift is reported, not
//! refreshed.

use saffron_browser::{Drift, Signal};
use saffron_recording::{Action, Target, Tier, tokenize};

/// One action's refreshed target and the lines saying what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refreshed {
    pub target: Target,
    pub changes: Vec<String>,
}

fn has_token(value: &str) -> bool {
    !tokenize(value).is_empty()
}

/// The recorded `target` of `action` with each drifted signal set to the `fresh` one (the
/// ladder's target of the same element now); `None` when nothing can change.
pub(crate) fn refreshed(action: &Action, fresh: &Target, drift: &[Drift]) -> Option<Refreshed> {
    let recorded = action.target()?;
    let assertion = action.is_assertion();
    let mut target = recorded.clone();
    let mut changes = Vec::new();
    let own = drift.iter().filter(|drift| drift.scope == 0 && drift.frame == 0);
    let mut dropped_css = Vec::new();
    for drifted in own {
        match drifted.signal {
            Signal::Tier => {}
            Signal::Role => {
                // A name is what an assertion checks; a pattern or a token serves other values.
                let fixed = assertion
                    || target.name_regex.is_some()
                    || target.name.as_deref().is_some_and(has_token)
                    || fresh.role.is_none();
                if !fixed {
                    changes.push(format!("role {} → {}", target.describe_role(), fresh.describe_role()));
                    target.role = fresh.role.clone();
                    target.name = fresh.name.clone();
                }
            }
            Signal::Label => replace(&mut target.label, &fresh.label, "label", &mut changes),
            Signal::Placeholder => replace(&mut target.placeholder, &fresh.placeholder, "placeholder", &mut changes),
            Signal::TestId => replace(&mut target.test_id, &fresh.test_id, "testId", &mut changes),
            Signal::Text if !assertion => replace(&mut target.text, &fresh.text, "text", &mut changes),
            Signal::Text => {}
            Signal::Css(index) => {
                if let Some(selector) = recorded.css.get(index).filter(|selector| !has_token(selector)) {
                    dropped_css.push(selector.clone());
                }
            }
        }
    }
    let css_before = target.css.clone();
    target.css.retain(|selector| !dropped_css.contains(selector));
    for selector in &fresh.css {
        if !target.css.contains(selector) {
            target.css.push(selector.clone());
        }
    }
    if target.css != css_before {
        changes.push(format!("css {:?} → {:?}", css_before, target.css));
    }
    // The recorded tier names the sturdiest signal it still has.
    if target.tier.is_some_and(|tier| !target.has_tier(tier)) || target.tier < target.tiers().first().copied() {
        target.tier = target.tiers().first().copied().filter(|tier| *tier != Tier::Css || !target.css.is_empty());
    }
    if target.tiers().is_empty() || target == *recorded {
        return None;
    }
    Some(Refreshed { target, changes })
}

/// Sets a drifted signal to what the element has now: its new value, or none when it has
/// lost it (a field no longer labelled). A value with a token stays.
fn replace(recorded: &mut Option<String>, fresh: &Option<String>, name: &str, changes: &mut Vec<String>) {
    if recorded.as_deref().is_some_and(has_token) || recorded == fresh {
        return;
    }
    let shown =
        |value: &Option<String>| value.as_deref().map_or_else(|| "none".to_owned(), |value| format!("{value:?}"));
    changes.push(format!("{name} {} → {}", shown(recorded), shown(fresh)));
    *recorded = fresh.clone();
}

#[cfg(test)]
mod tests {
    use saffron_browser::{Drift, Signal};
    use saffron_recording::{Action, Target, Tier};

    use super::refreshed;

    fn drift(signal: Signal, recorded: &str, now: Option<&str>) -> Drift {
        Drift { scope: 0, frame: 0, signal, recorded: recorded.into(), now: now.map(Into::into), renamed: false }
    }

    fn field(label: &str, placeholder: &str, css: &[&str]) -> Target {
        Target {
            label: Some(label.into()),
            placeholder: Some(placeholder.into()),
            css: css.iter().map(|css| (*css).to_owned()).collect(),
            tier: Some(Tier::Label),
            ..Target::default()
        }
    }

    #[test]
    fn a_drifted_signal_takes_the_value_the_page_has_now_and_the_rest_stays() {
        let fill = Action::Fill {
            target: field("Email", "you@example.com", &["#email"]),
            value: "a".into(),
            timeout_ms: None,
        };
        let fresh = field("E-mail address", "you@example.com", &["#email", "input[name=\"email\"]"]);
        let drifted = [
            drift(Signal::Tier, "label \"Email\"", Some("placeholder \"you@example.com\"")),
            drift(Signal::Label, "Email", Some("E-mail address")),
        ];
        let refreshed = refreshed(&fill, &fresh, &drifted).expect("a change");
        assert_eq!(refreshed.target.label.as_deref(), Some("E-mail address"));
        assert_eq!(refreshed.target.placeholder.as_deref(), Some("you@example.com"));
        assert_eq!(refreshed.target.css, vec!["#email".to_owned(), "input[name=\"email\"]".to_owned()]);
        assert_eq!(refreshed.target.tier, Some(Tier::Label));
        assert_eq!(refreshed.changes[0], r#"label "Email" → "E-mail address""#);
    }

    #[test]
    fn a_css_fallback_that_selects_nothing_is_dropped_and_the_ladders_own_are_added() {
        let click = Action::Click {
            target: Target { test_id: Some("save".into()), css: vec!["#save-old".into()], ..Target::default() },
            timeout_ms: None,
        };
        let fresh = Target { test_id: Some("save".into()), css: vec!["#save".into()], ..Target::default() };
        let refreshed = refreshed(&click, &fresh, &[drift(Signal::Css(0), "#save-old", Some("selects no element"))])
            .expect("a change");
        assert_eq!(refreshed.target.css, vec!["#save".to_owned()]);
    }

    #[test]
    fn an_assertion_keeps_the_text_and_name_it_checks_and_every_expected_value() {
        let check = Action::ExpectText {
            target: Target {
                role: Some("status".into()),
                text: Some("Saved".into()),
                css: vec!["#old".into()],
                ..Target::default()
            },
            text: Some("Saved".into()),
            text_regex: None,
            timeout_ms: None,
        };
        let fresh = Target {
            role: Some("status".into()),
            text: Some("Saved!".into()),
            css: vec!["#log".into()],
            ..Target::default()
        };
        let drifted =
            [drift(Signal::Text, "Saved", Some("Saved!")), drift(Signal::Css(0), "#old", Some("selects no element"))];
        let refreshed = refreshed(&check, &fresh, &drifted).expect("the CSS changes");
        let mut changed = check.clone();
        if let Some(target) = changed.target_mut() {
            *target = refreshed.target;
        }
        let Action::ExpectText { target, text, .. } = changed else { panic!("still an expectText") };
        assert_eq!(text.as_deref(), Some("Saved"));
        assert_eq!(target.text.as_deref(), Some("Saved"));
        assert_eq!(target.css, vec!["#log".to_owned()]);
    }

    #[test]
    fn a_signal_holding_a_token_is_left_alone_and_nothing_to_change_is_none() {
        let fill = Action::Fill {
            target: Target { label: Some("<field>".into()), tier: Some(Tier::Label), ..Target::default() },
            value: "x".into(),
            timeout_ms: None,
        };
        let fresh = Target { label: Some("Customer".into()), ..Target::default() };
        assert_eq!(refreshed(&fill, &fresh, &[drift(Signal::Label, "<field>", Some("Customer"))]), None);
    }
}
