//! Problems found in feature text, each with a position, a message and a hint that says what
//! to do about it.

use serde::Serialize;

use crate::ast::{Location, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }
}

/// What kind of problem a diagnostic reports; editors key quick fixes on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiagnosticCode {
    /// A line that cannot stand where it is.
    UnexpectedLine,
    /// The file ends inside a construct (an open doc string, a tag line without its block).
    UnexpectedEof,
    InconsistentCellCount,
    TagWhitespace,
    UnknownLanguage,
    /// `StepSet:`, `StepSet name` or `Fixture:` in a `.feature` file.
    DialectInFeatureFile,
    DuplicateStepSet,
    UnnamedStepSet,
    UnknownStepSet,
    NestedStepSet,
    SecondFixture,
    FixtureWithExamples,
    FixtureInRule,
    StepSetWithExamples,
    /// A double quote in a step's text that no other closes: what follows it is not a value.
    UnclosedQuote,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: DiagnosticCode,
    pub severity: Severity,
    /// 1-based line and column; column 0 when the problem is the end of the file.
    pub location: Location,
    pub span: Span,
    pub message: String,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(code: DiagnosticCode, location: Location, span: Span, message: impl Into<String>) -> Self {
        Diagnostic { code, severity: Severity::Error, location, span, message: message.into(), hint: None }
    }

    pub fn warning(code: DiagnosticCode, location: Location, span: Span, message: impl Into<String>) -> Self {
        Diagnostic { code, severity: Severity::Warning, location, span, message: message.into(), hint: None }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The message as Cucumber's parser words it: `(line:column): message`.
    pub fn cucumber_message(&self) -> String {
        format!("({}:{}): {}", self.location.line, self.location.column, self.message)
    }
}
