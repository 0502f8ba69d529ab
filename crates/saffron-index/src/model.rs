//! What the index knows about each step text, scenario and file: plain data.

use std::path::Path;
use std::sync::Arc;

use saffron_recording::{Action, Proposal, Recording};
use saffron_syntax::{Location, ScenarioKind, SourceFile};
use serde::Serialize;

/// Whether a step text replays for free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// Every recording that holds the text performs it with the same actions.
    Recorded,
    /// The same text is recorded as different action lists.
    Divergent,
    /// No recording holds the text.
    Unrecorded,
}

impl StepStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Recorded => "recorded",
            StepStatus::Divergent => "divergent",
            StepStatus::Unrecorded => "unrecorded",
        }
    }
}

/// The block a written step belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BlockKind {
    Background,
    Scenario,
    StepSet,
    Fixture,
}

impl From<ScenarioKind> for BlockKind {
    fn from(kind: ScenarioKind) -> Self {
        match kind {
            ScenarioKind::Scenario => BlockKind::Scenario,
            ScenarioKind::StepSet => BlockKind::StepSet,
            ScenarioKind::Fixture => BlockKind::Fixture,
        }
    }
}

/// One place a step text is written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Use {
    pub file: Arc<Path>,
    /// Where the step's text starts.
    pub location: Location,
    pub block: BlockKind,
    /// The scenario, set, fixture or background name ("" for an unnamed Background).
    pub block_name: String,
}

/// One recording that holds a step text, and what it does for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedUse {
    /// The recording file, relative to the project root.
    pub recording: Arc<Path>,
    pub scenario: String,
    /// The step's position in the recording.
    pub step_index: usize,
    pub actions: Arc<[Action]>,
    /// Equal for two action lists that do the same thing (targets' semantic cores and values;
    /// CSS fallbacks and the tier that fired are left out).
    pub behaviour: Arc<str>,
}

/// Everything known about one step text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    pub text: Arc<str>,
    /// The text's tokens (see [`crate::tokens`]), kept for near-duplicate queries.
    #[serde(skip)]
    pub tokens: Arc<[String]>,
    /// The text with its values generalised (see [`crate::tokens::pattern_key`]).
    #[serde(skip)]
    pub pattern: Arc<str>,
    /// The text lowercased, for completion matching.
    #[serde(skip)]
    pub lowercase: Arc<str>,
    /// Where the text is written, by file then position. A StepSet's step counts once, where
    /// the set defines it.
    pub uses: Vec<Use>,
    pub recordings: Vec<RecordedUse>,
}

/// An entry's place in the completion order: recorded before divergent before unrecorded,
/// then the most used, then by text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RankKey {
    pub status: StepStatus,
    pub uses: std::cmp::Reverse<usize>,
    pub text: Arc<str>,
    /// The text lowercased, so matching needs no look-up of the entry.
    pub lowercase: Arc<str>,
}

impl Entry {
    pub fn rank_key(&self) -> RankKey {
        RankKey {
            status: self.status(),
            uses: std::cmp::Reverse(self.count()),
            text: self.text.clone(),
            lowercase: self.lowercase.clone(),
        }
    }

    pub(crate) fn new(text: Arc<str>) -> Entry {
        let tokens = crate::tokens::tokens(&text).into();
        let pattern = crate::tokens::pattern_key(&text).into();
        let lowercase = text.to_lowercase().into();
        Entry { text, tokens, pattern, lowercase, uses: Vec::new(), recordings: Vec::new() }
    }

    pub fn status(&self) -> StepStatus {
        let mut behaviours = self.recordings.iter().map(|r| &r.behaviour);
        match behaviours.next() {
            None => StepStatus::Unrecorded,
            Some(first) if behaviours.all(|b| b == first) => StepStatus::Recorded,
            Some(_) => StepStatus::Divergent,
        }
    }

    /// Whether every recording performs the text with requests and their checks only: a step
    /// of an `@api` scenario, performed by Saffron's HTTP client.
    pub fn over_http(&self) -> bool {
        !self.recordings.is_empty()
            && self
                .recordings
                .iter()
                .all(|recorded| !recorded.actions.is_empty() && recorded.actions.iter().all(Action::is_http))
    }

    /// How many places the text is written.
    pub fn count(&self) -> usize {
        self.uses.len()
    }

    /// The distinct recorded action lists, most used first.
    pub fn action_lists(&self) -> Vec<&[Action]> {
        let mut lists: Vec<(&Arc<str>, &[Action], usize)> = Vec::new();
        for recorded in &self.recordings {
            match lists.iter_mut().find(|(behaviour, _, _)| **behaviour == recorded.behaviour) {
                Some(found) => found.2 += 1,
                None => lists.push((&recorded.behaviour, &recorded.actions, 1)),
            }
        }
        lists.sort_by_key(|list| std::cmp::Reverse(list.2));
        lists.into_iter().map(|(_, actions, _)| actions).collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.uses.is_empty() && self.recordings.is_empty()
    }
}

/// A text that is a near-duplicate of another.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NearDuplicate {
    pub text: Arc<str>,
    /// Token-Jaccard, at least the threshold.
    pub similarity: f64,
    pub status: StepStatus,
    pub count: usize,
}

/// The near-duplicates of a text, and whether the bounded search looked at every candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NearDuplicateSearch {
    pub found: Vec<NearDuplicate>,
    /// False when texts made of the same few words were too many to look at all of them: the
    /// search stopped, and texts it did not reach may be near-duplicates too.
    pub complete: bool,
}

/// Whether a scenario's recording is usable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "state")]
pub enum RecordingState {
    /// Recorded for exactly the scenario's current steps.
    Fresh,
    /// Recorded, but the scenario (or a set it invokes) was edited since.
    Stale,
    /// No recording yet.
    Unrecorded,
    /// The recording file exists but cannot be used; the reason says why.
    Unreadable { reason: String },
}

impl RecordingState {
    pub fn as_str(&self) -> &'static str {
        match self {
            RecordingState::Fresh => "fresh",
            RecordingState::Stale => "stale",
            RecordingState::Unrecorded => "unrecorded",
            RecordingState::Unreadable { .. } => "unreadable",
        }
    }
}

/// A runnable scenario (or Fixture) and the state of its recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioStatus {
    pub file: Arc<Path>,
    pub name: String,
    pub location: Location,
    pub kind: BlockKind,
    /// Examples rows, 0 for a plain scenario.
    pub rows: usize,
    /// Where its recording lives (or will), relative to the project root.
    pub recording_path: Arc<Path>,
    pub recording: RecordingState,
    /// A proposal waiting for review, relative to the project root.
    pub pending_proposal: Option<Arc<Path>>,
    /// Why a stale recording is stale: the steps that differ, in scenario order (empty unless
    /// the recording is stale).
    #[serde(skip)]
    pub stale_steps: Vec<crate::staleness::StepDifference>,
}

/// A parsed feature file and the steps it writes.
#[derive(Debug, Clone, PartialEq)]
pub struct FileData {
    pub source: SourceFile,
    /// (text, use) for every step written in the file, invocations excluded.
    pub(crate) written: Vec<(Arc<str>, Use)>,
}

impl FileData {
    pub fn document(&self) -> &saffron_syntax::Document {
        &self.source.parsed.document
    }

    /// The texts of the steps written on `line` (1-based; invocations excluded).
    pub fn texts_on_line(&self, line: u32) -> impl Iterator<Item = &Arc<str>> {
        // `written` is in the document's order, so by line: a look-up costs the same in a file
        // of any size (completion asks on every keystroke).
        let first = self.written.partition_point(|(_, used)| used.location.line < line);
        self.written[first..].iter().take_while(move |(_, used)| used.location.line == line).map(|(text, _)| text)
    }

    /// The texts of the steps written in the file, in order (invocations excluded).
    pub fn written_texts(&self) -> impl Iterator<Item = &Arc<str>> {
        self.written.iter().map(|(text, _)| text)
    }
}

/// A loaded recording file.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingData {
    pub path: Arc<Path>,
    pub recording: Recording,
}

/// A loaded proposal file.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposalData {
    pub path: Arc<Path>,
    pub proposal: Proposal,
}
