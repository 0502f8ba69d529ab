//! The review gate: whether a pending proposal may be accepted, and accepting or rejecting it.
//!
//! One owner for the rules every client follows (`saffron proposals`/`diff`/`accept`/`reject`,
//! `saffron status`, the language server, the MCP server): plain data in and out.
//!
//! A proposal is acceptable while its three binding digests still hold (the scenario's steps,
//! the committed recording, its own content) and it passed its proof replay. Accepting happens
//! under the store lock, against the disk as it is once the lock is held, and has no override:
//! a stale proposal is refused by reason, whoever asks.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Component, Path, PathBuf};

use saffron_recording::{
    ActionChange, FeatureEdit, Proposal, Recording, SemanticCore, StepKind, StepSpec, Store, StoreError, Target,
    layout, read_inside, validate_recording, write_atomic,
};
use saffron_syntax::pickles;

use crate::host::Change;
use crate::repair_rules;
use crate::snapshot::{Snapshot, recording_paths, step_specs};

/// Whether a proposal may be accepted now, and if not, why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assessment {
    /// Every binding that no longer holds, in words; empty when none.
    pub stale_reasons: Vec<String>,
    /// How the proof replay of its recording failed, when it did.
    pub unverified: Option<String>,
    /// What no repair may change, found by comparing its recording with the committed one (a
    /// check changed or dropped, a step's value no longer used) and its feature edits with the
    /// lines they edit (a value dropped): such a proposal is never accepted.
    pub refused: Vec<String>,
    /// Actions on a different control than the committed recording's: accepted only by a
    /// person who says so (`--different-control`), and never replayed before.
    pub different_controls: Vec<String>,
}

impl Assessment {
    pub fn is_stale(&self) -> bool {
        !self.stale_reasons.is_empty()
    }

    pub fn is_acceptable(&self) -> bool {
        self.stale_reasons.is_empty()
            && self.unverified.is_none()
            && self.refused.is_empty()
            && self.different_controls.is_empty()
    }

    /// Held for a person: nothing but its different controls stands in its way.
    pub fn awaits_review(&self) -> bool {
        self.stale_reasons.is_empty()
            && self.unverified.is_none()
            && self.refused.is_empty()
            && !self.different_controls.is_empty()
    }

    /// Every reason it cannot be accepted, in words: the stale bindings, the proof failure,
    /// what no repair may change, then the controls it changes.
    pub fn refusals(&self) -> Vec<String> {
        let mut reasons = self.stale_reasons.clone();
        if let Some(failure) = &self.unverified {
            reasons.push(unverified_reason(failure));
        }
        reasons.extend(self.refused.iter().cloned());
        reasons.extend(self.different_controls.iter().map(|change| format!("different control: {change}")));
        reasons
    }
}

fn unverified_reason(failure: &str) -> String {
    format!("unverified: its recording did not pass its proof replay ({failure})")
}

/// Judges `proposal` against the project as `snapshot` holds it. What it changes is judged
/// from its recording and the committed one, never from what the file says of itself.
pub fn assess(snapshot: &Snapshot, proposal: &Proposal) -> Assessment {
    let mut assessment = Assessment {
        stale_reasons: stale_reasons(snapshot, proposal),
        unverified: proposal.unverified.clone(),
        ..Assessment::default()
    };
    if let Some(committed) = committed_recording(snapshot, proposal) {
        let review = repair_rules::review_repair(committed, &proposal.recording);
        assessment.refused = review.refused;
        assessment.different_controls = review.different_controls;
    }
    for edit in &proposal.feature_edits {
        let dropped = repair_rules::edit_drops_values(&edit.before, &edit.after);
        if !dropped.is_empty() {
            let dropped: Vec<String> = dropped.iter().map(|value| format!("\"{value}\"")).collect();
            assessment.refused.push(format!(
                "its feature edit of {}:{} drops the step's value(s) {}: a rewording keeps every value of the step",
                edit.file,
                edit.line,
                dropped.join(", ")
            ));
        }
    }
    assessment
}

/// The committed recording the proposal would replace, as the project holds it now.
fn committed_recording<'a>(snapshot: &'a Snapshot, proposal: &Proposal) -> Option<&'a Recording> {
    let cache_path = recording_path(&proposal.scenario.cache_path)?;
    snapshot.recording(&cache_path).map(|data| &data.recording)
}

/// The proposal's action-level diff from the committed recording as the project holds it now,
/// worked out from the two recordings: the diff a proposal file stores is never shown or used,
/// since a hand edit could make it say anything.
pub fn diff(snapshot: &Snapshot, proposal: &Proposal) -> Vec<saffron_recording::StepDiff> {
    saffron_recording::diff_recordings(committed_recording(snapshot, proposal), &proposal.recording)
}

/// Every reason `proposal` is stale now, in words; empty when its bindings hold.
pub fn stale_reasons(snapshot: &Snapshot, proposal: &Proposal) -> Vec<String> {
    let Some(cache_path) = recording_path(&proposal.scenario.cache_path) else {
        return vec![format!(
            "its cachePath `{}` is not a recording under {}: the proposal is damaged; reject it",
            proposal.scenario.cache_path,
            layout::CACHE
        )];
    };
    let Some(feature) = project_path(&proposal.scenario.feature) else {
        return vec![format!("its feature `{}` is not a project path: reject it", proposal.scenario.feature)];
    };
    if snapshot.file(&feature).is_none() {
        return vec![format!("the feature file {} is gone: reject this proposal", proposal.scenario.feature)];
    }
    let Some(current) = scenario_steps(snapshot, &feature, &cache_path) else {
        return vec![format!(
            "the scenario \"{}\" is no longer in {} (renamed or removed): run it again, and reject this proposal",
            proposal.scenario.name, proposal.scenario.feature
        )];
    };
    if let Some((_, reason)) = snapshot.unreadable_recordings().find(|(path, _)| path.as_ref() == cache_path) {
        return vec![format!(
            "the committed recording {} cannot be read ({reason}): whoever committed it decides; fix or delete it first",
            display_path(&cache_path)
        )];
    }
    let committed = snapshot.recording(&cache_path).map(|data| &data.recording);
    proposal.stale_reasons(&current, committed).into_iter().map(|reason| reason.to_string()).collect()
}

/// The steps of the scenario of `feature` whose recording is `cache_path`, as it parses now.
fn scenario_steps(snapshot: &Snapshot, feature: &Path, cache_path: &Path) -> Option<Vec<StepSpec>> {
    let file = snapshot.file(feature)?;
    let registry = snapshot.step_sets();
    let templates = pickles::compile_templates(&file.source.parsed.document, &registry);
    let paths = recording_paths(feature, &templates);
    templates
        .iter()
        .zip(&paths)
        .find(|(_, (recording, _))| recording == cache_path)
        .map(|(pickle, _)| step_specs(pickle))
}

/// A path a client or a file names, relative to the project root and inside it; `None` for an
/// absolute path or one that climbs out with `..`.
pub fn project_path(text: &str) -> Option<PathBuf> {
    let text = text.trim().replace('\\', "/");
    let text = text.strip_prefix("./").unwrap_or(&text);
    if text.is_empty() {
        return None;
    }
    let mut clean = PathBuf::new();
    for component in Path::new(text).components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!clean.as_os_str().is_empty()).then_some(clean)
}

/// A path with `/` separators, as every output names files.
pub fn display_path(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// A `.saffron/cache/...json` path from a proposal, checked: a hand-edited proposal must not be
/// able to make accept write anywhere else.
pub fn recording_path(text: &str) -> Option<PathBuf> {
    let path = project_path(text)?;
    layout::is_recording(&path).then_some(path)
}

/// The proposal a person names: its path as editors pass it (`.saffron/proposals/a/b.json`) or
/// its id (`a/b`: feature slug / scenario slug). `None` when it names nothing under
/// `.saffron/proposals`.
pub fn proposal_path(id: &str) -> Option<PathBuf> {
    let path = project_path(id)?;
    let path = if path.starts_with(layout::DIR) {
        path
    } else {
        let mut path = Path::new(layout::PROPOSALS).join(path);
        if path.extension().is_none_or(|e| e != "json") {
            path.as_mut_os_string().push(".json");
        }
        path
    };
    (layout::is_proposal(&path) && path.components().count() > 3).then_some(path)
}

/// The id `saffron diff`/`accept`/`reject` take for a proposal path: `feature/scenario`.
pub fn proposal_id(path: &Path) -> String {
    let id = path.strip_prefix(layout::PROPOSALS).unwrap_or(path).with_extension("");
    display_path(&id)
}

/// What `accept` may do beyond writing the proposed recording.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AcceptOptions {
    /// Apply the proposal's feature edits (and follow them into StepSet files).
    pub with_feature_edit: bool,
    /// Rewrite every other recording whose target has the same semantic core as one the
    /// proposal changed.
    pub propagate: bool,
    /// Refuse a proposal that carries feature edits instead of writing its recording alone:
    /// for a client that does not show the edits to a person (the MCP server).
    pub refuse_feature_edits: bool,
    /// A person accepts a proposal that acts on a different control than the committed
    /// recording, knowingly (`--different-control`); never set for an AI assistant.
    pub different_control: bool,
    /// The content digest of the proposal as it was proven just before: a file changed since
    /// (between the proof and the lock) is refused.
    pub proven_content: Option<String>,
}

/// What an accept wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The proposal, now removed.
    pub proposal: PathBuf,
    /// The recording written.
    pub recording: PathBuf,
    pub feature: String,
    pub scenario: String,
    /// Feature edits applied, in the order written.
    pub edits: Vec<FeatureEdit>,
    /// Other recordings whose step texts were renamed to follow an edit in a StepSet or a
    /// Background they share.
    pub renamed: Vec<Rewritten>,
    /// Other recordings whose targets were rewritten by `--propagate`.
    pub propagated: Vec<Rewritten>,
    /// What was not done, and why (a scenario left stale, a target not propagated).
    pub notes: Vec<String>,
}

/// Another scenario's recording rewritten by an accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    pub recording: PathBuf,
    pub feature: String,
    pub scenario: String,
    /// Steps renamed, or actions whose target changed.
    pub changes: usize,
}

/// Why an accept or a reject did not happen (or happened only in part).
#[derive(Debug)]
pub enum ReviewError {
    /// The argument names no proposal path.
    NotAProposal { given: String },
    /// No proposal file is there.
    NotFound { path: PathBuf },
    /// The file is there and cannot be read or validated: it can only be rejected.
    Unreadable { path: PathBuf, reason: String },
    /// Bindings that no longer hold.
    Stale { reasons: Vec<String> },
    /// Its recording failed its proof replay.
    Unverified { failure: String },
    /// It changes what no repair may change.
    Refused { reasons: Vec<String> },
    /// It acts on a different control, and the person did not say they accept that.
    DifferentControl { changes: Vec<String> },
    /// A rename proposal (feature edits, no recording change) accepted without applying them.
    NeedsFeatureEdit { edits: usize },
    /// The client does not apply feature edits, and this proposal has some.
    FeatureEditsNotOffered { edits: usize },
    /// A feature edit cannot be applied as it stands.
    EditRefused { file: String, line: u32, reason: String },
    /// After the edits, the proposed recording does not fit the scenario.
    DoesNotFit { reason: String },
    /// The store or a file could not be read, locked or written; nothing was written.
    Io { message: String },
    /// Some files were written and then one could not be.
    PartlyWritten { written: Vec<PathBuf>, failed: PathBuf, error: String },
}

impl ReviewError {
    /// A refusal of the proposal (exit 1), as opposed to a usage or I/O error (exit 2).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            ReviewError::Unreadable { .. }
                | ReviewError::Stale { .. }
                | ReviewError::Unverified { .. }
                | ReviewError::Refused { .. }
                | ReviewError::DifferentControl { .. }
                | ReviewError::NeedsFeatureEdit { .. }
                | ReviewError::FeatureEditsNotOffered { .. }
                | ReviewError::EditRefused { .. }
                | ReviewError::DoesNotFit { .. }
        )
    }

    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            ReviewError::NotAProposal { .. } | ReviewError::NotFound { .. } => {
                "name a proposal as `saffron proposals` lists it: .saffron/proposals/<feature>/<scenario>.json or \
                 <feature>/<scenario>"
                    .into()
            }
            ReviewError::Unreadable { .. } => {
                "it can only be rejected; run its scenario again for a new proposal".into()
            }
            ReviewError::Stale { .. } => {
                "run the scenario again to get a proposal bound to the current steps and recording, and reject this one"
                    .into()
            }
            ReviewError::Unverified { .. } => {
                "read it (saffron diff), fix the cause, run the scenario again, and reject this one".into()
            }
            ReviewError::Refused { .. } => {
                "reject it: the application does not do what the scenario says, or the scenario must be changed by a \
                 person (edit the feature file, and its recording follows)"
                    .into()
            }
            ReviewError::DifferentControl { .. } => {
                "read it (saffron diff); if the application really changed so, accept it with --different-control, \
                 else reject it: the scenario now fails on a defect"
                    .into()
            }
            ReviewError::NeedsFeatureEdit { .. } => {
                "this proposal only edits feature files: accept it with --with-feature-edit, or reject it".into()
            }
            ReviewError::FeatureEditsNotOffered { .. } => {
                "review the edits (saffron diff) and accept it with `saffron accept --with-feature-edit`".into()
            }
            ReviewError::EditRefused { .. } | ReviewError::DoesNotFit { .. } => {
                "nothing was changed; run the scenario again for a proposal that fits the files as they are".into()
            }
            ReviewError::Io { .. } => "nothing was changed; fix the cause and retry".into(),
            ReviewError::PartlyWritten { .. } => {
                "the files listed were written; the proposal is kept: fix the cause, then check them with saffron \
                 status (restore them from version control to undo)"
                    .into()
            }
        }
    }
}

impl fmt::Display for ReviewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReviewError::NotAProposal { given } => write!(f, "`{given}` is not a proposal path or id"),
            ReviewError::NotFound { path } => write!(f, "no pending proposal at {}", display_path(path)),
            ReviewError::Unreadable { path, reason } => {
                write!(f, "the proposal {} cannot be read: {reason}", display_path(path))
            }
            ReviewError::Stale { reasons } => {
                write!(f, "the proposal is stale and cannot be accepted: {}", reasons.join("; "))
            }
            ReviewError::Unverified { failure } => f.write_str(&unverified_reason(failure)),
            ReviewError::Refused { reasons } => {
                write!(f, "the proposal changes what no repair may change: {}", reasons.join("; "))
            }
            ReviewError::DifferentControl { changes } => write!(
                f,
                "the proposal acts on a different control than the committed recording, which changes what the step \
                 does: {}",
                changes.join("; ")
            ),
            ReviewError::NeedsFeatureEdit { edits } => write!(
                f,
                "this proposal changes no action, only the wording ({edits} feature edit(s)): accepting it without \
                 its edits would change nothing"
            ),
            ReviewError::FeatureEditsNotOffered { edits } => write!(
                f,
                "this proposal also edits feature files ({edits} edit(s)); accepting it here would leave them out"
            ),
            ReviewError::EditRefused { file, line, reason } => {
                write!(f, "the feature edit at {file}:{line} cannot be applied: {reason}")
            }
            ReviewError::DoesNotFit { reason } => write!(f, "after the feature edits, {reason}"),
            ReviewError::Io { message } => f.write_str(message),
            ReviewError::PartlyWritten { written, failed, error } => {
                let written: Vec<String> = written.iter().map(|path| display_path(path)).collect();
                write!(
                    f,
                    "{} could not be written ({error}) after these were: {}",
                    display_path(failed),
                    if written.is_empty() { "none".to_string() } else { written.join(", ") }
                )
            }
        }
    }
}

impl std::error::Error for ReviewError {}

fn io_error(error: StoreError) -> ReviewError {
    ReviewError::Io { message: error.to_string() }
}

/// The proposal at `path` (relative to the store's project root) read from disk.
fn read_proposal(store: &Store, path: &Path) -> Result<Proposal, ReviewError> {
    let absolute = store.root().join(path);
    if absolute.symlink_metadata().is_err() {
        return Err(ReviewError::NotFound { path: path.to_path_buf() });
    }
    store.read_proposal(&absolute).map_err(|error| {
        let reason = match &error {
            StoreError::Io { source, .. } => source.to_string(),
            StoreError::Invalid { source, .. } => source.to_string(),
            StoreError::OutsideProject { target, boundary, .. } => format!(
                "it leads outside {boundary} through a symbolic link (to {}); saffron does not read there",
                target.display()
            ),
        };
        ReviewError::Unreadable { path: path.to_path_buf(), reason }
    })
}

/// Accepts the proposal at `proposal_path` (relative to the project root; see
/// [`proposal_path`]). `fresh` gives the project as it is on disk: it is called once the store
/// lock is held, so nothing another saffron process writes can slip between the check and the
/// write. The feature files and recordings are written atomically, each; the proposal is
/// removed last.
pub fn accept(
    store: &Store,
    proposal_path: &Path,
    options: AcceptOptions,
    fresh: impl FnOnce() -> Snapshot,
) -> Result<Accepted, ReviewError> {
    let lock = store.lock().map_err(io_error)?;
    let snapshot = fresh();
    let proposal = read_proposal(store, proposal_path)?;
    let assessment = assess(&snapshot, &proposal);
    if assessment.is_stale() {
        return Err(ReviewError::Stale { reasons: assessment.stale_reasons });
    }
    if let Some(failure) = assessment.unverified {
        return Err(ReviewError::Unverified { failure });
    }
    if let Some(proven) = &options.proven_content
        && *proven != saffron_recording::content_digest(&proposal)
    {
        return Err(ReviewError::Stale {
            reasons: vec!["the proposal changed after its proof replay, before it could be accepted".into()],
        });
    }
    if !assessment.refused.is_empty() {
        return Err(ReviewError::Refused { reasons: assessment.refused });
    }
    if !assessment.different_controls.is_empty() && !options.different_control {
        return Err(ReviewError::DifferentControl { changes: assessment.different_controls });
    }
    let changes = diff(&snapshot, &proposal);
    let cache_path = recording_path(&proposal.scenario.cache_path)
        .ok_or_else(|| ReviewError::Stale { reasons: vec!["its cachePath is not a recording path".into()] })?;
    let edits = &proposal.feature_edits;
    if !edits.is_empty() && options.refuse_feature_edits {
        return Err(ReviewError::FeatureEditsNotOffered { edits: edits.len() });
    }
    if !edits.is_empty() && changes.is_empty() && !options.with_feature_edit {
        return Err(ReviewError::NeedsFeatureEdit { edits: edits.len() });
    }

    let mut accepted = Accepted {
        proposal: proposal_path.to_path_buf(),
        recording: cache_path.clone(),
        feature: proposal.scenario.feature.clone(),
        scenario: proposal.scenario.name.clone(),
        edits: Vec::new(),
        renamed: Vec::new(),
        propagated: Vec::new(),
        notes: Vec::new(),
    };
    let mut recording = proposal.recording.clone();
    let mut features: Vec<(PathBuf, String)> = Vec::new();
    // Other recordings to rewrite, by path, as they will be written.
    let mut others: BTreeMap<PathBuf, Recording> = BTreeMap::new();
    if options.with_feature_edit && !edits.is_empty() {
        let plan = plan_feature_edits(store.root(), &snapshot, &proposal, &cache_path)?;
        recording = plan.recording;
        features = plan.files;
        accepted.edits = edits.clone();
        for (path, renamed, changes) in plan.renamed {
            accepted.renamed.push(rewritten(&path, &renamed, changes));
            others.insert(path, renamed);
        }
        accepted.notes.extend(plan.notes);
    }
    if options.propagate {
        let (cores, notes) = propagated_targets(&changes);
        accepted.notes.extend(notes);
        for data in snapshot.recordings() {
            if data.path.as_ref() == cache_path {
                continue;
            }
            let mut rewritten_recording = others.get(data.path.as_ref()).unwrap_or(&data.recording).clone();
            let changes = retarget(&mut rewritten_recording, &cores);
            if changes > 0 {
                accepted.propagated.push(rewritten(&data.path, &rewritten_recording, changes));
                others.insert(data.path.to_path_buf(), rewritten_recording);
            }
        }
    }

    // Everything is checked before the first write, so a refusal changes nothing.
    for (path, value) in std::iter::once((&cache_path, &recording)).chain(others.iter()) {
        let json = serde_json::to_value(value).map_err(|error| ReviewError::Io { message: error.to_string() })?;
        validate_recording(&json).map_err(|error| ReviewError::DoesNotFit {
            reason: format!("the recording for {} would not be valid: {error}", display_path(path)),
        })?;
    }

    let root = store.root();
    let mut written: Vec<PathBuf> = Vec::new();
    let partly = |written: &Vec<PathBuf>, failed: &Path, error: String| ReviewError::PartlyWritten {
        written: written.clone(),
        failed: failed.to_path_buf(),
        error,
    };
    for (path, text) in &features {
        write_atomic(&root.join(path), text.as_bytes()).map_err(|error| partly(&written, path, error.to_string()))?;
        written.push(path.clone());
    }
    let first_write = lock.write_recording(&root.join(&cache_path), &recording);
    match first_write {
        Ok(()) => written.push(cache_path.clone()),
        Err(error) if written.is_empty() => return Err(io_error(error)),
        Err(error) => return Err(partly(&written, &cache_path, error.to_string())),
    }
    for (path, other) in &others {
        lock.write_recording(&root.join(path), other).map_err(|error| partly(&written, path, error.to_string()))?;
        written.push(path.clone());
    }
    lock.remove(&root.join(proposal_path)).map_err(|error| partly(&written, proposal_path, error.to_string()))?;
    Ok(accepted)
}

fn rewritten(path: &Path, recording: &Recording, changes: usize) -> Rewritten {
    Rewritten {
        recording: path.to_path_buf(),
        feature: recording.feature.clone(),
        scenario: recording.scenario.clone(),
        changes,
    }
}

/// Removes the proposal at `proposal_path`, readable or not; returns its scenario's name when it
/// could be read. The committed recording is left as it is.
pub fn reject(store: &Store, proposal_path: &Path) -> Result<Option<String>, ReviewError> {
    let lock = store.lock().map_err(io_error)?;
    let scenario = match read_proposal(store, proposal_path) {
        Ok(proposal) => Some(proposal.scenario.name),
        Err(ReviewError::Unreadable { .. }) => None,
        Err(error) => return Err(error),
    };
    // Removing a link removes the link, never the file it points to.
    lock.remove(&store.root().join(proposal_path)).map_err(io_error)?;
    Ok(scenario)
}

/// The feature files as the edits leave them, the proposal's recording renamed to fit its
/// scenario as it then parses, and the other recordings that the same edits would leave stale,
/// renamed too.
struct EditPlan {
    files: Vec<(PathBuf, String)>,
    recording: Recording,
    renamed: Vec<(PathBuf, Recording, usize)>,
    notes: Vec<String>,
}

fn plan_feature_edits(
    root: &Path,
    snapshot: &Snapshot,
    proposal: &Proposal,
    cache_path: &Path,
) -> Result<EditPlan, ReviewError> {
    let mut texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut edited_lines: BTreeSet<(PathBuf, u32)> = BTreeSet::new();
    for edit in &proposal.feature_edits {
        let refuse = |reason: String| ReviewError::EditRefused { file: edit.file.clone(), line: edit.line, reason };
        let file = project_path(&edit.file).ok_or_else(|| refuse("its file is not a project path".into()))?;
        if snapshot.file(&file).is_none() {
            return Err(refuse("it is not a .feature or .saffron file of this project".into()));
        }
        if let Some(set) = &edit.from_set {
            let defined_here = snapshot.step_sets().get(set).is_some_and(|definition| definition.file == file);
            if !defined_here {
                return Err(refuse(format!("the StepSet \"{set}\" is no longer defined in {}", edit.file)));
            }
        }
        if edit.after.contains(['\n', '\r']) {
            return Err(refuse("the new line holds a line break".into()));
        }
        if !edited_lines.insert((file.clone(), edit.line)) {
            return Err(refuse("another edit of the proposal changes the same line".into()));
        }
        let text = match texts.get(&file) {
            Some(text) => text.clone(),
            None => read_inside(root, &root.join(&file)).map_err(|error| refuse(error.to_string()))?,
        };
        let edited =
            replace_line(&text, edit.line, &edit.before, &edit.after).map_err(|error| refuse(error.to_string()))?;
        texts.insert(file, edited);
    }

    let changes = texts.iter().map(|(path, text)| Change::SetFile { path: path.clone(), text: text.clone() });
    let after = snapshot.with_changes(changes);
    let feature = project_path(&proposal.scenario.feature).unwrap_or_default();
    let steps = scenario_steps(&after, &feature, cache_path).ok_or_else(|| ReviewError::DoesNotFit {
        reason: format!(
            "the scenario \"{}\" is no longer found in {}",
            proposal.scenario.name, proposal.scenario.feature
        ),
    })?;
    let recording = renamed_to(&proposal.recording, &steps).map_err(|reason| ReviewError::DoesNotFit {
        reason: format!("the proposed recording does not fit the scenario: {reason}"),
    })?;

    // Other scenarios that run an edited line (a StepSet's step, a Background's): their
    // recordings, fresh before, are renamed with them, actions unchanged.
    let mut renamed = Vec::new();
    let mut notes = Vec::new();
    for (path, data) in after.files().map(|data| (data.source.path.clone(), data)) {
        let templates = pickles::compile_templates(&data.source.parsed.document, &after.step_sets());
        let paths = recording_paths(&path, &templates);
        for (pickle, (recording_path, _)) in templates.iter().zip(paths) {
            if recording_path == cache_path {
                continue;
            }
            let touched = pickle.steps.iter().any(|step| {
                let at = step.provenance(&path);
                edited_lines.contains(&(at.file.to_path_buf(), at.line))
            });
            let Some(committed) = snapshot.recording(&recording_path) else { continue };
            if !touched {
                continue;
            }
            let before = scenario_steps(snapshot, &path, &recording_path);
            if !before.is_some_and(|before| committed.recording.is_fresh_for(&before)) {
                notes.push(format!(
                    "{} (\"{}\") was already stale; it is left as it is",
                    display_path(&recording_path),
                    pickle.scenario.header.name
                ));
                continue;
            }
            let now = step_specs(pickle);
            match renamed_to(&committed.recording, &now) {
                Ok(other) => {
                    let changes =
                        committed.recording.steps.iter().zip(&other.steps).filter(|(a, b)| a.text != b.text).count();
                    if changes > 0 {
                        renamed.push((recording_path, other, changes));
                    }
                }
                Err(reason) => notes.push(format!(
                    "{} (\"{}\") goes stale and is left as it is: {reason}",
                    display_path(&recording_path),
                    pickle.scenario.header.name
                )),
            }
        }
    }
    Ok(EditPlan { files: texts.into_iter().collect(), recording, renamed, notes })
}

/// Why a feature edit does not apply to its file as the file is now.
#[derive(Debug, PartialEq, thiserror::Error)]
enum LineMismatch {
    #[error("line 0 does not exist")]
    LineZero,
    #[error("the file has {0} line(s)")]
    PastTheEnd(usize),
    #[error("line {line} no longer reads `{before}` (it reads `{content}`)")]
    Differs { line: u32, before: String, content: String },
}

/// `text` with line `line` (1-based) replaced by `after`, if it reads `before` now; its line
/// ending is kept.
fn replace_line(text: &str, line: u32, before: &str, after: &str) -> Result<String, LineMismatch> {
    let index = usize::try_from(line).ok().and_then(|line| line.checked_sub(1)).ok_or(LineMismatch::LineZero)?;
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(current) = lines.get(index) else {
        return Err(LineMismatch::PastTheEnd(lines.len()));
    };
    let content = current.trim_end_matches(['\n', '\r']);
    if content != before {
        return Err(LineMismatch::Differs { line, before: before.to_string(), content: content.to_string() });
    }
    let ending = &current[content.len()..];
    let replaced = format!("{after}{ending}");
    lines[index] = &replaced;
    Ok(lines.concat())
}

/// Why a recording cannot take a scenario's step texts.
#[derive(Debug, thiserror::Error)]
enum Misfit {
    #[error("it has {recorded} step(s) and the scenario {now}")]
    StepCount { recorded: usize, now: usize },
    #[error("step {number} is a {recorded} step in the recording and a {now} step now")]
    StepKind { number: usize, recorded: StepKind, now: StepKind },
    #[error("its steps still differ from the scenario's")]
    StillDiffers,
}

/// `recording` with the step texts of `steps` (same number of steps, same kinds), its digest
/// updated: the actions are the recording's.
fn renamed_to(recording: &Recording, steps: &[StepSpec]) -> Result<Recording, Misfit> {
    if recording.steps.len() != steps.len() {
        return Err(Misfit::StepCount { recorded: recording.steps.len(), now: steps.len() });
    }
    let mut renamed = recording.clone();
    for (index, (step, spec)) in renamed.steps.iter_mut().zip(steps).enumerate() {
        if step.kind != spec.kind {
            return Err(Misfit::StepKind { number: index + 1, recorded: step.kind, now: spec.kind });
        }
        step.text = spec.text.clone();
        step.table = spec.table.clone();
        step.doc_string = spec.doc_string.clone();
    }
    renamed.update_steps_digest();
    if !renamed.is_fresh_for(steps) {
        return Err(Misfit::StillDiffers);
    }
    Ok(renamed)
}

/// The targets a proposal's diff changed: each old target's semantic core and the target that
/// replaces it. A core the proposal changes two different ways is left out, with a note.
fn propagated_targets(changes: &[saffron_recording::StepDiff]) -> (HashMap<SemanticCore<'_>, &Target>, Vec<String>) {
    let mut replacements: HashMap<SemanticCore<'_>, Vec<&Target>> = HashMap::new();
    for step in changes {
        for change in &step.changes {
            let ActionChange::Changed { before, after, .. } = change else { continue };
            for (old, new) in before.targets().into_iter().zip(after.targets()) {
                if without_tier(old) == without_tier(new) {
                    continue;
                }
                let known = replacements.entry(old.semantic_core()).or_default();
                if !known.iter().any(|target| without_tier(target) == without_tier(new)) {
                    known.push(new);
                }
            }
        }
    }
    let mut cores = HashMap::new();
    let mut notes = Vec::new();
    for (core, targets) in replacements {
        match targets.as_slice() {
            [only] => {
                cores.insert(core, *only);
            }
            _ => notes.push(format!(
                "not propagated: the proposal replaces the target {} in {} different ways",
                serde_json::to_string(&core_target(&core)).unwrap_or_default(),
                targets.len()
            )),
        }
    }
    notes.sort();
    (cores, notes)
}

/// A target holding only `core`, to name it in a note.
fn core_target(core: &SemanticCore<'_>) -> Target {
    let owned = |value: Option<&str>| value.map(str::to_string);
    Target {
        role: owned(core.role),
        name: owned(core.name),
        name_regex: owned(core.name_regex),
        label: owned(core.label),
        placeholder: owned(core.placeholder),
        text: owned(core.text),
        test_id: owned(core.test_id),
        ..Target::default()
    }
}

fn without_tier(target: &Target) -> Target {
    Target { tier: None, ..target.clone() }
}

/// Replaces every target of `recording` whose semantic core is a key of `cores` with its new
/// target; returns how many actions changed. Only targets move: an assertion's expected value
/// is never touched.
fn retarget(recording: &mut Recording, cores: &HashMap<SemanticCore<'_>, &Target>) -> usize {
    let mut changed = 0;
    for step in &mut recording.steps {
        for action in &mut step.actions {
            let mut moved = false;
            for target in action.targets_mut() {
                let Some(new) = cores.get(&target.semantic_core()) else { continue };
                if *target != **new {
                    *target = (*new).clone();
                    moved = true;
                }
            }
            changed += usize::from(moved);
        }
    }
    changed
}

pub mod handlers;

#[cfg(test)]
mod tests;
