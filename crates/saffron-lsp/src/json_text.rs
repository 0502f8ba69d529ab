//! JSON text written by hand for the completion list, the reply sent on every keystroke.
//! Through serde_json's serializer a list of 70 items took about 27 µs on this project's
//! machine, most of it the generic path taken for each of some 600 small fields; writing the
//! same bytes directly takes a fraction of that. `handlers::completion` keeps its `Serialize`
//! types, and its tests check this writer against serde_json byte for byte.

use std::fmt::{self, Write as _};

/// `value` as a JSON string, escaped exactly as serde_json escapes it.
pub fn string(out: &mut Vec<u8>, value: &str) {
    out.push(b'"');
    escaped(out, value);
    out.push(b'"');
}

/// `value`'s `Display` text as a JSON string, written without an intermediate `String`.
pub fn display_string(out: &mut Vec<u8>, value: &impl fmt::Display) {
    struct Escaping<'a>(&'a mut Vec<u8>);
    impl fmt::Write for Escaping<'_> {
        fn write_str(&mut self, text: &str) -> fmt::Result {
            escaped(self.0, text);
            Ok(())
        }
    }
    out.push(b'"');
    // Writing to a Vec cannot fail; a `Display` that fails leaves what it wrote.
    let _ = write!(Escaping(out), "{value}");
    out.push(b'"');
}

/// A member name and its colon: `"name":`. Names are the protocol's own, with nothing to escape.
pub fn key(out: &mut Vec<u8>, name: &str) {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// A member after the first: `,"name":`.
pub fn next_key(out: &mut Vec<u8>, name: &str) {
    out.push(b',');
    key(out, name);
}

pub fn number(out: &mut Vec<u8>, value: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

fn escaped(out: &mut Vec<u8>, value: &str) {
    let bytes = value.as_bytes();
    let mut start = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        if byte != b'"' && byte != b'\\' && byte >= 0x20 {
            continue;
        }
        out.extend_from_slice(&bytes[start..at]);
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            control => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(control >> 4)]);
                out.push(HEX[usize::from(control & 0xf)]);
            }
        }
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

#[cfg(test)]
mod tests {
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut every_control: String = (0u8..0x20).map(char::from).collect();
        every_control.push('\u{7f}');
        let samples = [
            "",
            "I see the orders page",
            "I add \"Tea\" to the cart",
            r"a \ backslash and a \n that is not a newline",
            "tab\there, newline\nthere, return\r",
            "Ich sehe die Übersicht · ✓ ○ ⚠ 😀",
            &every_control,
        ];
        for sample in samples {
            let mut ours = Vec::new();
            super::string(&mut ours, sample);
            assert_eq!(String::from_utf8_lossy(&ours), serde_json::to_string(sample).expect("a string"), "{sample:?}");
            let mut displayed = Vec::new();
            super::display_string(&mut displayed, &sample);
            assert_eq!(displayed, ours, "{sample:?}");
        }
    }
}
