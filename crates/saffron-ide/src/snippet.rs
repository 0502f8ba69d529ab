//! Step texts as snippets: `<param>` placeholders and quoted values become tab stops.

use saffron_index::ValueDefaults;
use saffron_index::tokens::value_ranges;
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

/// The snippet of a step pattern written with several values: `text` (one of its variants)
/// with a tab stop per value, each defaulting to the value most used in its place across the
/// pattern's variants (`defaults`). Also returns the text those defaults write.
pub fn pattern_snippet(text: &str, defaults: &ValueDefaults) -> (String, String) {
    let slots = value_ranges(text);
    let places = defaults.places(slots.len()).unwrap_or_default();
    let mut body = String::with_capacity(text.len() + 16);
    let mut written = String::with_capacity(text.len());
    let mut rest_from = 0;
    for (stop, range) in slots.iter().enumerate() {
        escape_into(&mut body, &text[rest_from..range.start], false);
        written.push_str(&text[rest_from..range.start]);
        // Most used; a tie keeps `text`'s own value, then the first in byte order.
        let own = &text[range.clone()];
        let most_used = places.get(stop).map(Vec::as_slice).unwrap_or_default();
        let default = match most_used.first() {
            Some(first) if !most_used.iter().any(|value| value.as_ref() == own) => first.as_ref(),
            _ => own,
        };
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
            super::pattern_snippet("I pay \"mugs\" 2 for <who>", &saffron_index::ValueDefaults::of(variants)),
            ("I pay \"tea\" 2 for <who>".to_string(), "I pay \"${1:tea}\" ${2:2} for ${3:who}".to_string())
        );
    }
}
