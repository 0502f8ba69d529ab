//! Semantic tokens: keywords, tags, comments, step text with its `<placeholders>` and quoted
//! values, StepSet names, table cells and doc strings. Spans never cross a line.

use saffron_syntax::step_text::{StepTokenKind, lex};
use saffron_syntax::{Document, Span, Step};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenType {
    Keyword,
    Comment,
    /// Tags.
    Decorator,
    /// Step text.
    Function,
    /// `<placeholder>`.
    Parameter,
    /// Quoted values and doc string content.
    String,
    /// Numbers in step text.
    Number,
    /// StepSet and scenario names.
    Namespace,
    /// Table cells.
    Variable,
}

impl TokenType {
    /// The legend, in the order `index()` uses.
    pub const ALL: [TokenType; 9] = [
        TokenType::Keyword,
        TokenType::Comment,
        TokenType::Decorator,
        TokenType::Function,
        TokenType::Parameter,
        TokenType::String,
        TokenType::Number,
        TokenType::Namespace,
        TokenType::Variable,
    ];

    pub fn index(self) -> u32 {
        Self::ALL.iter().position(|t| *t == self).unwrap_or(0) as u32
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SemanticToken {
    pub span: Span,
    pub kind: TokenType,
}

pub fn semantic_tokens(document: &Document, text: &str) -> Vec<SemanticToken> {
    let mut out = Vec::new();
    let mut push = |span: Span, kind: TokenType| {
        if !span.is_empty() && span.end <= text.len() {
            out.push(SemanticToken { span, kind });
        }
    };
    for comment in &document.comments {
        push(trimmed(text, comment.span), TokenType::Comment);
    }
    if let Some(header) = &document.language_header {
        push(header.span, TokenType::Comment);
    }
    if let Some(feature) = &document.feature {
        let header = |h: &saffron_syntax::Header, name_kind: TokenType, push: &mut dyn FnMut(Span, TokenType)| {
            push(Span::new(h.keyword_span.start, (h.keyword_span.end + 1).min(h.line_span.end)), TokenType::Keyword);
            push(h.name_span, name_kind);
        };
        for tag in &feature.tags {
            push(tag.span, TokenType::Decorator);
        }
        header(&feature.header, TokenType::Namespace, &mut push);
        let mut scenario_blocks = Vec::new();
        for child in &feature.children {
            match child {
                saffron_syntax::FeatureChild::Background(background) => {
                    header(&background.header, TokenType::Namespace, &mut push)
                }
                saffron_syntax::FeatureChild::Scenario(scenario) => scenario_blocks.push(scenario),
                saffron_syntax::FeatureChild::Rule(rule) => {
                    for tag in &rule.tags {
                        push(tag.span, TokenType::Decorator);
                    }
                    header(&rule.header, TokenType::Namespace, &mut push);
                    for child in &rule.children {
                        match child {
                            saffron_syntax::RuleChild::Background(background) => {
                                header(&background.header, TokenType::Namespace, &mut push)
                            }
                            saffron_syntax::RuleChild::Scenario(scenario) => scenario_blocks.push(scenario),
                        }
                    }
                }
            }
        }
        for scenario in scenario_blocks {
            for tag in &scenario.tags {
                push(tag.span, TokenType::Decorator);
            }
            header(&scenario.header, TokenType::Namespace, &mut push);
            for examples in &scenario.examples {
                for tag in &examples.tags {
                    push(tag.span, TokenType::Decorator);
                }
                header(&examples.header, TokenType::Namespace, &mut push);
                for row in examples.table_header.iter() {
                    for cell in &row.cells {
                        push(cell.span, TokenType::Parameter);
                    }
                }
                for row in &examples.table_body {
                    for cell in &row.cells {
                        push(cell.span, TokenType::Variable);
                    }
                }
            }
        }
        for step in document.steps() {
            step_tokens(step, text, &mut push);
        }
    }
    out.sort_by_key(|token| (token.span.start, token.span.end));
    out.dedup_by(|later, earlier| later.span.start < earlier.span.end);
    out
}

/// How a value of step text is shown; `None` for the plain words between values.
pub(crate) fn value_kind(kind: StepTokenKind) -> Option<TokenType> {
    match kind {
        StepTokenKind::Placeholder => Some(TokenType::Parameter),
        StepTokenKind::Quoted(_) => Some(TokenType::String),
        StepTokenKind::Number => Some(TokenType::Number),
        StepTokenKind::Word | StepTokenKind::Other => None,
    }
}

fn trimmed(text: &str, span: Span) -> Span {
    let slice = &text[span.start..span.end];
    let start = span.start + (slice.len() - slice.trim_start().len());
    Span::new(start, start + slice.trim().len())
}

fn step_tokens(step: &Step, text: &str, push: &mut dyn FnMut(Span, TokenType)) {
    push(
        Span::new(step.keyword_span.start, step.keyword_span.start + step.keyword.trim_end().len()),
        TokenType::Keyword,
    );
    if step.is_invocation {
        push(step.text_span, TokenType::Namespace);
    } else {
        // Step text in pieces: placeholders, quoted values and numbers stand out.
        let start = step.text_span.start;
        let mut plain_from = 0;
        let flush = |from: usize, to: usize, push: &mut dyn FnMut(Span, TokenType)| {
            if to > from {
                push(Span::new(start + from, start + to), TokenType::Function);
            }
        };
        for token in lex(&text[step.text_span.start..step.text_span.end]) {
            let Some(kind) = value_kind(token.kind) else { continue };
            flush(plain_from, token.start, push);
            push(Span::new(start + token.start, start + token.end()), kind);
            plain_from = token.end();
        }
        flush(plain_from, step.text_span.len(), push);
    }
    if let Some(table) = &step.data_table {
        for row in &table.rows {
            for cell in &row.cells {
                push(cell.span, TokenType::Variable);
            }
        }
    }
    if let Some(doc) = &step.doc_string {
        let mut offset = doc.span.start;
        for line in text[doc.span.start..doc.span.end].split('\n') {
            let span = trimmed(text, Span::new(offset, offset + line.len()));
            push(span, TokenType::String);
            offset += line.len() + 1;
        }
    }
}
