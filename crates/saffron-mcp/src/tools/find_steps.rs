//! `find_steps`: the existing wordings closest to an intent or a draft step, best first.
//!
//! Relevance comes from the index's own notions, strongest first: the exact text; the same
//! pattern with other values (`I search for "tea"` for `I search for "mugs"`); a prefix of the
//! text; a near-duplicate (token-Jaccard ≥ 0.7); and, for intents in other words, the words
//! they share, weighted by rarity (IDF) so "I", "the" and "see" count for little. A bonus for
//! being recorded puts the wordings that replay for free ahead of equally relevant ones.
//! StepSets are matched by name too: invoking a recorded set reuses several steps at once.

use std::collections::HashMap;
use std::fmt::Write as _;

use saffron_index::{Snapshot, StepRole, StepStatus, tokens};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Render, Status, ToolError};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FindStepsArgs {
    /// What the step should do ("sign in as the demo user") or a draft step
    /// ("When I search the orders for \"Ada\""); a leading Given/When/Then/And/But is ignored.
    pub query: String,
    /// At most this many wordings (default 10, at most 50).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The draft's previous step ("When I save my changes"), when the step sought comes after
    /// it: wordings that followed it elsewhere rank higher, and `next` lists what usually does.
    #[serde(default)]
    pub after: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindStepsOutput {
    /// The query as compared (keyword removed).
    pub query: String,
    /// Best first.
    pub matches: Vec<StepMatch>,
    /// With `after`: the steps that followed it in the project, best first (at most 5).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub next: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepMatch {
    /// The existing wording, exactly. For a `samePattern` match, a different quoted value is a
    /// different text: it keeps the wording but is recorded once.
    pub text: String,
    pub status: Status,
    /// How many places write it.
    pub count: usize,
    /// How the query matched.
    pub kind: MatchKind,
    /// Relevance plus the recorded bonus; only the order matters.
    pub score: f64,
    /// Why it ranks where it does, in a few words.
    pub reason: String,
    /// For a StepSet: its name. `text` is then the invocation to write (`StepSet <name>`, no
    /// colon, in a .saffron file), and `status` the least recorded of its steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_set: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MatchKind {
    /// The same text.
    Exact,
    /// The same wording with other quoted values, numbers or placeholders.
    SamePattern,
    /// The text starts with the query.
    Prefix,
    /// A typo-level variant (token-Jaccard at least 0.7).
    NearDuplicate,
    /// Shares rare words with the query.
    Words,
}

const KEYWORDS: [&str; 6] = ["given ", "when ", "then ", "and ", "but ", "* "];

pub fn run(snapshot: &Snapshot, args: FindStepsArgs) -> Result<FindStepsOutput, ToolError> {
    let limit = args.limit.map_or(10, |limit| limit as usize);
    if limit == 0 || limit > 50 {
        return Err(ToolError::new(
            format!("limit must be between 1 and 50, not {limit}"),
            "pass a limit from 1 to 50",
        ));
    }
    let query = strip_keyword(args.query.trim());
    if tokens::tokens(query).is_empty() {
        return Err(ToolError::new(
            "the query has no words to match",
            "describe what the step should do, e.g. \"sign in as the demo user\", or pass a draft step",
        ));
    }
    if query.len() > 2000 {
        return Err(ToolError::new("the query is longer than 2000 bytes", "pass one step or one sentence of intent"));
    }
    let after = args.after.as_deref().map(|after| strip_keyword(after.trim())).filter(|after| !after.is_empty());
    let Some(after) = after else {
        return Ok(FindStepsOutput {
            query: query.to_string(),
            matches: rank(snapshot, query, limit),
            next: Vec::new(),
        });
    };
    let next = saffron_ide::next_steps(snapshot, after, query_role(&args.query), MAX_NEXT);
    let mut matches = rank(snapshot, query, limit.max(MAX_NEXT * 4));
    follow_bonus(snapshot, after, &mut matches);
    matches.truncate(limit);
    Ok(FindStepsOutput {
        query: query.to_string(),
        matches,
        next: next.into_iter().map(|s| s.text.to_string()).collect(),
    })
}

/// How many next steps `after` lists.
const MAX_NEXT: usize = 5;

/// The role a query's keyword asks for (`Then` an outcome); an action without one.
fn query_role(query: &str) -> StepRole {
    let lower = query.trim_start().to_lowercase();
    if lower.starts_with("given ") {
        StepRole::Context
    } else if lower.starts_with("then ") {
        StepRole::Outcome
    } else {
        StepRole::Action
    }
}

/// Raises the matches that followed `after` elsewhere, by how often, and re-sorts: between
/// two equally relevant wordings, the one the project writes after that step wins.
fn follow_bonus(snapshot: &Snapshot, after: &str, matches: &mut [StepMatch]) {
    let previous = tokens::pattern_key(after);
    let followers: HashMap<&str, u32> =
        snapshot.followers(&previous).map(|(pattern, count)| (pattern.as_ref(), count)).collect();
    let most = followers.values().copied().max().unwrap_or(0);
    if most == 0 {
        return;
    }
    for found in matches.iter_mut() {
        let Some(&count) = followers.get(tokens::pattern_key(&found.text).as_str()) else { continue };
        found.score = ((found.score + 0.15 * (f64::from(count) / f64::from(most)).sqrt()) * 1000.0).round() / 1000.0;
        let _ = write!(found.reason, "; followed \"{after}\" {count}× elsewhere");
    }
    matches.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.text.cmp(&b.text)));
}

fn strip_keyword(text: &str) -> &str {
    let lower = text.to_lowercase();
    KEYWORDS
        .iter()
        .find(|keyword| lower.starts_with(*keyword))
        .and_then(|keyword| text.get(keyword.len()..))
        .map_or(text, str::trim_start)
}

/// Negation words outside quoted values: `I sign in with the password "not-the-password"` is
/// not a negative step.
fn negations(text: &str) -> Vec<String> {
    let tokens = tokens::tokens(&tokens::pattern_key(text));
    tokens::negations(&tokens).into_iter().map(str::to_string).collect()
}

/// Relevance plus a bonus for being recorded (and, a little, for being used), rounded: only
/// the order matters, and rounding keeps it readable.
fn score(relevance: f64, status: Status, count: usize) -> f64 {
    let bonus = match status {
        Status::Recorded => 0.1,
        Status::Divergent => 0.03,
        Status::Unrecorded => 0.0,
    } + 0.002 * count.min(10) as f64;
    ((relevance + bonus) * 1000.0).round() / 1000.0
}

fn cost(status: Status) -> &'static str {
    match status {
        Status::Recorded => "recorded: replays for free",
        Status::Divergent => "recorded with different actions in different scenarios",
        Status::Unrecorded => "not recorded yet: costs a recording",
    }
}

pub fn rank(snapshot: &Snapshot, query: &str, limit: usize) -> Vec<StepMatch> {
    let entries = snapshot.entries();
    let query_tokens = tokens::tokens(query);
    let query_pattern = tokens::pattern_key(query);
    let query_negations = negations(query);
    let query_lower = query.to_lowercase();

    // Rarity of each token over the vocabulary: one pass, so ranking needs no state of its own.
    let mut document_frequency: HashMap<&str, usize> = HashMap::new();
    for entry in &entries {
        for token in entry.tokens.iter() {
            *document_frequency.entry(token.as_str()).or_default() += 1;
        }
    }
    let total = entries.len().max(1) as f64;
    let weight = |token: &str| (1.0 + total / document_frequency.get(token).copied().unwrap_or(1) as f64).ln();

    let near: HashMap<String, f64> =
        snapshot.near_duplicates(query).into_iter().map(|d| (d.text.to_string(), d.similarity)).collect();

    let relevance_of = |text: &str, text_tokens: &[String], pattern: &str| -> Option<(f64, MatchKind, String)> {
        let found = if text == query {
            (1.0, MatchKind::Exact, "the exact wording".to_string())
        } else if pattern == query_pattern {
            (
                0.95,
                MatchKind::SamePattern,
                "the same wording with other values (another value is a new text, recorded once)".to_string(),
            )
        } else if query_lower.len() >= 3 && text.to_lowercase().starts_with(&query_lower) {
            let coverage = query_lower.len() as f64 / text.len().max(1) as f64;
            (0.8 + 0.1 * coverage, MatchKind::Prefix, "starts with the query".to_string())
        } else if let Some(similarity) = near.get(text).copied().or_else(|| {
            let similarity = tokens::jaccard(&query_tokens, text_tokens);
            (similarity >= tokens::NEAR_DUPLICATE_THRESHOLD).then_some(similarity)
        }) {
            (0.9 * similarity, MatchKind::NearDuplicate, format!("a near-duplicate (similarity {similarity:.2})"))
        } else {
            let shared: Vec<&String> = query_tokens.iter().filter(|t| text_tokens.binary_search(t).is_ok()).collect();
            if shared.is_empty() {
                return None;
            }
            let shared_weight: f64 = shared.iter().map(|t| weight(t)).sum();
            let union_weight: f64 = query_tokens.iter().map(|t| weight(t)).sum::<f64>()
                + text_tokens.iter().filter(|t| query_tokens.binary_search(t).is_err()).map(|t| weight(t)).sum::<f64>();
            let overlap = shared_weight / union_weight.max(f64::EPSILON);
            if overlap < 0.12 {
                return None;
            }
            let words: Vec<&str> = shared.iter().map(|t| t.as_str()).collect();
            (0.8 * overlap, MatchKind::Words, format!("shares the words {}", words.join(", ")))
        };
        let (mut relevance, kind, mut why) = found;
        if kind != MatchKind::Exact && negations(text) != query_negations {
            // "gift wrap is not selected" answers the opposite question: keep it, but lower.
            relevance *= 0.6;
            why.push_str(", but differs in negation");
        }
        Some((relevance, kind, why))
    };

    // Each match with its pattern key, so one pattern used with many values shows once.
    let mut matches: Vec<(StepMatch, Option<String>)> = Vec::new();
    for entry in entries {
        let Some((relevance, kind, why)) = relevance_of(&entry.text, &entry.tokens, &entry.pattern) else { continue };
        let status: Status = entry.status().into();
        matches.push((
            StepMatch {
                text: entry.text.to_string(),
                status,
                count: entry.count(),
                kind,
                score: score(relevance, status, entry.count()),
                reason: format!("{why}; {}; written {}×", cost(status), entry.count()),
                step_set: None,
            },
            Some(entry.pattern.to_string()),
        ));
    }
    for set in snapshot.step_sets().definitions() {
        let name = set.name.as_str();
        let invocation = format!("StepSet {name}");
        let name_tokens = tokens::tokens(name);
        let pattern = tokens::pattern_key(name);
        let by_name = relevance_of(name, &name_tokens, &pattern);
        let by_invocation = (query.eq_ignore_ascii_case(&invocation))
            .then(|| (1.0, MatchKind::Exact, "the exact invocation".to_string()));
        let Some((relevance, kind, why)) = by_invocation.or(by_name) else { continue };
        let status = set
            .steps()
            .iter()
            .map(|step| Status::from(snapshot.entry(&step.text).map_or(StepStatus::Unrecorded, |e| e.status())))
            .max_by_key(|status| status.rank())
            .unwrap_or(Status::Unrecorded);
        let uses = snapshot.invocations(name).len();
        matches.push((
            StepMatch {
                text: invocation,
                status,
                count: uses,
                kind,
                score: score(relevance, status, uses),
                reason: format!(
                    "a StepSet, by its name: {why}; {} step(s), {}; invoked {uses}× (.saffron files only, no colon)",
                    set.steps().len(),
                    cost(status)
                ),
                step_set: Some(name.to_string()),
            },
            None,
        ));
    }
    matches.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then_with(|| a.0.text.cmp(&b.0.text)));
    collapse_patterns(matches, limit)
}

/// Keeps the best match of each pattern (`I add product "Cup" to the cart` stands for every
/// product), noting how many other values exist, so ten values of one step do not crowd out
/// the other wordings.
fn collapse_patterns(matches: Vec<(StepMatch, Option<String>)>, limit: usize) -> Vec<StepMatch> {
    let mut kept: Vec<(StepMatch, usize)> = Vec::new();
    let mut by_pattern: HashMap<String, usize> = HashMap::new();
    for (found, pattern) in matches {
        if let Some(pattern) = &pattern
            && let Some(index) = by_pattern.get(pattern)
        {
            kept[*index].1 += 1;
            continue;
        }
        // Past the limit, only the counts of the kept patterns still move.
        if kept.len() == limit {
            continue;
        }
        if let Some(pattern) = pattern {
            by_pattern.insert(pattern, kept.len());
        }
        kept.push((found, 0));
    }
    kept.into_iter()
        .map(|(mut found, others)| {
            if others > 0 {
                let _ = write!(found.reason, "; {others} more with other values");
            }
            found
        })
        .collect()
}

impl Render for FindStepsOutput {
    fn render(&self) -> String {
        let mut out = String::new();
        if self.matches.is_empty() {
            let _ = writeln!(
                out,
                "No existing step is close to \"{}\": a new wording will cost a recording. Call vocabulary to browse.",
                self.query
            );
            return out;
        }
        let _ = writeln!(out, "Existing wordings for \"{}\", best first:", self.query);
        for (index, found) in self.matches.iter().enumerate() {
            let _ = writeln!(out, "{}. {}  {}\n   {}", index + 1, found.status.badge(), found.text, found.reason);
        }
        if !self.next.is_empty() {
            let _ = writeln!(out, "After that step the project usually writes: {}", self.next.join(" | "));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_stripped() {
        assert_eq!(strip_keyword("When I search"), "I search");
        assert_eq!(strip_keyword("and   then"), "then");
        assert_eq!(strip_keyword("Whenever"), "Whenever");
        assert_eq!(strip_keyword("* I go"), "I go");
    }

    #[test]
    fn after_a_step_what_followed_it_elsewhere_ranks_first_and_is_listed() {
        let feature = |name: &str, steps: &[&str]| saffron_index::Change::SetFile {
            path: format!("features/{name}.feature").into(),
            text: format!(
                "Feature: {name}\n  Scenario: s\n{}",
                steps.iter().map(|step| format!("    {step}\n")).collect::<String>()
            ),
        };
        let mut host = saffron_index::IndexHost::new();
        host.apply_all([
            feature("a", &["When I save my changes", "Then I should see a success message"]),
            feature("b", &["When I save my changes", "Then I should see a success message"]),
            feature("c", &["When I delete it", "Then I should see an error message"]),
            feature("d", &["When I delete it", "Then I should see an error message"]),
            feature("e", &["When I reload it", "Then I should see an error message"]),
        ]);
        let snapshot = host.snapshot();
        let find = |after: Option<&str>| {
            let args = FindStepsArgs {
                query: "Then I should see the message".into(),
                limit: Some(2),
                after: after.map(Into::into),
            };
            run(&snapshot, args).expect("found")
        };
        let texts = |output: &FindStepsOutput| output.matches.iter().map(|m| m.text.clone()).collect::<Vec<_>>();
        let alone = find(None);
        assert_eq!(texts(&alone), ["I should see an error message", "I should see a success message"]);
        assert!(alone.next.is_empty());
        let after_save = find(Some("When I save my changes"));
        assert_eq!(texts(&after_save), ["I should see a success message", "I should see an error message"]);
        assert_eq!(after_save.next, ["I should see a success message"]);
    }
}
