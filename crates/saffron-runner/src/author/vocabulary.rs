//! The project's vocabulary as the drafting model sees it: recorded steps first with how often
//! each is written, then the StepSets, then the steps written but not recorded yet. A large
//! project's vocabulary does not fit a prompt, so items are chosen by relevance to the prose
//! (the index's token overlap, each shared word weighted by its rarity), most relevant first, until the token budget is spent: a step
//! that shares no word with the prose is the first to go, whatever its place in the list.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use saffron_index::{Snapshot, StepStatus, drift::FUNCTION_WORDS, tokens};
use serde::Serialize;

/// One step text offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VocabularyStep {
    pub text: String,
    /// How many places the project writes it.
    pub uses: usize,
    pub status: StepStatus,
    /// Recorded as requests (an `@api` scenario's step), not page actions.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub api: bool,
}

/// One StepSet offered to the model: its name and the steps it runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VocabularySet {
    pub name: String,
    /// Keyword and text: `Given I am on the sign-in page`.
    pub steps: Vec<String>,
}

/// What the model is given, in the order it is given. `left_out` counts items: a step pattern
/// (its value variants are one item) or a set.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Vocabulary {
    /// Recorded (or divergent) steps: they replay for free.
    pub recorded: Vec<VocabularyStep>,
    pub step_sets: Vec<VocabularySet>,
    /// Written somewhere, recorded nowhere yet.
    pub unrecorded: Vec<VocabularyStep>,
    /// Items the budget left out (the least relevant).
    pub left_out: usize,
    /// The services an `@api` feature's requests may name (`[api.services]`, and `app`).
    pub api_services: Vec<String>,
}

/// The services of the project's `[api.services]`, after `app` (the application itself), for
/// the drafting model; just `app` when the configuration cannot be read.
pub fn api_services(root: &std::path::Path) -> Vec<String> {
    let configured = crate::session::load_config(root).map(|config| config.api.services).unwrap_or_default();
    let mut names = vec![crate::medium::http::APP_SERVICE.to_owned()];
    names.extend(configured.into_keys().filter(|name| name != crate::medium::http::APP_SERVICE));
    names
}

/// Tokens of a text, roughly, as models count them: about four characters each.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4) + 1
}

enum Item {
    Step(VocabularyStep),
    Set(VocabularySet),
}

impl Item {
    fn line(&self) -> String {
        match self {
            Item::Step(step) if step.status == StepStatus::Unrecorded => format!("- {}", step.text),
            Item::Step(step) if step.api => format!("- [{}×, API] {}", step.uses, step.text),
            Item::Step(step) => format!("- [{}×] {}", step.uses, step.text),
            Item::Set(set) => format!("- StepSet {}: {}", set.name, set.steps.join(" / ")),
        }
    }

    /// Recorded steps before sets before unrecorded steps, when relevance ties.
    fn group(&self) -> u8 {
        match self {
            Item::Step(step) if step.status == StepStatus::Unrecorded => 2,
            Item::Step(_) => 0,
            Item::Set(_) => 1,
        }
    }

    fn uses(&self) -> usize {
        match self {
            Item::Step(step) => step.uses,
            Item::Set(_) => 0,
        }
    }
}

/// The words of `text` that say something: tokens without the function words.
pub(crate) fn content_tokens(text: &str) -> HashSet<String> {
    tokens::tokens(text).into_iter().filter(|token| !FUNCTION_WORDS.contains(&token.as_str()) && token != "i").collect()
}

/// The vocabulary of `snapshot` most relevant to `prose`, within `budget` tokens (as
/// [`estimate_tokens`] counts the rendered lines).
pub fn select(snapshot: &Snapshot, prose: &str, budget: usize) -> Vocabulary {
    let wanted = content_tokens(prose);
    // One item per step pattern: `I search for "tea"` and `I search for "mugs"` are one step
    // with other values (the prompt says values may change), so a budget spent on variants of
    // one step is not spent. The best-established variant stands for them.
    let mut by_pattern: HashMap<&str, &saffron_index::Entry> = HashMap::new();
    for entry in snapshot.entries_unordered() {
        let best = by_pattern.entry(&entry.pattern).or_insert(entry);
        if entry.rank_key() < best.rank_key() {
            *best = entry;
        }
    }
    let mut items: Vec<Item> = by_pattern
        .into_values()
        .map(|entry| {
            Item::Step(VocabularyStep {
                text: entry.text.to_string(),
                uses: entry.count(),
                status: entry.status(),
                api: entry.over_http(),
            })
        })
        .collect();
    for set in snapshot.step_sets().definitions() {
        let steps = set.steps().iter().map(|step| format!("{}{}", step.keyword, step.text)).collect();
        items.push(Item::Set(VocabularySet { name: set.name.clone(), steps }));
    }
    // A shared word counts by how rare it is in the vocabulary (inverse document frequency): a
    // step that shares `coupon` with the prose is more relevant than one that shares `the order`.
    let item_tokens: Vec<HashSet<String>> = items
        .iter()
        .map(|item| match item {
            Item::Step(step) => content_tokens(&step.text),
            Item::Set(set) => content_tokens(&format!("{} {}", set.name, set.steps.join(" "))),
        })
        .collect();
    let mut frequency: HashMap<&str, usize> = HashMap::new();
    for tokens in &item_tokens {
        for token in tokens.iter().filter(|token| wanted.contains(*token)) {
            *frequency.entry(token).or_default() += 1;
        }
    }
    let count = items.len().max(1) as f64;
    let relevance = |tokens: &HashSet<String>| -> f64 {
        tokens
            .iter()
            .filter_map(|token| frequency.get(token.as_str()))
            .map(|&found| (count / found as f64).ln() + 1.0)
            .sum()
    };
    let scores: Vec<f64> = item_tokens.iter().map(relevance).collect();
    let mut scored: Vec<(f64, Item)> = scores.into_iter().zip(items).collect();
    scored.sort_by(|(a_score, a), (b_score, b)| {
        b_score
            .total_cmp(a_score)
            .then(a.group().cmp(&b.group()))
            .then(b.uses().cmp(&a.uses()))
            .then_with(|| a.line().cmp(&b.line()))
    });
    let mut vocabulary = Vocabulary::default();
    let mut spent = 0;
    for (_, item) in scored {
        let cost = estimate_tokens(&item.line());
        if spent + cost > budget {
            vocabulary.left_out += 1;
            continue;
        }
        spent += cost;
        match item {
            Item::Step(step) if step.status == StepStatus::Unrecorded => vocabulary.unrecorded.push(step),
            Item::Step(step) => vocabulary.recorded.push(step),
            Item::Set(set) => vocabulary.step_sets.push(set),
        }
    }
    vocabulary
}

impl Vocabulary {
    /// The vocabulary as the prompt gives it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "Recorded steps (they replay for free), with how often the project writes each:");
        for step in &self.recorded {
            let _ = writeln!(out, "{}", Item::Step(step.clone()).line());
        }
        let _ = writeln!(out, "\nStepSets (a step line `StepSet <name>` runs the set's steps):");
        for set in &self.step_sets {
            let _ = writeln!(out, "{}", Item::Set(set.clone()).line());
        }
        let _ = writeln!(out, "\nSteps written in the project but not recorded yet:");
        for step in &self.unrecorded {
            let _ = writeln!(out, "{}", Item::Step(step.clone()).line());
        }
        if self.left_out > 0 {
            let _ = writeln!(out, "\n({} less relevant items left out)", self.left_out);
        }
        if !self.api_services.is_empty() {
            let _ = writeln!(out, "\nAPI services an @api feature's requests go to: {}", self.api_services.join(", "));
        }
        out
    }

    /// Every step text offered, sets' steps included.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.recorded
            .iter()
            .chain(&self.unrecorded)
            .map(|step| step.text.as_str())
            .chain(self.step_sets.iter().flat_map(|set| set.steps.iter().map(String::as_str)))
    }
}
