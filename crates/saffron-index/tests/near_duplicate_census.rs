//! How many distinct texts of a real suite carry a near-duplicate warning (the language server's
//! rule: a better-established near-duplicate exists: recorded, then its wording more used, then
//! the text more used), and every flagged pair for labelling.
//! Needs the shared corpus: `SAFFRON_CORPUS=/work/shared/corpus`; prints, asserts nothing, and
//! is skipped without it.

use std::path::PathBuf;

use saffron_index::{IndexHost, StepStatus};

fn rank(status: StepStatus) -> u8 {
    match status {
        StepStatus::Recorded => 0,
        StepStatus::Divergent => 1,
        StepStatus::Unrecorded => 2,
    }
}

fn census(name: &str, root: PathBuf) {
    let (host, _) = IndexHost::load(&root);
    let snapshot = host.snapshot();
    let entries = snapshot.entries();
    let texts: Vec<&str> = entries.iter().map(|entry| &*entry.text).collect();
    let near = snapshot.near_duplicates_of_each(&texts);
    let mut with_any = 0;
    let mut warned = 0;
    let mut pairs = std::collections::BTreeSet::new();
    for (entry, found) in entries.iter().zip(&near) {
        if !found.is_empty() {
            with_any += 1;
        }
        let standing = |status: StepStatus, text: &str, count: usize| {
            (rank(status), std::cmp::Reverse(snapshot.wording_uses(text)), std::cmp::Reverse(count))
        };
        let own = (standing(entry.status(), &entry.text, entry.count()), &*entry.text);
        if found.iter().any(|d| (standing(d.status, &d.text, d.count), &*d.text) < own) {
            warned += 1;
        }
        for d in found {
            let (a, b) = if *entry.text < *d.text { (&*entry.text, &*d.text) } else { (&*d.text, &*entry.text) };
            pairs.insert((a.to_string(), b.to_string()));
        }
    }
    let capped = texts.iter().filter(|text| !snapshot.near_duplicate_search(text).complete).count();
    println!(
        "{name}: {} distinct texts, {with_any} with a near-duplicate ({:.1}%), {warned} warned ({:.1}%), {} pairs, \
         {capped} searches stopped by the cap",
        texts.len(),
        100.0 * with_any as f64 / texts.len() as f64,
        100.0 * warned as f64 / texts.len() as f64,
        pairs.len()
    );
    if let Some(out) = std::env::var_os("SAFFRON_CENSUS_PAIRS") {
        let lines: Vec<String> = pairs.iter().map(|(a, b)| format!("{a}\t{b}")).collect();
        let _ = std::fs::write(PathBuf::from(out).join(format!("{name}.tsv")), lines.join("\n") + "\n");
    }
}

#[test]
fn census_of_real_suites() {
    let Some(corpus) = std::env::var_os("SAFFRON_CORPUS").map(PathBuf::from) else { return };
    census("sylius", corpus.join("sylius"));
    census("sylius-admin", corpus.join("sylius/features/admin"));
    census("sylius-shop", corpus.join("sylius/features/shop"));
    census("gherkin", corpus.join("gherkin/good"));
}
