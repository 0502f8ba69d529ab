//! The documents the editor has open, kept as ropes and edited incrementally.

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, TextDocumentContentChangeEvent};

pub struct OpenDocument {
    pub rope: Rope,
    pub version: i32,
}

impl OpenDocument {
    pub fn new(text: &str, version: i32) -> OpenDocument {
        OpenDocument { rope: Rope::from_str(text), version }
    }

    /// Applies LSP content changes (UTF-16 positions); a change without a range replaces all.
    pub fn apply(&mut self, changes: Vec<TextDocumentContentChangeEvent>, version: i32) {
        for change in changes {
            match change.range {
                None => self.rope = Rope::from_str(&change.text),
                Some(range) => {
                    let start = self.char_index(range.start);
                    let end = self.char_index(range.end).max(start);
                    self.rope.remove(start..end);
                    self.rope.insert(start, &change.text);
                }
            }
        }
        self.version = version;
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

    pub fn text(&self) -> String {
        self.rope.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Range;

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
        // After the emoji (2 units) and a space: column 11.
        document.apply(vec![change((0, 11), (0, 12), "e")], 2);
        assert_eq!(document.text(), "Feature: 😀 e\n  Scenario: s\n");
        document.apply(vec![change((1, 2), (1, 10), "Example"), change((2, 0), (2, 0), "    Given x\n")], 3);
        assert_eq!(document.text(), "Feature: 😀 e\n  Example: s\n    Given x\n");
        // Out-of-range positions clamp instead of panicking.
        document.apply(vec![change((0, 99), (7, 3), "")], 4);
        assert_eq!(document.text(), "Feature: 😀 e");
        assert_eq!(document.version, 4);
    }
}
