//! `vocabulary`: the project's steps with their status and where they are written.

use std::fmt::Write as _;
use std::path::Path;

use saffron_index::{BlockKind, Entry, Snapshot};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Render, Status, ToolError, file_filter, page, under};
use crate::project::display_path;

/// How many uses a step lists; `count` always has the full number.
const MAX_USES: usize = 10;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VocabularyArgs {
    /// Only steps whose text contains this, ignoring case.
    #[serde(default)]
    pub text: Option<String>,
    /// Only steps with this status.
    #[serde(default)]
    pub status: Option<Status>,
    /// Only steps written in (or, for steps that only a recording holds, recorded for) this
    /// feature file or folder, relative to the project root: `features/orders.saffron`.
    #[serde(default)]
    pub file: Option<String>,
    /// At most this many steps (default 50, at most 500).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Skip this many steps first, to page on (default 0).
    #[serde(default)]
    pub offset: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VocabularyOutput {
    /// Steps matching the filters, before paging.
    pub total: usize,
    pub offset: usize,
    /// The offset of the next page, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Recorded first, then divergent, then unrecorded; most used first within each.
    pub steps: Vec<StepInfo>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepInfo {
    /// The exact text, without its keyword: a recording's identity.
    pub text: String,
    pub status: Status,
    /// Recorded as requests and their checks (an `@api` scenario's step), not page actions.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub api: bool,
    /// How many places write it (a StepSet's step counts once, where the set defines it).
    pub count: usize,
    /// Where it is written (the first ten).
    pub uses: Vec<UseInfo>,
    /// Recordings holding it.
    pub recordings: usize,
    /// Other wordings that are typo-level variants of this one.
    pub near_duplicates: Vec<String>,
    /// Other wordings recorded with exactly the same actions.
    pub same_behaviour_as: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UseInfo {
    pub file: String,
    pub line: u32,
    /// `scenario`, `background`, `stepSet` or `fixture`.
    pub block: String,
    /// The name of that scenario, StepSet, Fixture or Background.
    pub block_name: String,
}

pub fn run(snapshot: &Snapshot, args: VocabularyArgs) -> Result<VocabularyOutput, ToolError> {
    let (limit, offset) = page(args.limit, args.offset, 50, 500)?;
    let filter = file_filter(snapshot, args.file.as_deref())?;
    let needle = args.text.as_deref().map(str::to_lowercase).filter(|text| !text.trim().is_empty());
    let mut entries: Vec<&Entry> = snapshot
        .entries()
        .into_iter()
        .map(AsRef::as_ref)
        .filter(|entry| args.status.is_none_or(|status| Status::from(entry.status()) == status))
        .filter(|entry| needle.as_deref().is_none_or(|needle| entry.text.to_lowercase().contains(needle)))
        .filter(|entry| filter.as_deref().is_none_or(|filter| in_file(snapshot, entry, filter)))
        .collect();
    entries.sort_by(|a, b| {
        (Status::from(a.status()).rank(), std::cmp::Reverse(a.count()), &a.text).cmp(&(
            Status::from(b.status()).rank(),
            std::cmp::Reverse(b.count()),
            &b.text,
        ))
    });
    let total = entries.len();
    let steps: Vec<StepInfo> =
        entries.into_iter().skip(offset).take(limit).map(|entry| step_info(snapshot, entry)).collect();
    let next_offset = (offset + steps.len() < total).then_some(offset + steps.len());
    Ok(VocabularyOutput { total, offset, next_offset, steps })
}

/// Written under the filter, or (for a text no file writes) recorded for a feature under it.
fn in_file(snapshot: &Snapshot, entry: &Entry, filter: &Path) -> bool {
    if entry.uses.iter().any(|use_| under(&use_.file, filter)) {
        return true;
    }
    entry.uses.is_empty()
        && entry.recordings.iter().any(|recorded| {
            snapshot
                .recording(&recorded.recording)
                .is_some_and(|data| under(Path::new(&data.recording.feature), filter))
        })
}

pub fn step_info(snapshot: &Snapshot, entry: &Entry) -> StepInfo {
    StepInfo {
        text: entry.text.to_string(),
        status: entry.status().into(),
        api: entry.over_http(),
        count: entry.count(),
        uses: entry
            .uses
            .iter()
            .take(MAX_USES)
            .map(|use_| UseInfo {
                file: display_path(&use_.file),
                line: use_.location.line,
                block: block_name(use_.block).to_string(),
                block_name: use_.block_name.clone(),
            })
            .collect(),
        recordings: entry.recordings.len(),
        near_duplicates: snapshot.near_duplicates(&entry.text).into_iter().map(|d| d.text.to_string()).collect(),
        same_behaviour_as: snapshot.same_behaviour(&entry.text).into_iter().map(|t| t.to_string()).collect(),
    }
}

pub fn block_name(block: BlockKind) -> &'static str {
    match block {
        BlockKind::Background => "background",
        BlockKind::Scenario => "scenario",
        BlockKind::StepSet => "stepSet",
        BlockKind::Fixture => "fixture",
    }
}

impl Render for VocabularyOutput {
    fn render(&self) -> String {
        let mut out = String::new();
        let shown = self.steps.len();
        let _ = writeln!(
            out,
            "{} step(s) match; showing {} from offset {}{}",
            self.total,
            shown,
            self.offset,
            self.next_offset.map_or(String::new(), |next| format!(" (next page: offset {next})"))
        );
        for step in &self.steps {
            let place = step
                .uses
                .first()
                .map_or_else(|| "only in a recording".to_string(), |first| format!("{}:{}", first.file, first.line));
            let _ = writeln!(out, "{}  {}  (written {}×, {place})", step.status.badge(), step.text, step.count);
            if !step.near_duplicates.is_empty() {
                let _ = writeln!(out, "    near-duplicates: {}", quoted(&step.near_duplicates));
            }
            if !step.same_behaviour_as.is_empty() {
                let _ = writeln!(out, "    same behaviour as: {}", quoted(&step.same_behaviour_as));
            }
        }
        out
    }
}

pub fn quoted(texts: &[String]) -> String {
    texts.iter().map(|text| format!("\"{text}\"")).collect::<Vec<_>>().join(", ")
}
