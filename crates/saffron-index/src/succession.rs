//! Succession: which step patterns follow which, each pattern's role (context, action,
//! outcome), its value variants and the folders that use it. Completion ranks by it, so that
//! after a "save" action the check that follows it elsewhere comes first.
//!
//! Everything is counted by step pattern ([`crate::tokens::pattern_key`]): `I search for "tea"`
//! and `I search for "mugs"` are one step with two values. A file's contribution is a list of
//! facts; an edit applies only the difference between the file's old and new facts, so a
//! keystroke touches a handful of counts whatever the file's size.

use std::path::Path;
use std::sync::Arc;

use saffron_syntax::{Document, FeatureChild, KeywordType, RuleChild, Step};
use serde::Serialize;

use crate::host::HashMap;

/// What a step does in its scenario, from its keyword (`And`, `But` and `*` take the role of
/// the step before them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepRole {
    Context,
    Action,
    Outcome,
}

impl StepRole {
    /// The role a keyword gives, or `None` for a conjunction (it takes the previous step's).
    pub fn of_keyword(keyword: KeywordType) -> Option<StepRole> {
        match keyword {
            KeywordType::Context => Some(StepRole::Context),
            KeywordType::Action => Some(StepRole::Action),
            KeywordType::Outcome => Some(StepRole::Outcome),
            KeywordType::Conjunction | KeywordType::Unknown => None,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// How often a pattern is written in each role: context, action, outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RoleCounts(pub [u32; 3]);

impl RoleCounts {
    pub fn get(&self, role: StepRole) -> u32 {
        self.0[role.index()]
    }

    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }
}

/// The step before the previous one (or [`BLOCK_START`]) and the previous one, as patterns.
type StepPair = (Arc<str>, Arc<str>);

/// The succession counts of the whole project.
#[derive(Debug, Clone, Default)]
pub(crate) struct Succession {
    /// Previous pattern → next pattern → how often. The previous pattern of a block's first
    /// step is [`BLOCK_START`].
    follows: HashMap<Arc<str>, SharedCounts>,
    /// The same after two steps (the step before the previous, the previous): what follows a
    /// step depends on what led to it. Keyed by the two patterns the index already holds, so a
    /// step costs no new string.
    follows_pair: HashMap<StepPair, SharedCounts>,
    /// Pattern → what is known of it: completion weighs hundreds of patterns per keystroke, and
    /// reads all of this for each, in one look-up.
    patterns: HashMap<Arc<str>, PatternFacts>,
    /// Folder → pattern → how often a file directly in it writes the pattern.
    folders: HashMap<Arc<Path>, SharedCounts>,
}

/// How often each text is counted under one key: the patterns after a previous step, after a
/// pair, in a folder; the variants of a pattern. Most such maps are small and a completion reads
/// them whole, so a plain hash map behind an `Arc` serves better than a persistent one: a
/// snapshot shares it, a load fills it in place, and a keystroke's catch-up copies only the few
/// maps it changes.
#[derive(Debug, Clone, Default)]
pub(crate) struct SharedCounts(Arc<std::collections::HashMap<Arc<str>, u32, crate::host::Hasher>>);

impl SharedCounts {
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Arc<str>, u32)> {
        self.0.iter().map(|(key, count)| (key, *count))
    }

    fn get(&self, text: &str) -> Option<u32> {
        self.0.get(text).copied()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn keys(&self) -> impl Iterator<Item = &Arc<str>> {
        self.0.keys()
    }

    /// Adds `delta` to `text`'s count; a count that reaches 0 is dropped. Returns the count
    /// before and after.
    fn bump(&mut self, text: Arc<str>, delta: i64) -> (u32, u32) {
        match Arc::make_mut(&mut self.0).entry(text) {
            std::collections::hash_map::Entry::Occupied(mut count) => {
                let (before, now) = (*count.get(), add(*count.get(), delta));
                if now == 0 {
                    count.remove();
                } else {
                    *count.get_mut() = now;
                }
                (before, now)
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                let now = add(0, delta);
                if now > 0 {
                    slot.insert(now);
                }
                (0, now)
            }
        }
    }
}

/// What the index knows of one step pattern.
#[derive(Debug, Clone, Default)]
pub struct PatternFacts {
    /// Each text written with the pattern → how often.
    variants: SharedCounts,
    /// How often the pattern is written, all variants together.
    uses: u64,
    /// The most used variant (the first in byte order among equals): a completion offers it
    /// without reading the others whenever it matches what is typed as a prefix, and a pattern
    /// may have thousands of variants.
    top: Option<(Arc<str>, u32)>,
    /// The most used value in each place, worked out when a completion first asks and kept
    /// until the variants change (copies of the facts in snapshots share it).
    value_defaults: std::sync::OnceLock<Arc<ValueDefaults>>,
    /// The word starts of the variants, for ruling the pattern out of a completion at once.
    mask: WordMask,
    /// How often it is written as context, action and outcome.
    roles: RoleCounts,
}

impl PatternFacts {
    /// The texts written with the pattern, with how often each.
    pub fn variants(&self) -> impl Iterator<Item = (&Arc<str>, u32)> {
        self.variants.iter()
    }

    pub fn variant_count(&self) -> usize {
        self.variants.len()
    }

    /// How often `text` is written, if it is a variant of the pattern.
    pub fn variant_uses(&self, text: &str) -> Option<u32> {
        self.variants.get(text)
    }

    /// How often the pattern is written, all variants together.
    pub fn uses(&self) -> u64 {
        self.uses
    }

    /// The most used variant with how often it is written; among equals, the first in byte order.
    pub fn top_variant(&self) -> Option<(&Arc<str>, u32)> {
        self.top.as_ref().map(|(text, count)| (text, *count))
    }

    /// The most used values in each place of the variants' values (see [`ValueDefaults`]).
    pub fn value_defaults(&self) -> &ValueDefaults {
        self.value_defaults
            .get_or_init(|| Arc::new(ValueDefaults::of(self.variants.iter().map(|(text, uses)| (text.as_ref(), uses)))))
    }

    /// The variant that comes first by (most used, then byte order), from the variants.
    fn find_top(&self) -> Option<(Arc<str>, u32)> {
        self.variants
            .iter()
            .min_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)))
            .map(|(text, count)| (text.clone(), count))
    }

    /// `text` is now written `count` times (0: no more).
    fn track_top(&mut self, text: &Arc<str>, count: u32) {
        let replaces = match &self.top {
            // The top one written less, or no more: another may come first now.
            Some((top, top_count)) if top == text && count < *top_count => {
                self.top = self.find_top();
                return;
            }
            Some((top, top_count)) => count > 0 && (count > *top_count || (count == *top_count && text <= top)),
            None => count > 0,
        };
        if replaces {
            self.top = Some((text.clone(), count));
        }
    }

    /// The word starts of the variants; `None` when no text is written with the pattern.
    pub fn word_mask(&self) -> Option<WordMask> {
        (!self.variants.is_empty()).then_some(self.mask)
    }

    pub fn roles(&self) -> RoleCounts {
        self.roles
    }
}

/// The most used values in each place of a pattern's values: for the variants with a given
/// number of values, each place's most used values (ties all kept, in byte order). A snippet
/// offers them as the tab stops' defaults.
#[derive(Debug, Default)]
pub struct ValueDefaults {
    by_count: Vec<(usize, Vec<Vec<Arc<str>>>)>,
}

impl ValueDefaults {
    /// Counted from the variants (text, how often).
    pub fn of<'a>(variants: impl IntoIterator<Item = (&'a str, u32)>) -> ValueDefaults {
        // Number of values → each place's value → how often.
        type Places<'a> = Vec<std::collections::HashMap<&'a str, u64, crate::host::Hasher>>;
        let mut counted: Vec<(usize, Places<'a>)> = Vec::new();
        for (variant, uses) in variants {
            let ranges = crate::tokens::value_ranges(variant);
            let places = match counted.iter().position(|(count, _)| *count == ranges.len()) {
                Some(at) => &mut counted[at].1,
                None => {
                    counted.push((ranges.len(), vec![Default::default(); ranges.len()]));
                    &mut counted.last_mut().expect("just pushed").1
                }
            };
            for (place, range) in places.iter_mut().zip(ranges) {
                *place.entry(&variant[range]).or_insert(0) += u64::from(uses);
            }
        }
        let by_count = counted
            .into_iter()
            .map(|(count, places)| {
                let places = places
                    .into_iter()
                    .map(|place| {
                        let most = place.values().copied().max().unwrap_or(0);
                        let mut values: Vec<Arc<str>> = place
                            .into_iter()
                            .filter(|(_, uses)| *uses == most)
                            .map(|(value, _)| Arc::from(value))
                            .collect();
                        values.sort_unstable();
                        values
                    })
                    .collect();
                (count, places)
            })
            .collect();
        ValueDefaults { by_count }
    }

    /// Each place's most used values, among the variants with `count` values.
    pub fn places(&self, count: usize) -> Option<&[Vec<Arc<str>>]> {
        self.by_count.iter().find(|(with, _)| *with == count).map(|(_, places)| places.as_slice())
    }
}

/// The "previous step" of a block's first step: no pattern can be it (a step text is one line).
pub const BLOCK_START: &str = "\n";

/// A block of steps: a background or a scenario.
#[derive(Debug, Clone, Copy)]
pub struct StepBlock<'d> {
    pub is_background: bool,
    pub steps: &'d [Step],
}

/// The step blocks of a document (backgrounds and scenarios, in rules too), in order.
pub fn step_blocks(document: &Document) -> impl Iterator<Item = StepBlock<'_>> {
    fn background(steps: &[Step]) -> StepBlock<'_> {
        StepBlock { is_background: true, steps }
    }
    fn scenario(steps: &[Step]) -> StepBlock<'_> {
        StepBlock { is_background: false, steps }
    }
    document.feature.iter().flat_map(|feature| &feature.children).flat_map(|child| {
        let (own, in_rule): (Option<StepBlock<'_>>, &[RuleChild]) = match child {
            FeatureChild::Background(block) => (Some(background(&block.steps)), &[]),
            FeatureChild::Scenario(block) => (Some(scenario(&block.steps)), &[]),
            FeatureChild::Rule(rule) => (None, &rule.children),
        };
        own.into_iter().chain(in_rule.iter().map(|child| match child {
            RuleChild::Background(block) => background(&block.steps),
            RuleChild::Scenario(block) => scenario(&block.steps),
        }))
    })
}

/// A file whose succession facts change from `old`'s to `new`'s (`old` absent for a new file,
/// `new` absent for a removed one).
pub(crate) struct FileChange {
    pub path: Arc<Path>,
    pub old: Option<Arc<crate::model::FileData>>,
    pub new: Option<Arc<crate::model::FileData>>,
}

/// How some files change the counts of the index: each count's change, grouped by the map entry
/// it lands in, so that a load or an edit looks up each pattern, previous step and folder once,
/// not once per step. A generated file states the same few thousand facts tens of thousands of
/// times: counted here first, they cost one update of the index each.
#[derive(Default)]
struct FileFacts {
    follows: Grouped<Arc<str>>,
    follows_pair: Grouped<StepPair>,
    patterns: std::collections::HashMap<Arc<str>, PatternChange, crate::host::Hasher>,
    folders: Grouped<Arc<Path>>,
    /// Each text counted → its pattern.
    pattern_of: std::collections::HashMap<Arc<str>, Arc<str>, crate::host::Hasher>,
}

type Counts = std::collections::HashMap<Arc<str>, i64, crate::host::Hasher>;
type Grouped<K> = std::collections::HashMap<K, Counts, crate::host::Hasher>;

/// A batch's files are counted this many at a time before the index is updated.
const FILES_PER_UPDATE: usize = 64;

/// How a file changes what is known of one pattern.
#[derive(Default)]
struct PatternChange {
    variants: Counts,
    roles: [i64; 3],
}

impl FileFacts {
    /// Adds `sign` times each fact `document` states (1 for a file's new version, -1 for its
    /// old one: facts both versions state as often cancel).
    fn count(&mut self, path: &Path, document: &Document, sign: i64) {
        let folder = path.parent().unwrap_or(Path::new(""));
        // Taken out while the file is counted: one look-up of its folder per file.
        let (folder, mut in_folder) =
            self.folders.remove_entry(folder).unwrap_or_else(|| (Arc::from(folder), Counts::default()));
        let block_start: Arc<str> = Arc::from(BLOCK_START);
        for StepBlock { steps, .. } in step_blocks(document) {
            let mut before_previous: Option<Arc<str>> = None;
            let mut previous = block_start.clone();
            let mut role = StepRole::Context;
            for step in steps.iter().filter(|step| !step.is_invocation) {
                // A text's pattern is worked out once, however often the text is written.
                let (text, pattern) = match self.pattern_of.get_key_value(step.text.as_str()) {
                    Some((text, pattern)) => (text.clone(), pattern.clone()),
                    None => {
                        let (text, pattern): (Arc<str>, Arc<str>) =
                            (Arc::from(step.text.as_str()), Arc::from(crate::tokens::pattern_key(&step.text)));
                        self.pattern_of.insert(text.clone(), pattern.clone());
                        (text, pattern)
                    }
                };
                role = StepRole::of_keyword(step.keyword_type).unwrap_or(role);
                if let Some(before_previous) = &before_previous {
                    let pair = (before_previous.clone(), previous.clone());
                    *self.follows_pair.entry(pair).or_default().entry(pattern.clone()).or_insert(0) += sign;
                }
                *self.follows.entry(previous.clone()).or_default().entry(pattern.clone()).or_insert(0) += sign;
                let change = self.patterns.entry(pattern.clone()).or_default();
                change.roles[role.index()] += sign;
                *change.variants.entry(text).or_insert(0) += sign;
                *in_folder.entry(pattern.clone()).or_insert(0) += sign;
                before_previous = Some(previous);
                previous = pattern;
            }
        }
        self.folders.insert(folder, in_folder);
    }
}

impl Succession {
    /// Replaces files' facts. The facts of [`FILES_PER_UPDATE`] files are counted together before
    /// the index is updated, so that a pattern or step written in many files is one update.
    pub(crate) fn replace_files(&mut self, files: &[FileChange]) {
        let mut facts = FileFacts::default();
        for (counted, FileChange { path, old, new }) in files.iter().enumerate() {
            if counted > 0 && counted % FILES_PER_UPDATE == 0 {
                // The counts of some files at a time: all of a large project's at
                // once would hold a copy of its facts.
                let pattern_of = std::mem::take(&mut facts.pattern_of);
                self.update(std::mem::replace(&mut facts, FileFacts { pattern_of, ..FileFacts::default() }));
            }
            if let Some(new) = new {
                facts.count(path, new.document(), 1);
            }
            if let Some(old) = old {
                facts.count(path, old.document(), -1);
            }
        }
        self.update(facts);
    }

    /// Adds counted facts to the index. Counting commutes, so their order does not matter.
    fn update(&mut self, facts: FileFacts) {
        for (previous, counts) in facts.follows {
            bump_all(&mut self.follows, previous, counts);
        }
        for (pair, counts) in facts.follows_pair {
            bump_all(&mut self.follows_pair, pair, counts);
        }
        for (folder, counts) in facts.folders {
            bump_all(&mut self.folders, folder, counts);
        }
        for (pattern, change) in facts.patterns {
            if change.roles.iter().all(|delta| *delta == 0) && change.variants.values().all(|delta| *delta == 0) {
                continue;
            }
            self.update_pattern(&pattern, |facts| {
                let mut variants_changed = false;
                let mut variant_gone = false;
                for (text, delta) in change.variants.into_iter().filter(|(_, delta)| *delta != 0) {
                    variants_changed = true;
                    let (before, count) = facts.variants.bump(text.clone(), delta);
                    facts.uses = facts.uses + u64::from(count) - u64::from(before);
                    if count == 0 {
                        variant_gone = true;
                    } else if before == 0 {
                        facts.mask.add_text(&text);
                    }
                    facts.track_top(&text, count);
                }
                if variants_changed {
                    facts.value_defaults = std::sync::OnceLock::new();
                }
                if variant_gone {
                    // The mask is made again from the variants left, once.
                    facts.mask = WordMask::default();
                    facts.variants.keys().for_each(|variant| facts.mask.add_text(variant));
                }
                for (slot, delta) in facts.roles.0.iter_mut().zip(change.roles) {
                    *slot = add(*slot, delta);
                }
            });
        }
    }

    /// Changes what is known of `pattern`; a pattern written nowhere any more is forgotten.
    fn update_pattern(&mut self, pattern: &Arc<str>, change: impl FnOnce(&mut PatternFacts)) {
        // In place: the map is copied only where a snapshot shares it.
        let facts = self.patterns.entry(pattern.clone()).or_default();
        change(facts);
        if facts.variants.is_empty() && facts.roles.total() == 0 {
            self.patterns.remove(pattern);
        }
    }

    pub(crate) fn pattern(&self, pattern: &str) -> Option<&PatternFacts> {
        self.patterns.get(pattern)
    }

    pub(crate) fn followers(&self, previous: &str) -> Option<&SharedCounts> {
        self.follows.get(previous)
    }

    pub(crate) fn followers_of_pair(&self, before_previous: &str, previous: &str) -> Option<&SharedCounts> {
        self.follows_pair.get(&(Arc::from(before_previous), Arc::from(previous)))
    }

    pub(crate) fn folder(&self, folder: &Path) -> Option<&SharedCounts> {
        self.folders.get(folder)
    }

    /// Every count, sorted: equal for two indexes of the same files however they were built.
    pub(crate) fn listing(&self) -> serde_json::Value {
        fn nested<K: std::fmt::Debug>(map: &HashMap<K, SharedCounts>) -> Vec<String> {
            let mut lines: Vec<String> = map
                .iter()
                .flat_map(|(outer, inner)| inner.iter().map(move |(key, count)| format!("{outer:?} → {key} ×{count}")))
                .collect();
            lines.sort();
            lines
        }
        let mut roles: Vec<String> = Vec::new();
        let mut variants: Vec<String> = Vec::new();
        // The masks too: an index updated file by file must have the masks a fresh build makes.
        let mut word_masks: Vec<String> = Vec::new();
        let mut tops: Vec<String> = Vec::new();
        for (pattern, facts) in self.patterns.iter() {
            if facts.roles.total() > 0 {
                roles.push(format!("{pattern} {:?}", facts.roles.0));
            }
            variants.extend(facts.variants.iter().map(|(text, count)| format!("{pattern:?} → {text} ×{count}")));
            if let Some(mask) = facts.word_mask() {
                word_masks.push(format!("{pattern} {:016x} {:032x}", mask.first, mask.first_two));
            }
            // And the most used variant and the total, kept up to date as counts change.
            if let Some((top, count)) = facts.top_variant() {
                tops.push(format!("{pattern:?} → {top} ×{count} of {}", facts.uses));
            }
        }
        roles.sort();
        variants.sort();
        word_masks.sort();
        tops.sort();
        serde_json::json!({
            "follows": nested(&self.follows),
            "follows_pair": nested(&self.follows_pair),
            "roles": roles,
            "variants": variants,
            "word_masks": word_masks,
            "tops": tops,
            "folders": nested(&self.folders),
        })
    }
}

/// The starts of the words of a pattern's variants, hashed into bits: the first character of
/// each word, and its first two. A completion's typed text can match a variant (as a prefix of
/// it, or with each typed word starting one of its words, in order) only if each typed word's
/// start is in the mask; most patterns a completion weighs match nothing typed, and this rules
/// them out without reading their variants. Bits are shared (a hash), so a mask may let a
/// pattern through that then matches nothing; it never rules out one that matches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WordMask {
    first: u64,
    first_two: u128,
}

impl WordMask {
    fn add_text(&mut self, text: &str) {
        let lower = text.to_lowercase();
        // Matching splits ASCII text at ASCII whitespace and other text at any whitespace: the
        // words of both splits are in.
        for word in lower.split_whitespace().chain(lower.split_ascii_whitespace()) {
            self.add_word(word);
        }
    }

    fn add_word(&mut self, word: &str) {
        let mut chars = word.chars();
        let Some(first) = chars.next() else { return };
        self.first |= 1 << (u64::from(first) % 64);
        if let Some(second) = chars.next() {
            self.first_two |= 1 << (pair_slot(first, second) % 128);
        }
    }

    /// Whether a text with these word starts may match `typed_lower` (lowercase, as typed).
    /// `true` for an empty text, and whenever the typed text splits into words differently
    /// for the two kinds of matching.
    pub fn could_match(&self, typed_lower: &str) -> bool {
        self.admits(&TypedStarts::of(typed_lower))
    }

    /// [`could_match`](Self::could_match) with the typed text's starts worked out once, for
    /// the hundreds of patterns one completion weighs.
    pub fn admits(&self, typed: &TypedStarts) -> bool {
        typed.any || (self.first & typed.first == typed.first && self.first_two & typed.first_two == typed.first_two)
    }
}

/// The word starts a typed text needs a pattern's [`WordMask`] to have: the first character of
/// each one-character word, the first two of each longer one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypedStarts {
    first: u64,
    first_two: u128,
    /// The typed text splits into words differently for the two kinds of matching: any
    /// pattern may match.
    any: bool,
}

impl TypedStarts {
    pub fn of(typed_lower: &str) -> TypedStarts {
        if typed_lower.chars().any(|c| c.is_whitespace() != c.is_ascii_whitespace()) {
            return TypedStarts { any: true, ..TypedStarts::default() };
        }
        let mut starts = TypedStarts::default();
        for word in typed_lower.split_whitespace() {
            let mut chars = word.chars();
            let Some(first) = chars.next() else { continue };
            match chars.next() {
                None => starts.first |= 1 << (u64::from(first) % 64),
                Some(second) => starts.first_two |= 1 << (pair_slot(first, second) % 128),
            }
        }
        starts
    }
}

fn pair_slot(first: char, second: char) -> u128 {
    u128::from(u32::from(first)).wrapping_mul(131) ^ u128::from(u32::from(second))
}

fn add(count: u32, delta: i64) -> u32 {
    u32::try_from((i64::from(count) + delta).max(0)).unwrap_or(u32::MAX)
}

/// Adds each of `deltas` to the counts under `outer`; a count that reaches 0 is dropped, and
/// so is `outer` once it has none.
fn bump_all<K: std::hash::Hash + Eq + Clone>(map: &mut HashMap<K, SharedCounts>, outer: K, deltas: Counts) {
    let mut deltas = deltas.into_iter().filter(|(_, delta)| *delta != 0).peekable();
    if deltas.peek().is_none() {
        return;
    }
    // In place: the maps are copied only where a snapshot shares them.
    match map.entry(outer) {
        imbl::hashmap::Entry::Occupied(mut entry) => {
            let counts = entry.get_mut();
            for (inner, delta) in deltas {
                counts.bump(inner, delta);
            }
            if counts.is_empty() {
                entry.remove();
            }
        }
        imbl::hashmap::Entry::Vacant(entry) => {
            let mut counts = SharedCounts::default();
            for (inner, delta) in deltas {
                counts.bump(inner, delta);
            }
            if !counts.is_empty() {
                entry.insert(counts);
            }
        }
    }
}
