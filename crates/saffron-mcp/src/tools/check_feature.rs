//! `check_feature`: a draft feature checked against the project as if it were saved, and what
//! it would cost: which steps replay for free and which need a recording.
//!
//! The draft is applied to the index in memory (see [`Project::with_draft`]); no file is
//! written.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use saffron_index::{Snapshot, StepRole, StepStatus};
use saffron_syntax::{Span, pickles, step_sets};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Render, Status, ToolError};
use crate::project::{Project, display_path, project_path};

/// Drafts larger than this are refused: a feature file is a few kilobytes.
const MAX_DRAFT_BYTES: usize = 1 << 20;

/// How many likely next steps a scenario of the draft gets.
const NEXT_STEPS: usize = 3;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckFeatureArgs {
    /// The whole text of the draft `.feature` or `.saffron` file.
    pub text: String,
    /// Where the file would be saved, relative to the project root. A path that exists is
    /// checked as an edit of that file. Default: `features/draft.saffron` (or `.feature` with
    /// `kind: "feature"`).
    #[serde(default)]
    pub path: Option<String>,
    /// The file kind when no path is given: `saffron` (the default: Gherkin plus StepSets and
    /// Fixtures) or `feature` (plain Gherkin).
    #[serde(default)]
    pub kind: Option<DraftKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DraftKind {
    Feature,
    Saffron,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckFeatureOutput {
    /// The path the draft was checked as.
    pub path: String,
    /// No errors (warnings may remain).
    pub ok: bool,
    pub diagnostics: Vec<Diagnostic>,
    /// Each step written in the draft (StepSet invocations excluded), in order.
    pub steps: Vec<DraftStep>,
    /// Each runnable scenario of the draft with its steps expanded (Background and StepSets
    /// included) and what recording it needs.
    pub scenarios: Vec<DraftScenario>,
    pub totals: Totals,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// For a problem the draft causes in another file (a StepSet it defines again, a set it
    /// no longer defines): that file. Absent for the draft itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based.
    pub line: u32,
    /// 1-based, in characters.
    pub column: u32,
    /// `error`, `warning`, `information` or `hint`.
    pub severity: String,
    /// Stable, kebab-case: `unknown-step-set`, `near-duplicate`, `unexpected-line`...
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// For a near-duplicate: the existing wording to write instead, exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DraftStep {
    pub line: u32,
    /// As written, with its trailing space: `Given `, `And `...
    pub keyword: String,
    pub text: String,
    pub status: Status,
    pub cost: Cost,
}

/// What a step costs on the draft's first run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Cost {
    /// Recorded elsewhere with one meaning: its actions are reused, no agent needed.
    Free,
    /// Recorded with different actions in different scenarios: reused, but which meaning is
    /// ambiguous; prefer a recorded wording that is not divergent.
    Divergent,
    /// No recording holds this text: an agent records it on the first run.
    NeedsRecording,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DraftScenario {
    pub name: String,
    pub line: u32,
    /// Steps the scenario runs, expanded.
    pub steps: usize,
    pub free: usize,
    pub divergent: usize,
    pub needs_recording: usize,
    /// The scenario's own recording when the draft edits an existing file: `fresh` (replays
    /// as it is), `stale`, `unrecorded` or `unreadable`.
    pub recording: String,
    /// What followed the scenario's last step in the project's other scenarios, best first
    /// (at most 3): the likely next step, worded as the project words it. Left out when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub next: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub errors: usize,
    pub warnings: usize,
    /// Distinct step texts the draft's scenarios run.
    pub distinct_steps: usize,
    /// Of those, recorded with one meaning.
    pub free: usize,
    pub divergent: usize,
    /// Of those, recorded nowhere: what the first run asks an agent to record.
    pub needs_recording: usize,
    pub summary: String,
}

pub fn run(project: &mut Project, args: CheckFeatureArgs) -> Result<CheckFeatureOutput, ToolError> {
    if args.text.trim().is_empty() {
        return Err(ToolError::new("the draft is empty", "pass the whole feature file text in `text`"));
    }
    if args.text.len() > MAX_DRAFT_BYTES {
        return Err(ToolError::new("the draft is larger than 1 MiB", "check one feature file at a time"));
    }
    let path = draft_path(args.path.as_deref(), args.kind)?;
    let text = args.text;
    let before = project.snapshot();
    Ok(project.with_draft(&path, text.clone(), |after| {
        let mut output = check(after, &before, &path, &text);
        let caused = caused_elsewhere(&before, after, &path);
        output.totals.errors += caused.iter().filter(|d| d.severity == "error").count();
        output.totals.warnings += caused.iter().filter(|d| d.severity == "warning").count();
        output.ok = output.totals.errors == 0;
        output.totals.summary = summary(&output.totals);
        output.diagnostics.extend(caused);
        output
    }))
}

pub(crate) fn draft_path(path: Option<&str>, kind: Option<DraftKind>) -> Result<PathBuf, ToolError> {
    let Some(given) = path else {
        return Ok(PathBuf::from(match kind {
            Some(DraftKind::Feature) => "features/draft.feature",
            _ => "features/draft.saffron",
        }));
    };
    let Some(path) = project_path(given) else {
        return Err(ToolError::new(
            format!("`{given}` is not a path inside the project"),
            "give a path relative to the project root, such as features/orders.saffron, or leave path out",
        ));
    };
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
    let matches_kind = match kind {
        Some(DraftKind::Feature) => extension == "feature",
        Some(DraftKind::Saffron) => extension == "saffron",
        None => extension == "feature" || extension == "saffron",
    };
    if !matches_kind {
        return Err(ToolError::new(
            format!("`{given}` is not a .feature or .saffron path matching the kind"),
            "end the path with .saffron (Gherkin plus StepSets) or .feature (plain Gherkin), or leave path out",
        ));
    }
    Ok(path)
}

/// `established` is the project without the draft: a wording is ranked by its uses there, so a
/// draft that writes the less-used of two near-duplicate wordings is warned however often it
/// writes it.
fn check(snapshot: &Snapshot, established: &Snapshot, path: &Path, text: &str) -> CheckFeatureOutput {
    let lines = LineIndex::new(text);
    let diagnostics: Vec<Diagnostic> = saffron_ide::diagnostics_against(snapshot, path, established)
        .into_iter()
        .map(|d| {
            let (line, column) = lines.position(d.span);
            Diagnostic {
                file: None,
                line,
                column,
                severity: d.severity.as_str().to_string(),
                code: d.code,
                message: d.message,
                hint: d.hint,
                replacement: d.replacement,
            }
        })
        .collect();
    let status_of = |text: &str| snapshot.entry(text).map_or(StepStatus::Unrecorded, |entry| entry.status());

    let mut steps = Vec::new();
    let mut scenarios = Vec::new();
    let mut distinct: BTreeMap<String, Cost> = BTreeMap::new();
    if let Some(file) = snapshot.file(path) {
        let document = &file.source.parsed.document;
        for step in document.steps() {
            if step.is_invocation || step.text.is_empty() {
                continue;
            }
            let status: Status = status_of(&step.text).into();
            steps.push(DraftStep {
                line: step.location.line,
                keyword: step.keyword.clone(),
                text: step.text.clone(),
                status,
                cost: cost(status),
            });
        }
        let registry = snapshot.step_sets();
        let templates = pickles::compile_templates(document, &registry);
        let states = snapshot.scenarios_in(path);
        for pickle in &templates {
            let mut counts = [0usize; 3];
            let mut seen = BTreeSet::new();
            // An invocation of an unknown set stays a step of its own in the pickle; it is an
            // error to fix, not a step to record.
            let steps: Vec<_> = pickle.steps.iter().filter(|step| !step.step.is_invocation).collect();
            for step in &steps {
                let cost = cost(status_of(&step.text).into());
                distinct.insert(step.text.clone(), cost);
                if seen.insert(step.text.clone()) {
                    counts[cost as usize] += 1;
                }
            }
            let recording = states
                .iter()
                .find(|state| state.location == pickle.scenario.header.location)
                .map_or("unrecorded", |state| state.recording.as_str());
            let (free, divergent, needs_recording) = if recording == "fresh" {
                // A fresh recording replays the whole scenario as it is, whatever its steps.
                (counts.iter().sum(), 0, 0)
            } else {
                (counts[Cost::Free as usize], counts[Cost::Divergent as usize], counts[Cost::NeedsRecording as usize])
            };
            let next = steps.last().map_or_else(Vec::new, |last| {
                let role = match last.step_type {
                    pickles::PickleStepType::Context => StepRole::Context,
                    pickles::PickleStepType::Action => StepRole::Action,
                    pickles::PickleStepType::Outcome | pickles::PickleStepType::Unknown => StepRole::Outcome,
                };
                saffron_ide::next_steps(snapshot, &last.text, role, NEXT_STEPS)
                    .into_iter()
                    .map(|step| step.text.to_string())
                    .collect()
            });
            scenarios.push(DraftScenario {
                next,
                name: pickle.scenario.header.name.clone(),
                line: pickle.scenario.header.location.line,
                steps: steps.len(),
                free,
                divergent,
                needs_recording,
                recording: recording.to_string(),
            });
        }
    }
    let errors = diagnostics.iter().filter(|d| d.severity == "error").count();
    let warnings = diagnostics.iter().filter(|d| d.severity == "warning").count();
    let count = |wanted: Cost| distinct.values().filter(|cost| **cost == wanted).count();
    let (free, divergent, needs_recording) = (count(Cost::Free), count(Cost::Divergent), count(Cost::NeedsRecording));
    let mut totals = Totals {
        errors,
        warnings,
        distinct_steps: distinct.len(),
        free,
        divergent,
        needs_recording,
        summary: String::new(),
    };
    totals.summary = summary(&totals);
    CheckFeatureOutput { path: display_path(path), ok: errors == 0, diagnostics, steps, scenarios, totals }
}

fn summary(totals: &Totals) -> String {
    format!(
        "{} error(s), {} warning(s); {} distinct step(s): {} replay for free, {} divergent, {} need recording",
        totals.errors, totals.warnings, totals.distinct_steps, totals.free, totals.divergent, totals.needs_recording
    )
}

/// Dialect problems the draft causes in other files: a StepSet the draft defines again is
/// reported where the first definition (in path order) lives, and an edit that removes a set
/// breaks its invocations elsewhere. Only problems that were not there before the draft count.
fn caused_elsewhere(before: &Snapshot, after: &Snapshot, draft: &Path) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for file in after.files() {
        let path = &file.source.path;
        if path == draft {
            continue;
        }
        let now = step_sets::check(path, &file.source.parsed.document, after.step_sets());
        if now.is_empty() {
            continue;
        }
        let was = before
            .file(path)
            .map(|old| step_sets::check(path, &old.source.parsed.document, before.step_sets()))
            .unwrap_or_default();
        for problem in now {
            if was.iter().any(|old| old.span == problem.span && old.message == problem.message) {
                continue;
            }
            out.push(Diagnostic {
                file: Some(display_path(path)),
                line: problem.location.line,
                column: problem.location.column,
                severity: problem.severity.as_str().to_string(),
                code: serde_json::to_value(problem.code)
                    .ok()
                    .and_then(|code| code.as_str().map(str::to_string))
                    .unwrap_or_default(),
                message: problem.message,
                hint: problem.hint,
                replacement: None,
            });
        }
    }
    out
}

fn cost(status: Status) -> Cost {
    match status {
        Status::Recorded => Cost::Free,
        Status::Divergent => Cost::Divergent,
        Status::Unrecorded => Cost::NeedsRecording,
    }
}

/// Byte offsets to 1-based lines and character columns.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        LineIndex { text, starts }
    }

    pub fn position(&self, span: Span) -> (u32, u32) {
        let offset = span.start.min(self.text.len());
        let line = self.starts.partition_point(|start| *start <= offset).saturating_sub(1);
        let start = self.starts.get(line).copied().unwrap_or(0);
        let column = self.text.get(start..offset).map_or(0, |prefix| prefix.chars().count());
        (line as u32 + 1, column as u32 + 1)
    }
}

impl Render for CheckFeatureOutput {
    fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}: {}", self.path, self.totals.summary);
        for d in &self.diagnostics {
            let file = d.file.as_deref().unwrap_or(&self.path);
            let _ = writeln!(out, "{file}:{}:{}: {}: {} [{}]", d.line, d.column, d.severity, d.message, d.code);
            if let Some(hint) = &d.hint {
                let _ = writeln!(out, "  hint: {hint}");
            }
            if let Some(replacement) = &d.replacement {
                let _ = writeln!(out, "  write instead: {replacement}");
            }
        }
        if !self.steps.is_empty() {
            let _ = writeln!(out, "Steps:");
            for step in &self.steps {
                let cost = match step.cost {
                    Cost::Free => "free",
                    Cost::Divergent => "divergent",
                    Cost::NeedsRecording => "needs recording",
                };
                let _ = writeln!(out, "  line {:>3}  {:<15} {}{}", step.line, cost, step.keyword, step.text);
            }
        }
        for scenario in &self.scenarios {
            let _ = writeln!(
                out,
                "Scenario \"{}\" (line {}): {} step(s), {} free, {} divergent, {} to record; recording {}",
                scenario.name,
                scenario.line,
                scenario.steps,
                scenario.free,
                scenario.divergent,
                scenario.needs_recording,
                scenario.recording
            );
            if !scenario.next.is_empty() {
                let _ =
                    writeln!(out, "  after its last step, the project usually writes: {}", scenario.next.join(" | "));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters() {
        let index = LineIndex::new("ab\nc€d\n");
        assert_eq!(index.position(Span::new(0, 0)), (1, 1));
        assert_eq!(index.position(Span::new(3, 3)), (2, 1));
        assert_eq!(index.position(Span::new(7, 7)), (2, 3));
        assert_eq!(index.position(Span::new(99, 99)), (3, 1));
    }

    /// Both wordings are in the project; the draft writes the less-used one often enough to make
    /// it the more used once saved. It is still the one to change.
    #[test]
    fn a_draft_using_the_less_used_wording_is_warned() {
        let dir = tempfile::tempdir().expect("temp dir");
        let features = dir.path().join("features");
        std::fs::create_dir_all(&features).expect("mkdir");
        let scenario = |name: &str, step: &str| format!("  Scenario: {name}\n    Given {step}\n");
        let established = format!(
            "Feature: A\n{}{}",
            scenario("one", "I open the orders page"),
            scenario("two", "I open the orders page")
        );
        std::fs::write(features.join("a.feature"), established).expect("write");
        std::fs::write(features.join("b.feature"), format!("Feature: B\n{}", scenario("one", "I open the order page")))
            .expect("write");
        let mut project = Project::open(dir.path().to_path_buf());
        let draft = format!(
            "Feature: D\n{}{}{}",
            scenario("one", "I open the order page"),
            scenario("two", "I open the order page"),
            scenario("three", "I open the order page")
        );
        let output = run(&mut project, CheckFeatureArgs { text: draft, path: None, kind: None }).expect("checked");
        let near: Vec<&Diagnostic> = output.diagnostics.iter().filter(|d| d.code == "near-duplicate").collect();
        assert_eq!(near.len(), 3, "{:?}", output.diagnostics);
        assert!(near.iter().all(|d| d.replacement.as_deref() == Some("I open the orders page")));
    }

    #[test]
    fn draft_paths() {
        assert_eq!(draft_path(None, None), Ok(PathBuf::from("features/draft.saffron")));
        assert_eq!(draft_path(None, Some(DraftKind::Feature)), Ok(PathBuf::from("features/draft.feature")));
        assert!(draft_path(Some("../x.feature"), None).is_err());
        assert!(draft_path(Some("features/x.txt"), None).is_err());
        assert!(draft_path(Some("features/x.feature"), Some(DraftKind::Saffron)).is_err());
    }
}
