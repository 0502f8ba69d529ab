//! Semantic targets: how a recorded action finds its element again.

use std::cmp::Ordering;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The element an action acts on or checks, as a semantic query.
///
/// Replay tries the locators in tier order (role, label, placeholder, testId, text) and then
/// the CSS fallbacks in their order. All string fields may hold tokens (`<param>`,
/// `{captured:name}`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// ARIA role, e.g. `button`, `textbox`, `heading`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Exact accessible name; qualifies `role`. Exclusive with `nameRegex`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Accessible-name pattern (for volatile names); qualifies `role`. Exclusive with `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_regex: Option<String>,
    /// Text of the element's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The field's placeholder text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Visible text of the element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The element's test id (`data-testid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_id: Option<String>,
    /// CSS selectors tried in order after every semantic locator failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub css: Vec<String>,
    /// The tier that found the element when it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
}

/// A locator tier. Ordered by sturdiness: `role > label > placeholder > testId > text > css`.
// `Ord` follows sturdiness, so `Tier::Role > Tier::Css`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Tier {
    /// ARIA role plus accessible name.
    Role,
    /// Label text.
    Label,
    /// Placeholder text.
    Placeholder,
    /// Test id.
    TestId,
    /// Visible text.
    Text,
    /// A CSS fallback.
    Css,
}

impl Tier {
    /// Every tier, sturdiest first: the order replay tries them in.
    pub const LADDER: [Tier; 6] = [Tier::Role, Tier::Label, Tier::Placeholder, Tier::TestId, Tier::Text, Tier::Css];

    /// The tier's name as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Role => "role",
            Tier::Label => "label",
            Tier::Placeholder => "placeholder",
            Tier::TestId => "testId",
            Tier::Text => "text",
            Tier::Css => "css",
        }
    }

    /// True when a replay that resolved at `resolved` did worse than the recording did at
    /// `recorded`: the step passes but reports drift.
    pub fn is_drift(recorded: Tier, resolved: Tier) -> bool {
        resolved < recorded
    }

    fn sturdiness(self) -> u8 {
        match self {
            Tier::Role => 5,
            Tier::Label => 4,
            Tier::Placeholder => 3,
            Tier::TestId => 2,
            Tier::Text => 1,
            Tier::Css => 0,
        }
    }
}

impl PartialOrd for Tier {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Tier {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sturdiness().cmp(&other.sturdiness())
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A target without its CSS fallbacks and recorded tier: the element query itself.
///
/// Two targets with equal cores ask the page the same question, which is what makes
/// same-target heal propagation exact rather than heuristic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SemanticCore<'a> {
    /// See [`Target::role`].
    pub role: Option<&'a str>,
    /// See [`Target::name`].
    pub name: Option<&'a str>,
    /// See [`Target::name_regex`].
    pub name_regex: Option<&'a str>,
    /// See [`Target::label`].
    pub label: Option<&'a str>,
    /// See [`Target::placeholder`].
    pub placeholder: Option<&'a str>,
    /// See [`Target::text`].
    pub text: Option<&'a str>,
    /// See [`Target::test_id`].
    pub test_id: Option<&'a str>,
}

impl Target {
    /// A target found by role and exact accessible name.
    pub fn role(role: impl Into<String>, name: impl Into<String>) -> Target {
        Target { role: Some(role.into()), name: Some(name.into()), tier: Some(Tier::Role), ..Target::default() }
    }

    /// The semantic part of the target (CSS fallbacks and tier excluded).
    pub fn semantic_core(&self) -> SemanticCore<'_> {
        SemanticCore {
            role: self.role.as_deref(),
            name: self.name.as_deref(),
            name_regex: self.name_regex.as_deref(),
            label: self.label.as_deref(),
            placeholder: self.placeholder.as_deref(),
            text: self.text.as_deref(),
            test_id: self.test_id.as_deref(),
        }
    }

    /// The tiers this target can be resolved by, sturdiest first.
    pub fn tiers(&self) -> Vec<Tier> {
        Tier::LADDER.into_iter().filter(|tier| self.has_tier(*tier)).collect()
    }

    /// True when the target carries the locator of `tier`.
    pub fn has_tier(&self, tier: Tier) -> bool {
        match tier {
            Tier::Role => self.role.is_some(),
            Tier::Label => self.label.is_some(),
            Tier::Placeholder => self.placeholder.is_some(),
            Tier::TestId => self.test_id.is_some(),
            Tier::Text => self.text.is_some(),
            Tier::Css => !self.css.is_empty(),
        }
    }
}

impl fmt::Display for Target {
    /// Renders the recorded tier's locator (or the sturdiest one), e.g. `button "Save"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tier = self.tier.filter(|tier| self.has_tier(*tier)).or_else(|| self.tiers().first().copied());
        match tier {
            Some(Tier::Role) => {
                f.write_str(self.role.as_deref().unwrap_or_default())?;
                if let Some(name) = &self.name {
                    write!(f, " {name:?}")?;
                } else if let Some(pattern) = &self.name_regex {
                    write!(f, " /{pattern}/")?;
                }
                Ok(())
            }
            Some(Tier::Label) => write!(f, "label {:?}", self.label.as_deref().unwrap_or_default()),
            Some(Tier::Placeholder) => write!(f, "placeholder {:?}", self.placeholder.as_deref().unwrap_or_default()),
            Some(Tier::TestId) => {
                write!(f, "test id {:?}", self.test_id.as_deref().unwrap_or_default())
            }
            Some(Tier::Text) => write!(f, "text {:?}", self.text.as_deref().unwrap_or_default()),
            Some(Tier::Css) => write!(f, "css {:?}", self.css.first().map(String::as_str).unwrap_or_default()),
            None => f.write_str("(no locator)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_order_from_sturdiest_to_weakest() {
        for pair in Tier::LADDER.windows(2) {
            assert!(pair[0] > pair[1], "{} should outrank {}", pair[0], pair[1]);
        }
        assert!(Tier::is_drift(Tier::Role, Tier::Css));
        assert!(Tier::is_drift(Tier::Label, Tier::TestId));
        assert!(!Tier::is_drift(Tier::Css, Tier::Role));
        assert!(!Tier::is_drift(Tier::Text, Tier::Text));
    }

    #[test]
    fn semantic_core_ignores_css_and_tier() {
        let mut a = Target::role("button", "Save");
        a.css = vec!["#save".into()];
        let mut b = Target::role("button", "Save");
        b.css = vec!["form > button".into(), "#other".into()];
        b.tier = Some(Tier::Css);
        assert_eq!(a.semantic_core(), b.semantic_core());
        b.name = Some("Save draft".into());
        assert_ne!(a.semantic_core(), b.semantic_core());
    }

    #[test]
    fn renders_the_recorded_or_sturdiest_locator() {
        assert_eq!(Target::role("button", "Save").to_string(), r#"button "Save""#);
        let target = Target { role: Some("link".into()), name_regex: Some("^Order \\d+$".into()), ..Target::default() };
        assert_eq!(target.to_string(), r"link /^Order \d+$/");
        let target = Target {
            label: Some("Email".into()),
            css: vec!["#email".into()],
            tier: Some(Tier::Css),
            ..Target::default()
        };
        assert_eq!(target.to_string(), "css \"#email\"");
        let target = Target { test_id: Some("total".into()), ..Target::default() };
        assert_eq!(target.to_string(), "test id \"total\"");
        assert_eq!(Target::default().to_string(), "(no locator)");
    }

    #[test]
    fn tiers_lists_only_present_locators() {
        let target = Target {
            text: Some("Hi".into()),
            css: vec!["p".into()],
            role: Some("paragraph".into()),
            ..Target::default()
        };
        assert_eq!(target.tiers(), vec![Tier::Role, Tier::Text, Tier::Css]);
    }
}
