//! Step texts as snippets: `<param>` placeholders and quoted values become tab stops.

/// A snippet body in the LSP / VS Code syntax: `<param>` and quoted values become tab stops
/// (`${1:param}`); `$`, `}` and `\` are escaped as the syntax requires.
pub fn snippet_body(text: &str) -> String {
    snippet(text).unwrap_or_else(|| text.to_string())
}

/// The snippet body of `text` when it differs from `text` (see [`snippet_body`]).
pub fn snippet(text: &str) -> Option<String> {
    // Most steps have nothing to escape or turn into a tab stop (bytes: these are all ASCII).
    if !text.bytes().any(|byte| matches!(byte, b'<' | b'"' | b'$' | b'\\')) {
        return None;
    }
    let mut body = String::with_capacity(text.len() + 16);
    let mut stop = 1;
    let mut rest = text;
    while let Some(start) = rest.bytes().position(|byte| byte == b'<' || byte == b'"') {
        let opener = rest.as_bytes()[start];
        let closer = if opener == b'<' { '>' } else { '"' };
        let Some(length) = rest[start + 1..].find(closer) else { break };
        let inner = &rest[start + 1..start + 1 + length];
        if opener == b'<' && (inner.is_empty() || inner.contains(char::is_whitespace)) {
            escape_into(&mut body, &rest[..=start], false);
            rest = &rest[start + 1..];
            continue;
        }
        escape_into(&mut body, &rest[..start], false);
        if opener == b'"' {
            body.push('"');
        }
        body.push_str("${");
        body.push_str(itoa::Buffer::new().format(stop));
        body.push(':');
        escape_into(&mut body, inner, true);
        body.push('}');
        if opener == b'"' {
            body.push('"');
        }
        stop += 1;
        rest = &rest[start + 2 + length..];
    }
    escape_into(&mut body, rest, false);
    (body != text).then_some(body)
}

/// Copies `text` with `$`, `\` (and `}` inside a placeholder) escaped, a run at a time.
fn escape_into(out: &mut String, text: &str, in_placeholder: bool) {
    let mut rest = text;
    // Bytes, not chars: the characters sought are ASCII, so where they are is a char boundary.
    while let Some(at) = rest.bytes().position(|b| b == b'$' || b == b'\\' || (in_placeholder && b == b'}')) {
        out.push_str(&rest[..at]);
        out.push('\\');
        out.push_str(&rest[at..at + 1]);
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}

/// One value of a step text: a quoted string (inside its quotes), a number or a `<placeholder>`
/// (brackets included: the tab stop replaces them, as [`snippet`] does): what [`saffron_index::tokens::pattern_key`] generalises.
fn values(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            quote @ (b'"' | b'\'') => match text[at + 1..].find(quote as char) {
                Some(length) => {
                    found.push(at + 1..at + 1 + length);
                    at += length + 2;
                }
                None => break,
            },
            b'<' => match text[at + 1..].find(|c: char| c == '>' || c.is_whitespace()) {
                Some(length) if length > 0 && bytes[at + 1 + length] == b'>' => {
                    found.push(at..at + length + 2);
                    at += length + 2;
                }
                _ => at += 1,
            },
            b'0'..=b'9' => {
                let length =
                    bytes[at..].iter().take_while(|b| b.is_ascii_digit() || **b == b'.' || **b == b',').count();
                found.push(at..at + length);
                at += length;
            }
            _ => at += 1,
        }
    }
    found
}

/// The snippet of a step pattern written with several values: `text` (one of its variants)
/// with a tab stop per value, each defaulting to the value most used in its place across
/// `variants` (text, uses). Also returns the text those defaults write.
pub fn pattern_snippet<'a>(text: &str, variants: impl IntoIterator<Item = (&'a str, u32)>) -> (String, String) {
    let slots = values(text);
    let mut counts: Vec<Vec<(&str, u32)>> = vec![Vec::new(); slots.len()];
    for (variant, uses) in variants {
        let found = values(variant);
        // A variant whose values do not line up (a stray quote) says nothing about the places.
        if found.len() != slots.len() {
            continue;
        }
        for (slot, range) in counts.iter_mut().zip(found) {
            let value = &variant[range];
            match slot.iter_mut().find(|(seen, _)| *seen == value) {
                Some(counted) => counted.1 += uses,
                None => slot.push((value, uses)),
            }
        }
    }
    let mut body = String::with_capacity(text.len() + 16);
    let mut written = String::with_capacity(text.len());
    let mut rest_from = 0;
    for (stop, (range, slot)) in slots.iter().zip(&counts).enumerate() {
        escape_into(&mut body, &text[rest_from..range.start], false);
        written.push_str(&text[rest_from..range.start]);
        // Most used; a tie keeps `text`'s own value, then the first in byte order (the variants
        // come in no particular order).
        body.push_str("${");
        body.push_str(itoa::Buffer::new().format(stop + 1));
        body.push(':');
        let own = &text[range.clone()];
        let default = slot
            .iter()
            .copied()
            .min_by(|a, b| b.1.cmp(&a.1).then_with(|| (a.0 != own).cmp(&(b.0 != own))).then_with(|| a.0.cmp(b.0)));
        let default = default.map_or(&text[range.clone()], |best| best.0);
        written.push_str(default);
        let default = default.strip_prefix('<').and_then(|name| name.strip_suffix('>')).unwrap_or(default);
        escape_into(&mut body, default, true);
        body.push('}');
        rest_from = range.end;
    }
    escape_into(&mut body, &text[rest_from..], false);
    written.push_str(&text[rest_from..]);
    (written, body)
}

#[cfg(test)]
mod tests {
    use super::snippet_body;

    #[test]
    fn placeholders_and_quoted_values_become_tab_stops() {
        assert_eq!(snippet_body("I add <count> \"Tea\" to the cart"), "I add ${1:count} \"${2:Tea}\" to the cart");
        assert_eq!(snippet_body("I pay $5 for a < b"), "I pay \\$5 for a < b");
        assert_eq!(snippet_body("I type \"a}b\""), "I type \"${1:a\\}b}\"");
    }

    #[test]
    fn a_pattern_snippet_defaults_each_value_to_its_most_used() {
        let variants =
            [("I pay \"tea\" 3 for <who>", 1), ("I pay \"mugs\" 2 for <who>", 1), ("I pay \"tea\" 2 for <x>", 1)];
        assert_eq!(
            super::pattern_snippet("I pay \"mugs\" 2 for <who>", variants),
            ("I pay \"tea\" 2 for <who>".to_string(), "I pay \"${1:tea}\" ${2:2} for ${3:who}".to_string())
        );
    }
}
