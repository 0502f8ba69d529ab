//! The writer side: [`IndexHost`] takes changes (a file's new text, a recording written or
//! removed) and updates only what they touch; [`IndexHost::snapshot`] hands out an immutable
//! [`Snapshot`] that readers query while the host moves on.
//!
//! The maps are persistent (`imbl`): a snapshot is a handful of reference counts, and an
//! update copies only the paths of the trees it changes, never the whole index.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use imbl::OrdMap;
use saffron_recording::{Proposal, Recording};
use saffron_syntax::{Document, FeatureChild, RuleChild, Scenario, SourceFile, StepSetRegistry};

use crate::model::{BlockKind, Entry, FileData, ProposalData, RankKey, RecordedUse, RecordingData, Use};
use crate::snapshot::Snapshot;
use crate::succession::FileChange;

/// One edit to the project, as the index sees it. Paths are relative to the project root.
#[derive(Debug, Clone)]
pub enum Change {
    /// A `.feature` or `.saffron` file was created or edited (other extensions are ignored).
    SetFile {
        path: PathBuf,
        text: String,
    },
    RemoveFile {
        path: PathBuf,
    },
    /// A recording was read (already validated).
    SetRecording {
        path: PathBuf,
        recording: Box<Recording>,
    },
    /// A recording file exists but could not be used.
    SetUnreadableRecording {
        path: PathBuf,
        reason: String,
    },
    RemoveRecording {
        path: PathBuf,
    },
    SetProposal {
        path: PathBuf,
        proposal: Box<Proposal>,
    },
    RemoveProposal {
        path: PathBuf,
    },
    /// The run history (`.saffron/reports/history.jsonl`) was read again: each scenario's
    /// recent runs, for the flaky and chronic lenses.
    SetHistory {
        scenarios: Vec<crate::history::ScenarioHistory>,
    },
}

/// Use changes collected over one `apply_all`, applied together at its end.
#[derive(Default)]
struct UseBatch {
    /// Files whose indexed uses must go, by the address of the path every one of their uses
    /// shares (comparing addresses keeps long use lists cheap to filter).
    purged: std::collections::HashSet<usize>,
    /// The texts those uses were of.
    purged_texts: std::collections::HashSet<Arc<str>>,
    /// New uses, by file; a later version of a file in the same batch replaces an earlier one.
    added: std::collections::HashMap<Arc<Path>, Vec<(Arc<str>, Use)>>,
}

/// foldhash rather than SipHash: hashing step texts and tokens is a large part of building the
/// index, and the keys come from the project's own files (the seed is still random per process).
pub(crate) type Hasher = foldhash::fast::RandomState;
pub(crate) type HashMap<K, V> = imbl::GenericHashMap<K, V, Hasher, imbl::shared_ptr::DefaultSharedPtr>;
pub(crate) type HashSet<A> = imbl::GenericHashSet<A, Hasher, imbl::shared_ptr::DefaultSharedPtr>;

/// The whole state; a snapshot shares it.
#[derive(Debug, Clone, Default)]
pub(crate) struct IndexState {
    pub files: OrdMap<Arc<Path>, Arc<FileData>>,
    pub recordings: OrdMap<Arc<Path>, Arc<RecordingData>>,
    pub unreadable_recordings: OrdMap<Arc<Path>, Arc<str>>,
    pub proposals: OrdMap<Arc<Path>, Arc<ProposalData>>,
    pub step_sets: Arc<StepSetRegistry>,
    pub vocabulary: HashMap<Arc<str>, Arc<Entry>>,
    /// Token → the texts that contain it, ordered by size then text: the near-duplicate
    /// search's postings (see [`crate::near`]) and completion's candidates.
    pub near: crate::near::NearPostings,
    /// The tokens of `near`, ordered, for prefix look-ups while a word is being typed.
    pub token_order: imbl::OrdSet<Arc<str>>,
    /// Behaviour key → the texts recorded with exactly that action list.
    pub behaviours: HashMap<Arc<str>, HashSet<Arc<str>>>,
    /// Every entry in completion order, kept as entries change, so the best completions for a
    /// short prefix are the first matches of a walk, not a sort of thousands.
    pub by_rank: imbl::OrdSet<RankKey>,
    /// Every entry's rank key by (lowercase text, text), so the texts that start with what is
    /// being typed are a range, however few they are, and can be ranked without a look-up of
    /// their entries.
    pub by_lowercase: imbl::OrdMap<(Arc<str>, Arc<str>), RankKey>,
    /// Which step patterns follow which, and their roles, variants and folders.
    pub succession: crate::succession::Succession,
    /// Each scenario's recent runs, by (file, line).
    pub history: Arc<std::collections::BTreeMap<(String, u32), Vec<crate::history::ScenarioHistory>>>,
}

/// The index's writer.
#[derive(Debug, Default)]
pub struct IndexHost {
    state: IndexState,
}

impl IndexHost {
    pub fn new() -> IndexHost {
        IndexHost::default()
    }

    /// A host that starts from `state` (a snapshot's), to apply changes to a copy of it.
    pub(crate) fn from_state(state: IndexState) -> IndexHost {
        IndexHost { state }
    }

    /// An immutable view of the index as it is now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(Arc::new(self.state.clone()))
    }

    pub fn apply(&mut self, change: Change) {
        self.apply_all(std::iter::once(change));
    }

    /// Applies changes in order. Feature files are parsed on all cores first.
    pub fn apply_all(&mut self, changes: impl IntoIterator<Item = Change>) {
        let changes: Vec<Change> = changes.into_iter().collect();
        let texts: Vec<(PathBuf, String)> = changes
            .iter()
            .filter_map(|change| match change {
                Change::SetFile { path, text } => Some((path.clone(), text.clone())),
                _ => None,
            })
            .collect();
        let mut parsed = map_in_parallel(texts, |(path, text)| {
            let source = SourceFile::parse(path, text)?;
            let path: Arc<Path> = Arc::from(source.path.as_path());
            let written = written_steps(&path, &source.parsed.document);
            Some(ParsedFile { path, source, written })
        })
        .into_iter();
        let mut sets_changed = false;
        let mut uses = UseBatch::default();
        let mut succession = Vec::new();
        for change in changes {
            match change {
                Change::SetFile { path, .. } => {
                    let Some(file) = parsed.next().flatten() else {
                        // Not a feature file: a rename away from .feature/.saffron removes it.
                        sets_changed |= self.remove_file(&path, &mut uses, &mut succession);
                        continue;
                    };
                    sets_changed |= self.set_file(file, &mut uses, &mut succession);
                }
                Change::RemoveFile { path } => {
                    sets_changed |= self.remove_file(&path, &mut uses, &mut succession);
                }
                Change::SetRecording { path, recording } => {
                    let path: Arc<Path> = Arc::from(path.as_path());
                    self.state.unreadable_recordings.remove(&path);
                    self.remove_recording(&path);
                    self.add_recording(RecordingData { path, recording: *recording });
                }
                Change::SetUnreadableRecording { path, reason } => {
                    let path: Arc<Path> = Arc::from(path.as_path());
                    self.remove_recording(&path);
                    self.state.unreadable_recordings.insert(path, Arc::from(reason.as_str()));
                }
                Change::RemoveRecording { path } => {
                    self.state.unreadable_recordings.remove(path.as_path());
                    self.remove_recording(&path);
                }
                Change::SetProposal { path, proposal } => {
                    let path: Arc<Path> = Arc::from(path.as_path());
                    self.state.proposals.insert(path.clone(), Arc::new(ProposalData { path, proposal: *proposal }));
                }
                Change::RemoveProposal { path } => {
                    self.state.proposals.remove(path.as_path());
                }
                Change::SetHistory { scenarios } => {
                    let mut by_scenario: std::collections::BTreeMap<_, Vec<_>> = std::collections::BTreeMap::new();
                    for summary in scenarios {
                        by_scenario.entry((summary.file.clone(), summary.line)).or_default().push(summary);
                    }
                    self.state.history = Arc::new(by_scenario);
                }
            }
        }
        self.flush_uses_and_succession(uses, succession);
        if sets_changed {
            let registry = StepSetRegistry::build(
                self.state.files.iter().map(|(path, data)| (path.as_ref(), &data.source.parsed.document)),
            );
            self.state.step_sets = Arc::new(registry);
        }
    }

    /// Returns whether the file's StepSet definitions changed. Its uses join the batch, and the
    /// change of its succession facts joins `succession`.
    fn set_file(&mut self, file: ParsedFile, uses: &mut UseBatch, succession: &mut Vec<FileChange>) -> bool {
        let ParsedFile { path, source, written } = file;
        let old = self.state.files.get(&path).cloned();
        let old_sets = old.as_ref().map(|old| step_set_blocks(&old.source.parsed.document));
        self.forget_uses(&path, uses);
        uses.added.insert(path.clone(), written.clone());
        let new_sets = step_set_blocks(&source.parsed.document);
        let sets_changed = old_sets.as_ref() != Some(&new_sets) && !(old_sets.is_none() && new_sets.is_empty());
        let new = Arc::new(FileData { source, written });
        self.state.files.insert(path.clone(), new.clone());
        succession.push(FileChange { path, old, new: Some(new) });
        sets_changed
    }

    fn remove_file(&mut self, path: &Path, uses: &mut UseBatch, succession: &mut Vec<FileChange>) -> bool {
        let had_sets =
            self.state.files.get(path).is_some_and(|old| !step_set_blocks(&old.source.parsed.document).is_empty());
        let path: Arc<Path> = Arc::from(path);
        self.forget_uses(&path, uses);
        if let Some(old) = self.state.files.remove(&path) {
            succession.push(FileChange { path, old: Some(old), new: None });
        }
        had_sets
    }

    /// Applies a batch's uses and its files' succession facts. The two touch different parts of
    /// the state, and for a load each is about half of the work after parsing: from
    /// [`BULK_FILES`] files they are done at the same time, the facts on a thread of their own.
    fn flush_uses_and_succession(&mut self, uses: UseBatch, replaced: Vec<FileChange>) {
        if replaced.len() < BULK_FILES {
            self.state.succession.replace_files(&replaced);
            return self.flush_uses(uses);
        }
        let mut succession = std::mem::take(&mut self.state.succession);
        std::thread::scope(|scope| {
            let counting = scope.spawn(move || {
                succession.replace_files(&replaced);
                succession
            });
            self.flush_uses(uses);
            self.state.succession = counting.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        });
    }

    /// Drops a file's uses: those added earlier in this batch, or those already indexed.
    fn forget_uses(&self, path: &Arc<Path>, uses: &mut UseBatch) {
        if uses.added.remove(path).is_some() {
            // Its indexed uses (if any) were already marked when the batch first saw it.
            return;
        }
        if let Some(old) = self.state.files.get(path) {
            if let Some((_, first)) = old.written.first() {
                uses.purged.insert(Arc::as_ptr(&first.file) as *const u8 as usize);
            }
            uses.purged_texts.extend(old.written.iter().map(|(text, _)| text.clone()));
        }
    }

    /// Applies a batch of use changes with one update per affected text, so a cold load of a
    /// whole project costs one entry copy per text, not one per use.
    fn flush_uses(&mut self, uses: UseBatch) {
        let UseBatch { purged, purged_texts, added } = uses;
        let mut by_text: std::collections::HashMap<Arc<str>, Vec<Use>, Hasher> = Default::default();
        for (text, use_) in added.into_values().flatten() {
            by_text.entry(text).or_default().push(use_);
        }
        for text in purged_texts {
            by_text.entry(text).or_default();
        }
        let mut fresh = Vec::new();
        for (text, new_uses) in by_text {
            if !self.state.vocabulary.contains_key(&text) {
                if !new_uses.is_empty() {
                    fresh.push((text, new_uses));
                }
                continue;
            }
            self.update_entry(&text, |entry| {
                if !purged.is_empty() {
                    entry.uses.retain(|use_| !purged.contains(&(Arc::as_ptr(&use_.file) as *const u8 as usize)));
                }
                // Keep uses ordered by (file, position). A keystroke's few new uses each go where
                // they belong; a load's many (already in order, file by file) are appended and
                // sorted only if they are not.
                if new_uses.len() <= 4 {
                    for use_ in new_uses {
                        let at = entry.uses.partition_point(|u| use_order(u, &use_) != std::cmp::Ordering::Greater);
                        entry.uses.insert(at, use_);
                    }
                } else {
                    let appended_in_order = entry
                        .uses
                        .last()
                        .into_iter()
                        .chain(new_uses.iter())
                        .is_sorted_by(|a, b| use_order(a, b) != std::cmp::Ordering::Greater);
                    entry.uses.extend(new_uses);
                    if !appended_in_order {
                        entry.uses.sort_by(use_order);
                    }
                }
            });
        }
        if fresh.len() < BULK_FRESH_TEXTS {
            for (text, new_uses) in fresh {
                self.update_entry(&text, |entry| {
                    entry.uses = new_uses;
                    entry.uses.sort_by(use_order);
                });
            }
        } else {
            self.insert_fresh(fresh);
        }
    }

    /// Adds many texts the index does not have yet (a project's load): the entries are built
    /// on all cores, and the postings are filled on one core while the orders and the
    /// vocabulary are filled on another.
    fn insert_fresh(&mut self, fresh: Vec<(Arc<str>, Vec<Use>)>) {
        let entries: Vec<Arc<Entry>> = map_in_parallel(fresh, |(text, mut uses)| {
            uses.sort_by(use_order);
            let mut entry = Entry::new(text);
            entry.uses = uses;
            Arc::new(entry)
        });
        let state = &mut self.state;
        let (near, token_order) = (&mut state.near, &mut state.token_order);
        let (vocabulary, by_rank, by_lowercase) = (&mut state.vocabulary, &mut state.by_rank, &mut state.by_lowercase);
        std::thread::scope(|scope| {
            scope.spawn(|| crate::near::add_all(near, token_order, entries.iter().map(near_text)));
            for entry in &entries {
                enter(vocabulary, by_rank, by_lowercase, entry.clone());
            }
        });
    }

    fn add_recording(&mut self, data: RecordingData) {
        for (index, step) in data.recording.steps.iter().enumerate() {
            let text: Arc<str> = Arc::from(step.text.as_str());
            let behaviour = behaviour_key(&step.actions);
            if !step.actions.is_empty() {
                let mut texts = self.state.behaviours.get(&behaviour).cloned().unwrap_or_default();
                texts.insert(text.clone());
                self.state.behaviours.insert(behaviour.clone(), texts);
            }
            let recorded = RecordedUse {
                recording: data.path.clone(),
                scenario: data.recording.scenario.clone(),
                step_index: index,
                actions: Arc::from(step.actions.as_slice()),
                behaviour,
            };
            self.update_entry(&text, |entry| entry.recordings.push(recorded));
        }
        self.state.recordings.insert(data.path.clone(), Arc::new(data));
    }

    fn remove_recording(&mut self, path: &Path) {
        let Some(old) = self.state.recordings.remove(path) else { return };
        let mut touched: Vec<(Arc<str>, Arc<str>, bool)> = old
            .recording
            .steps
            .iter()
            .map(|step| (Arc::from(step.text.as_str()), behaviour_key(&step.actions), step.actions.is_empty()))
            .collect();
        touched.sort();
        touched.dedup();
        for (text, _, _) in &touched {
            self.update_entry(text, |entry| entry.recordings.retain(|r| r.recording.as_ref() != path));
        }
        // A text leaves a behaviour group once no other recording of it has that behaviour.
        for (text, behaviour, no_actions) in touched {
            if no_actions {
                continue;
            }
            let still_there = self
                .state
                .vocabulary
                .get(&text)
                .is_some_and(|entry| entry.recordings.iter().any(|r| r.behaviour == behaviour));
            if !still_there && let Some(mut texts) = self.state.behaviours.get(&behaviour).cloned() {
                texts.remove(&text);
                if texts.is_empty() {
                    self.state.behaviours.remove(&behaviour);
                } else {
                    self.state.behaviours.insert(behaviour, texts);
                }
            }
        }
    }

    /// Edits one entry, creating it (and its token postings) on first use and dropping it when
    /// nothing writes or records the text any more.
    fn update_entry(&mut self, text: &Arc<str>, edit: impl FnOnce(&mut Entry)) {
        // Persistent maps copy a node only while a snapshot still shares it; between snapshots
        // these edits happen in place.
        if let Some(shared) = self.state.vocabulary.get_mut(text) {
            let before = shared.rank_key();
            let entry = Arc::make_mut(shared);
            edit(entry);
            let after = (!entry.is_empty()).then(|| entry.rank_key());
            if after.as_ref() != Some(&before) {
                self.state.by_rank.remove(&before);
                if let Some(after) = after {
                    self.state.by_rank.insert(after.clone());
                    self.state.by_lowercase.insert((after.lowercase.clone(), after.text.clone()), after);
                    return;
                }
            } else {
                return;
            }
            let tokens = entry.tokens.clone();
            self.state.by_lowercase.remove(&(entry.lowercase.clone(), text.clone()));
            self.state.vocabulary.remove(text);
            crate::near::remove(&mut self.state.near, &mut self.state.token_order, text, &tokens);
            return;
        }
        let mut entry = Entry::new(text.clone());
        edit(&mut entry);
        if entry.is_empty() {
            return;
        }
        let entry = Arc::new(entry);
        let state = &mut self.state;
        crate::near::add(&mut state.near, &mut state.token_order, near_text(&entry));
        enter(&mut state.vocabulary, &mut state.by_rank, &mut state.by_lowercase, entry);
    }
}

/// What the near-duplicate search keeps of an entry.
fn near_text(entry: &Arc<Entry>) -> Arc<crate::near::NearText> {
    Arc::new(crate::near::NearText::new(entry.text.clone(), entry.tokens.clone(), entry.pattern.clone()))
}

/// Adds a new entry to the vocabulary and the two orders.
fn enter(
    vocabulary: &mut HashMap<Arc<str>, Arc<Entry>>,
    by_rank: &mut imbl::OrdSet<RankKey>,
    by_lowercase: &mut imbl::OrdMap<(Arc<str>, Arc<str>), RankKey>,
    entry: Arc<Entry>,
) {
    let key = entry.rank_key();
    by_rank.insert(key.clone());
    by_lowercase.insert((entry.lowercase.clone(), entry.text.clone()), key);
    vocabulary.insert(entry.text.clone(), entry);
}

/// A feature file parsed, with the steps written in it.
struct ParsedFile {
    path: Arc<Path>,
    source: SourceFile,
    written: Vec<(Arc<str>, Use)>,
}

/// From this many files in one batch, their succession facts are counted beside the uses.
const BULK_FILES: usize = 64;

/// From this many new texts in one batch, they are added in bulk ([`IndexHost::insert_fresh`]).
/// Below it, threads cost more than they save.
pub(crate) const BULK_FRESH_TEXTS: usize = 512;

/// `map` over `items` on all cores, keeping their order.
pub(crate) fn map_in_parallel<T: Send, R: Send>(items: Vec<T>, map: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if items.len() < 8 || threads == 1 {
        return items.into_iter().map(map).collect();
    }
    let chunk_size = items.len().div_ceil(threads);
    let mut chunks: Vec<Vec<T>> = Vec::new();
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        chunks.push(items.by_ref().take(chunk_size).collect());
    }
    let map = &map;
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| scope.spawn(move || chunk.into_iter().map(map).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

fn step_set_blocks(document: &Document) -> Vec<Scenario> {
    saffron_syntax::step_sets::step_set_blocks(document).cloned().collect()
}

/// Every step written in a document with where it is, invocations excluded.
/// Uses in (file, position) order. Uses of one file share its path, so that comparison is a
/// pointer test, not a walk of two paths' components.
fn use_order(a: &Use, b: &Use) -> std::cmp::Ordering {
    if Arc::ptr_eq(&a.file, &b.file) {
        a.location.cmp(&b.location)
    } else {
        (&a.file, a.location).cmp(&(&b.file, b.location))
    }
}

fn written_steps(path: &Arc<Path>, document: &Document) -> Vec<(Arc<str>, Use)> {
    let mut out = Vec::new();
    let Some(feature) = &document.feature else { return out };
    let mut add = |steps: &[saffron_syntax::Step], block: BlockKind, block_name: &str| {
        for step in steps.iter().filter(|step| !step.is_invocation) {
            out.push((
                Arc::from(step.text.as_str()),
                Use { file: path.clone(), location: step.text_location, block, block_name: block_name.to_string() },
            ));
        }
    };
    for child in &feature.children {
        match child {
            FeatureChild::Background(background) => {
                add(&background.steps, BlockKind::Background, &background.header.name)
            }
            FeatureChild::Scenario(scenario) => add(&scenario.steps, scenario.kind.into(), &scenario.header.name),
            FeatureChild::Rule(rule) => {
                for child in &rule.children {
                    match child {
                        RuleChild::Background(background) => {
                            add(&background.steps, BlockKind::Background, &background.header.name)
                        }
                        RuleChild::Scenario(scenario) => {
                            add(&scenario.steps, scenario.kind.into(), &scenario.header.name)
                        }
                    }
                }
            }
        }
    }
    out
}

/// A canonical form of an action list that two recordings share when they do the same thing:
/// each target keeps its semantic core; the CSS fallbacks and the tier that fired are advisory.
pub(crate) fn behaviour_key(actions: &[saffron_recording::Action]) -> Arc<str> {
    let mut value = serde_json::to_value(actions).unwrap_or_default();
    if let serde_json::Value::Array(actions) = &mut value {
        for action in actions {
            // A drag's drop target is a target too.
            for field in ["target", "to"] {
                if let Some(target) = action.get_mut(field).and_then(|t| t.as_object_mut()) {
                    target.remove("css");
                    target.remove("tier");
                }
            }
        }
    }
    // serde_json's maps are ordered by key, so this string is canonical.
    Arc::from(value.to_string().as_str())
}

#[cfg(test)]
mod tests {
    use saffron_recording::{Action, Target, Tier};

    use super::behaviour_key;

    #[test]
    fn css_fallbacks_and_tiers_are_not_behaviour_on_either_target_of_a_drag() {
        let drag = |css: &str, tier: Option<Tier>| Action::Drag {
            target: Target { css: vec![format!("{css} li")], tier, ..Target::role("listitem", "Card") },
            to: Target { css: vec![format!("{css} #done")], tier, ..Target::role("region", "Done") },
            timeout_ms: None,
        };
        assert_eq!(behaviour_key(&[drag("main", None)]), behaviour_key(&[drag("body", Some(Tier::Css))]));
        let elsewhere = Action::Drag {
            target: Target::role("listitem", "Card"),
            to: Target::role("region", "Archive"),
            timeout_ms: None,
        };
        assert_ne!(behaviour_key(&[drag("main", None)]), behaviour_key(&[elsewhere]));
    }
}
