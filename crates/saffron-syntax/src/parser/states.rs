//! The parser's states and the kinds of line each accepts: which line is legal where.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Eof,
    Empty,
    Comment,
    TagLine,
    FeatureLine,
    RuleLine,
    BackgroundLine,
    ScenarioLine,
    ExamplesLine,
    StepLine,
    DocStringSeparator,
    TableRow,
    Language,
    Other,
}

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Eof => "#EOF",
            Kind::Empty => "#Empty",
            Kind::Comment => "#Comment",
            Kind::TagLine => "#TagLine",
            Kind::FeatureLine => "#FeatureLine",
            Kind::RuleLine => "#RuleLine",
            Kind::BackgroundLine => "#BackgroundLine",
            Kind::ScenarioLine => "#ScenarioLine",
            Kind::ExamplesLine => "#ExamplesLine",
            Kind::StepLine => "#StepLine",
            Kind::DocStringSeparator => "#DocStringSeparator",
            Kind::TableRow => "#TableRow",
            Kind::Language => "#Language",
            Kind::Other => "#Other",
        }
    }
}

/// Where a step list lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StepContext {
    pub(super) in_rule: bool,
    pub(super) in_background: bool,
}

/// What has followed the current step line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StepArg {
    None,
    Table,
    /// A table, then a doc string (closed).
    TableThenDocString,
    /// A doc string (closed).
    DocString,
    /// A doc string, then a table.
    DocStringThenTable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Start,
    AfterLanguage,
    FeatureTags,
    Feature {
        description: bool,
    },
    RuleTags,
    Rule {
        description: bool,
    },
    Background {
        in_rule: bool,
        description: bool,
    },
    ScenarioTags {
        in_rule: bool,
    },
    Scenario {
        in_rule: bool,
        description: bool,
    },
    Step {
        context: StepContext,
        arg: StepArg,
    },
    /// Inside a doc string; `table_first` when the step already had a table.
    DocString {
        context: StepContext,
        table_first: bool,
    },
    ExamplesTags {
        in_rule: bool,
    },
    Examples {
        in_rule: bool,
        description: bool,
    },
    ExamplesTable {
        in_rule: bool,
    },
    End,
}

use Kind::*;

/// The kinds of line each state accepts, in the reference parser's order.
pub(super) fn candidates(state: State) -> &'static [Kind] {
    match state {
        State::Start => &[Eof, Language, TagLine, FeatureLine, Comment, Empty],
        State::AfterLanguage | State::FeatureTags => &[TagLine, FeatureLine, Comment, Empty],
        State::Feature { description: false } | State::Rule { description: false } => {
            &[Eof, Empty, Comment, BackgroundLine, TagLine, ScenarioLine, RuleLine, Other]
        }
        State::Feature { description: true } | State::Rule { description: true } => {
            &[Eof, Comment, BackgroundLine, TagLine, ScenarioLine, RuleLine, Other]
        }
        State::RuleTags => &[TagLine, RuleLine, Comment, Empty],
        State::Background { description: false, .. } => {
            &[Eof, Empty, Comment, StepLine, TagLine, ScenarioLine, RuleLine, Other]
        }
        State::Background { description: true, .. } => {
            &[Eof, Comment, StepLine, TagLine, ScenarioLine, RuleLine, Other]
        }
        State::ScenarioTags { .. } => &[TagLine, ScenarioLine, Comment, Empty],
        State::Scenario { description: false, .. } => {
            &[Eof, Empty, Comment, StepLine, TagLine, ExamplesLine, ScenarioLine, RuleLine, Other]
        }
        State::Scenario { description: true, .. } => {
            &[Eof, Comment, StepLine, TagLine, ExamplesLine, ScenarioLine, RuleLine, Other]
        }
        State::Step { context, arg } => match (context.in_background, arg) {
            (true, StepArg::None | StepArg::Table) => {
                &[Eof, TableRow, DocStringSeparator, StepLine, TagLine, ScenarioLine, RuleLine, Comment, Empty]
            }
            (true, StepArg::TableThenDocString) => &[Eof, StepLine, TagLine, ScenarioLine, RuleLine, Comment, Empty],
            (true, StepArg::DocString | StepArg::DocStringThenTable) => {
                &[Eof, TableRow, StepLine, TagLine, ScenarioLine, RuleLine, Comment, Empty]
            }
            (false, StepArg::None | StepArg::Table) => &[
                Eof,
                TableRow,
                DocStringSeparator,
                StepLine,
                TagLine,
                ExamplesLine,
                ScenarioLine,
                RuleLine,
                Comment,
                Empty,
            ],
            (false, StepArg::TableThenDocString) => {
                &[Eof, StepLine, TagLine, ExamplesLine, ScenarioLine, RuleLine, Comment, Empty]
            }
            (false, StepArg::DocString | StepArg::DocStringThenTable) => {
                &[Eof, TableRow, StepLine, TagLine, ExamplesLine, ScenarioLine, RuleLine, Comment, Empty]
            }
        },
        State::DocString { .. } => &[DocStringSeparator, Other],
        State::ExamplesTags { .. } => &[TagLine, ExamplesLine, Comment, Empty],
        State::Examples { description: false, .. } => {
            &[Eof, Empty, Comment, TableRow, TagLine, ExamplesLine, ScenarioLine, RuleLine, Other]
        }
        State::Examples { description: true, .. } => {
            &[Eof, Comment, TableRow, TagLine, ExamplesLine, ScenarioLine, RuleLine, Other]
        }
        State::ExamplesTable { .. } => &[Eof, TableRow, TagLine, ExamplesLine, ScenarioLine, RuleLine, Comment, Empty],
        State::End => &[],
    }
}

impl State {
    pub(super) fn in_rule(self) -> bool {
        match self {
            State::Rule { .. } | State::RuleTags => true,
            State::Background { in_rule, .. }
            | State::ScenarioTags { in_rule }
            | State::Scenario { in_rule, .. }
            | State::ExamplesTags { in_rule }
            | State::Examples { in_rule, .. }
            | State::ExamplesTable { in_rule } => in_rule,
            State::Step { context, .. } | State::DocString { context, .. } => context.in_rule,
            _ => false,
        }
    }

    /// The state after a description or comment line under a block header.
    pub(super) fn in_description(self) -> State {
        match self {
            State::Feature { .. } => State::Feature { description: true },
            State::Rule { .. } => State::Rule { description: true },
            State::Background { in_rule, .. } => State::Background { in_rule, description: true },
            State::Scenario { in_rule, .. } => State::Scenario { in_rule, description: true },
            State::Examples { in_rule, .. } => State::Examples { in_rule, description: true },
            other => other,
        }
    }

    /// Whether a tag line here may start an Examples block (we are inside a scenario).
    pub(super) fn in_scenario(self) -> bool {
        match self {
            State::Scenario { .. } | State::Examples { .. } | State::ExamplesTable { .. } => true,
            State::Step { context, .. } => !context.in_background,
            _ => false,
        }
    }
}
