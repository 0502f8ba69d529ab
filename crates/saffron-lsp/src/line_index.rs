//! Byte offsets ↔ LSP positions. LSP counts columns in UTF-16 code units; Saffron's spans are
//! byte offsets into UTF-8 text.

use ls_types::{Position, Range};

pub struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
    /// The line `text` starts at in its document.
    first_line: u32,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts, first_line: 0 }
    }

    /// The index of one line of a document, line `line` (0-based) without its line ending:
    /// offsets are relative to the line's start, positions are the document's.
    pub fn of_line(text: &'a str, line: u32) -> LineIndex<'a> {
        LineIndex { text, line_starts: vec![0], first_line: line }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line];
        let character = self.text.get(start..offset).map_or(0, |s| s.encode_utf16().count());
        Position { line: self.first_line + line as u32, character: character as u32 }
    }

    pub fn range(&self, span: saffron_ide::Span) -> Range {
        Range { start: self.position(span.start), end: self.position(span.end) }
    }

    /// The byte offset of a position; a position past the end of its line clamps to the line's
    /// end, and past the last line to the end of the text.
    pub fn offset(&self, position: Position) -> usize {
        let Some(line) = position.line.checked_sub(self.first_line) else { return 0 };
        let Some(&start) = self.line_starts.get(line as usize) else { return self.text.len() };
        let line_end = self.line_starts.get(line as usize + 1).map_or(self.text.len(), |next| next - 1);
        let line = &self.text[start..line_end];
        let mut units = 0u32;
        for (index, c) in line.char_indices() {
            if units >= position.character {
                return start + index;
            }
            units += c.len_utf16() as u32;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        start + line.len()
    }

    pub fn span(&self, range: Range) -> saffron_ide::Span {
        let start = self.offset(range.start);
        let end = self.offset(range.end).max(start);
        saffron_ide::Span::new(start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip() {
        let text = "Fonctionnalité: é\n  Soit 😀 x\r\n";
        let index = LineIndex::new(text);
        let x = text.find('x').expect("x");
        let position = index.position(x);
        // "  Soit " is 7 units, the emoji 2, the space 1.
        assert_eq!(position, Position { line: 1, character: 10 });
        assert_eq!(index.offset(position), x);
        assert_eq!(index.offset(Position { line: 1, character: 99 }), text.len() - 2);
        assert_eq!(index.offset(Position { line: 9, character: 0 }), text.len());
    }

    #[test]
    fn a_line_alone_maps_to_its_place_in_the_document() {
        let index = LineIndex::of_line("  Soit 😀 x", 41);
        let x = "  Soit 😀 x".find('x').expect("x");
        assert_eq!(index.position(x), Position { line: 41, character: 10 });
        assert_eq!(index.offset(Position { line: 41, character: 10 }), x);
        assert_eq!(index.range(saffron_ide::Span::new(2, x)).start, Position { line: 41, character: 2 });
    }
}
