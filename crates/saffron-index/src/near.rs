//! The near-duplicate search: which texts have a token-Jaccard of at least
//! [`NEAR_DUPLICATE_THRESHOLD`] with a given one, without comparing it with every text.
//!
//! The texts are filed by (token, number of tokens). A probe `x` of `n` tokens looks only at
//! the sizes `s` a near-duplicate can have, and for each size only at the postings of `x`'s
//! `n − α + 1` rarest tokens, where `α` is the least overlap that reaches the threshold for sizes
//! `n` and `s`: a text missing all of them shares at most `α − 1` tokens with `x` (prefix
//! filtering, as in all-pairs similarity joins; the larger the size gap, the fewer tokens are
//! probed). Each posting carries a 64-bit signature of its text's tokens, its negation words
//! and a hash of its pattern, so most texts are ruled out without being read: the signature
//! bounds the overlap from above (a token of `x` whose bit is not set is not in the text).
//!
//! Every filter is exact. What bounds a probe on any input is [`MAX_SCANNED`] and
//! [`MAX_VERIFIED`]: when texts made of the same few words are so many that a probe reaches
//! either, it stops and reports itself incomplete (see [`Search::complete`]).

use std::hash::BuildHasher;
use std::sync::Arc;

use crate::host::HashMap;
use crate::tokens::{self, NEAR_DUPLICATE_THRESHOLD};

/// Postings scanned per probe at most: a probe whose rarest tokens are each in tens of
/// thousands of texts of its size stops here. On realistic vocabularies a probe scans a few
/// hundred to a few thousand.
pub const MAX_SCANNED: usize = 10_000;

/// Candidates compared token by token per probe at most (those that pass the signature,
/// pattern and negation filters). On realistic vocabularies a probe verifies tens.
pub const MAX_VERIFIED: usize = 1_000;

/// What the search needs of a text, shared by all its postings.
#[derive(Debug)]
pub(crate) struct NearText {
    pub text: Arc<str>,
    pub tokens: Arc<[String]>,
    pub pattern: Arc<str>,
}

/// One text in the postings of one (token, size).
#[derive(Debug, Clone)]
pub(crate) struct NearPosting {
    signature: u64,
    pattern_hash: u64,
    negations: u16,
    text: Arc<NearText>,
}

/// (token, number of tokens of the text) → the texts, sorted by text so that a probe that
/// stops early stops at the same place however the index was built.
pub(crate) type NearPostings = HashMap<(Arc<str>, u32), imbl::Vector<NearPosting>>;

/// A fixed hasher: signatures and pattern hashes only filter, but which texts a capped probe
/// reaches must not depend on the process.
fn fixed_hash(value: &str) -> u64 {
    foldhash::quality::FixedState::with_seed(0x5AFF_2013).hash_one(value)
}

fn signature(tokens: &[String]) -> u64 {
    tokens.iter().fold(0, |signature, token| signature | 1 << (fixed_hash(token) % 64))
}

/// The negation words among sorted tokens, as a set of bits (see [`tokens::negations`]).
fn negation_bits(tokens: &[String]) -> u16 {
    tokens::negations(tokens)
        .iter()
        .fold(0, |bits, word| bits | tokens::NEGATIONS.iter().position(|n| n == word).map_or(0, |index| 1 << index))
}

fn posting(text: &Arc<NearText>) -> NearPosting {
    NearPosting {
        signature: signature(&text.tokens),
        pattern_hash: fixed_hash(&text.pattern),
        negations: negation_bits(&text.tokens),
        text: text.clone(),
    }
}

fn size_key(tokens: &[String]) -> u32 {
    u32::try_from(tokens.len()).unwrap_or(u32::MAX)
}

/// Files a new text under each of its tokens.
pub(crate) fn add(postings: &mut NearPostings, text: Arc<NearText>) {
    let posting = posting(&text);
    let size = size_key(&text.tokens);
    for token in text.tokens.iter() {
        let list = postings.entry((Arc::from(token.as_str()), size)).or_default();
        let at = list.binary_search_by(|p| p.text.text.cmp(&text.text)).unwrap_or_else(|at| at);
        list.insert(at, posting.clone());
    }
}

/// Files many new texts at once (a project's load): each list is sorted once.
pub(crate) fn add_all(postings: &mut NearPostings, texts: impl IntoIterator<Item = Arc<NearText>>) {
    let mut lists: std::collections::HashMap<(Arc<str>, u32), Vec<NearPosting>, crate::host::Hasher> =
        Default::default();
    for text in texts {
        let posting = posting(&text);
        let size = size_key(&text.tokens);
        for token in text.tokens.iter() {
            lists.entry((Arc::from(token.as_str()), size)).or_default().push(posting.clone());
        }
    }
    for (key, mut new) in lists {
        let mut list: Vec<NearPosting> = match postings.remove(&key) {
            Some(old) => old.into_iter().chain(new.drain(..)).collect(),
            None => new,
        };
        list.sort_by(|a, b| a.text.text.cmp(&b.text.text));
        postings.insert(key, imbl::Vector::from(list));
    }
}

/// Takes a text out of the postings of its tokens.
pub(crate) fn remove(postings: &mut NearPostings, text: &str, text_tokens: &[String]) {
    let size = size_key(text_tokens);
    for token in text_tokens {
        let key = (Arc::from(token.as_str()), size);
        let emptied = postings.get_mut(&key).is_some_and(|list| {
            if let Ok(at) = list.binary_search_by(|p| p.text.text.as_ref().cmp(text)) {
                list.remove(at);
            }
            list.is_empty()
        });
        if emptied {
            postings.remove(&key);
        }
    }
}

/// Every list as (token, size, texts in list order), sorted: for comparing two indexes.
pub(crate) fn listing(postings: &NearPostings) -> Vec<(String, u32, Vec<String>)> {
    let mut lists: Vec<(String, u32, Vec<String>)> = postings
        .iter()
        .map(|((token, size), list)| {
            (token.to_string(), *size, list.iter().map(|posting| posting.text.text.to_string()).collect())
        })
        .collect();
    lists.sort();
    lists
}

/// The lists [`listing`] must show for these texts' tokens.
pub(crate) fn expected_listing<'a>(
    texts: impl Iterator<Item = (&'a str, &'a [String])>,
) -> Vec<(String, u32, Vec<String>)> {
    let mut lists: std::collections::BTreeMap<(String, u32), Vec<String>> = Default::default();
    for (text, tokens) in texts {
        for token in tokens {
            lists.entry((token.clone(), size_key(tokens))).or_default().push(text.to_string());
        }
    }
    lists
        .into_iter()
        .map(|((token, size), mut texts)| {
            texts.sort();
            (token, size, texts)
        })
        .collect()
}

/// The result of one probe.
#[derive(Debug, Default)]
pub(crate) struct Search {
    /// (text, similarity) of every near-duplicate found, unordered.
    pub found: Vec<(Arc<str>, f64)>,
    /// False when the probe reached [`MAX_SCANNED`] or [`MAX_VERIFIED`]: texts it did not look at
    /// may be near-duplicates too.
    pub complete: bool,
}

/// Jaccard of two sets of sizes `a` and `b` sharing `shared`, computed as [`tokens::jaccard`]
/// computes it, so the threshold is crossed at exactly the same overlap.
fn jaccard_of(shared: usize, a: usize, b: usize) -> f64 {
    shared as f64 / (a + b - shared) as f64
}

/// The least overlap at which sets of sizes `a` and `b` reach the threshold, if any.
fn least_overlap(a: usize, b: usize) -> Option<usize> {
    let most = a.min(b);
    if most == 0 || jaccard_of(most, a, b) < NEAR_DUPLICATE_THRESHOLD {
        return None;
    }
    // The Jaccard of a fixed pair of sizes grows with the overlap.
    let (mut low, mut high) = (1, most);
    while low < high {
        let middle = (low + high) / 2;
        if jaccard_of(middle, a, b) >= NEAR_DUPLICATE_THRESHOLD { high = middle } else { low = middle + 1 }
    }
    Some(low)
}

/// Finds the near-duplicates of `text`. `frequency` gives how many texts hold a token.
pub(crate) fn search(postings: &NearPostings, text: &str, frequency: impl Fn(&str) -> usize) -> Search {
    let query = tokens::tokens(text);
    let mut search = Search { found: Vec::new(), complete: true };
    let n = query.len();
    if n == 0 {
        return search;
    }
    // (size, least overlap, tokens to probe), nearest sizes first: they hold most matches.
    let mut sizes: Vec<(usize, usize, usize)> = (1..=n.saturating_mul(2).saturating_add(1))
        .filter_map(|size| least_overlap(n, size).map(|overlap| (size, overlap, n - overlap + 1)))
        .collect();
    sizes.sort_by_key(|&(size, _, _)| (size.abs_diff(n), size));
    let mut by_rarity: Vec<(usize, &String)> = query.iter().map(|token| (frequency(token), token)).collect();
    by_rarity.sort();
    let key = tokens::pattern_key(text);
    let pattern_hash = fixed_hash(&key);
    let negations = negation_bits(&query);
    let query_signature = signature(&query);
    // How many of the query's tokens set each signature bit, to bound an overlap by the bits
    // two signatures share.
    let mut per_bit = [0u8; 64];
    for token in &query {
        let bit = (fixed_hash(token) % 64) as usize;
        per_bit[bit] = per_bit[bit].saturating_add(1);
    }
    let bits_are_tokens = query_signature.count_ones() as usize == n;
    let overlap_bound = |other: u64| -> usize {
        let shared = query_signature & other;
        if bits_are_tokens {
            return shared.count_ones() as usize;
        }
        let (mut bound, mut bits) = (0, shared);
        while bits != 0 {
            bound += usize::from(per_bit[bits.trailing_zeros() as usize]);
            bits &= bits - 1;
        }
        bound
    };
    let mut seen: std::collections::HashSet<*const NearText> = std::collections::HashSet::new();
    let (mut scanned, mut verified) = (0usize, 0usize);
    let deepest = sizes.iter().map(|&(_, _, probed)| probed).max().unwrap_or(0);
    for (rank, (_, token)) in by_rarity.iter().enumerate().take(deepest) {
        for &(size, overlap, probed) in &sizes {
            if rank >= probed {
                continue;
            }
            let Some(list) = postings.get(&(Arc::from(token.as_str()), size as u32)) else { continue };
            for chunk in list.leaves() {
                for posting in chunk {
                    scanned += 1;
                    if scanned > MAX_SCANNED {
                        search.complete = false;
                        return search;
                    }
                    if posting.negations != negations || overlap_bound(posting.signature) < overlap {
                        continue;
                    }
                    let other = &posting.text;
                    if posting.pattern_hash == pattern_hash && *other.pattern == *key {
                        continue;
                    }
                    if !seen.insert(Arc::as_ptr(other)) {
                        continue;
                    }
                    verified += 1;
                    if verified > MAX_VERIFIED {
                        search.complete = false;
                        return search;
                    }
                    let similarity = tokens::jaccard(&query, &other.tokens);
                    if similarity >= NEAR_DUPLICATE_THRESHOLD {
                        search.found.push((other.text.clone(), similarity));
                    }
                }
            }
        }
    }
    search
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_overlap_is_where_the_jaccard_reaches_the_threshold() {
        for a in 1..40 {
            for b in 1..80 {
                let brute = (1..=a.min(b)).find(|&o| jaccard_of(o, a, b) >= NEAR_DUPLICATE_THRESHOLD);
                assert_eq!(least_overlap(a, b), brute, "{a} {b}");
            }
        }
    }
}
