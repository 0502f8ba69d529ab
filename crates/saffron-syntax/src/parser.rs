//! The Gherkin parser: a line-driven state machine with the reference grammar's behaviour.
//!
//! Each state lists the kinds of line it accepts, in the order Cucumber's generated parser tries
//! them; that order decides which reading wins when a line could be several things, and it is
//! also the "expected: ..." list of an error. A line that fits nowhere is reported and skipped,
//! and parsing goes on from the same state, so a half-typed file still yields a full tree.
//!
//! As in Cucumber's implementations, the state machine and the tree are apart: [`states`] says
//! which line kind is legal where, this module matches lines and moves between states, and
//! [`ast_builder`] assembles the document from the blocks it is told to open and close (it never
//! sees a state, and the state machine never touches the tree).

use crate::ast::*;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::dialect::{self, Dialect};
use crate::lexer::{self, FIXTURE_KEYWORD, Line, STEP_SET_KEYWORD};

mod ast_builder;
mod states;

use ast_builder::Builder;
use states::Kind::{self, *};
use states::{State, StepArg, StepContext, candidates};

/// The result of parsing one file: the tree (always) and the problems found.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub document: Document,
    /// Syntax errors in the order the reference parser reports them.
    pub errors: Vec<Diagnostic>,
}

/// Parses `.feature` or `.saffron` text.
pub fn parse(source: &str, source_kind: SourceKind) -> Parsed {
    let lines = lexer::split_lines(source);
    let mut parser = Parser {
        lines: &lines,
        source_kind,
        dialect: dialect::default_dialect(),
        doc_separator: None,
        doc_indent: 0,
        builder: Builder::default(),
    };
    let mut state = State::Start;
    let mut index = 0;
    loop {
        state = parser.advance(state, index);
        if index >= lines.len() {
            break;
        }
        index += 1;
    }
    let (document, errors) = parser.builder.finish(source_kind);
    Parsed { document, errors }
}

/// How a matched line was read.
enum Token<'d> {
    Title { keyword: &'d str, scenario_kind: ScenarioKind },
    Step(lexer::StepMatch<'d>),
    Tags(Vec<Tag>),
    DocStringSeparator { delimiter: &'static str, media_type: Option<String>, opens: bool },
    Language(String),
    Plain,
}

struct Parser<'s, 'l> {
    lines: &'l [Line<'s>],
    source_kind: SourceKind,
    dialect: &'static Dialect,
    /// The delimiter of the open doc string.
    doc_separator: Option<&'static str>,
    doc_indent: u32,
    builder: Builder,
}

impl<'s> Parser<'s, '_> {
    fn add_error(&mut self, error: Diagnostic) {
        self.builder.add_error(error);
    }

    /// Reads line `index` (or the end of the file) in `state`; returns the next state.
    fn advance(&mut self, state: State, index: usize) -> State {
        let line = self.lines.get(index).copied();
        for &kind in candidates(state) {
            let Some(token) = self.try_match(kind, line.as_ref(), state) else {
                continue;
            };
            if kind == TagLine {
                return self.on_tag_line(state, index, token);
            }
            return self.transition(state, kind, line.as_ref(), token);
        }
        self.report_unexpected(state, line.as_ref());
        state
    }

    fn try_match(&mut self, kind: Kind, line: Option<&Line<'s>>, state: State) -> Option<Token<'static>> {
        let Some(line) = line else {
            return (kind == Eof).then_some(Token::Plain);
        };
        match kind {
            Eof => None,
            Empty => line.is_blank().then_some(Token::Plain),
            Comment => line.trimmed.starts_with('#').then_some(Token::Plain),
            TagLine => {
                if !line.trimmed.starts_with('@') {
                    return None;
                }
                match lexer::tags(line) {
                    Ok(tags) => Some(Token::Tags(tags)),
                    Err(location) => {
                        let span = line.content_span();
                        self.add_error(
                            Diagnostic::error(
                                DiagnosticCode::TagWhitespace,
                                location,
                                span,
                                "A tag may not contain whitespace",
                            )
                            .with_hint("write the tag as one word, such as @work-in-progress or @work_in_progress"),
                        );
                        None
                    }
                }
            }
            FeatureLine => self.title(line, &self.dialect.feature, ScenarioKind::Scenario),
            RuleLine => self.title(line, &self.dialect.rule, ScenarioKind::Scenario),
            BackgroundLine => self.title(line, &self.dialect.background, ScenarioKind::Scenario),
            ExamplesLine => self.title(line, &self.dialect.examples, ScenarioKind::Scenario),
            ScenarioLine => {
                if let Some(keyword) = lexer::match_title(line, self.dialect.scenario_keywords()) {
                    return Some(Token::Title { keyword, scenario_kind: ScenarioKind::Scenario });
                }
                let dialect_blocks =
                    [(STEP_SET_KEYWORD, ScenarioKind::StepSet), (FIXTURE_KEYWORD, ScenarioKind::Fixture)];
                dialect_blocks.into_iter().find_map(|(keyword, scenario_kind)| {
                    lexer::match_title(line, [keyword]).map(|keyword| Token::Title { keyword, scenario_kind })
                })
            }
            StepLine => lexer::match_step(line, self.dialect).map(Token::Step),
            DocStringSeparator => self.match_doc_string_separator(line),
            TableRow => line.trimmed.starts_with('|').then_some(Token::Plain),
            Language => {
                let code = lexer::match_language(line)?;
                match dialect::dialect(code) {
                    Some(dialect) => {
                        self.dialect = dialect;
                        Some(Token::Language(code.to_string()))
                    }
                    None => {
                        self.add_error(
                            Diagnostic::error(
                                DiagnosticCode::UnknownLanguage,
                                line.location(),
                                line.content_span(),
                                format!("Language not supported: {code}"),
                            )
                            .with_hint(language_hint(code)),
                        );
                        None
                    }
                }
            }
            Other => {
                let _ = state;
                Some(Token::Plain)
            }
        }
    }

    fn title(&self, line: &Line<'_>, keywords: &'static [String], kind: ScenarioKind) -> Option<Token<'static>> {
        lexer::match_title(line, keywords.iter().map(String::as_str))
            .map(|keyword| Token::Title { keyword, scenario_kind: kind })
    }

    fn match_doc_string_separator(&mut self, line: &Line<'_>) -> Option<Token<'static>> {
        match self.doc_separator {
            None => {
                let delimiter = ["\"\"\"", "```"].into_iter().find(|d| line.trimmed.starts_with(d))?;
                let media_type = line.rest_trimmed(delimiter.len());
                self.doc_separator = Some(delimiter);
                self.doc_indent = line.indent;
                Some(Token::DocStringSeparator {
                    delimiter,
                    media_type: (!media_type.is_empty()).then(|| media_type.to_string()),
                    opens: true,
                })
            }
            Some(delimiter) => {
                if !line.trimmed.starts_with(delimiter) {
                    return None;
                }
                self.doc_separator = None;
                self.doc_indent = 0;
                Some(Token::DocStringSeparator { delimiter, media_type: None, opens: false })
            }
        }
    }

    /// Does a line of `wanted` kind follow, past blank, comment and tag lines?
    fn lookahead(&mut self, index: usize, wanted: Kind) -> bool {
        for line in &self.lines[index + 1..] {
            let matched = match wanted {
                ExamplesLine => lexer::match_title(line, self.dialect.examples.iter().map(String::as_str)).is_some(),
                _ => self.try_match(ScenarioLine, Some(line), State::End).is_some(),
            };
            if matched {
                return true;
            }
            let skippable = line.is_blank()
                || line.trimmed.starts_with('#')
                || (line.trimmed.starts_with('@') && self.try_match(TagLine, Some(line), State::End).is_some());
            if !skippable {
                return false;
            }
        }
        false
    }

    /// A tag line belongs to the next Examples, Scenario or Rule: look ahead to see which.
    fn on_tag_line(&mut self, state: State, index: usize, token: Token<'_>) -> State {
        let Token::Tags(tags) = token else {
            return state;
        };
        let line_end = self.lines[index].content_span().end;
        let next = match state {
            State::FeatureTags | State::RuleTags | State::ScenarioTags { .. } | State::ExamplesTags { .. } => state,
            State::Start | State::AfterLanguage => State::FeatureTags,
            _ => {
                let in_rule = state.in_rule();
                self.builder.flush_description();
                if state.in_scenario() && self.lookahead(index, ExamplesLine) {
                    self.builder.close_step();
                    self.builder.close_examples();
                    State::ExamplesTags { in_rule }
                } else if self.lookahead(index, ScenarioLine) {
                    self.builder.close_to_container();
                    State::ScenarioTags { in_rule }
                } else {
                    self.builder.close_rule();
                    State::RuleTags
                }
            }
        };
        self.builder.tags(line_end, tags);
        next
    }

    fn transition(&mut self, state: State, kind: Kind, line: Option<&Line<'s>>, token: Token<'_>) -> State {
        let Some(line) = line else {
            self.builder.close_all();
            return State::End;
        };
        let in_rule = state.in_rule();
        match kind {
            Empty => state,
            Comment => {
                self.builder.comment(line);
                state.in_description()
            }
            Other => {
                if let State::DocString { .. } = state {
                    let text = line.text_without_indent(self.doc_indent);
                    self.builder.doc_string_line(unescape_doc_string(text, self.doc_separator), line);
                    return state;
                }
                self.builder.description_line(line);
                state.in_description()
            }
            Language => {
                if let Token::Language(language) = token {
                    self.builder.language_header(line, language);
                }
                State::AfterLanguage
            }
            FeatureLine => {
                let header = Builder::header(line, title_keyword(&token));
                self.builder.start_feature(header, self.dialect.code.clone());
                State::Feature { description: false }
            }
            RuleLine => {
                self.builder.flush_description();
                self.builder.close_rule();
                let header = Builder::header(line, title_keyword(&token));
                self.builder.start_rule(header);
                State::Rule { description: false }
            }
            BackgroundLine => {
                self.builder.flush_description();
                let header = Builder::header(line, title_keyword(&token));
                self.builder.start_background(header);
                State::Background { in_rule, description: false }
            }
            ScenarioLine => {
                self.builder.flush_description();
                self.builder.close_to_container();
                let header = Builder::header(line, title_keyword(&token));
                let scenario_kind = match token {
                    Token::Title { scenario_kind, .. } => scenario_kind,
                    _ => ScenarioKind::Scenario,
                };
                if scenario_kind != ScenarioKind::Scenario && self.source_kind == SourceKind::Feature {
                    self.dialect_in_feature_file(line, &format!("{}:", header.keyword));
                }
                self.builder.start_scenario(scenario_kind, header);
                State::Scenario { in_rule, description: false }
            }
            ExamplesLine => {
                self.builder.flush_description();
                self.builder.close_step();
                self.builder.close_examples();
                let header = Builder::header(line, title_keyword(&token));
                self.builder.start_examples(header);
                State::Examples { in_rule, description: false }
            }
            StepLine => {
                self.builder.flush_description();
                self.builder.close_step();
                let Token::Step(matched) = token else {
                    return state;
                };
                if matched.is_invocation && self.source_kind == SourceKind::Feature {
                    self.dialect_in_feature_file(line, "StepSet");
                }
                self.builder.start_step(line, &matched);
                let context = StepContext {
                    in_rule,
                    in_background: matches!(state, State::Background { .. })
                        || matches!(state, State::Step { context, .. } if context.in_background),
                };
                State::Step { context, arg: StepArg::None }
            }
            TableRow => {
                self.builder.flush_description();
                let cells = lexer::table_cells(line);
                let row = crate::ast::TableRow { location: line.location(), cells, span: line.content_span() };
                match state {
                    State::Step { context, arg } => {
                        let arg = match arg {
                            StepArg::None | StepArg::Table => StepArg::Table,
                            StepArg::DocString | StepArg::DocStringThenTable => StepArg::DocStringThenTable,
                            StepArg::TableThenDocString => StepArg::TableThenDocString,
                        };
                        self.builder.table_row(row);
                        State::Step { context, arg }
                    }
                    _ => {
                        self.builder.table_row(row);
                        State::ExamplesTable { in_rule }
                    }
                }
            }
            DocStringSeparator => {
                let Token::DocStringSeparator { delimiter, media_type, opens } = token else {
                    return state;
                };
                match state {
                    State::Step { context, arg } if opens => {
                        self.builder.close_table();
                        self.builder.open_doc_string(line, delimiter, media_type);
                        State::DocString { context, table_first: arg == StepArg::Table }
                    }
                    State::DocString { context, table_first } => {
                        self.builder.close_doc_string(line);
                        let arg = if table_first { StepArg::TableThenDocString } else { StepArg::DocString };
                        State::Step { context, arg }
                    }
                    other => other,
                }
            }
            TagLine | Eof => state,
        }
    }

    fn dialect_in_feature_file(&mut self, line: &Line<'_>, keyword: &str) {
        self.add_error(
            Diagnostic::error(
                DiagnosticCode::DialectInFeatureFile,
                line.location(),
                line.content_span(),
                format!("'{keyword}' is a .saffron keyword, not Gherkin"),
            )
            .with_hint("rename the file to .saffron: the dialect is a superset of Gherkin"),
        );
    }

    fn report_unexpected(&mut self, state: State, line: Option<&Line<'s>>) {
        let expected: Vec<&str> = candidates(state).iter().map(|kind| kind.name()).collect();
        let expected = expected.join(", ");
        let error = match line {
            None => {
                let line_number = self.lines.len() as u32 + 1;
                let end = self.lines.last().map_or(0, |line| line.end());
                Diagnostic::error(
                    DiagnosticCode::UnexpectedEof,
                    Location { line: line_number, column: 0 },
                    Span::new(end, end),
                    format!("unexpected end of file, expected: {expected}"),
                )
                .with_hint(eof_hint(state, &self.builder))
            }
            Some(line) => Diagnostic::error(
                DiagnosticCode::UnexpectedLine,
                line.location(),
                line.content_span(),
                format!("expected: {expected}, got '{}'", lexer::js_trim(line.text)),
            )
            .with_hint(unexpected_line_hint(state, line)),
        };
        self.add_error(error);
    }
}

/// The keyword a title line was read with (none for other lines).
fn title_keyword<'d>(token: &Token<'d>) -> &'d str {
    match token {
        Token::Title { keyword, .. } => keyword,
        _ => "",
    }
}

/// Cucumber replaces the first escaped delimiter of a doc string line, and only the first.
fn unescape_doc_string(text: &str, separator: Option<&str>) -> String {
    let escaped = match separator {
        Some("\"\"\"") => "\\\"\\\"\\\"",
        Some("```") => "\\`\\`\\`",
        _ => return text.to_string(),
    };
    text.replacen(escaped, separator.unwrap_or_default(), 1)
}

fn language_hint(code: &str) -> String {
    let wanted = code.to_lowercase();
    let codes = dialect::language_codes();
    // A regional or misspelt code usually shares its first letters with the right one.
    let closest = codes
        .iter()
        .filter(|candidate| wanted.get(..2).is_some_and(|prefix| candidate.to_lowercase().starts_with(prefix)))
        .min_by_key(|candidate| strsim::levenshtein(&wanted, &candidate.to_lowercase()))
        .or_else(|| codes.iter().min_by_key(|candidate| strsim::levenshtein(&wanted, &candidate.to_lowercase())))
        .copied()
        .unwrap_or(dialect::DEFAULT_LANGUAGE);
    format!("use a language code from Gherkin's table, such as 'en', 'fr' or 'de'; the closest is '{closest}'")
}

fn eof_hint(state: State, builder: &Builder) -> String {
    match state {
        State::DocString { .. } => {
            let opened = builder.open_doc_string_line().unwrap_or(0);
            format!("close the doc string opened at line {opened} with its delimiter on a line of its own")
        }
        State::AfterLanguage | State::FeatureTags => "add a 'Feature:' line after the header and tags".to_string(),
        State::RuleTags => "these tags need a 'Rule:' or 'Scenario:' line after them".to_string(),
        State::ScenarioTags { .. } => "these tags need a 'Scenario:' line after them".to_string(),
        State::ExamplesTags { .. } => "these tags need an 'Examples:' line after them".to_string(),
        _ => "the file ends too early".to_string(),
    }
}

fn unexpected_line_hint(state: State, line: &Line<'_>) -> String {
    let text = line.trimmed;
    match state {
        State::Start => {
            "a feature file starts with 'Feature:', optionally after tags, comments and a '# language:' header"
                .to_string()
        }
        State::AfterLanguage | State::FeatureTags => "the next line should be 'Feature:' (or more tags)".to_string(),
        State::RuleTags => "tags here must be followed by 'Rule:'".to_string(),
        State::ScenarioTags { .. } => "tags here must be followed by 'Scenario:'".to_string(),
        State::ExamplesTags { .. } => "tags here must be followed by 'Examples:'".to_string(),
        State::DocString { .. } => "close the doc string with its delimiter".to_string(),
        _ if text.starts_with("\"\"\"") || text.starts_with("```") => {
            "a step takes at most one doc string; to start a new step, write its keyword first".to_string()
        }
        _ if text.starts_with('|') => "a table must directly follow a step or an 'Examples:' line".to_string(),
        _ => "steps start with Given, When, Then, And, But or * (in the file's language); free text is only allowed \
              right under a block header"
            .to_string(),
    }
}
