//! The tree-sitter view of a document: reparsed incrementally as the editor sends edits, and
//! the source of semantic tokens (the grammar's own highlight query), so highlighting a large
//! file costs the edit, not the file.

use std::sync::OnceLock;

use saffron_syntax::Span;
use tree_sitter::{InputEdit, Parser, Point, Query, QueryCursor, StreamingIterator, Tree};

use saffron_syntax::step_text::lex;

use crate::semantic_tokens::{SemanticToken, TokenType, value_kind};

fn query() -> Option<&'static Query> {
    static QUERY: OnceLock<Option<Query>> = OnceLock::new();
    QUERY
        .get_or_init(|| Query::new(&tree_sitter_saffron::LANGUAGE.into(), tree_sitter_saffron::HIGHLIGHTS_QUERY).ok())
        .as_ref()
}

fn parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_saffron::LANGUAGE.into()).ok()?;
    Some(parser)
}

/// A document's syntax tree.
#[derive(Clone)]
pub struct SyntaxTree {
    tree: Tree,
}

/// An edit in the terms tree-sitter needs: byte offsets and (row, byte column) points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextChange {
    pub start_byte: usize,
    pub old_end_byte: usize,
    pub new_end_byte: usize,
    pub start: (usize, usize),
    pub old_end: (usize, usize),
    pub new_end: (usize, usize),
}

impl SyntaxTree {
    pub fn parse(text: &str) -> Option<SyntaxTree> {
        Some(SyntaxTree { tree: parser()?.parse(text, None)? })
    }

    /// Records an edit; call [`SyntaxTree::reparse`] with the new text after the edits.
    pub fn edit(&mut self, change: &TextChange) {
        let point = |(row, column): (usize, usize)| Point { row, column };
        self.tree.edit(&InputEdit {
            start_byte: change.start_byte,
            old_end_byte: change.old_end_byte,
            new_end_byte: change.new_end_byte,
            start_position: point(change.start),
            old_end_position: point(change.old_end),
            new_end_position: point(change.new_end),
        });
    }

    /// Parses the edited text, reusing every part of the old tree the edits did not touch.
    pub fn reparse(&mut self, text: &str) {
        if let Some(tree) = parser().and_then(|mut parser| parser.parse(text, Some(&self.tree))) {
            self.tree = tree;
        }
    }

    /// The tree as an S-expression (for tests).
    pub fn sexp(&self) -> String {
        self.tree.root_node().to_sexp()
    }

    /// Semantic tokens from the grammar's highlight query. Nested captures win over the ones
    /// they sit in (a placeholder inside step text); quoted values and numbers inside step
    /// text are picked out too. Tokens never cross a line.
    pub fn semantic_tokens(&self, text: &str) -> Vec<SemanticToken> {
        let Some(query) = query() else { return Vec::new() };
        let mut captures: Vec<(usize, usize, TokenType)> = Vec::new();
        let mut cursor = QueryCursor::new();
        let mut matches = cursor.captures(query, self.tree.root_node(), text.as_bytes());
        while let Some((found, index)) = matches.next() {
            let capture = found.captures()[*index];
            let name = query.capture_names()[capture.index as usize];
            let node = capture.node;
            let kind = match (name, node.kind()) {
                (_, "step_text") => Some(TokenType::Function),
                (_, "table_cell") => Some(TokenType::Variable),
                ("comment" | "comment.documentation" | "string.special", _) => Some(TokenType::Comment),
                ("keyword" | "keyword.directive" | "keyword.operator", _) => Some(TokenType::Keyword),
                ("markup.heading" | "function" | "function.call", _) => Some(TokenType::Namespace),
                ("attribute" | "label", _) => Some(TokenType::Decorator),
                ("variable.parameter", _) => Some(TokenType::Parameter),
                ("string" | "string.escape" | "markup.raw.block", _) => Some(TokenType::String),
                _ => None,
            };
            if let Some(kind) = kind {
                captures.push((node.start_byte(), node.end_byte(), kind));
            }
        }
        // Paint larger spans first so the nested ones override them.
        captures.sort_by_key(|&(start, end, _)| (std::cmp::Reverse(end - start), start));
        let mut paint: Vec<Option<TokenType>> = vec![None; text.len()];
        for &(start, end, kind) in &captures {
            let end = end.min(text.len());
            for slot in paint.iter_mut().take(end).skip(start) {
                *slot = Some(kind);
            }
            if kind == TokenType::Function {
                paint_values(text, start, end, &mut paint);
            }
        }
        tokens_from_paint(text, &paint)
    }
}

/// Quoted values and numbers inside step text, as [`saffron_syntax::step_text`] cuts it (the
/// grammar already marks placeholders).
fn paint_values(text: &str, start: usize, end: usize, paint: &mut [Option<TokenType>]) {
    for token in lex(&text[start..end]) {
        let kind = match value_kind(token.kind) {
            Some(kind @ (TokenType::String | TokenType::Number)) => kind,
            _ => continue,
        };
        for slot in &mut paint[start + token.start..start + token.end()] {
            if *slot == Some(TokenType::Function) {
                *slot = Some(kind);
            }
        }
    }
}

fn tokens_from_paint(text: &str, paint: &[Option<TokenType>]) -> Vec<SemanticToken> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < paint.len() {
        let Some(kind) = paint[index] else {
            index += 1;
            continue;
        };
        let mut end = index;
        while end < paint.len() && paint[end] == Some(kind) && bytes[end] != b'\n' {
            end += 1;
        }
        // Whitespace at the edges is not part of a token.
        let slice = &text[index..end];
        let start = index + (slice.len() - slice.trim_start().len());
        let stop = index + slice.trim_end().len();
        if stop > start && text.is_char_boundary(start) && text.is_char_boundary(stop) {
            tokens.push(SemanticToken { span: Span::new(start, stop), kind });
        }
        index = end.max(index + 1);
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str) -> Vec<String> {
        SyntaxTree::parse(text)
            .expect("parses")
            .semantic_tokens(text)
            .iter()
            .map(|t| format!("{:?} {:?}", t.kind, &text[t.span.start..t.span.end]))
            .collect()
    }

    #[test]
    fn tokens_from_the_highlight_query() {
        let text = "@tag\nFeature: F\n  Scenario: S\n    Given I add 2 \"tea\" for <who>\n      | a |\n";
        assert_eq!(
            render(text),
            [
                "Decorator \"@tag\"",
                "Keyword \"Feature\"",
                "Namespace \"F\"",
                "Keyword \"Scenario\"",
                "Namespace \"S\"",
                "Keyword \"Given\"",
                "Function \"I add\"",
                "Number \"2\"",
                "String \"\\\"tea\\\"\"",
                "Function \"for\"",
                "Parameter \"<who>\"",
                "Variable \"a\"",
            ]
        );
    }

    #[test]
    fn incremental_reparse_equals_a_fresh_parse() {
        let before = "Feature: F\n  Scenario: S\n    Given a\n";
        let mut tree = SyntaxTree::parse(before).expect("parses");
        let insert_at = before.find("Given a").expect("step") + "Given a".len();
        let after = format!("{}nd b{}", &before[..insert_at], &before[insert_at..]);
        tree.edit(&TextChange {
            start_byte: insert_at,
            old_end_byte: insert_at,
            new_end_byte: insert_at + 4,
            start: (2, 11),
            old_end: (2, 11),
            new_end: (2, 15),
        });
        tree.reparse(&after);
        assert_eq!(tree.sexp(), SyntaxTree::parse(&after).expect("parses").sexp());
    }
}
