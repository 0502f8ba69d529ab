//! How step texts are compared for near-duplicates.
//!
//! A text's tokens are its maximal runs of letters and digits (any script), lowercased, plus
//! each `<placeholder>` as one token; quotes, punctuation and spaces only separate. Two texts
//! are near-duplicates when the Jaccard index of their token sets is at least
//! [`NEAR_DUPLICATE_THRESHOLD`], they are not the same pattern with other values (see
//! [`pattern_key`]), and they agree on negation (see [`negations`]): `gift wrap is selected` and
//! `gift wrap is not selected` share most words but say opposite things.

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

/// The tokens of a text in the order they appear (repeats kept).
pub fn tokens_in_order(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '<' {
            // `<name>` stays one token when it closes before the next space.
            let rest: String = chars.clone().take_while(|&n| n != '>' && !n.is_whitespace()).collect();
            let closes = chars.clone().nth(rest.chars().count()) == Some('>');
            if closes && !rest.is_empty() {
                flush(&mut current, &mut tokens);
                tokens.push(format!("<{}>", rest.to_lowercase()));
                for _ in 0..=rest.chars().count() {
                    chars.next();
                }
                continue;
            }
        }
        if c.is_alphanumeric() {
            current.extend(c.to_lowercase());
        } else {
            flush(&mut current, &mut tokens);
        }
    }
    flush(&mut current, &mut tokens);
    tokens
}

fn flush(current: &mut String, tokens: &mut Vec<String>) {
    if !current.is_empty() {
        tokens.push(std::mem::take(current));
    }
}

/// The text with its values generalised: quoted strings become `""`, numbers `0`, placeholders
/// `<>`, case folded. Texts with equal keys are one step pattern used with different values
/// (`I search for "tea"` / `I search for "mugs"`), not wording drift.
pub fn pattern_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                let quote = c;
                let mut closed = false;
                for n in chars.by_ref() {
                    if n == quote {
                        closed = true;
                        break;
                    }
                }
                key.push_str(if closed { "\"\"" } else { "\"" });
            }
            '<' => {
                let mut inner = chars.clone();
                let mut closed = false;
                for n in inner.by_ref() {
                    if n == '>' {
                        closed = true;
                        break;
                    }
                    if n.is_whitespace() {
                        break;
                    }
                }
                if closed {
                    chars = inner;
                    key.push_str("<>");
                } else {
                    key.push('<');
                }
            }
            c if c.is_ascii_digit() => {
                while chars.peek().is_some_and(|n| n.is_ascii_digit() || *n == '.' || *n == ',') {
                    chars.next();
                }
                key.push('0');
            }
            c => key.extend(c.to_lowercase()),
        }
    }
    key
}

/// Words that turn a step into its opposite (English; `n't` tokenises to `t`).
pub(crate) const NEGATIONS: &[&str] = &["cannot", "never", "no", "nobody", "none", "not", "nothing", "t", "without"];

/// The negation words among sorted tokens. Two texts whose negations differ are never
/// near-duplicates, however similar the rest.
pub fn negations(tokens: &[String]) -> Vec<&str> {
    tokens.iter().map(String::as_str).filter(|token| NEGATIONS.contains(token)).collect()
}

/// Jaccard index of two sorted, deduplicated token lists.
pub fn jaccard(a: &[String], b: &[String]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
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
    shared as f64 / (a.len() + b.len() - shared) as f64
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
