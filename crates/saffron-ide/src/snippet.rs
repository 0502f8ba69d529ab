//! Step texts as snippets: `<param>` placeholders and quoted values become tab stops.

/// A snippet body in the LSP / VS Code syntax: `<param>` and quoted values become tab stops
/// (`${1:param}`); `$`, `}` and `\` are escaped as the syntax requires.
pub fn snippet_body(text: &str) -> String {
    fn escape(text: &str, in_placeholder: bool) -> String {
        let mut out = String::new();
        for c in text.chars() {
            if c == '$' || c == '\\' || (in_placeholder && c == '}') {
                out.push('\\');
            }
            out.push(c);
        }
        out
    }
    let mut body = String::new();
    let mut stop = 1;
    let mut rest = text;
    while let Some(start) = rest.find(['<', '"']) {
        let opener = rest.as_bytes()[start];
        let closer = if opener == b'<' { '>' } else { '"' };
        let Some(length) = rest[start + 1..].find(closer) else { break };
        let inner = &rest[start + 1..start + 1 + length];
        if opener == b'<' && (inner.is_empty() || inner.contains(char::is_whitespace)) {
            body.push_str(&escape(&rest[..=start], false));
            rest = &rest[start + 1..];
            continue;
        }
        body.push_str(&escape(&rest[..start], false));
        let default = escape(inner, true);
        if opener == b'<' {
            body.push_str(&format!("${{{stop}:{default}}}"));
        } else {
            body.push_str(&format!("\"${{{stop}:{default}}}\""));
        }
        stop += 1;
        rest = &rest[start + 2 + length..];
    }
    body.push_str(&escape(rest, false));
    body
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
