//! Ranking steps by where they are asked for: the steps that followed the previous step
//! elsewhere first (more so those that followed the same two steps, and those that followed it
//! in this file), then the steps of this feature and its folder, then those whose role fits the
//! keyword (a `Then` wants outcomes), then global usage. A step already written above in the
//! scenario (or its background) falls back; one about the file's subject (its path's words)
//! moves up a little. One result per step pattern: its value variants are one suggestion, the
//! most used variant standing for them.
//!
//! Completion and MCP's `find_steps` / `check_feature` rank the same way.

use std::path::Path;
use std::sync::Arc;

use saffron_index::{BLOCK_START, PatternFacts, Snapshot, StepRole, StepStatus, TypedStarts};

/// Where a step is being written.
#[derive(Debug, Clone, Copy)]
pub struct StepContext<'a> {
    /// The previous step's pattern ([`saffron_index::tokens::pattern_key`]), or
    /// [`BLOCK_START`] for a block's first step.
    pub previous: &'a str,
    /// The pattern of the step before the previous one, or [`BLOCK_START`] when the previous
    /// step begins its block; `None` when unknown.
    pub before_previous: Option<&'a str>,
    /// The role the keyword asks for (`And` takes the previous step's).
    pub role: StepRole,
    /// The file being written, relative to the project root.
    pub file: Option<&'a Path>,
    /// The step patterns of that file with how often, when known.
    pub file_patterns: &'a [(&'a str, u32)],
    /// The step patterns that followed the previous step in that file, with how often.
    pub file_followers: &'a [(&'a str, u32)],
    /// The step patterns already written in the block above, and in its background.
    pub written_above: &'a [&'a str],
}

impl StepContext<'_> {
    /// No context: a block's first step, wanting context, in no file.
    pub const NONE: StepContext<'static> = StepContext {
        previous: BLOCK_START,
        before_previous: None,
        role: StepRole::Context,
        file: None,
        file_patterns: &[],
        file_followers: &[],
        written_above: &[],
    };
}

/// One step pattern, ready to offer.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedStep<'s> {
    /// The variant that stands for the pattern: the most used among those matching the typed
    /// text.
    pub text: &'s str,
    pub status: StepStatus,
    /// How often the pattern is written, all variants together.
    pub uses: usize,
    /// How many texts are written with the pattern.
    pub variants: usize,
    /// How often it followed the previous step.
    pub followed: u32,
    /// 0 prefix match, 1 word match.
    pub class: u8,
    pub score: f64,
}

type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// At most this many followers, and this many of the folder's patterns, are weighed: the rest
/// are rarer than what the list can hold.
const MAX_FOLLOWERS: usize = 300;
const MAX_FOLDER: usize = 300;

/// The variants that are only the line being typed: neither offered nor counted.
#[derive(Clone, Copy)]
pub struct Excluded<'a> {
    /// The texts that may be such a variant (the typed text, the texts the index has on the
    /// cursor's line), each once.
    pub candidates: &'a [&'a str],
    /// Whether one of them, written that often, is one.
    pub is_typed_line: &'a dyn Fn(&str, u32) -> bool,
}

impl Excluded<'_> {
    /// Nothing is left out.
    pub const NONE: Excluded<'static> = Excluded { candidates: &[], is_typed_line: &|_, _| false };

    fn excludes(&self, text: &str, count: u32) -> bool {
        self.candidates.contains(&text) && (self.is_typed_line)(text, count)
    }
}

/// Ranks step patterns for `context`: the candidates are the previous step's followers, the
/// file's and folder's patterns, and `global` (texts matching the typed text, best first by
/// usage). `typed_lower` filters and ranks by match class; `excluded` tells a variant that is
/// only the line being typed. Returns at most `limit`, and whether there were more.
pub fn rank_steps<'s>(
    snapshot: &'s Snapshot,
    context: &StepContext<'_>,
    typed_lower: &str,
    global: impl IntoIterator<Item = &'s str>,
    excluded: &Excluded<'_>,
    limit: usize,
) -> (Vec<RankedStep<'s>>, bool) {
    #[derive(Default, Clone, Copy)]
    struct Signals {
        followed: u32,
        followed_pair: u32,
        followed_in_file: u32,
        in_file: u32,
        in_folder: u32,
    }
    // Step patterns are the project's own text, hashed by the hundred per keystroke: a fast
    // hash (seeded per process) rather than SipHash.
    let mut candidates: FastMap<&str, Signals> = FastMap::with_capacity_and_hasher(1024, Default::default());
    let mut followers: Vec<(u32, &'s Arc<str>)> =
        snapshot.followers(context.previous).map(|(pattern, count)| (count, pattern)).collect();
    keep_most(&mut followers, MAX_FOLLOWERS);
    let most_followed = followers.iter().map(|(count, _)| *count).max().unwrap_or(0);
    for (count, pattern) in followers {
        candidates.entry(pattern.as_ref()).or_default().followed = count;
    }
    let mut pair_followers: Vec<(u32, &'s Arc<str>)> = match context.before_previous {
        Some(before_previous) => snapshot
            .followers_after(before_previous, context.previous)
            .map(|(pattern, count)| (count, pattern))
            .collect(),
        None => Vec::new(),
    };
    keep_most(&mut pair_followers, MAX_FOLLOWERS);
    let most_pair = pair_followers.iter().map(|(count, _)| *count).max().unwrap_or(0);
    for (count, pattern) in pair_followers {
        candidates.entry(pattern.as_ref()).or_default().followed_pair = count;
    }
    for (pattern, count) in context.file_followers {
        candidates.entry(pattern).or_default().followed_in_file += count;
    }
    for (pattern, count) in context.file_patterns {
        candidates.entry(pattern).or_default().in_file += count;
    }
    if let Some(folder) = context.file.and_then(Path::parent) {
        let mut in_folder: Vec<(u32, &'s Arc<str>)> =
            snapshot.folder_patterns(folder).map(|(pattern, count)| (count, pattern)).collect();
        keep_most(&mut in_folder, MAX_FOLDER);
        for (count, pattern) in in_folder {
            candidates.entry(pattern.as_ref()).or_default().in_folder = count;
        }
    }
    // A text only in recordings is written nowhere, so it is no pattern's variant: it stands
    // for itself.
    let mut unwritten: FastMap<&str, &'s str> = Default::default();
    for text in global {
        if let Some(entry) = snapshot.entry(text) {
            candidates.entry(entry.pattern.as_ref()).or_default();
            if entry.uses.is_empty() {
                unwritten.insert(entry.pattern.as_ref(), entry.text.as_ref());
            }
        }
    }
    let subject = context.file.map(subject_stems).unwrap_or_default();
    let most_in_file_followed = candidates.values().map(|signals| signals.followed_in_file).max().unwrap_or(0);
    let most_in_file = candidates.values().map(|signals| signals.in_file).max().unwrap_or(0);
    let most_in_folder = candidates.values().map(|signals| signals.in_folder).max().unwrap_or(0);
    let typed_starts = TypedStarts::of(typed_lower);
    let typed = Typed { lower: typed_lower, starts: &typed_starts };
    let mut ranked: Vec<RankedStep<'s>> = Vec::with_capacity(candidates.len());
    for (pattern, signals) in candidates {
        let unwritten = unwritten.get(pattern).copied();
        let facts = snapshot.pattern(pattern);
        let Some(step) = pattern_step(snapshot, facts, unwritten, typed, excluded) else { continue };
        let roles = facts.map(PatternFacts::roles).unwrap_or_default();
        let role_fit =
            if roles.total() == 0 { 0.5 } else { f64::from(roles.get(context.role)) / f64::from(roles.total()) };
        let share = |count: u32, most: u32| if most == 0 { 0.0 } else { f64::from(count) / f64::from(most) };
        // The weights keep the order of signals (followers, this feature, its folder,
        // role, usage) while letting a strong later signal outweigh a weak earlier one; they
        // were set on the eval's tuning set (features/admin) and checked on its holdout.
        let mut score = 0.0;
        if signals.followed > 0 {
            score += 4.0 + 4.0 * share(signals.followed, most_followed).sqrt();
        }
        // Followed the same two steps: adds to the previous step's followers, so a step that
        // follows the previous one only after other steps falls back behind.
        if signals.followed_pair > 0 {
            score += 4.0 + 4.0 * share(signals.followed_pair, most_pair).sqrt();
        }
        if signals.followed_in_file > 0 {
            score += 1.0 + share(signals.followed_in_file, most_in_file_followed).sqrt();
        }
        if signals.in_file > 0 {
            score += 1.5 + share(signals.in_file, most_in_file);
        }
        if signals.in_folder > 0 {
            score += 1.0 + share(signals.in_folder, most_in_folder);
        }
        score += 5.0 * role_fit;
        // A step about the file's subject (its path's words): a nudge among equals.
        if !subject.is_empty() {
            let about = pattern
                .split(|c: char| !c.is_alphanumeric())
                .filter_map(stem)
                .filter(|word| subject.iter().any(|stem| stem.eq_ignore_ascii_case(word)))
                .count();
            score += 0.5 * (about.min(2) as f64);
        }
        // A scenario seldom writes a step twice; a pattern with values is another matter (a
        // list of products is one pattern written once per product).
        if step.variants <= 1 && context.written_above.contains(&pattern) {
            score -= 8.0;
        }
        score += 0.1 * ((step.uses as f64) + 1.0).ln();
        if step.status == StepStatus::Recorded {
            score += 0.25;
        }
        ranked.push(RankedStep { followed: signals.followed, score, ..step });
    }
    ranked.sort_unstable_by(|a, b| {
        a.class.cmp(&b.class).then_with(|| b.score.total_cmp(&a.score)).then_with(|| a.text.cmp(b.text))
    });
    let more = ranked.len() > limit;
    ranked.truncate(limit);
    (ranked, more)
}

/// What usually follows a step elsewhere (`previous` as written; a keyword is not part of it),
/// best first: the steps that followed its pattern, ranked as completion ranks them after a
/// bare `And`. At most `limit`.
pub fn next_steps<'s>(snapshot: &'s Snapshot, previous: &str, role: StepRole, limit: usize) -> Vec<RankedStep<'s>> {
    let previous = saffron_index::tokens::pattern_key(previous);
    let context = StepContext { previous: &previous, role, ..StepContext::NONE };
    let (steps, _) = rank_steps(snapshot, &context, "", std::iter::empty(), &Excluded::NONE, usize::MAX);
    steps.into_iter().filter(|step| step.followed > 0).take(limit).collect()
}

/// What a file is about, from its path: the stems of its words (`managing_channels` →
/// `manag`, `chann`).
fn subject_stems(path: &Path) -> Vec<String> {
    let mut stems: Vec<String> = path
        .with_extension("")
        .to_string_lossy()
        .split(|c: char| !c.is_alphanumeric())
        .filter_map(stem)
        .map(str::to_lowercase)
        .collect();
    stems.sort_unstable();
    stems.dedup();
    stems
}

/// A word's stem: its first five characters, for words of four or more (shorter words say
/// little of a subject).
fn stem(word: &str) -> Option<&str> {
    if word.len() < 4 || !word.is_ascii() {
        return None;
    }
    Some(&word[..word.len().min(5)])
}

/// Keeps the `most` largest counts; among equal counts, the first by their second field (the
/// order of a hash map's walk would otherwise decide which are kept).
fn keep_most<T: Ord>(items: &mut Vec<(u32, T)>, most: usize) {
    if items.len() > most {
        items.select_nth_unstable_by(most, |a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        items.truncate(most);
    }
}

/// What was typed: lowercase, and the word starts a pattern needs to match it.
#[derive(Clone, Copy)]
struct Typed<'a> {
    lower: &'a str,
    starts: &'a TypedStarts,
}

/// A pattern (known by its `facts`) as one suggestion: its best-matching, most used variant, or
/// `None` when no variant matches what was typed.
fn pattern_step<'s>(
    snapshot: &'s Snapshot,
    facts: Option<&'s PatternFacts>,
    unwritten: Option<&'s str>,
    typed: Typed<'_>,
    excluded: &Excluded<'_>,
) -> Option<RankedStep<'s>> {
    let typed_lower = typed.lower;
    // Most candidates match nothing typed, and a pattern may have hundreds of variants: the
    // starts of their words rule it out at once. (No mask: no variant, see below.)
    // A text only in recordings is no variant: its words are not in the mask.
    if unwritten.is_none() && facts.and_then(PatternFacts::word_mask).is_some_and(|mask| !mask.admits(typed.starts)) {
        return None;
    }
    // The most used variant, matching as a prefix, comes first whatever the others are: the
    // pattern's totals then say the rest, less the line being typed.
    if let Some(facts) = facts
        && let Some((top, top_count)) = facts.top_variant()
        && !excluded.excludes(top, top_count)
        && crate::completion::match_class_of_text(top, typed_lower) == Some(0)
    {
        let mut uses = facts.uses() as usize;
        let mut variants = facts.variant_count();
        for text in excluded.candidates {
            if let Some(count) = facts.variant_uses(text)
                && (excluded.is_typed_line)(text, count)
            {
                uses -= count as usize;
                variants -= 1;
            }
        }
        let status = snapshot.entry(top).map_or(StepStatus::Unrecorded, |entry| entry.status());
        return Some(RankedStep { text: top, status, uses, variants, followed: 0, class: 0, score: 0.0 });
    }
    let mut best: Option<(u8, u32, &'s str)> = None;
    let mut uses = 0usize;
    let mut variants = 0usize;
    for (text, count) in facts.into_iter().flat_map(PatternFacts::variants) {
        if excluded.excludes(text, count) {
            continue;
        }
        uses += count as usize;
        variants += 1;
        let Some(class) = crate::completion::match_class_of_text(text, typed_lower) else { continue };
        let better = match best {
            None => true,
            Some((best_class, best_count, best_text)) => {
                (class, std::cmp::Reverse(count), text.as_ref())
                    < (best_class, std::cmp::Reverse(best_count), best_text)
            }
        };
        if better {
            best = Some((class, count, text.as_ref()));
        }
    }
    let (class, _, text) = match best {
        Some(best) => best,
        // Only in recordings: not written anywhere, so not a variant; the entry stands alone.
        None if variants == 0 => {
            let entry = snapshot.entry(unwritten?)?;
            let class = crate::completion::match_class_of_text(&entry.text, typed_lower)?;
            return Some(RankedStep {
                text: &entry.text,
                status: entry.status(),
                uses: entry.count(),
                variants: 1,
                followed: 0,
                class,
                score: 0.0,
            });
        }
        None => return None,
    };
    let status = snapshot.entry(text).map_or(StepStatus::Unrecorded, |entry| entry.status());
    Some(RankedStep { text, status, uses, variants, followed: 0, class, score: 0.0 })
}

#[cfg(test)]
mod tests {
    use saffron_index::{Change, IndexHost};

    use crate::completion::match_class_of_text;

    /// A pattern's suggestion (its best variant for what is typed, and its totals less the
    /// typed line) is the one a reading of every variant gives, whether or not its most used
    /// variant answers at once.
    #[test]
    fn a_pattern_offers_the_variant_a_reading_of_all_would() {
        let mut text = String::from("Feature: f\n  Scenario: s\n");
        // Counts from 1 to 4 and ties, values that start like other words, a typed line.
        for (value, count) in [("tea", 3), ("Tea", 3), ("mugs", 4), ("milk", 1), ("sugar", 2), ("t", 1)] {
            for _ in 0..count {
                text.push_str(&format!("    Given I search for \"{value}\" in the shop\n"));
            }
        }
        text.push_str("    Given I search for \"typed\" in\n");
        let mut host = IndexHost::new();
        host.apply(Change::SetFile { path: "f.feature".into(), text });
        let snapshot = host.snapshot();
        let pattern = "i search for \"\" in the shop";
        let facts = snapshot.pattern(pattern);
        let is_typed_line = |text: &str, count: u32| count == 1 && text == "I search for \"milk\" in the shop";
        for excluded in [
            super::Excluded::NONE,
            super::Excluded { candidates: &["I search for \"milk\" in the shop"], is_typed_line: &is_typed_line },
        ] {
            for typed in [
                "",
                "i",
                "i search",
                "i search for \"",
                "i search for \"t",
                "i search for \"te",
                "i search for \"m",
                "search shop",
                "for mu",
                "zz",
            ] {
                let starts = saffron_index::TypedStarts::of(typed);
                let typed_at = super::Typed { lower: typed, starts: &starts };
                let offered = super::pattern_step(&snapshot, facts, None, typed_at, &excluded)
                    .map(|step| (step.text.to_string(), step.class, step.uses, step.variants));
                let kept: Vec<(&str, u32)> = snapshot
                    .variants(pattern)
                    .map(|(text, count)| (text.as_ref(), count))
                    .filter(|(text, count)| !excluded.excludes(text, *count))
                    .collect();
                let best = kept
                    .iter()
                    .filter_map(|(text, count)| {
                        Some((match_class_of_text(text, typed)?, std::cmp::Reverse(*count), *text))
                    })
                    .min();
                let uses = kept.iter().map(|(_, count)| *count as usize).sum();
                let read = best.map(|(class, _, text)| (text.to_string(), class, uses, kept.len()));
                assert_eq!(offered, read, "typed {typed:?}");
            }
        }
    }

    /// The word mask only rules out: a pattern one of whose variants matches what is typed
    /// always gets through, whatever the text (values, numbers, case, other scripts, odd
    /// whitespace).
    #[test]
    fn the_word_mask_never_rules_out_a_pattern_whose_variant_matches() {
        let steps = [
            "I search for \"tea\" in the shop",
            "I search for \"green tea\" in the shop",
            "I search for \"Mugs\" in the shop",
            "I add 3 mugs to the cart",
            "I add 12 mugs to the cart",
            "I open the 2nd order's invoice",
            "the order <number> is shown",
            "I am logged in as \"Ann Lee\"",
            "the total shows \"€12.00\"",
            "Grüße an \"ÖL\" und ΣΑΣ",
            "I want to create a new channel",
            "a vertical\u{b}tab and\u{a0}a no-break space",
        ];
        let text = format!(
            "Feature: f\n  Scenario: s\n{}",
            steps.iter().map(|step| format!("    Given {step}\n")).collect::<String>()
        );
        let mut host = IndexHost::new();
        host.apply(Change::SetFile { path: "f.feature".into(), text });
        let snapshot = host.snapshot();
        let mut typed: Vec<String> = Vec::new();
        for step in steps {
            let lower = step.to_lowercase();
            typed.extend(lower.char_indices().map(|(at, _)| lower[..at].to_string()));
            let words: Vec<&str> = lower.split_whitespace().collect();
            for start in 0..words.len() {
                for end in start + 1..=words.len() {
                    typed.push(words[start..end].join(" "));
                    let cut: String = words[end - 1].chars().take(1).collect();
                    typed.push(format!("{} {cut}", words[start..end - 1].join(" ")));
                }
            }
        }
        typed.extend(["zz", "i zz", "shop tea", "x"].map(String::from));
        let mut ruled_out = 0;
        for entry in snapshot.entries() {
            let mask = snapshot.word_mask(&entry.pattern).expect("a written pattern has a mask");
            for typed in &typed {
                let typed = typed.trim_start();
                let matches =
                    snapshot.variants(&entry.pattern).any(|(text, _)| match_class_of_text(text, typed).is_some());
                if matches {
                    assert!(mask.could_match(typed), "{:?} ruled out for {typed:?}", entry.pattern);
                } else if !mask.could_match(typed) {
                    ruled_out += 1;
                }
            }
        }
        assert!(ruled_out > 1000, "the mask rules out most of what cannot match ({ruled_out})");
    }
}
