//! Input in Firefox: WebDriver BiDi `input.performActions`, fed the same key and mouse events
//! Saffron sends Chromium, and text inserted as Chromium's `Input.insertText` does.

use serde_json::{Value, json};

use crate::cdp::CdpFail;

use super::{Tab, fail};

/// The WebDriver code point of a key that types no character (WebDriver's key table), or the
/// character itself.
fn webdriver_key(key: &str) -> Option<String> {
    let mut characters = key.chars();
    if let (Some(only), None) = (characters.next(), characters.next()) {
        return Some(only.to_string());
    }
    let code = match key {
        "Cancel" => '\u{E001}',
        "Help" => '\u{E002}',
        "Backspace" => '\u{E003}',
        "Tab" => '\u{E004}',
        "Clear" => '\u{E005}',
        "Enter" => '\u{E007}',
        "Shift" => '\u{E008}',
        "Control" => '\u{E009}',
        "Alt" => '\u{E00A}',
        "Pause" => '\u{E00B}',
        "Escape" => '\u{E00C}',
        "PageUp" => '\u{E00E}',
        "PageDown" => '\u{E00F}',
        "End" => '\u{E010}',
        "Home" => '\u{E011}',
        "ArrowLeft" => '\u{E012}',
        "ArrowUp" => '\u{E013}',
        "ArrowRight" => '\u{E014}',
        "ArrowDown" => '\u{E015}',
        "Insert" => '\u{E016}',
        "Delete" => '\u{E017}',
        "Meta" => '\u{E03D}',
        function if function.starts_with('F') => {
            let number: u32 = function[1..].parse().ok().filter(|number| (1..=12).contains(number))?;
            char::from_u32(0xE031 + number - 1)?
        }
        _ => return None,
    };
    Some(code.to_string())
}

/// Chromium key events (`Input.dispatchKeyEvent` parameters, see `keys.rs`) as one BiDi key
/// action sequence.
pub(crate) fn key_actions(events: &[Value]) -> Result<Vec<Value>, CdpFail> {
    let mut actions = Vec::with_capacity(events.len());
    for event in events {
        let key = event.get("key").and_then(Value::as_str).unwrap_or_default();
        let value = webdriver_key(key)
            .ok_or_else(|| CdpFail::Unsupported(format!("the key {key:?} (WebDriver has no code for it)")))?;
        let kind = match event.get("type").and_then(Value::as_str) {
            Some("keyUp") => "keyUp",
            _ => "keyDown",
        };
        actions.push(json!({ "type": kind, "value": value }));
    }
    Ok(actions)
}

/// The mouse as a WebDriver input source, doing `actions`.
fn mouse_source(actions: Vec<Value>) -> Value {
    json!({ "type": "pointer", "id": "saffron-mouse", "parameters": { "pointerType": "mouse" }, "actions": actions })
}

/// A move to a point of the viewport (WebDriver takes whole CSS pixels).
fn move_to((x, y): (f64, f64)) -> Value {
    json!({ "type": "pointerMove", "x": x.round() as i64, "y": y.round() as i64 })
}

fn press() -> Value {
    json!({ "type": "pointerDown", "button": 0 })
}

fn release() -> Value {
    json!({ "type": "pointerUp", "button": 0 })
}

impl Tab {
    /// Sends key events to the focused element.
    pub(crate) async fn keys(&self, events: &[Value]) -> Result<(), CdpFail> {
        let actions = key_actions(events)?;
        self.perform(&self.context, json!([{ "type": "key", "id": "saffron-keyboard", "actions": actions }])).await
    }

    /// A mouse event at a point of `frame`'s viewport (CSS pixels): `mouseMoved`, `mousePressed` or
    /// `mouseReleased`, as Chromium's are named. Firefox counts clicks itself (a second press
    /// soon after the first, in place, is a double-click).
    pub(crate) async fn mouse(&self, frame: &str, kind: &str, point: (f64, f64)) -> Result<(), CdpFail> {
        let mut actions = vec![move_to(point)];
        match kind {
            "mousePressed" => actions.push(press()),
            "mouseReleased" => actions.push(release()),
            _ => {}
        }
        self.perform(frame, json!([mouse_source(actions)])).await
    }

    /// `clicks` presses and releases at a point of `frame`'s viewport, after moving there: in one
    /// action sequence, so that the second press of a double-click is counted as such.
    pub(crate) async fn click(&self, frame: &str, point: (f64, f64), clicks: u32) -> Result<(), CdpFail> {
        let mut actions = vec![move_to(point)];
        for _ in 0..clicks {
            actions.extend([press(), release()]);
        }
        self.perform(frame, json!([mouse_source(actions)])).await
    }

    /// In `frame`'s viewport: a press at `from`, a first move `nudge` pixels right (past the few pixels libraries
    /// wait for before a press becomes a drag), moves through `points`, and a release at the
    /// last one: one action sequence.
    pub(crate) async fn drag_pointer(
        &self,
        frame: &str,
        from: (f64, f64),
        nudge: f64,
        points: &[(f64, f64)],
    ) -> Result<(), CdpFail> {
        let mut actions = vec![move_to(from), press(), move_to((from.0 + nudge, from.1))];
        actions.extend(points.iter().copied().map(move_to));
        actions.push(release());
        self.perform(frame, json!([mouse_source(actions)])).await
    }

    /// Inserts `text` at the caret of `field` (a handle; the focused element of its document),
    /// as typing it would, but in one input event and without key events (Chromium's
    /// `Input.insertText`): through its document's `insertText` command, in its own frame.
    pub(crate) async fn insert_text(&self, field: &str, text: &str) -> Result<(), CdpFail> {
        let (frame, shared_id) = super::script::parse_handle(field)?;
        // Firefox's `insertText` command fires `input` but no `beforeinput`, which Chromium's
        // text insertion fires first: the page gets one (untrusted) and may cancel it, as
        // an editor that inserts the text itself does.
        let function = "function (text) {
            const before = new InputEvent('beforeinput', {
                inputType: 'insertText', data: text, bubbles: true, cancelable: true, composed: true,
            });
            if (!this.dispatchEvent(before)) return true;
            return this.ownerDocument.execCommand('insertText', false, text);
        }";
        let text = vec![json!({ "type": "string", "value": text })];
        let answer = self.call_raw(json!({ "context": frame }), Some(shared_id), function, text, true).await?;
        match answer.pointer("/result/value").and_then(Value::as_bool) {
            Some(true) => Ok(()),
            _ => Err(CdpFail::Protocol("the focused element took no text".to_owned())),
        }
    }

    /// Performs `actions` in `frame` (the tab, or a frame in it): pointer coordinates are in
    /// that frame's viewport.
    async fn perform(&self, frame: &str, actions: Value) -> Result<(), CdpFail> {
        let params = json!({ "context": frame, "actions": actions });
        self.bidi.call("input.performActions", params).await.map_err(fail)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_go_out_as_webdriver_code_points() {
        let events = crate::keys::events(&crate::keys::parse("Shift+Tab").expect("a chord"));
        let actions = key_actions(&events).expect("known keys");
        let values: Vec<(&str, &str)> = actions
            .iter()
            .map(|action| (action["type"].as_str().unwrap_or_default(), action["value"].as_str().unwrap_or_default()))
            .collect();
        assert_eq!(
            values,
            [("keyDown", "\u{E008}"), ("keyDown", "\u{E004}"), ("keyUp", "\u{E004}"), ("keyUp", "\u{E008}")]
        );
        assert_eq!(webdriver_key("a").as_deref(), Some("a"));
        assert_eq!(webdriver_key("F5").as_deref(), Some("\u{E035}"));
        assert_eq!(webdriver_key("AudioVolumeUp"), None);
    }
}
