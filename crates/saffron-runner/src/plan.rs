//! Which scenario executions a run performs: every runnable scenario (one per Examples row),
//! narrowed by paths, `FILE:LINE` and a tag expression.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use saffron_index::{RecordingState, Snapshot, recording_paths, step_specs};
use saffron_recording::{Recording, StepSpec};
use saffron_syntax::pickles;

use crate::seed::{SeedSources, Seeding, seed};
use crate::tags::TagExpression;

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Files or folders (relative to the project root); `FILE:LINE` picks the scenario, Examples
    /// row or step on that line.
    pub targets: Vec<String>,
    pub tags: Option<TagExpression>,
}

/// Why a scenario has nothing to replay: its verdict's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotReplayable {
    #[error("needs recording: the recording disappeared")]
    Disappeared,
    #[error("needs recording: the scenario changed since it was recorded")]
    Stale,
    #[error("needs recording: it has never been recorded")]
    Unrecorded,
    /// An `@api` recording whose schema checks were recorded against another contract than
    /// the one pinned now (or one that is gone): why.
    #[error("needs recording: {0}")]
    ContractChanged(String),
    /// The committed recording does not validate, with the reason.
    #[error("the recording cannot be used: {0}")]
    Unreadable(String),
}

/// One scenario to replay: a plain scenario, or one row of an Outline.
#[derive(Debug, Clone)]
pub struct Execution {
    pub file: PathBuf,
    pub name: String,
    pub line: u32,
    /// The row's values by column, for `<param>`.
    pub params: Vec<(String, String)>,
    /// The steps as they run (row values filled in): tables for `<table:key>`.
    pub steps: Vec<StepSpec>,
    pub recording_path: PathBuf,
    /// What is replayed: the pending proposal's recording when there is one bound to the
    /// scenario as it is now, else the committed recording when it is fresh; otherwise why
    /// nothing can be replayed.
    pub recording: Result<Recording, NotReplayable>,
    /// The pending proposal replayed instead of the committed recording (its path): a pass
    /// is yellow, never green, until a person accepts or rejects it.
    pub pending_proposal: Option<PathBuf>,
    /// A pending proposal that acts on a different control than the committed recording (its
    /// path): never replayed until a person accepts it, and the committed recording that fails
    /// is not repaired again meanwhile (the repair is filed already; another would cost the
    /// same tokens to say the same thing).
    pub held_for_review: Option<PathBuf>,
    /// The feature's `Fixture`, replayed once before the first of its scenarios; its verdict
    /// is the scenario's floor.
    pub fixture: Option<Arc<Execution>>,
    /// True when there is no fresh recording to replay (never recorded, or the steps changed):
    /// an agent records it; without one it is blocked. An unreadable recording is not
    /// recorded over.
    pub needs_recording: bool,
    /// The scenario as its recording holds it: the name and steps as written, `<param>`
    /// placeholders kept (an Outline's rows share one recording).
    pub template_name: String,
    pub template_steps: Vec<StepSpec>,
    /// For a scenario that needs recording: which of its steps other fresh recordings already
    /// perform (replayed at zero tokens), and the gaps the agent records.
    pub seeding: Option<Arc<Seeding>>,
    /// The recording committed in the cache now, fresh or not: a proposal is bound to it.
    pub committed: Option<Recording>,
    /// Where the scenario's proposal is filed.
    pub proposal_path: PathBuf,
    /// Where each of the template's steps is written (a StepSet's steps in the set's file): a
    /// proposal's feature edits land there.
    pub step_origins: Vec<StepOrigin>,
    /// Tagged `@api` (itself, or its feature): performed on the HTTP medium, no browser.
    pub api: bool,
    /// The StepSet tagged `@session` the scenario starts with (see [`crate::sign_in_once`]).
    pub session: Option<crate::sign_in_once::SessionSteps>,
}

impl Execution {
    /// An `@api` scenario whose Fixture, if any, is one too: no browser runs any of it.
    pub fn api_only(&self) -> bool {
        self.api && self.fixture.as_ref().is_none_or(|fixture| fixture.api)
    }
}

/// The tag that sends a scenario to the HTTP medium.
pub const API_TAG: &str = "@api";

/// The line a step is written on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOrigin {
    pub file: PathBuf,
    pub line: u32,
    /// The StepSet the step comes from, when it does.
    pub from_set: Option<String>,
}

fn step_origins(path: &Path, template: &pickles::Pickle<'_>) -> Vec<StepOrigin> {
    template
        .steps
        .iter()
        .map(|step| {
            let provenance = step.provenance(path);
            StepOrigin {
                file: provenance.file.to_path_buf(),
                line: provenance.line,
                from_set: provenance.from_set.map(str::to_owned),
            }
        })
        .collect()
}

/// The StepSet tagged `@session` that `pickle` starts with (in its Background or its own
/// steps): how many of its first steps it makes.
fn session_steps(pickle: &pickles::Pickle<'_>) -> Option<crate::sign_in_once::SessionSteps> {
    let first = pickle.steps.first()?;
    let (set, invocation) = (first.step_set?, first.invocation?);
    if !set.signs_in() {
        return None;
    }
    // The steps of that one invocation (the same set invoked again right after is another).
    let steps =
        pickle.steps.iter().take_while(|step| step.invocation.is_some_and(|i| std::ptr::eq(i, invocation))).count();
    Some(crate::sign_in_once::SessionSteps { steps, name: set.name.clone() })
}

/// A target's file or folder and, for `FILE:LINE`, its line.
pub fn line_target(target: &str) -> (PathBuf, Option<u32>) {
    match target.rsplit_once(':') {
        Some((file, line)) if line.parse::<u32>().is_ok() => (PathBuf::from(file), line.parse().ok()),
        _ => (PathBuf::from(target), None),
    }
}

pub fn plan(snapshot: &Snapshot, selection: &Selection) -> Vec<Execution> {
    let targets: Vec<(PathBuf, Option<u32>)> = selection.targets.iter().map(|t| line_target(t)).collect();
    let registry = snapshot.step_sets();
    let seed_sources = SeedSources::of(snapshot);
    let mut executions = Vec::new();
    let mut files: Vec<_> = snapshot.files().collect();
    files.sort_by(|a, b| a.source.path.cmp(&b.source.path));
    for file in files {
        let path = file.source.path.as_path();
        let wanted_lines: Vec<Option<u32>> = targets
            .iter()
            .filter(|(target, _)| target.as_os_str().is_empty() || path.starts_with(target) || path == target.as_path())
            .map(|(_, line)| *line)
            .collect();
        if !targets.is_empty() && wanted_lines.is_empty() {
            continue;
        }
        let document = &file.source.parsed.document;
        let templates = pickles::compile_templates(document, &registry);
        let paths = recording_paths(path, &templates);
        let states: Vec<_> = snapshot.scenarios_in(path);
        // The Fixture first, wherever it is written: every scenario of the file needs it.
        let committed_of =
            |recording_path: &Path| snapshot.recording(recording_path).map(|data| data.recording.clone());
        let feature_is_api =
            document.feature.as_ref().is_some_and(|feature| feature.tags.iter().any(|tag| tag.name == API_TAG));
        let fixture = templates.iter().zip(&paths).zip(&states).find_map(
            |((template, (recording_path, proposal_path)), state)| {
                (template.scenario.kind == saffron_syntax::ScenarioKind::Fixture).then(|| {
                    let (recording, pending_proposal, _) = replayable(snapshot, recording_path, state);
                    let needs_recording = pending_proposal.is_none()
                        && matches!(state.recording, RecordingState::Stale | RecordingState::Unrecorded);
                    Arc::new(Execution {
                        file: path.to_path_buf(),
                        name: template.scenario.header.name.clone(),
                        line: template.scenario.header.location.line,
                        params: Vec::new(),
                        steps: step_specs(template),
                        recording_path: recording_path.clone(),
                        recording,
                        pending_proposal,
                        held_for_review: None,
                        fixture: None,
                        needs_recording,
                        template_name: template.scenario.header.name.clone(),
                        template_steps: step_specs(template),
                        seeding: None,
                        committed: committed_of(recording_path),
                        proposal_path: proposal_path.clone(),
                        step_origins: step_origins(path, template),
                        api: feature_is_api,
                        session: None,
                    })
                })
            },
        );
        for ((template, (recording_path, proposal_path)), state) in templates.iter().zip(paths).zip(states) {
            if template.scenario.kind == saffron_syntax::ScenarioKind::Fixture {
                continue;
            }
            let (recording, pending_proposal, held_for_review) = replayable(snapshot, &recording_path, &state);
            let committed = committed_of(&recording_path);
            let origins = step_origins(path, template);
            let needs_recording = pending_proposal.is_none()
                && matches!(state.recording, RecordingState::Stale | RecordingState::Unrecorded);
            // The rows of an Outline share one recording, so one seeding: of the template's steps.
            let seeding =
                needs_recording.then(|| Arc::new(seed(&step_specs(template), &seed_sources.except(&recording_path))));
            let rows: Vec<_> = pickles::compile(document, &registry)
                .into_iter()
                .filter(|pickle| std::ptr::eq(pickle.scenario, template.scenario))
                .collect();
            for pickle in rows {
                let scenario = template.scenario;
                let line = pickle.location.line;
                let span_lines = scenario.header.location.line..=last_line(&file.source.text, scenario.span.end);
                let selected_by_line = wanted_lines.iter().any(|wanted| match wanted {
                    None => true,
                    Some(wanted) => *wanted == line || (pickle.row.is_none() && span_lines.contains(wanted)),
                });
                if !targets.is_empty() && !selected_by_line {
                    continue;
                }
                let tags: Vec<&str> = pickle.tags.iter().map(|tag| tag.name.as_str()).collect();
                if let Some(expression) = &selection.tags
                    && !expression.matches(&tags)
                {
                    continue;
                }
                let params = match (
                    pickle.row,
                    scenario
                        .examples
                        .iter()
                        .find(|e| e.table_body.iter().any(|r| pickle.row.is_some_and(|row| std::ptr::eq(r, row)))),
                ) {
                    (Some(row), Some(examples)) => examples
                        .table_header
                        .iter()
                        .flat_map(|header| header.cells.iter().zip(&row.cells))
                        .map(|(name, value)| (name.value.clone(), value.value.clone()))
                        .collect(),
                    _ => Vec::new(),
                };
                executions.push(Execution {
                    file: path.to_path_buf(),
                    name: pickle.name.clone(),
                    line,
                    params,
                    steps: step_specs(&pickle),
                    recording_path: recording_path.clone(),
                    recording: recording.clone(),
                    pending_proposal: pending_proposal.clone(),
                    held_for_review: held_for_review.clone(),
                    fixture: fixture.clone(),
                    needs_recording,
                    template_name: template.scenario.header.name.clone(),
                    template_steps: step_specs(template),
                    seeding: seeding.clone(),
                    committed: committed.clone(),
                    proposal_path: proposal_path.clone(),
                    step_origins: origins.clone(),
                    api: tags.contains(&API_TAG),
                    session: session_steps(&pickle),
                });
            }
        }
    }
    executions
}

/// What a scenario replays: the pending proposal's recording when one is bound to the scenario
/// as it is now, else the committed recording when it is fresh; otherwise why nothing can be.
/// Third, a pending proposal held for a person's review (see [`Execution::held_for_review`]).
fn replayable(
    snapshot: &Snapshot,
    recording_path: &Path,
    state: &saffron_index::ScenarioStatus,
) -> (Result<Recording, NotReplayable>, Option<PathBuf>, Option<PathBuf>) {
    let recording = match &state.recording {
        RecordingState::Fresh => {
            snapshot.recording(recording_path).map(|data| data.recording.clone()).ok_or(NotReplayable::Disappeared)
        }
        RecordingState::Stale => Err(NotReplayable::Stale),
        RecordingState::Unrecorded => Err(NotReplayable::Unrecorded),
        RecordingState::Unreadable { reason } => Err(NotReplayable::Unreadable(reason.clone())),
    };
    // A proposal exists because the committed recording failed and was healed: replay the
    // healed one. A stale proposal (the scenario or the cache moved since it was filed) proves
    // nothing about now, and an unverified one failed its own proof: the committed recording is
    // replayed instead, and healed again if it fails.
    // The review gate's own judgement, so a run never replays what `saffron accept` would refuse.
    let pending = state.pending_proposal.as_deref().and_then(|path| snapshot.proposal(path));
    let assessment = pending.map(|data| saffron_index::review::assess(snapshot, &data.proposal));
    match (pending, assessment) {
        (Some(data), Some(assessment)) if assessment.is_acceptable() => {
            (Ok(data.proposal.recording.clone()), Some(data.path.to_path_buf()), None)
        }
        (Some(data), Some(assessment)) if assessment.awaits_review() => {
            (recording, None, Some(data.path.to_path_buf()))
        }
        _ => (recording, None, None),
    }
}

fn last_line(text: &str, offset: usize) -> u32 {
    text[..offset.min(text.len())].matches('\n').count() as u32 + 1
}
