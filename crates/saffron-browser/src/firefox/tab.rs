//! One Firefox tab: a top-level browsing context and the frames in it.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::bidi::Bidi;
use crate::cdp::CdpFail;

use super::fail;

/// The places a role search starts from: the start node (`this`, else the document), its own
/// shadow root, and every open shadow root inside them, at any depth.
const SEARCH_ROOTS: &str = r#"function () {
  const roots = [];
  const add = (root) => {
    roots.push(root);
    for (const element of root.querySelectorAll('*')) if (element.shadowRoot) add(element.shadowRoot);
  };
  const start = this instanceof Node ? this : document;
  add(start);
  if (start.shadowRoot) add(start.shadowRoot);
  return roots;
}"#;

/// What an element a target names as its frame holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FrameDocument {
    /// The frame's document, as an element handle in the frame's own browsing context.
    Document(String),
    /// The element is no `<iframe>` or `<frame>` (its tag).
    NotAFrame(String),
    /// A frame without a browsing context yet.
    Empty,
}

/// One tab (a top-level browsing context) of a Firefox context.
#[derive(Clone)]
pub(crate) struct Tab {
    pub(crate) bidi: Arc<Bidi>,
    pub(crate) context: String,
}

impl std::fmt::Debug for Tab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tab").field("context", &self.context).finish()
    }
}

impl Tab {
    /// The address of the tab's document.
    pub(crate) async fn url(&self) -> Result<String, CdpFail> {
        let tree = self.bidi.call("browsingContext.getTree", json!({ "root": self.context, "maxDepth": 0 })).await;
        let tree = tree.map_err(fail)?;
        Ok(tree.pointer("/contexts/0/url").and_then(Value::as_str).unwrap_or("about:blank").to_owned())
    }

    /// Loads `url` and waits until its document has loaded.
    pub(crate) async fn navigate(&self, url: &str) -> Result<(), CdpFail> {
        let params = json!({ "context": self.context, "url": url, "wait": "complete" });
        self.bidi.call("browsingContext.navigate", params).await.map_err(fail)?;
        Ok(())
    }

    /// Every frame of the tab, the tab's own document first, then its frames depth first.
    pub(crate) async fn frames(&self) -> Result<Vec<String>, CdpFail> {
        let tree = self.bidi.call("browsingContext.getTree", json!({ "root": self.context })).await.map_err(fail)?;
        let mut frames = Vec::new();
        let mut pending: Vec<Value> = tree.get("contexts").and_then(Value::as_array).cloned().unwrap_or_default();
        pending.reverse();
        while let Some(node) = pending.pop() {
            if let Some(id) = node.get("context").and_then(Value::as_str) {
                frames.push(id.to_owned());
            }
            let mut children = node.get("children").and_then(Value::as_array).cloned().unwrap_or_default();
            children.reverse();
            pending.extend(children);
        }
        Ok(frames)
    }

    /// The document of the frame element `iframe` (a handle): found through its window, whose
    /// browsing context BiDi names, so that what is looked for in it runs in that frame.
    pub(crate) async fn frame_document(&self, iframe: &str) -> Result<FrameDocument, CdpFail> {
        let (context, shared_id) = super::script::parse_handle(iframe)?;
        let function = "function () { return [this.localName, this.contentWindow ?? null]; }";
        let answer = self.call_raw(json!({ "context": context }), Some(shared_id), function, Vec::new(), false).await?;
        let pair = answer.pointer("/result/value").and_then(Value::as_array).cloned().unwrap_or_default();
        let name = pair.first().and_then(|name| name.get("value")).and_then(Value::as_str).unwrap_or_default();
        if !matches!(name, "iframe" | "frame") {
            return Ok(FrameDocument::NotAFrame(name.to_owned()));
        }
        let Some(frame) = pair.get(1).and_then(|window| window.pointer("/value/context")).and_then(Value::as_str)
        else {
            return Ok(FrameDocument::Empty);
        };
        let document = "function () { return document; }";
        let answer = self.call_raw(json!({ "context": frame }), None, document, Vec::new(), false).await?;
        Ok(match answer.pointer("/result/sharedId").and_then(Value::as_str) {
            Some(document) => FrameDocument::Document(super::script::handle(frame, document)),
            None => FrameDocument::Empty,
        })
    }

    /// Scrolls the element (a handle) into view as little as it takes, its frames' documents
    /// too: what DevTools' `DOM.scrollIntoViewIfNeeded` does for an element in a frame.
    pub(crate) async fn scroll_into_view(&self, element: &str) -> Result<(), CdpFail> {
        let (context, shared_id) = super::script::parse_handle(element)?;
        let function = "function () { this.scrollIntoView({ block: 'nearest', inline: 'nearest' }); }";
        self.call_raw(json!({ "context": context }), Some(shared_id), function, Vec::new(), false).await?;
        Ok(())
    }

    /// A PNG of the tab's viewport.
    pub(crate) async fn screenshot(&self) -> Result<Vec<u8>, CdpFail> {
        let params = json!({ "context": self.context, "origin": "viewport", "format": { "type": "image/png" } });
        let answer = self.bidi.call("browsingContext.captureScreenshot", params).await.map_err(fail)?;
        let data = answer.get("data").and_then(Value::as_str).unwrap_or_default();
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|error| CdpFail::Protocol(format!("the screenshot is not base64: {error}")))
    }

    /// The elements with `role` (and `name`, when given) in Firefox's accessibility tree, in
    /// document order: inside `root` (an element handle; itself left out) or in the tab's
    /// document.
    pub(crate) async fn locate_role(
        &self,
        root: Option<&str>,
        role: &str,
        name: Option<&str>,
    ) -> Result<Vec<String>, CdpFail> {
        let found = match root {
            Some(root) => {
                let (context, shared_id) = super::script::parse_handle(root)?;
                self.locate_role_from(context, Some(shared_id), role, name).await?
            }
            None => self.locate_role_from(&self.context, None, role, name).await?,
        };
        Ok(found.into_iter().filter(|handle| Some(handle.as_str()) != root).collect())
    }

    /// [`Tab::locate_role`] in the whole document of `frame`.
    pub(crate) async fn locate_role_in(
        &self,
        frame: &str,
        role: &str,
        name: Option<&str>,
    ) -> Result<Vec<String>, CdpFail> {
        self.locate_role_from(frame, None, role, name).await
    }

    async fn locate_role_from(
        &self,
        context: &str,
        start: Option<&str>,
        role: &str,
        name: Option<&str>,
    ) -> Result<Vec<String>, CdpFail> {
        let mut wanted = json!({ "role": role });
        if let Some(name) = name {
            wanted["name"] = json!(name);
        }
        // The search does not go into shadow trees: each open one is a place to start from too,
        // as Chromium's accessibility tree holds them in place.
        let answer = self.call_raw(json!({ "context": context }), start, SEARCH_ROOTS, Vec::new(), false).await?;
        let roots = answer.pointer("/result/value").and_then(Value::as_array).cloned().unwrap_or_default();
        let start_nodes: Vec<Value> = roots
            .iter()
            .filter_map(|root| root.get("sharedId"))
            .map(|shared_id| json!({ "sharedId": shared_id }))
            .collect();
        let params = json!({
            "context": context,
            "locator": { "type": "accessibility", "value": wanted },
            "startNodes": start_nodes,
        });
        let answer = self.bidi.call("browsingContext.locateNodes", params).await.map_err(fail)?;
        let nodes = answer.get("nodes").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        Ok(nodes
            .iter()
            .filter_map(|node| node.get("sharedId").and_then(Value::as_str))
            .filter(|shared_id| seen.insert(*shared_id))
            .map(|shared_id| super::script::handle(context, shared_id))
            .collect())
    }

    /// The body of the response to `request`, as text.
    pub(crate) async fn response_body(&self, request: &str) -> crate::network::Body {
        use crate::network::Body;
        let params = json!({ "dataType": "response", "request": request });
        let answer =
            match tokio::time::timeout(std::time::Duration::from_secs(5), self.bidi.call("network.getData", params))
                .await
            {
                Ok(Ok(answer)) => answer,
                Ok(Err(error)) => return Body::Unavailable(error.to_string()),
                Err(_) => return Body::Unavailable("reading the body timed out".to_owned()),
            };
        let value = answer.pointer("/bytes/value").and_then(Value::as_str).unwrap_or_default();
        match answer.pointer("/bytes/type").and_then(Value::as_str) {
            Some("string") => Body::Text(value.to_owned()),
            _ => match base64::engine::general_purpose::STANDARD.decode(value).map(String::from_utf8) {
                Ok(Ok(text)) => Body::Text(text),
                _ => Body::Unavailable("the body is binary".to_owned()),
            },
        }
    }

    /// Gives the file input `element` (a handle) these files, as its chooser would.
    pub(crate) async fn set_files(&self, element: &str, paths: &[String]) -> Result<(), CdpFail> {
        let (context, shared_id) = super::script::parse_handle(element)?;
        let params = json!({ "context": context, "element": { "sharedId": shared_id }, "files": paths });
        self.bidi.call("input.setFiles", params).await.map_err(fail)?;
        Ok(())
    }

    /// Brings the tab to the front of its window, as a person who clicks it does.
    pub(crate) async fn activate(&self) -> Result<(), CdpFail> {
        self.bidi.call("browsingContext.activate", json!({ "context": self.context })).await.map_err(fail)?;
        Ok(())
    }
}
