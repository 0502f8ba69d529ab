//! Taking secrets out of what is written to disk: a recording or a proposal is committed, so it
//! must never hold a secret's value, whatever the page showed.
//!
//! A page that shows a secret (a greeting with the user's token, a button labelled with an API
//! key) gives the recorder signals that hold it: a target's name, label or text. Where the
//! value is spelled as replay reads the field (as is in text, escaped in a pattern), it becomes
//! its `{env:NAME}` token, which replay resolves back to the same value: the signal keeps
//! working. Where it is spelled some other way (JSON-escaped inside a name, say), no token can
//! stand for it, and the signal is dropped; a target never loses its last signal, which is
//! masked instead. Every other field that holds one is masked.

use crate::action::Action;
use crate::mask::Masker;
use crate::model::Recording;
use crate::operands::OperandKind;
use crate::target::{Target, Tier};

/// What scrubbing a value gives.
enum Scrubbed {
    /// It holds no secret.
    Clean,
    /// Its secrets became tokens that replay resolves to the same value.
    Tokens(String),
    /// It holds a secret in a spelling no token stands for: the masked text, which replay
    /// would not read the same.
    Masked(String),
}

impl Masker {
    /// Takes every secret out of `recording` (see the module's documentation); returns how many
    /// values changed.
    pub fn scrub_recording(&self, recording: &mut Recording) -> usize {
        if self.is_empty() {
            return 0;
        }
        recording
            .steps
            .iter_mut()
            .flat_map(|step| step.actions.iter_mut())
            .map(|action| self.scrub_action(action))
            .sum()
    }

    /// Takes every secret out of `action`; returns how many values changed.
    pub fn scrub_action(&self, action: &mut Action) -> usize {
        if self.is_empty() {
            return 0;
        }
        let mut changed = 0;
        for target in action.targets_mut() {
            changed += self.scrub_target(target);
        }
        // What is left: the action's own values (a fill's value, a URL, an expected text).
        for operand in action.operands_mut() {
            match self.scrub(operand.value, operand.kind) {
                Scrubbed::Clean => {}
                Scrubbed::Tokens(value) | Scrubbed::Masked(value) => {
                    *operand.value = value;
                    changed += 1;
                }
            }
        }
        changed
    }

    fn scrub_target(&self, target: &mut Target) -> usize {
        let mut changed = 0;
        let mut masked_signals: Vec<(Tier, Field, String)> = Vec::new();
        for (field, tier) in Field::SIGNALS {
            let Some(value) = field.get(target) else { continue };
            match self.scrub(value, field.kind()) {
                Scrubbed::Clean => {}
                Scrubbed::Tokens(value) => {
                    field.set(target, Some(value));
                    changed += 1;
                }
                Scrubbed::Masked(value) => {
                    field.set(target, None);
                    masked_signals.push((tier, field, value));
                    changed += 1;
                }
            }
        }
        let before = target.css.len();
        let mut masked_css = Vec::new();
        target.css.retain(|selector| match self.scrub(selector, OperandKind::Text) {
            Scrubbed::Clean => true,
            Scrubbed::Tokens(_) | Scrubbed::Masked(_) => {
                masked_css.push(self.mask(selector));
                false
            }
        });
        changed += before - target.css.len();
        if let Some(scope) = &mut target.within {
            changed += self.scrub_target(&mut scope.container);
            for (value, kind) in
                [(&mut scope.has_text, OperandKind::Text), (&mut scope.has_text_regex, OperandKind::Pattern)]
            {
                let Some(text) = value.as_ref() else { continue };
                match self.scrub(text, kind) {
                    Scrubbed::Clean => {}
                    Scrubbed::Tokens(text) => {
                        *value = Some(text);
                        changed += 1;
                    }
                    // A scope without its text filter may match more containers; replay then
                    // says so, which is better than a filter that holds the secret.
                    Scrubbed::Masked(_) => {
                        *value = None;
                        changed += 1;
                    }
                }
            }
        }
        if let Some(frame) = &mut target.frame {
            changed += self.scrub_target(frame);
        }
        if !has_signal(target) {
            // Every signal held a secret: the masked ones are all that is left to find it by.
            for (_, field, value) in &masked_signals {
                field.set(target, Some(value.clone()));
            }
            target.css.extend(masked_css);
        } else if masked_signals.iter().any(|(tier, _, _)| Some(*tier) == target.tier)
            || (target.tier == Some(Tier::Css) && target.css.is_empty())
        {
            target.tier = None;
        }
        changed
    }

    fn scrub(&self, value: &str, kind: OperandKind) -> Scrubbed {
        let masked = self.mask(value);
        if masked == value {
            return Scrubbed::Clean;
        }
        // The spellings replay reads back as the value: the value itself in text (and with its
        // white space collapsed, as names and texts are compared), escaped in a pattern.
        let mut tokens = value.to_owned();
        for secret in self.secrets() {
            let token = format!("{{env:{}}}", secret.name);
            let spellings = match kind {
                OperandKind::Text => vec![secret.value.clone(), collapsed(&secret.value)],
                OperandKind::Pattern => vec![regex::escape(&secret.value), secret.value.clone()],
            };
            for spelling in spellings.iter().filter(|spelling| spelling.chars().count() >= Masker::MIN_LEN) {
                tokens = tokens.replace(spelling.as_str(), &token);
            }
        }
        if self.mask(&tokens) == tokens { Scrubbed::Tokens(tokens) } else { Scrubbed::Masked(masked) }
    }
}

fn collapsed(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn has_signal(target: &Target) -> bool {
    Field::SIGNALS.iter().any(|(field, _)| field.get(target).is_some()) || !target.css.is_empty()
}

/// A target's signals that a secret can be dropped from.
#[derive(Clone, Copy)]
enum Field {
    Name,
    NameRegex,
    Label,
    Placeholder,
    TestId,
    Text,
}

impl Field {
    const SIGNALS: [(Field, Tier); 6] = [
        (Field::Name, Tier::Role),
        (Field::NameRegex, Tier::Role),
        (Field::Label, Tier::Label),
        (Field::Placeholder, Tier::Placeholder),
        (Field::TestId, Tier::TestId),
        (Field::Text, Tier::Text),
    ];

    fn kind(self) -> OperandKind {
        match self {
            Field::NameRegex => OperandKind::Pattern,
            _ => OperandKind::Text,
        }
    }

    fn slot(self, target: &mut Target) -> &mut Option<String> {
        match self {
            Field::Name => &mut target.name,
            Field::NameRegex => &mut target.name_regex,
            Field::Label => &mut target.label,
            Field::Placeholder => &mut target.placeholder,
            Field::TestId => &mut target.test_id,
            Field::Text => &mut target.text,
        }
    }

    fn get(self, target: &Target) -> Option<&str> {
        match self {
            Field::Name => target.name.as_deref(),
            Field::NameRegex => target.name_regex.as_deref(),
            Field::Label => target.label.as_deref(),
            Field::Placeholder => target.placeholder.as_deref(),
            Field::TestId => target.test_id.as_deref(),
            Field::Text => target.text.as_deref(),
        }
    }

    fn set(self, target: &mut Target, value: Option<String>) {
        *self.slot(target) = value;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::resolve::Secret;

    const SECRET: &str = "tok-Kx\"Vn9";

    fn masker() -> Masker {
        [Secret { name: "TOKEN".into(), value: SECRET.into() }].iter().collect()
    }

    fn action(value: serde_json::Value) -> Action {
        serde_json::from_value(value).expect("an action")
    }

    #[test]
    fn a_signal_holding_the_value_keeps_it_as_a_token() {
        let mut click = action(json!({
            "type": "click",
            "target": {
                "role": "button", "name": format!("Reveal {SECRET}"), "text": format!("Reveal {SECRET}"),
                "css": [format!("[title=\"{SECRET}\"]"), "#reveal"], "tier": "role",
            },
        }));
        assert_eq!(masker().scrub_action(&mut click), 3);
        let target = click.target().expect("a target");
        assert_eq!(target.name.as_deref(), Some("Reveal {env:TOKEN}"));
        assert_eq!(target.text.as_deref(), Some("Reveal {env:TOKEN}"));
        assert_eq!(target.css, ["#reveal"], "a selector holding the value is dropped");
        assert_eq!(target.tier, Some(Tier::Role));
        assert!(!serde_json::to_string(&click).expect("json").contains("Kx"));
    }

    #[test]
    fn another_spelling_drops_the_signal_and_its_tier() {
        let escaped = serde_json::to_string(SECRET).expect("json");
        let mut check = action(json!({
            "type": "expectText",
            "target": { "text": format!("value: {escaped}"), "testId": "echo", "tier": "text" },
            "textRegex": format!("^{}$", regex::escape(SECRET)),
        }));
        masker().scrub_action(&mut check);
        let json = serde_json::to_string(&check).expect("json");
        assert!(!json.contains("Kx"), "{json}");
        let target = check.target().expect("a target");
        assert_eq!(target.text, None);
        assert_eq!(target.tier, None, "the tier that fired is gone with its signal");
        assert_eq!(target.test_id.as_deref(), Some("echo"));
        let Action::ExpectText { text_regex, .. } = &check else { panic!("same action") };
        assert_eq!(text_regex.as_deref(), Some("^{env:TOKEN}$"), "a pattern's escaped value is a token");
    }

    #[test]
    fn a_target_keeps_its_last_signal_masked() {
        let encoded = SECRET.replace('"', "%22");
        let mut click = action(json!({ "type": "click", "target": { "text": format!("go {encoded}") } }));
        masker().scrub_action(&mut click);
        assert_eq!(click.target().and_then(|target| target.text.as_deref()), Some("go {env:TOKEN}"));
    }

    #[test]
    fn scopes_frames_and_values_are_scrubbed() {
        let mut fill = action(json!({
            "type": "fill",
            "target": {
                "label": "Code",
                "within": { "role": "dialog", "name": SECRET, "hasText": format!("for {SECRET}") },
                "frame": { "css": [format!("iframe[name='{SECRET}']")], "testId": "pay" },
            },
            "value": SECRET,
        }));
        masker().scrub_action(&mut fill);
        let json = serde_json::to_string(&fill).expect("json");
        assert!(!json.contains("Kx"), "{json}");
        let Action::Fill { target, value, .. } = &fill else { panic!("same action") };
        assert_eq!(value, "{env:TOKEN}");
        let scope = target.within.as_ref().expect("a scope");
        assert_eq!(scope.container.name.as_deref(), Some("{env:TOKEN}"));
        assert_eq!(scope.has_text.as_deref(), Some("for {env:TOKEN}"));
        assert_eq!(target.frame.as_ref().map(|frame| frame.css.len()), Some(0));
    }

    #[test]
    fn a_clean_recording_is_left_alone() {
        let mut click = action(json!({ "type": "click", "target": { "role": "button", "name": "Save" } }));
        let before = click.clone();
        assert_eq!(masker().scrub_action(&mut click), 0);
        assert_eq!(Masker::new().scrub_action(&mut click), 0);
        assert_eq!(click, before);
    }
}
