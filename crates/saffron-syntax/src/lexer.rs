//! Lines and what each line can be read as.
//!
//! Gherkin is line-based: the parser asks "is this line a step?", "is it a table row?" in an
//! order that depends on where it is. The answers here follow Cucumber's token matcher exactly
//! (whitespace rules, keyword order, cell escapes, columns), because conformance depends on it.

use crate::ast::{KeywordType, Location, Span, TableCell, Tag};
use crate::dialect::Dialect;

/// JavaScript's `\s`, which Cucumber's reference parser uses to trim lines. It differs from
/// `char::is_whitespace`: it includes U+FEFF and excludes U+0085.
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

pub(crate) fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_space)
}

/// The characters trimmed around a table cell's value (newlines from `\n` escapes stay).
fn is_cell_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\u{b}' | '\u{c}' | '\r' | '\u{85}' | '\u{a0}')
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// 1-based.
    pub number: u32,
    /// Byte offset of the line's first character in the source.
    pub start: usize,
    /// The line without its line ending.
    pub text: &'a str,
    /// The line without leading whitespace.
    pub trimmed: &'a str,
    /// Leading whitespace, in characters.
    pub indent: u32,
}

impl<'a> Line<'a> {
    fn new(number: u32, start: usize, text: &'a str) -> Line<'a> {
        let trimmed = text.trim_start_matches(is_js_space);
        let indent = text[..text.len() - trimmed.len()].chars().count() as u32;
        Line { number, start, text, trimmed, indent }
    }

    pub fn is_blank(&self) -> bool {
        self.trimmed.is_empty()
    }

    /// Byte offset where the trimmed text starts.
    pub fn content_start(&self) -> usize {
        self.start + (self.text.len() - self.trimmed.len())
    }

    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }

    /// The span of the trimmed text, trailing whitespace excluded.
    pub fn content_span(&self) -> Span {
        let content = self.trimmed.trim_end_matches(is_js_space);
        Span::new(self.content_start(), self.content_start() + content.len())
    }

    /// Location of the first non-blank character.
    pub fn location(&self) -> Location {
        Location { line: self.number, column: self.indent + 1 }
    }

    /// The span of a sub-slice of this line's text.
    pub fn span_of(&self, part: &str) -> Span {
        let offset = part.as_ptr() as usize - self.text.as_ptr() as usize;
        Span::new(self.start + offset, self.start + offset + part.len())
    }

    /// The line with `indent_to_remove` leading characters dropped, or with all leading
    /// whitespace dropped when it has less indentation than that (doc string content).
    pub fn text_without_indent(&self, indent_to_remove: u32) -> &'a str {
        if indent_to_remove > self.indent {
            return self.trimmed;
        }
        let cut = self.text.char_indices().nth(indent_to_remove as usize).map_or(self.text.len(), |(i, _)| i);
        &self.text[cut..]
    }

    /// The rest of the trimmed text after `prefix_len` bytes, trimmed on both ends.
    pub fn rest_trimmed(&self, prefix_len: usize) -> &'a str {
        js_trim(self.trimmed.get(prefix_len..).unwrap_or(""))
    }
}

/// Splits a source into lines as Cucumber does: on `\n` or `\r\n`, dropping a final blank line.
pub(crate) fn split_lines(source: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (number, raw) in (1..).zip(source.split('\n')) {
        let text = raw.strip_suffix('\r').unwrap_or(raw);
        lines.push(Line::new(number, start, text));
        start += raw.len() + 1;
    }
    if lines.last().is_some_and(|line| js_trim(line.text).is_empty()) {
        lines.pop();
    }
    lines
}

/// `StepSet` and `Fixture`, the `.saffron` keywords. They are English in every language, so a
/// set name reads the same across a multilingual project.
pub const STEP_SET_KEYWORD: &str = "StepSet";
pub const FIXTURE_KEYWORD: &str = "Fixture";

/// A block title line such as `Scenario: name`: keyword without colon.
pub(crate) fn match_title<'k>(line: &Line<'_>, keywords: impl IntoIterator<Item = &'k str>) -> Option<&'k str> {
    keywords
        .into_iter()
        .find(|keyword| line.trimmed.starts_with(keyword) && line.trimmed[keyword.len()..].starts_with(':'))
}

pub(crate) struct StepMatch<'d> {
    pub keyword: &'d str,
    pub keyword_type: KeywordType,
    pub is_invocation: bool,
}

const INVOCATION_KEYWORD: &str = "StepSet ";

pub(crate) fn match_step<'d>(line: &Line<'_>, dialect: &'d Dialect) -> Option<StepMatch<'d>> {
    for (keyword, keyword_type) in dialect.step_keywords() {
        if line.trimmed.starts_with(keyword.as_str()) {
            return Some(StepMatch { keyword, keyword_type: *keyword_type, is_invocation: false });
        }
    }
    if line.trimmed.starts_with(INVOCATION_KEYWORD) {
        return Some(StepMatch {
            keyword: INVOCATION_KEYWORD,
            keyword_type: KeywordType::Conjunction,
            is_invocation: true,
        });
    }
    None
}

/// A `# language: xx` header: the language code.
pub(crate) fn match_language<'a>(line: &Line<'a>) -> Option<&'a str> {
    let rest = js_trim(line.trimmed).strip_prefix('#')?;
    let rest = rest.trim_start_matches(is_js_space).strip_prefix("language")?;
    let rest = rest.trim_start_matches(is_js_space).strip_prefix(':')?;
    let code = js_trim(rest);
    let valid = !code.is_empty() && code.chars().all(|c| c.is_ascii_alphabetic() || c == '-' || c == '_');
    valid.then_some(code)
}

/// The tags of a tag line, or the column of the first tag that contains whitespace.
pub(crate) fn tags(line: &Line<'_>) -> Result<Vec<Tag>, Location> {
    let trimmed = line.trimmed;
    // A comment starts at the first `#` preceded by whitespace.
    let mut uncommented_end = trimmed.len();
    let mut previous_is_space = false;
    for (index, c) in trimmed.char_indices() {
        if c == '#' && previous_is_space {
            uncommented_end = index - trimmed[..index].chars().next_back().map_or(0, char::len_utf8);
            break;
        }
        previous_is_space = is_js_space(c);
    }
    let uncommented = &trimmed[..uncommented_end];
    let mut tags = Vec::new();
    let mut column = line.indent + 1;
    for item in uncommented.split('@') {
        let name = item.trim_end_matches(is_js_space);
        if name.is_empty() {
            continue;
        }
        if name.contains(is_js_space) {
            return Err(Location { line: line.number, column });
        }
        let span = line.span_of(name);
        tags.push(Tag {
            location: Location { line: line.number, column },
            span: Span::new(span.start - 1, span.end),
            name: format!("@{name}"),
        });
        column += item.chars().count() as u32 + 1;
    }
    Ok(tags)
}

/// The cells of a table row, unescaped (`\|`, `\\`, `\n`). Text after the last pipe is not a
/// cell. Columns count UTF-16 units within the line, as the reference parser does.
pub(crate) fn table_cells(line: &Line<'_>) -> Vec<TableCell> {
    let trimmed = line.trimmed;
    let mut cells = Vec::new();
    let mut value = String::new();
    let mut first_cell = true;
    let mut cell_start_byte = 0usize;
    let mut col16: u32 = 0; // UTF-16 index of the next character
    let mut start_col: u32 = 1;
    let mut chars = trimmed.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        col16 += c.len_utf16() as u32;
        if c == '|' {
            if first_cell {
                first_cell = false;
            } else {
                let trimmed_left = value.trim_start_matches(is_cell_space);
                let cell_indent: u32 = value[..value.len() - trimmed_left.len()].encode_utf16().count() as u32;
                let raw = &trimmed[cell_start_byte..index];
                let raw_value = raw.trim_matches(is_cell_space);
                cells.push(TableCell {
                    location: Location { line: line.number, column: line.indent + start_col + cell_indent },
                    value: trimmed_left.trim_end_matches(is_cell_space).to_string(),
                    span: line.span_of(raw_value),
                });
            }
            value.clear();
            cell_start_byte = index + 1;
            start_col = col16 + 1;
        } else if c == '\\' {
            match chars.next() {
                Some((_, escaped)) => {
                    col16 += escaped.len_utf16() as u32;
                    match escaped {
                        'n' => value.push('\n'),
                        '|' | '\\' => value.push(escaped),
                        other => {
                            value.push('\\');
                            value.push(other);
                        }
                    }
                }
                // A backslash at the end of the line leaves the cell unclosed: it is dropped.
                None => break,
            }
        } else {
            value.push(c);
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line<'_> {
        Line::new(1, 0, text)
    }

    #[test]
    fn cells_unescape_and_locate() {
        let cells = table_cells(&line("  | a\\|b | c\\\\ |d\\n| e"));
        let values: Vec<&str> = cells.iter().map(|c| c.value.as_str()).collect();
        assert_eq!(values, ["a|b", "c\\", "d\n"]);
        assert_eq!(cells[0].location.column, 5);
        assert_eq!(cells[1].location.column, 12);
        assert_eq!(&"  | a\\|b | c\\\\ |d\\n| e"[cells[0].span.start..cells[0].span.end], "a\\|b");
    }

    #[test]
    fn tags_with_comment_and_columns() {
        let tags = tags(&line("  @a @bb #c @d")).expect("valid");
        let names: Vec<&str> = tags.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["@a", "@bb"]);
        assert_eq!(tags[1].location.column, 6);
        assert_eq!(tags[1].span, Span::new(5, 8));
    }

    #[test]
    fn tag_with_whitespace_is_refused() {
        assert_eq!(super::tags(&line("@a tag x")), Err(Location { line: 1, column: 1 }));
    }

    #[test]
    fn language_header() {
        assert_eq!(match_language(&line("  #  language :  fr ")), Some("fr"));
        assert_eq!(match_language(&line("# language: no such")), None);
        assert_eq!(match_language(&line("# languages: fr")), None);
    }

    #[test]
    fn final_blank_line_is_dropped_and_crlf_split() {
        let lines = split_lines("a\r\nb\n  \n");
        let texts: Vec<&str> = lines.iter().map(|l| l.text).collect();
        assert_eq!(texts, ["a", "b", "  "]);
        assert_eq!(lines[1].start, 3);
    }
}
