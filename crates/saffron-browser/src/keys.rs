//! Playwright key syntax (`Enter`, `Control+A`, `Shift+ArrowDown`, `+`) turned into the
//! `Input.dispatchKeyEvent` calls a real keyboard would cause.

use chromiumoxide::keys::{KeyDefinition, get_key_definition};
use serde_json::{Value, json};

/// One key with the modifiers held while it is pressed.
#[derive(Debug, Clone)]
pub(crate) struct Chord {
    pub modifiers: Vec<&'static KeyDefinition>,
    pub key: &'static KeyDefinition,
}

/// CDP modifier bits: Alt=1, Ctrl=2, Meta=4, Shift=8.
fn modifier_bit(key: &str) -> i64 {
    match key {
        "Alt" => 1,
        "Control" => 2,
        "Meta" => 4,
        "Shift" => 8,
        _ => 0,
    }
}

fn modifier_name(name: &str) -> Option<&'static str> {
    match name {
        "Alt" | "Option" => Some("Alt"),
        "Control" | "Ctrl" | "ControlOrMeta" => Some("Control"),
        "Meta" | "Command" | "Cmd" => Some("Meta"),
        "Shift" => Some("Shift"),
        _ => None,
    }
}

/// A key by its `key` name (`Enter`, `a`, `ArrowDown`) or its `code` (`KeyA`, `Digit1`).
fn definition(name: &str) -> Option<&'static KeyDefinition> {
    get_key_definition(name)
        .or_else(|| chromiumoxide::keys::USKEYBOARD_LAYOUT.iter().find(|definition| definition.code == name))
}

/// Why a key combination cannot be pressed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum KeyError {
    /// Only modifiers, or nothing at all.
    #[error("no key in {0:?}")]
    NoKey(String),
    /// A part before the key that is not Alt, Control, Meta or Shift (or their aliases).
    #[error("unknown modifier {modifier:?} in {combination:?}")]
    UnknownModifier { modifier: String, combination: String },
    /// A key Chromium's US layout does not name.
    #[error("unknown key {key:?} in {combination:?} (keys are named as in Playwright: Enter, Tab, ArrowDown, a, ...)")]
    UnknownKey { key: String, combination: String },
}

/// Parses `Control+Shift+A`. The last part is the key; a `+` key is written `+` or `Shift++`.
pub(crate) fn parse(combination: &str) -> Result<Chord, KeyError> {
    let (modifiers_part, key_name) = if combination == "+" {
        ("", "+")
    } else if let Some(head) = combination.strip_suffix("++") {
        (head, "+")
    } else {
        match combination.rsplit_once('+') {
            Some((head, key)) => (head, key),
            None => ("", combination),
        }
    };
    if key_name.is_empty() {
        return Err(KeyError::NoKey(combination.to_owned()));
    }
    let mut modifiers = Vec::new();
    for part in modifiers_part.split('+').filter(|part| !part.is_empty()) {
        let unknown = || KeyError::UnknownModifier { modifier: part.to_owned(), combination: combination.to_owned() };
        let key = modifier_name(part).and_then(definition).ok_or_else(unknown)?;
        modifiers.push(key);
    }
    let key = match modifier_name(key_name) {
        Some(name) => definition(name),
        None => definition(key_name),
    }
    .ok_or_else(|| KeyError::UnknownKey { key: key_name.to_owned(), combination: combination.to_owned() })?;
    // Shift+a types "A", as a keyboard would.
    let shifted = modifiers.iter().any(|modifier| modifier.key == "Shift");
    let key = match key.key.chars().next() {
        Some(letter) if shifted && key.key.len() == 1 && letter.is_ascii_lowercase() => {
            definition(&letter.to_ascii_uppercase().to_string()).unwrap_or(key)
        }
        _ => key,
    };
    Ok(Chord { modifiers, key })
}

fn event(kind: &str, key: &KeyDefinition, modifiers: i64, text: Option<&str>) -> Value {
    let mut params = json!({
        "type": kind,
        "modifiers": modifiers,
        "key": key.key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code,
    });
    if let Some(text) = text {
        params["text"] = json!(text);
        params["unmodifiedText"] = json!(text);
    }
    params
}

/// The `Input.dispatchKeyEvent` params for pressing the chord, in order.
pub(crate) fn events(chord: &Chord) -> Vec<Value> {
    let mut out = Vec::new();
    let mut held = 0;
    for modifier in &chord.modifiers {
        held |= modifier_bit(modifier.key);
        out.push(event("rawKeyDown", modifier, held, None));
    }
    // Text is produced only without Control/Alt/Meta held (Ctrl+A selects, it does not type
    // "a"); a printable key without a text in the table types its own name.
    let plain = held & !8 == 0;
    let text =
        chord.key.text.or_else(|| (chord.key.key.chars().count() == 1).then_some(chord.key.key)).filter(|_| plain);
    out.push(event(if text.is_some() { "keyDown" } else { "rawKeyDown" }, chord.key, held, text));
    out.push(event("keyUp", chord.key, held, None));
    for modifier in chord.modifiers.iter().rev() {
        held &= !modifier_bit(modifier.key);
        out.push(event("keyUp", modifier, held, None));
    }
    out
}

/// The key events that type `character` on a US keyboard (a newline is Enter), or `None`
/// when no key types it (it is inserted as text then, as an input method would).
pub(crate) fn typing(character: char) -> Option<Vec<Value>> {
    let name = if character == '\n' { "Enter".to_owned() } else { character.to_string() };
    let key = get_key_definition(&name)?;
    let types_it = key.text.map_or(key.key == name, |text| text == name || (character == '\n' && text == "\r"));
    types_it.then(|| events(&Chord { modifiers: Vec::new(), key }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_keys_and_modifiers() {
        let enter = parse("Enter").expect("Enter");
        assert!(enter.modifiers.is_empty());
        assert_eq!(enter.key.code, "Enter");
        let select_all = parse("Control+A").expect("Control+A");
        assert_eq!(select_all.modifiers.len(), 1);
        assert_eq!(select_all.key.code, "KeyA");
        assert_eq!(parse("ControlOrMeta+a").expect("ControlOrMeta+a").modifiers[0].key, "Control");
        assert_eq!(parse("+").expect("+").key.key, "+");
        assert_eq!(parse("Shift++").expect("Shift++").key.key, "+");
        assert_eq!(parse("KeyB").expect("KeyB").key.code, "KeyB");
        for key in ["Tab", "Escape", "ArrowDown", "Backspace", "Delete", "Home", "End", "PageDown", "F5"] {
            assert!(parse(key).is_ok(), "{key}");
        }
        assert!(parse("Hyper+A").is_err());
        assert!(parse("Entr").is_err());
    }

    #[test]
    fn characters_are_typed_by_their_keys() {
        let typed = |character: char| {
            typing(character).map(|events| (events[0]["key"].clone(), events[0]["text"].clone(), events.len()))
        };
        assert_eq!(typed('a'), Some((json!("a"), json!("a"), 2)));
        assert_eq!(typed('A'), Some((json!("A"), json!("A"), 2)));
        assert_eq!(typed('7'), Some((json!("7"), json!("7"), 2)));
        assert_eq!(typed('@'), Some((json!("@"), json!("@"), 2)));
        assert_eq!(typed(' '), Some((json!(" "), json!(" "), 2)));
        assert_eq!(typed('\n'), Some((json!("Enter"), json!("\r"), 2)));
        // No key of a US keyboard types these: they are inserted as text.
        assert_eq!(typed('é'), None);
        assert_eq!(typed('€'), None);
    }

    #[test]
    fn control_chords_type_no_text() {
        let events = events(&parse("Control+A").expect("Control+A"));
        assert_eq!(events.len(), 4);
        assert_eq!(events[1]["type"], "rawKeyDown");
        assert_eq!(events[1]["modifiers"], 2);
        assert!(events[1].get("text").is_none());
        assert_eq!(events[3]["modifiers"], 0);
        let enter = super::events(&parse("Enter").expect("Enter"));
        assert_eq!(enter[0]["type"], "keyDown");
        assert_eq!(enter[0]["text"], "\r");
        let shifted = super::events(&parse("Shift+a").expect("Shift+a"));
        assert_eq!(shifted[1]["text"], "A");
    }
}
