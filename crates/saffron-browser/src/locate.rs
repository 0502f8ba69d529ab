//! Target resolution: the tier ladder, exactly one match per tier, inside a scope when the
//! target has one.
//!
//! - role: Chromium's own accessibility tree (`Accessibility.queryAXTree` by role and exact
//!   accessible name, else by role and the name as a person reads it, or by role then filtered
//!   by `nameRegex`), so names are computed the way the browser computes them for assistive
//!   technology, and hidden elements (not in the tree) never match, as with Playwright's
//!   `getByRole`;
//! - label, placeholder, testId, text, css: one call of [`js::FIND`] per tier, which searches
//!   open shadow roots too.
//!
//! A tier is tried only if the target has it. One match fires the tier; none moves on; several
//! are remembered as "ambiguous" and move on too. A weaker tier that fires is checked by the
//! sturdier ones once more, since the page may have changed between two queries. The report
//! lists what every tier found, for the failure message.
//!
//! A scope (`within`) is resolved first, the same way, except that each tier keeps only the
//! matches whose text passes the scope's filter (Playwright's `filter({ hasText })`). The
//! target's own tiers then search that container only: the accessibility query is rooted at it,
//! and [`js::FIND`] runs with it as `this`.
//!
//! A frame (`frame`) is resolved before anything else, the same way, to its iframe element; the
//! scope and the target are then looked for in that frame's document: the accessibility query
//! is rooted at the document, and [`js::FIND`] runs on it, in the frame's own realm. A frame in
//! another renderer process (a cross-site frame under site isolation) has no document here.

use std::collections::HashSet;

use crate::page::Page;
use regex::Regex;
use saffron_recording::{Scope, Target, Tier};
use serde_json::{Value, json};

use crate::cdp::{self, Argument, CdpFail};
use crate::js;

/// The element a target resolved to.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// `Runtime.RemoteObjectId` of the element.
    pub object_id: String,
    /// The tier that found it.
    pub tier: Tier,
    /// Which CSS fallback found it, when `tier` is CSS.
    pub css_index: usize,
    /// The locator that found it, e.g. `css "#q"`; for a container with its text filter.
    pub own_locator: String,
    /// The container it was found in, when the target has a scope.
    pub container: Option<Box<Found>>,
    /// The frame it was found in, when the target has one (or its target has, for a scope's
    /// container).
    pub frame: Option<Box<Frame>>,
}

/// The frame a target was looked for in.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    /// The iframe element, as the target's `frame` found it.
    pub iframe: Found,
    /// `Runtime.RemoteObjectId` of the frame's document, in the frame's own realm.
    pub document: String,
}

impl Found {
    /// The locator that found the element, scopes included, e.g. `role checkbox within role
    /// row with text "Order 1002"`.
    pub(crate) fn locator(&self) -> String {
        let mut locator = match &self.container {
            Some(container) => format!("{} within {}", self.own_locator, container.locator_in_frame()),
            None => self.own_locator.clone(),
        };
        if let Some(frame) = &self.frame {
            locator = format!("{locator} in frame {}", frame.iframe.locator());
        }
        locator
    }

    /// The locator of a scope's container, which shares its target's frame: without the frame.
    fn locator_in_frame(&self) -> String {
        match &self.container {
            Some(container) => format!("{} within {}", self.own_locator, container.locator_in_frame()),
            None => self.own_locator.clone(),
        }
    }

    /// The iframes around the element, innermost first.
    pub(crate) fn frames(&self) -> Vec<&Found> {
        let mut frames = Vec::new();
        let mut frame = self.frame.as_deref();
        while let Some(current) = frame {
            frames.push(&current.iframe);
            frame = current.iframe.frame.as_deref();
        }
        frames
    }

    /// True when the element (and each container) was found by the locator the target names
    /// in messages (its recorded tier, or its first CSS fallback), not by a fallback.
    pub(crate) fn by_recorded_locator(&self, target: &Target) -> bool {
        let own = Some(self.tier) == target.recorded_tier() && self.css_index == 0;
        let scopes = match (&self.container, &target.within) {
            (Some(container), Some(scope)) => container.by_recorded_locator(&scope.container),
            _ => true,
        };
        let frames = match (&self.frame, &target.frame) {
            (Some(frame), Some(recorded)) => frame.iframe.by_recorded_locator(recorded),
            _ => true,
        };
        own && scopes && frames
    }

    /// The locator, when it is not the one the target names: for messages that must say what
    /// actually matched.
    pub(crate) fn fallback_locator(&self, target: &Target) -> Option<String> {
        (!self.by_recorded_locator(target)).then(|| self.locator())
    }
}

/// What each tier found, in ladder order, e.g. `role button "Save": 0 matches`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Report {
    pub lines: Vec<String>,
    pub ambiguous: bool,
}

impl Report {
    pub(crate) fn summary(&self) -> String {
        self.lines.join("; ")
    }

    /// The report of a scope that did not resolve, as one line of its target's report.
    fn of_scope(scope: &Scope, inner: Report) -> Report {
        let lines = vec![format!("scope {scope}: {}", inner.lines.join(", "))];
        Report { lines, ambiguous: inner.ambiguous }
    }
}

/// The outcome of one resolution attempt.
#[derive(Debug, Clone)]
pub(crate) enum Located {
    One(Found),
    /// No tier had exactly one match (`report.ambiguous` when some had several).
    None(Report),
}

fn matches_phrase(count: usize) -> String {
    match count {
        0 => "0 matches".to_owned(),
        1 => "1 match".to_owned(),
        n => format!("{n} matches (ambiguous)"),
    }
}

/// One tier's answer: the element when unique, else how many matched (or why none could).
enum TierResult {
    One(String),
    Count(usize),
    /// No match, and these names of the role are near the recorded one.
    Near(Vec<String>),
    Error(String),
}

/// A scope's text filter, in the form [`js::FIND`] takes it.
pub(crate) fn text_filter(scope: &Scope) -> Value {
    match (&scope.has_text, &scope.has_text_regex) {
        (Some(text), _) => json!({ "text": text }),
        (None, Some(pattern)) => {
            let (flags, source) = js_flags(pattern);
            json!({ "source": source, "flags": flags })
        }
        (None, None) => Value::Null,
    }
}

/// Leading inline flags (`(?i)`, `(?s)`, `(?m)`, combined as `(?is)`) become JavaScript's
/// flags: the page matches `hasTextRegex`, and JavaScript has no inline flags.
fn js_flags(pattern: &str) -> (String, &str) {
    if let Some(rest) = pattern.strip_prefix("(?")
        && let Some((flags, source)) = rest.split_once(')')
        && !flags.is_empty()
        && flags.chars().all(|flag| matches!(flag, 'i' | 's' | 'm'))
    {
        return (flags.to_owned(), source);
    }
    (String::new(), pattern)
}

/// Where a tier searches: the page's document, or inside a container or a frame's document.
#[derive(Clone, Copy)]
struct Search<'a> {
    /// The container (when the target has a scope) or the frame's document (when it is in a
    /// frame), as a `Runtime.RemoteObjectId`.
    root: Option<&'a str>,
    /// The text filter, when the target is itself a scope's container.
    filter: &'a Value,
}

/// Resolves the target against the page's current document.
pub(crate) async fn locate(page: &Page, target: &Target, group: &str) -> Result<Located, CdpFail> {
    let _timed = crate::timing::span("locate");
    // A target's own text filter is resolved as a scope's container is: every match of its
    // locators is kept when its text holds the filter's.
    locate_filtered(page, target, own_filter(target).as_ref(), None, group).await
}

/// The target's own text filter (`hasText`), as a scope's container has one.
pub(crate) fn own_filter(target: &Target) -> Option<Scope> {
    let text = target.has_text.clone()?;
    Some(Scope { container: Target::default(), has_text: Some(text), has_text_regex: None })
}

/// Resolves `target`; when it is the container of `scope`, keeps only the matches that pass
/// the scope's text filter, in `frame` (its target's frame).
async fn locate_filtered(
    page: &Page,
    target: &Target,
    scope: Option<&Scope>,
    frame: Option<&Frame>,
    group: &str,
) -> Result<Located, CdpFail> {
    let frame = match resolve_frame(page, target, group).await? {
        Ok(Some(own)) => Some(own),
        Ok(None) => frame.cloned(),
        Err(report) => return Ok(Located::None(report)),
    };
    let container = match resolve_scope(page, target, frame.as_ref(), group).await? {
        Ok(container) => container,
        Err(report) => return Ok(Located::None(report)),
    };
    let filter = scope.map_or(Value::Null, text_filter);
    let root = container.as_ref().map(|container| container.object_id.as_str());
    let search = Search { root: root.or(frame.as_ref().map(|frame| frame.document.as_str())), filter: &filter };
    let filter_text = scope.map(Scope::describe_filter).unwrap_or_default();
    let places = places(target);
    let mut report = Report::default();
    if let Some((mut position, mut object_id)) = climb(page, target, &places, search, group, &mut report).await? {
        if position > 0 {
            // The page may change between two tiers' queries: an element that appears just
            // after a sturdier tier looked is found by a weaker one, which reads as drift that
            // is not there. It is in the page now, so the sturdier tiers look once more.
            let sturdier = climb(page, target, &places[..position], search, group, &mut Report::default()).await?;
            if let Some(found) = sturdier {
                (position, object_id) = found;
            }
        }
        let (tier, css_index) = places[position];
        let own_locator = format!("{}{filter_text}", target.describe_locator(tier, css_index));
        let container = container.map(Box::new);
        let frame = frame.map(Box::new);
        return Ok(Located::One(Found { object_id, tier, css_index, own_locator, container, frame }));
    }
    if report.lines.is_empty() {
        report.lines.push("the target has no locator".to_owned());
    }
    if let (Some(scope), Some(container)) = (&target.within, &container) {
        // The element is missing from a container that was found: say which one it was.
        report.lines.insert(0, format!("scope {scope}: found by {}", container.locator_in_frame()));
    }
    if let (Some(recorded), Some(frame)) = (&target.frame, &frame) {
        report.lines.insert(0, format!("frame {recorded}: found by {}", frame.iframe.locator()));
    }
    Ok(Located::None(report))
}

/// The target's places on the ladder, sturdiest first: each tier it has, and each of its CSS
/// selectors in turn.
fn places(target: &Target) -> Vec<(Tier, usize)> {
    let mut places = Vec::new();
    for tier in target.tiers() {
        if tier == Tier::Css {
            places.extend((0..target.css.len()).map(|index| (Tier::Css, index)));
        } else {
            places.push((tier, 0));
        }
    }
    places
}

/// Tries `places` in order, until one matches exactly one element: the place that fired and
/// the element. Every place that did not fire adds its line to `report`.
async fn climb(
    page: &Page,
    target: &Target,
    places: &[(Tier, usize)],
    search: Search<'_>,
    group: &str,
    report: &mut Report,
) -> Result<Option<(usize, String)>, CdpFail> {
    for (position, &(tier, css_index)) in places.iter().enumerate() {
        let result = if tier == Tier::Css {
            find(page, search, "css", &target.css[css_index], group).await?
        } else {
            query_tier(page, target, tier, search, group).await?
        };
        let name = target.describe_locator(tier, css_index);
        match result {
            TierResult::One(object_id) => return Ok(Some((position, object_id))),
            TierResult::Count(count) => {
                report.ambiguous |= count > 1;
                report.lines.push(format!("{name}: {}", matches_phrase(count)));
            }
            TierResult::Near(names) => {
                let names: Vec<String> = names.iter().map(|name| format!("{name:?}")).collect();
                report.lines.push(format!("{name}: 0 matches (the nearest names: {})", names.join(", ")));
            }
            TierResult::Error(error) => report.lines.push(format!("{name}: {error}")),
        }
    }
    Ok(None)
}

/// The one container of the target's scope (none without a scope), in the target's frame, or
/// why there is none.
async fn resolve_scope(
    page: &Page,
    target: &Target,
    frame: Option<&Frame>,
    group: &str,
) -> Result<Result<Option<Found>, Report>, CdpFail> {
    let Some(scope) = &target.within else { return Ok(Ok(None)) };
    match Box::pin(locate_filtered(page, &scope.container, Some(scope), frame, group)).await? {
        Located::One(container) => Ok(Ok(Some(container))),
        Located::None(report) => Ok(Err(Report::of_scope(scope, report))),
    }
}

/// The frame of the target (none without `frame`): its iframe and the document in it, or why
/// there is none.
async fn resolve_frame(page: &Page, target: &Target, group: &str) -> Result<Result<Option<Frame>, Report>, CdpFail> {
    let Some(recorded) = &target.frame else { return Ok(Ok(None)) };
    let failed = |line: String| Ok(Err(Report { lines: vec![format!("frame {recorded}: {line}")], ambiguous: false }));
    let iframe = match Box::pin(locate_filtered(page, recorded, None, None, group)).await? {
        Located::One(iframe) => iframe,
        Located::None(report) => {
            let lines = vec![format!("frame {recorded}: {}", report.lines.join(", "))];
            return Ok(Err(Report { lines, ambiguous: report.ambiguous }));
        }
    };
    if let Page::Firefox(tab) = page {
        return match tab.frame_document(&iframe.object_id).await? {
            crate::firefox::FrameDocument::Document(document) => Ok(Ok(Some(Frame { iframe, document }))),
            crate::firefox::FrameDocument::NotAFrame(name) => {
                failed(format!("found <{name}> by {}, which is not a frame", iframe.locator()))
            }
            crate::firefox::FrameDocument::Empty => {
                failed(format!("found by {}, but it has no document yet", iframe.locator()))
            }
        };
    }
    let node = cdp::call(page, "DOM.describeNode", json!({ "objectId": iframe.object_id })).await?;
    let node = node.get("node").cloned().unwrap_or_default();
    let Some(document) = node.pointer("/contentDocument/backendNodeId").and_then(Value::as_i64) else {
        let name = node.get("localName").and_then(Value::as_str).unwrap_or_default();
        if !matches!(name, "iframe" | "frame") {
            return failed(format!("found <{name}> by {}, which is not a frame", iframe.locator()));
        }
        if node.get("frameId").is_some() {
            // Site isolation put the frame's document in another renderer, which this session
            // does not reach. Saffron's own browser runs frames in one process; a remote one
            // must be started so too.
            return failed(format!(
                "found by {}, but its document is in another process (a cross-site frame): start the \
                 browser with --disable-site-isolation-trials --disable-features=IsolateOrigins,site-per-process",
                iframe.locator()
            ));
        }
        return failed(format!("found by {}, but it has no document yet", iframe.locator()));
    };
    match resolve_node(page, document, group).await? {
        Some(document) => Ok(Ok(Some(Frame { iframe, document }))),
        None => failed(format!("found by {}, but its document could not be reached", iframe.locator())),
    }
}

/// How many elements match the target's sturdiest tier (its first CSS selector for a CSS-only
/// target), inside its scope's container when it has one, with that tier: what `expectCount`
/// counts. A scope that does not resolve comes back as its report.
pub(crate) async fn count(
    page: &Page,
    target: &Target,
    group: &str,
) -> Result<Result<(Option<Tier>, usize), Report>, CdpFail> {
    let frame = match resolve_frame(page, target, group).await? {
        Ok(frame) => frame,
        Err(report) => return Ok(Err(report)),
    };
    let container = match resolve_scope(page, target, frame.as_ref(), group).await? {
        Ok(container) => container,
        Err(report) => return Ok(Err(report)),
    };
    let root = container.as_ref().map(|container| container.object_id.as_str());
    let filter = own_filter(target).as_ref().map_or(Value::Null, text_filter);
    let search = Search { root: root.or(frame.as_ref().map(|frame| frame.document.as_str())), filter: &filter };
    let Some(tier) = target.tiers().first().copied() else { return Ok(Ok((None, 0))) };
    let count = match tier {
        Tier::Role => {
            let ids = role_matches(page, target, search, group).await?.map_err(CdpFail::Protocol)?.ids;
            if filter.is_null() || ids.is_empty() {
                ids.len()
            } else {
                count_of(filter_nodes(page, &ids, &filter, group).await?)?
            }
        }
        Tier::Css => count_of(
            find(page, search, "css", target.css.first().map(String::as_str).unwrap_or_default(), group).await?,
        )?,
        other => count_of(query_tier(page, target, other, search, group).await?)?,
    };
    Ok(Ok((Some(tier), count)))
}

// A page that could not count (its script reported why) answered like a page that is moving on.
fn count_of(result: TierResult) -> Result<usize, CdpFail> {
    match result {
        TierResult::One(_) => Ok(1),
        TierResult::Count(count) => Ok(count),
        TierResult::Near(_) => Ok(0),
        TierResult::Error(error) => Err(CdpFail::Protocol(error)),
    }
}

async fn query_tier(
    page: &Page,
    target: &Target,
    tier: Tier,
    search: Search<'_>,
    group: &str,
) -> Result<TierResult, CdpFail> {
    let value = |field: &Option<String>| field.clone().unwrap_or_default();
    match tier {
        Tier::Role => match role_matches(page, target, search, group).await? {
            Ok(RoleMatches { ids, .. }) if search.filter.is_null() && ids.len() == 1 => {
                match resolve_ax(page, &ids[0], group).await? {
                    Some(object_id) => Ok(TierResult::One(object_id)),
                    None => Ok(TierResult::Error("the accessibility node has no element".to_owned())),
                }
            }
            Ok(RoleMatches { ids, nearest }) if ids.is_empty() && !nearest.is_empty() => Ok(TierResult::Near(nearest)),
            Ok(RoleMatches { ids, .. }) if search.filter.is_null() || ids.is_empty() => {
                Ok(TierResult::Count(ids.len()))
            }
            Ok(RoleMatches { ids, .. }) => filter_nodes(page, &ids, search.filter, group).await,
            Err(error) => Ok(TierResult::Error(error)),
        },
        Tier::Label => find(page, search, "label", &value(&target.label), group).await,
        Tier::Placeholder => find(page, search, "placeholder", &value(&target.placeholder), group).await,
        Tier::TestId => find(page, search, "testId", &value(&target.test_id), group).await,
        Tier::Text => find(page, search, "text", &value(&target.text), group).await,
        Tier::Css => find(page, search, "css", target.css.first().map(String::as_str).unwrap_or_default(), group).await,
    }
}

/// An element the role tier found: a Chromium accessibility node names its DOM node by a
/// backend id, resolved to an object only when needed; Firefox gives element handles.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AxNode {
    Backend(i64),
    Element(String),
}

async fn resolve_ax(page: &Page, node: &AxNode, group: &str) -> Result<Option<String>, CdpFail> {
    match node {
        AxNode::Backend(backend_id) => resolve_node(page, *backend_id, group).await,
        AxNode::Element(handle) => Ok(Some(handle.clone())),
    }
}

/// The object of the node `backend_id`, in its own realm (a frame's, for a node in a frame).
pub(crate) async fn resolve_node(page: &Page, backend_id: i64, group: &str) -> Result<Option<String>, CdpFail> {
    let resolved =
        cdp::call(page, "DOM.resolveNode", json!({ "backendNodeId": backend_id, "objectGroup": group })).await?;
    Ok(resolved.pointer("/object/objectId").and_then(Value::as_str).map(str::to_owned))
}

/// How long `Accessibility.queryAXTree` may take before Saffron looks at why.
const AX_QUERY_PATIENCE: std::time::Duration = std::time::Duration::from_millis(250);

/// `Accessibility.queryAXTree` on the subtree of `root`.
///
/// Chromium answers it once the document has brought its accessibility tree up to date. A
/// document that is no longer in a frame (the frame navigated between finding the document
/// and querying it) never does, and the query never answers: seen on a legacy frameset, where
/// a role-tier action in a frame that had just navigated waited out its whole timeout ("the
/// page did not answer"), about one replay in four. So a slow answer is looked into: when the
/// document is gone, the attempt is retried with the frame's new document; when it is still
/// there, it is asked for an animation frame (which runs that update) and the answer awaited.
async fn query_ax_tree(page: &Page, root: &str, params: Value) -> Result<Value, CdpFail> {
    let query = cdp::call(page, "Accessibility.queryAXTree", params);
    tokio::pin!(query);
    if let Ok(answer) = tokio::time::timeout(AX_QUERY_PATIENCE, &mut query).await {
        return answer;
    }
    let _timed = crate::timing::span("accessibility query: slow");
    let alive =
        "function () { const d = this.ownerDocument || this; return !!d.defaultView && this.isConnected !== false; }";
    match tokio::time::timeout(AX_QUERY_PATIENCE, cdp::call_value(page, root, alive, &[])).await {
        Ok(Ok(Value::Bool(true))) => {}
        Ok(Err(CdpFail::Dead(message))) => return Err(CdpFail::Dead(message)),
        _ => return Err(CdpFail::Protocol("the frame's document was replaced while it was searched".to_owned())),
    }
    let frame = "function () { const d = this.ownerDocument || this; \
                 return new Promise((done) => d.defaultView.requestAnimationFrame(() => done(true))); }";
    let _ = tokio::time::timeout(AX_QUERY_PATIENCE * 4, cdp::call_value(page, root, frame, &[])).await;
    query.await
}

/// The role matches that pass a scope's text filter: each node is resolved to its element
/// (all at once), then one call of [`js::FILTER`] keeps those whose text matches.
async fn filter_nodes(page: &Page, ids: &[AxNode], filter: &Value, group: &str) -> Result<TierResult, CdpFail> {
    let resolved = futures::future::join_all(ids.iter().map(|id| resolve_ax(page, id, group))).await;
    let mut elements = Vec::with_capacity(ids.len());
    for object_id in resolved {
        match object_id? {
            Some(object_id) => elements.push(object_id),
            None => return Ok(TierResult::Error("an accessibility node has no element".to_owned())),
        }
    }
    let Some(first) = elements.first().cloned() else { return Ok(TierResult::Count(0)) };
    let mut args = vec![Argument::Value(filter.clone())];
    args.extend(elements.into_iter().map(Argument::Object));
    let remote = cdp::call_with(page, &first, js::FILTER, &args, false).await?;
    Ok(tier_result(remote))
}

/// What the role tier found inside the search's container (when it has one): the elements,
/// and when there are none, the names of that role nearest the recorded one.
struct RoleMatches {
    ids: Vec<AxNode>,
    nearest: Vec<String>,
}

/// How many names of the role a failure offers in place of the recorded one, and how close
/// (normalized Levenshtein) a name must be to be offered.
const NEAREST_NAMES: usize = 3;
const NEAREST_SIMILARITY: f64 = 0.5;

/// The elements with the target's role and name, or why none can be found.
///
/// Chromium matches `accessibleName` exactly. When that finds nothing, the role's elements are
/// compared by [`crate::name_key`], as a person reads the names: a path with a line break
/// allowed in it (`GET /pets /{id}` to Chromium) or a zero-width space (`get\u{200b}/pets`)
/// still has the name the recording holds. Still nothing: the nearest names are kept for the
/// failure message, since a name written by hand with a typo, or one that changed, is best
/// fixed by seeing what the page has.
async fn role_matches(
    page: &Page,
    target: &Target,
    search: Search<'_>,
    group: &str,
) -> Result<Result<RoleMatches, String>, CdpFail> {
    let none = RoleMatches { ids: Vec::new(), nearest: Vec::new() };
    let Some(role) = target.role.as_deref() else { return Ok(Ok(none)) };
    let pattern = match target.name_regex.as_deref().map(Regex::new) {
        Some(Ok(pattern)) => Some(pattern),
        Some(Err(error)) => return Ok(Err(format!("invalid nameRegex: {error}"))),
        None => None,
    };
    if let Page::Firefox(tab) = page {
        return firefox_role_matches(page, tab, target, role, pattern.as_ref(), search).await;
    }
    let (root_id, root_backend_id) = match search.root {
        Some(root) => {
            // The query covers the container's subtree, the container included; a scope means
            // what is inside it.
            let node = cdp::call(page, "DOM.describeNode", json!({ "objectId": root })).await?;
            (root.to_owned(), node.pointer("/node/backendNodeId").and_then(Value::as_i64))
        }
        None => {
            let document = cdp::evaluate(page, "document", group, false).await?;
            let Some(document_id) = document.object_id else {
                return Ok(Err("the page has no document".to_owned()));
            };
            (document_id, None)
        }
    };
    let query = async |name: Option<&str>| -> Result<Vec<(i64, String)>, CdpFail> {
        let mut params = json!({ "objectId": root_id, "role": role });
        if let Some(name) = name {
            params["accessibleName"] = json!(name);
        }
        let answer = query_ax_tree(page, &root_id, params).await?;
        let nodes = answer.get("nodes").and_then(Value::as_array).cloned().unwrap_or_default();
        Ok(elements(&nodes, root_backend_id))
    };
    let ids_where = |found: &[(i64, String)], wanted: &dyn Fn(&str) -> bool| -> Vec<AxNode> {
        found.iter().filter(|(_, name)| wanted(name)).map(|(id, _)| AxNode::Backend(*id)).collect()
    };
    let found = query(target.name.as_deref()).await?;
    let ids = ids_where(&found, &|name| pattern.as_ref().is_none_or(|pattern| pattern.is_match(name)));
    let Some(recorded) = target.name.as_deref().filter(|_| ids.is_empty()) else {
        return Ok(Ok(RoleMatches { ids, nearest: Vec::new() }));
    };
    let every = query(None).await?;
    let wanted = crate::name_key(recorded);
    let ids = ids_where(&every, &|name| crate::name_key(name) == wanted);
    let nearest =
        if ids.is_empty() { nearest_names(&wanted, every.into_iter().map(|(_, name)| name)) } else { Vec::new() };
    Ok(Ok(RoleMatches { ids, nearest }))
}

/// [`role_matches`] in Firefox: its accessibility tree finds the elements with the role and
/// the exact name. Names compared as a person reads them, matched by pattern, or offered as the
/// nearest, are the page's names as [`js::NAME_GUESS`] reads them: Firefox does not tell an
/// element's name.
async fn firefox_role_matches(
    page: &Page,
    tab: &crate::firefox::Tab,
    target: &Target,
    role: &str,
    pattern: Option<&Regex>,
    search: Search<'_>,
) -> Result<Result<RoleMatches, String>, CdpFail> {
    let mut ids = tab.locate_role(search.root, role, target.name.as_deref()).await?;
    if let Some(pattern) = pattern {
        let names = guessed_names(page, &ids).await?;
        ids = ids.into_iter().zip(names).filter(|(_, name)| pattern.is_match(name)).map(|(id, _)| id).collect();
    }
    let Some(recorded) = target.name.as_deref().filter(|_| ids.is_empty()) else {
        return Ok(Ok(RoleMatches { ids: ids.into_iter().map(AxNode::Element).collect(), nearest: Vec::new() }));
    };
    let every = tab.locate_role(search.root, role, None).await?;
    let names = guessed_names(page, &every).await?;
    let wanted = crate::name_key(recorded);
    let ids: Vec<AxNode> = every
        .iter()
        .zip(&names)
        .filter(|(_, name)| crate::name_key(name) == wanted)
        .map(|(id, _)| AxNode::Element(id.clone()))
        .collect();
    let nearest = if ids.is_empty() { nearest_names(&wanted, names.into_iter()) } else { Vec::new() };
    Ok(Ok(RoleMatches { ids, nearest }))
}

/// The accessible names of `elements` (handles, in one frame) as [`js::NAME_GUESS`] reads
/// them, in order.
pub(crate) async fn guessed_names(page: &Page, elements: &[String]) -> Result<Vec<String>, CdpFail> {
    let Some(first) = elements.first() else { return Ok(Vec::new()) };
    let args: Vec<Argument> = elements.iter().cloned().map(Argument::Object).collect();
    let names = cdp::call_with(page, first, js::NAME_GUESS, &args, true).await?.value.unwrap_or_default();
    Ok(names.as_array().into_iter().flatten().map(|name| name.as_str().unwrap_or_default().to_owned()).collect())
}

/// The elements among an accessibility query's nodes, with their names: no ignored nodes, no
/// text runs (they carry their parent's name and cannot be acted on), not the container
/// itself, each element once.
fn elements(nodes: &[Value], root_backend_id: Option<i64>) -> Vec<(i64, String)> {
    let mut seen = HashSet::new();
    let mut found = Vec::new();
    for node in nodes {
        if node.get("ignored").and_then(Value::as_bool).unwrap_or(false) {
            continue;
        }
        let node_role = node.pointer("/role/value").and_then(Value::as_str).unwrap_or_default();
        if matches!(node_role, "StaticText" | "InlineTextBox") {
            continue;
        }
        if let Some(id) = node.get("backendDOMNodeId").and_then(Value::as_i64)
            && Some(id) != root_backend_id
            && seen.insert(id)
        {
            let name = node.pointer("/name/value").and_then(Value::as_str).unwrap_or_default();
            found.push((id, name.to_owned()));
        }
    }
    found
}

/// The names closest to `wanted` (a [`crate::name_key`]), closest first, each once.
fn nearest_names(wanted: &str, names: impl Iterator<Item = String>) -> Vec<String> {
    let mut scored: Vec<(f64, String)> = names
        .filter(|name| !name.is_empty())
        .map(|name| (strsim::normalized_levenshtein(wanted, &crate::name_key(&name)), name))
        .filter(|(similarity, _)| *similarity >= NEAREST_SIMILARITY)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut nearest: Vec<String> = Vec::new();
    for (_, name) in scored {
        if nearest.len() == NEAREST_NAMES {
            break;
        }
        if !nearest.contains(&name) {
            nearest.push(name);
        }
    }
    nearest
}

/// Runs [`js::FIND`] for one non-role tier, in the document or inside the search's container.
async fn find(page: &Page, search: Search<'_>, tier: &str, value: &str, group: &str) -> Result<TierResult, CdpFail> {
    let remote = match search.root {
        Some(root) => {
            let args = [json!(tier), json!(value), search.filter.clone()];
            cdp::call_on(page, root, js::FIND, &args, false).await?
        }
        None => {
            let expression = format!("({})({}, {}, {})", js::FIND, json!(tier), json!(value), search.filter);
            cdp::evaluate(page, &expression, group, false).await?
        }
    };
    Ok(tier_result(remote))
}

fn tier_result(remote: cdp::Remote) -> TierResult {
    if let Some(object_id) = remote.node() {
        return TierResult::One(object_id.to_owned());
    }
    match remote.value {
        Some(Value::Number(count)) => TierResult::Count(count.as_u64().unwrap_or(0) as usize),
        Some(Value::String(error)) => TierResult::Error(error),
        other => TierResult::Error(format!("unexpected answer {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_inline_flags_become_javascript_flags() {
        assert_eq!(js_flags("(?i)order 1002"), ("i".to_owned(), "order 1002"));
        assert_eq!(js_flags("(?is)a.b"), ("is".to_owned(), "a.b"));
        assert_eq!(js_flags("^Order \\d+$"), (String::new(), "^Order \\d+$"));
        // A group with other flags (or a non-capturing group) is left for the page to judge.
        assert_eq!(js_flags("(?x)a"), (String::new(), "(?x)a"));
        assert_eq!(js_flags("(?:a)"), (String::new(), "(?:a)"));
    }
}
