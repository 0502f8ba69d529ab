//! The AST builder: the blocks the state machine opens and closes, assembled into a [`Document`].

use crate::ast::*;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::lexer::{self, Line};

#[derive(Debug)]
struct DocStringBuilder {
    location: Location,
    start: usize,
    delimiter: &'static str,
    media_type: Option<String>,
    lines: Vec<String>,
}

#[derive(Debug, Default)]
struct DescriptionBuilder {
    /// (text, span, blank)
    lines: Vec<(String, Span, bool)>,
}

impl DescriptionBuilder {
    fn finish(self) -> Description {
        let mut lines = self.lines;
        while lines.last().is_some_and(|(_, _, blank)| *blank) {
            lines.pop();
        }
        let span = match (lines.first(), lines.last()) {
            (Some(first), Some(last)) => Some(first.1.cover(last.1)),
            _ => None,
        };
        let text = lines.iter().map(|(text, _, _)| text.as_str()).collect::<Vec<_>>().join("\n");
        Description { text, span }
    }
}

/// Builds the tree as the state machine moves. Blocks stay open until a line that belongs to a
/// sibling or a parent arrives; closing a block moves it into its parent.
#[derive(Debug, Default)]
pub(super) struct Builder {
    feature: Option<Feature>,
    rule: Option<Rule>,
    background: Option<Background>,
    scenario: Option<Scenario>,
    examples: Option<Examples>,
    step: Option<Step>,
    table: Vec<crate::ast::TableRow>,
    doc: Option<DocStringBuilder>,
    description: Option<DescriptionBuilder>,
    pending_tags: Vec<Tag>,
    comments: Vec<crate::ast::Comment>,
    language_header: Option<LanguageHeader>,
    /// End of the last non-blank, non-comment line read, for block spans.
    content_end: usize,
    /// Syntax errors in the order they were found.
    errors: Vec<Diagnostic>,
    /// (position, message) of each error, so a file with many is not searched for each.
    reported: std::collections::HashSet<(crate::ast::Location, String)>,
}

impl Builder {
    pub(super) fn note_content(&mut self, end: usize) {
        self.content_end = self.content_end.max(end);
    }

    pub(super) fn take_tags(&mut self) -> Vec<Tag> {
        std::mem::take(&mut self.pending_tags)
    }

    pub(super) fn block_start(&self, header: &Header, tags: &[Tag]) -> usize {
        tags.first().map_or(header.line_span.start, |tag| tag.span.start.min(header.line_span.start))
    }

    /// A block's header from its title line, read with `keyword`.
    pub(super) fn header(line: &Line<'_>, keyword: &str) -> Header {
        let keyword_start = line.content_start();
        let name = line.rest_trimmed(keyword.len() + 1);
        let name_span = if name.is_empty() {
            let after_colon = keyword_start + keyword.len() + 1;
            Span::new(after_colon, after_colon)
        } else {
            line.span_of(name)
        };
        let name_offset = (name_span.start - keyword_start).min(line.trimmed.len());
        let name_column = line.indent + 1 + line.trimmed.get(..name_offset).map_or(0, |s| s.chars().count() as u32);
        let name_location = Location { line: line.number, column: name_column };
        Header {
            location: line.location(),
            keyword: keyword.to_string(),
            keyword_span: Span::new(keyword_start, keyword_start + keyword.len()),
            name: name.to_string(),
            name_span,
            name_location,
            line_span: line.content_span(),
        }
    }

    pub(super) fn comment(&mut self, line: &Line<'_>) {
        self.comments.push(Comment {
            location: Location { line: line.number, column: 1 },
            span: Span::new(line.start, line.end()),
            text: line.text.to_string(),
        });
    }

    pub(super) fn language_header(&mut self, line: &Line<'_>, language: String) {
        self.language_header = Some(LanguageHeader { location: line.location(), span: line.content_span(), language });
    }

    /// Tags read on a line ending at `line_end`, for the next block to take.
    pub(super) fn tags(&mut self, line_end: usize, tags: Vec<Tag>) {
        self.note_content(line_end);
        self.pending_tags.extend(tags);
    }

    /// The line the open doc string started on.
    pub(super) fn open_doc_string_line(&self) -> Option<u32> {
        self.doc.as_ref().map(|doc| doc.location.line)
    }

    pub(super) fn start_feature(&mut self, header: Header, language: String) {
        let tags = self.take_tags();
        let start = self.block_start(&header, &tags);
        self.note_content(header.line_span.end);
        self.feature = Some(Feature {
            span: Span::new(start, header.line_span.end),
            header,
            tags,
            description: Description::default(),
            language,
            children: Vec::new(),
        });
    }

    pub(super) fn start_rule(&mut self, header: Header) {
        let tags = self.take_tags();
        let start = self.block_start(&header, &tags);
        self.note_content(header.line_span.end);
        self.rule = Some(Rule {
            span: Span::new(start, header.line_span.end),
            header,
            tags,
            description: Description::default(),
            children: Vec::new(),
        });
    }

    pub(super) fn start_background(&mut self, header: Header) {
        self.note_content(header.line_span.end);
        self.background =
            Some(Background { span: header.line_span, header, description: Description::default(), steps: Vec::new() });
    }

    pub(super) fn start_scenario(&mut self, kind: ScenarioKind, header: Header) {
        let tags = self.take_tags();
        let start = self.block_start(&header, &tags);
        self.note_content(header.line_span.end);
        self.scenario = Some(Scenario {
            kind,
            span: Span::new(start, header.line_span.end),
            header,
            tags,
            description: Description::default(),
            steps: Vec::new(),
            examples: Vec::new(),
        });
    }

    pub(super) fn start_examples(&mut self, header: Header) {
        let tags = self.take_tags();
        let start = self.block_start(&header, &tags);
        self.note_content(header.line_span.end);
        self.examples = Some(Examples {
            span: Span::new(start, header.line_span.end),
            header,
            tags,
            description: Description::default(),
            table_header: None,
            table_body: Vec::new(),
        });
    }

    pub(super) fn start_step(&mut self, line: &Line<'_>, matched: &lexer::StepMatch<'_>) {
        let keyword_start = line.content_start();
        let text = line.rest_trimmed(matched.keyword.len());
        let text_span = if text.is_empty() {
            let end = line.content_span().end;
            Span::new(end, end)
        } else {
            line.span_of(text)
        };
        let span = line.content_span();
        let text_offset = (text_span.start - keyword_start).min(line.trimmed.len());
        let text_location = Location {
            line: line.number,
            column: line.indent + 1 + line.trimmed.get(..text_offset).map_or(0, |s| s.chars().count() as u32),
        };
        self.note_content(span.end);
        self.step = Some(Step {
            location: line.location(),
            keyword: matched.keyword.to_string(),
            keyword_type: matched.keyword_type,
            keyword_span: Span::new(keyword_start, keyword_start + matched.keyword.len()),
            text: text.to_string(),
            text_span,
            text_location,
            data_table: None,
            doc_string: None,
            is_invocation: matched.is_invocation,
            span,
        });
    }

    pub(super) fn description_line(&mut self, line: &Line<'_>) {
        let blank = line.is_blank();
        if !blank {
            self.note_content(line.content_span().end);
        }
        let span = if blank { Span::new(line.start, line.start) } else { line.content_span() };
        self.description.get_or_insert_with(DescriptionBuilder::default).lines.push((
            line.text.to_string(),
            span,
            blank,
        ));
    }

    /// Gives the open description to the innermost open block.
    pub(super) fn flush_description(&mut self) {
        let Some(builder) = self.description.take() else {
            return;
        };
        let description = builder.finish();
        if let Some(examples) = &mut self.examples {
            examples.description = description;
        } else if let Some(scenario) = &mut self.scenario {
            scenario.description = description;
        } else if let Some(background) = &mut self.background {
            background.description = description;
        } else if let Some(rule) = &mut self.rule {
            rule.description = description;
        } else if let Some(feature) = &mut self.feature {
            feature.description = description;
        }
    }

    pub(super) fn table_row(&mut self, row: crate::ast::TableRow) {
        self.note_content(row.span.end);
        self.table.push(row);
    }

    /// Reports a problem once: the reference parser drops an error whose message and position
    /// it already holds.
    pub(super) fn add_error(&mut self, error: Diagnostic) {
        if self.reported.insert((error.location, error.message.clone())) {
            self.errors.push(error);
        }
    }

    /// Checks a table's cell counts.
    pub(super) fn check_cells(&mut self, rows: &[crate::ast::TableRow]) {
        let Some(first) = rows.first() else { return };
        let expected = first.cells.len();
        for row in rows {
            if row.cells.len() != expected {
                let error = Diagnostic::error(
                    DiagnosticCode::InconsistentCellCount,
                    row.location,
                    row.span,
                    "inconsistent cell count within the table",
                )
                .with_hint(format!(
                    "every row needs {expected} cell(s) like the first row; this one has {}; end each row with '|' and \
                     escape a literal pipe as '\\|'",
                    row.cells.len()
                ));
                self.add_error(error);
                // The reference parser stops checking a table at its first bad row.
                return;
            }
        }
    }

    /// Moves the open data table into the open step.
    pub(super) fn close_table(&mut self) {
        if self.table.is_empty() || self.step.is_none() {
            return;
        }
        let rows = std::mem::take(&mut self.table);
        self.check_cells(&rows);
        if let Some(step) = &mut self.step {
            let span = rows[0].span.cover(rows[rows.len() - 1].span);
            step.span = step.span.cover(span);
            step.data_table = Some(DataTable { location: rows[0].location, rows, span });
        }
    }

    pub(super) fn open_doc_string(&mut self, line: &Line<'_>, delimiter: &'static str, media_type: Option<String>) {
        self.note_content(line.content_span().end);
        self.doc = Some(DocStringBuilder {
            location: line.location(),
            start: line.content_start(),
            delimiter,
            media_type,
            lines: Vec::new(),
        });
    }

    pub(super) fn doc_string_line(&mut self, text: String, line: &Line<'_>) {
        self.note_content(line.end());
        if let Some(doc) = &mut self.doc {
            doc.lines.push(text);
        }
    }

    pub(super) fn close_doc_string(&mut self, line: &Line<'_>) {
        let end = line.content_span().end;
        self.note_content(end);
        self.finish_doc_string(end);
    }

    /// An unterminated doc string is kept, so an editor still sees its content.
    pub(super) fn abandon_doc_string(&mut self) {
        self.finish_doc_string(self.content_end);
    }

    /// Moves the open doc string, ending at `end`, into the open step.
    pub(super) fn finish_doc_string(&mut self, end: usize) {
        let Some(doc) = self.doc.take() else { return };
        let span = Span::new(doc.start, end.max(doc.start));
        if let Some(step) = &mut self.step {
            step.span = step.span.cover(span);
            step.doc_string = Some(DocString {
                location: doc.location,
                delimiter: doc.delimiter.to_string(),
                media_type: doc.media_type,
                content: doc.lines.join("\n"),
                span,
            });
        }
    }

    pub(super) fn close_step(&mut self) {
        self.abandon_doc_string();
        if self.step.is_some() {
            self.close_table();
        }
        let Some(step) = self.step.take() else { return };
        if let Some(background) = &mut self.background {
            background.span = background.span.cover(step.span);
            background.steps.push(step);
        } else if let Some(scenario) = &mut self.scenario {
            scenario.span = scenario.span.cover(step.span);
            scenario.steps.push(step);
        }
    }

    pub(super) fn close_examples(&mut self) {
        let Some(mut examples) = self.examples.take() else {
            return;
        };
        let rows = std::mem::take(&mut self.table);
        self.check_cells(&rows);
        let mut rows = rows.into_iter();
        examples.table_header = rows.next();
        examples.table_body = rows.collect();
        if let Some(last) = examples.table_body.last().or(examples.table_header.as_ref()) {
            examples.span = examples.span.cover(last.span);
        }
        if let Some(span) = examples.description.span {
            examples.span = examples.span.cover(span);
        }
        if let Some(scenario) = &mut self.scenario {
            scenario.span = scenario.span.cover(examples.span);
            scenario.examples.push(examples);
        }
    }

    pub(super) fn close_scenario(&mut self) {
        self.close_step();
        self.close_examples();
        let Some(mut scenario) = self.scenario.take() else {
            return;
        };
        if let Some(span) = scenario.description.span {
            scenario.span = scenario.span.cover(span);
        }
        self.attach(scenario.span, RuleChild::Scenario(scenario));
    }

    pub(super) fn close_background(&mut self) {
        self.close_step();
        let Some(mut background) = self.background.take() else {
            return;
        };
        if let Some(span) = background.description.span {
            background.span = background.span.cover(span);
        }
        self.attach(background.span, RuleChild::Background(background));
    }

    /// Hands a closed Background or Scenario to the open rule, or else to the feature.
    pub(super) fn attach(&mut self, span: Span, child: RuleChild) {
        if let Some(rule) = &mut self.rule {
            rule.span = rule.span.cover(span);
            rule.children.push(child);
        } else if let Some(feature) = &mut self.feature {
            feature.span = feature.span.cover(span);
            feature.children.push(match child {
                RuleChild::Background(background) => FeatureChild::Background(background),
                RuleChild::Scenario(scenario) => FeatureChild::Scenario(scenario),
            });
        }
    }

    /// Closes everything up to the feature or the open rule, which then takes a new child.
    pub(super) fn close_to_container(&mut self) {
        self.close_background();
        self.close_scenario();
    }

    pub(super) fn close_rule(&mut self) {
        self.close_to_container();
        let Some(mut rule) = self.rule.take() else {
            return;
        };
        if let Some(span) = rule.description.span {
            rule.span = rule.span.cover(span);
        }
        if let Some(feature) = &mut self.feature {
            feature.span = feature.span.cover(rule.span);
            feature.children.push(FeatureChild::Rule(rule));
        }
    }

    pub(super) fn close_all(&mut self) {
        self.flush_description();
        self.close_rule();
        if let Some(feature) = &mut self.feature
            && let Some(span) = feature.description.span
        {
            feature.span = feature.span.cover(span);
        }
    }

    pub(super) fn finish(mut self, source_kind: SourceKind) -> (Document, Vec<Diagnostic>) {
        self.close_all();
        let document = Document {
            source_kind,
            feature: self.feature,
            comments: self.comments,
            language_header: self.language_header,
        };
        (document, self.errors)
    }
}
