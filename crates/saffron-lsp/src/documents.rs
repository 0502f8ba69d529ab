//! The documents the editor has open, kept as ropes and edited incrementally.

use std::borrow::Cow;

use ls_types::{Position, TextDocumentContentChangeEvent};
use ropey::Rope;
use saffron_ide::{SyntaxTree, TextChange};

pub struct OpenDocument {
    pub rope: Rope,
    pub version: i32,
    /// The tree-sitter tree, edited with the text and reparsed when next asked for (`syntax`),
    /// off the loop: a keystroke costs a rope edit, not a parse.
    tree: Option<SyntaxTree>,
    tree_is_stale: bool,
}

impl OpenDocument {
    pub fn new(text: &str, version: i32) -> OpenDocument {
        OpenDocument { rope: Rope::from_str(text), version, tree: SyntaxTree::parse(text), tree_is_stale: false }
    }

    /// Applies LSP content changes (UTF-16 positions); a change without a range replaces all.
    pub fn apply(&mut self, changes: Vec<TextDocumentContentChangeEvent>, version: i32) {
        for change in changes {
            match change.range {
                None => {
                    self.rope = Rope::from_str(&change.text);
                    // Nothing of the old tree can be reused.
                    self.tree = None;
                }
                Some(range) => {
                    let start = self.char_index(range.start);
                    let end = self.char_index(range.end).max(start);
                    let edit = self.text_change(start, end, &change.text);
                    if let Some(tree) = &mut self.tree {
                        tree.edit(&edit);
                    }
                    self.rope.remove(start..end);
                    self.rope.insert(start, &change.text);
                }
            }
        }
        self.version = version;
        self.tree_is_stale = true;
    }

    #[cfg(test)]
    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    /// Line `line` (0-based) without its line ending, and the byte column of a UTF-16
    /// `character` in it (clamped to the line), in time that does not grow with the document.
    pub fn line(&self, line: u32, character: u32) -> Option<(String, usize)> {
        let line = line as usize;
        if line >= self.rope.len_lines() {
            return None;
        }
        let slice = self.rope.line(line);
        let mut text = slice.to_string();
        while text.ends_with(['\n', '\r']) {
            text.pop();
        }
        let mut units = 0u32;
        let column = text
            .char_indices()
            .find(|(_, c)| {
                let past = units >= character;
                units += c.len_utf16() as u32;
                past
            })
            .map_or(text.len(), |(index, _)| index);
        Some((text, column))
    }

    /// The lines before line `line` (0-based), nearest first, with their line endings, read
    /// from the rope as they are asked for: a caller that stops early pays only for the lines
    /// it read, however long the document.
    pub fn lines_above(&self, line: u32) -> impl Iterator<Item = Cow<'_, str>> {
        let line = (line as usize).min(self.rope.len_lines());
        self.rope.lines_at(line).reversed().map(Cow::from)
    }

    /// What the syntax tree of the current text is made from, cheap to take on the loop: the
    /// text (a rope) and the tree edited with it, reparsed by [`Syntax::parse`] off the loop.
    pub fn syntax(&self) -> Syntax {
        Syntax { rope: self.rope.clone(), tree: self.tree.clone(), tree_is_stale: self.tree_is_stale }
    }

    /// The edit of chars `start..end` to `inserted`, in bytes and (row, byte column) points.
    fn text_change(&self, start: usize, end: usize, inserted: &str) -> TextChange {
        let point = |char_index: usize| {
            let line = self.rope.char_to_line(char_index);
            (line, self.rope.char_to_byte(char_index) - self.rope.line_to_byte(line))
        };
        let start_byte = self.rope.char_to_byte(start);
        let start_point = point(start);
        let new_end = match inserted.rfind('\n') {
            None => (start_point.0, start_point.1 + inserted.len()),
            Some(last) => (start_point.0 + inserted.matches('\n').count(), inserted.len() - last - 1),
        };
        TextChange {
            start_byte,
            old_end_byte: self.rope.char_to_byte(end),
            new_end_byte: start_byte + inserted.len(),
            start: start_point,
            old_end: point(end),
            new_end,
        }
    }

    /// The char index of a UTF-16 position, clamped to the line and the document.
    fn char_index(&self, position: Position) -> usize {
        let line = position.line as usize;
        if line >= self.rope.len_lines() {
            return self.rope.len_chars();
        }
        let line_start = self.rope.line_to_char(line);
        let line_slice = self.rope.line(line);
        let mut content_chars = line_slice.len_chars();
        // The position may not point into the line ending.
        while content_chars > 0 && matches!(line_slice.char(content_chars - 1), '\n' | '\r') {
            content_chars -= 1;
        }
        let content_units = line_slice.char_to_utf16_cu(content_chars);
        let units = (position.character as usize).min(content_units);
        line_start + line_slice.utf16_cu_to_char(units)
    }
}

/// An open document's text and syntax tree as of one moment (see [`OpenDocument::syntax`]).
pub struct Syntax {
    rope: Rope,
    tree: Option<SyntaxTree>,
    tree_is_stale: bool,
}

impl Syntax {
    /// The text, and its tree: the old tree reparsed where the edits touched it (a fresh parse
    /// when there is none).
    pub fn parse(self) -> (String, Option<SyntaxTree>) {
        let text = self.rope.to_string();
        let tree = match self.tree {
            Some(mut tree) if self.tree_is_stale => {
                tree.reparse(&text);
                Some(tree)
            }
            Some(tree) => Some(tree),
            None => SyntaxTree::parse(&text),
        };
        (text, tree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ls_types::Range;

    fn change(start: (u32, u32), end: (u32, u32), text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range {
                start: Position { line: start.0, character: start.1 },
                end: Position { line: end.0, character: end.1 },
            }),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn incremental_edits_count_utf16_units() {
        let mut document = OpenDocument::new("Feature: 😀 é\n  Scenario: s\n", 1);
        // "Feature: " is 9 units, the emoji 2, the space 1: the é is at column 12.
        document.apply(vec![change((0, 12), (0, 13), "e")], 2);
        assert_eq!(document.text(), "Feature: 😀 e\n  Scenario: s\n");
        document.apply(vec![change((1, 2), (1, 10), "Example"), change((2, 0), (2, 0), "    Given x\n")], 3);
        assert_eq!(document.text(), "Feature: 😀 e\n  Example: s\n    Given x\n");
        // Out-of-range positions clamp instead of panicking.
        document.apply(vec![change((0, 99), (7, 3), "")], 4);
        assert_eq!(document.text(), "Feature: 😀 e");
        assert_eq!(document.version, 4);
    }

    #[test]
    fn a_line_and_a_column_come_from_utf16_units() {
        let document = OpenDocument::new("Feature: 😀 é\r\n  Scenario: s\nlast", 1);
        // "Feature: " is 9 units, the emoji 2 (4 bytes), the space 1: the é is at byte 14.
        assert_eq!(document.line(0, 12), Some(("Feature: 😀 é".to_string(), 14)));
        // Past the end of the line (into its line ending): the line's end.
        assert_eq!(document.line(0, 99), Some(("Feature: 😀 é".to_string(), 16)));
        assert_eq!(document.line(1, 4), Some(("  Scenario: s".to_string(), 4)));
        assert_eq!(document.line(2, 2), Some(("last".to_string(), 2)));
        assert_eq!(document.line(3, 0), None);
    }

    #[test]
    fn the_lines_above_come_nearest_first_and_only_as_read() {
        let mut document = OpenDocument::new("Feature: f\n  Scenario: s\n    Given a\n", 1);
        document.apply(vec![change((3, 0), (3, 0), "    When b\r\n    Then ")], 2);
        let above: Vec<_> = document.lines_above(4).collect();
        assert_eq!(above, ["    When b\r\n", "    Given a\n", "  Scenario: s\n", "Feature: f\n"]);
        assert_eq!(document.lines_above(1).next().as_deref(), Some("Feature: f\n"));
        assert_eq!(document.lines_above(0).next(), None);
        assert_eq!(document.lines_above(99).next().as_deref(), Some("    Then "), "past the end: the last line");
    }

    #[test]
    fn the_syntax_tree_follows_the_edits() {
        let mut document = OpenDocument::new("Feature: f\n  Scenario: s\n    Given a\n", 1);
        document.apply(vec![change((2, 11), (2, 11), " and b\n    When c"), change((0, 9), (0, 10), "g")], 2);
        let fresh = SyntaxTree::parse(&document.text()).expect("parses");
        assert_eq!(document.syntax().parse().1.as_ref().map(SyntaxTree::sexp), Some(fresh.sexp()));
        document.apply(vec![change((0, 0), (0, 0), "# a comment\n")], 3);
        let fresh = SyntaxTree::parse(&document.text()).expect("parses");
        assert_eq!(document.syntax().parse().1.as_ref().map(SyntaxTree::sexp), Some(fresh.sexp()));
    }
}
