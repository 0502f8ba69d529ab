//! Compiling scenarios into pickles: the flat step lists a runner executes.
//!
//! Backgrounds (the feature's, then the rule's) are prepended to every scenario that has steps,
//! each Outline row becomes its own pickle with `<column>` placeholders replaced, `And`/`But`/`*`
//! take the type of the step before them, and in `.saffron` files every `StepSet name` step is
//! replaced by the set's steps. Each pickle step points back at the step it came from.

use std::path::Path;

use crate::ast::{
    Background, DataTable, Document, FeatureChild, KeywordType, Location, RuleChild, Scenario, ScenarioKind, Step,
    TableCell, TableRow, Tag,
};
use crate::step_sets::StepSetDefinition;

/// A step's type once conjunctions are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PickleStepType {
    Context,
    Action,
    Outcome,
    Unknown,
}

impl PickleStepType {
    pub fn as_str(self) -> &'static str {
        match self {
            PickleStepType::Context => "Context",
            PickleStepType::Action => "Action",
            PickleStepType::Outcome => "Outcome",
            PickleStepType::Unknown => "Unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pickle<'a> {
    pub scenario: &'a Scenario,
    /// The Examples row this pickle was made from, for an Outline.
    pub row: Option<&'a TableRow>,
    /// The name with `<column>` placeholders replaced.
    pub name: String,
    /// The scenario's line, or the row's for an Outline.
    pub location: Location,
    pub language: &'a str,
    /// Feature, rule, scenario and examples tags, in that order.
    pub tags: Vec<&'a Tag>,
    pub steps: Vec<PickleStep<'a>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PickleStep<'a> {
    /// The step as written (in the scenario, a Background or a StepSet).
    pub step: &'a Step,
    pub row: Option<&'a TableRow>,
    /// The `StepSet name` step this one was expanded from.
    pub invocation: Option<&'a Step>,
    /// The set this step was expanded from.
    pub step_set: Option<&'a StepSetDefinition>,
    pub text: String,
    pub step_type: PickleStepType,
    pub doc_string: Option<PickleDocString>,
    pub data_table: Option<Vec<Vec<String>>>,
    /// 1 or 2 when the step has both a table and a doc string: their order in the source.
    pub doc_string_index: Option<u32>,
    pub data_table_index: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PickleDocString {
    pub content: String,
    pub media_type: Option<String>,
}

/// Where an expanded step is written: the file and line to edit, and the set it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Provenance<'a> {
    pub file: &'a Path,
    pub line: u32,
    pub from_set: Option<&'a str>,
}

impl<'a> PickleStep<'a> {
    /// Where this step is written, given the file of the document it was compiled from.
    pub fn provenance(&self, document_file: &'a Path) -> Provenance<'a> {
        match self.step_set {
            Some(set) => Provenance { file: &set.file, line: self.step.location.line, from_set: Some(&set.name) },
            None => Provenance { file: document_file, line: self.step.location.line, from_set: None },
        }
    }
}

/// Finds a StepSet definition by name (the project-wide registry).
pub trait StepSetLookup<'a> {
    fn step_set(&self, name: &str) -> Option<&'a StepSetDefinition>;
}

/// No sets: plain Gherkin.
pub struct NoStepSets;

impl<'a> StepSetLookup<'a> for NoStepSets {
    fn step_set(&self, _name: &str) -> Option<&'a StepSetDefinition> {
        None
    }
}

/// Compiles every runnable scenario of a document (StepSet definitions are not runnable), one
/// pickle per Outline row.
pub fn compile<'a>(document: &'a Document, step_sets: &dyn StepSetLookup<'a>) -> Vec<Pickle<'a>> {
    compile_with(document, step_sets, true)
}

/// Like [`compile`], but an Outline gives one pickle with its `<column>` placeholders kept:
/// the shape a recording is made of, shared by all rows.
pub fn compile_templates<'a>(document: &'a Document, step_sets: &dyn StepSetLookup<'a>) -> Vec<Pickle<'a>> {
    compile_with(document, step_sets, false)
}

fn compile_with<'a>(document: &'a Document, step_sets: &dyn StepSetLookup<'a>, expand_rows: bool) -> Vec<Pickle<'a>> {
    let mut pickles = Vec::new();
    let Some(feature) = &document.feature else { return pickles };
    let compiler = Compiler { language: &feature.language, step_sets, expand_rows };
    let feature_tags: Vec<&Tag> = feature.tags.iter().collect();
    let mut feature_background: Vec<&Step> = Vec::new();
    for child in &feature.children {
        match child {
            FeatureChild::Background(background) => feature_background = background.steps.iter().collect(),
            FeatureChild::Scenario(scenario) => {
                compiler.scenario(&feature_tags, &feature_background, scenario, &mut pickles);
            }
            FeatureChild::Rule(rule) => {
                let tags: Vec<&Tag> = feature_tags.iter().copied().chain(&rule.tags).collect();
                let mut rule_background = feature_background.clone();
                for child in &rule.children {
                    match child {
                        RuleChild::Background(Background { steps, .. }) => rule_background.extend(steps),
                        RuleChild::Scenario(scenario) => {
                            compiler.scenario(&tags, &rule_background, scenario, &mut pickles);
                        }
                    }
                }
            }
        }
    }
    pickles
}

struct Compiler<'a, 'l> {
    language: &'a str,
    step_sets: &'l dyn StepSetLookup<'a>,
    expand_rows: bool,
}

/// Replaces each `<header>` with its value, header by header, as the reference does.
pub fn interpolate(text: &str, headers: &[TableCell], values: &[TableCell]) -> String {
    let mut result = text.to_string();
    for (header, value) in headers.iter().zip(values) {
        let placeholder = format!("<{}>", header.value);
        if result.contains(&placeholder) {
            result = result.replace(&placeholder, &value.value);
        }
    }
    result
}

impl<'a> Compiler<'a, '_> {
    fn scenario(
        &self,
        inherited_tags: &[&'a Tag],
        background: &[&'a Step],
        scenario: &'a Scenario,
        out: &mut Vec<Pickle<'a>>,
    ) {
        if scenario.kind == ScenarioKind::StepSet {
            return;
        }
        let background: &[&'a Step] = if scenario.steps.is_empty() { &[] } else { background };
        if scenario.examples.is_empty() || !self.expand_rows {
            let steps = self.steps(background, &scenario.steps, &[], None);
            out.push(Pickle {
                scenario,
                row: None,
                name: scenario.header.name.clone(),
                location: scenario.header.location,
                language: self.language,
                tags: inherited_tags.iter().copied().chain(&scenario.tags).collect(),
                steps,
            });
            return;
        }
        for examples in &scenario.examples {
            let Some(header) = &examples.table_header else {
                continue;
            };
            for row in &examples.table_body {
                let steps = self.steps(background, &scenario.steps, &header.cells, Some(row));
                out.push(Pickle {
                    scenario,
                    row: Some(row),
                    name: interpolate(&scenario.header.name, &header.cells, &row.cells),
                    location: row.location,
                    language: self.language,
                    tags: inherited_tags.iter().copied().chain(&scenario.tags).chain(&examples.tags).collect(),
                    steps,
                });
            }
        }
    }

    fn steps(
        &self,
        background: &[&'a Step],
        steps: &'a [Step],
        headers: &[TableCell],
        row: Option<&'a TableRow>,
    ) -> Vec<PickleStep<'a>> {
        let mut out = Vec::new();
        let mut last_type = PickleStepType::Unknown;
        // Background steps are not interpolated: they are shared by every row.
        for step in background {
            self.push_step(step, &[], None, &mut last_type, &mut out);
        }
        for step in steps {
            self.push_step(step, headers, row, &mut last_type, &mut out);
        }
        out
    }

    /// Adds a step, or the steps of the set it invokes.
    fn push_step(
        &self,
        step: &'a Step,
        headers: &[TableCell],
        row: Option<&'a TableRow>,
        last_type: &mut PickleStepType,
        out: &mut Vec<PickleStep<'a>>,
    ) {
        if step.is_invocation
            && let Some(set) = self.step_sets.step_set(&step.text)
        {
            for set_step in set.steps() {
                out.push(pickle_step(set_step, headers, row, Some(step), Some(set), last_type));
            }
            return;
        }
        out.push(pickle_step(step, headers, row, None, None, last_type));
    }
}

fn pickle_step<'a>(
    step: &'a Step,
    headers: &[TableCell],
    row: Option<&'a TableRow>,
    invocation: Option<&'a Step>,
    step_set: Option<&'a StepSetDefinition>,
    last_type: &mut PickleStepType,
) -> PickleStep<'a> {
    *last_type = match step.keyword_type {
        KeywordType::Context => PickleStepType::Context,
        KeywordType::Action => PickleStepType::Action,
        KeywordType::Outcome => PickleStepType::Outcome,
        KeywordType::Unknown => PickleStepType::Unknown,
        KeywordType::Conjunction => *last_type,
    };
    let values: &[TableCell] = row.map_or(&[], |row| &row.cells);
    let data_table = step.data_table.as_ref().map(|table: &DataTable| {
        table
            .rows
            .iter()
            .map(|row| row.cells.iter().map(|cell| interpolate(&cell.value, headers, values)).collect())
            .collect()
    });
    let doc_string = step.doc_string.as_ref().map(|doc| PickleDocString {
        content: interpolate(&doc.content, headers, values),
        media_type: doc.media_type.as_ref().map(|media_type| interpolate(media_type, headers, values)),
    });
    let (doc_string_index, data_table_index) = match (&step.doc_string, &step.data_table) {
        (Some(doc), Some(table)) if doc.location.line > table.location.line => (Some(2), Some(1)),
        (Some(_), Some(_)) => (Some(1), Some(2)),
        _ => (None, None),
    };
    PickleStep {
        step,
        row,
        invocation,
        step_set,
        text: interpolate(&step.text, headers, values),
        step_type: *last_type,
        doc_string,
        data_table,
        doc_string_index,
        data_table_index,
    }
}
