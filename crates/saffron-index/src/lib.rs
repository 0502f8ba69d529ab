//! The vocabulary index: every step text written in the project's `.feature` and `.saffron`
//! files joined with every step text that has a recording.
//!
//! [`IndexHost`] takes [`Change`]s and updates only what they touch; [`Snapshot`] is the
//! immutable view readers query (the language server, the MCP server, the CLI and the runner).
//! For each text it knows where it is written, whether it is recorded, divergent or
//! unrecorded, its near-duplicates (token-Jaccard, see [`tokens`]) and the texts proven to be
//! duplicates by identical recordings; for each scenario whether its recording is fresh. From the
//! proven duplicates, [`rename_plan`] drafts the proposals that converge their wordings.

pub mod drift;
pub mod history;
mod host;
mod load;
mod model;
mod near;
mod orphans;
pub mod renames;
pub mod repair_rules;
pub mod review;
mod snapshot;
pub mod staleness;
mod succession;
pub mod tokens;

pub use host::{Change, IndexHost};
pub use load::{LoadProblem, LoadReport, feature_files, load_project, walk_feature_files};
pub use model::{
    BlockKind, Entry, FileData, NearDuplicate, NearDuplicateSearch, ProposalData, RankKey, RecordedUse, RecordingData,
    RecordingState, ScenarioStatus, StepStatus, Use,
};
pub use near::{MAX_SCANNED, MAX_VERIFIED};
pub use orphans::{ClosestScenario, OrphanRecording};
pub use renames::{RenamePlan, rename_plan, rename_plan_for};
pub use snapshot::{Invocation, Snapshot, is_runnable, recording_paths, step_specs};
pub use staleness::{StepAspect, StepChange, StepDifference, step_differences};
pub use succession::{
    BLOCK_START, PatternFacts, RoleCounts, StepBlock, StepRole, TypedStarts, ValueDefaults, WordMask, step_blocks,
};

impl IndexHost {
    /// Loads the project at `root` from disk.
    pub fn load(root: &std::path::Path) -> (IndexHost, LoadReport) {
        let (changes, report) = load_project(root);
        let mut host = IndexHost::new();
        host.apply_all(changes);
        (host, report)
    }
}
