//! The near-duplicate search: which texts are near-duplicate candidates of a given one by their
//! tokens (a token-Jaccard of at least [`tokens::NEAR_DUPLICATE_THRESHOLD`], or short texts one
//! token apart: [`tokens::is_candidate`]) and then the same step written two ways by their words
//! ([`crate::drift`]), without comparing it with every text.
//!
//! The texts are filed by token, each token's list ordered by the texts' number of tokens (their
//! size), so the texts of one size are a range of it. A probe `x` of `n` tokens looks only at
//! the sizes `s` a near-duplicate can have, and for each size only at the postings of `x`'s
//! `n − α + 1` rarest tokens, where `α` is the least overlap that reaches the threshold for sizes
//! `n` and `s`: a text missing all of them shares at most `α − 1` tokens with `x` (prefix
//! filtering, as in all-pairs similarity joins; the larger the size gap, the fewer tokens are
//! probed). Each posting carries a 64-bit signature of its text's tokens, its negation words
//! (outside quoted values) and a hash of its pattern (a text of the query's pattern with other
//! values is the same step used otherwise), so most texts are ruled out without being read:
//! the signature bounds the overlap from above (a token of `x` whose bit is not set is not in
//! the text).
//!
//! Every filter is exact. What bounds a probe on any input is [`MAX_SCANNED`] and
//! [`MAX_VERIFIED`]: when texts made of the same few words are so many that a probe reaches
//! either, it stops and reports itself incomplete (see [`Search::complete`]).

use std::cmp::Ordering;
use std::hash::BuildHasher;
use std::sync::Arc;

use crate::drift::{self, Wording};
use crate::host::HashMap;
use crate::tokens;

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
    /// The negation words outside quoted values, as bits (see [`negation_bits`]).
    negations: u16,
    /// A hash of the values (see [`Wording::values`]): two texts of one pattern whose values
    /// differ are one step used with other values, passed over without being cut into words.
    values: u64,
    /// No values at all (see [`drift::is_value_free`]): its tokens are its words.
    value_free: bool,
}

impl NearText {
    pub(crate) fn new(text: Arc<str>, tokens: Arc<[String]>, pattern: Arc<str>) -> NearText {
        let wording = Wording::of(&text);
        NearText {
            negations: negation_bits(&wording),
            values: values_hash(&wording),
            value_free: drift::is_value_free(&text),
            text,
            tokens,
            pattern,
        }
    }
}

/// One text in the postings of one token: 24 bytes, so that a probe reads few cache lines.
#[derive(Debug, Clone)]
pub(crate) struct NearPosting {
    signature: u64,
    text: Arc<NearText>,
    /// The text's number of tokens: a list is ordered by it first.
    size: u32,
    /// Only a filter before the patterns themselves are compared: 16 bits rule out all but one
    /// in 65,536 texts of another pattern.
    pattern_hash: u16,
    negations: u16,
}

const _: () = assert!(std::mem::size_of::<NearPosting>() == 24);

impl NearPosting {
    pub(crate) fn text(&self) -> &Arc<str> {
        &self.text.text
    }

    pub(crate) fn pattern(&self) -> &str {
        &self.text.pattern
    }

    /// The list order: by size, then by text, so that the texts of one size are a range and a
    /// probe that stops early stops at the same place however the index was built.
    fn order(&self, size: u32, text: &str) -> Ordering {
        self.size.cmp(&size).then_with(|| self.text.text.as_ref().cmp(text))
    }
}

/// From this length a list is in blocks; below [`SHORT_AGAIN`] it is one slice again. Most
/// tokens (a quoted value, a rare word) are in a few texts: a slice of exactly their postings
/// costs less than any tree's node, and copying it on an edit costs less than a tree's
/// bookkeeping.
const LONG_LIST: usize = 64;
const SHORT_AGAIN: usize = 32;

/// Postings per block of a long list; a block is split in two when it reaches twice this.
const BLOCK: usize = 64;

/// A token's postings, ordered by (size, text).
#[derive(Debug, Clone)]
pub(crate) enum PostingList {
    /// Copied whole on an edit.
    Short(Arc<[NearPosting]>),
    /// An edit copies one block and the path to it.
    Long(Blocks),
}

/// A long list: slices of `BLOCK` postings when built, then of 1 to `2 * BLOCK - 1` as edits
/// add and remove texts, none empty, in a persistent vector.
/// An edit replaces one block, which the vector does in place; only a split or an emptied block
/// (once in `BLOCK` edits at most) inserts or removes one, which costs the vector more.
/// The search reads a block as one slice.
#[derive(Debug, Clone)]
pub(crate) struct Blocks {
    blocks: imbl::Vector<Arc<[NearPosting]>>,
    len: usize,
}

impl Blocks {
    fn from_sorted(postings: &[NearPosting]) -> Blocks {
        Blocks { blocks: postings.chunks(BLOCK).map(Arc::from).collect(), len: postings.len() }
    }

    /// The first block `before` is false of (`before` must hold of the blocks up to a point and
    /// of none after it).
    fn first_block(&self, before: impl Fn(&[NearPosting]) -> bool) -> usize {
        let (mut low, mut high) = (0, self.blocks.len());
        let mut focus = self.blocks.focus();
        while low < high {
            let middle = low + (high - low) / 2;
            match focus.get(middle) {
                Some(block) if before(block) => low = middle + 1,
                _ => high = middle,
            }
        }
        low
    }

    /// The block that holds (size, text), or where it belongs.
    fn block_of(&self, size: u32, text: &str) -> usize {
        let after = self.first_block(|block| block.first().is_none_or(|first| first.order(size, text).is_le()));
        after.saturating_sub(1)
    }
}

impl PostingList {
    fn from_sorted(postings: Vec<NearPosting>) -> PostingList {
        if postings.len() >= LONG_LIST {
            PostingList::Long(Blocks::from_sorted(&postings))
        } else {
            PostingList::Short(postings.into())
        }
    }

    /// How many texts hold the token.
    pub(crate) fn len(&self) -> usize {
        match self {
            PostingList::Short(list) => list.len(),
            PostingList::Long(long) => long.len,
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &NearPosting> {
        let (short, long) = match self {
            PostingList::Short(list) => (Some(list.iter()), None),
            PostingList::Long(long) => (None, Some(long.blocks.iter().flat_map(|block| block.iter()))),
        };
        short.into_iter().flatten().chain(long.into_iter().flatten())
    }

    /// The postings of the texts of `size`, in order, a slice at a time (one per block).
    fn of_size(&self, size: u32) -> impl Iterator<Item = &[NearPosting]> {
        let (short, long) = match self {
            PostingList::Short(list) => (Some(postings_of_size(list, size)), None),
            PostingList::Long(long) => {
                let first = long.first_block(|block| block.last().is_some_and(|last| last.size < size));
                // The texts of the size go on into the next block while a block ends with one.
                let mut more = true;
                let blocks = (first..long.blocks.len()).filter_map(|index| long.blocks.get(index));
                (
                    None,
                    Some(blocks.map_while(move |block| {
                        let go_on = std::mem::replace(&mut more, block.last().is_some_and(|last| last.size == size));
                        go_on.then(|| postings_of_size(block, size))
                    })),
                )
            }
        };
        short.into_iter().chain(long.into_iter().flatten())
    }

    fn insert(&mut self, posting: NearPosting) {
        let (size, text) = (posting.size, posting.text.clone());
        match self {
            PostingList::Short(list) => {
                let Err(at) = position(list, size, &text.text) else { return };
                let postings = inserted(list, at, posting);
                *self = PostingList::from_sorted(postings);
            }
            PostingList::Long(long) => {
                let index = long.block_of(size, &text.text);
                let Some(block) = long.blocks.get(index) else { return };
                let Err(at) = position(block, size, &text.text) else { return };
                let postings = inserted(block, at, posting);
                if postings.len() >= 2 * BLOCK {
                    let (left, right) = postings.split_at(BLOCK);
                    long.blocks.set(index, Arc::from(left));
                    long.blocks.insert(index + 1, Arc::from(right));
                } else {
                    long.blocks.set(index, postings.into());
                }
                long.len += 1;
            }
        }
    }

    /// Takes a text out; returns whether the list is empty.
    fn remove(&mut self, size: u32, text: &str) -> bool {
        match self {
            PostingList::Short(list) => {
                if let Ok(at) = position(list, size, text) {
                    *list = removed(list, at).into();
                }
            }
            PostingList::Long(long) => {
                let index = long.block_of(size, text);
                let Some(block) = long.blocks.get(index) else { return false };
                let Ok(at) = position(block, size, text) else { return false };
                let postings = removed(block, at);
                if postings.is_empty() {
                    long.blocks.remove(index);
                } else {
                    long.blocks.set(index, postings.into());
                }
                long.len -= 1;
                if long.len < SHORT_AGAIN {
                    *self = PostingList::Short(self.iter().cloned().collect());
                }
            }
        }
        self.len() == 0
    }
}

/// The postings of the texts of `size` in an ordered slice.
fn postings_of_size(postings: &[NearPosting], size: u32) -> &[NearPosting] {
    let start = postings.partition_point(|posting| posting.size < size);
    let end = start + postings[start..].partition_point(|posting| posting.size == size);
    &postings[start..end]
}

/// Where (size, text) is in an ordered slice, or where it belongs.
fn position(postings: &[NearPosting], size: u32, text: &str) -> Result<usize, usize> {
    postings.binary_search_by(|posting| posting.order(size, text))
}

fn inserted(postings: &[NearPosting], at: usize, posting: NearPosting) -> Vec<NearPosting> {
    let mut copy = Vec::with_capacity(postings.len() + 1);
    copy.extend_from_slice(&postings[..at]);
    copy.push(posting);
    copy.extend_from_slice(&postings[at..]);
    copy
}

fn removed(postings: &[NearPosting], at: usize) -> Vec<NearPosting> {
    let mut copy = Vec::with_capacity(postings.len().saturating_sub(1));
    copy.extend_from_slice(&postings[..at]);
    copy.extend_from_slice(&postings[at + 1..]);
    copy
}

/// Token → the texts that hold it, ordered by (size, text). The near-duplicate search reads the
/// texts of one size as a range; completion reads all of them.
pub(crate) type NearPostings = HashMap<Arc<str>, PostingList>;

/// A fixed hasher: signatures and pattern hashes only filter, but which texts a capped probe
/// reaches must not depend on the process.
fn fixed_hash(value: &str) -> u64 {
    foldhash::quality::FixedState::with_seed(0x5AFF_2013).hash_one(value)
}

fn signature(tokens: &[String]) -> u64 {
    tokens.iter().fold(0, |signature, token| signature | 1 << (fixed_hash(token) % 64))
}

fn pattern_hash(pattern: &str) -> u16 {
    (fixed_hash(pattern) >> 48) as u16
}

/// The negation words of a wording, as a set of bits (see [`tokens::NEGATIONS`]).
fn negation_bits(wording: &Wording) -> u16 {
    wording
        .negations()
        .iter()
        .fold(0, |bits, word| bits | tokens::NEGATIONS.iter().position(|n| n == word).map_or(0, |index| 1 << index))
}

fn values_hash(wording: &Wording) -> u64 {
    foldhash::quality::FixedState::with_seed(0x5AFF_2013).hash_one(&wording.values)
}

fn posting(text: &Arc<NearText>) -> NearPosting {
    NearPosting {
        signature: signature(&text.tokens),
        pattern_hash: pattern_hash(&text.pattern),
        negations: text.negations,
        size: size_key(&text.tokens),
        text: text.clone(),
    }
}

fn size_key(tokens: &[String]) -> u32 {
    u32::try_from(tokens.len()).unwrap_or(u32::MAX)
}

/// Files a new text under each of its tokens; a token new to the index joins `tokens`.
pub(crate) fn add(postings: &mut NearPostings, tokens: &mut imbl::OrdSet<Arc<str>>, text: Arc<NearText>) {
    let posting = posting(&text);
    for token in text.tokens.iter() {
        match postings.get_mut(token.as_str()) {
            Some(list) => list.insert(posting.clone()),
            None => {
                let token: Arc<str> = Arc::from(token.as_str());
                postings.insert(token.clone(), PostingList::Short(Arc::from([posting.clone()])));
                tokens.insert(token);
            }
        }
    }
}

/// Files many new texts at once (a project's load): each list is sorted once.
pub(crate) fn add_all(
    postings: &mut NearPostings,
    tokens: &mut imbl::OrdSet<Arc<str>>,
    texts: impl IntoIterator<Item = Arc<NearText>>,
) {
    let in_order = |a: &NearPosting, b: &NearPosting| a.order(b.size, &b.text.text);
    // Put in list order once, the postings fill every token's new list in order: sorting each
    // list instead compared texts over and over, the most of a load's near-duplicate work.
    let mut new_postings: Vec<NearPosting> = texts.into_iter().map(|text| posting(&text)).collect();
    new_postings.sort_by(in_order);
    let mut lists: std::collections::HashMap<&str, Vec<NearPosting>, crate::host::Hasher> = Default::default();
    for posting in &new_postings {
        for token in posting.text.tokens.iter() {
            lists.entry(token.as_str()).or_default().push(posting.clone());
        }
    }
    for (token, new) in lists {
        let list: Vec<NearPosting> = match postings.remove(token) {
            Some(old) => {
                let mut list: Vec<NearPosting> = old.iter().cloned().chain(new).collect();
                list.sort_by(in_order);
                list
            }
            None => {
                tokens.insert(Arc::from(token));
                new
            }
        };
        debug_assert!(list.is_sorted_by(|a, b| in_order(a, b).is_le()));
        let key = tokens.get(token).cloned().unwrap_or_else(|| Arc::from(token));
        postings.insert(key, PostingList::from_sorted(list));
    }
}

/// Takes a text out of the postings of its tokens; a token no text holds any more leaves
/// `tokens`.
pub(crate) fn remove(
    postings: &mut NearPostings,
    tokens: &mut imbl::OrdSet<Arc<str>>,
    text: &str,
    text_tokens: &[String],
) {
    let size = size_key(text_tokens);
    for token in text_tokens {
        if postings.get_mut(token.as_str()).is_some_and(|list| list.remove(size, text)) {
            postings.remove(token.as_str());
            tokens.remove(token.as_str());
        }
    }
}

/// Every list as (token, [(size, text)] in list order), sorted: for comparing two indexes.
pub(crate) fn listing(postings: &NearPostings) -> Vec<(String, Vec<(u32, String)>)> {
    let mut lists: Vec<(String, Vec<(u32, String)>)> = postings
        .iter()
        .map(|(token, list)| {
            (token.to_string(), list.iter().map(|posting| (posting.size, posting.text.text.to_string())).collect())
        })
        .collect();
    lists.sort();
    lists
}

/// The lists [`listing`] must show for these texts' tokens.
pub(crate) fn expected_listing<'a>(
    texts: impl Iterator<Item = (&'a str, &'a [String])>,
) -> Vec<(String, Vec<(u32, String)>)> {
    let mut lists: std::collections::BTreeMap<String, Vec<(u32, String)>> = Default::default();
    for (text, tokens) in texts {
        for token in tokens {
            lists.entry(token.clone()).or_default().push((size_key(tokens), text.to_string()));
        }
    }
    lists
        .into_iter()
        .map(|(token, mut texts)| {
            texts.sort();
            (token, texts)
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

/// The least overlap at which sets of sizes `a` and `b` are candidates (see
/// [`tokens::is_candidate`]), if any.
fn least_overlap(a: usize, b: usize) -> Option<usize> {
    let most = a.min(b);
    if most == 0 || !tokens::is_candidate(most, a, b) {
        return None;
    }
    // Whether a fixed pair of sizes is a candidate only turns true as the overlap grows.
    let (mut low, mut high) = (1, most);
    while low < high {
        let middle = (low + high) / 2;
        if tokens::is_candidate(middle, a, b) { high = middle } else { low = middle + 1 }
    }
    Some(low)
}

/// Finds the near-duplicates of `text`.
pub(crate) fn search(postings: &NearPostings, text: &str) -> Search {
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
    // Rarest first; a token no text holds is the rarest of all, and has nothing to read.
    let mut by_rarity: Vec<(usize, &String, Option<&PostingList>)> = query
        .iter()
        .map(|token| {
            let list = postings.get(token.as_str());
            (list.map_or(0, PostingList::len), token, list)
        })
        .collect();
    by_rarity.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let key = tokens::pattern_key(text);
    let pattern_hash = pattern_hash(&key);
    let wording = Wording::of(text);
    let negations = negation_bits(&wording);
    let values = values_hash(&wording);
    let value_free = drift::is_value_free(text);
    let query_signature = signature(&query);
    // How many of the query's tokens set each signature bit. A text shares at most the query's
    // tokens behind the bits both signatures set; it can reach `overlap` only if the tokens
    // behind the bits it lacks are at most `n - overlap`. Counting those stops as soon as they
    // are too many: after a bit or two for most texts, with no population count.
    let mut per_bit = [0u8; 64];
    for token in &query {
        let bit = (fixed_hash(token) % 64) as usize;
        per_bit[bit] = per_bit[bit].saturating_add(1);
    }
    let can_share = |other: u64, overlap: usize| -> bool {
        let mut lacking = query_signature & !other;
        let mut room = n - overlap;
        while lacking != 0 {
            let tokens = usize::from(per_bit[lacking.trailing_zeros() as usize]);
            if tokens > room {
                return false;
            }
            room -= tokens;
            lacking &= lacking - 1;
        }
        true
    };
    let mut seen: std::collections::HashSet<*const NearText, foldhash::fast::FixedState> = Default::default();
    let (mut scanned, mut verified) = (0usize, 0usize);
    let deepest = sizes.iter().map(|&(_, _, probed)| probed).max().unwrap_or(0);
    for (rank, &(_, _, list)) in by_rarity.iter().enumerate().take(deepest) {
        let Some(list) = list else { continue };
        for &(size, overlap, probed) in &sizes {
            if rank >= probed {
                continue;
            }
            for slice in list.of_size(size_key_of(size)) {
                // The scan's bound, taken per slice so the loop over postings checks nothing else.
                let within = &slice[..slice.len().min(MAX_SCANNED - scanned)];
                scanned += within.len();
                for posting in within {
                    if posting.negations != negations || !can_share(posting.signature, overlap) {
                        continue;
                    }
                    let other = &posting.text;
                    // One pattern: other values make another use of the step; the same text is
                    // the query itself.
                    if posting.pattern_hash == pattern_hash
                        && *other.pattern == *key
                        && (other.values != values || *other.text == *text)
                    {
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
                    let shared = tokens::shared(&query, &other.tokens);
                    if tokens::is_candidate(shared, n, other.tokens.len())
                        && !(value_free
                            && other.value_free
                            && !drift::value_free_words_may_drift(&query, &other.tokens))
                        && drift::wordings_drift(&wording, &Wording::of(&other.text))
                    {
                        search.found.push((other.text.clone(), tokens::jaccard(&query, &other.tokens)));
                    }
                }
                if within.len() < slice.len() {
                    search.complete = false;
                    return search;
                }
            }
        }
    }
    search
}

fn size_key_of(size: usize) -> u32 {
    u32::try_from(size).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near_text(text: &str) -> Arc<NearText> {
        Arc::new(NearText::new(
            Arc::from(text),
            tokens::tokens(text).into(),
            Arc::from(tokens::pattern_key(text).as_str()),
        ))
    }

    fn texts_of(list: &PostingList) -> Vec<(u32, String)> {
        list.iter().map(|posting| (posting.size, posting.text().to_string())).collect()
    }

    /// A list grows from a slice into a persistent vector and shrinks back, stays in (size,
    /// text) order through both, and hands out the texts of one size as a range.
    #[test]
    fn a_list_keeps_its_order_through_both_forms() {
        // Texts of 1 to 5 words, all holding "w", added in a scrambled order: enough for blocks
        // to be split and emptied.
        let texts: Vec<String> =
            (0..600).map(|i| (i * 37) % 600).map(|i| format!("w{}", " x".repeat(i % 5)) + &format!(" t{i}")).collect();
        let mut list = PostingList::Short(Arc::from([]));
        let mut expected: Vec<(u32, String)> = Vec::new();
        for (count, text) in texts.iter().enumerate() {
            let text = near_text(text);
            list.insert(posting(&text));
            expected.push((size_key(&text.tokens), text.text.to_string()));
            expected.sort();
            assert_eq!(texts_of(&list), expected);
            assert_eq!(matches!(list, PostingList::Long(_)), count + 1 >= LONG_LIST, "{} postings", count + 1);
        }
        for size in 0..8 {
            let visited: Vec<(u32, String)> =
                list.of_size(size).flatten().map(|posting| (posting.size, posting.text().to_string())).collect();
            let wanted: Vec<(u32, String)> = expected.iter().filter(|(s, _)| *s == size).cloned().collect();
            assert_eq!(visited, wanted, "size {size}");
        }
        for text in &texts {
            let text = near_text(text);
            let emptied = list.remove(size_key(&text.tokens), &text.text);
            expected.retain(|(_, other)| **other != *text.text);
            assert_eq!(texts_of(&list), expected);
            assert_eq!(emptied, expected.is_empty());
            if expected.len() < SHORT_AGAIN {
                assert!(matches!(list, PostingList::Short(_)), "{} postings", expected.len());
            }
        }
    }

    #[test]
    fn least_overlap_is_where_a_pair_becomes_a_candidate() {
        for a in 1..40 {
            for b in 1..80 {
                let brute = (1..=a.min(b)).find(|&o| tokens::is_candidate(o, a, b));
                assert_eq!(least_overlap(a, b), brute, "{a} {b}");
            }
        }
    }
}
