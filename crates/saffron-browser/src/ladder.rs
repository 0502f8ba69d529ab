//! The selector ladder: from the element behind a snapshot ref to the sturdiest recordable
//! target that finds exactly that element.
//!
//! Each candidate locator is checked with [`locate::locate`], the resolution replay uses, and
//! counts only when it finds exactly one element and that element is the ref's own: a
//! recording holds only what replay will find. The rungs, sturdiest first:
//! 1. role + accessible name, label, placeholder, test id, text (the semantic tiers);
//! 2. when none of those is unique, the same tiers inside the nearest row-like ancestor
//!    (listitem, row, article, ...) narrowed by a short text of its own (`within` + `hasText`);
//!    A field nothing names but the table cell beside it (a legacy form) is looked for inside
//!    the innermost table row holding that cell's text;
//! 3. CSS: an id that does not look generated, then stable attributes (name, type + name,
//!    href), then a structural path, which alone makes the target fragile.
//!
//! The sturdiest unique locator gives the tier; every other unique one is kept on the target
//! too, as a drift signal (and, for CSS, a fallback). A structural path is kept only when
//! nothing else identifies the element: it changes with every layout change.
//!
//! An element in a frame is walked inside that frame: its iframe element gets a target of its
//! own first (by the same ladder, in its own frame), and every candidate carries it as `frame`.

use std::fmt;

use crate::page::Page;
use saffron_recording::{Scope, Target, Tier};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cdp::{self, Argument, CdpFail};
use crate::context::Context;
use crate::error::BrowserError;
use crate::js;
use crate::locate::{self, Located};
use crate::snapshot::main_loader_id;

/// A table row with no row inside it: the one a field's cell is in, not the layout table's row
/// around that whole table.
const INNERMOST_ROW: &str = "tr:not(:has(tr))";

/// The target recorded for a ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LadderTarget {
    /// The target, its tier set: the winning locator plus every other unique one.
    pub target: Target,
    /// Only CSS by position identifies the element: replay will break on layout changes.
    pub fragile: bool,
    /// What the element is, for the answer the agent reads.
    pub element: ElementSummary,
}

/// What an element is: its role, accessible name and tag.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ElementSummary {
    /// Its role in the accessibility tree (`button`, `textbox`, `generic`, ...).
    pub role: String,
    /// Its accessible name (empty when it has none).
    pub name: String,
    /// Its tag name, lower case (`button`, `input`, ...).
    pub tag: String,
}

/// Why a ref has no target.
#[derive(Debug, thiserror::Error)]
pub enum RefError {
    /// The ref was never given out by a snapshot of this context.
    #[error("there is no element {reference}: use a ref from the latest snapshot (refs look like e12)")]
    Unknown {
        /// The ref as given.
        reference: String,
    },
    /// The element left the page (removed, or the page navigated).
    #[error("element {reference} is no longer on the page: take a new snapshot and use a ref from it")]
    Detached {
        /// The ref as given.
        reference: String,
    },
    /// No locator finds exactly that element.
    #[error(
        "element {reference} cannot be told apart from other elements (tried: {}): act on an element that names it, or take a new snapshot",
        tried.join("; ")
    )]
    NoUniqueTarget {
        /// The ref as given.
        reference: String,
        /// Each locator tried, with what it found.
        tried: Vec<String>,
    },
    /// The browser failed underneath.
    #[error(transparent)]
    Browser(#[from] BrowserError),
}

/// What [`js::LADDER_FACTS`] reads from the element.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Facts {
    detached: bool,
    tag: String,
    labels: Vec<String>,
    placeholder: Option<String>,
    test_id: Option<String>,
    text: Option<String>,
    id: Option<String>,
    id_css: Option<String>,
    /// Groups of alternatives: the first unique selector of each group is kept.
    attribute_css: Vec<Vec<String>>,
    /// Each class with the selector it makes (`button.clear-completed`).
    class_css: Vec<(String, String)>,
    /// A table row's text, its cells apart (for rows only).
    row_text: Option<String>,
    path: String,
    row: Option<RowFacts>,
    /// The element's own texts, when it is a row itself (a list item, a table row).
    own_row: Option<RowFacts>,
    /// The text of the table cell beside a field that nothing else names (a legacy form).
    cell_label: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RowFacts {
    role: String,
    texts: Vec<String>,
}

fn protocol(error: CdpFail) -> BrowserError {
    match error {
        CdpFail::Dead(message) => BrowserError::Closed(message),
        other => BrowserError::Protocol(other.to_string()),
    }
}

/// True when an id looks made by a framework or a build (digit runs, hashes, `:r1:`), so it
/// will not be the same on the next run.
pub(crate) fn looks_generated(id: &str) -> bool {
    if id.is_empty() || id.contains(':') || id.starts_with(|c: char| c.is_ascii_digit()) {
        return true;
    }
    let mut digits = 0;
    for c in id.chars() {
        digits = if c.is_ascii_digit() { digits + 1 } else { 0 };
        if digits >= 3 {
            return true;
        }
    }
    // A hash-like segment: long, mixing letters and digits.
    id.split(['-', '_', '.']).any(|segment| {
        segment.len() >= 6
            && segment.chars().any(|c| c.is_ascii_digit())
            && segment.chars().any(|c| c.is_ascii_alphabetic())
    })
}

/// True when a class looks written by a person to name the thing (`new-todo`,
/// `clear-completed`): not made by a build (`css-1x2y3z`, `Button_primary__3xYz1`), not a
/// utility of a CSS framework (`flex`, `text-sm`), not a state that comes and goes
/// (`completed`, `is-open`). Such a class is a CSS fallback that survives a rename.
pub(crate) fn looks_authored_class(class: &str) -> bool {
    const GENERATED_PREFIXES: [&str; 6] = ["css-", "sc-", "jsx-", "svelte-", "ng-", "emotion-"];
    // Tailwind's and Bootstrap's: shared by many elements of every page that uses them.
    const UTILITY_PREFIXES: [&str; 28] = [
        "text-",
        "font-",
        "bg-",
        "items-",
        "justify-",
        "border",
        "rounded",
        "shadow",
        "flex-",
        "grid-",
        "gap-",
        "space-",
        "min-",
        "max-",
        "overflow-",
        "cursor-",
        "opacity-",
        "transition",
        "leading-",
        "tracking-",
        "self-",
        "align-",
        "pull-",
        "float-",
        "btn-",
        "col-",
        "form-",
        "d-",
    ];
    const UTILITIES: [&str; 14] = [
        "flex",
        "grid",
        "block",
        "inline",
        "relative",
        "absolute",
        "fixed",
        "sticky",
        "container",
        "row",
        "col",
        "clearfix",
        "sr-only",
        "btn",
    ];
    const STATES: [&str; 28] = [
        "active",
        "selected",
        "completed",
        "complete",
        "done",
        "checked",
        "disabled",
        "enabled",
        "hidden",
        "open",
        "closed",
        "expanded",
        "collapsed",
        "editing",
        "focus",
        "focused",
        "hover",
        "visible",
        "show",
        "shown",
        "fade",
        "loading",
        "loaded",
        "error",
        "invalid",
        "valid",
        "current",
        "dirty",
    ];
    let lower = class.to_ascii_lowercase();
    class.len() >= 3
        && class.chars().all(|c| c.is_ascii_alphabetic() || c == '-' || c == '_')
        && !class.starts_with(['-', '_'])
        && !GENERATED_PREFIXES.iter().any(|prefix| lower.starts_with(prefix))
        && !UTILITY_PREFIXES.iter().any(|prefix| lower.starts_with(prefix))
        && !UTILITIES.contains(&lower.as_str())
        && !STATES.contains(&lower.as_str())
        && !["is-", "has-", "ui-state-"].iter().any(|prefix| lower.starts_with(prefix))
}

/// One way to find the element, with the tier it counts as.
struct Candidate {
    tier: Tier,
    target: Target,
    /// Kept on the target when unique, but never its tier: a role whose name only the
    /// placeholder gives is found by the placeholder, and the role is a second signal.
    signal_only: bool,
}

impl Candidate {
    fn describe(&self) -> String {
        let mut described = self.target.describe_locator(self.tier, 0);
        if let Some(text) = &self.target.has_text {
            described.push_str(&format!(" with text {text:?}"));
        }
        if let Some(scope) = &self.target.within {
            described.push_str(&format!(" within {scope}"));
        }
        if let Some(frame) = &self.target.frame {
            described.push_str(&format!(" in frame {frame}"));
        }
        described
    }
}

impl Context {
    /// The sturdiest recordable target that finds exactly the element behind `reference`.
    pub async fn target_for_ref(&mut self, reference: &str) -> Result<LadderTarget, RefError> {
        self.target_for_ref_preferring(reference, &[]).await
    }

    /// [`Context::target_for_ref`], for a step that names `values`: a table row the agent acts
    /// on or checks is found by the value of its that the step names (`row` whose name holds
    /// "INV-2291"), not by the whole row's text, which holds the dates and amounts the server
    /// made and depends on the data's order.
    pub async fn target_for_ref_preferring(
        &mut self,
        reference: &str,
        values: &[String],
    ) -> Result<LadderTarget, RefError> {
        let _timed = crate::timing::lone_span("ladder");
        let Some(key) = self.refs.node(reference).cloned() else {
            return Err(RefError::Unknown { reference: reference.to_owned() });
        };
        let detached = || RefError::Detached { reference: reference.to_owned() };
        if key.target_id != self.active {
            return Err(detached());
        }
        let page = self.active_page()?;
        // The role tier's accessibility queries wait for a frame a background tab never draws.
        self.front(&page).await.map_err(protocol)?;
        if main_loader_id(&page).await.map_err(protocol)? != key.loader_id {
            return Err(detached());
        }
        self.group_counter += 1;
        let group = format!("saffron-ladder-{}", self.group_counter);
        let outcome = match frame_target(&page, reference, key.frame_id.as_deref(), &group).await {
            Ok(frame) => walk(&page, reference, key.backend_id, frame.as_ref(), values, &group).await,
            Err(error) => Err(error),
        };
        let _ = cdp::call(&page, "Runtime.releaseObjectGroup", json!({ "objectGroup": group })).await;
        match outcome {
            // The document was replaced while the ladder walked it (a navigation committed and
            // took its execution context along): the ref's element is gone, not the browser.
            Err(RefError::Browser(_)) if main_loader_id(&page).await.ok().as_ref() != Some(&key.loader_id) => {
                Err(detached())
            }
            other => other,
        }
    }
}

impl Context {
    /// From the next action on, an action whose element drifted also reads the target the
    /// ladder would record for that element now ([`crate::Performed::fresh`]): what
    /// `saffron run --refresh-drift` proposes. It costs one ladder walk per drifted action.
    pub fn refresh_drift(&mut self, on: bool) {
        self.refresh_drift = on;
    }
}

/// The target the ladder records now for the element `object_id` (found in `frame`, the
/// recorded frame's target), or none when it cannot be told apart or left the page.
pub(crate) async fn target_of_found(page: &Page, object_id: &str, frame: Option<&Target>) -> Option<Target> {
    let _timed = crate::timing::span("refresh");
    let node = cdp::call(page, "DOM.describeNode", json!({ "objectId": object_id })).await.ok()?;
    let backend_id = node.pointer("/node/backendNodeId").and_then(Value::as_i64)?;
    let group = "saffron-refresh";
    let walked = walk(page, "the element", backend_id, frame, &[], group).await;
    let _ = cdp::call(page, "Runtime.releaseObjectGroup", json!({ "objectGroup": group })).await;
    walked.ok().filter(|found| !found.fragile).map(|found| found.target)
}

/// The target of the iframe that holds frame `frame_id` (none for the main frame), found in its
/// own frame.
async fn frame_target(
    page: &Page,
    reference: &str,
    frame_id: Option<&str>,
    group: &str,
) -> Result<Option<Target>, RefError> {
    let Some(frame_id) = frame_id else { return Ok(None) };
    let detached = || RefError::Detached { reference: reference.to_owned() };
    let frames = crate::frame_tree::frames(page).await.map_err(protocol)?;
    let Some(parent) = crate::frame_tree::frame_parent(&frames, frame_id) else {
        return Err(detached());
    };
    let owner = match cdp::call(page, "DOM.getFrameOwner", json!({ "frameId": frame_id })).await {
        Ok(owner) => owner.get("backendNodeId").and_then(Value::as_i64).ok_or_else(detached)?,
        Err(CdpFail::Protocol(_)) => return Err(detached()),
        Err(error) => return Err(protocol(error).into()),
    };
    let outer = Box::pin(frame_target(page, reference, parent.as_deref(), group)).await?;
    let walked = Box::pin(walk(page, reference, owner, outer.as_ref(), &[], group)).await?;
    Ok(Some(walked.target))
}

async fn walk(
    page: &Page,
    reference: &str,
    backend_id: i64,
    frame: Option<&Target>,
    values: &[String],
    group: &str,
) -> Result<LadderTarget, RefError> {
    let detached = || RefError::Detached { reference: reference.to_owned() };
    let resolved =
        cdp::call(page, "DOM.resolveNode", json!({ "backendNodeId": backend_id, "objectGroup": group })).await;
    let object_id = match resolved {
        Ok(answer) => match answer.pointer("/object/objectId").and_then(Value::as_str) {
            Some(id) => id.to_owned(),
            None => return Err(detached()),
        },
        Err(CdpFail::Protocol(_)) => return Err(detached()),
        Err(error) => return Err(protocol(error).into()),
    };
    let facts = cdp::call_on(page, &object_id, js::LADDER_FACTS, &[], true).await.map_err(protocol)?;
    let facts: Facts = serde_json::from_value(facts.value.unwrap_or(Value::Null))
        .map_err(|error| BrowserError::Protocol(format!("unexpected ladder facts: {error}")))?;
    if facts.detached {
        return Err(detached());
    }
    let ax = ax_facts(page, backend_id).await.map_err(protocol)?;
    let element = ElementSummary { role: ax.role.clone(), name: ax.name.clone(), tag: facts.tag.clone() };

    let mut tried = Vec::new();
    let framed = |mut target: Target| {
        target.frame = frame.map(|frame| Box::new(frame.clone()));
        target
    };
    // A row by a value its step names, before anything else: its whole text holds what the
    // server made (dates, amounts) and depends on the data's order.
    let named = values.iter().map(|value| value.trim()).filter(|value| !value.is_empty());
    let named: Vec<String> = match (&facts.own_row, &facts.row_text) {
        (Some(_), Some(shown)) => named.filter(|value| shown.contains(value)).map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    if let Some(found) = own_row_target(page, &ax, &facts, &named, frame, &object_id, group, &mut tried).await? {
        return Ok(LadderTarget { target: found, fragile: false, element });
    }
    let semantic = semantic_candidates(&ax, &facts, frame);
    let mut unique_semantic = Vec::new();
    for candidate in semantic {
        if is_own_unique(page, &candidate.target, &object_id, group, &mut tried, &candidate).await? {
            unique_semantic.push(candidate);
        }
    }
    // Each group's alternatives, sturdiest first: an id that does not look generated, then
    // the stable attributes.
    let id_css = facts.id.as_deref().filter(|id| !looks_generated(id)).and(facts.id_css.clone());
    let authored_classes: Vec<String> = facts
        .class_css
        .iter()
        .filter(|(class, _)| looks_authored_class(class))
        .map(|(_, selector)| selector.clone())
        .collect();
    let stable_css: Vec<Vec<String>> = id_css
        .map(|css| vec![css])
        .into_iter()
        .chain(facts.attribute_css.clone())
        .chain((!authored_classes.is_empty()).then_some(authored_classes))
        .collect();
    if !unique_semantic.is_empty() {
        let mut target = framed(merge(&unique_semantic, None));
        target.css = unique_css(page, &stable_css, None, frame, &object_id, group, &mut tried).await?;
        return Ok(LadderTarget { target, fragile: false, element });
    }
    // A field only the table cell beside it names: the one such field in the innermost row
    // that says so (`within` a row with the cell's text), as a person finds it.
    let cell_scope = facts
        .cell_label
        .iter()
        .map(|label| (Target { css: vec![INNERMOST_ROW.to_owned()], ..Target::default() }, label));
    // Nothing on the page names the element alone: look inside its row.
    let row_scopes = facts.row.iter().flat_map(|row| {
        row.texts.iter().map(|text| (Target { role: Some(row.role.clone()), ..Target::default() }, text))
    });
    for (row_scoped, (container, text)) in
        cell_scope.map(|scope| (false, scope)).chain(row_scopes.map(|scope| (true, scope)))
    {
        let scope = Scope { container, has_text: Some(text.clone()), has_text_regex: None };
        let mut unique = Vec::new();
        for mut candidate in semantic_candidates(&ax, &facts, frame) {
            candidate.target.within = Some(Box::new(scope.clone()));
            if is_own_unique(page, &candidate.target, &object_id, group, &mut tried, &candidate).await? {
                unique.push(candidate);
            }
        }
        if unique.is_empty() {
            continue;
        }
        let mut target = framed(merge(&unique, Some(&scope)));
        target.css = if row_scoped {
            let mut scoped_css = stable_css.clone();
            scoped_css.push(vec![facts.tag.clone()]);
            unique_css(page, &scoped_css, Some(&scope), frame, &object_id, group, &mut tried).await?
        } else {
            unique_css(page, &stable_css, None, frame, &object_id, group, &mut tried).await?
        };
        return Ok(LadderTarget { target, fragile: false, element });
    }
    let css = unique_css(page, &stable_css, None, frame, &object_id, group, &mut tried).await?;
    if !css.is_empty() {
        let target = framed(Target { css, tier: Some(Tier::Css), ..Target::default() });
        return Ok(LadderTarget { target, fragile: false, element });
    }
    // A list item or row that nothing names: the one that says what it holds.
    let own_texts = facts.own_row.as_ref().map(|row| row.texts.clone()).unwrap_or_default();
    if let Some(found) = own_row_target(page, &ax, &facts, &own_texts, frame, &object_id, group, &mut tried).await? {
        return Ok(LadderTarget { target: found, fragile: false, element });
    }
    let path = unique_css(page, &[vec![facts.path.clone()]], None, frame, &object_id, group, &mut tried).await?;
    if !path.is_empty() {
        let target = framed(Target { css: path, tier: Some(Tier::Css), ..Target::default() });
        return Ok(LadderTarget { target, fragile: true, element });
    }
    Err(RefError::NoUniqueTarget { reference: reference.to_owned(), tried })
}

/// The element in the accessibility tree: its role and accessible name as the role tier
/// computes them, and whether the name comes from the placeholder alone.
#[derive(Debug, Default)]
struct AxFacts {
    role: String,
    name: String,
    named_by_placeholder: bool,
}

async fn ax_facts(page: &Page, backend_id: i64) -> Result<AxFacts, CdpFail> {
    // Chromium leaves a question about a document a frame just replaced unanswered.
    let params = json!({ "backendNodeId": backend_id, "fetchRelatives": false });
    let answer =
        cdp::call_within(page, "Accessibility.getPartialAXTree", params, std::time::Duration::from_secs(2)).await?;
    let node = answer.pointer("/nodes/0").cloned().unwrap_or(Value::Null);
    if node.get("ignored").and_then(Value::as_bool).unwrap_or(false) {
        return Ok(AxFacts::default());
    }
    let text = |pointer: &str| node.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
    // Chromium lists the name's sources in precedence order; the first with a value won.
    let sources = node.pointer("/name/sources").and_then(Value::as_array).cloned().unwrap_or_default();
    let winner = sources.iter().find(|source| source.get("value").is_some());
    let named_by_placeholder = winner
        .and_then(|source| source.get("attribute"))
        .and_then(Value::as_str)
        .is_some_and(|attribute| matches!(attribute, "placeholder" | "aria-placeholder"));
    Ok(AxFacts { role: text("/role/value"), name: text("/name/value"), named_by_placeholder })
}

/// Roles the role tier cannot usefully query: Chromium's own, and the nameless generic ones.
fn queryable_role(role: &str) -> bool {
    !role.is_empty()
        && role.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && !matches!(role, "generic" | "none" | "presentation" | "paragraph")
}

/// A row-like element (a table row, a list item) found by one of `texts` it holds: its role
/// (or its tag, when the role tier cannot query it) with `hasText`, the first text that finds
/// it alone, as Playwright's `getByRole('row').filter({ hasText })`.
#[allow(clippy::too_many_arguments)]
async fn own_row_target(
    page: &Page,
    ax: &AxFacts,
    facts: &Facts,
    texts: &[String],
    frame: Option<&Target>,
    object_id: &str,
    group: &str,
    tried: &mut Vec<String>,
) -> Result<Option<Target>, RefError> {
    let Some(row) = &facts.own_row else { return Ok(None) };
    let role = [ax.role.as_str(), row.role.as_str()].into_iter().find(|role| queryable_role(role));
    let framed = frame.map(|frame| Box::new(frame.clone()));
    for text in texts.iter().take(6) {
        let has_text = Some(text.clone());
        let by_role = role.map(|role| Target {
            role: Some(role.to_owned()),
            has_text: has_text.clone(),
            frame: framed.clone(),
            ..Target::default()
        });
        let by_tag = Target { css: vec![facts.tag.clone()], has_text, frame: framed.clone(), ..Target::default() };
        let mut found: Option<Target> = None;
        if let Some(by_role) = by_role {
            let candidate = Candidate { tier: Tier::Role, target: by_role, signal_only: false };
            if is_own_unique(page, &candidate.target, object_id, group, tried, &candidate).await? {
                found = Some(Target { tier: Some(Tier::Role), ..candidate.target });
            }
        }
        let candidate = Candidate { tier: Tier::Css, target: by_tag, signal_only: false };
        if is_own_unique(page, &candidate.target, object_id, group, tried, &candidate).await? {
            found = Some(match found {
                Some(by_role) => Target { css: candidate.target.css, ..by_role },
                None => Target { tier: Some(Tier::Css), ..candidate.target },
            });
        }
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// The semantic candidates, each looked for in `frame` when the element is in one.
fn semantic_candidates(ax: &AxFacts, facts: &Facts, frame: Option<&Target>) -> Vec<Candidate> {
    let mut candidates = semantic_candidates_in_page(ax, facts);
    for candidate in &mut candidates {
        candidate.target.frame = frame.map(|frame| Box::new(frame.clone()));
    }
    candidates
}

fn semantic_candidates_in_page(ax: &AxFacts, facts: &Facts) -> Vec<Candidate> {
    let (role, name) = (ax.role.as_str(), ax.name.as_str());
    let mut candidates = Vec::new();
    // A name only the placeholder gives is the placeholder tier's signal, not a name: a field
    // labelled later would change it. The role and that name are still kept as a second
    // signal, so a field whose placeholder moves into an `aria-label` is still found.
    if queryable_role(role) {
        let target = Target {
            role: Some(role.to_owned()),
            name: (!name.is_empty()).then(|| name.to_owned()),
            ..Target::default()
        };
        candidates.push(Candidate { tier: Tier::Role, target, signal_only: ax.named_by_placeholder });
    }
    if let Some(label) = facts.labels.first() {
        candidates.push(Candidate {
            tier: Tier::Label,
            target: Target { label: Some(label.clone()), ..Target::default() },
            signal_only: false,
        });
    }
    if let Some(placeholder) = facts.placeholder.as_ref().filter(|p| !p.trim().is_empty()) {
        candidates.push(Candidate {
            tier: Tier::Placeholder,
            target: Target { placeholder: Some(placeholder.clone()), ..Target::default() },
            signal_only: false,
        });
    }
    if let Some(test_id) = facts.test_id.as_ref().filter(|t| !t.is_empty()) {
        candidates.push(Candidate {
            tier: Tier::TestId,
            target: Target { test_id: Some(test_id.clone()), ..Target::default() },
            signal_only: false,
        });
    }
    // A container's text is what it holds (a column's cards, a dialog's form), not what it is:
    // it changes with every card dropped in, and would be drift on each replay.
    // Nor is a row's text when it runs several texts together (a todo and its `×`, a date and
    // an amount): the row is found by one of them instead (`hasText`).
    let several = facts.own_row.as_ref().is_some_and(|row| row.texts.len() > 1);
    if let Some(text) = facts.text.as_ref().filter(|_| !crate::snapshot::CONTAINERS.contains(&role) && !several) {
        candidates.push(Candidate {
            tier: Tier::Text,
            target: Target { text: Some(text.clone()), ..Target::default() },
            signal_only: false,
        });
    }
    candidates
}

/// One target from the unique candidates: their locators together, the sturdiest as the tier.
fn merge(unique: &[Candidate], scope: Option<&Scope>) -> Target {
    let mut target = Target::default();
    for candidate in unique {
        let found = &candidate.target;
        target.role = target.role.take().or_else(|| found.role.clone());
        target.name = target.name.take().or_else(|| found.name.clone());
        target.label = target.label.take().or_else(|| found.label.clone());
        target.placeholder = target.placeholder.take().or_else(|| found.placeholder.clone());
        target.test_id = target.test_id.take().or_else(|| found.test_id.clone());
        target.text = target.text.take().or_else(|| found.text.clone());
    }
    let tiers = unique.iter().filter(|candidate| !candidate.signal_only).map(|candidate| candidate.tier);
    target.tier = tiers.max().or_else(|| unique.iter().map(|candidate| candidate.tier).max());
    target.within = scope.map(|scope| Box::new(scope.clone()));
    target
}

/// The first selector of each group of `alternatives` that finds exactly the element (inside
/// `scope`, in `frame`), in order.
async fn unique_css(
    page: &Page,
    alternatives: &[Vec<String>],
    scope: Option<&Scope>,
    frame: Option<&Target>,
    object_id: &str,
    group: &str,
    tried: &mut Vec<String>,
) -> Result<Vec<String>, RefError> {
    let mut unique: Vec<String> = Vec::new();
    for selectors in alternatives {
        for selector in selectors {
            if unique.contains(selector) {
                break;
            }
            let target = Target {
                css: vec![selector.clone()],
                within: scope.map(|scope| Box::new(scope.clone())),
                frame: frame.map(|frame| Box::new(frame.clone())),
                ..Target::default()
            };
            let candidate = Candidate { tier: Tier::Css, target, signal_only: false };
            if is_own_unique(page, &candidate.target, object_id, group, tried, &candidate).await? {
                unique.push(selector.clone());
                break;
            }
        }
    }
    Ok(unique)
}

/// Resolves `target` as replay would, and says whether it found exactly the ref's element.
async fn is_own_unique(
    page: &Page,
    target: &Target,
    object_id: &str,
    group: &str,
    tried: &mut Vec<String>,
    candidate: &Candidate,
) -> Result<bool, RefError> {
    let located = locate::locate(page, target, group).await.map_err(protocol)?;
    let outcome = match located {
        Located::One(found) => {
            let same = cdp::call_with(
                page,
                object_id,
                "function (other) { return this === other; }",
                &[Argument::Object(found.object_id.clone())],
                true,
            )
            .await
            .map_err(protocol)?;
            if same.value == Some(Value::Bool(true)) { Ok(()) } else { Err("finds another element".to_owned()) }
        }
        Located::None(report) => Err(report.summary()),
    };
    match outcome {
        Ok(()) => Ok(true),
        Err(why) => {
            tried.push(format!("{}: {why}", candidate.describe()));
            Ok(false)
        }
    }
}

impl fmt::Display for ElementSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.role.is_empty(), self.name.is_empty()) {
            (false, false) => write!(f, "{} {:?}", self.role, self.name),
            (false, true) => write!(f, "{} <{}>", self.role, self.tag),
            _ => write!(f, "<{}>", self.tag),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_told_from_hand_written_ones() {
        for generated in [":r1:", "ember123", "mui-12345", "a1b2c3d4", "x-9f8e7d6c", "1st", "input_abc123def"] {
            assert!(looks_generated(generated), "{generated} looks generated");
        }
        for written in ["email", "search-button", "q", "order-1", "step2", "customer_name"] {
            assert!(!looks_generated(written), "{written} looks hand-written");
        }
    }

    #[test]
    fn classes_a_person_wrote_are_told_from_generated_utility_and_state_classes() {
        for authored in ["new-todo", "clear-completed", "toggle", "destroy", "todo_list", "js-submit", "PaymentForm"] {
            assert!(looks_authored_class(authored), "{authored} looks authored");
        }
        for other in [
            "css-1x2y3z",
            "Button_primary__3xYz1",
            "sc-bdfBwQ",
            "jsx-2943",
            "flex",
            "text-sm",
            "mt-4",
            "completed",
            "btn-primary",
            "form-control",
            "is-open",
            "active",
            "w-1/2",
            "md:flex",
            "ab",
            "_private",
        ] {
            assert!(!looks_authored_class(other), "{other} does not look authored");
        }
    }
}
