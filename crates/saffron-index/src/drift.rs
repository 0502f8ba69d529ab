//! Whether two similar step texts are the same step written two ways (wording drift) or two
//! different steps.
//!
//! Token-Jaccard finds candidates (see [`crate::tokens`]); the words decide. Values (quoted
//! strings, placeholders, numbers, ordinals) are set aside first:
//!
//! - texts that differ only in punctuation, quotes or letter case are drift;
//! - the same wording with other values is not (`I search for "tea"` / `... "mugs"`), nor is
//!   another number of values;
//! - negation is judged on the wording: `not` inside a quoted value negates nothing;
//! - otherwise the pair is drift only when every word one side has and the other lacks is a
//!   function word ([`FUNCTION_WORDS`]), the same word with another ending (`user`/`users`,
//!   `complete`/`completed`), a one-letter typo in a word of 4 letters or more, or half of a
//!   join (`log in`/`login`). Another entity (`file`/`folder`), another verb or state
//!   (`enables`/`disables`) and an added qualifier (`asynchronously`) are different steps.

use crate::tokens::{self, Piece};

/// Words that carry no meaning of their own in a step: articles, possessives, the prepositions
/// of place and direction, and the forms of be, have and do (English); `s` is the possessive
/// `'s`. Also the narrative adverbs `also`, `still` and `again`, which tell the story around a
/// step and not what it does (`the store also operates on a channel named "Mobile"`), and
/// `should`, the auxiliary of Then steps (`I should see` / `I see`). That one costs a few false
/// pairs where a Given states what a Then checks (`it is enabled` / `it should be enabled`):
/// the text alone does not say which keyword it is written under.
pub const FUNCTION_WORDS: &[&str] = &[
    "a", "again", "also", "am", "an", "are", "at", "be", "been", "being", "did", "do", "does", "doing", "done", "for",
    "had", "has", "have", "having", "her", "his", "in", "into", "is", "its", "my", "of", "on", "our", "s", "should",
    "still", "the", "their", "to", "was", "were", "your",
];

/// A text's words outside its values, lowercased, in order, and its values as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wording {
    pub words: Vec<String>,
    /// Each value with its kind kept and its quote style dropped: `"tea"` and `'tea'` are the
    /// same value, `<tea>` another.
    pub values: Vec<String>,
    /// How many words come before each value: `a "Mug" product` and `a product "Mug"` are two
    /// wordings.
    pub slots: Vec<usize>,
}

impl Wording {
    pub fn of(text: &str) -> Wording {
        let mut words = Vec::new();
        let mut values = Vec::new();
        let mut slots = Vec::new();
        for (_, piece) in tokens::pieces(text) {
            match piece {
                Piece::Word(word) => words.push(word.to_lowercase()),
                Piece::Value(value) => {
                    values.push(normalised_value(value));
                    slots.push(words.len());
                }
                Piece::Other(_) => {}
            }
        }
        Wording { words, values, slots }
    }

    /// The negation words of the wording (`not`, `never`, `n't`...), sorted and distinct.
    pub fn negations(&self) -> Vec<&str> {
        let mut found: Vec<&str> =
            self.words.iter().map(String::as_str).filter(|word| tokens::NEGATIONS.contains(word)).collect();
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// A value's kind: a quoted string, a placeholder or a number. A count where a name was is
/// another argument, not another value.
fn kind(value: &str) -> char {
    match value.as_bytes().first() {
        Some(b'"') => '"',
        Some(b'<') => '<',
        _ => '0',
    }
}

fn normalised_value(value: &str) -> String {
    match value.strip_prefix(['"', '\'']) {
        Some(quoted) => format!("\"{}", &quoted[..quoted.len().saturating_sub(1)]),
        None => value.to_string(),
    }
}

/// Whether `a` and `b`, two different texts, are one step written two ways.
pub fn is_drift(a: &str, b: &str) -> bool {
    a != b && wordings_drift(&Wording::of(a), &Wording::of(b))
}

/// [`is_drift`] on wordings already cut.
pub fn wordings_drift(a: &Wording, b: &Wording) -> bool {
    if a.words == b.words && a.slots == b.slots {
        // Then the texts differ in punctuation, quotes, case, or values.
        return a.values == b.values;
    }
    let same_kinds = a.values.len() == b.values.len()
        && a.values.iter().zip(&b.values).all(|(value, other)| kind(value) == kind(other));
    if !same_kinds || a.negations() != b.negations() {
        return false;
    }
    let mut only_a = missing_from(&a.words, &b.words);
    let mut only_b = missing_from(&b.words, &a.words);
    explain_joins(&mut only_a, &mut only_b, &b.words);
    explain_joins(&mut only_b, &mut only_a, &a.words);
    // Another ending next to another count is grammar, not drift: `shows 1 order` / `shows 2
    // orders` are one step used with two counts, and neither wording is the one to change.
    let counts_differ = a.values.iter().zip(&b.values).any(|(value, other)| kind(value) == '0' && value != other);
    // A word of one side and a word of the other explain each other when they are one word.
    let mut index = 0;
    while index < only_a.len() {
        let word = only_a[index];
        match only_b.iter().position(|other| same_word(word, other)) {
            Some(other) if counts_differ && inflection_stem(word) == inflection_stem(only_b[other]) => return false,
            Some(other) => {
                only_a.swap_remove(index);
                only_b.swap_remove(other);
            }
            None => index += 1,
        }
    }
    // The order is looked at last: most pairs are told apart by their words, more cheaply.
    only_a.iter().chain(&only_b).all(|word| FUNCTION_WORDS.contains(word)) && same_order(a, b)
}

/// A test that rules most pairs out before their words are cut, for texts with no values
/// (no quote, `<` or digit: their sorted distinct tokens are their words): when it fails,
/// [`wordings_drift`] would too. Every word one text lacks must be a function word or have a
/// relative in the other text: the same word or a typo of it, two of its words it joins, or a
/// join of it with another of its own words.
pub(crate) fn value_free_words_may_drift(a: &[String], b: &[String]) -> bool {
    lacking_have_relatives(a, b) && lacking_have_relatives(b, a)
}

fn lacking_have_relatives(words: &[String], others: &[String]) -> bool {
    let holds = |list: &[String], word: &str| list.binary_search_by(|token| token.as_str().cmp(word)).is_ok();
    words.iter().filter(|word| !holds(others, word)).all(|word| {
        FUNCTION_WORDS.contains(&word.as_str())
            || others.iter().any(|other| {
                same_word(word, other)
                    || word.strip_prefix(other.as_str()).is_some_and(|rest| holds(others, rest))
                    || other.strip_prefix(word.as_str()).is_some_and(|rest| holds(words, rest))
                    || other.strip_suffix(word.as_str()).is_some_and(|rest| holds(words, rest))
            })
    })
}

/// Whether a text has no values: no quote, placeholder or digit.
pub(crate) fn is_value_free(text: &str) -> bool {
    !text.bytes().any(|byte| matches!(byte, b'"' | b'\'' | b'<') || byte.is_ascii_digit())
}

/// Whether the meaningful words both texts have come in the same order: `assign a product to
/// the taxon` and `assign a taxon to the product` are two steps.
fn same_order(a: &Wording, b: &Wording) -> bool {
    shared_in_order(&a.words, &b.words) == shared_in_order(&b.words, &a.words)
}

/// The meaningful words of `words` that `others` has too, each once, in `words`' order.
fn shared_in_order<'a>(words: &'a [String], others: &[String]) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for word in words {
        let word = word.as_str();
        if !FUNCTION_WORDS.contains(&word) && !seen.contains(&word) && others.iter().any(|other| other == word) {
            seen.push(word);
        }
    }
    seen
}

/// The words of `words` that `others` lacks, counting repeats: `product option has the "S"
/// option` and `product option has the "S" otion` differ by one `option`.
fn missing_from<'a>(words: &'a [String], others: &[String]) -> Vec<&'a str> {
    let mut unmatched: Vec<&str> = others.iter().map(String::as_str).collect();
    let mut missing = Vec::new();
    for word in words {
        match unmatched.iter().position(|other| other == word) {
            Some(at) => {
                unmatched.swap_remove(at);
            }
            None => missing.push(word.as_str()),
        }
    }
    missing
}

/// Takes out of `joined` each word that two adjacent words of `other_words` spell when written
/// together (`login`, `log in`), and those two halves out of `halves`.
fn explain_joins(joined: &mut Vec<&str>, halves: &mut Vec<&str>, other_words: &[String]) {
    joined.retain(|word| {
        let pair = other_words.windows(2).find(|pair| {
            word.len() == pair[0].len() + pair[1].len() && word.starts_with(&*pair[0]) && word.ends_with(&*pair[1])
        });
        match pair {
            Some(pair) => {
                halves.retain(|half| *half != pair[0] && *half != pair[1]);
                false
            }
            None => true,
        }
    });
}

/// The same word with another ending, or with a one-letter typo (a letter added, dropped,
/// replaced, or two swapped) in a word of 4 letters or more. Words with digits are values in
/// all but name (`ipv4`/`ipv6`): never a typo of each other.
pub fn same_word(a: &str, b: &str) -> bool {
    if inflection_stem(a) == inflection_stem(b) {
        return true;
    }
    let letters = |word: &str| word.chars().all(char::is_alphabetic) && word.chars().count() >= 4;
    a.chars().count().abs_diff(b.chars().count()) <= 1 && letters(a) && letters(b) && strsim::osa_distance(a, b) == 1
}

/// A word without its English inflection: plural `s`/`es`/`ies`, `ed`, `ing`, a final `e` and a
/// doubled last consonant, so that `users`/`user`, `completed`/`complete`/`completing` and
/// `shipped`/`shipping`/`ship` meet. Only inflections: derived words (`production`) stay apart.
/// A final `y` is kept apart as the flag, so that `categories` and `category` meet without a
/// new string.
fn inflection_stem(word: &str) -> (&str, bool) {
    let length = word.chars().count();
    if let Some(base) = word.strip_suffix("ies").filter(|_| length > 4) {
        return (base, true);
    }
    let mut stem = if let Some(base) = word.strip_suffix("ing").filter(|_| length > 5) {
        base
    } else if let Some(base) = word.strip_suffix("ed").filter(|_| length > 4) {
        base
    } else if let Some(base) = word.strip_suffix("es").filter(|_| length > 4) {
        base
    } else if let Some(base) = word.strip_suffix('s').filter(|base| length > 3 && !base.ends_with('s')) {
        base
    } else {
        word
    };
    if stem.chars().count() > 3
        && let Some(base) = stem.strip_suffix('e')
    {
        stem = base;
    }
    let mut last_two = stem.chars().rev();
    if let (Some(last), Some(before)) = (last_two.next(), last_two.next())
        && last == before
        && !"aeiou".contains(last)
        && stem.chars().count() > 3
    {
        stem = &stem[..stem.len() - last.len_utf8()];
    }
    match stem.strip_suffix('y') {
        Some(base) => (base, true),
        None => (stem, false),
    }
}

/// `existing` with the values of `text` in place of its own, in order: the quick fix keeps what
/// the step was written with. Texts with different numbers of values get `existing` as it is.
pub fn reworded(text: &str, existing: &str) -> String {
    let values: Vec<&str> = tokens::pieces(text).into_iter().filter_map(|(_, piece)| as_value(piece)).collect();
    let slots: Vec<(usize, &str)> = tokens::pieces(existing)
        .into_iter()
        .filter_map(|(at, piece)| as_value(piece).map(|value| (at, value)))
        .collect();
    if values.len() != slots.len() {
        return existing.to_string();
    }
    let mut out = String::with_capacity(existing.len());
    let mut copied = 0;
    for ((at, slot), value) in slots.into_iter().zip(values) {
        out.push_str(&existing[copied..at]);
        out.push_str(value);
        copied = at + slot.len();
    }
    out.push_str(&existing[copied..]);
    out
}

fn as_value(piece: Piece<'_>) -> Option<&str> {
    match piece {
        Piece::Value(value) => Some(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_punctuation_and_quotes_are_drift_other_values_are_not() {
        assert!(is_drift("I see the Orders page", "I see the orders page."));
        assert!(is_drift("I search for \"tea\"", "I search for 'tea'"));
        assert!(!is_drift("I search for \"tea\"", "I search for \"mugs\""));
        assert!(!is_drift("I pick the 1st product", "I pick the 2nd product"));
        assert!(!is_drift("I open \"Orders\"", "I open <page>"));
        assert!(!is_drift("I add 2 products", "I add products"));
        assert!(!is_drift("I limit its usage to -1 times", "I limit its usage to 1 times"));
        assert!(!is_drift("the orders table shows 2 orders", "the orders table shows 1 order"));
        assert!(is_drift("there should be 0 coupon", "there should be 0 coupons"));
    }

    #[test]
    fn differing_words_decide() {
        assert!(is_drift("I add the product to the cart", "I add a product into cart"));
        assert!(is_drift("the store also has a product \"Mug\"", "the store has a \"Mug\" product"));
        assert!(is_drift("I should see the orders page", "I see the orders page"));
        assert!(!is_drift("I assign a product to the taxon", "I assign a taxon to the product"));
        assert!(!is_drift("the store has 3 products", "the store has a product \"Mug\""));
        assert!(is_drift("the user is enabled", "the users are enabled"));
        assert!(is_drift("I browse the categories", "I browse the category"));
        assert!(is_drift("I ship the order", "I shipped the order"));
        assert!(is_drift("I complete the order", "I completed the order"));
        assert!(is_drift("I log in as \"ada\"", "I login as \"ada\""));
        assert!(is_drift("I chose the shipping method", "I chsoe the shipping method"));
        assert!(is_drift("the customer's order is shipped", "the customer order is shipped"));
        assert!(is_drift("the option has the \"S\" option value", "the option has the \"S\" otion value"));
        assert!(!is_drift("I upload a file", "I upload a folder"));
        assert!(!is_drift("the channel enables gift wrap", "the channel disables gift wrap"));
        assert!(!is_drift("I sort ascending", "I sort descending"));
        assert!(!is_drift("I delete the file", "I delete the file asynchronously"));
        assert!(!is_drift("I use ipv4", "I use ipv6"));
        assert!(!is_drift("I see the car", "I see the cart"));
    }

    #[test]
    fn negation_is_judged_outside_values() {
        assert!(!is_drift("gift wrap is selected", "gift wrap is not selected"));
        assert!(is_drift("I sign in with \"not a password\"", "I sign in with \"not a password\"."));
        assert!(!is_drift("I see \"not available\"", "I do not see \"available\""));
        assert_eq!(Wording::of("I type \"not now\"").negations(), Vec::<&str>::new());
        assert_eq!(Wording::of("I don't see \"x\"").negations(), ["t"]);
    }

    #[test]
    fn apostrophes_inside_words_are_not_quotes() {
        let wording = Wording::of("the order's total is 'ten' for the customer's cart");
        assert_eq!(wording.values, ["\"ten"]);
        assert_eq!(wording.words, ["the", "order", "s", "total", "is", "for", "the", "customer", "s", "cart"]);
    }

    #[test]
    fn the_quick_fix_keeps_the_values() {
        assert_eq!(reworded("I add \"tea\" into cart", "I add \"mugs\" to the cart"), "I add \"tea\" to the cart");
        assert_eq!(reworded("I add 3 items", "I add the items"), "I add the items");
    }
}
