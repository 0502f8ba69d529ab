//! The tools, as plain functions from arguments to a serializable answer or a [`ToolError`].
//! `server.rs` turns them into MCP: a schema per tool, `structuredContent` plus a text
//! rendering per answer, and `isError` results for failures.

pub mod author_feature;
pub mod check_feature;
pub mod find_steps;
pub mod proposals;
pub mod run;
pub mod scenarios;
pub mod vocabulary;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use saffron_index::{Snapshot, StepStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::project::{display_path, project_path};

/// A failure the model can act on: what went wrong and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub message: String,
    pub hint: String,
}

impl ToolError {
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> ToolError {
        ToolError { message: message.into(), hint: hint.into() }
    }

    /// The text an `isError` result carries.
    pub fn render(&self) -> String {
        format!("{}\nWhat to do: {}", self.message, self.hint)
    }
}

/// The text rendering of an answer, beside its `structuredContent`: what a model without
/// structured output reads, so it is written for reading, not as JSON.
pub trait Render {
    fn render(&self) -> String;
}

/// A step's status, as the tools name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Recorded: replays for free.
    Recorded,
    /// Recorded with different actions in different scenarios.
    Divergent,
    /// Not recorded yet: using it costs a recording.
    Unrecorded,
}

impl From<StepStatus> for Status {
    fn from(status: StepStatus) -> Status {
        match status {
            StepStatus::Recorded => Status::Recorded,
            StepStatus::Divergent => Status::Divergent,
            StepStatus::Unrecorded => Status::Unrecorded,
        }
    }
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Recorded => "recorded",
            Status::Divergent => "divergent",
            Status::Unrecorded => "unrecorded",
        }
    }

    /// The badge the editors show.
    pub fn badge(self) -> &'static str {
        match self {
            Status::Recorded => "✓ recorded",
            Status::Divergent => "⚠ divergent",
            Status::Unrecorded => "○ unrecorded",
        }
    }

    /// Recorded first: the order every list of steps is given in.
    pub fn rank(self) -> u8 {
        match self {
            Status::Recorded => 0,
            Status::Divergent => 1,
            Status::Unrecorded => 2,
        }
    }
}

/// Paging arguments shared by the listing tools, resolved against a default and a cap.
pub fn page(limit: Option<u32>, offset: Option<u32>, default: usize, cap: usize) -> Result<(usize, usize), ToolError> {
    let limit = limit.map_or(default, |limit| limit as usize);
    if limit == 0 || limit > cap {
        return Err(ToolError::new(
            format!("limit must be between 1 and {cap}, not {limit}"),
            format!("pass a limit from 1 to {cap} and page on with offset"),
        ));
    }
    Ok((limit, offset.unwrap_or(0) as usize))
}

/// A file filter given by a client: a feature file or a folder of them, relative to the
/// project root. Unknown paths are an error that lists what exists, so the model can retry.
pub fn file_filter(snapshot: &Snapshot, file: Option<&str>) -> Result<Option<PathBuf>, ToolError> {
    let Some(file) = file else { return Ok(None) };
    let Some(path) = project_path(file) else {
        return Err(ToolError::new(
            format!("`{file}` is not a path inside the project"),
            "give a path relative to the project root, such as features/orders.saffron, without `..`",
        ));
    };
    let known = snapshot.files().any(|data| data.source.path.starts_with(&path));
    if !known {
        return Err(ToolError::new(
            format!("no feature file is at or under `{}`", display_path(&path)),
            format!("use one of the project's feature files: {}", known_files(snapshot, 8)),
        ));
    }
    Ok(Some(path))
}

/// The first `max` feature files of the project, for error hints.
pub fn known_files(snapshot: &Snapshot, max: usize) -> String {
    let files: Vec<String> = snapshot.files().map(|data| display_path(&data.source.path)).collect();
    if files.is_empty() {
        return "(the project has no .feature or .saffron file yet)".to_string();
    }
    let mut out = files.iter().take(max).cloned().collect::<Vec<_>>().join(", ");
    if files.len() > max {
        let _ = write!(out, " and {} more (see list_scenarios)", files.len() - max);
    }
    out
}

/// Whether `file` is `filter` or inside it.
pub fn under(file: &Path, filter: &Path) -> bool {
    file.starts_with(filter)
}
