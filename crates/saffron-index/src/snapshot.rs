//! The reader side: an immutable view of the index. Cloning it is cheap and it can be sent to
//! other threads, so every request of a server is answered from one snapshot while the writer
//! moves on.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use saffron_recording::{StepKind, StepSpec, feature_slug, layout, scenario_slugs};
use saffron_syntax::pickles::{self, Pickle, PickleStepType};
use saffron_syntax::{ScenarioKind, Step, StepSetRegistry};

use crate::host::IndexState;
use crate::model::{
    BlockKind, Entry, FileData, NearDuplicate, NearDuplicateSearch, ProposalData, RecordingData, RecordingState,
    ScenarioStatus,
};
use crate::near;
use crate::orphans::{self, Candidate, OrphanRecording};
use crate::staleness::step_differences;
use crate::tokens;

#[derive(Debug, Clone)]
pub struct Snapshot {
    state: Arc<IndexState>,
}

/// An invocation of a StepSet: `StepSet name` in a scenario, Background or Fixture.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation<'a> {
    pub file: &'a Path,
    pub step: &'a Step,
}

impl Snapshot {
    pub(crate) fn new(state: Arc<IndexState>) -> Snapshot {
        Snapshot { state }
    }

    /// The project as it would be after `changes`, this snapshot left as it is: what a set of
    /// edits would do, asked before they are written.
    pub fn with_changes(&self, changes: impl IntoIterator<Item = crate::Change>) -> Snapshot {
        let mut host = crate::IndexHost::from_state((*self.state).clone());
        host.apply_all(changes);
        host.snapshot()
    }

    /// Every step text, sorted.
    pub fn entries(&self) -> Vec<&Arc<Entry>> {
        let mut entries: Vec<&Arc<Entry>> = self.state.vocabulary.values().collect();
        entries.sort_by(|a, b| a.text.cmp(&b.text));
        entries
    }

    /// Every step text in completion order: recorded first, then the most used, then by text.
    pub fn entries_by_rank(&self) -> impl Iterator<Item = &crate::RankKey> {
        self.state.by_rank.iter()
    }

    /// The rank keys of the texts whose lowercase form starts with `prefix` (lowercase), in
    /// lowercase order.
    pub fn ranks_starting_with<'s>(&'s self, prefix: &str) -> impl Iterator<Item = &'s crate::RankKey> {
        let start: (Arc<str>, Arc<str>) = (Arc::from(prefix), Arc::from(""));
        self.state
            .by_lowercase
            .range(start..)
            .take_while(move |((lowercase, _), _)| lowercase.starts_with(prefix))
            .map(|(_, key)| key)
    }

    /// Every step text, in no particular order (cheaper than [`Snapshot::entries`]).
    pub fn entries_unordered(&self) -> impl Iterator<Item = &Arc<Entry>> {
        self.state.vocabulary.values()
    }

    /// The texts that can match a step being typed: those with, for every word typed so
    /// far, a token starting with it. Found through the most selective word's postings, so
    /// typing stays fast on large suites. `None` when nothing was typed that narrows the search
    /// enough to beat a scan.
    pub fn completion_candidates(&self, typed: &str) -> Option<Vec<&Arc<str>>> {
        // A placeholder still being typed (`<na`) is not a prefix of its token (`<name>`).
        if typed.contains('<') {
            return None;
        }
        let mut words = tokens::tokens_in_order(typed);
        // Long words are the selective ones: looked at first, they bound the others' scans.
        words.sort_unstable_by_key(|word| std::cmp::Reverse(word.len()));
        let mut best: Option<Vec<&near::PostingList>> = None;
        let mut best_size = usize::MAX;
        for word in &words {
            let mut sets = Vec::new();
            let mut size = 0;
            let tokens = self
                .state
                .token_order
                .range::<_, str>((std::ops::Bound::Included(word.as_str()), std::ops::Bound::Unbounded))
                .take_while(|token| token.starts_with(word.as_str()));
            for token in tokens {
                if size >= best_size {
                    break;
                }
                if let Some(list) = self.state.near.get(token) {
                    size += list.len();
                    sets.push(list);
                }
            }
            if size < best_size {
                best_size = size;
                best = Some(sets);
            }
        }
        let sets = best?;
        // A short word ("I", "the") is in most steps: looking each up costs more than a plain
        // scan of the vocabulary, which the caller then does.
        if best_size > self.state.vocabulary.len() / 4 {
            return None;
        }
        let mut texts: Vec<&Arc<str>> = sets.iter().flat_map(|list| list.iter().map(near::NearPosting::text)).collect();
        // A text in the postings of two tokens (a partial word's completions) counts once.
        if sets.len() > 1 {
            texts.sort_unstable_by_key(|text| text.as_ptr());
            texts.dedup_by_key(|text| text.as_ptr());
        }
        Some(texts)
    }

    /// The step patterns written right after `previous` (a pattern, or [`crate::BLOCK_START`]
    /// for a block's first step), with how often.
    pub fn followers(&self, previous: &str) -> impl Iterator<Item = (&Arc<str>, u32)> {
        self.state.succession.followers(previous).into_iter().flat_map(|counts| counts.iter())
    }

    /// The step patterns written right after `previous` where `before_previous` came before it
    /// (a pattern, or [`crate::BLOCK_START`] when `previous` begins its block), with how often.
    pub fn followers_after(&self, before_previous: &str, previous: &str) -> impl Iterator<Item = (&Arc<str>, u32)> {
        self.state.succession.followers_of_pair(before_previous, previous).into_iter().flat_map(|counts| counts.iter())
    }

    /// What the index knows of a step pattern: its variants, their word starts and its roles,
    /// in one look-up; `None` for a pattern written nowhere.
    pub fn pattern(&self, pattern: &str) -> Option<&crate::PatternFacts> {
        self.state.succession.pattern(pattern)
    }

    /// How often a step pattern is written as context, action and outcome.
    pub fn roles(&self, pattern: &str) -> crate::RoleCounts {
        self.pattern(pattern).map(crate::PatternFacts::roles).unwrap_or_default()
    }

    /// The texts written with a step pattern, with how often each.
    pub fn variants(&self, pattern: &str) -> impl Iterator<Item = (&Arc<str>, u32)> {
        self.pattern(pattern).into_iter().flat_map(crate::PatternFacts::variants)
    }

    /// The word starts of the texts written with a step pattern, to rule it out of a
    /// completion at once; `None` when no text is written with it.
    pub fn word_mask(&self, pattern: &str) -> Option<crate::WordMask> {
        self.pattern(pattern).and_then(crate::PatternFacts::word_mask)
    }

    /// How many texts are written with a step pattern.
    pub fn variant_count(&self, pattern: &str) -> usize {
        self.pattern(pattern).map_or(0, crate::PatternFacts::variant_count)
    }

    /// The step patterns written by the files directly in `folder`, with how often.
    pub fn folder_patterns(&self, folder: &Path) -> impl Iterator<Item = (&Arc<str>, u32)> {
        self.state.succession.folder(folder).into_iter().flat_map(|counts| counts.iter())
    }

    pub fn entry(&self, text: &str) -> Option<&Arc<Entry>> {
        self.state.vocabulary.get(text)
    }

    pub fn entry_count(&self) -> usize {
        self.state.vocabulary.len()
    }

    /// Other texts whose token-Jaccard with `text` is at least the threshold, best first.
    /// Texts that are the same pattern with other values (see [`tokens::pattern_key`]) are not
    /// near-duplicates. `text` itself need not be in the index (a step being typed). The search
    /// is bounded per text (see [`Snapshot::near_duplicate_search`]).
    pub fn near_duplicates(&self, text: &str) -> Vec<NearDuplicate> {
        self.near_duplicate_search(text).found
    }

    /// [`Snapshot::near_duplicates`], and whether the search looked at every candidate: it
    /// stops after [`crate::MAX_SCANNED`] postings or [`crate::MAX_VERIFIED`] candidates, which only texts
    /// made of the same few words, by the ten thousand, reach.
    pub fn near_duplicate_search(&self, text: &str) -> NearDuplicateSearch {
        let search = near::search(&self.state.near, text);
        let mut found: Vec<NearDuplicate> = search
            .found
            .into_iter()
            .filter_map(|(text, similarity)| {
                let entry = self.state.vocabulary.get(&text)?;
                Some(NearDuplicate { text, similarity, status: entry.status(), count: entry.count() })
            })
            .collect();
        found.sort_by(|a, b| {
            b.similarity.total_cmp(&a.similarity).then_with(|| b.count.cmp(&a.count)).then_with(|| a.text.cmp(&b.text))
        });
        NearDuplicateSearch { found, complete: search.complete }
    }

    /// How many places write the wording of `text` with any values: the uses of every text of
    /// its pattern (see [`tokens::pattern_key`]). Which of two near-duplicate wordings is the
    /// established one is a question about wordings: `I add "tea" to the cart`, written once,
    /// is the wording of `I add "mugs" to the cart` written ten times.
    pub fn wording_uses(&self, text: &str) -> usize {
        let pattern = tokens::pattern_key(text);
        // Every text of the pattern has all its words: the rarest word's postings hold them all.
        let rarest = crate::drift::Wording::of(text)
            .words
            .iter()
            .filter_map(|word| self.state.near.get(word.as_str()))
            .min_by_key(|list| list.len());
        let Some(list) = rarest else { return self.entry(text).map_or(0, |entry| entry.count()) };
        list.iter()
            .filter(|posting| posting.pattern() == pattern)
            .filter_map(|posting| self.entry(posting.text()))
            .map(|entry| entry.count())
            .sum()
    }

    /// The near-duplicates of each text, searched on all cores.
    pub fn near_duplicates_of_each(&self, texts: &[&str]) -> Vec<Vec<NearDuplicate>> {
        crate::host::map_in_parallel(texts.to_vec(), |text| self.near_duplicates(text))
    }

    /// Other texts recorded with exactly the same actions as `text`: duplicates proven by
    /// behaviour, whatever their wording.
    pub fn same_behaviour(&self, text: &str) -> Vec<Arc<str>> {
        let Some(entry) = self.entry(text) else { return Vec::new() };
        let mut texts: Vec<Arc<str>> = entry
            .recordings
            .iter()
            .filter(|recorded| !recorded.actions.is_empty())
            .filter_map(|recorded| self.state.behaviours.get(&recorded.behaviour))
            .flat_map(|texts| texts.iter().cloned())
            .filter(|other| other.as_ref() != text)
            .collect();
        texts.sort();
        texts.dedup();
        texts
    }

    /// Everything the index holds, in a canonical order: two indexes of the same project give
    /// equal values however they were built (a cold load or a chain of edits).
    pub fn canonical(&self) -> serde_json::Value {
        let entries: Vec<serde_json::Value> = self
            .entries()
            .into_iter()
            .map(|entry| {
                let mut recordings: Vec<(String, usize, String)> = entry
                    .recordings
                    .iter()
                    .map(|r| (r.recording.display().to_string(), r.step_index, r.behaviour.to_string()))
                    .collect();
                recordings.sort();
                serde_json::json!({
                    "text": entry.text,
                    "uses": entry.uses,
                    "recordings": recordings,
                    "status": entry.status(),
                    "nearDuplicates": self.near_duplicates(&entry.text).iter().map(|d| d.text.clone()).collect::<Vec<_>>(),
                    "sameBehaviourAs": self.same_behaviour(&entry.text),
                })
            })
            .collect();
        let mut postings: Vec<(String, Vec<String>)> = self
            .state
            .near
            .iter()
            .map(|(token, list)| {
                let mut texts: Vec<String> = list.iter().map(|posting| posting.text().to_string()).collect();
                texts.sort();
                (token.to_string(), texts)
            })
            .collect();
        postings.sort();
        let mut behaviours: Vec<(String, Vec<String>)> = self
            .state
            .behaviours
            .iter()
            .map(|(key, texts)| {
                let mut texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
                texts.sort();
                (key.to_string(), texts)
            })
            .collect();
        behaviours.sort();
        let step_sets: Vec<(String, String, u32)> = self
            .step_sets()
            .definitions()
            .iter()
            .map(|d| (d.name.clone(), d.file.display().to_string(), d.location().line))
            .collect();
        let by_rank: Vec<String> = self.state.by_rank.iter().map(|key| key.text.to_string()).collect();
        // Each with its rank, which must follow the entry's.
        let ranked = |key: &crate::RankKey| format!("{} ({:?}, {})", key.text, key.status, key.uses.0);
        let by_lowercase: Vec<String> = self.state.by_lowercase.values().map(ranked).collect();
        let mut lowercase_from_entries: Vec<crate::RankKey> =
            self.state.vocabulary.values().map(|entry| entry.rank_key()).collect();
        lowercase_from_entries.sort_by(|a, b| (&a.lowercase, &a.text).cmp(&(&b.lowercase, &b.text)));
        let lowercase_from_entries: Vec<String> = lowercase_from_entries.iter().map(ranked).collect();
        let mut keys: Vec<crate::RankKey> = self.state.vocabulary.values().map(|entry| entry.rank_key()).collect();
        keys.sort();
        let rank_from_entries: Vec<String> = keys.iter().map(|key| key.text.to_string()).collect();
        let near_postings = near::listing(&self.state.near);
        let near_from_entries =
            near::expected_listing(self.state.vocabulary.values().map(|entry| (&*entry.text, &*entry.tokens)));
        serde_json::json!({
            "entries": entries,
            "nearPostings": near_postings,
            "nearPostingsFromEntries": near_from_entries,
            "byRank": by_rank,
            "rankFromEntries": rank_from_entries,
            "byLowercase": by_lowercase,
            "lowercaseFromEntries": lowercase_from_entries,
            "postings": postings,
            "behaviours": behaviours,
            "stepSets": step_sets,
            "scenarios": self.scenarios(),
            "succession": self.state.succession.listing(),
        })
    }

    pub fn step_sets(&self) -> &StepSetRegistry {
        &self.state.step_sets
    }

    /// Every `StepSet name` step in the project, by file and line.
    pub fn invocations(&self, name: &str) -> Vec<Invocation<'_>> {
        let mut out = Vec::new();
        for (path, data) in self.state.files.iter() {
            for step in data.source.parsed.document.steps() {
                if step.is_invocation && step.text == name {
                    out.push(Invocation { file: path, step });
                }
            }
        }
        out
    }

    pub fn files(&self) -> impl Iterator<Item = &Arc<FileData>> {
        self.state.files.values()
    }

    pub fn file(&self, path: &Path) -> Option<&Arc<FileData>> {
        self.state.files.get(path)
    }

    /// The index's own shared path for a file, so callers can keep it without copying.
    pub fn file_key(&self, path: &Path) -> Option<&Arc<Path>> {
        self.state.files.get_key_value(path).map(|(key, _)| key)
    }

    /// A file and the index's own shared path for it, found with one look-up (paths compare
    /// component by component, which is not free).
    pub fn file_entry(&self, path: &Path) -> Option<(&Arc<Path>, &Arc<FileData>)> {
        self.state.files.get_key_value(path)
    }

    pub fn recordings(&self) -> impl Iterator<Item = &Arc<RecordingData>> {
        self.state.recordings.values()
    }

    pub fn recording(&self, path: &Path) -> Option<&Arc<RecordingData>> {
        self.state.recordings.get(path)
    }

    /// Recording files that exist but cannot be used, with the reason.
    pub fn unreadable_recordings(&self) -> impl Iterator<Item = (&Arc<Path>, &Arc<str>)> {
        self.state.unreadable_recordings.iter()
    }

    pub fn proposals(&self) -> impl Iterator<Item = &Arc<ProposalData>> {
        self.state.proposals.values()
    }

    /// The pending proposal at `path` (relative to the project root), when one is there.
    pub fn proposal(&self, path: &Path) -> Option<&Arc<ProposalData>> {
        self.state.proposals.get(path)
    }

    /// The recent runs of the scenario at `file:line` (file relative to the root, `/`-separated).
    pub fn history(&self, file: &str, line: u32) -> &[crate::history::ScenarioHistory] {
        self.state.history.get(&(file.to_owned(), line)).map_or(&[], Vec::as_slice)
    }

    /// Every runnable scenario and Fixture of the project with the state of its recording.
    pub fn scenarios(&self) -> Vec<ScenarioStatus> {
        self.state.files.keys().flat_map(|path| self.scenarios_in(path)).collect()
    }

    /// The runnable scenarios and Fixture of one file.
    pub fn scenarios_in(&self, path: &Path) -> Vec<ScenarioStatus> {
        let Some(data) = self.state.files.get(path) else { return Vec::new() };
        let registry: &StepSetRegistry = &self.state.step_sets;
        let templates = pickles::compile_templates(&data.source.parsed.document, &registry);
        let paths = recording_paths(path, &templates);
        templates
            .iter()
            .zip(paths)
            .map(|(pickle, (recording_path, proposal_path))| {
                let mut stale_steps = Vec::new();
                let recording = match self.state.unreadable_recordings.get(recording_path.as_path()) {
                    Some(reason) => RecordingState::Unreadable { reason: reason.to_string() },
                    None => match self.state.recordings.get(recording_path.as_path()) {
                        Some(data) => {
                            let current = step_specs(pickle);
                            if data.recording.is_fresh_for(&current) {
                                RecordingState::Fresh
                            } else {
                                stale_steps = step_differences(&data.recording, &current);
                                RecordingState::Stale
                            }
                        }
                        None => RecordingState::Unrecorded,
                    },
                };
                let pending_proposal =
                    self.state.proposals.get(proposal_path.as_path()).map(|proposal| proposal.path.clone());
                ScenarioStatus {
                    file: data_path(&self.state, path),
                    name: pickle.scenario.header.name.clone(),
                    location: pickle.scenario.header.location,
                    kind: BlockKind::from(pickle.scenario.kind),
                    rows: pickle.scenario.examples.iter().map(|examples| examples.table_body.len()).sum(),
                    recording_path: Arc::from(recording_path.as_path()),
                    recording,
                    pending_proposal,
                    stale_steps,
                }
            })
            .collect()
    }
}

impl Snapshot {
    /// Readable recordings that no runnable scenario's recording path names, each with the
    /// scenario it most likely belongs to (by step overlap and name similarity). By path.
    pub fn orphan_recordings(&self) -> Vec<OrphanRecording> {
        let registry: &StepSetRegistry = &self.state.step_sets;
        let mut candidates = Vec::new();
        for (path, data) in self.state.files.iter() {
            let templates = pickles::compile_templates(&data.source.parsed.document, &registry);
            let paths = recording_paths(path, &templates);
            for (pickle, (recording_path, _)) in templates.iter().zip(paths) {
                let recorded = self.state.recordings.contains_key(recording_path.as_path())
                    || self.state.unreadable_recordings.contains_key(recording_path.as_path());
                candidates.push(Candidate {
                    file: path,
                    name: &pickle.scenario.header.name,
                    line: pickle.scenario.header.location.line,
                    recording_path: Arc::from(recording_path.as_path()),
                    recorded,
                    step_texts: pickle.steps.iter().map(|step| step.text.clone()).collect(),
                });
            }
        }
        let owned: std::collections::HashSet<&Path> =
            candidates.iter().map(|candidate| candidate.recording_path.as_ref()).collect();
        self.state
            .recordings
            .iter()
            .filter(|(path, _)| !owned.contains(path.as_ref()))
            .map(|(path, data)| OrphanRecording {
                path: path.clone(),
                closest: orphans::closest(path, &data.recording, &candidates),
            })
            .collect()
    }
}

fn data_path(state: &IndexState, path: &Path) -> Arc<Path> {
    state.files.get_key_value(path).map_or_else(|| Arc::from(path), |(key, _)| key.clone())
}

/// The recording and proposal paths of each runnable scenario of a feature, in file order.
pub fn recording_paths(feature: &Path, scenarios: &[Pickle<'_>]) -> Vec<(PathBuf, PathBuf)> {
    let feature_slug = feature_slug(&feature.to_string_lossy().replace('\\', "/"));
    let names: Vec<&str> = scenarios.iter().map(|pickle| pickle.scenario.header.name.as_str()).collect();
    scenario_slugs(&names)
        .into_iter()
        .map(|slug| (layout::recording(&feature_slug, &slug), layout::proposal(&feature_slug, &slug)))
        .collect()
}

/// The steps of a compiled scenario as a recording holds them: Given/When/Then kinds (an
/// `And` or `*` takes the step before it), texts, tables and doc strings.
pub fn step_specs(pickle: &Pickle<'_>) -> Vec<StepSpec> {
    let mut previous = StepKind::Context;
    pickle
        .steps
        .iter()
        .map(|step| {
            let kind = match step.step_type {
                PickleStepType::Context => StepKind::Context,
                PickleStepType::Action => StepKind::Action,
                PickleStepType::Outcome => StepKind::Outcome,
                PickleStepType::Unknown => previous,
            };
            previous = kind;
            StepSpec {
                kind,
                text: step.text.clone(),
                table: step.data_table.clone(),
                doc_string: step.doc_string.as_ref().map(|doc| doc.content.clone()),
            }
        })
        .collect()
}

/// Whether a scenario block is runnable (has a recording of its own).
pub fn is_runnable(kind: ScenarioKind) -> bool {
    kind != ScenarioKind::StepSet
}
