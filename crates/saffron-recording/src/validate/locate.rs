//! Where a JSON path the validator names (`steps[2].actions[0].target`) is written in a file,
//! so a hand-edited recording's problem is reported at its line and column, as an editor or a
//! compiler would.

use jsonc_parser::ast::Value;
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};

enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// `steps[2].actions` → `steps`, `[2]`, `actions`.
fn segments(path: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|part| !part.is_empty()) {
        let (name, mut indexes) = part.split_once('[').map_or((part, ""), |(name, rest)| (name, rest));
        if !name.is_empty() {
            out.push(Segment::Key(name));
        }
        while let Some((number, rest)) = indexes.split_once(']') {
            if let Ok(index) = number.parse() {
                out.push(Segment::Index(index));
            }
            indexes = rest.strip_prefix('[').unwrap_or(rest);
        }
    }
    out
}

/// The 1-based line and column (in characters) of `path` in `text`: of the member's name for
/// a field, of the element for an index. A path that is not in the text (a field that is
/// missing) is placed at the nearest enclosing value that is. `None` when `text` is not JSON.
pub(crate) fn locate(text: &str, path: &str) -> Option<(usize, usize)> {
    let parsed = parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default()).ok()?;
    let mut value = parsed.value.as_ref()?;
    let mut offset = value.start();
    for segment in segments(path) {
        match (segment, value) {
            (Segment::Key(key), Value::Object(object)) => {
                let Some(member) = object.properties.iter().find(|member| member.name.as_str() == key) else { break };
                offset = member.start();
                value = &member.value;
            }
            (Segment::Index(index), Value::Array(array)) => {
                let Some(element) = array.elements.get(index) else { break };
                offset = element.start();
                value = element;
            }
            _ => break,
        }
    }
    Some(line_and_column(text, offset))
}

/// The 1-based line and column (in characters) of the byte `offset` of `text`.
pub fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |line| line.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "{\n  \"version\": 1,\n  \"steps\": [\n    {\n      \"text\": \"é\",\n      \"actions\": [ { \"type\": \"clik\" } ]\n    }\n  ]\n}\n";

    #[test]
    fn fields_indexes_and_missing_fields_are_placed() {
        assert_eq!(locate(TEXT, ""), Some((1, 1)));
        assert_eq!(locate(TEXT, "version"), Some((2, 3)));
        assert_eq!(locate(TEXT, "steps[0]"), Some((4, 5)));
        assert_eq!(locate(TEXT, "steps[0].actions[0].type"), Some((6, 22)));
        // Missing: the nearest enclosing value that is there.
        assert_eq!(locate(TEXT, "steps[0].actions[0].target"), Some((6, 20)));
        assert_eq!(locate(TEXT, "steps[3].kind"), Some((3, 3)));
        assert_eq!(locate(TEXT, "stepsDigest"), Some((1, 1)));
        assert_eq!(locate("not json", "version"), None);
    }
}
