//! The `.saffron` dialect's project-wide rules: the StepSet registry, and the checks that need
//! more than one line to see (unknown or duplicate sets, nesting, Fixture placement).
//!
//! Set names are unique across the project, so a set defined in `shared.steps.saffron` is
//! invoked from any file. Expansion itself happens when scenarios are compiled
//! ([`crate::pickles`]), so every expanded step keeps its own text, its own line and the set it
//! came from.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::ast::{Document, FeatureChild, Location, RuleChild, Scenario, ScenarioKind, Span, Step};
use crate::diagnostic::{Diagnostic, DiagnosticCode};

/// One `StepSet: name` block.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSetDefinition {
    pub name: String,
    /// The file that defines it, as the project names it.
    pub file: PathBuf,
    pub scenario: Scenario,
}

impl StepSetDefinition {
    pub fn location(&self) -> Location {
        self.scenario.header.location
    }

    pub fn steps(&self) -> &[Step] {
        &self.scenario.steps
    }

    /// Tagged [`SESSION_TAG`]: its steps sign in, and a run performs them once.
    pub fn signs_in(&self) -> bool {
        self.scenario.tags.iter().any(|tag| tag.name == SESSION_TAG)
    }
}

/// The tag of a StepSet whose steps sign in: a run performs it in the first scenario that
/// starts with it and restores the session it left in the later ones.
pub const SESSION_TAG: &str = "@session";

/// All StepSets of a project by name. When a name is defined twice, the first definition in
/// (file, line) order is the set; the others are reported as duplicates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepSetRegistry {
    definitions: HashMap<String, StepSetDefinition>,
}

impl StepSetRegistry {
    /// Builds the registry from every document of a project.
    pub fn build<'a>(documents: impl IntoIterator<Item = (&'a Path, &'a Document)>) -> StepSetRegistry {
        let mut all: Vec<(&Path, &Scenario)> = Vec::new();
        for (path, document) in documents {
            all.extend(step_set_blocks(document).map(|scenario| (path, scenario)));
        }
        all.sort_by(|a, b| (a.0, a.1.header.location).cmp(&(b.0, b.1.header.location)));
        let mut definitions = HashMap::new();
        for (path, scenario) in all {
            let name = scenario.header.name.clone();
            if name.is_empty() {
                continue;
            }
            definitions.entry(name.clone()).or_insert_with(|| StepSetDefinition {
                name,
                file: path.to_path_buf(),
                scenario: scenario.clone(),
            });
        }
        StepSetRegistry { definitions }
    }

    pub fn get(&self, name: &str) -> Option<&StepSetDefinition> {
        self.definitions.get(name)
    }

    pub fn len(&self) -> usize {
        self.definitions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.definitions.is_empty()
    }

    /// Every definition, sorted by name.
    pub fn definitions(&self) -> Vec<&StepSetDefinition> {
        let mut definitions: Vec<&StepSetDefinition> = self.definitions.values().collect();
        definitions.sort_by(|a, b| a.name.cmp(&b.name));
        definitions
    }

    /// The defined name closest to `name`, for "did you mean" hints.
    pub fn closest(&self, name: &str) -> Option<&str> {
        let wanted = name.to_lowercase();
        self.definitions
            .keys()
            .map(|candidate| (strsim::normalized_levenshtein(&wanted, &candidate.to_lowercase()), candidate))
            .filter(|(score, _)| *score >= 0.4)
            .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
            .map(|(_, candidate)| candidate.as_str())
    }
}

impl<'a> crate::pickles::StepSetLookup<'a> for &'a StepSetRegistry {
    fn step_set(&self, name: &str) -> Option<&'a StepSetDefinition> {
        self.get(name)
    }
}

/// The `StepSet:` blocks of a document.
pub fn step_set_blocks(document: &Document) -> impl Iterator<Item = &Scenario> {
    document.scenarios().filter(|scenario| scenario.kind == ScenarioKind::StepSet)
}

/// The dialect problems of one document, judged against the project's registry.
pub fn check(path: &Path, document: &Document, registry: &StepSetRegistry) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let Some(feature) = &document.feature else { return diagnostics };

    let mut fixtures = 0;
    let mut check_scenario = |scenario: &Scenario, in_rule: bool, diagnostics: &mut Vec<Diagnostic>| match scenario.kind
    {
        ScenarioKind::StepSet => check_step_set(path, scenario, registry, diagnostics),
        ScenarioKind::Fixture => {
            fixtures += 1;
            check_fixture(scenario, in_rule, fixtures, diagnostics);
            check_invocations(&scenario.steps, registry, diagnostics);
        }
        ScenarioKind::Scenario => check_invocations(&scenario.steps, registry, diagnostics),
    };
    for child in &feature.children {
        match child {
            FeatureChild::Background(background) => check_invocations(&background.steps, registry, &mut diagnostics),
            FeatureChild::Scenario(scenario) => check_scenario(scenario, false, &mut diagnostics),
            FeatureChild::Rule(rule) => {
                for child in &rule.children {
                    match child {
                        RuleChild::Background(background) => {
                            check_invocations(&background.steps, registry, &mut diagnostics)
                        }
                        RuleChild::Scenario(scenario) => check_scenario(scenario, true, &mut diagnostics),
                    }
                }
            }
        }
    }
    diagnostics
}

fn name_location(scenario: &Scenario) -> (Location, Span) {
    let header = &scenario.header;
    if header.name.is_empty() {
        return (header.location, header.line_span);
    }
    (header.name_location, header.name_span)
}

fn check_step_set(path: &Path, scenario: &Scenario, registry: &StepSetRegistry, out: &mut Vec<Diagnostic>) {
    let (location, span) = name_location(scenario);
    let name = &scenario.header.name;
    if name.is_empty() {
        out.push(
            Diagnostic::error(DiagnosticCode::UnnamedStepSet, location, span, "a StepSet needs a name")
                .with_hint("write the name after the colon, for example 'StepSet: signed in as an admin'"),
        );
    } else if let Some(definition) = registry.get(name)
        && (definition.file.as_path(), definition.location()) != (path, scenario.header.location)
    {
        out.push(
            Diagnostic::error(
                DiagnosticCode::DuplicateStepSet,
                location,
                span,
                format!(
                    "StepSet '{name}' is already defined at {}:{}",
                    definition.file.display(),
                    definition.location().line
                ),
            )
            .with_hint(format!("did you mean to invoke it? remove the colon: 'StepSet {name}'")),
        );
    }
    if let Some(examples) = scenario.examples.first() {
        out.push(
            Diagnostic::error(
                DiagnosticCode::StepSetWithExamples,
                examples.header.location,
                examples.header.line_span,
                "a StepSet cannot have Examples",
            )
            .with_hint("put the Examples on the Scenario Outline that invokes the set; its <column> values reach the set's steps"),
        );
    }
    for step in scenario.steps.iter().filter(|step| step.is_invocation) {
        out.push(
            Diagnostic::error(
                DiagnosticCode::NestedStepSet,
                step.location,
                step.span,
                format!("StepSet '{name}' invokes StepSet '{}': sets cannot be nested", step.text),
            )
            .with_hint("copy that set's steps into this set, or invoke both sets from the scenario"),
        );
    }
}

fn check_fixture(scenario: &Scenario, in_rule: bool, ordinal: usize, out: &mut Vec<Diagnostic>) {
    let (location, span) = name_location(scenario);
    if ordinal > 1 {
        out.push(
            Diagnostic::error(DiagnosticCode::SecondFixture, location, span, "a feature has at most one Fixture")
                .with_hint("merge the steps into the first Fixture, or move this one to another feature file"),
        );
    }
    if in_rule {
        out.push(
            Diagnostic::error(
                DiagnosticCode::FixtureInRule,
                location,
                span,
                "a Fixture belongs to the feature, not to a Rule",
            )
            .with_hint("move the Fixture above the first Rule"),
        );
    }
    if let Some(examples) = scenario.examples.first() {
        out.push(
            Diagnostic::error(
                DiagnosticCode::FixtureWithExamples,
                examples.header.location,
                examples.header.line_span,
                "a Fixture cannot have Examples: it runs once per feature",
            )
            .with_hint("move the Examples to the scenarios that need the rows"),
        );
    }
}

fn check_invocations(steps: &[Step], registry: &StepSetRegistry, out: &mut Vec<Diagnostic>) {
    for step in steps.iter().filter(|step| step.is_invocation) {
        if step.text.is_empty() {
            out.push(
                Diagnostic::error(
                    DiagnosticCode::UnknownStepSet,
                    step.location,
                    step.span,
                    "StepSet needs the name of a set",
                )
                .with_hint("write 'StepSet <name>' with the name of a 'StepSet: <name>' block"),
            );
            continue;
        }
        if registry.get(&step.text).is_some() {
            continue;
        }
        let hint = match registry.closest(&step.text) {
            Some(closest) => format!("did you mean 'StepSet {closest}'?"),
            None => format!("define it in a .saffron file with 'StepSet: {}' and its steps", step.text),
        };
        out.push(
            Diagnostic::error(
                DiagnosticCode::UnknownStepSet,
                step.text_location,
                step.text_span,
                format!("unknown StepSet '{}'", step.text),
            )
            .with_hint(hint),
        );
    }
}
