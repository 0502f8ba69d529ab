//! Semantic targets: how a recorded action finds its element again.

use std::cmp::Ordering;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The element an action acts on or checks, as a semantic query.
///
/// Replay tries the locators in tier order (role, label, placeholder, testId, text) and then
/// the CSS fallbacks in their order; with a scope (`within`), only inside the one container the
/// scope finds. All string fields may hold tokens (`<param>`, `{captured:name}`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a target (a JSON object)")]
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
    /// Text the element itself holds: of the elements its locators find, only those whose
    /// whitespace-normalized text contains it count (the row that says "INV-2291", the list
    /// item that says "Buy milk"), as Playwright's `filter({ hasText })`. In a scope, the
    /// scope's own `hasText` is the container's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_text: Option<String>,
    /// The container the element is looked for in, for elements that are only unique inside
    /// it (the checkbox of the row that says "Order 1002").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<Box<Scope>>,
    /// The iframe the element is in (a card form a payment provider embeds): found first, in
    /// the page or in its own `frame`; the element and its scope are then looked for in that
    /// frame's document only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<Box<Target>>,
    /// The tier that found the element when it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
}

/// A target's scope: the one container, among those its own locators find, whose text matches.
///
/// Resolved as Playwright resolves `getByRole('listitem').filter({ hasText: 'Order 1002' })`
/// followed by a query inside it: every match of the container's tier is kept when its text
/// matches, and exactly one must remain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a scope (a JSON object)")]
pub struct Scope {
    /// The container's own locators (role, testId, css, ...; it may have a scope itself).
    #[serde(flatten)]
    pub container: Target,
    /// Text the container holds: a case-sensitive substring of its whitespace-normalized text.
    /// Exclusive with `hasTextRegex`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_text: Option<String>,
    /// A pattern the container's whitespace-normalized text matches. Exclusive with `hasText`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_text_regex: Option<String>,
}

/// How deep scopes may nest (`within` inside `within`): a row of a table of a dialog is as far
/// as a page needs to go.
pub const MAX_SCOPE_DEPTH: usize = 3;

/// How deep frames may nest (`frame` inside `frame`): a provider's form inside an embedded
/// widget is as far as pages go.
pub const MAX_FRAME_DEPTH: usize = 3;

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
/// same-target heal propagation exact rather than heuristic. A scope is part of the question.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    /// See [`Target::has_text`].
    pub has_text: Option<&'a str>,
    /// The scope's core, see [`Target::within`].
    pub within: Option<Box<ScopeCore<'a>>>,
    /// The frame's core, see [`Target::frame`].
    pub frame: Option<Box<SemanticCore<'a>>>,
}

/// A scope without its container's CSS fallbacks and recorded tier.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopeCore<'a> {
    /// The container's semantic core.
    pub container: SemanticCore<'a>,
    /// See [`Scope::has_text`].
    pub has_text: Option<&'a str>,
    /// See [`Scope::has_text_regex`].
    pub has_text_regex: Option<&'a str>,
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
            has_text: self.has_text.as_deref(),
            within: self.within.as_deref().map(|scope| {
                Box::new(ScopeCore {
                    container: scope.container.semantic_core(),
                    has_text: scope.has_text.as_deref(),
                    has_text_regex: scope.has_text_regex.as_deref(),
                })
            }),
            frame: self.frame.as_deref().map(|frame| Box::new(frame.semantic_core())),
        }
    }

    /// The tier the target was recorded at: `tier` when it names a locator the target has,
    /// else the sturdiest locator present (a hand-written target often has no `tier`).
    pub fn recorded_tier(&self) -> Option<Tier> {
        self.tier.filter(|tier| self.has_tier(*tier)).or_else(|| self.tiers().first().copied())
    }

    /// The locator of `tier` as reports quote it, e.g. `role button "Save"`, `placeholder
    /// "Search"`, `css "#q"` (the CSS fallback at `css_index`). Without the scope.
    pub fn describe_locator(&self, tier: Tier, css_index: usize) -> String {
        let quoted = |value: &Option<String>| format!("{:?}", value.as_deref().unwrap_or_default());
        match tier {
            Tier::Role => format!("role {}", self.describe_role()),
            Tier::Label => format!("label {}", quoted(&self.label)),
            Tier::Placeholder => format!("placeholder {}", quoted(&self.placeholder)),
            Tier::TestId => format!("testId {}", quoted(&self.test_id)),
            Tier::Text => format!("text {}", quoted(&self.text)),
            Tier::Css => format!("css {:?}", self.css.get(css_index).map(String::as_str).unwrap_or_default()),
        }
    }

    /// The role and what qualifies it, e.g. `button "Save"`, `link /^Order/`, `row`.
    pub fn describe_role(&self) -> String {
        let role = self.role.as_deref().unwrap_or_default();
        match (&self.name, &self.name_regex) {
            (Some(name), _) => format!("{role} {name:?}"),
            (None, Some(pattern)) => format!("{role} /{pattern}/"),
            (None, None) => role.to_owned(),
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

    /// How many scopes deep the target is (0 without `within`).
    pub fn scope_depth(&self) -> usize {
        let mut depth = 0;
        let mut scope = self.within.as_deref();
        while let Some(current) = scope {
            depth += 1;
            scope = current.container.within.as_deref();
        }
        depth
    }

    /// How many frames deep the target is (0 without `frame`).
    pub fn frame_depth(&self) -> usize {
        let mut depth = 0;
        let mut frame = self.frame.as_deref();
        while let Some(current) = frame {
            depth += 1;
            frame = current.frame.as_deref();
        }
        depth
    }

    /// Renders the locators without the scope.
    fn fmt_own(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.recorded_tier() {
            Some(Tier::Role) => f.write_str(&self.describe_role()),
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

impl Scope {
    /// The text filter as reports quote it, e.g. `with text "Order 1002"`; empty without one.
    pub fn describe_filter(&self) -> String {
        match (&self.has_text, &self.has_text_regex) {
            (Some(text), _) => format!(" with text {text:?}"),
            (None, Some(pattern)) => format!(" with text /{pattern}/"),
            (None, None) => String::new(),
        }
    }
}

impl fmt::Display for Target {
    /// Renders the recorded tier's locator (or the sturdiest one), e.g. `button "Save"`, then
    /// the scope, then the frame: `checkbox within row with text "Order 1002"`, `button "Pay"
    /// in frame css "iframe[title=Card]"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_own(f)?;
        if let Some(text) = &self.has_text {
            write!(f, " with text {text:?}")?;
        }
        if let Some(scope) = &self.within {
            write!(f, " within {scope}")?;
        }
        if let Some(frame) = &self.frame {
            write!(f, " in frame {frame}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Scope {
    /// `row with text "Order 1002"`, then the container's own scope.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.container.fmt_own(f)?;
        f.write_str(&self.describe_filter())?;
        if let Some(outer) = &self.container.within {
            write!(f, " within {outer}")?;
        }
        Ok(())
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

    fn scoped_checkbox() -> Target {
        Target {
            role: Some("checkbox".into()),
            within: Some(Box::new(Scope {
                container: Target { role: Some("listitem".into()), css: vec!["li".into()], ..Target::default() },
                has_text: Some("Order 1002".into()),
                has_text_regex: None,
            })),
            ..Target::default()
        }
    }

    #[test]
    fn a_scope_reads_and_writes_as_one_flat_object() {
        let json = serde_json::json!({
            "role": "checkbox",
            "within": { "role": "listitem", "css": ["li"], "hasText": "Order 1002" }
        });
        let target: Target = serde_json::from_value(json.clone()).expect("reads");
        assert_eq!(target, scoped_checkbox());
        assert_eq!(serde_json::to_value(&target).expect("writes"), json);
    }

    #[test]
    fn a_frame_is_a_target_of_its_own_and_renders_last() {
        let json = serde_json::json!({
            "role": "button",
            "name": "Pay",
            "frame": { "css": ["iframe[title=\"Card\"]"], "frame": { "testId": "checkout" } },
            "tier": "role"
        });
        let target: Target = serde_json::from_value(json.clone()).expect("reads");
        assert_eq!(target.frame_depth(), 2);
        assert_eq!(serde_json::to_value(&target).expect("writes"), json);
        assert_eq!(
            target.to_string(),
            r#"button "Pay" in frame css "iframe[title=\"Card\"]" in frame test id "checkout""#
        );
        let mut elsewhere = target.clone();
        elsewhere.frame = Some(Box::new(Target { css: vec!["#other".into()], ..Target::default() }));
        assert_ne!(target.semantic_core(), elsewhere.semantic_core(), "the frame is part of the question");
    }

    #[test]
    fn renders_the_scope_after_the_locator() {
        assert_eq!(scoped_checkbox().to_string(), r#"checkbox within listitem with text "Order 1002""#);
        let mut nested = scoped_checkbox();
        let scope = nested.within.as_mut().expect("scoped");
        scope.has_text = None;
        scope.has_text_regex = Some("^Order 10\\d2".into());
        scope.container.within = Some(Box::new(Scope {
            container: Target { test_id: Some("orders".into()), ..Target::default() },
            ..Scope::default()
        }));
        assert_eq!(nested.to_string(), r#"checkbox within listitem with text /^Order 10\d2/ within test id "orders""#);
        assert_eq!(nested.scope_depth(), 2);
    }

    #[test]
    fn the_scope_is_part_of_the_semantic_core() {
        let mut other_row = scoped_checkbox();
        other_row.within.as_mut().expect("scoped").has_text = Some("Order 1003".into());
        assert_ne!(scoped_checkbox().semantic_core(), other_row.semantic_core());
        let mut other_css = scoped_checkbox();
        other_css.within.as_mut().expect("scoped").container.css = vec!["ul > li".into()];
        assert_eq!(scoped_checkbox().semantic_core(), other_css.semantic_core());
        let unscoped = Target { role: Some("checkbox".into()), ..Target::default() };
        assert_ne!(scoped_checkbox().semantic_core(), unscoped.semantic_core());
    }

    #[test]
    fn a_missing_tier_is_the_sturdiest_locator_present() {
        let target = Target { test_id: Some("q".into()), css: vec!["#q".into()], ..Target::default() };
        assert_eq!(target.recorded_tier(), Some(Tier::TestId));
        let target = Target { tier: Some(Tier::Css), ..target };
        assert_eq!(target.recorded_tier(), Some(Tier::Css));
        assert_eq!(Target::default().recorded_tier(), None);
    }
}
