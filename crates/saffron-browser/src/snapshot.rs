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

use chromiumoxide::Page;
use serde_json::{Value, json};

use crate::cdp::{self, CdpFail};
use crate::context::Context;
use crate::error::BrowserError;
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
/// A value shown for a password field, whatever it holds.
const MASKED: &str = "••••";

/// Roles the agent acts on: each gets a ref.
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
];

/// Roles whose text is worth a line (and a ref, for checks).
const TEXTUAL: &[&str] = &[
    "heading",
    "paragraph",
    "listitem",
    "row",
    "cell",
    "gridcell",
    "columnheader",
    "rowheader",
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
    "code",
    "img",
    "image",
    "figure",
    "meter",
    "progressbar",
    "LabelText",
];

/// Containers that give the lines under them their context; kept when named (a dialog always).
const CONTAINERS: &[&str] = &[
    "dialog",
    "alertdialog",
    "navigation",
    "form",
    "search",
    "region",
    "complementary",
    "main",
    "banner",
    "contentinfo",
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

impl Context {
    /// A snapshot of the active tab. Refs stay valid until the element leaves the DOM; the same
    /// DOM node keeps the same ref across snapshots of one context.
    pub async fn snapshot(&mut self) -> Result<PageSnapshot, BrowserError> {
        let _timed = crate::timing::lone_span("snapshot");
        let page = self.active_page()?;
        // A background tab builds no accessibility tree until it renders.
        self.front(&page).await.map_err(protocol)?;
        let (tabs, active_tab) = self.tab_summaries().await?;
        let loader_id = main_loader_id(&page).await.map_err(protocol)?;
        let tree = cdp::call(&page, "Accessibility.getFullAXTree", json!({})).await.map_err(protocol)?;
        let nodes = tree.get("nodes").and_then(Value::as_array).cloned().unwrap_or_default();
        let active = tabs.get(active_tab).cloned().unwrap_or_default();
        let target_id = self.active.clone();
        let refs = &mut self.refs;
        let mut give_ref = |backend_id: i64| {
            refs.reference(NodeKey { target_id: target_id.clone(), loader_id: loader_id.clone(), backend_id })
        };
        let body = render_tree(&nodes, &mut give_ref);
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
    async fn tab_summaries(&self) -> Result<(Vec<TabSummary>, usize), BrowserError> {
        let answer = self.browser.call("Target.getTargets", json!({})).await.map_err(protocol)?;
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

/// The loader id of the page's main frame: changes with every new document.
pub(crate) async fn main_loader_id(page: &Page) -> Result<String, CdpFail> {
    let tree = cdp::call(page, "Page.getFrameTree", json!({})).await?;
    Ok(tree.pointer("/frameTree/frame/loaderId").and_then(Value::as_str).unwrap_or_default().to_owned())
}

/// One accessibility node, as read from `Accessibility.getFullAXTree`.
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
enum Piece {
    /// Loose text (a text run, or a wrapper holding only text).
    Text(String),
    /// An element line with the lines under it.
    Line(Block),
}

struct Block {
    head: String,
    text: Option<String>,
    children: Vec<Piece>,
}

struct Renderer<'a, 'r> {
    nodes: HashMap<&'a str, AxNode<'a>>,
    give_ref: &'r mut dyn FnMut(i64) -> u64,
}

/// Renders the accessibility tree (`Accessibility.getFullAXTree`'s nodes) as the snapshot's
/// body, asking `give_ref` for the ref of each element that gets one.
pub(crate) fn render_tree(nodes: &[Value], give_ref: &mut dyn FnMut(i64) -> u64) -> String {
    let by_id: HashMap<&str, AxNode<'_>> =
        nodes.iter().filter_map(|raw| Some((raw.get("nodeId").and_then(Value::as_str)?, AxNode { raw }))).collect();
    let root = nodes.iter().find(|raw| raw.get("parentId").is_none()).and_then(|raw| raw.get("nodeId")?.as_str());
    let mut renderer = Renderer { nodes: by_id, give_ref };
    let mut out = String::new();
    if let Some(root) = root {
        let pieces = renderer.children_of(root);
        write_pieces(&mut out, &pieces, 0);
    }
    out
}

impl Renderer<'_, '_> {
    fn children_of(&mut self, id: &str) -> Vec<Piece> {
        let Some(node) = self.nodes.get(id) else { return Vec::new() };
        let children: Vec<String> = node.children().map(str::to_owned).collect();
        let mut pieces = Vec::new();
        for child in children {
            pieces.extend(self.piece(&child));
        }
        pieces
    }

    /// The pieces one node makes: none (hidden), loose text, its children lifted (a wrapper),
    /// or a line of its own.
    fn piece(&mut self, id: &str) -> Vec<Piece> {
        let Some(node) = self.nodes.get(id) else { return Vec::new() };
        let role = node.role();
        if role == "StaticText" {
            let text = node.name();
            return if text.is_empty() { Vec::new() } else { vec![Piece::Text(text)] };
        }
        if matches!(role, "InlineTextBox" | "LineBreak") {
            return Vec::new();
        }
        let interactive = INTERACTIVE.contains(&role)
            || (node.flag("focusable") && node.flag("editable") && !node.ignored() && role != "RootWebArea");
        let textual = TEXTUAL.contains(&role);
        let name = node.name();
        let container = CONTAINERS.contains(&role) && (!name.is_empty() || matches!(role, "dialog" | "alertdialog"));
        if node.ignored() || !(interactive || textual || container) {
            // A wrapper: its children take its place. Text alone stays one run of text.
            let pieces = self.children_of(id);
            if pieces.iter().all(|piece| matches!(piece, Piece::Text(_))) && !pieces.is_empty() {
                let joined = pieces
                    .iter()
                    .filter_map(|piece| match piece {
                        Piece::Text(text) => Some(text.as_str()),
                        Piece::Line(_) => None,
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                return vec![Piece::Text(joined)];
            }
            return pieces;
        }
        let backend_id = node.backend_id();
        let reference = backend_id.map(|backend_id| (self.give_ref)(backend_id));
        let head = head_line(node, role, &name, interactive, reference);
        let mut children = self.children_of(id);
        let mut text = None;
        if interactive {
            // The name already says what the element's own text says.
            children.retain(|piece| matches!(piece, Piece::Line(_)));
            if role == "combobox" || role == "listbox" {
                children.retain(|piece| !is_option(piece));
            }
        } else {
            let mut leading = Vec::new();
            while let Some(Piece::Text(_)) = children.first() {
                if let Piece::Text(run) = children.remove(0) {
                    leading.push(run);
                }
            }
            let joined = leading.join(" ");
            if !joined.is_empty() && joined != name {
                text = Some(trim(&joined, MAX_TEXT_CHARS));
            } else if !name.is_empty() && !shows_name(role, interactive) {
                text = Some(trim(&name, MAX_TEXT_CHARS));
            }
        }
        vec![Piece::Line(Block { head, text, children })]
    }
}

/// Whether the line shows the name in quotes; roles named by their content show it as text.
fn shows_name(role: &str, interactive: bool) -> bool {
    interactive
        || !matches!(
            role,
            "heading"
                | "cell"
                | "gridcell"
                | "columnheader"
                | "rowheader"
                | "LabelText"
                | "row"
                | "listitem"
                | "paragraph"
                | "status"
                | "alert"
        )
}

fn is_option(piece: &Piece) -> bool {
    matches!(piece, Piece::Line(block) if block.head.starts_with("option "))
}

/// `role "name" [state] [ref=eN]` (with the field's value after a colon).
fn head_line(node: &AxNode<'_>, role: &str, name: &str, interactive: bool, reference: Option<u64>) -> String {
    let mut head = match role {
        "heading" => match node.property("level").and_then(Value::as_u64) {
            Some(level) => format!("h{level}"),
            None => "heading".to_owned(),
        },
        "DisclosureTriangle" => "button".to_owned(),
        "LabelText" => "label".to_owned(),
        "image" => "img".to_owned(),
        other => other.to_owned(),
    };
    if !name.is_empty() && shows_name(role, interactive) {
        let _ = write!(head, " \"{}\"", trim(name, MAX_NAME_CHARS).replace('"', "\\\""));
    }
    for (property, shown) in [
        ("disabled", "disabled"),
        ("expanded", "expanded"),
        ("selected", "selected"),
        ("pressed", "pressed"),
        ("invalid", "invalid"),
    ] {
        if node.flag(property) {
            let _ = write!(head, " [{shown}]");
        }
    }
    match node.property("checked").and_then(Value::as_str) {
        Some("true") => head.push_str(" [checked]"),
        Some("mixed") => head.push_str(" [mixed]"),
        _ => {}
    }
    if let Some(reference) = reference {
        let _ = write!(head, " [ref=e{reference}]");
    }
    if interactive && let Some(value) = node.value() {
        let password = value.chars().all(|c| c == '•' || c == '●' || c == '*') && !value.is_empty();
        if password {
            let _ = write!(head, ": {MASKED}");
        } else if !value.is_empty() && value != name {
            let _ = write!(head, ": {}", trim(&value, MAX_TEXT_CHARS));
        }
    }
    head
}

fn write_pieces(out: &mut String, pieces: &[Piece], depth: usize) {
    for piece in pieces {
        for _ in 0..depth {
            out.push_str("  ");
        }
        match piece {
            Piece::Text(text) => {
                out.push_str(&trim(text, MAX_TEXT_CHARS));
                out.push('\n');
            }
            Piece::Line(block) => {
                out.push_str(&block.head);
                if let Some(text) = &block.text {
                    out.push_str(": ");
                    out.push_str(text);
                }
                out.push('\n');
                write_pieces(out, &block.children, depth + 1);
            }
        }
    }
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
