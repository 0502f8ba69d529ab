//! Cucumber Messages (NDJSON envelopes): `source`, `gherkinDocument`, `pickle`, `parseError`.
//!
//! This is the format Cucumber's own parsers print, so Saffron's reading of a file can be
//! diffed against theirs line by line. Ids are assigned in the order the reference parser
//! assigns them (children before parents), so even `astNodeIds` line up.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::ast::*;
use crate::diagnostic::Diagnostic;
use crate::parser::Parsed;
use crate::pickles::{self, Pickle, PickleStep, StepSetLookup};

/// The reference parser gives up after this many errors.
const MAX_REPORTED_ERRORS: usize = 11;

pub const GHERKIN_MEDIA_TYPE: &str = "text/x.cucumber.gherkin+plain";

/// The envelopes for one file, as `@cucumber/gherkin` prints them: the source, then either the
/// document and its pickles, or the parse errors.
pub fn envelopes<'a>(uri: &str, source: &str, parsed: &'a Parsed, step_sets: &dyn StepSetLookup<'a>) -> Vec<Value> {
    let mut out = vec![json!({
        "source": { "data": source, "mediaType": GHERKIN_MEDIA_TYPE, "uri": uri }
    })];
    if !parsed.errors.is_empty() {
        out.extend(parsed.errors.iter().take(MAX_REPORTED_ERRORS).map(|error| parse_error(uri, error)));
        return out;
    }
    let mut ids = Ids::default();
    let document = ids.document(&parsed.document, uri);
    out.push(json!({ "gherkinDocument": document }));
    for pickle in pickles::compile(&parsed.document, step_sets) {
        out.push(json!({ "pickle": ids.pickle(&pickle, uri) }));
    }
    out
}

pub fn parse_error(uri: &str, error: &Diagnostic) -> Value {
    let mut location = Map::new();
    location.insert("line".into(), json!(error.location.line));
    if error.location.column > 0 {
        location.insert("column".into(), json!(error.location.column));
    }
    json!({
        "parseError": {
            "message": error.cucumber_message(),
            "source": { "location": location, "uri": uri }
        }
    })
}

/// Assigns sequential ids and remembers which node got which, for pickles' `astNodeIds`.
#[derive(Default)]
struct Ids {
    next: usize,
    assigned: HashMap<(&'static str, usize), String>,
}

fn key<T>(kind: &'static str, node: &T) -> (&'static str, usize) {
    (kind, node as *const T as usize)
}

fn location(location: Location) -> Value {
    json!({ "line": location.line, "column": location.column })
}

impl Ids {
    fn new_id(&mut self) -> String {
        let id = self.next.to_string();
        self.next += 1;
        id
    }

    fn assign<T>(&mut self, kind: &'static str, node: &T) -> String {
        let id = self.new_id();
        self.assigned.insert(key(kind, node), id.clone());
        id
    }

    fn id_of<T>(&self, kind: &'static str, node: &T) -> String {
        self.assigned.get(&key(kind, node)).cloned().unwrap_or_default()
    }

    fn document(&mut self, document: &Document, uri: &str) -> Value {
        let mut out = Map::new();
        out.insert("uri".into(), json!(uri));
        let comments: Vec<Value> = document
            .comments
            .iter()
            .map(|comment| json!({ "location": location(comment.location), "text": comment.text }))
            .collect();
        out.insert("comments".into(), Value::Array(comments));
        if let Some(feature) = &document.feature {
            out.insert("feature".into(), self.feature(feature));
        }
        Value::Object(out)
    }

    fn feature(&mut self, feature: &Feature) -> Value {
        let children: Vec<Value> = feature
            .children
            .iter()
            .map(|child| match child {
                FeatureChild::Background(background) => {
                    json!({ "background": self.background(background) })
                }
                FeatureChild::Scenario(scenario) => json!({ "scenario": self.scenario(scenario) }),
                FeatureChild::Rule(rule) => json!({ "rule": self.rule(rule) }),
            })
            .collect();
        let tags = self.tags(&feature.tags);
        json!({
            "location": location(feature.header.location),
            "tags": tags,
            "language": feature.language,
            "keyword": feature.header.keyword,
            "name": feature.header.name,
            "description": feature.description.text,
            "children": children,
        })
    }

    fn rule(&mut self, rule: &Rule) -> Value {
        let children: Vec<Value> = rule
            .children
            .iter()
            .map(|child| match child {
                RuleChild::Background(background) => {
                    json!({ "background": self.background(background) })
                }
                RuleChild::Scenario(scenario) => json!({ "scenario": self.scenario(scenario) }),
            })
            .collect();
        let tags = self.tags(&rule.tags);
        json!({
            "id": self.assign("rule", rule),
            "location": location(rule.header.location),
            "keyword": rule.header.keyword,
            "name": rule.header.name,
            "description": rule.description.text,
            "children": children,
            "tags": tags,
        })
    }

    fn background(&mut self, background: &Background) -> Value {
        let steps: Vec<Value> = background.steps.iter().map(|step| self.step(step)).collect();
        json!({
            "id": self.assign("background", background),
            "location": location(background.header.location),
            "keyword": background.header.keyword,
            "name": background.header.name,
            "description": background.description.text,
            "steps": steps,
        })
    }

    fn scenario(&mut self, scenario: &Scenario) -> Value {
        let steps: Vec<Value> = scenario.steps.iter().map(|step| self.step(step)).collect();
        let examples: Vec<Value> = scenario.examples.iter().map(|examples| self.examples(examples)).collect();
        let tags = self.tags(&scenario.tags);
        json!({
            "id": self.assign("scenario", scenario),
            "tags": tags,
            "location": location(scenario.header.location),
            "keyword": scenario.header.keyword,
            "name": scenario.header.name,
            "description": scenario.description.text,
            "steps": steps,
            "examples": examples,
        })
    }

    fn examples(&mut self, examples: &Examples) -> Value {
        let header = examples.table_header.as_ref().map(|row| self.table_row(row));
        let body: Vec<Value> = examples.table_body.iter().map(|row| self.table_row(row)).collect();
        let tags = self.tags(&examples.tags);
        let mut out = Map::new();
        out.insert("id".into(), json!(self.assign("examples", examples)));
        out.insert("tags".into(), Value::Array(tags));
        out.insert("location".into(), location(examples.header.location));
        out.insert("keyword".into(), json!(examples.header.keyword));
        out.insert("name".into(), json!(examples.header.name));
        out.insert("description".into(), json!(examples.description.text));
        if let Some(header) = header {
            out.insert("tableHeader".into(), header);
        }
        out.insert("tableBody".into(), Value::Array(body));
        Value::Object(out)
    }

    fn table_row(&mut self, row: &TableRow) -> Value {
        let cells: Vec<Value> =
            row.cells.iter().map(|cell| json!({ "location": location(cell.location), "value": cell.value })).collect();
        json!({ "id": self.assign("row", row), "location": location(row.location), "cells": cells })
    }

    fn step(&mut self, step: &Step) -> Value {
        let mut out = Map::new();
        if let Some(table) = &step.data_table {
            let rows: Vec<Value> = table.rows.iter().map(|row| self.table_row(row)).collect();
            out.insert("dataTable".into(), json!({ "location": location(table.location), "rows": rows }));
        }
        if let Some(doc) = &step.doc_string {
            let mut doc_json = Map::new();
            doc_json.insert("location".into(), location(doc.location));
            doc_json.insert("content".into(), json!(doc.content));
            doc_json.insert("delimiter".into(), json!(doc.delimiter));
            if let Some(media_type) = &doc.media_type {
                doc_json.insert("mediaType".into(), json!(media_type));
            }
            out.insert("docString".into(), Value::Object(doc_json));
        }
        out.insert("id".into(), json!(self.assign("step", step)));
        out.insert("location".into(), location(step.location));
        out.insert("keyword".into(), json!(step.keyword));
        out.insert("keywordType".into(), json!(step.keyword_type.as_str()));
        out.insert("text".into(), json!(step.text));
        Value::Object(out)
    }

    fn tags(&mut self, tags: &[Tag]) -> Vec<Value> {
        tags.iter()
            .map(|tag| json!({ "location": location(tag.location), "name": tag.name, "id": self.assign("tag", tag) }))
            .collect()
    }

    fn pickle(&mut self, pickle: &Pickle<'_>, uri: &str) -> Value {
        let steps: Vec<Value> = pickle.steps.iter().map(|step| self.pickle_step(step)).collect();
        let mut ast_node_ids = vec![self.id_of("scenario", pickle.scenario)];
        if let Some(row) = pickle.row {
            ast_node_ids.push(self.id_of("row", row));
        }
        let tags: Vec<Value> =
            pickle.tags.iter().map(|tag| json!({ "name": tag.name, "astNodeId": self.id_of("tag", *tag) })).collect();
        json!({
            "id": self.new_id(),
            "uri": uri,
            "location": location(pickle.location),
            "astNodeIds": ast_node_ids,
            "tags": tags,
            "name": pickle.name,
            "language": pickle.language,
            "steps": steps,
        })
    }

    fn pickle_step(&mut self, step: &PickleStep<'_>) -> Value {
        let mut ast_node_ids = vec![self.id_of("step", step.step)];
        if let Some(row) = step.row {
            ast_node_ids.push(self.id_of("row", row));
        }
        let mut argument = Map::new();
        if let Some(doc) = &step.doc_string {
            let mut doc_json = Map::new();
            doc_json.insert("content".into(), json!(doc.content));
            if let Some(media_type) = &doc.media_type {
                doc_json.insert("mediaType".into(), json!(media_type));
            }
            if let Some(index) = step.doc_string_index {
                doc_json.insert("argumentIndex".into(), json!(index));
            }
            argument.insert("docString".into(), Value::Object(doc_json));
        }
        if let Some(rows) = &step.data_table {
            let rows: Vec<Value> = rows
                .iter()
                .map(
                    |cells| json!({ "cells": cells.iter().map(|value| json!({ "value": value })).collect::<Vec<_>>() }),
                )
                .collect();
            let mut table_json = Map::new();
            table_json.insert("rows".into(), Value::Array(rows));
            if let Some(index) = step.data_table_index {
                table_json.insert("argumentIndex".into(), json!(index));
            }
            argument.insert("dataTable".into(), Value::Object(table_json));
        }
        let mut out = Map::new();
        out.insert("id".into(), json!(self.new_id()));
        out.insert("text".into(), json!(step.text));
        out.insert("type".into(), json!(step.step_type.as_str()));
        if !argument.is_empty() {
            out.insert("argument".into(), Value::Object(argument));
        }
        out.insert("astNodeIds".into(), json!(ast_node_ids));
        Value::Object(out)
    }
}
