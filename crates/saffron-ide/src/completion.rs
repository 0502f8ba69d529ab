//! Completion: after a step keyword, the project's vocabulary, each step badged with what it
//! costs (recorded steps replay for free); after `StepSet `, the set names; elsewhere, the
//! keywords of the file's language.

use std::borrow::Cow;
use std::path::Path;

use saffron_index::{BLOCK_START, Entry, FileData, RankKey, Snapshot, StepRole, StepStatus};
use saffron_syntax::{KeywordType, SourceKind, Span, dialect};

use crate::context::{self, line_at};
use crate::snippet::snippet;

/// At most this many steps are returned; the list is then marked incomplete so the editor asks
/// again as the user types.
pub const MAX_STEP_ITEMS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    Step,
    StepSet,
    Keyword,
    /// A session named in a step (`As "alice"`): a client of its own in an `@api` scenario.
    Session,
}

/// A completion item. A step item borrows its text from the snapshot and keeps its badge and
/// rank as data: a list is built, written out and dropped on every keystroke, and a step item
/// then allocates nothing unless it is a snippet.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionItem<'s> {
    pub label: Cow<'s, str>,
    pub kind: CompletionKind,
    /// One line shown beside the label, e.g. `✓ recorded · 3×`.
    pub description: Option<Description>,
    /// A longer line, e.g. `recorded: replays for free`.
    pub detail: Option<Cow<'static, str>>,
    /// Markdown.
    pub documentation: Option<String>,
    /// What is inserted, when it is not the label.
    pub insert_text: Option<String>,
    pub is_snippet: bool,
    /// The text the item replaces.
    pub replace: Span,
    /// The item's place in the list; editors sort by [`CompletionItem::sort_text`].
    pub rank: usize,
    /// What the editor filters on, when it is not the label.
    pub filter_text: Option<String>,
}

impl CompletionItem<'_> {
    /// What is inserted: a snippet body, or the label.
    pub fn insert_text(&self) -> &str {
        self.insert_text.as_deref().unwrap_or(&self.label)
    }

    /// The rank as a key that sorts as text does: `0042`.
    pub fn sort_text(&self) -> SortText {
        SortText(self.rank)
    }
}

/// The line beside an item's label.
#[derive(Debug, Clone, PartialEq)]
pub enum Description {
    /// A step's badge and usage count: `✓ recorded · 3×`.
    Step {
        status: StepStatus,
        count: usize,
    },
    Text(String),
}

impl std::fmt::Display for Description {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Description::Step { status, count } => {
                f.write_str(badge(*status))?;
                f.write_str(" · ")?;
                f.write_str(itoa::Buffer::new().format(*count))?;
                f.write_str("×")
            }
            Description::Text(text) => f.write_str(text),
        }
    }
}

/// A rank written as a sort key: four digits at least, so that keys order as text as the
/// ranks do. (`itoa`, not `format!`: one is written for every item of every list.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortText(pub usize);

impl std::fmt::Display for SortText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buffer = itoa::Buffer::new();
        let digits = buffer.format(self.0);
        f.write_str(&"0000"[digits.len().min(4)..])?;
        f.write_str(digits)
    }
}

/// The completion list at `offset` of an indexed file, and whether it was cut short.
pub fn completions<'s>(snapshot: &'s Snapshot, path: &Path, offset: usize) -> (Vec<CompletionItem<'s>>, bool) {
    let Some(file) = context::file(snapshot, path) else { return (Vec::new(), false) };
    completions_in(snapshot, path, file.text(), offset)
}

/// The completion list at `offset` of `text`, the file at `path` as the editor has it now,
/// which may be newer than the index's copy: completing never waits for the index to catch
/// up with the keystroke that asked for it.
pub fn completions_in<'s>(
    snapshot: &'s Snapshot,
    path: &Path,
    text: &str,
    offset: usize,
) -> (Vec<CompletionItem<'s>>, bool) {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let line = line_at(text, offset);
    let line_number = text[..line.start].matches('\n').count() as u32 + 1;
    let lines_above = text[..line.start].lines().rev();
    let (mut items, incomplete) =
        completions_on_line(snapshot, path, &text[line.start..line.end], line_number, offset - line.start, lines_above);
    for item in &mut items {
        item.replace = Span::new(item.replace.start + line.start, item.replace.end + line.start);
    }
    (items, incomplete)
}

/// The completion list at byte `column` of `line_text`, line `line_number` (1-based, without
/// its line ending) of the file at `path` as the editor has it now. `lines_above` are the lines
/// before it, nearest first (line endings may be left on), read lazily: only a step's line
/// reads them, up to the previous step's keyword, the block's header or
/// [`PREVIOUS_STEP_LINES`] lines, whichever comes first. So a list's cost does not grow with
/// the file; the items' spans are relative to the line's start.
pub fn completions_on_line<'s, Line: AsRef<str>>(
    snapshot: &'s Snapshot,
    path: &Path,
    line_text: &str,
    line_number: u32,
    column: usize,
    lines_above: impl IntoIterator<Item = Line>,
) -> (Vec<CompletionItem<'s>>, bool) {
    let indexed = context::file(snapshot, path);
    let offset = floor_char_boundary(line_text, column.min(line_text.len()));
    let trimmed = line_text.trim_start();
    let content_start = line_text.len() - trimmed.len();
    // A `# language:` header changes rarely; the indexed copy's is good enough.
    let language = indexed
        .as_ref()
        .and_then(|file| dialect::dialect(file.document().language()))
        .unwrap_or_else(dialect::default_dialect);
    let is_saffron = SourceKind::from_path(path) == Some(SourceKind::Saffron);

    if let Some((keyword, keyword_type)) = step_keyword(trimmed, language, is_saffron) {
        let keyword_end = content_start + keyword.len();
        if offset >= keyword_end {
            let replace = Span::new(keyword_end, line_text.len().max(keyword_end));
            let typed = &line_text[keyword_end..offset];
            if keyword == INVOCATION {
                return (step_set_items(snapshot, typed, replace), false);
            }
            if let Some(name) = typed.strip_prefix(SESSION_PREFIX).filter(|name| !name.contains('"')) {
                let start = keyword_end + SESSION_PREFIX.len();
                let end = line_text[offset..].find('"').map_or(line_text.len(), |quote| offset + quote);
                let replace = Span::new(start, end);
                return (session_items(snapshot, (path, line_number), name, replace), false);
            }
            let above = steps_above(lines_above, language, is_saffron);
            let role = StepRole::of_keyword(keyword_type).or(above.role).unwrap_or(StepRole::Context);
            let pattern = |text: String| {
                if text == BLOCK_START { text } else { saffron_index::tokens::pattern_key(&text) }
            };
            let previous = above.previous.map(pattern);
            let before_previous = above.before_previous.map(pattern);
            let indexed = indexed.as_ref().map(|file| file.data);
            let at = StepAt {
                path,
                indexed,
                cursor_line: line_number,
                previous: previous.as_deref().unwrap_or(BLOCK_START),
                before_previous: before_previous.as_deref(),
                role,
            };
            return step_items(snapshot, &at, typed, replace);
        }
    }
    if offset < content_start {
        return (Vec::new(), false);
    }
    let typed = &line_text[content_start..offset];
    (keyword_items(language, is_saffron, typed, Span::new(content_start, offset)), false)
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

const INVOCATION: &str = "StepSet ";

/// The step keyword a line starts with (longest first) and its type.
fn step_keyword<'d>(trimmed: &str, language: &'d dialect::Dialect, is_saffron: bool) -> Option<(&'d str, KeywordType)> {
    let keyword =
        language.step_keywords().iter().find(|(k, _)| trimmed.starts_with(k.as_str())).map(|(k, t)| (k.as_str(), *t));
    keyword.or_else(|| (is_saffron && trimmed.starts_with(INVOCATION)).then_some((INVOCATION, KeywordType::Unknown)))
}

/// How far up completion looks for the previous step: past a long table or doc string it is
/// no longer worth the scan.
pub const PREVIOUS_STEP_LINES: usize = 200;

/// The steps before the cursor's line in its block, from the lines above it (nearest first).
#[derive(Debug, Default, PartialEq)]
struct StepsAbove {
    /// The previous step's text.
    previous: Option<String>,
    /// The text of the step before it, or [`BLOCK_START`] when the previous step begins its
    /// block; `None` when there is no previous step or the walk stopped before telling.
    before_previous: Option<String>,
    /// The role the nearest keyword with one gives (`None` for `And` all the way up).
    role: Option<StepRole>,
}

/// The two steps before the cursor's line, in the same block, from the lines above it (nearest
/// first), and the role of the nearest keyword that gives one. Tables, doc strings, comments,
/// tags and blank lines are stepped over; a block header ends the search, as do two steps and a
/// role.
fn steps_above<Line: AsRef<str>>(
    lines_above: impl IntoIterator<Item = Line>,
    language: &dialect::Dialect,
    is_saffron: bool,
) -> StepsAbove {
    let mut above = StepsAbove::default();
    let mut in_doc_string: Option<&'static str> = None;
    let mut block_start = false;
    for line in lines_above.into_iter().take(PREVIOUS_STEP_LINES) {
        let trimmed = line.as_ref().trim();
        if let Some(fence) = in_doc_string {
            if trimmed.starts_with(fence) {
                in_doc_string = None;
            }
            continue;
        }
        if let Some(fence) = ["\"\"\"", "```"].into_iter().find(|fence| trimmed.starts_with(fence)) {
            in_doc_string = Some(fence);
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('|') || trimmed.starts_with('@') {
            continue;
        }
        let Some((keyword, keyword_type)) = step_keyword(trimmed, language, is_saffron) else {
            block_start = true;
            break;
        };
        block_start = false;
        if keyword == INVOCATION {
            continue;
        }
        let text = trimmed[keyword.len()..].trim_end();
        if above.previous.is_none() {
            above.previous = Some(text.to_string());
        } else if above.before_previous.is_none() {
            above.before_previous = Some(text.to_string());
        }
        if above.role.is_none() {
            above.role = StepRole::of_keyword(keyword_type);
        }
        if above.before_previous.is_some() && above.role.is_some() {
            return above;
        }
    }
    // Stopped by a block header with one step found: that step begins its block. Out of lines
    // or of the walk's budget, nothing is known of what came before it.
    if block_start && above.previous.is_some() && above.before_previous.is_none() {
        above.before_previous = Some(BLOCK_START.to_string());
    }
    above
}

/// How a step's status reads in lists: `✓ recorded`, `⚠ divergent`, `○ unrecorded`.
pub fn badge(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Recorded => "✓ recorded",
        StepStatus::Divergent => "⚠ divergent",
        StepStatus::Unrecorded => "○ unrecorded",
    }
}

pub(crate) fn status_detail(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Recorded => "recorded: replays for free",
        StepStatus::Divergent => "divergent: recorded with different actions in different scenarios",
        StepStatus::Unrecorded => "unrecorded: using it costs a recording",
    }
}

/// How well an entry matches what was typed (both lowercase): 0 prefix, 1 every typed word
/// starts a word of the text, in order; `None` for no match. (Looser, fuzzy matching is the
/// editor's job: it filters the list it gets as the user types.)
pub(crate) fn match_class(lowercase: &str, typed: &str) -> Option<u8> {
    if typed.is_empty() || lowercase.starts_with(typed) {
        return Some(0);
    }
    let mut words = lowercase.split_whitespace();
    typed.split_whitespace().all(|wanted| words.any(|word| word.starts_with(wanted))).then_some(1)
}

/// [`match_class`] of a text as written (not lowercased): ASCII text is compared without
/// building its lowercase form, and split on ASCII spaces only.
pub(crate) fn match_class_of_text(text: &str, typed: &str) -> Option<u8> {
    if !text.is_ascii() || !typed.is_ascii() {
        return match_class(&text.to_lowercase(), typed);
    }
    let starts = |word: &str, wanted: &str| {
        word.len() >= wanted.len() && word.as_bytes()[..wanted.len()].eq_ignore_ascii_case(wanted.as_bytes())
    };
    if typed.is_empty() || starts(text, typed) {
        return Some(0);
    }
    let mut words = text.split_ascii_whitespace();
    typed.split_ascii_whitespace().all(|wanted| words.any(|word| starts(word, wanted))).then_some(1)
}

/// Match class, status, usage (most first), then the text: the order of the list.
type Ranked<'a> = (u8, StepStatus, std::cmp::Reverse<usize>, &'a str);

/// Above this many texts starting with what was typed, the best of them are found by a walk in
/// rank order (they are dense, so it stops early) rather than by ranking them all.
const DENSE_PREFIX: usize = 400;

/// Where a step is being completed.
struct StepAt<'a> {
    path: &'a Path,
    indexed: Option<&'a FileData>,
    cursor_line: u32,
    /// The previous step's pattern, or [`BLOCK_START`].
    previous: &'a str,
    /// The pattern of the step before it, or [`BLOCK_START`], when known.
    before_previous: Option<&'a str>,
    role: StepRole,
}

/// How many of the best texts by usage join the context's candidates: enough that, grouped
/// by pattern, they still fill the list.
const GLOBAL_CANDIDATES: usize = 2 * MAX_STEP_ITEMS;

fn step_items<'s>(
    snapshot: &'s Snapshot,
    at: &StepAt<'_>,
    typed: &str,
    replace: Span,
) -> (Vec<CompletionItem<'s>>, bool) {
    let StepAt { path, indexed, cursor_line, .. } = *at;
    let typed_trimmed = typed.trim();
    let typed_lower = typed.trim_start().to_lowercase();
    // The text being typed is in the index too (as typed now, or a few keystrokes ago); it is
    // not a suggestion.
    let is_the_typed_line = |entry: &Entry| {
        entry.recordings.is_empty()
            && entry.uses.len() == 1
            && (entry.uses[0].location.line == cursor_line || entry.text.as_ref() == typed_trimmed)
            // Both paths come from the same project root; bytes compare faster than components.
            && entry.uses[0].file.as_os_str() == path.as_os_str()
    };
    // The same from a rank key. Such a text is the typed one or one the index has on the
    // cursor's line, so only those few have their entry looked up.
    let on_cursor_line: Vec<&str> =
        indexed.map(|file| file.texts_on_line(cursor_line).map(|text| text.as_ref()).collect()).unwrap_or_default();
    let is_the_typed_line_key = |key: &RankKey| {
        key.status == StepStatus::Unrecorded
            && key.uses.0 == 1
            && (key.text.as_ref() == typed_trimmed || on_cursor_line.contains(&key.text.as_ref()))
            && snapshot.entry(&key.text).is_some_and(|entry| is_the_typed_line(entry))
    };
    let from_key = |class: u8, key: &'s RankKey| -> Ranked<'s> { (class, key.status, key.uses, key.text.as_ref()) };
    let from_entry = |class: u8, entry: &'s std::sync::Arc<Entry>| -> Ranked<'s> {
        (class, entry.status(), std::cmp::Reverse(entry.count()), entry.text.as_ref())
    };
    let best_of = |mut ranked: Vec<Ranked<'s>>| {
        let incomplete = ranked.len() > GLOBAL_CANDIDATES;
        if incomplete {
            ranked.select_nth_unstable(GLOBAL_CANDIDATES);
            ranked.truncate(GLOBAL_CANDIDATES);
        }
        ranked.sort_unstable();
        (ranked, incomplete)
    };
    // The best of the texts a walk in rank order meets that `matches`.
    let walk = |class: u8, limit: usize, matches: &dyn Fn(&RankKey) -> bool| -> Vec<Ranked<'s>> {
        snapshot
            .entries_by_rank()
            .filter(|key| matches(key) && !is_the_typed_line_key(key))
            .take(limit)
            .map(|key| from_key(class, key))
            .collect()
    };
    // The texts that start with what was typed rank first, and they are a range of the index
    // whose rank keys are at hand: ranking them looks no entry up.
    let starting: Vec<&RankKey> = snapshot.ranks_starting_with(&typed_lower).take(DENSE_PREFIX + 1).collect();
    let (ranked, incomplete) = if starting.len() > DENSE_PREFIX {
        // Many: the best of them are the first a walk in rank order meets.
        best_of(walk(0, GLOBAL_CANDIDATES + 1, &|key| key.lowercase.starts_with(typed_lower.as_str())))
    } else {
        let mut ranked: Vec<Ranked<'s>> =
            starting.into_iter().filter(|key| !is_the_typed_line_key(key)).map(|key| from_key(0, key)).collect();
        // Unless they are enough that no looser match can make the list, then the texts whose
        // words start with the typed words.
        if ranked.len() <= GLOBAL_CANDIDATES {
            match snapshot.completion_candidates(&typed_lower) {
                // A selective word: few candidates, ranked whole, matched on the text itself so
                // only the matches' entries are looked up.
                Some(candidates) => ranked.extend(
                    candidates
                        .into_iter()
                        .filter(|text| match_class_of_text(text, &typed_lower) == Some(1))
                        .filter_map(|text| snapshot.entry(text))
                        .filter(|entry| !is_the_typed_line(entry))
                        .map(|entry| from_entry(1, entry)),
                ),
                // Common words only: the best are the first a walk in rank order meets.
                None => {
                    let wanted = GLOBAL_CANDIDATES + 1 - ranked.len();
                    ranked.extend(walk(1, wanted, &|key| match_class(&key.lowercase, &typed_lower) == Some(1)));
                }
            }
        }
        best_of(ranked)
    };
    // The file's own patterns, and those that followed the previous step in it; the typed
    // line's left out (and no step follows across it).
    let mut file_patterns: Vec<(&'s str, u32)> = Vec::new();
    let mut file_followers: Vec<(&'s str, u32)> = Vec::new();
    // The steps already written above the cursor in its block, and the background's: a
    // scenario seldom repeats a step.
    let mut in_background: Vec<&'s str> = Vec::new();
    let mut in_block_above: Vec<&'s str> = Vec::new();
    if let Some(file) = indexed.and_then(|_| snapshot.file(path)) {
        let mut budget = MAX_FILE_STEPS;
        for block in saffron_index::step_blocks(&file.source.parsed.document) {
            let starts_above = block.steps.first().is_some_and(|step| step.location.line < cursor_line);
            if starts_above && !block.is_background {
                // A later block starting above the cursor: the one before it was not the cursor's.
                in_block_above.clear();
            }
            if budget == 0 {
                // Nothing more is counted; only a later block starting above the cursor would
                // change what is, and blocks come in order: once one starts below, none does.
                match block.steps.first() {
                    Some(first) if first.location.line >= cursor_line => break,
                    _ => continue,
                }
            }
            let mut before: Option<&str> = Some(BLOCK_START);
            for step in block.steps.iter().filter(|step| !step.is_invocation) {
                if budget == 0 {
                    break;
                }
                budget -= 1;
                let entry = snapshot
                    .entry(&step.text)
                    .filter(|entry| step.location.line != cursor_line && !is_the_typed_line(entry));
                let pattern = entry.map(|entry| entry.pattern.as_ref());
                if let Some(pattern) = pattern {
                    file_patterns.push((pattern, 1));
                    if before == Some(at.previous) {
                        file_followers.push((pattern, 1));
                    }
                    if block.is_background {
                        in_background.push(pattern);
                    } else if starts_above && step.location.line < cursor_line {
                        in_block_above.push(pattern);
                    }
                }
                before = pattern;
            }
        }
    }
    // A block's first step (as the lines above tell) has no steps above it, whatever an index
    // a few keystrokes old says.
    if at.previous == BLOCK_START {
        in_block_above.clear();
    }
    let mut written_above = in_background;
    written_above.append(&mut in_block_above);
    let sum_counts = |counts: &mut Vec<(&'s str, u32)>| {
        counts.sort_unstable();
        counts.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 += b.1;
            }
            same
        });
    };
    sum_counts(&mut file_patterns);
    sum_counts(&mut file_followers);
    let context = crate::ranking::StepContext {
        previous: at.previous,
        before_previous: at.before_previous,
        role: at.role,
        file: Some(path),
        file_patterns: &file_patterns,
        file_followers: &file_followers,
        written_above: &written_above,
    };
    // A variant that is only the line being typed is not a suggestion.
    let mut maybe_typed: Vec<&str> = on_cursor_line.clone();
    if !maybe_typed.contains(&typed_trimmed) {
        maybe_typed.push(typed_trimmed);
    }
    let is_typed_line =
        |text: &str, count: u32| count == 1 && snapshot.entry(text).is_some_and(|entry| is_the_typed_line(entry));
    let excluded = crate::ranking::Excluded { candidates: &maybe_typed, is_typed_line: &is_typed_line };
    let global = ranked.iter().map(|(_, _, _, text)| *text);
    let (steps, more) = crate::ranking::rank_steps(snapshot, &context, &typed_lower, global, &excluded, MAX_STEP_ITEMS);
    let items = steps.into_iter().enumerate().map(|(rank, step)| step_item(snapshot, step, rank, replace)).collect();
    (items, incomplete || more)
}

/// The steps of the file being edited that count as its own: a file of thousands of steps is
/// generated, and its first few hundred say what it is about.
const MAX_FILE_STEPS: usize = 500;

fn step_item<'s>(
    snapshot: &'s Snapshot,
    step: crate::RankedStep<'s>,
    rank: usize,
    replace: Span,
) -> CompletionItem<'s> {
    // A pattern written with several values: a tab stop per value, its most used the default,
    // and the label the text those defaults write when it is one (its documentation is found
    // by its text).
    let mut label = Cow::Borrowed(step.text);
    let entry = snapshot.entry(step.text);
    let snippet = match entry {
        Some(entry) if step.variants > 1 => {
            let defaults = snapshot.pattern(&entry.pattern).map(saffron_index::PatternFacts::value_defaults);
            let (written, body) = crate::snippet::pattern_snippet(step.text, defaults.unwrap_or(&Default::default()));
            if let Some(entry) = snapshot.entry(&written) {
                label = Cow::Borrowed(entry.text.as_ref());
            }
            Some(body)
        }
        _ => snippet(step.text),
    };
    let detail = step_detail(step.status, step.variants, entry.is_some_and(|entry| entry.over_http()));
    CompletionItem {
        label,
        kind: CompletionKind::Step,
        description: Some(Description::Step { status: step.status, count: step.uses }),
        detail: Some(detail),
        // Filled in on demand (`completion_documentation`): most items are never looked at.
        documentation: None,
        is_snippet: snippet.is_some(),
        insert_text: snippet,
        replace,
        rank,
        filter_text: None,
    }
}

/// The detail line of a step item (`recorded: replays for free`), for a resolve.
pub fn completion_detail(snapshot: &Snapshot, text: &str) -> Option<String> {
    let entry = snapshot.entry(text)?;
    Some(step_detail(entry.status(), snapshot.variant_count(&entry.pattern), entry.over_http()).into_owned())
}

/// A step item's detail: what it costs, after how many value variants its pattern has, and
/// whether it is an API step (recorded as requests).
fn step_detail(status: StepStatus, variants: usize, api: bool) -> Cow<'static, str> {
    match (variants > 1, api) {
        (true, false) => Cow::Owned(format!("{variants} variants · {}", status_detail(status))),
        (true, true) => Cow::Owned(format!("{variants} variants · {} · API", status_detail(status))),
        (false, true) => Cow::Owned(format!("{} · API", status_detail(status))),
        (false, false) => Cow::Borrowed(status_detail(status)),
    }
}

/// The documentation of a step item, computed when the editor shows it.
pub fn completion_documentation(snapshot: &Snapshot, text: &str) -> Option<String> {
    snapshot.entry(text).map(|entry| crate::hover::entry_markdown(snapshot, entry))
}

/// How a step names the session it acts as: `As "alice" …`.
const SESSION_PREFIX: &str = "As \"";

/// The sessions the project uses (named in steps as `As "…"`, or in recordings' requests),
/// most used first, for the name being typed after `As "` on the line `at` (whose own half-typed
/// name is not one).
fn session_items(snapshot: &Snapshot, at: (&Path, u32), typed: &str, replace: Span) -> Vec<CompletionItem<'static>> {
    let mut uses: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for entry in snapshot.entries_unordered() {
        let Some((name, _)) = entry.text.strip_prefix(SESSION_PREFIX).and_then(|rest| rest.split_once('"')) else {
            continue;
        };
        let elsewhere = entry.uses.iter().filter(|written| !(&*written.file == at.0 && written.location.line == at.1));
        let count = elsewhere.count();
        if count > 0 {
            *uses.entry(name.to_owned()).or_default() += count;
        }
    }
    for recording in snapshot.recordings() {
        for action in recording.recording.steps.iter().flat_map(|step| &step.actions) {
            if let Some(name) = action.session() {
                uses.entry(name.to_owned()).or_default();
            }
        }
    }
    let typed = typed.to_lowercase();
    let mut found: Vec<(String, usize)> =
        uses.into_iter().filter(|(name, _)| name.to_lowercase().starts_with(&typed)).collect();
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    found
        .into_iter()
        .enumerate()
        .map(|(rank, (name, count))| CompletionItem {
            label: Cow::Owned(name),
            kind: CompletionKind::Session,
            description: Some(Description::Text(format!("session · in {count} step(s)"))),
            detail: Some(Cow::Borrowed("a client of its own, with its own cookies")),
            documentation: None,
            insert_text: None,
            is_snippet: false,
            replace,
            rank,
            filter_text: None,
        })
        .collect()
}

fn step_set_items(snapshot: &Snapshot, typed: &str, replace: Span) -> Vec<CompletionItem<'static>> {
    let mut items: Vec<(u8, CompletionItem<'static>)> = snapshot
        .step_sets()
        .definitions()
        .into_iter()
        .filter_map(|set| {
            let class = match_class(&set.name.to_lowercase(), &typed.trim_start().to_lowercase())?;
            let steps: Vec<String> =
                set.steps().iter().map(|step| format!("    {}{}", step.keyword, step.text)).collect();
            Some((
                class,
                CompletionItem {
                    label: Cow::Owned(set.name.clone()),
                    kind: CompletionKind::StepSet,
                    description: Some(Description::Text(format!("StepSet · {} steps", set.steps().len()))),
                    detail: Some(Cow::Owned(format!("{}:{}", set.file.display(), set.location().line))),
                    documentation: Some(format!("```gherkin\nStepSet: {}\n{}\n```", set.name, steps.join("\n"))),
                    insert_text: None,
                    is_snippet: false,
                    replace,
                    rank: 0,
                    filter_text: None,
                },
            ))
        })
        .collect();
    items.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.label.cmp(&b.1.label)));
    items
        .into_iter()
        .enumerate()
        .map(|(rank, (_, mut item))| {
            item.rank = rank;
            item
        })
        .collect()
}

fn keyword_items(
    language: &dialect::Dialect,
    is_saffron: bool,
    typed: &str,
    replace: Span,
) -> Vec<CompletionItem<'static>> {
    let mut keywords: Vec<(String, &str)> = Vec::new();
    let blocks = [
        (&language.feature, "block"),
        (&language.rule, "block"),
        (&language.background, "block"),
        (&language.scenario, "block"),
        (&language.scenario_outline, "block"),
        (&language.examples, "block"),
    ];
    for (list, kind) in blocks {
        keywords.extend(list.iter().map(|keyword| (format!("{keyword}: "), kind)));
    }
    for (keyword, _) in language.step_keywords() {
        if !keywords.iter().any(|(k, _)| k == keyword) {
            keywords.push((keyword.clone(), "step"));
        }
    }
    if is_saffron {
        keywords.push(("StepSet: ".to_string(), "dialect block: defines a set of steps"));
        keywords.push(("StepSet ".to_string(), "dialect step: invokes a set"));
        keywords.push(("Fixture: ".to_string(), "dialect block: steps run once per feature"));
    }
    let typed_lower = typed.to_lowercase();
    keywords
        .into_iter()
        .filter(|(keyword, _)| keyword.to_lowercase().starts_with(&typed_lower) && keyword.trim() != "*")
        .enumerate()
        .map(|(rank, (keyword, kind))| CompletionItem {
            filter_text: (keyword.trim_end() != keyword).then(|| keyword.clone()),
            label: Cow::Owned(keyword.trim_end().to_string()),
            kind: CompletionKind::Keyword,
            description: Some(Description::Text(language.native.clone())),
            detail: Some(Cow::Borrowed(kind)),
            documentation: None,
            insert_text: (keyword.trim_end() != keyword).then(|| keyword.clone()),
            is_snippet: false,
            replace,
            rank,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::match_class;

    #[test]
    fn sort_keys_order_as_text_and_descriptions_count() {
        let keys: Vec<String> =
            [0, 7, 42, 999, 1000].into_iter().map(|rank| super::SortText(rank).to_string()).collect();
        assert_eq!(keys, ["0000", "0007", "0042", "0999", "1000"]);
        assert!(keys.windows(2).all(|pair| pair[0] < pair[1]));
        let description = super::Description::Step { status: saffron_index::StepStatus::Recorded, count: 12 };
        assert_eq!(description.to_string(), "✓ recorded · 12×");
    }

    #[test]
    fn a_text_matches_as_its_lowercase_form_does() {
        for text in ["I See the Orders page", "Ich sehe die Übersicht", "the ORDERS"] {
            for typed in ["", "i se", "ord pa", "see", "th ord", "übe", "ich üb", "x"] {
                assert_eq!(
                    super::match_class_of_text(text, typed),
                    match_class(&text.to_lowercase(), typed),
                    "{text:?} / {typed:?}"
                );
            }
        }
    }

    #[test]
    fn the_previous_step_is_read_from_the_lines_above_and_no_further() {
        let path = std::path::Path::new("features/a.feature");
        let text = "Feature: f
  Scenario: a
    When I export the orders
    Then I see that the export is ready
  Scenario: b
    When I search the orders
    Then I see the orders page
  Scenario: c
    When I search the orders
    Then I see the orders page
";
        let mut host = saffron_index::IndexHost::new();
        host.apply(saffron_index::Change::SetFile { path: path.into(), text: text.to_string() });
        let snapshot = host.snapshot();
        let first = |above: &mut dyn Iterator<Item = &str>| {
            let (items, _) = super::completions_on_line(&snapshot, path, "    Then ", 99, 9, above);
            items.first().map(|item| item.label.to_string())
        };
        // Two steps and a role end the walk: a line past them would panic.
        let past = std::iter::from_fn(|| -> Option<&str> { panic!("read past the step before the previous") });
        let mut above = ["      | csv |\n", "    # a comment\n", "    When I export the orders\n", "    And I wait\n"]
            .into_iter()
            .chain(past);
        assert_eq!(first(&mut above).as_deref(), Some("I see that the export is ready"));
        // A block's header ends it too: the step above the header is another scenario's, and
        // the list is a block's first step's (what scenarios start with).
        let mut above = ["  Scenario: d\n", "    When I export the orders\n"].into_iter();
        assert_eq!(first(&mut above).as_deref(), Some("I search the orders"));
        // And it reads no more than PREVIOUS_STEP_LINES lines.
        let mut count = 0;
        let mut above = std::iter::from_fn(|| {
            count += 1;
            Some("      | a table row |")
        });
        first(&mut above);
        assert_eq!(count, super::PREVIOUS_STEP_LINES);
    }

    /// The first item completing `line` (a step keyword and what was typed) at the end of
    /// `text`, with `others` indexed too.
    fn first_item(others: &[(&str, &str)], text: &str) -> Option<String> {
        let path = std::path::Path::new("features/here.feature");
        let mut host = saffron_index::IndexHost::new();
        for (other, other_text) in others {
            host.apply(saffron_index::Change::SetFile { path: (*other).into(), text: other_text.to_string() });
        }
        host.apply(saffron_index::Change::SetFile { path: path.into(), text: text.to_string() });
        let snapshot = host.snapshot();
        let (items, _) = super::completions_in(&snapshot, path, text, text.len());
        items.first().map(|item| item.label.to_string())
    }

    #[test]
    fn what_followed_the_same_two_steps_comes_first() {
        let elsewhere = "Feature: f
  Scenario: admin
    Given I am an administrator
    When I open the dashboard
    Then I see the admin menu
  Scenario: guest
    Given I am a guest
    When I open the dashboard
    Then I see the login form
  Scenario: another guest
    Given I am a guest
    When I open the dashboard
    Then I see the login form
";
        let here =
            "Feature: here\n  Scenario: s\n    Given I am an administrator\n    When I open the dashboard\n    Then ";
        // After the dashboard alone, the login form followed more often; after an
        // administrator opened it, the admin menu did.
        assert_eq!(first_item(&[("features/a.feature", elsewhere)], here).as_deref(), Some("I see the admin menu"));
        let here = "Feature: here\n  Scenario: s\n    Given I am a guest\n    When I open the dashboard\n    Then ";
        assert_eq!(first_item(&[("features/a.feature", elsewhere)], here).as_deref(), Some("I see the login form"));
    }

    #[test]
    fn a_step_written_above_in_the_scenario_or_its_background_falls_back() {
        let elsewhere = "Feature: f
  Scenario: a
    Given I am logged in
    When I open the cart
  Scenario: b
    Given I am logged in
    When I open the cart
  Scenario: c
    Given the shop sells tea
    When I open the cart
";
        let others = [("features/a.feature", elsewhere)];
        // Scenarios start with logging in more often than with the shop...
        let here = "Feature: here\n  Scenario: s\n    Given ";
        assert_eq!(first_item(&others, here).as_deref(), Some("I am logged in"));
        // ...but not where the background logs in already,
        let here = "Feature: here\n  Background:\n    Given I am logged in\n  Scenario: s\n    Given ";
        assert_eq!(first_item(&others, here).as_deref(), Some("the shop sells tea"));
        // nor after a step that followed it, once it is written in the scenario.
        let elsewhere = "Feature: f
  Scenario: a
    When I open the cart
    And I open the cart
  Scenario: b
    When I open the cart
    And I open the cart
  Scenario: c
    When I open the cart
    And I empty the cart
";
        let here = "Feature: here\n  Scenario: s\n    When I open the cart\n    And ";
        assert_eq!(first_item(&[("features/a.feature", elsewhere)], here).as_deref(), Some("I empty the cart"));
    }

    #[test]
    fn the_step_before_the_previous_is_a_step_the_block_start_or_unknown() {
        let language = saffron_syntax::dialect::default_dialect();
        let above = |lines: &[&str]| super::steps_above(lines.iter(), language, false);
        let both = above(&["    And I open the cart\n", "      | a |\n", "    Given I am a guest\n", "past\n"]);
        assert_eq!(both.previous.as_deref(), Some("I open the cart"));
        assert_eq!(both.before_previous.as_deref(), Some("I am a guest"));
        assert_eq!(both.role, Some(saffron_index::StepRole::Context));
        let first = above(&["    When I open the cart\n", "\n", "  Scenario: s\n"]);
        assert_eq!(first.before_previous.as_deref(), Some(saffron_index::BLOCK_START));
        // No header seen: the step may have others above it, past what was read.
        let unknown = above(&["    When I open the cart\n"]);
        assert_eq!((unknown.previous.as_deref(), unknown.before_previous), (Some("I open the cart"), None));
    }

    #[test]
    fn a_line_alone_completes_as_the_whole_text_does() {
        let path = std::path::Path::new("features/a.feature");
        let text = "Feature: f\n  Scenario: s\n    Given I am on the page\n    When I se\r\n    Then I see it\n    Th";
        let mut host = saffron_index::IndexHost::new();
        host.apply(saffron_index::Change::SetFile { path: path.into(), text: text.to_string() });
        let snapshot = host.snapshot();
        // The lines above as a rope gives them: with their endings.
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut line_start = 0;
        for (number, line) in text.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            for column in 0..=line.len() {
                let (whole, whole_incomplete) = super::completions_in(&snapshot, path, text, line_start + column);
                let above = lines[..number].iter().rev();
                let (alone, alone_incomplete) =
                    super::completions_on_line(&snapshot, path, line, number as u32 + 1, column, above);
                let shifted: Vec<_> = alone
                    .into_iter()
                    .map(|mut item| {
                        item.replace = super::Span::new(item.replace.start + line_start, item.replace.end + line_start);
                        item
                    })
                    .collect();
                assert_eq!((shifted, alone_incomplete), (whole, whole_incomplete), "line {number}, column {column}");
            }
            line_start += text[line_start..].find('\n').map_or(0, |end| end + 1);
        }
    }

    #[test]
    fn prefix_beats_words_beats_subsequence() {
        assert_eq!(match_class("i see the orders page", "i se"), Some(0));
        assert_eq!(match_class("i see the orders page", "ord pa"), Some(1));
        assert_eq!(match_class("i see the orders page", "seord"), None);
        assert_eq!(match_class("i see the orders page", "xyz"), None);
    }
}
