//! Drift: what a recording says about an element that is no longer true of the element found.
//!
//! After a target resolves (by any tier), every signal the recording holds is compared with the
//! element: the tier that found it against the recorded one (or, without `tier`, the sturdiest
//! the target has), the role and accessible name, label, placeholder, test id, text, and
//! whether each CSS fallback still selects it alone. Each changed signal is one [`Drift`], in
//! ladder order, the element's before its scopes'.
//!
//! The cost is one page call per resolved element ([`js::SIGNALS`], only when the target holds
//! a signal the tier that fired did not already prove), plus one accessibility query when the
//! target has a role and another tier found it.

use std::fmt;

use crate::page::Page;
use regex::Regex;
use saffron_recording::{Scope, Target, Tier};
use serde_json::{Value, json};

use crate::cdp::{self, Argument, CdpFail};
use crate::js;
use crate::locate::{Found, text_filter};

/// One recorded signal that no longer describes the element found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// Whose signal: 0 for the element, 1 for the container of its scope, 2 for that
    /// container's container.
    pub scope: usize,
    /// In which document: 0 for the element's, 1 for the iframe the element is in (its
    /// target's `frame`), 2 for the iframe around that one.
    pub frame: usize,
    /// Which signal changed.
    pub signal: Signal,
    /// The recorded value: for [`Signal::Tier`] the recorded tier's locator (`role searchbox
    /// "Search"`), for [`Signal::Role`] the role and name (`searchbox "Search"`), for
    /// [`Signal::Css`] the selector, else the recorded text.
    pub recorded: String,
    /// The value now: for [`Signal::Tier`] the locator that found the element (`css "#q"`), for
    /// [`Signal::Css`] what the selector selects now (`selects no element`); `None` when the
    /// element no longer has the signal at all (no placeholder, no test id, no label).
    pub now: Option<String>,
    /// The element's own name or text is not the recorded one, as a person reads it (white
    /// space aside): a [`Signal::Text`] drift, or a [`Signal::Role`] drift whose name changed
    /// rather than only its role.
    pub renamed: bool,
}

/// A signal of a recorded target, in ladder order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Signal {
    /// The tier that found the element is weaker than the recorded one.
    Tier,
    /// Role and accessible name.
    Role,
    /// Label text.
    Label,
    /// Placeholder text.
    Placeholder,
    /// `data-testid`.
    TestId,
    /// Visible text.
    Text,
    /// The CSS fallback at this index no longer selects the element alone.
    Css(usize),
}

impl Signal {
    /// The signal's name as recordings spell the field, e.g. `testId`, `css[1]`.
    pub fn name(self) -> String {
        match self {
            Signal::Tier => "tier".to_owned(),
            Signal::Role => "role".to_owned(),
            Signal::Label => "label".to_owned(),
            Signal::Placeholder => "placeholder".to_owned(),
            Signal::TestId => "testId".to_owned(),
            Signal::Text => "text".to_owned(),
            Signal::Css(index) => format!("css[{index}]"),
        }
    }
}

impl fmt::Display for Drift {
    /// One line: `found by css "#q" (recorded: role searchbox "Search")`, `placeholder
    /// "Search…" → "Find orders…"`, `testId "q" → none`, `css "#q" → selects no element`; a
    /// container's signal starts with `scope: `, a frame's with `frame: `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for _ in 0..self.frame {
            f.write_str("frame: ")?;
        }
        for _ in 0..self.scope {
            f.write_str("scope: ")?;
        }
        let now = || self.now.as_deref().map_or_else(|| "none".to_owned(), |now| format!("{now:?}"));
        match self.signal {
            Signal::Tier => {
                write!(f, "found by {} (recorded: {})", self.now.as_deref().unwrap_or_default(), self.recorded)
            }
            Signal::Role => {
                write!(f, "role {} → {}", self.recorded, self.now.as_deref().unwrap_or("not in the accessibility tree"))
            }
            Signal::Css(_) => write!(f, "css {:?} → {}", self.recorded, self.now.as_deref().unwrap_or_default()),
            Signal::Label | Signal::Placeholder | Signal::TestId | Signal::Text => {
                write!(f, "{} {:?} → {}", self.signal.name(), self.recorded, now())
            }
        }
    }
}

impl Drift {
    /// Whether the element a fallback found is another thing than the one recorded, not the
    /// same thing restyled: its own text, or its accessible name, is not the recorded one. An
    /// assertion must not pass on such an element (a note "Old note" found by a CSS fallback is
    /// not the note "Deliver before noon" the step checks), whereas a label, placeholder, test
    /// id, selector or role that changed leaves the element what it was. `text_is_checked`: the
    /// assertion checks the element's text itself (`expectText`), so a recorded text that
    /// changed says nothing more.
    pub(crate) fn contradicts(&self, text_is_checked: bool) -> bool {
        self.scope == 0 && self.frame == 0 && self.renamed && !(self.signal == Signal::Text && text_is_checked)
    }

    /// What was recorded, as a failure's "expected": `an element with text "Deliver before
    /// noon"`, `an element with role heading "Order #1001"`.
    pub(crate) fn recorded_signal(&self) -> String {
        match self.signal {
            Signal::Role => format!("an element with role {}", self.recorded),
            _ => format!("an element with {} {:?}", self.signal.name(), self.recorded),
        }
    }

    /// What the element has instead, as a failure's "found": `text "Old note"`, `role heading
    /// "Order #1002"`.
    pub(crate) fn found_signal(&self) -> String {
        match (self.signal, &self.now) {
            (Signal::Role, Some(now)) => format!("role {now}"),
            (Signal::Role, None) => "an element not in the accessibility tree".to_owned(),
            (_, Some(now)) => format!("{} {now:?}", self.signal.name()),
            (_, None) => format!("no {}", self.signal.name()),
        }
    }
}

/// Every recorded signal of `target` (and of its scopes, and of its frames) that the element
/// `found` no longer has. Reading is advisory: a page that moved on meanwhile yields what could
/// be read.
pub(crate) async fn observe(page: &Page, target: &Target, found: &Found) -> Vec<Drift> {
    let mut drift = Vec::new();
    let mut level = Some((target, found));
    let mut frame = 0;
    while let Some((target, found)) = level {
        drift.extend(observe_scopes(page, target, found).await.into_iter().map(|drift| Drift { frame, ..drift }));
        level = match (&target.frame, &found.frame) {
            (Some(recorded), Some(found)) => Some((recorded.as_ref(), &found.iframe)),
            _ => None,
        };
        frame += 1;
    }
    drift
}

/// The drift of the element `found` and of its scopes' containers, in its own document.
async fn observe_scopes(page: &Page, target: &Target, found: &Found) -> Vec<Drift> {
    let mut drift = Vec::new();
    let mut level = Some((target, found, None::<&Scope>));
    let mut depth = 0;
    while let Some((target, found, scope)) = level {
        drift.extend(observe_one(page, target, found, scope, depth).await.unwrap_or_default());
        level = match (&target.within, &found.container) {
            (Some(scope), Some(container)) => Some((&scope.container, container.as_ref(), Some(scope.as_ref()))),
            _ => None,
        };
        depth += 1;
    }
    drift
}

/// The drift of one element: `target` found as `found`, the container of `scope` when it has one.
async fn observe_one(
    page: &Page,
    target: &Target,
    found: &Found,
    scope: Option<&Scope>,
    depth: usize,
) -> Result<Vec<Drift>, CdpFail> {
    let mut drift = Vec::new();
    let signal = |signal: Signal, recorded: String, now: Option<String>| Drift {
        scope: depth,
        frame: 0,
        signal,
        recorded,
        now,
        renamed: signal == Signal::Text,
    };
    if let Some(recorded) = target.recorded_tier()
        && Tier::is_drift(recorded, found.tier)
    {
        drift.push(signal(Signal::Tier, target.describe_locator(recorded, 0), Some(found.own_locator.clone())));
    }
    if target.role.is_some() && found.tier != Tier::Role {
        let now = role_now(page, &found.object_id, target).await?;
        if !role_matches(target, now.as_ref()) {
            let renamed = !name_matches(target, now.as_ref().map_or("", |(_, name)| name.as_str()));
            let now = now.map(|(role, name)| if name.is_empty() { role } else { format!("{role} {name:?}") });
            drift.push(Drift { renamed, ..signal(Signal::Role, target.describe_role(), now) });
        }
    }
    let mut want = serde_json::Map::new();
    let fields = [
        (Tier::Label, "label", &target.label),
        (Tier::Placeholder, "placeholder", &target.placeholder),
        (Tier::TestId, "testId", &target.test_id),
        (Tier::Text, "text", &target.text),
    ];
    for (tier, key, value) in fields {
        if let Some(value) = value
            && found.tier != tier
        {
            want.insert(key.to_owned(), json!(value));
        }
    }
    let css: Vec<Value> = target
        .css
        .iter()
        .enumerate()
        .filter(|(index, _)| !(found.tier == Tier::Css && found.css_index == *index))
        .map(|(index, selector)| json!([index, selector]))
        .collect();
    if !css.is_empty() {
        want.insert("css".to_owned(), Value::Array(css));
    }
    if want.is_empty() {
        return Ok(drift);
    }
    let root = match &found.container {
        Some(container) => Argument::Object(container.object_id.clone()),
        None => Argument::Value(Value::Null),
    };
    // The CSS fallbacks are read through the same text filter the locator applies: the
    // scope's, for a container, else the target's own `hasText`.
    let own = crate::locate::own_filter(target);
    let filter = scope.or(own.as_ref()).map_or(Value::Null, text_filter);
    let args = [Argument::Value(Value::Object(want)), Argument::Value(filter), root];
    let answer = cdp::call_with(page, &found.object_id, js::SIGNALS, &args, true).await?.value.unwrap_or_default();
    let text = |value: &Value| value.as_str().map(str::to_owned);
    for (tier, key, recorded) in fields {
        let (Some(recorded), Some(read)) = (recorded, answer.get(key)) else { continue };
        if read.get("same").and_then(Value::as_bool) == Some(false) {
            let kind = match tier {
                Tier::Label => Signal::Label,
                Tier::Placeholder => Signal::Placeholder,
                Tier::TestId => Signal::TestId,
                _ => Signal::Text,
            };
            drift.push(signal(kind, recorded.clone(), read.get("now").and_then(text)));
        }
    }
    for read in answer.get("css").and_then(Value::as_array).into_iter().flatten() {
        let index = read.get("index").and_then(Value::as_u64).unwrap_or_default() as usize;
        if read.get("same").and_then(Value::as_bool) == Some(false)
            && let Some(selector) = target.css.get(index)
        {
            drift.push(signal(Signal::Css(index), selector.clone(), read.get("now").and_then(text)));
        }
    }
    Ok(drift)
}

/// How long an accessibility question about one element may take: Chromium leaves one about a
/// document a frame just replaced unanswered.
const AX_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The element's role and accessible name as the browser computes them; `None` when it is not
/// in the accessibility tree.
async fn role_now(page: &Page, object_id: &str, target: &Target) -> Result<Option<(String, String)>, CdpFail> {
    if let Page::Firefox(tab) = page {
        return firefox_role_now(page, tab, object_id, target).await;
    }
    let params = json!({ "objectId": object_id, "fetchRelatives": false });
    let answer = cdp::call_within(page, "Accessibility.getPartialAXTree", params, AX_LIMIT).await?;
    let node = answer.get("nodes").and_then(Value::as_array).and_then(|nodes| nodes.first()).cloned();
    let Some(node) = node.filter(|node| !node.get("ignored").and_then(Value::as_bool).unwrap_or(false)) else {
        return Ok(None);
    };
    let read = |pointer: &str| node.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok(Some((read("/role/value"), read("/name/value"))))
}

/// [`role_now`] in Firefox, whose accessibility tree answers only "which elements have this
/// role and name": the element is looked for among those with the recorded role, then with
/// the recorded name. What it has instead is read as far as a page script can
/// ([`js::NAME_GUESS`], [`js::ROLE_GUESS`]).
async fn firefox_role_now(
    page: &Page,
    tab: &crate::firefox::Tab,
    object_id: &str,
    target: &Target,
) -> Result<Option<(String, String)>, CdpFail> {
    let Some(role) = target.role.as_deref() else { return Ok(None) };
    let (frame, _) = crate::firefox::parse_handle(object_id)?;
    let element = [object_id.to_owned()];
    let guessed_name =
        async || Ok::<_, CdpFail>(crate::locate::guessed_names(page, &element).await?.pop().unwrap_or_default());
    let with_role = tab.locate_role_in(frame, role, None).await?;
    if !with_role.iter().any(|handle| handle == object_id) {
        let guessed_role = cdp::call_value(page, object_id, js::ROLE_GUESS, &[]).await?;
        let guessed_role = guessed_role.as_str().unwrap_or("generic").to_owned();
        // The guessed name stands only where Firefox's tree gives the element that name: a
        // role that takes no name from its content (a list item) has none, as in Chromium.
        let name = guessed_name().await?;
        let confirmed = !name.is_empty()
            && tab.locate_role_in(frame, &guessed_role, Some(&name)).await?.iter().any(|handle| handle == object_id);
        return Ok(Some((guessed_role, if confirmed { name } else { String::new() })));
    }
    if let Some(name) = target.name.as_deref()
        && tab.locate_role_in(frame, role, Some(name)).await?.iter().any(|handle| handle == object_id)
    {
        return Ok(Some((role.to_owned(), name.to_owned())));
    }
    Ok(Some((role.to_owned(), guessed_name().await?)))
}

fn role_matches(target: &Target, now: Option<&(String, String)>) -> bool {
    let Some((role, name)) = now else { return false };
    target.role.as_deref() == Some(role.as_str()) && name_matches(target, name)
}

/// The accessible name is the recorded one, as a person reads it, or matches the recorded
/// pattern; any name does when none was recorded.
fn name_matches(target: &Target, name: &str) -> bool {
    match (&target.name, &target.name_regex) {
        (Some(recorded), _) => crate::name_key(recorded) == crate::name_key(name),
        (None, Some(pattern)) => Regex::new(pattern).is_ok_and(|pattern| pattern.is_match(name)),
        (None, None) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drift(scope: usize, signal: Signal, recorded: &str, now: Option<&str>) -> String {
        let now = now.map(str::to_owned);
        Drift { scope, frame: 0, signal, recorded: recorded.to_owned(), now, renamed: false }.to_string()
    }

    #[test]
    fn each_signal_reads_as_recorded_then_now() {
        assert_eq!(
            drift(0, Signal::Tier, r#"role searchbox "Search""#, Some(r##"css "#q""##)),
            r##"found by css "#q" (recorded: role searchbox "Search")"##
        );
        assert_eq!(
            drift(0, Signal::Placeholder, "Search…", Some("Find orders…")),
            r#"placeholder "Search…" → "Find orders…""#
        );
        assert_eq!(drift(0, Signal::TestId, "q", None), r#"testId "q" → none"#);
        assert_eq!(
            drift(0, Signal::Role, r#"textbox "Email""#, Some(r#"textbox "E-mail""#)),
            r#"role textbox "Email" → textbox "E-mail""#
        );
        assert_eq!(drift(0, Signal::Role, "button", None), "role button → not in the accessibility tree");
        assert_eq!(drift(0, Signal::Css(1), "#q", Some("selects no element")), r##"css "#q" → selects no element"##);
        assert_eq!(
            drift(1, Signal::Text, "Order 1002", Some("Order 1003")),
            r#"scope: text "Order 1002" → "Order 1003""#
        );
        let in_frame = Drift {
            scope: 1,
            frame: 1,
            signal: Signal::Css(0),
            recorded: "#card".to_owned(),
            now: Some("selects no element".to_owned()),
            renamed: false,
        };
        assert_eq!(in_frame.to_string(), r##"frame: scope: css "#card" → selects no element"##);
    }

    #[test]
    fn signals_sort_in_ladder_order() {
        let mut signals = vec![Signal::Css(1), Signal::Text, Signal::Css(0), Signal::Role, Signal::Tier, Signal::Label];
        signals.sort();
        assert_eq!(
            signals,
            vec![Signal::Tier, Signal::Role, Signal::Label, Signal::Text, Signal::Css(0), Signal::Css(1)]
        );
    }
}
