//! The document outline: Feature, Rules, Backgrounds, Scenarios, StepSets, Fixtures, Examples.

use saffron_syntax::{Document, FeatureChild, Header, RuleChild, Scenario, ScenarioKind, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    Feature,
    Rule,
    Background,
    Scenario,
    ScenarioOutline,
    StepSet,
    Fixture,
    Examples,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// The keyword, e.g. `Scenario Outline`.
    pub detail: String,
    pub kind: SymbolKind,
    /// The whole block.
    pub span: Span,
    /// The name (or the header line when unnamed).
    pub selection: Span,
    pub children: Vec<Symbol>,
}

fn symbol(header: &Header, kind: SymbolKind, span: Span, children: Vec<Symbol>) -> Symbol {
    let name = if header.name.is_empty() { header.keyword.clone() } else { header.name.clone() };
    let selection = if header.name.is_empty() { header.line_span } else { header.name_span };
    Symbol { name, detail: header.keyword.clone(), kind, span: span.cover(selection), selection, children }
}

fn scenario_symbol(scenario: &Scenario) -> Symbol {
    let kind = match scenario.kind {
        ScenarioKind::StepSet => SymbolKind::StepSet,
        ScenarioKind::Fixture => SymbolKind::Fixture,
        ScenarioKind::Scenario if scenario.is_outline() => SymbolKind::ScenarioOutline,
        ScenarioKind::Scenario => SymbolKind::Scenario,
    };
    let examples = scenario
        .examples
        .iter()
        .map(|examples| symbol(&examples.header, SymbolKind::Examples, examples.span, Vec::new()))
        .collect();
    symbol(&scenario.header, kind, scenario.span, examples)
}

pub fn document_symbols(document: &Document) -> Vec<Symbol> {
    let Some(feature) = &document.feature else { return Vec::new() };
    let children = feature
        .children
        .iter()
        .map(|child| match child {
            FeatureChild::Background(background) => {
                symbol(&background.header, SymbolKind::Background, background.span, Vec::new())
            }
            FeatureChild::Scenario(scenario) => scenario_symbol(scenario),
            FeatureChild::Rule(rule) => {
                let children = rule
                    .children
                    .iter()
                    .map(|child| match child {
                        RuleChild::Background(background) => {
                            symbol(&background.header, SymbolKind::Background, background.span, Vec::new())
                        }
                        RuleChild::Scenario(scenario) => scenario_symbol(scenario),
                    })
                    .collect();
                symbol(&rule.header, SymbolKind::Rule, rule.span, children)
            }
        })
        .collect();
    vec![symbol(&feature.header, SymbolKind::Feature, feature.span, children)]
}
