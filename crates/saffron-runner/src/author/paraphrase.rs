//! A drafted step that says what one of the project's steps says in other words, matched to
//! that step so the draft replays for free.
//!
//! The index's near-duplicate rule finds the same step written with a typo, and it must stay
//! narrow: its warnings stand in every editor. A model drafting from prose paraphrases too:
//! `I log in as the demo user` for the StepSet `signed in as the demo user`, `the total shows
//! €14.00` for `the live total is "Total: €14.00"`. Lexical similarity cannot prove synonymy in
//! general (the design log); this match is therefore for drafts only, where a person reads
//! every rewrite beside the model's wording, and it asks for more than similar words:
//!
//! - Texts are compared as *concepts*: function words, pronouns and modal verbs are set aside;
//!   the phrases of one [`SYNONYMS`] class (`log in`, `sign in`, `signed in`) are one concept;
//!   in an outcome the verbs of seeing (`see`, `shows`, `is displayed`) are set aside too; other
//!   words meet by inflection or a one-letter typo (the index's [`same_word`]).
//! - The kinds agree: a drafted outcome only becomes a step the project writes as an outcome,
//!   a context or action only one it writes as a context or action, and only a context or
//!   action becomes a StepSet. A check is never turned into an action, nor an action into a check.
//! - Negations are the same; values are as many, and each keeps the draft's value (in the
//!   project's quoting: `€14.00` in a slot recorded as `"Total: €14.00"` keeps the label).
//! - The project's wording may have every concept of the draft and one more (a qualifier: `the
//!   saved total` for `the total`) only with evidence the draft means it: one of the draft's values
//!   is the one recorded, or the project writes that step right after the draft's previous step.
//! - The match must be unique: when two of the project's steps fit with equal evidence, the step
//!   stays as the model wrote it and the closest recorded step is suggested instead.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::{Arc, LazyLock};

use saffron_index::drift::{FUNCTION_WORDS, same_word};
use saffron_index::tokens::{NEGATIONS, pattern_key};
use saffron_index::{Entry, Snapshot, StepRole, StepStatus};
use saffron_syntax::step_text::{StepToken, StepTokenKind, lex};

/// Phrases that name one thing a person does in a browser, one class each: general web
/// vocabulary, with its inflections, not one project's. Phrases are matched on whole words.
#[rustfmt::skip]
pub const SYNONYMS: &[&[&str]] = &[
    &["sign in", "signs in", "signed in", "signing in", "signin", "log in", "logs in", "logged in", "logging in",
      "login", "log on", "logon"],
    &["sign out", "signs out", "signed out", "signing out", "signout", "log out", "logs out", "logged out",
      "logging out", "logout", "log off"],
    &["sign up", "signs up", "signed up", "signing up", "signup", "register", "registers", "registered",
      "registering"],
    &["click", "clicks", "clicked", "clicking", "click on", "clicks on", "clicked on", "tap", "taps", "tapped",
      "tap on", "press", "presses", "pressed", "pressing"],
    &["go to", "goes to", "went to", "going to", "visit", "visits", "visited", "visiting", "navigate to",
      "navigates to", "navigated to", "am on", "open", "opens", "opened", "opening"],
    &["type", "types", "typed", "typing", "enter", "enters", "entered", "entering", "fill in", "fills in",
      "filled in", "fill", "fills", "filled", "input", "inputs"],
    &["choose", "chooses", "chose", "chosen", "select", "selects", "selected", "selecting", "pick", "picks",
      "picked"],
    &["delete", "deletes", "deleted", "deleting", "remove", "removes", "removed", "removing"],
];

/// Words that say how sure a step is, or that the person at the browser acts, not what is done;
/// and the particles of `shown as left` and `see that it is ready`. Other actors (`they add`,
/// `the customer adds`) are kept: a scenario may have two.
const PRONOUNS_AND_MODALS: &[&str] = &[
    "i", "me", "we", "us", "as", "that", "can", "could", "must", "will", "would", "may", "might", "shall", "able",
    "and", "then", "don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "couldn", "shouldn", "hasn", "haven",
    "wouldn",
];

/// The verbs of an outcome that only say it is looked at: `I see the total`, `the total is
/// shown`, `the total shows`.
#[rustfmt::skip]
const SEEING: &[&str] = &[
    "see", "sees", "saw", "seen", "seeing", "show", "shows", "showed", "shown", "showing", "display", "displays",
    "displayed", "displaying", "visible", "appear", "appears", "appeared", "read", "reads", "say", "says", "equal",
    "equals", "expect", "expects", "there",
];

/// What a matched step becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Paraphrased {
    /// A step the project records: the draft's keyword stays, the text is this one.
    Step(String),
    /// A StepSet of the project: the step line becomes `StepSet <name>`.
    StepSet(String),
}

/// One word's meaning in a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Concept {
    Class(usize),
    Word(String),
}

impl Concept {
    fn same(&self, other: &Concept) -> bool {
        match (self, other) {
            (Concept::Class(a), Concept::Class(b)) => a == b,
            (Concept::Word(a), Concept::Word(b)) => same_word(a, b),
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotKind {
    Quoted(char),
    Placeholder,
    Number,
}

/// A value of a text: where it is written, its kind, and what it says without its quotes.
#[derive(Debug, Clone)]
struct Slot {
    range: Range<usize>,
    kind: SlotKind,
    inner: String,
}

/// A text as this match reads it.
#[derive(Debug, Clone)]
struct Reading {
    concepts: Vec<Concept>,
    negations: Vec<String>,
    slots: Vec<Slot>,
}

/// A character written next to a number as part of its value: `€12`, `#1001`, `50%`.
fn is_value_symbol(c: char) -> bool {
    !c.is_alphanumeric() && !c.is_whitespace() && !"\"'<>()[]{},.;:!?/\\".contains(c)
}

/// How `text` reads as a step of its kind (`outcome` sets the verbs of seeing aside).
fn read(text: &str, outcome: bool) -> Reading {
    let mut words: Vec<String> = Vec::new();
    let mut slots = Vec::new();
    let tokens: Vec<_> = lex(text).collect();
    for (index, token) in tokens.iter().enumerate() {
        match token.kind {
            StepTokenKind::Word => words.push(token.text.to_lowercase()),
            StepTokenKind::Quoted(quote) => slots.push(Slot {
                range: token.start..token.end(),
                kind: SlotKind::Quoted(quote.char()),
                inner: token.inner().to_string(),
            }),
            StepTokenKind::Placeholder => slots.push(Slot {
                range: token.start..token.end(),
                kind: SlotKind::Placeholder,
                inner: token.text.to_string(),
            }),
            StepTokenKind::Number => {
                // A number's symbols (`€`) are part of its value, not a gap between words.
                let symbol = |t: &&StepToken<'_>| t.kind == StepTokenKind::Other && t.text.chars().all(is_value_symbol);
                let before = tokens[..index].iter().rev().take_while(symbol).count();
                let after = tokens[index + 1..].iter().take_while(symbol).count();
                let start = tokens[index - before].start;
                let end = tokens[index + after].end();
                slots.push(Slot { range: start..end, kind: SlotKind::Number, inner: text[start..end].to_string() });
            }
            StepTokenKind::Other => {}
        }
    }
    let mut negations: Vec<String> = words.iter().filter(|word| NEGATIONS.contains(&word.as_str())).cloned().collect();
    negations.sort();
    negations.dedup();
    let mut concepts = Vec::new();
    let mut at = 0;
    while at < words.len() {
        if let Some((class, length)) = synonym_at(&words[at..]) {
            concepts.push(Concept::Class(class));
            at += length;
            continue;
        }
        let word = words[at].as_str();
        let set_aside = FUNCTION_WORDS.contains(&word)
            || PRONOUNS_AND_MODALS.contains(&word)
            || NEGATIONS.contains(&word)
            || (outcome && SEEING.contains(&word));
        if !set_aside {
            concepts.push(Concept::Word(word.to_string()));
        }
        at += 1;
    }
    Reading { concepts, negations, slots }
}

/// A [`SYNONYMS`] phrase: its class and its words.
type Phrase = (usize, Vec<&'static str>);

/// The [`SYNONYMS`] phrases by their first word.
static PHRASES: LazyLock<HashMap<&'static str, Vec<Phrase>>> = LazyLock::new(|| {
    let mut phrases: HashMap<&'static str, Vec<Phrase>> = HashMap::new();
    for (class, members) in SYNONYMS.iter().enumerate() {
        for phrase in *members {
            let words: Vec<&'static str> = phrase.split(' ').collect();
            phrases.entry(words[0]).or_default().push((class, words));
        }
    }
    phrases
});

/// The synonym class of the longest phrase that starts `words`, and its length in words.
fn synonym_at(words: &[String]) -> Option<(usize, usize)> {
    PHRASES
        .get(words.first()?.as_str())?
        .iter()
        .filter(|(_, phrase)| phrase.len() <= words.len() && phrase.iter().zip(words).all(|(part, word)| part == word))
        .map(|(class, phrase)| (*class, phrase.len()))
        .max_by_key(|(_, length)| *length)
}

/// How many concepts `candidate` has beyond `draft`'s, when it has every one of `draft`'s in
/// the same order; `None` otherwise.
fn extra_concepts(draft: &[Concept], candidate: &[Concept]) -> Option<usize> {
    let mut from = 0;
    for concept in draft {
        let found = candidate[from..].iter().position(|other| concept.same(other))?;
        from += found + 1;
    }
    Some(candidate.len() - draft.len())
}

/// The candidate's text with the draft's values in its slots, and for each value whether it is
/// the candidate's own (evidence that the draft means this step); `None` when a value does not
/// fit a slot (a name where a count goes).
fn with_values(candidate: &str, slots: &[Slot], values: &[Slot]) -> Option<(String, Vec<bool>)> {
    let mut out = String::with_capacity(candidate.len());
    let mut copied = 0;
    let mut anchors = Vec::with_capacity(values.len());
    for (slot, value) in slots.iter().zip(values) {
        out.push_str(&candidate[copied..slot.range.start]);
        let (written, same) = fill(candidate, slot, value)?;
        anchors.push(same);
        out.push_str(&written);
        copied = slot.range.end;
    }
    out.push_str(&candidate[copied..]);
    Some((out, anchors))
}

/// What goes in `slot` for the draft's `value`, and whether it is the slot's own value.
fn fill(candidate: &str, slot: &Slot, value: &Slot) -> Option<(String, bool)> {
    let recorded = &candidate[slot.range.clone()];
    match slot.kind {
        SlotKind::Quoted(quote) => {
            if value.inner == slot.inner || contains_at_boundaries(&slot.inner, &value.inner) {
                // The project writes the value with more around it (`Total: €14.00` for
                // `€14.00`): the same value, in the project's words.
                return Some((recorded.to_string(), true));
            }
            // A bare number goes where the project quotes a number or an Outline's `<column>`,
            // not where it quotes a name.
            let takes_numbers = only_number(&slot.inner).is_some() || is_placeholder(&slot.inner);
            if value.inner.contains(quote) || (value.kind == SlotKind::Number && !takes_numbers) {
                return None;
            }
            let inner = match (only_number(&slot.inner), only_number(&value.inner)) {
                // One number in a labelled value: the label stays, the number is the draft's.
                (Some(at), Some(number)) if slot.inner != slot.inner[at.clone()] => {
                    format!("{}{}{}", &slot.inner[..at.start], &value.inner[number], &slot.inner[at.end..])
                }
                _ => value.inner.clone(),
            };
            Some((format!("{quote}{inner}{quote}"), false))
        }
        SlotKind::Number => {
            let number = only_number(&value.inner).map(|at| &value.inner[at])?;
            if value.kind != SlotKind::Number && number != value.inner {
                return None;
            }
            let own = only_number(&slot.inner).map(|at| &slot.inner[at]);
            Some((recorded.replacen(own.unwrap_or(recorded), number, 1), own == Some(number)))
        }
        SlotKind::Placeholder => {
            (value.kind == SlotKind::Placeholder).then(|| (value.inner.clone(), value.inner == slot.inner))
        }
    }
}

fn is_placeholder(text: &str) -> bool {
    let mut tokens = lex(text);
    tokens.next().is_some_and(|token| token.kind == StepTokenKind::Placeholder) && tokens.next().is_none()
}

/// Where the only number of `text` is, when it has exactly one.
fn only_number(text: &str) -> Option<Range<usize>> {
    let mut numbers = lex(text).filter(|token| token.kind == StepTokenKind::Number);
    let first = numbers.next()?;
    numbers.next().is_none().then(|| first.start..first.end())
}

/// Whether `part` is written in `whole` with no letter or digit touching it.
fn contains_at_boundaries(whole: &str, part: &str) -> bool {
    !part.trim().is_empty()
        && whole.match_indices(part).any(|(at, _)| {
            let before = whole[..at].chars().next_back();
            let after = whole[at + part.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
}

/// A drafted step, where it stands.
#[derive(Debug, Clone, Copy)]
pub struct DraftStep<'a> {
    pub text: &'a str,
    pub role: StepRole,
    /// The pattern of the step before it in its block (as rewritten), or `BLOCK_START`.
    pub previous: &'a str,
    /// Whether the draft may run StepSets (a `.saffron` file).
    pub step_sets_allowed: bool,
}

/// How well a candidate fits: no extra concept first, then values recorded, then succession.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Fit {
    exact_concepts: bool,
    anchored: usize,
    follows: bool,
}

/// A candidate that says what the draft says, before the project's evidence is weighed.
struct Found {
    fit: Fit,
    text: String,
    /// Per draft value, whether the candidate records that very value.
    anchors: Vec<bool>,
}

/// How `candidate` fits a drafted step, and its text with the draft's values; `None` when it
/// says something else (another concept, negation or number of values, two concepts more), or
/// is the draft's own pattern with other values (nothing to reword).
fn fit_of(draft_text: &str, draft: &Reading, candidate: &str, reading: &Reading, followers: &[&str]) -> Option<Found> {
    if reading.negations != draft.negations || reading.slots.len() != draft.slots.len() {
        return None;
    }
    let extra = extra_concepts(&draft.concepts, &reading.concepts).filter(|extra| *extra <= 1)?;
    let (text, anchors) = with_values(candidate, &reading.slots, &draft.slots)?;
    if pattern_key(&text) == pattern_key(draft_text) {
        return None;
    }
    let follows = followers.contains(&pattern_key(&text).as_str());
    let anchored = anchors.iter().filter(|anchor| **anchor).count();
    Some(Found { fit: Fit { exact_concepts: extra == 0, anchored, follows }, text, anchors })
}

/// Whether a step drafted as `draft` could be rewritten to `candidate` on the strength of their
/// words and values alone, were `candidate` the only recorded step of a project that writes its
/// values in many steps (so a shared value is no evidence): the measure of the labelled pairs of
/// different steps (see the tests).
#[cfg(test)]
pub(super) fn could_mean(draft: &str, candidate: &str, outcome: bool) -> bool {
    let reading = read(draft, outcome);
    !reading.concepts.is_empty()
        && fit_of(draft, &reading, candidate, &read(candidate, outcome), &[])
            .is_some_and(|found| found.fit.exact_concepts)
}

/// A recorded step as a candidate: its entry and how it reads as an outcome and otherwise.
struct Candidate<'s> {
    entry: &'s Arc<Entry>,
    as_outcome: Option<Reading>,
    otherwise: Option<Reading>,
}

/// The project's recorded steps and StepSets, read once for all the steps of a draft.
pub struct Paraphraser<'s> {
    snapshot: &'s Snapshot,
    candidates: Vec<Candidate<'s>>,
    step_sets: Vec<(String, Reading)>,
}

impl<'s> Paraphraser<'s> {
    /// Only recorded (or divergent) steps and StepSets are candidates: the point is a draft
    /// that replays for free. A step is read the ways the project writes it (an outcome, or a
    /// context or action), and only matched to drafted steps of that kind.
    pub fn new(snapshot: &'s Snapshot) -> Paraphraser<'s> {
        let candidates = snapshot
            .entries_unordered()
            .filter(|entry| entry.status() != StepStatus::Unrecorded && !entry.text.ends_with(':'))
            .map(|entry| {
                let roles = snapshot.roles(&entry.pattern);
                let as_outcome = (roles.get(StepRole::Outcome) > 0).then(|| read(&entry.text, true));
                let written_otherwise = roles.get(StepRole::Context) + roles.get(StepRole::Action) > 0;
                let otherwise = written_otherwise.then(|| read(&entry.text, false));
                Candidate { entry, as_outcome, otherwise }
            })
            .collect();
        let step_sets = snapshot
            .step_sets()
            .definitions()
            .into_iter()
            .map(|set| (set.name.clone(), read(&set.name, false)))
            .collect();
        Paraphraser { snapshot, candidates, step_sets }
    }

    /// The step or StepSet of the project that `step` paraphrases, when exactly one fits best.
    pub fn paraphrased(&self, step: DraftStep<'_>) -> Option<Paraphrased> {
        let outcome = step.role == StepRole::Outcome;
        let draft = read(step.text, outcome);
        if draft.concepts.is_empty() {
            return None;
        }
        // A block's start is no step: the many steps that begin blocks say nothing of this one.
        let followers: Vec<&str> = if step.previous == saffron_index::BLOCK_START {
            Vec::new()
        } else {
            self.snapshot.followers(step.previous).map(|(pattern, _)| pattern.as_ref()).collect()
        };
        let readings = self.candidates.iter().filter_map(|candidate| {
            let reading = if outcome { &candidate.as_outcome } else { &candidate.otherwise };
            reading.as_ref().map(|reading| (candidate.entry, reading))
        });
        // The step patterns that record each of the draft's values: a value only one of them
        // records says which step the draft means; `United States` in a hundred steps says nothing.
        let mut holders: Vec<BTreeSet<&str>> = vec![BTreeSet::new(); draft.slots.len()];
        for (entry, reading) in readings.clone().filter(|_| !draft.slots.is_empty()) {
            for (value, holder) in draft.slots.iter().zip(&mut holders) {
                let holds =
                    |slot: &Slot| slot.inner == value.inner || contains_at_boundaries(&slot.inner, &value.inner);
                if reading.slots.iter().any(holds) {
                    holder.insert(&entry.pattern);
                }
            }
        }
        let mut fits: Vec<(Fit, Paraphrased)> = Vec::new();
        for (entry, reading) in readings {
            let Some(found) = fit_of(step.text, &draft, &entry.text, reading, &followers) else { continue };
            let distinctive =
                found.anchors.iter().zip(&holders).any(|(anchored, holder)| {
                    *anchored && holder.len() == 1 && holder.contains(entry.pattern.as_ref())
                });
            // An extra concept is a qualifier the draft left out; only evidence says it meant it.
            if found.fit.exact_concepts || found.fit.follows || distinctive {
                fits.push((found.fit, Paraphrased::Step(found.text)));
            }
        }
        if !outcome && step.step_sets_allowed && draft.slots.is_empty() {
            for (name, reading) in &self.step_sets {
                if reading.negations == draft.negations
                    && reading.slots.is_empty()
                    && extra_concepts(&draft.concepts, &reading.concepts) == Some(0)
                {
                    let fit = Fit { exact_concepts: true, anchored: 0, follows: false };
                    fits.push((fit, Paraphrased::StepSet(name.clone())));
                }
            }
        }
        let best = fits.iter().map(|(fit, _)| *fit).max()?;
        let mut chosen = fits.into_iter().filter(|(fit, _)| *fit == best).map(|(_, result)| result);
        let first = chosen.next()?;
        // Two different steps with equal evidence: the draft does not say which it means.
        chosen.all(|other| other == first).then_some(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn concepts(text: &str, outcome: bool) -> Vec<Concept> {
        read(text, outcome).concepts
    }

    #[test]
    fn synonyms_pronouns_and_seeing_are_read_as_one_meaning() {
        assert_eq!(concepts("I log in as the demo user", false), concepts("signed in as the demo user", false));
        assert_ne!(concepts("I log out as the demo user", false), concepts("signed in as the demo user", false));
        assert_eq!(concepts("the total shows \"x\"", true), concepts("I see the total \"x\"", true));
        // Outside an outcome, seeing is what the step does.
        assert_ne!(concepts("I see the total", false), concepts("the total", false));
    }

    #[test]
    fn each_phrase_has_one_meaning() {
        let mut seen = std::collections::HashMap::new();
        for (class, phrases) in SYNONYMS.iter().enumerate() {
            for phrase in *phrases {
                assert_eq!(*seen.entry(*phrase).or_insert(class), class, "`{phrase}` is in two classes");
                assert!(!FUNCTION_WORDS.contains(phrase) && !SEEING.contains(phrase), "`{phrase}` is also set aside");
            }
        }
        // The longest phrase wins: `log in` is one concept, not `log` and a preposition.
        assert_eq!(synonym_at(&["logged".into(), "in".into(), "as".into()]), Some((0, 2)));
        assert_eq!(synonym_at(&["click".into(), "on".into()]), Some((3, 2)));
        assert_eq!(synonym_at(&["clicks".into()]), Some((3, 1)));
        assert_eq!(synonym_at(&["log".into()]), None);
    }

    #[test]
    fn numbers_keep_their_symbols_and_labels_stay() {
        let draft = read("the total shows €14.00", true);
        assert_eq!(draft.slots[0].inner, "€14.00");
        let recorded = "the live total is \"Total: €14.00\"";
        let slots = read(recorded, true).slots;
        assert_eq!(with_values(recorded, &slots, &draft.slots), Some((recorded.to_string(), vec![true])));
        let other = read("the total shows €16.50", true);
        assert_eq!(
            with_values(recorded, &slots, &other.slots),
            Some(("the live total is \"Total: €16.50\"".to_string(), vec![false]))
        );
        let count = read("the orders table shows 2 orders", true);
        let named = read("the orders table shows \"two\" orders", true);
        let recorded = "the orders table shows 1 order";
        let slots = read(recorded, true).slots;
        assert_eq!(
            with_values(recorded, &slots, &count.slots),
            Some(("the orders table shows 2 order".into(), vec![false]))
        );
        assert_eq!(with_values(recorded, &slots, &named.slots), None, "a name where a count goes");
    }

    #[test]
    fn a_qualifier_needs_the_candidate_to_hold_every_concept_in_order() {
        let draft = concepts("the total", true);
        assert_eq!(extra_concepts(&draft, &concepts("the saved total", true)), Some(1));
        assert_eq!(
            extra_concepts(&concepts("a product to the taxon", false), &concepts("the taxon to a product", false)),
            None
        );
        assert_eq!(
            extra_concepts(&concepts("I delete the file", false), &concepts("I delete the folder", false)),
            None
        );
    }
}
