//! The frames of a tab, as `Page.getFrameTree` gives them: read in one place for the snapshot
//! (which reads each frame's tree), the ladder (which needs a frame's parent) and failure
//! screenshots (which hide secrets in every frame).

use crate::page::Page;
use serde_json::{Value, json};

use crate::cdp::{self, CdpFail};

/// One frame of the tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FrameNode {
    pub id: String,
    /// The frame it is in (the main frame, for the page's own frames); `None` for the main frame.
    pub parent: Option<String>,
}

/// Every frame of the tab, the main frame first, then each frame before the frames inside it,
/// in document order.
pub(crate) async fn frames(page: &Page) -> Result<Vec<FrameNode>, CdpFail> {
    let tree = cdp::call(page, "Page.getFrameTree", json!({})).await?;
    Ok(flatten(tree.get("frameTree").unwrap_or(&Value::Null)))
}

fn flatten(tree: &Value) -> Vec<FrameNode> {
    let mut frames = Vec::new();
    let mut pending = vec![(tree, None::<String>)];
    while let Some((node, parent)) = pending.pop() {
        let Some(id) = node.pointer("/frame/id").and_then(Value::as_str) else { continue };
        let children = node.get("childFrames").and_then(Value::as_array).into_iter().flatten();
        pending.extend(children.rev().map(|child| (child, Some(id.to_owned()))));
        frames.push(FrameNode { id: id.to_owned(), parent });
    }
    frames
}

/// Where frame `frame_id` is: `Some(None)` for a frame of the page itself, `Some(Some(parent))`
/// for a frame inside another frame, `None` when it is not a frame of the page (the main frame
/// included).
pub(crate) fn frame_parent(frames: &[FrameNode], frame_id: &str) -> Option<Option<String>> {
    let main = frames.first()?;
    let frame = frames.iter().skip(1).find(|frame| frame.id == frame_id)?;
    Some(frame.parent.clone().filter(|parent| *parent != main.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_main_first_then_in_document_order_with_their_parents() {
        let tree = json!({
            "frame": { "id": "main" },
            "childFrames": [
                { "frame": { "id": "card" }, "childFrames": [{ "frame": { "id": "bank" } }] },
                { "frame": { "id": "gift" } }
            ]
        });
        let frames = flatten(&tree);
        let ids: Vec<&str> = frames.iter().map(|frame| frame.id.as_str()).collect();
        assert_eq!(ids, ["main", "card", "bank", "gift"]);
        assert_eq!(frame_parent(&frames, "card"), Some(None));
        assert_eq!(frame_parent(&frames, "bank"), Some(Some("card".to_owned())));
        assert_eq!(frame_parent(&frames, "main"), None);
        assert_eq!(frame_parent(&frames, "gone"), None);
    }
}
