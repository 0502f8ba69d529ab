//! The syntax tree of one `.feature` or `.saffron` file: plain data with exact positions.
//!
//! Every node has a [`Location`] (1-based line and column, the column counted in Unicode
//! scalar values as Cucumber counts it) and byte [`Span`]s into the source text, so editors can
//! map any node back to the text without re-scanning it.

use serde::Serialize;

/// A byte range in the source text, `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord, Serialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub fn contains(&self, offset: usize) -> bool {
        self.start <= offset && offset <= self.end
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// A 1-based line and column. The column counts Unicode scalar values, as Cucumber does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Location {
    pub line: u32,
    pub column: u32,
}

/// Which flavour of file the text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// Standard Gherkin: the `.saffron` keywords are errors here.
    Feature,
    /// Gherkin plus `StepSet:` blocks, `StepSet name` invocations and `Fixture:`.
    Saffron,
}

impl SourceKind {
    /// The kind for a file name, by extension; `None` for anything else.
    pub fn from_path(path: &std::path::Path) -> Option<SourceKind> {
        match path.extension()?.to_str()? {
            "feature" => Some(SourceKind::Feature),
            "saffron" => Some(SourceKind::Saffron),
            _ => None,
        }
    }
}

/// Gherkin's keyword type. `And`, `But` and `*` steps take the previous step's type when a
/// scenario is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum KeywordType {
    Context,
    Action,
    Outcome,
    Conjunction,
    Unknown,
}

impl KeywordType {
    pub fn as_str(self) -> &'static str {
        match self {
            KeywordType::Context => "Context",
            KeywordType::Action => "Action",
            KeywordType::Outcome => "Outcome",
            KeywordType::Conjunction => "Conjunction",
            KeywordType::Unknown => "Unknown",
        }
    }
}

/// A parsed file. It always exists, even for text with errors: the parser recovers and keeps
/// everything it could read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Document {
    pub source_kind: SourceKind,
    pub feature: Option<Feature>,
    /// Every comment line, in order, wherever it stands.
    pub comments: Vec<Comment>,
    /// The `# language:` header, when there is one.
    pub language_header: Option<LanguageHeader>,
}

impl Document {
    /// The language the file's keywords are read in.
    pub fn language(&self) -> &str {
        match (&self.feature, &self.language_header) {
            (Some(feature), _) => &feature.language,
            (None, Some(header)) => &header.language,
            (None, None) => crate::dialect::DEFAULT_LANGUAGE,
        }
    }

    /// Every scenario-like block (scenarios, outlines, StepSets, Fixtures) in file order.
    pub fn scenarios(&self) -> impl Iterator<Item = &Scenario> {
        self.feature.iter().flat_map(|feature| feature.scenarios())
    }

    /// Every step of the file in file order, with the block it belongs to.
    pub fn steps(&self) -> Vec<&Step> {
        let mut steps = Vec::new();
        if let Some(feature) = &self.feature {
            for child in &feature.children {
                match child {
                    FeatureChild::Background(background) => steps.extend(&background.steps),
                    FeatureChild::Scenario(scenario) => steps.extend(&scenario.steps),
                    FeatureChild::Rule(rule) => {
                        for child in &rule.children {
                            match child {
                                RuleChild::Background(background) => steps.extend(&background.steps),
                                RuleChild::Scenario(scenario) => steps.extend(&scenario.steps),
                            }
                        }
                    }
                }
            }
        }
        steps
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LanguageHeader {
    pub location: Location,
    pub span: Span,
    pub language: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comment {
    pub location: Location,
    pub span: Span,
    /// The whole line, leading whitespace included (as Cucumber keeps it).
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tag {
    pub location: Location,
    pub span: Span,
    /// With its `@`.
    pub name: String,
}

/// The keyword and name of a block header line such as `Scenario: Pay by card`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Header {
    pub location: Location,
    /// The keyword without its colon, as written (`Scenario Outline`, `Fonctionnalité`).
    pub keyword: String,
    pub keyword_span: Span,
    pub name: String,
    pub name_span: Span,
    /// Where the name starts (right after the colon when there is no name).
    pub name_location: Location,
    /// The whole header line, indentation excluded.
    pub line_span: Span,
}

/// Free text under a block header, up to the first keyword line.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Description {
    /// The lines joined with `\n`, trailing blank lines dropped (Cucumber's value).
    pub text: String,
    pub span: Option<Span>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Feature {
    pub header: Header,
    pub tags: Vec<Tag>,
    pub description: Description,
    /// The language of the file's keywords.
    pub language: String,
    pub children: Vec<FeatureChild>,
    /// From the first tag (or the header) to the end of the last child.
    pub span: Span,
}

impl Feature {
    pub fn scenarios(&self) -> impl Iterator<Item = &Scenario> {
        self.children.iter().flat_map(|child| -> Box<dyn Iterator<Item = &Scenario> + '_> {
            match child {
                FeatureChild::Background(_) => Box::new(std::iter::empty()),
                FeatureChild::Scenario(scenario) => Box::new(std::iter::once(scenario)),
                FeatureChild::Rule(rule) => Box::new(rule.children.iter().filter_map(|child| match child {
                    RuleChild::Scenario(scenario) => Some(scenario),
                    RuleChild::Background(_) => None,
                })),
            }
        })
    }

    pub fn background(&self) -> Option<&Background> {
        self.children.iter().find_map(|child| match child {
            FeatureChild::Background(background) => Some(background),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum FeatureChild {
    Background(Background),
    Scenario(Scenario),
    Rule(Rule),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    pub header: Header,
    pub tags: Vec<Tag>,
    pub description: Description,
    pub children: Vec<RuleChild>,
    pub span: Span,
}

impl Rule {
    pub fn background(&self) -> Option<&Background> {
        self.children.iter().find_map(|child| match child {
            RuleChild::Background(background) => Some(background),
            RuleChild::Scenario(_) => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum RuleChild {
    Background(Background),
    Scenario(Scenario),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Background {
    pub header: Header,
    pub description: Description,
    pub steps: Vec<Step>,
    pub span: Span,
}

/// What a scenario-like block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ScenarioKind {
    /// `Scenario:`, `Example:`, `Scenario Outline:` and their translations.
    Scenario,
    /// `StepSet: name`, a named list of steps (`.saffron` only).
    StepSet,
    /// `Fixture: name`, steps run once per feature (`.saffron` only).
    Fixture,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    pub kind: ScenarioKind,
    pub header: Header,
    pub tags: Vec<Tag>,
    pub description: Description,
    pub steps: Vec<Step>,
    pub examples: Vec<Examples>,
    pub span: Span,
}

impl Scenario {
    /// An outline is a scenario with at least one Examples block.
    pub fn is_outline(&self) -> bool {
        !self.examples.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Examples {
    pub header: Header,
    pub tags: Vec<Tag>,
    pub description: Description,
    pub table_header: Option<TableRow>,
    pub table_body: Vec<TableRow>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub location: Location,
    /// As written, trailing space included (`Given `, `* `, `StepSet `).
    pub keyword: String,
    pub keyword_type: KeywordType,
    pub keyword_span: Span,
    pub text: String,
    pub text_span: Span,
    /// Where the text starts.
    pub text_location: Location,
    pub data_table: Option<DataTable>,
    pub doc_string: Option<DocString>,
    /// `StepSet name`: the text is the invoked set's name (`.saffron` only).
    pub is_invocation: bool,
    /// The step line and its argument.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataTable {
    pub location: Location,
    pub rows: Vec<TableRow>,
    pub span: Span,
}

impl DataTable {
    /// The cell values, row by row.
    pub fn values(&self) -> Vec<Vec<String>> {
        self.rows.iter().map(|row| row.cells.iter().map(|cell| cell.value.clone()).collect()).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRow {
    pub location: Location,
    pub cells: Vec<TableCell>,
    /// The row's line, indentation excluded.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableCell {
    /// Column of the cell's first non-blank character (Cucumber's rule).
    pub location: Location,
    /// The unescaped, trimmed value.
    pub value: String,
    /// The raw cell text between its pipes, trimmed.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocString {
    pub location: Location,
    /// `"""` or three backticks.
    pub delimiter: String,
    pub media_type: Option<String>,
    /// Lines with the opening delimiter's indentation removed, joined with `\n`.
    pub content: String,
    /// From the opening delimiter to the end of the closing one.
    pub span: Span,
}
