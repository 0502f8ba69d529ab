//! Tokens inside recorded values, and the tokenizer editors and the validator share.
//!
//! Two families. `<param>` and `<table:key>` come from the scenario as written (an Outline
//! column, a key/value data table). `{env:NAME}`, `{unique:name}`, `{date±N:format}` and
//! `{captured:name}` are resolved at the moment an action runs.
//!
//! Text that only looks a little like a token stays literal, so ordinary values survive:
//! `a < b`, `<div class="x">`, `{"json": 1}`, `{name}`, `\d{2,3}` and the named groups of a
//! regex `(?<name>...)` are not tokens. `{word:...}` with an unknown word is an unknown token,
//! so a misspelt `{evn:PASSWORD}` is an error rather than typed into a page.

use std::ops::Range;

use crate::date::{DATE_DIRECTIVES, Date};

/// The token syntax, for messages.
pub const TOKEN_SYNTAX: &str = "<param>, <table:key>, {env:NAME}, {unique:name}, {date+N}, \
     {date-N:format} or {captured:name}";

/// The largest `{date±N}` offset, in days.
pub const MAX_DATE_OFFSET: i64 = 99_999;

/// One token found in a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    /// Byte range of the token in the string, delimiters included.
    pub span: Range<usize>,
    /// The token as written.
    pub text: &'a str,
    /// What it stands for.
    pub kind: TokenKind<'a>,
}

/// What a token stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenKind<'a> {
    /// `<name>`: an Outline column.
    Param(&'a str),
    /// `<table:key>`: the value beside `key` in the step's two-column data table.
    Table(&'a str),
    /// `{env:NAME}`: a secret from the environment, resolved at the last moment.
    Env(&'a str),
    /// `{unique:name}`: unique per scenario execution, stable within it.
    Unique(&'a str),
    /// `{captured:name}`: a value captured earlier in the run.
    Captured(&'a str),
    /// `{date}`, `{date+N}`, `{date-N}`, optionally `:format`: today plus `offset_days`.
    Date {
        /// Days after today (negative: before).
        offset_days: i64,
        /// strftime subset; ISO `YYYY-MM-DD` when absent.
        format: Option<&'a str>,
    },
    /// `{word:...}` where `word` is no token kind saffron knows.
    Unknown {
        /// The unknown word.
        kind: &'a str,
    },
    /// A token of a known kind written wrong.
    Malformed {
        /// What is wrong, and how to write it.
        problem: String,
    },
}

impl Token<'_> {
    /// The problem with this token, if it cannot be resolved whatever the context.
    pub fn problem(&self) -> Option<String> {
        match &self.kind {
            TokenKind::Unknown { .. } => Some(format!("unknown token {}: tokens are {TOKEN_SYNTAX}", self.text)),
            TokenKind::Malformed { problem } => Some(format!("{}: {problem}", self.text)),
            _ => None,
        }
    }
}

/// Every token in `text`, in order, with its byte span.
pub fn tokenize(text: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut position = 0;
    while let Some(offset) = text[position..].find(['<', '{']) {
        let start = position + offset;
        let found = if text[start..].starts_with('<') { angle_token(text, start) } else { curly_token(text, start) };
        match found {
            Some((end, kind)) => {
                tokens.push(Token { span: start..end, text: &text[start..end], kind });
                position = end;
            }
            None => position = start + 1,
        }
    }
    tokens
}

/// The first problem among the tokens of `text`, if any.
pub fn first_problem(text: &str) -> Option<String> {
    tokenize(text).iter().find_map(Token::problem)
}

fn angle_token(text: &str, start: usize) -> Option<(usize, TokenKind<'_>)> {
    let before = &text[..start];
    if before.ends_with("(?") || before.ends_with("(?P") {
        return None;
    }
    let rest = &text[start + 1..];
    let close = rest.find(['>', '<', '\n', '\r'])?;
    if !rest[close..].starts_with('>') {
        return None;
    }
    let inner = &rest[..close];
    let end = start + 1 + close + 1;
    if let Some(key) = inner.strip_prefix("table:") {
        if key.is_empty() {
            return Some((end, malformed("a table token needs a key: <table:key>".to_string())));
        }
        return Some((end, TokenKind::Table(key)));
    }
    is_param_name(inner).then_some((end, TokenKind::Param(inner)))
}

// Outline column names are words with spaces, dashes or dots; requiring that shape keeps
// comparisons and markup (`a <= b >= c`, `<br/>`, `<a href="x">`) literal.
fn is_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_alphanumeric() || c == '_');
    first_ok && !name.ends_with(' ') && name.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.'))
}

fn curly_token(text: &str, start: usize) -> Option<(usize, TokenKind<'_>)> {
    let rest = &text[start + 1..];
    let kind_len = rest
        .char_indices()
        .find(
            |(index, c)| {
                if *index == 0 { !c.is_ascii_lowercase() } else { !(c.is_ascii_alphanumeric() || *c == '_') }
            },
        )
        .map_or(rest.len(), |(index, _)| index);
    if kind_len == 0 {
        return None;
    }
    let kind = &rest[..kind_len];
    let known = matches!(kind, "env" | "unique" | "captured" | "date");
    let after_kind = &rest[kind_len..];
    let separator = after_kind.chars().next();
    let takes_operand = match separator {
        Some(':') => true,
        Some('+' | '-') => known,
        Some('}') => known,
        _ => false,
    };
    if !takes_operand {
        return None;
    }
    let body_start = start + 1 + kind_len;
    let unclosed = || malformed(format!("close the {{{kind}...}} token with }}"));
    let Some(close) = after_kind.find(['}', '{', '\n', '\r']) else {
        return known.then(|| (text.len(), unclosed()));
    };
    if !after_kind[close..].starts_with('}') {
        return known.then(|| (body_start + close, unclosed()));
    }
    let end = body_start + close + 1;
    let operand = &after_kind[..close];
    let token = match kind {
        "env" => named(operand, "{env:NAME}", is_env_name, TokenKind::Env),
        "unique" => named(operand, "{unique:name}", is_value_name, TokenKind::Unique),
        "captured" => named(operand, "{captured:name}", is_value_name, TokenKind::Captured),
        "date" => date_token(operand),
        _ => TokenKind::Unknown { kind },
    };
    Some((end, token))
}

fn named<'a>(
    operand: &'a str,
    syntax: &str,
    valid: fn(&str) -> bool,
    make: fn(&'a str) -> TokenKind<'a>,
) -> TokenKind<'a> {
    match operand.strip_prefix(':') {
        Some(name) if valid(name) => make(name),
        Some("") | None => malformed(format!("needs a name: {syntax}")),
        Some(_) => {
            malformed(format!("a name is letters, digits and _ (for unique and captured names also . and -): {syntax}"))
        }
    }
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A `{unique:…}` or `{captured:…}` name: letters, digits, `_`, `.` and `-` (also the names a
/// request's extracts and services take).
pub(crate) fn is_value_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn date_token(operand: &str) -> TokenKind<'_> {
    let (sign, rest) = match operand.chars().next() {
        Some('+') => (1, &operand[1..]),
        Some('-') => (-1, &operand[1..]),
        _ => (1, operand),
    };
    let digits_len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (digits, format) = rest.split_at(digits_len);
    let signed = operand.starts_with(['+', '-']);
    if signed && digits.is_empty() {
        return malformed("needs a number of days: {date+N} or {date-N}".to_string());
    }
    if !signed && !digits.is_empty() {
        return malformed("write the offset with a sign: {date+N} or {date-N}".to_string());
    }
    let offset = if digits.is_empty() {
        0
    } else {
        match digits.parse::<i64>() {
            Ok(days) if days <= MAX_DATE_OFFSET => sign * days,
            _ => {
                return malformed(format!("a date offset is at most {MAX_DATE_OFFSET} days"));
            }
        }
    };
    let format = match format.strip_prefix(':') {
        None if format.is_empty() => None,
        None => {
            return malformed("expected {date}, {date+N}, {date-N}, then optionally :format".to_string());
        }
        Some("") => return malformed(format!("an empty format: use {DATE_DIRECTIVES}")),
        Some(format) => {
            let probe = Date::from_ymd(2000, 1, 1).map(|day| day.format(format));
            if let Some(Err(problem)) = probe {
                return malformed(problem.to_string());
            }
            Some(format)
        }
    };
    TokenKind::Date { offset_days: offset, format }
}

fn malformed<'a>(problem: String) -> TokenKind<'a> {
    TokenKind::Malformed { problem }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Range<usize>, TokenKind<'_>)> {
        tokenize(text).into_iter().map(|token| (token.span, token.kind)).collect()
    }

    #[test]
    fn finds_every_kind_with_byte_spans() {
        let text = "€<first name> <table:Email> {env:PASS_1} {unique:user} {captured:order.id} \
                    {date} {date+3} {date-1:%d/%m/%Y}";
        let tokens = tokenize(text);
        let found: Vec<&str> = tokens.iter().map(|token| token.text).collect();
        assert_eq!(
            found,
            [
                "<first name>",
                "<table:Email>",
                "{env:PASS_1}",
                "{unique:user}",
                "{captured:order.id}",
                "{date}",
                "{date+3}",
                "{date-1:%d/%m/%Y}"
            ]
        );
        for token in &tokens {
            assert_eq!(&text[token.span.clone()], token.text);
        }
        assert_eq!(tokens[0].span, 3..15, "spans are bytes: € is three");
        assert_eq!(tokens[0].kind, TokenKind::Param("first name"));
        assert_eq!(tokens[1].kind, TokenKind::Table("Email"));
        assert_eq!(tokens[2].kind, TokenKind::Env("PASS_1"));
        assert_eq!(tokens[3].kind, TokenKind::Unique("user"));
        assert_eq!(tokens[4].kind, TokenKind::Captured("order.id"));
        assert_eq!(tokens[5].kind, TokenKind::Date { offset_days: 0, format: None });
        assert_eq!(tokens[6].kind, TokenKind::Date { offset_days: 3, format: None });
        assert_eq!(tokens[7].kind, TokenKind::Date { offset_days: -1, format: Some("%d/%m/%Y") });
        assert!(tokens.iter().all(|token| token.problem().is_none()));
    }

    #[test]
    fn ordinary_text_stays_literal() {
        for text in [
            "a < b",
            "a <= b and c >= d",
            "<div class=\"x\">",
            "<br/>",
            "<>",
            "< spaced >",
            "{\"json\": 1}",
            "{name}",
            "{Name:x}",
            "\\d{2,3}",
            "(?<year>\\d{4})-(?P<month>\\d\\d)",
            "(?<=a)b>",
            "{unknown+1}",
            "<unclosed",
            "{",
            "price {",
            "",
        ] {
            assert_eq!(kinds(text), vec![], "{text:?} has no token");
        }
    }

    #[test]
    fn unknown_and_malformed_tokens_are_reported() {
        let cases = [
            ("{evn:PASSWORD}", "unknown token {evn:PASSWORD}: tokens are"),
            ("{env}", "{env}: needs a name: {env:NAME}"),
            ("{env:}", "{env:}: needs a name: {env:NAME}"),
            ("{env:MY-VAR}", "{env:MY-VAR}: a name is letters"),
            ("{unique}", "{unique}: needs a name: {unique:name}"),
            ("{captured:a b}", "{captured:a b}: a name is letters"),
            ("{date+}", "{date+}: needs a number of days"),
            ("{date3}", ""),
            ("{date 3}", ""),
            ("{date+100000}", "{date+100000}: a date offset is at most 99999 days"),
            ("{date+1:}", "{date+1:}: an empty format"),
            ("{date:%H}", "{date:%H}: unknown date directive %H"),
            ("{date+1x}", "{date+1x}: expected {date}, {date+N}"),
            ("{env:PASS", "{env:PASS: close the {env...} token with }"),
            ("<table:>", "<table:>: a table token needs a key"),
        ];
        for (text, expected) in cases {
            let problem = first_problem(text);
            if expected.is_empty() {
                assert_eq!(problem, None, "{text}");
            } else {
                let problem = problem.unwrap_or_default();
                assert!(problem.starts_with(expected), "{text}: {problem}");
            }
        }
    }

    #[test]
    fn unclosed_token_span_stops_before_the_next_token() {
        let tokens = tokenize("{env:A {env:B}");
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens[0].text, "{env:A ");
        assert!(tokens[0].problem().is_some());
        assert_eq!(tokens[1].kind, TokenKind::Env("B"));
        let tokens = tokenize("x {date:%d\ny");
        assert_eq!(tokens.len(), 1);
        assert_eq!(tokens[0].text, "{date:%d");
    }

    #[test]
    fn tokens_next_to_each_other_and_inside_words() {
        let found: Vec<String> =
            tokenize("{unique:u}@example.com<x><y>{date+1}").iter().map(|token| token.text.to_string()).collect();
        assert_eq!(found, ["{unique:u}", "<x>", "<y>", "{date+1}"]);
    }
}
