//! Step texts as snippets: `<param>` placeholders and quoted values become tab stops.

/// A snippet body in the LSP / VS Code syntax: `<param>` and quoted values become tab stops
/// (`${1:param}`); `$`, `}` and `\` are escaped as the syntax requires.
pub fn snippet_body(text: &str) -> String {
    snippet(text).unwrap_or_else(|| text.to_string())
}

/// The snippet body of `text` when it differs from `text` (see [`snippet_body`]).
pub fn snippet(text: &str) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::snippet_body;

    #[test]
    fn placeholders_and_quoted_values_become_tab_stops() {
        assert_eq!(snippet_body("I add <count> \"Tea\" to the cart"), "I add ${1:count} \"${2:Tea}\" to the cart");
        assert_eq!(snippet_body("I pay $5 for a < b"), "I pay \\$5 for a < b");
        assert_eq!(snippet_body("I type \"a}b\""), "I type \"${1:a\\}b}\"");
    }
}
