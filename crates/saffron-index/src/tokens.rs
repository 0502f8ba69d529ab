//! How step texts are compared for near-duplicates.
//!
//! A text's tokens are its maximal runs of letters and digits (any script), lowercased, plus
//! each `<placeholder>` as one token; quotes, punctuation and spaces only separate. Two texts
//! are near-duplicate candidates when the Jaccard index of their token sets is at least
//! [`NEAR_DUPLICATE_THRESHOLD`], or when they are short and one token apart (see
//! [`is_candidate`]); [`crate::drift`] then decides on their words whether they are one step
//! written two ways. Texts are cut by [`saffron_syntax::step_text`], the one step-text lexer.

use saffron_syntax::step_text::{StepTokenKind, lex};

/// Token-Jaccard at or above which two different texts are near-duplicates. Calibrated in the
/// design log: it catches typo-level drift and leaves synonyms to behaviour-proven duplicates.
pub const NEAR_DUPLICATE_THRESHOLD: f64 = 0.7;

/// The distinct tokens of a text, sorted.
pub fn tokens(text: &str) -> Vec<String> {
    let mut tokens = tokens_in_order(text);
    tokens.sort();
    tokens.dedup();
    tokens
}

/// The tokens of a text in the order they appear (repeats kept): the letter and digit runs of
/// its [`lex`] tokens, a quoted value's included, and each placeholder whole.
pub fn tokens_in_order(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    push_tokens(text, &mut tokens);
    tokens
}

fn push_tokens(text: &str, tokens: &mut Vec<String>) {
    for token in lex(text) {
        match token.kind {
            StepTokenKind::Placeholder => tokens.push(token.text.to_lowercase()),
            // The words of a quoted value count: `"Tea"` and `tea` share a token.
            StepTokenKind::Quoted(_) => push_tokens(token.inner(), tokens),
            _ => tokens.extend(
                token.text.split(|c: char| !c.is_alphanumeric()).filter(|run| !run.is_empty()).map(str::to_lowercase),
            ),
        }
    }
}

/// One piece of a step text, as the drift check reads it: a word, a value, or a character
/// between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A run of letters and digits that starts with a letter, as written.
    Word(&'a str),
    /// A quoted string (with its quotes), a `<placeholder>`, or a number or ordinal (a run of
    /// letters and digits that starts with a digit: `3`, `12.50`, `1st`).
    Value(&'a str),
    /// Anything else: spaces, punctuation, an unclosed quote.
    Other(char),
}

/// A text cut into [`Piece`]s, with each piece's byte offset: the [`lex`] tokens, with quoted
/// values, placeholders and numbers taken together as values.
pub fn pieces(text: &str) -> Vec<(usize, Piece<'_>)> {
    lex(text)
        .map(|token| {
            let piece = match token.kind {
                StepTokenKind::Word => Piece::Word(token.text),
                StepTokenKind::Other => Piece::Other(token.text.chars().next().unwrap_or_default()),
                _ => Piece::Value(token.text),
            };
            (token.start, piece)
        })
        .collect()
}

/// The text with its values generalised: quoted strings become `""`, numbers and ordinals `0`,
/// placeholders `<>`, case folded. Texts with equal keys are one step pattern used with
/// different values (`I search for "tea"` / `I search for "mugs"`), not wording drift.
pub fn pattern_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    for token in lex(text) {
        match token.kind {
            StepTokenKind::Quoted(_) => key.push_str("\"\""),
            StepTokenKind::Placeholder => key.push_str("<>"),
            StepTokenKind::Number => key.push('0'),
            StepTokenKind::Word | StepTokenKind::Other => key.extend(token.text.chars().flat_map(char::to_lowercase)),
        }
    }
    key
}

/// Where the values of a step text are, as [`lex`] cuts it: a quoted string (inside its
/// quotes), a number or a `<placeholder>` (brackets included): what [`pattern_key`]
/// generalises, in order.
pub fn value_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    lex(text)
        .filter_map(|token| match token.kind {
            StepTokenKind::Quoted(_) => Some(token.start + 1..token.end() - 1),
            StepTokenKind::Placeholder | StepTokenKind::Number => Some(token.start..token.end()),
            StepTokenKind::Word | StepTokenKind::Other => None,
        })
        .collect()
}

/// Words that turn a step into its opposite (English; `n't` tokenises to `t`).
pub const NEGATIONS: &[&str] = &["cannot", "never", "no", "nobody", "none", "not", "nothing", "t", "without"];

/// The negation words among sorted tokens. Two texts whose negations differ are never
/// near-duplicates, however similar the rest.
pub fn negations(tokens: &[String]) -> Vec<&str> {
    tokens.iter().map(String::as_str).filter(|token| NEGATIONS.contains(token)).collect()
}

/// How many tokens two sorted, deduplicated token lists share.
pub fn shared(a: &[String], b: &[String]) -> usize {
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    shared
}

/// Jaccard index of two sorted, deduplicated token lists.
pub fn jaccard(a: &[String], b: &[String]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let shared = shared(a, b);
    shared as f64 / (a.len() + b.len() - shared) as f64
}

/// Whether two texts of `a` and `b` tokens sharing `shared` are near-duplicate candidates, for
/// [`crate::drift`] to decide: a token-Jaccard of at least [`NEAR_DUPLICATE_THRESHOLD`], or, for
/// short texts that Jaccard cannot judge (one word of four replaced is 0.6), sizes at most one
/// apart that share all tokens of the smaller but one (`I log in` / `I login`).
pub fn is_candidate(shared: usize, a: usize, b: usize) -> bool {
    let smaller = a.min(b);
    let jaccard = shared as f64 / (a + b - shared).max(1) as f64;
    smaller > 0
        && (jaccard >= NEAR_DUPLICATE_THRESHOLD || (smaller >= 2 && a.abs_diff(b) <= 1 && shared + 1 >= smaller))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_fold_case_split_punctuation_and_keep_placeholders() {
        assert_eq!(tokens("I add \"Tea\" to the <Cart>, twice!"), ["<cart>", "add", "i", "tea", "the", "to", "twice"]);
        assert_eq!(tokens("Le café coûte 3€"), ["3", "café", "coûte", "le"]);
        assert_eq!(tokens("a < b and c>d"), ["a", "and", "b", "c", "d"]);
    }

    #[test]
    fn pattern_key_generalises_values() {
        assert_eq!(pattern_key("I search for \"tea\" 3 times"), pattern_key("I Search for \"mugs\" 12 times"));
        assert_eq!(pattern_key("I open <page>"), pattern_key("I open <other>"));
        assert_ne!(pattern_key("I search for \"tea\""), pattern_key("I look for \"tea\""));
    }

    #[test]
    fn pieces_cut_values_and_keep_apostrophes_in_words() {
        let cut: Vec<Piece<'_>> = pieces("the order's 'gift' costs -1.50 <x>, 2nd \"a'b\" 'open")
            .into_iter()
            .map(|(_, piece)| piece)
            .filter(|piece| *piece != Piece::Other(' '))
            .collect();
        assert_eq!(
            cut,
            [
                Piece::Word("the"),
                Piece::Word("order"),
                Piece::Other('\''),
                Piece::Word("s"),
                Piece::Value("'gift'"),
                Piece::Word("costs"),
                Piece::Value("-1.50"),
                Piece::Value("<x>"),
                Piece::Other(','),
                Piece::Value("2nd"),
                Piece::Value("\"a'b\""),
                Piece::Other('\''),
                Piece::Word("open"),
            ]
        );
        assert_eq!(pattern_key("I see the order's total of 'ten'"), "i see the order's total of \"\"");
    }

    proptest::proptest! {
        /// Any text is cut into pieces that are the text again, in order, with no byte lost.
        #[test]
        fn pieces_are_the_text(text in "[a-z0-9 '\"<>.,é€-]{0,40}") {
            let pieces = pieces(&text);
            let mut rebuilt = String::new();
            for (at, piece) in pieces {
                proptest::prop_assert_eq!(at, rebuilt.len());
                match piece {
                    Piece::Word(part) | Piece::Value(part) => rebuilt.push_str(part),
                    Piece::Other(c) => rebuilt.push(c),
                }
            }
            proptest::prop_assert_eq!(rebuilt, text);
        }
    }

    #[test]
    fn negations_are_found() {
        assert_eq!(negations(&tokens("gift wrap is not selected")), ["not"]);
        assert_eq!(negations(&tokens("I don't see an error")), ["t"]);
        assert!(negations(&tokens("I see the notes")).is_empty());
    }

    #[test]
    fn jaccard_of_token_sets() {
        let a = tokens("I click the Save button");
        let b = tokens("I click on the Save button");
        assert!((jaccard(&a, &b) - 5.0 / 6.0).abs() < 1e-9);
        assert_eq!(jaccard(&a, &a), 1.0);
    }
}
