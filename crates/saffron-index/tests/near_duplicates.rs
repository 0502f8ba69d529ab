//! The bounded near-duplicate search against a brute-force all-pairs Jaccard, its incremental
//! postings against a bulk load, and the bound on texts made of the same few words.

use std::path::PathBuf;

use proptest::prelude::*;
use saffron_index::drift::is_drift;
use saffron_index::tokens::{is_candidate, jaccard, shared, tokens};
use saffron_index::{Change, IndexHost, MAX_VERIFIED, Snapshot};

/// Few words, so that generated texts share most of them; values, negations, endings, typos and
/// joins exercise the rules that decide.
const WORDS: &[&str] = &[
    "I", "the", "click", "save", "button", "page", "open", "a", "order", "list", "see", "not", "\"tea\"", "\"mugs\"",
    "3", "12", "<name>", "Save", "orders", "ordr", "log", "in", "login", "'tea'", "1st", "order's",
];

fn feature(texts: &[String]) -> String {
    let mut feature = String::from("Feature: F\n  Scenario: S\n");
    for text in texts {
        feature.push_str(&format!("    Given {text}\n"));
    }
    feature
}

fn file(number: usize, texts: &[String]) -> Change {
    Change::SetFile { path: PathBuf::from(format!("features/f{number}.feature")), text: feature(texts) }
}

/// Every other indexed text that is a candidate by its tokens and the same step written another
/// way by its words, ordered as the index orders them.
fn brute_force(snapshot: &Snapshot, text: &str) -> Vec<(String, f64)> {
    let query = tokens(text);
    if query.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<(String, f64, usize)> = snapshot
        .entries()
        .into_iter()
        .filter(|entry| is_candidate(shared(&query, &entry.tokens), query.len(), entry.tokens.len()))
        .filter(|entry| is_drift(text, &entry.text))
        .map(|entry| (entry.text.to_string(), jaccard(&query, &entry.tokens), entry.count()))
        .collect();
    found.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.2.cmp(&a.2)).then_with(|| a.0.cmp(&b.0)));
    found.into_iter().map(|(text, similarity, _)| (text, similarity)).collect()
}

fn searched(snapshot: &Snapshot, text: &str) -> Vec<(String, f64)> {
    let search = snapshot.near_duplicate_search(text);
    assert!(search.complete, "a small vocabulary is searched completely: {text}");
    search.found.into_iter().map(|d| (d.text.to_string(), d.similarity)).collect()
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..12).prop_map(|words| words.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Files of generated texts are added, some removed and re-added with other texts; the
    /// search finds exactly what comparing every pair finds, for indexed texts and for texts
    /// being typed, and the index equals one loaded in one batch.
    #[test]
    fn the_search_finds_what_all_pairs_find_and_updates_equal_a_bulk_load(
        files in prop::collection::vec(prop::collection::vec(text(), 1..40), 1..8),
        edits in prop::collection::vec((0..8usize, prop::collection::vec(text(), 0..20)), 0..6),
        typed in prop::collection::vec(text(), 1..10),
    ) {
        let mut final_files: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
        let mut incremental = IndexHost::new();
        for (number, texts) in files.iter().enumerate() {
            incremental.apply(file(number, texts));
            final_files.insert(number, texts.clone());
        }
        for (number, texts) in &edits {
            if texts.is_empty() {
                incremental.apply(Change::RemoveFile { path: PathBuf::from(format!("features/f{number}.feature")) });
                final_files.remove(number);
            } else {
                incremental.apply(file(*number, texts));
                final_files.insert(*number, texts.clone());
            }
        }
        let mut bulk = IndexHost::new();
        bulk.apply_all(final_files.iter().map(|(number, texts)| file(*number, texts)));
        let snapshot = incremental.snapshot();
        let canonical = snapshot.canonical();
        prop_assert_eq!(&canonical["nearPostings"], &canonical["nearPostingsFromEntries"]);
        prop_assert_eq!(&canonical, &bulk.snapshot().canonical());
        let indexed: Vec<String> = snapshot.entries().iter().map(|entry| entry.text.to_string()).collect();
        for text in indexed.iter().chain(&typed) {
            prop_assert_eq!(searched(&snapshot, text), brute_force(&snapshot, text), "near-duplicates of {}", text);
        }
    }
}

/// A bulk load (thousands of texts at once) files the same postings as file-by-file updates,
/// and both find what all pairs find.
#[test]
fn a_bulk_load_searches_like_file_by_file_updates() {
    let mut seed = 7u64;
    let mut next = move |below: usize| {
        // A linear congruential generator: the texts only need to vary, reproducibly.
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize % below
    };
    let files: Vec<Vec<String>> = (0..40)
        .map(|_| {
            (0..40)
                .map(|_| {
                    let length = 1 + next(10);
                    (0..length).map(|_| WORDS[next(WORDS.len())]).collect::<Vec<_>>().join(" ")
                })
                .collect()
        })
        .collect();
    let mut bulk = IndexHost::new();
    bulk.apply_all(files.iter().enumerate().map(|(number, texts)| file(number, texts)));
    let mut one_by_one = IndexHost::new();
    for (number, texts) in files.iter().enumerate() {
        one_by_one.apply(file(number, texts));
    }
    let snapshot = bulk.snapshot();
    assert!(snapshot.entry_count() > 1000, "{} texts: too few for a bulk load", snapshot.entry_count());
    let canonical = snapshot.canonical();
    assert_eq!(canonical["nearPostings"], canonical["nearPostingsFromEntries"]);
    assert_eq!(canonical, one_by_one.snapshot().canonical());
    for entry in snapshot.entries().iter().step_by(7) {
        assert_eq!(searched(&snapshot, &entry.text), brute_force(&snapshot, &entry.text), "{}", entry.text);
    }
}

/// Twenty thousand texts made of the same eight words: every probe meets thousands of
/// candidates. It stops at the bound, says so, and what it found is right.
#[test]
fn texts_of_the_same_few_words_are_searched_within_the_bound() {
    let words = ["i", "see", "the", "new", "order", "in", "my", "list"];
    let mut texts = Vec::new();
    // Every ordering of every six of the eight words: 20,160 distinct texts.
    for left_out in 0..words.len() * words.len() {
        let (a, b) = (left_out / words.len(), left_out % words.len());
        if a >= b {
            continue;
        }
        let chosen: Vec<&str> = words.iter().enumerate().filter(|(i, _)| *i != a && *i != b).map(|(_, w)| *w).collect();
        permutations(&chosen, &mut Vec::new(), &mut texts);
    }
    assert_eq!(texts.len(), 28 * 720);
    let mut host = IndexHost::new();
    host.apply_all(texts.chunks(500).enumerate().map(|(number, chunk)| file(number, chunk)));
    let snapshot = host.snapshot();
    for probe in ["i see the new order in", "list my order in the new", "i see the new order in my"] {
        let search = snapshot.near_duplicate_search(probe);
        assert!(!search.complete, "{probe}: thousands of candidates, the search must stop");
        assert!(!search.found.is_empty() && search.found.len() <= MAX_VERIFIED, "{probe}: {}", search.found.len());
        let query = tokens(probe);
        for duplicate in &search.found {
            let other = tokens(&duplicate.text);
            assert!(is_candidate(shared(&query, &other), query.len(), other.len()), "{}", duplicate.text);
            assert!(is_drift(probe, &duplicate.text), "{}", duplicate.text);
        }
        assert_eq!(snapshot.near_duplicates(probe), search.found);
    }
}

fn permutations(rest: &[&str], prefix: &mut Vec<String>, out: &mut Vec<String>) {
    if rest.is_empty() {
        out.push(prefix.join(" "));
        return;
    }
    for i in 0..rest.len() {
        let mut others = rest.to_vec();
        let word = others.remove(i);
        prefix.push(word.to_string());
        permutations(&others, prefix, out);
        prefix.pop();
    }
}
