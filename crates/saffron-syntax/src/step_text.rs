//! Step text cut into the pieces every feature agrees on: words, quoted values, `<placeholders>`,
//! numbers, and the characters between them. Semantic highlighting, snippets, the vocabulary's
//! near-duplicate tokens and pattern keys all read step text through [`lex`], so a placeholder
//! or a quoted value is one thing everywhere.

/// The quote a quoted value is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quote {
    Double,
    Single,
}

impl Quote {
    pub fn char(self) -> char {
        match self {
            Quote::Double => '"',
            Quote::Single => '\'',
        }
    }
}

/// What a [`StepToken`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepTokenKind {
    /// A run of letters and digits (any script) that starts with a letter.
    Word,
    /// A quoted value, quotes included. Inside it a backslash escapes the next character, so
    /// `"say \"hi\""` is one value.
    Quoted(Quote),
    /// `<name>`, brackets included: a name with no whitespace, closed on the same word.
    Placeholder,
    /// A number or an ordinal: a run of letters and digits that starts with a digit (`3`,
    /// `1st`), with a leading minus (`-1`) and decimal or grouped parts (`12.50`, `1,000`).
    Number,
    /// One character of anything else: a space, punctuation, a quote that does not close, an
    /// apostrophe inside a word (`order's` is the words `order` and `s` around it).
    Other,
}

/// One piece of a step text, with its byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepToken<'a> {
    pub start: usize,
    pub text: &'a str,
    pub kind: StepTokenKind,
}

impl<'a> StepToken<'a> {
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }

    /// Whether this is a value a step is used with: a quoted value, a placeholder or a number.
    pub fn is_value(&self) -> bool {
        matches!(self.kind, StepTokenKind::Quoted(_) | StepTokenKind::Placeholder | StepTokenKind::Number)
    }

    /// A quoted value without its quotes, a placeholder without its brackets; other tokens whole.
    pub fn inner(&self) -> &'a str {
        match self.kind {
            StepTokenKind::Quoted(_) | StepTokenKind::Placeholder => &self.text[1..self.text.len() - 1],
            _ => self.text,
        }
    }
}

/// The tokens of a step text, in order; together they are the text, with no byte lost.
///
/// A `'` opens a quoted value only where a word cannot go on (at the start, after a space or
/// punctuation) and closes one only where a word does not go on after it, so the apostrophe in
/// `order's` or `don't` is part of the wording. A quote that does not close is [`StepTokenKind::Other`].
pub fn lex(text: &str) -> StepTokens<'_> {
    StepTokens { text, at: 0 }
}

/// The iterator [`lex`] returns.
#[derive(Debug, Clone)]
pub struct StepTokens<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for StepTokens<'a> {
    type Item = StepToken<'a>;

    fn next(&mut self) -> Option<StepToken<'a>> {
        let text = self.text;
        let at = self.at;
        let c = text[at..].chars().next()?;
        let next = at + c.len_utf8();
        let (end, kind) = token_at(text, at, c, next).unwrap_or((next, StepTokenKind::Other));
        self.at = end;
        Some(StepToken { start: at, text: &text[at..end], kind })
    }
}

/// The end and kind of the token that starts at `at` with `c` (ending at `next`), unless it is a
/// lone character.
fn token_at(text: &str, at: usize, c: char, next: usize) -> Option<(usize, StepTokenKind)> {
    let previous_is_alphanumeric = || text[..at].chars().next_back().is_some_and(char::is_alphanumeric);
    match c {
        '"' => quoted_end(text, next, '"').map(|end| (end, StepTokenKind::Quoted(Quote::Double))),
        '\'' if !previous_is_alphanumeric() => {
            quoted_end(text, next, '\'').map(|end| (end, StepTokenKind::Quoted(Quote::Single)))
        }
        '<' => {
            let name_end = next + text[next..].find(|n: char| n == '>' || n.is_whitespace())?;
            (name_end > next && text[name_end..].starts_with('>')).then_some((name_end + 1, StepTokenKind::Placeholder))
        }
        // A minus sign that starts a number is part of the value: `-1` is not `1`.
        '-' if text[next..].starts_with(|n: char| n.is_ascii_digit()) && !previous_is_alphanumeric() => {
            Some((number_end(text, alphanumeric_end(text, next)), StepTokenKind::Number))
        }
        c if c.is_ascii_digit() => Some((number_end(text, alphanumeric_end(text, at)), StepTokenKind::Number)),
        c if c.is_alphanumeric() => Some((alphanumeric_end(text, at), StepTokenKind::Word)),
        _ => None,
    }
}

/// Warnings about the step texts of a document: a double quote that no other closes (`I
/// search for "tea`). Gherkin takes any text, but what such a quote was meant to hold is read
/// as words, not as a value: the step is another pattern than the one with the value, and a
/// recording cannot be seeded with it. (A single quote that does not close is an apostrophe as
/// often as not: `the users' list`.)
pub fn check(document: &crate::Document) -> Vec<crate::Diagnostic> {
    let mut out = Vec::new();
    for step in document.steps() {
        if step.is_invocation {
            continue;
        }
        for token in lex(&step.text) {
            if token.kind != StepTokenKind::Other || token.text != "\"" {
                continue;
            }
            let column = step.text_location.column + step.text[..token.start].chars().count() as u32;
            let start = step.text_span.start + token.start;
            let location = crate::Location { line: step.text_location.line, column };
            let rest: String = step.text[token.start..].chars().take(24).collect();
            out.push(
                crate::Diagnostic::warning(
                    crate::DiagnosticCode::UnclosedQuote,
                    location,
                    crate::Span::new(start, start + 1),
                    format!("this quote is not closed: `{rest}` is read as words, not as a value"),
                )
                .with_hint("close the value with a second `\"`, or remove the quote"),
            );
        }
    }
    out
}

/// Just past the quote that closes a value opened before `from`; a backslash escapes the
/// character after it. A `'` closes only where no word goes on after it.
fn quoted_end(text: &str, from: usize, quote: char) -> Option<usize> {
    let mut chars = text[from..].char_indices();
    while let Some((offset, n)) = chars.next() {
        if n == '\\' {
            chars.next();
            continue;
        }
        let end = from + offset + n.len_utf8();
        if n == quote && (quote == '"' || !text[end..].starts_with(char::is_alphanumeric)) {
            return Some(end);
        }
    }
    None
}

fn alphanumeric_end(text: &str, from: usize) -> usize {
    text[from..].find(|n: char| !n.is_alphanumeric()).map_or(text.len(), |offset| from + offset)
}

/// Where a number that runs to `end` ends once its decimal or grouped parts are taken in:
/// `12.50`, `1,000` are one value.
fn number_end(text: &str, mut end: usize) -> usize {
    while let Some(rest) = text[end..].strip_prefix(['.', ',']) {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            break;
        }
        end = alphanumeric_end(text, end + 1 + digits);
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> Vec<(StepTokenKind, &str)> {
        lex(text).filter(|token| token.text != " ").map(|token| (token.kind, token.text)).collect()
    }

    #[test]
    fn values_words_and_apostrophes() {
        use StepTokenKind::*;
        assert_eq!(
            cut("the order's 'gift' costs -1.50 <x>, 2nd \"a'b\" 'open"),
            [
                (Word, "the"),
                (Word, "order"),
                (Other, "'"),
                (Word, "s"),
                (Quoted(Quote::Single), "'gift'"),
                (Word, "costs"),
                (Number, "-1.50"),
                (Placeholder, "<x>"),
                (Other, ","),
                (Number, "2nd"),
                (Quoted(Quote::Double), "\"a'b\""),
                (Other, "'"),
                (Word, "open"),
            ]
        );
    }

    #[test]
    fn escaped_quotes_stay_inside_their_value() {
        use StepTokenKind::*;
        assert_eq!(
            cut(r#"I type "say \"hi\"" now"#),
            [(Word, "I"), (Word, "type"), (Quoted(Quote::Double), r#""say \"hi\"""#), (Word, "now")]
        );
        assert_eq!(
            cut(r#"'it\'s' "a\\" b""#)[..2],
            [(Quoted(Quote::Single), r"'it\'s'"), (Quoted(Quote::Double), r#""a\\""#)]
        );
    }

    #[test]
    fn what_is_not_a_placeholder_or_a_value() {
        use StepTokenKind::*;
        assert_eq!(
            cut("a < b <> c>d 1,x"),
            [
                (Word, "a"),
                (Other, "<"),
                (Word, "b"),
                (Other, "<"),
                (Other, ">"),
                (Word, "c"),
                (Other, ">"),
                (Word, "d"),
                (Number, "1"),
                (Other, ","),
                (Word, "x"),
            ]
        );
        assert_eq!(lex("<a b>").next().map(|t| t.kind), Some(Other));
        let quoted = lex("\"<total>\"").next();
        assert_eq!(quoted.map(|t| (t.kind, t.inner())), Some((Quoted(Quote::Double), "<total>")));
    }

    proptest::proptest! {
        /// Any text is cut into tokens that are the text again, in order, with no byte lost.
        #[test]
        fn tokens_are_the_text(text in "[a-z0-9 '\"<>.,é€\\\\-]{0,40}") {
            let mut rebuilt = String::new();
            for token in lex(&text) {
                proptest::prop_assert_eq!(token.start, rebuilt.len());
                proptest::prop_assert!(!token.text.is_empty());
                rebuilt.push_str(token.text);
            }
            proptest::prop_assert_eq!(rebuilt, text);
        }
    }
}
