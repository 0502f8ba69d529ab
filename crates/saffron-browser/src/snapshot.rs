//! The page as the recording agent reads it: Chromium's accessibility tree, trimmed to the
//! interactive elements and the text around them, one element per line, each element with a
//! ref the agent acts through.
//!
//! Why the accessibility tree rather than a DOM walk: the role and name on each line are the
//! ones the role tier of [`crate::locate`] queries (`Accessibility.queryAXTree`), computed once
//! by the browser, so what the agent reads is what replay will find; hidden elements are left
//! out by the same rule; and no page script can see or patch the walk.
//!
//! Refs name DOM nodes, not snapshot positions: a node keeps its ref for the life of the
//! context, and a ref whose node is gone is reported as such rather than reused.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::page::Page;
use serde_json::{Value, json};

use crate::cdp::{self, CdpFail};
use crate::context::Context;
use crate::error::BrowserError;
use crate::js;
use crate::url::relativize_url;

/// The active tab as the agent reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSnapshot {
    /// The active tab's URL.
    pub url: String,
    /// The active tab's title.
    pub title: String,
    /// Every tab of the context (title and URL), in opening order.
    pub tabs: Vec<TabSummary>,
    /// Index in `tabs` of the active tab.
    pub active_tab: usize,
    /// The page as the agent reads it: a header (URL, title, tabs when there are several), then
    /// one element per line, indented by nesting, each element with `[ref=eN]`.
    pub text: String,
}

/// One tab of the context.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TabSummary {
    /// The document's title.
    pub title: String,
    /// The tab's URL.
    pub url: String,
}

/// Names longer than this are cut (at a character boundary, with `…`).
const MAX_NAME_CHARS: usize = 100;
/// Text runs longer than this are cut the same way.
const MAX_TEXT_CHARS: usize = 200;
/// What an iframe's line says when its document could not be read (a remote browser that keeps
/// a cross-site frame in a process of its own, or a frame with no document yet).
const FRAME_NOT_READ: &str = "(its content could not be read)";
/// A value shown for a password field, whatever it holds.
const MASKED: &str = "••••";

/// Where refs come from: one per DOM node of a document, for the context's lifetime.
#[derive(Debug, Default)]
pub(crate) struct RefBook {
    next: u64,
    by_node: HashMap<NodeKey, u64>,
    by_ref: HashMap<u64, NodeKey>,
}

/// A DOM node across snapshots: backend node ids are only unique within one renderer process,
/// and a cross-site navigation may start another, so the document's loader id is part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct NodeKey {
    pub target_id: String,
    pub loader_id: String,
    pub backend_id: i64,
    /// The frame whose document holds the node, when it is not the main frame's.
    pub frame_id: Option<String>,
}

impl RefBook {
    fn reference(&mut self, key: NodeKey) -> u64 {
        if let Some(&number) = self.by_node.get(&key) {
            return number;
        }
        self.next += 1;
        self.by_node.insert(key.clone(), self.next);
        self.by_ref.insert(self.next, key);
        self.next
    }

    /// The node behind `reference` (`e12`), if that ref was ever given out.
    pub(crate) fn node(&self, reference: &str) -> Option<&NodeKey> {
        let number = reference.trim().strip_prefix('e')?.parse::<u64>().ok()?;
        self.by_ref.get(&number)
    }
}

fn protocol(error: CdpFail) -> BrowserError {
    match error {
        CdpFail::Dead(message) => BrowserError::Closed(message),
        other => BrowserError::Protocol(other.to_string()),
    }
}

/// How long a snapshot waits for the page to settle before it reads the page as it is.
const SETTLE_LIMIT: Duration = Duration::from_millis(600);

/// Waits until every frame of the page has loaded and stopped changing (see [`js::SETTLE`]), at
/// most [`SETTLE_LIMIT`]: the agent reads the page an action led to, not the one it left (a
/// filter that re-renders its list, a frame whose form was just posted). A frame whose document
/// is replaced while it waits is waited for again, in its new document.
async fn settle(page: &Page) {
    let _timed = crate::timing::span("settle");
    let deadline = tokio::time::Instant::now() + SETTLE_LIMIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return;
        }
        let Ok(worlds) = crate::context::isolated_worlds(page).await else { return };
        let limit = json!(left.as_millis() as u64);
        let waits =
            worlds.iter().map(|world| cdp::call_in_world(page, world, js::SETTLE, std::slice::from_ref(&limit)));
        match tokio::time::timeout_at(deadline, futures::future::join_all(waits)).await {
            Ok(answers) if answers.iter().all(Result::is_ok) => return,
            Ok(_) => continue,
            Err(_) => return,
        }
    }
}

impl Context {
    /// A snapshot of the active tab. Refs stay valid until the element leaves the DOM; the same
    /// DOM node keeps the same ref across snapshots of one context.
    pub async fn snapshot(&mut self) -> Result<PageSnapshot, BrowserError> {
        self.snapshot_with(None).await
    }

    /// [`Context::snapshot`] with every secret `masker` knows masked in what the page gave
    /// (names, texts, values, titles, URLs) before it is cut to length or joined, so that no
    /// cut shows the first characters of a secret and no join hides one from the masker.
    pub async fn snapshot_masked(&mut self, masker: &saffron_recording::Masker) -> Result<PageSnapshot, BrowserError> {
        let mut snapshot = self.snapshot_with(Some(masker)).await?;
        // Pieces of one value in separate elements meet in the text with a space between them.
        snapshot.text = masker.mask(&snapshot.text);
        Ok(snapshot)
    }

    async fn snapshot_with(
        &mut self,
        masker: Option<&saffron_recording::Masker>,
    ) -> Result<PageSnapshot, BrowserError> {
        let _timed = crate::timing::lone_span("snapshot");
        let page = self.active_page()?;
        // A background tab builds no accessibility tree until it renders.
        self.front(&page).await.map_err(protocol)?;
        settle(&page).await;
        let mut document = self.read_document(&page).await?;
        if let Some(masker) = masker.filter(|masker| !masker.is_empty()) {
            document.mask(masker);
        }
        let Document { loader_id, nodes, special, frames, tabs, active_tab } = document;
        let active = tabs.get(active_tab).cloned().unwrap_or_default();
        let target_id = self.active.clone();
        let refs = &mut self.refs;
        let frame_of: HashMap<i64, &str> = frames
            .values()
            .flat_map(|frame| {
                frame.nodes.iter().filter_map(|raw| Some((AxNode { raw }.backend_id()?, frame.id.as_str())))
            })
            .collect();
        let mut give_ref = |backend_id: i64| {
            refs.reference(NodeKey {
                target_id: target_id.clone(),
                loader_id: loader_id.clone(),
                backend_id,
                frame_id: frame_of.get(&backend_id).map(|id| (*id).to_owned()),
            })
        };
        let body = render_tree(&nodes, &special, &frames, &mut give_ref);
        let mut text = String::new();
        let _ = writeln!(text, "url: {}", relativize_url(&self.base_url, &active.url));
        let _ = writeln!(text, "title: {}", active.title);
        if tabs.len() > 1 {
            let listed: Vec<String> = tabs
                .iter()
                .enumerate()
                .map(|(index, tab)| {
                    let marker = if index == active_tab { " (active)" } else { "" };
                    format!("{index}: {} {}{marker}", tab.title, relativize_url(&self.base_url, &tab.url))
                })
                .collect();
            let _ = writeln!(text, "tabs: {}", listed.join("; "));
        }
        text.push_str(&body);
        Ok(PageSnapshot { url: active.url, title: active.title, tabs, active_tab, text })
    }

    /// The open tabs in opening order with their titles and URLs, and which one is active.
    async fn tab_summaries(&self) -> Result<(Vec<TabSummary>, usize), CdpFail> {
        let answer = self.browser.call("Target.getTargets", json!({})).await?;
        let infos = answer.get("targetInfos").and_then(Value::as_array).cloned().unwrap_or_default();
        let open: Vec<String> = self
            .shared
            .read(|state| state.tabs.iter().filter(|tab| !tab.closed).map(|tab| tab.target_id.clone()).collect());
        let mut tabs = Vec::with_capacity(open.len());
        let mut active_tab = 0;
        for target_id in open {
            let info = infos.iter().find(|info| info.get("targetId").and_then(Value::as_str) == Some(&target_id));
            let Some(info) = info else { continue };
            if target_id == self.active {
                active_tab = tabs.len();
            }
            let field = |name: &str| info.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
            tabs.push(TabSummary { title: field("title"), url: field("url") });
        }
        Ok((tabs, active_tab))
    }
}

/// A field the accessibility tree does not show as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SpecialField {
    /// A password field: its value is never shown, only whether it has one.
    Password { filled: bool },
    /// A field drawn by the browser's own widget (a date, a colour): its label and value.
    Native { label: String, value: String, disabled: bool },
    /// A file input one sees (as a button): marked, so the agent knows it takes files.
    File { multiple: bool },
    /// The label of a hidden file input, which a person clicks to choose files: the only
    /// element of a styled picker there is to act on, and plain text in the accessibility tree.
    FilePicker { label: String, multiple: bool, disabled: bool },
    /// An element the page lets one drag (`draggable="true"`): marked, and given a ref whatever
    /// its role (often a list item or a plain box, which would have none), for `browser_drag`.
    Draggable,
    /// A field with no name of its own that the table cell beside it names (a legacy form):
    /// the snapshot shows that text as its name, marked as inferred.
    Inferred { label: String },
}

/// The page's special fields by backend node id. Password fields are found in the DOM rather
/// than trusted to Chromium's masking of their value. Native-widget fields appear in the
/// accessibility tree only as their parts (a date's day, month and year spin buttons, inside
/// the browser's shadow tree, which no locator reaches), so the snapshot shows the field itself
/// in their place.
async fn special_fields(page: &Page, document: Option<&str>) -> Result<HashMap<i64, SpecialField>, CdpFail> {
    const GROUP: &str = "saffron-snapshot";
    let list = match document {
        // Run in the frame's own realm, where `document` is the frame's.
        Some(document) => {
            let function = format!("function () {{ return ({})(); }}", crate::js::SPECIAL_FIELDS);
            cdp::call_on(page, document, &function, &[], false).await?
        }
        None => cdp::evaluate(page, &format!("({})()", crate::js::SPECIAL_FIELDS), GROUP, false).await?,
    };
    let Some(list_id) = list.object_id else { return Ok(HashMap::new()) };
    let facts = cdp::call_value(page, &list_id, crate::js::SPECIAL_FIELD_FACTS, &[]).await?;
    let text = |item: &Value, name: &str| item.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
    let flag = |item: &Value, name: &str| item.get(name).and_then(Value::as_bool).unwrap_or(false);
    let facts: Vec<SpecialField> = facts
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            if flag(item, "password") {
                SpecialField::Password { filled: flag(item, "filled") }
            } else if flag(item, "draggable") {
                SpecialField::Draggable
            } else if flag(item, "file") {
                SpecialField::File { multiple: flag(item, "multiple") }
            } else if flag(item, "inferred") {
                SpecialField::Inferred { label: text(item, "label") }
            } else if flag(item, "picker") {
                SpecialField::FilePicker {
                    label: text(item, "label"),
                    multiple: flag(item, "multiple"),
                    disabled: flag(item, "disabled"),
                }
            } else {
                SpecialField::Native {
                    label: text(item, "label"),
                    value: text(item, "value"),
                    disabled: flag(item, "disabled"),
                }
            }
        })
        .collect();
    let mut fields = HashMap::new();
    if !facts.is_empty() {
        let properties =
            cdp::call(page, "Runtime.getProperties", json!({ "objectId": list_id, "ownProperties": true })).await?;
        let entries = properties.get("result").and_then(Value::as_array).cloned().unwrap_or_default();
        for entry in entries {
            let index = entry.get("name").and_then(Value::as_str).and_then(|name| name.parse::<usize>().ok());
            let object_id = entry.pointer("/value/objectId").and_then(Value::as_str);
            let (Some(index), Some(object_id)) = (index, object_id) else { continue };
            let node = cdp::call(page, "DOM.describeNode", json!({ "objectId": object_id })).await?;
            if let (Some(backend_id), Some(field)) =
                (node.pointer("/node/backendNodeId").and_then(Value::as_i64), facts.get(index))
            {
                fields.insert(backend_id, field.clone());
            }
        }
    }
    let _ = cdp::call(page, "Runtime.releaseObjectGroup", json!({ "objectGroup": GROUP })).await;
    Ok(fields)
}

/// How long a snapshot keeps trying while the page moves on under it (a navigation destroys
/// the document the calls were reading).
const SETTLE: Duration = Duration::from_secs(3);
/// Pauses between those attempts.
const SETTLE_PAUSES_MS: [u64; 4] = [20, 50, 100, 200];

/// What a snapshot is made of, all read from one document (and the frames in it).
struct Document {
    loader_id: String,
    nodes: Vec<Value>,
    /// Of the page and of every frame read.
    special: HashMap<i64, SpecialField>,
    /// The frames read, by their iframe element's backend node id.
    frames: HashMap<i64, FrameTree>,
    tabs: Vec<TabSummary>,
    active_tab: usize,
}

impl Document {
    /// Every text the page gave, masked.
    fn mask(&mut self, masker: &saffron_recording::Masker) {
        let trees = self.nodes.iter_mut().chain(self.frames.values_mut().flat_map(|frame| frame.nodes.iter_mut()));
        for node in trees {
            mask_strings(node, masker);
        }
        for field in self.special.values_mut() {
            match field {
                SpecialField::Native { label, value, .. } => {
                    *label = masker.mask(label);
                    *value = masker.mask(value);
                }
                SpecialField::FilePicker { label, .. } | SpecialField::Inferred { label } => {
                    *label = masker.mask(label)
                }
                SpecialField::Password { .. } | SpecialField::File { .. } | SpecialField::Draggable => {}
            }
        }
        for tab in &mut self.tabs {
            tab.title = masker.mask(&tab.title);
            tab.url = masker.mask(&tab.url);
        }
    }
}

fn mask_strings(value: &mut Value, masker: &saffron_recording::Masker) {
    match value {
        Value::String(text) => *text = masker.mask(text),
        Value::Array(items) => items.iter_mut().for_each(|item| mask_strings(item, masker)),
        Value::Object(map) => map.values_mut().for_each(|item| mask_strings(item, masker)),
        _ => {}
    }
}

/// How long a frame's accessibility tree may take to come.
const FRAME_TREE_LIMIT: Duration = Duration::from_secs(3);

/// A frame's accessibility tree: `Accessibility.getFullAXTree` answers for one frame.
pub(crate) struct FrameTree {
    id: String,
    nodes: Vec<Value>,
}

impl Context {
    /// The document's accessibility tree, special fields, URL and title, all read from one
    /// document: read again when a navigation replaced it meanwhile (the main frame's loader id
    /// changed), or when a call failed because it did. A document still being parsed is waited
    /// for (up to the same bound): right after a click that navigates, the new page may have
    /// its title and not yet its body, and the agent would read an empty page.
    async fn read_document(&self, page: &Page) -> Result<Document, BrowserError> {
        let deadline = Instant::now() + SETTLE;
        let mut attempt = 0;
        loop {
            let outcome = async {
                let before = main_loader_id(page).await?;
                let parsing =
                    cdp::evaluate(page, "document.readyState === 'loading'", "saffron-snapshot", true).await?;
                if parsing.value == Some(Value::Bool(true)) && Instant::now() < deadline {
                    return Ok(None);
                }
                let tree = cdp::call(page, "Accessibility.getFullAXTree", json!({})).await?;
                let mut special = special_fields(page, None).await?;
                let frames = read_frames(page, &mut special).await?;
                let (mut tabs, active_tab) = self.tab_summaries().await?;
                let (after, url) = main_frame(page).await?;
                // The browser's list of targets may lag behind the renderer by a moment.
                if let Some(active) = tabs.get_mut(active_tab) {
                    active.url = url;
                }
                let nodes = tree.get("nodes").and_then(Value::as_array).cloned().unwrap_or_default();
                Ok::<_, CdpFail>((before == after).then_some(Document {
                    loader_id: after,
                    nodes,
                    special,
                    frames,
                    tabs,
                    active_tab,
                }))
            }
            .await;
            let retry_why = match outcome {
                Ok(Some(document)) => return Ok(document),
                Ok(None) => CdpFail::Protocol("the page navigated or was still loading while it was read".to_owned()),
                Err(CdpFail::Dead(message)) => return Err(BrowserError::Closed(message)),
                Err(other) => other,
            };
            if Instant::now() >= deadline {
                return Err(protocol(retry_why));
            }
            let pause = SETTLE_PAUSES_MS[attempt.min(SETTLE_PAUSES_MS.len() - 1)];
            attempt += 1;
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
    }
}

/// The accessibility tree of every frame below the main one that this session can read, by
/// its iframe element, their special fields added to `special`. A frame that cannot be read
/// (kept in another process by a remote browser's site isolation, or without a document yet)
/// is left out: its line says so.
async fn read_frames(
    page: &Page,
    special: &mut HashMap<i64, SpecialField>,
) -> Result<HashMap<i64, FrameTree>, CdpFail> {
    // The main frame's tree is read on its own.
    let ids: Vec<String> = crate::frame_tree::frames(page).await?.into_iter().skip(1).map(|frame| frame.id).collect();
    let mut frames = HashMap::new();
    for id in ids {
        let Ok(owner) = cdp::call(page, "DOM.getFrameOwner", json!({ "frameId": id })).await else { continue };
        let Some(owner) = owner.get("backendNodeId").and_then(Value::as_i64) else { continue };
        // A frame that navigates meanwhile may leave the question unanswered: left out.
        let question = json!({ "frameId": id });
        let Ok(tree) = cdp::call_within(page, "Accessibility.getFullAXTree", question, FRAME_TREE_LIMIT).await else {
            continue;
        };
        let nodes = tree.get("nodes").and_then(Value::as_array).cloned().unwrap_or_default();
        if let Some(document) = frame_document(page, owner, "saffron-snapshot").await? {
            special.extend(special_fields(page, Some(&document)).await?);
        }
        frames.insert(owner, FrameTree { id, nodes });
    }
    Ok(frames)
}

/// The document in the iframe element `owner` (a backend node id), as an object of the
/// frame's realm, when this session reaches it.
async fn frame_document(page: &Page, owner: i64, group: &str) -> Result<Option<String>, CdpFail> {
    let node = cdp::call(page, "DOM.describeNode", json!({ "backendNodeId": owner })).await?;
    let Some(document) = node.pointer("/node/contentDocument/backendNodeId").and_then(Value::as_i64) else {
        return Ok(None);
    };
    crate::locate::resolve_node(page, document, group).await
}

/// The loader id of the page's main frame: changes with every new document.
pub(crate) async fn main_loader_id(page: &Page) -> Result<String, CdpFail> {
    Ok(main_frame(page).await?.0)
}

/// The main frame's loader id and URL (fragment included), as its renderer knows them.
async fn main_frame(page: &Page) -> Result<(String, String), CdpFail> {
    let tree = cdp::call(page, "Page.getFrameTree", json!({})).await?;
    let field = |name: &str| {
        tree.pointer(&format!("/frameTree/frame/{name}")).and_then(Value::as_str).unwrap_or_default().to_owned()
    };
    Ok((field("loaderId"), format!("{}{}", field("url"), field("urlFragment"))))
}

/// One accessibility node, as read from `Accessibility.getFullAXTree`.
#[derive(Clone, Copy)]
struct AxNode<'a> {
    raw: &'a Value,
}

impl<'a> AxNode<'a> {
    fn role(&self) -> &'a str {
        self.raw.pointer("/role/value").and_then(Value::as_str).unwrap_or_default()
    }

    fn name(&self) -> String {
        crate::normalize_whitespace(self.raw.pointer("/name/value").and_then(Value::as_str).unwrap_or_default())
    }

    fn value(&self) -> Option<String> {
        let value = self.raw.pointer("/value/value")?;
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Null => return None,
            other => other.to_string(),
        };
        Some(crate::normalize_whitespace(&text))
    }

    fn ignored(&self) -> bool {
        self.raw.get("ignored").and_then(Value::as_bool).unwrap_or(false)
    }

    fn backend_id(&self) -> Option<i64> {
        self.raw.get("backendDOMNodeId").and_then(Value::as_i64)
    }

    fn children(&self) -> impl Iterator<Item = &'a str> {
        self.raw.get("childIds").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
    }

    /// A property's value (`checked`, `level`, `disabled`, ...), as JSON.
    fn property(&self, name: &str) -> Option<&'a Value> {
        self.raw
            .get("properties")
            .and_then(Value::as_array)?
            .iter()
            .find(|property| property.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|property| property.pointer("/value/value"))
    }

    fn flag(&self, name: &str) -> bool {
        match self.property(name) {
            Some(Value::Bool(flag)) => *flag,
            Some(Value::String(text)) => text == "true",
            _ => false,
        }
    }
}

/// What a node contributes to its parent's rendering.
#[derive(Debug)]
enum Piece {
    /// Loose text (a text run, or a wrapper holding only text).
    Text(String),
    /// An element line with the lines under it.
    Line(Block),
}

#[derive(Debug, Default)]
struct Block {
    /// `role "name" [state]`: what comes before the ref.
    head: String,
    /// The element's DOM node, for its ref.
    ref_node: Option<i64>,
    /// What follows the ref: a field's value, a select's options.
    suffix: String,
    /// The accessible name, to drop loose text that only repeats it (a label beside its field).
    name: String,
    /// The element's own text, after a colon.
    text: Option<String>,
    /// A row's cells, shown on its line with ` | ` between them (elements inline).
    cells: Vec<Vec<Piece>>,
    /// The element is (or holds) something to act on.
    interactive: bool,
    /// The element is an option (of a select shown on its own line).
    option: bool,
    children: Vec<Piece>,
}

impl Block {
    /// The block as one run of text (for inline elements inside a paragraph or a cell).
    fn flatten(self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(text) = self.text {
            parts.push(text);
        } else if !self.name.is_empty() {
            parts.push(self.name);
        }
        for child in self.children {
            match child {
                Piece::Text(text) => parts.push(text),
                Piece::Line(block) => parts.push(block.flatten()),
            }
        }
        parts.retain(|part| !part.is_empty());
        parts.join(" ")
    }
}

/// How a role is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Something to act on: a line and a ref, its own text is its name.
    Interactive,
    /// Text worth a line and a ref (for checks): headings, paragraphs, rows, status lines.
    Textual,
    /// A row of a table or grid: its cells on one line, ` | ` between them.
    Row,
    /// A container that gives its lines their context: kept when named (a dialog always).
    Container,
    /// Anything else: its children take its place.
    Wrapper,
}

/// Roles the agent acts on.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "option",
    "checkbox",
    "radio",
    "switch",
    "slider",
    "spinbutton",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "treeitem",
    "DisclosureTriangle",
    "date",
    "DateTime",
    "InputTime",
    "ColorWell",
];

/// Roles whose text is worth a line of its own.
const TEXTUAL: &[&str] = &[
    "heading",
    "paragraph",
    "listitem",
    "status",
    "alert",
    "log",
    "marquee",
    "timer",
    "tooltip",
    "note",
    "definition",
    "term",
    "caption",
    "blockquote",
    "img",
    "image",
    "figure",
    "meter",
    "progressbar",
];

/// Containers kept when named.
pub(crate) const CONTAINERS: &[&str] = &[
    "dialog",
    "alertdialog",
    "navigation",
    "form",
    "search",
    "region",
    "complementary",
    "list",
    "table",
    "grid",
    "tablist",
    "tabpanel",
    "menu",
    "menubar",
    "toolbar",
    "tree",
    "radiogroup",
    "group",
    "article",
];

/// Interactive roles shown under another name (Chromium's own roles for native widgets).
fn shown_role(role: &str) -> &str {
    match role {
        "DisclosureTriangle" => "button",
        "date" | "DateTime" | "InputTime" | "ColorWell" => "textbox",
        "image" => "img",
        other => other,
    }
}

fn kind(node: &AxNode<'_>, role: &str, name: &str) -> Kind {
    if node.ignored() {
        return Kind::Wrapper;
    }
    if INTERACTIVE.contains(&role) || (node.flag("editable") && node.flag("focusable") && role != "RootWebArea") {
        return Kind::Interactive;
    }
    // Focusable without a role of its own (a `<div tabindex="0">` card): something to act on.
    if node.flag("focusable") && matches!(role, "generic" | "none" | "") {
        return Kind::Interactive;
    }
    if role == "row" {
        return Kind::Row;
    }
    if TEXTUAL.contains(&role) {
        return Kind::Textual;
    }
    if CONTAINERS.contains(&role) && (!name.is_empty() || matches!(role, "dialog" | "alertdialog")) {
        return Kind::Container;
    }
    Kind::Wrapper
}

struct Renderer<'a> {
    nodes: HashMap<&'a str, AxNode<'a>>,
    root: Option<&'a str>,
    special: &'a HashMap<i64, SpecialField>,
    /// The frames' trees, by iframe element: each is rendered under its iframe's line.
    frames: &'a HashMap<i64, FrameTree>,
}

/// Renders the accessibility tree (`Accessibility.getFullAXTree`'s nodes) as the snapshot's
/// body, asking `give_ref` for the ref of each element that gets one, in document order.
pub(crate) fn render_tree<'a>(
    nodes: &'a [Value],
    special: &'a HashMap<i64, SpecialField>,
    frames: &'a HashMap<i64, FrameTree>,
    give_ref: &mut dyn FnMut(i64) -> u64,
) -> String {
    let mut out = String::new();
    write_pieces(&mut out, &Renderer::new(nodes, special, frames).document(), 0, give_ref);
    out
}

impl<'a> Renderer<'a> {
    fn new(nodes: &'a [Value], special: &'a HashMap<i64, SpecialField>, frames: &'a HashMap<i64, FrameTree>) -> Self {
        let by_id: HashMap<&str, AxNode<'_>> =
            nodes.iter().filter_map(|raw| Some((raw.get("nodeId").and_then(Value::as_str)?, AxNode { raw }))).collect();
        let root = nodes.iter().find(|raw| raw.get("parentId").is_none()).and_then(|raw| raw.get("nodeId")?.as_str());
        Renderer { nodes: by_id, root, special, frames }
    }

    /// The pieces of the whole document.
    fn document(&self) -> Vec<Piece> {
        self.root.map(|root| self.children_of(root)).unwrap_or_default()
    }
}

impl Renderer<'_> {
    /// The pieces of a node's children, loose text that repeats a neighbouring element's name
    /// dropped (a label beside its field, the text of a checkbox's own label).
    fn children_of(&self, id: &str) -> Vec<Piece> {
        let Some(node) = self.nodes.get(id) else { return Vec::new() };
        let mut pieces = Vec::new();
        for child in node.children() {
            pieces.extend(self.piece(child));
        }
        let named = |piece: Option<&Piece>, text: &str| matches!(piece, Some(Piece::Line(block)) if block.interactive && block.name == text);
        let repeats: Vec<bool> = (0..pieces.len())
            .map(|index| match &pieces[index] {
                Piece::Text(text) => {
                    named(index.checked_sub(1).and_then(|before| pieces.get(before)), text)
                        || named(pieces.get(index + 1), text)
                }
                Piece::Line(_) => false,
            })
            .collect();
        pieces.into_iter().zip(repeats).filter_map(|(piece, repeats)| (!repeats).then_some(piece)).collect()
    }

    /// The pieces one node makes: none (hidden), loose text, its children lifted (a wrapper),
    /// or a line of its own.
    /// A draggable element's one line: its role and name, `[draggable]`, a ref, and its text
    /// (or its own lines below it).
    fn draggable(&self, id: &str, node: &AxNode<'_>, role: &str) -> Piece {
        let name = node.name();
        let mut head = head_line(node, role, &name, Kind::Interactive);
        head.push_str(" [draggable]");
        let children = self.children_of(id);
        let (text, children) = if children.iter().all(|piece| matches!(piece, Piece::Text(_))) {
            let text = join_texts(children);
            (Some(text).filter(|text| !text.is_empty() && *text != name), Vec::new())
        } else {
            (None, children)
        };
        Piece::Line(Block {
            head,
            ref_node: node.backend_id(),
            name,
            text,
            children,
            interactive: true,
            ..Block::default()
        })
    }

    fn piece(&self, id: &str) -> Vec<Piece> {
        let Some(&node) = self.nodes.get(id) else { return Vec::new() };
        let role = node.role();
        match role {
            // Text inside a hidden subtree (`aria-hidden`, `visibility: hidden`) is ignored.
            "StaticText" if node.ignored() => return Vec::new(),
            "StaticText" => {
                let text = node.name();
                return if text.is_empty() { Vec::new() } else { vec![Piece::Text(text)] };
            }
            "InlineTextBox" | "LineBreak" => return Vec::new(),
            _ => {}
        }
        let special = node.backend_id().and_then(|id| self.special.get(&id));
        if let Some(SpecialField::Native { label, value, disabled }) = special {
            let mut head = format!("textbox {}", quoted(label));
            if *disabled {
                head.push_str(" [disabled]");
            }
            let suffix = if value.is_empty() { String::new() } else { format!(": {value}") };
            let block = Block {
                head,
                ref_node: node.backend_id(),
                suffix,
                name: label.clone(),
                interactive: true,
                ..Block::default()
            };
            return vec![Piece::Line(block)];
        }
        if matches!(role, "Iframe" | "IframePresentational") {
            // The frame's document is a tree of its own, shown under the frame's line. One that
            // could not be read says so, rather than let the agent conclude the page lacks
            // what the frame shows.
            let name = node.name();
            let mut head = "iframe".to_owned();
            if !name.is_empty() {
                let _ = write!(head, " {}", quoted(&name));
            }
            let Some(frame) = node.backend_id().and_then(|id| self.frames.get(&id)) else {
                let text = Some(FRAME_NOT_READ.to_owned());
                return vec![Piece::Line(Block { head, name, text, ..Block::default() })];
            };
            let children = Renderer::new(&frame.nodes, self.special, self.frames).document();
            let interactive = children.iter().any(|piece| matches!(piece, Piece::Line(block) if block.interactive));
            return vec![Piece::Line(Block { head, name, interactive, children, ..Block::default() })];
        }
        // A row keeps its cells on its line, and gets the mark below.
        if let Some(SpecialField::Draggable) = special
            && role != "row"
        {
            return vec![self.draggable(id, &node, role)];
        }
        if let Some(SpecialField::FilePicker { label, multiple, disabled }) = special {
            let mut head = format!("label {} [file chooser]", quoted(label));
            if *multiple {
                head.push_str(" [multiple]");
            }
            if *disabled {
                head.push_str(" [disabled]");
            }
            let block =
                Block { head, ref_node: node.backend_id(), name: label.clone(), interactive: true, ..Block::default() };
            return vec![Piece::Line(block)];
        }
        let name = node.name();
        let kind = kind(&node, role, &name);
        match kind {
            Kind::Wrapper => {
                let children = self.children_of(id);
                // A wrapper holding text alone stays one run of text.
                if !children.is_empty() && children.iter().all(|piece| matches!(piece, Piece::Text(_))) {
                    return vec![Piece::Text(join_texts(children))];
                }
                children
            }
            Kind::Interactive => {
                let mut block = self.interactive(id, &node, role, name);
                match special {
                    Some(SpecialField::Password { filled }) => {
                        block.suffix = if *filled { format!(": {MASKED}") } else { String::new() };
                    }
                    Some(SpecialField::File { multiple }) => {
                        block.head.push_str(if *multiple { " [file input] [multiple]" } else { " [file input]" });
                    }
                    Some(SpecialField::Inferred { label }) if block.name.is_empty() && !label.is_empty() => {
                        let shown = shown_role(role);
                        let named = format!("{shown} {} (name inferred from the cell beside it)", quoted(label));
                        block.head = block.head.replacen(shown, &named, 1);
                    }
                    _ => {}
                }
                vec![Piece::Line(block)]
            }
            Kind::Row => {
                let mut cells = Vec::new();
                for child in node.children() {
                    let is_cell = self
                        .nodes
                        .get(child)
                        .is_some_and(|cell| matches!(cell.role(), "cell" | "gridcell" | "columnheader" | "rowheader"));
                    let pieces = if is_cell { self.children_of(child) } else { self.piece(child) };
                    cells.push(inline(pieces));
                }
                cells.retain(|cell| !cell.is_empty());
                let draggable = matches!(special, Some(SpecialField::Draggable));
                let interactive = draggable || cells.iter().flatten().any(|piece| matches!(piece, Piece::Line(_)));
                let mut head = head_line(&node, role, "", kind);
                if draggable {
                    head.push_str(" [draggable]");
                }
                vec![Piece::Line(Block {
                    head,
                    ref_node: node.backend_id(),
                    name,
                    cells,
                    interactive,
                    ..Block::default()
                })]
            }
            Kind::Textual | Kind::Container => {
                let mut children = self.children_of(id);
                if kind == Kind::Textual {
                    // Inline elements (code, emphasis, a nested paragraph) read as part of the text.
                    children = merge_texts(
                        children
                            .into_iter()
                            .map(|piece| match piece {
                                Piece::Line(block) if !block.interactive => Piece::Text(block.flatten()),
                                other => other,
                            })
                            .collect(),
                    );
                }
                let has_text = children.iter().any(|piece| matches!(piece, Piece::Text(_)));
                if kind == Kind::Textual && !has_text && name.is_empty() {
                    // Nothing to read on its own line (a paragraph around two buttons).
                    return children;
                }
                let leaves = children.iter().all(|piece| match piece {
                    Piece::Text(_) => true,
                    Piece::Line(block) => block.children.is_empty() && block.cells.is_empty(),
                });
                if kind == Kind::Textual && has_text && leaves && children.len() > 1 {
                    // Text with a few elements in it reads best as one line: `listitem: checkbox
                    // [ref=e3] Order 1002 button [ref=e4]`.
                    let shown_name = if children.iter().any(|piece| matches!(piece, Piece::Text(text) if *text == name))
                    {
                        ""
                    } else {
                        name.as_str()
                    };
                    let head = head_line(&node, role, shown_name, kind);
                    let interactive =
                        children.iter().any(|piece| matches!(piece, Piece::Line(block) if block.interactive));
                    let cells = vec![children];
                    return vec![Piece::Line(Block {
                        head,
                        ref_node: node.backend_id(),
                        name,
                        cells,
                        interactive,
                        ..Block::default()
                    })];
                }
                let mut text = None;
                if let Some(Piece::Text(_)) = children.first()
                    && let Piece::Text(leading) = children.remove(0)
                {
                    text = Some(leading);
                }
                if kind == Kind::Textual && text.is_none() && !name.is_empty() {
                    text = Some(name.clone());
                }
                // The name is shown when it says something the text does not.
                let shown_name = if text.as_deref() == Some(name.as_str()) { "" } else { name.as_str() };
                let head = head_line(&node, role, shown_name, kind);
                let interactive = children.iter().any(|piece| matches!(piece, Piece::Line(block) if block.interactive));
                // Containers too: a drop zone with nothing in it to aim at, a dialog to check.
                let ref_node = node.backend_id();
                let text = text.map(|text| trim(&text, MAX_TEXT_CHARS));
                vec![Piece::Line(Block { head, ref_node, name, text, interactive, children, ..Block::default() })]
            }
        }
    }

    fn interactive(&self, id: &str, node: &AxNode<'_>, role: &str, name: String) -> Block {
        let mut suffix = String::new();
        let value = field_value(node, &name);
        if let Some(value) = &value {
            let _ = write!(suffix, ": {value}");
        }
        let options = if matches!(role, "combobox" | "listbox") { self.options(id) } else { Vec::new() };
        if !options.is_empty() {
            let _ = write!(suffix, " [options: {}]", options.join(" | "));
        }
        // Its own text is its name, and a native widget's insides are the browser's: only
        // elements one can act on inside it (a link in a button) stay.
        let native = matches!(role, "date" | "DateTime" | "InputTime" | "ColorWell");
        let mut children = if native { Vec::new() } else { self.children_of(id) };
        if name.is_empty() {
            // Nameless but with text (a focusable card): the text says what it is.
            let text = join_texts(
                children
                    .iter()
                    .filter_map(|piece| match piece {
                        Piece::Text(text) => Some(Piece::Text(text.clone())),
                        Piece::Line(_) => None,
                    })
                    .collect(),
            );
            // A field's text is its value, already shown (`textbox [ref=e4]: 100234`).
            let shown = trim(&text, MAX_TEXT_CHARS);
            if !text.is_empty() && value.as_deref() != Some(shown.as_str()) {
                let _ = write!(suffix, ": {shown}");
            }
        }
        children.retain(|piece| matches!(piece, Piece::Line(block) if block.interactive));
        if !options.is_empty() {
            children.retain(|piece| !matches!(piece, Piece::Line(block) if block.option));
        }
        Block {
            head: head_line(node, role, &name, Kind::Interactive),
            ref_node: node.backend_id(),
            suffix,
            name,
            interactive: true,
            option: role == "option",
            children,
            ..Block::default()
        }
    }

    /// The option names of a select (combobox) or listbox, for one line.
    fn options(&self, id: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut pending = vec![id];
        while let Some(current) = pending.pop() {
            let Some(node) = self.nodes.get(current) else { continue };
            if current != id && node.role() == "option" {
                let selected = if node.flag("selected") { " (selected)" } else { "" };
                found.push(format!("{}{selected}", trim(&node.name(), MAX_NAME_CHARS)));
                continue;
            }
            let children: Vec<&str> = node.children().collect();
            pending.extend(children.into_iter().rev());
        }
        found
    }
}

/// A cell's pieces for one line: elements one can act on stay (inline), the rest is text.
fn inline(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Line(mut block) if block.interactive => {
                let children = std::mem::take(&mut block.children);
                if block.ref_node.is_some() {
                    out.push(Piece::Line(block));
                } else if let Some(text) = block.text.take() {
                    out.push(Piece::Text(text));
                }
                out.extend(inline(children));
            }
            Piece::Line(block) => out.push(Piece::Text(block.flatten())),
            Piece::Text(text) => out.push(Piece::Text(text)),
        }
    }
    merge_texts(out)
}

fn join_texts(pieces: Vec<Piece>) -> String {
    pieces
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Text(text) => Some(text),
            Piece::Line(_) => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Joins consecutive runs of loose text into one.
fn merge_texts(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut merged: Vec<Piece> = Vec::with_capacity(pieces.len());
    for piece in pieces {
        match (merged.last_mut(), piece) {
            (Some(Piece::Text(run)), Piece::Text(text)) => {
                if !text.is_empty() {
                    if !run.is_empty() && !starts_with_punctuation(&text) {
                        run.push(' ');
                    }
                    run.push_str(&text);
                }
            }
            (_, piece) => merged.push(piece),
        }
    }
    merged
}

fn starts_with_punctuation(text: &str) -> bool {
    text.starts_with(['.', ',', ';', ':', '!', '?', ')'])
}

/// `role "name" [state]`: the line up to its ref.
fn head_line(node: &AxNode<'_>, role: &str, name: &str, kind: Kind) -> String {
    let mut head = match role {
        "heading" => match node.property("level").and_then(Value::as_u64) {
            Some(level) => format!("h{level}"),
            None => "heading".to_owned(),
        },
        other => shown_role(other).to_owned(),
    };
    if !name.is_empty() && kind != Kind::Row {
        let _ = write!(head, " {}", quoted(name));
    }
    for property in ["disabled", "expanded", "selected", "pressed", "invalid", "required"] {
        if node.flag(property) {
            let _ = write!(head, " [{property}]");
        }
    }
    match node.property("checked").and_then(Value::as_str) {
        Some("true") => head.push_str(" [checked]"),
        Some("mixed") => head.push_str(" [mixed]"),
        _ => {}
    }
    head
}

/// What a field holds, as shown after its head: a password field's value is never shown.
fn field_value(node: &AxNode<'_>, name: &str) -> Option<String> {
    let value = node.value()?;
    if value.is_empty() || value == name {
        return None;
    }
    // Chromium exposes a password field's value as bullets, one per character.
    if value.chars().all(|c| matches!(c, '•' | '●' | '*')) || node.flag("protected") {
        return Some(MASKED.to_owned());
    }
    Some(trim(&value, MAX_TEXT_CHARS))
}

fn write_pieces(out: &mut String, pieces: &[Piece], depth: usize, give_ref: &mut dyn FnMut(i64) -> u64) {
    for piece in pieces {
        for _ in 0..depth {
            out.push_str("  ");
        }
        match piece {
            Piece::Text(text) => out.push_str(&trim(text, MAX_TEXT_CHARS)),
            Piece::Line(block) => {
                write_head(out, block, give_ref);
                if let Some(text) = &block.text {
                    out.push_str(": ");
                    out.push_str(text);
                }
                for (index, cell) in block.cells.iter().enumerate() {
                    out.push_str(if index == 0 { ": " } else { " | " });
                    for (position, part) in cell.iter().enumerate() {
                        if position > 0 {
                            out.push(' ');
                        }
                        match part {
                            Piece::Text(text) => out.push_str(&trim(text, MAX_NAME_CHARS)),
                            Piece::Line(inline) => write_head(out, inline, give_ref),
                        }
                    }
                }
            }
        }
        out.push('\n');
        if let Piece::Line(block) = piece {
            write_pieces(out, &block.children, depth + 1, give_ref);
        }
    }
}

/// `role "name" [state] [ref=eN]: value`.
fn write_head(out: &mut String, block: &Block, give_ref: &mut dyn FnMut(i64) -> u64) {
    out.push_str(&block.head);
    if let Some(node) = block.ref_node {
        let _ = write!(out, " [ref=e{}]", give_ref(node));
    }
    out.push_str(&block.suffix);
}

/// A name as a line shows it: cut to its limit, in double quotes, its own quotes escaped.
fn quoted(name: &str) -> String {
    format!("\"{}\"", trim(name, MAX_NAME_CHARS).replace('"', "\\\""))
}

/// Cuts `text` to at most `limit` characters, marking the cut with `…`.
fn trim(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(limit.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An accessibility node as `Accessibility.getFullAXTree` gives it.
    fn node(id: &str, role: &str, name: &str, children: &[&str]) -> Value {
        json!({
            "nodeId": id,
            "backendDOMNodeId": id.parse::<i64>().unwrap_or(0),
            "ignored": false,
            "role": { "type": "role", "value": role },
            "name": { "type": "computedString", "value": name },
            "childIds": children,
        })
    }

    fn render(nodes: &[Value]) -> String {
        let mut numbers = HashMap::new();
        render_tree(nodes, &HashMap::new(), &HashMap::new(), &mut |backend_id| {
            let next = numbers.len() as u64 + 1;
            *numbers.entry(backend_id).or_insert(next)
        })
    }

    #[test]
    fn long_text_is_cut_and_quotes_in_names_are_escaped() {
        let long = "word ".repeat(60);
        let nodes = [
            node("1", "RootWebArea", "", &["2", "4"]),
            node("2", "paragraph", "", &["3"]),
            node("3", "StaticText", &long, &[]),
            node("4", "button", r#"Say "hi""#, &[]),
        ];
        let text = render(&nodes);
        let paragraph = text.lines().next().unwrap_or_default();
        assert!(paragraph.starts_with("paragraph [ref=e1]: word word"), "{text}");
        assert_eq!(paragraph.chars().count(), "paragraph [ref=e1]: ".len() + MAX_TEXT_CHARS, "{text}");
        assert!(paragraph.ends_with('…'), "{text}");
        assert_eq!(text.lines().nth(1), Some(r#"button "Say \"hi\"" [ref=e2]"#), "{text}");
    }

    #[test]
    fn wrappers_are_dropped_and_a_label_beside_its_field_is_not_repeated() {
        let nodes = [
            node("1", "RootWebArea", "", &["2"]),
            node("2", "generic", "", &["3", "5"]),
            node("3", "LabelText", "", &["4"]),
            node("4", "StaticText", "Email", &[]),
            node("5", "textbox", "Email", &[]),
        ];
        assert_eq!(render(&nodes), "textbox \"Email\" [ref=e1]\n");
    }
}
