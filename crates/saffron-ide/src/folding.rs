//! Folding: blocks, data tables, doc strings and runs of comments.

use saffron_syntax::{Document, FeatureChild, RuleChild, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldKind {
    Region,
    Comment,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoldingRange {
    pub span: Span,
    pub kind: FoldKind,
}

pub fn folding_ranges(document: &Document, text: &str) -> Vec<FoldingRange> {
    let mut out = Vec::new();
    let mut region = |span: Span| {
        if text.get(span.start..span.end).is_some_and(|t| t.contains('\n')) {
            out.push(FoldingRange { span, kind: FoldKind::Region });
        }
    };
    if let Some(feature) = &document.feature {
        region(feature.span);
        let scenario = |scenario: &saffron_syntax::Scenario, region: &mut dyn FnMut(Span)| {
            region(scenario.span);
            for examples in &scenario.examples {
                region(examples.span);
            }
        };
        for child in &feature.children {
            match child {
                FeatureChild::Background(background) => region(background.span),
                FeatureChild::Scenario(s) => scenario(s, &mut region),
                FeatureChild::Rule(rule) => {
                    region(rule.span);
                    for child in &rule.children {
                        match child {
                            RuleChild::Background(background) => region(background.span),
                            RuleChild::Scenario(s) => scenario(s, &mut region),
                        }
                    }
                }
            }
        }
        for step in document.steps() {
            if let Some(table) = &step.data_table {
                region(table.span);
            }
            if let Some(doc) = &step.doc_string {
                region(doc.span);
            }
        }
    }
    // Consecutive comment lines fold together.
    let mut run: Option<Span> = None;
    let mut previous_line_end = None;
    for comment in &document.comments {
        let follows = previous_line_end
            .is_some_and(|end: usize| matches!(text.get(end..comment.span.start), Some("\n" | "\r\n")));
        run = match run {
            Some(span) if follows => Some(span.cover(comment.span)),
            Some(span) => {
                if text.get(span.start..span.end).is_some_and(|t| t.contains('\n')) {
                    out.push(FoldingRange { span, kind: FoldKind::Comment });
                }
                Some(comment.span)
            }
            None => Some(comment.span),
        };
        previous_line_end = Some(comment.span.end);
    }
    if let Some(span) = run
        && text.get(span.start..span.end).is_some_and(|t| t.contains('\n'))
    {
        out.push(FoldingRange { span, kind: FoldKind::Comment });
    }
    out.sort_by_key(|range| (range.span.start, range.span.end));
    out
}
