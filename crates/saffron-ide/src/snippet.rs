//! Step texts as snippets: `<param>` placeholders and quoted values become tab stops.

use saffron_syntax::step_text::{StepTokenKind, lex};

/// A snippet body in the LSP / VS Code syntax: `<param>` and quoted values become tab stops
/// (`${1:param}`); `$`, `}` and `\` are escaped as the syntax requires.
pub fn snippet_body(text: &str) -> String {
    snippet(text).unwrap_or_else(|| text.to_string())
}

/// The snippet body of `text` when it differs from `text` (see [`snippet_body`]). Placeholders
/// and quoted values are those of [`saffron_syntax::step_text`].
pub fn snippet(text: &str) -> Option<String> {
    // Most steps have nothing to escape or turn into a tab stop (bytes: these are all ASCII).
    if !text.bytes().any(|byte| matches!(byte, b'<' | b'"' | b'\'' | b'$' | b'\\')) {
        return None;
    }
    let mut body = String::with_capacity(text.len() + 16);
    let mut stop = 1;
    let mut plain_from = 0;
    for token in lex(text) {
        // A quoted value keeps its quotes around the tab stop; a placeholder's brackets go.
        let quote = match token.kind {
            StepTokenKind::Quoted(quote) => Some(quote.char()),
            StepTokenKind::Placeholder => None,
            _ => continue,
        };
        escape_into(&mut body, &text[plain_from..token.start], false);
        body.extend(quote);
        push_tab_stop(&mut body, stop, token.inner());
        body.extend(quote);
        stop += 1;
        plain_from = token.end();
    }
    escape_into(&mut body, &text[plain_from..], false);
    (body != text).then_some(body)
}

/// `${stop:default}`, with the default escaped.
fn push_tab_stop(body: &mut String, stop: usize, default: &str) {
    body.push_str("${");
    body.push_str(itoa::Buffer::new().format(stop));
    body.push(':');
    escape_into(body, default, true);
    body.push('}');
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

/// The values of a step text, as [`saffron_syntax::step_text`] cuts it: a quoted string
/// (inside its quotes), a number or a `<placeholder>` (brackets included: the tab stop replaces
/// them, as [`snippet`] does), which is what [`saffron_index::tokens::pattern_key`] generalises.
fn values(text: &str) -> Vec<std::ops::Range<usize>> {
    lex(text)
        .filter_map(|token| match token.kind {
            StepTokenKind::Quoted(_) => Some(token.start + 1..token.end() - 1),
            StepTokenKind::Placeholder | StepTokenKind::Number => Some(token.start..token.end()),
            StepTokenKind::Word | StepTokenKind::Other => None,
        })
        .collect()
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
        let own = &text[range.clone()];
        let default = slot
            .iter()
            .copied()
            .min_by(|a, b| b.1.cmp(&a.1).then_with(|| (a.0 != own).cmp(&(b.0 != own))).then_with(|| a.0.cmp(b.0)));
        let default = default.map_or(&text[range.clone()], |best| best.0);
        written.push_str(default);
        let default = default.strip_prefix('<').and_then(|name| name.strip_suffix('>')).unwrap_or(default);
        push_tab_stop(&mut body, stop + 1, default);
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
