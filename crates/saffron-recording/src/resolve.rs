//! The one resolver: turns a recorded value with tokens into the string an action uses.
//!
//! Its output holds real parameter and secret values, so it exists only on the way into the
//! browser: nothing it returns is serializable, and nothing that writes recordings or
//! proposals takes it. Resolve at the last moment, mask everything that comes back.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::date::Date;
use crate::tokens::{TokenKind, tokenize};

type EnvLookup<'a> = Box<dyn Fn(&str) -> Option<String> + 'a>;

/// Resolves templates for one scenario execution.
pub struct Resolver<'a> {
    params: HashMap<String, String>,
    table: HashMap<String, String>,
    env: EnvLookup<'a>,
    unique_seed: String,
    today: Date,
    captured: HashMap<String, String>,
}

/// A resolved value and the secrets substituted into it.
#[derive(Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The final string, secrets included: for the browser only.
    pub value: String,
    /// The `{env:NAME}` values it contains, to feed a [`crate::Masker`].
    pub secrets: Vec<Secret>,
}

/// A secret value and the environment variable it came from.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Secret {
    /// The variable name, as in `{env:NAME}`.
    pub name: String,
    /// The value.
    pub value: String,
}

/// Why a template could not be resolved. Every message names the token.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResolveError {
    /// The token is unknown or written wrong.
    #[error("{problem}")]
    Invalid {
        /// The token as written.
        token: String,
        /// What is wrong, the token included.
        problem: String,
    },
    /// No Outline column of that name.
    #[error("no value for {token}: the scenario has no Examples column \"{name}\"")]
    MissingParam {
        /// The token as written.
        token: String,
        /// The column name.
        name: String,
    },
    /// No table row with that key.
    #[error("no value for {token}: the step's data table has no row \"{key}\"")]
    MissingTableKey {
        /// The token as written.
        token: String,
        /// The key.
        key: String,
    },
    /// The environment variable is not set.
    #[error("no value for {token}: set the environment variable {name}")]
    MissingEnv {
        /// The token as written.
        token: String,
        /// The variable name.
        name: String,
    },
    /// Nothing was captured under that name.
    #[error("no value for {token}: nothing named \"{name}\" was captured earlier in this run")]
    MissingCaptured {
        /// The token as written.
        token: String,
        /// The capture name.
        name: String,
    },
    /// The date falls outside the supported years.
    #[error("no value for {token}: the date falls outside the years 0 to 9999")]
    DateOutOfRange {
        /// The token as written.
        token: String,
    },
}

impl ResolveError {
    /// The token the error is about, as written.
    pub fn token(&self) -> &str {
        match self {
            ResolveError::Invalid { token, .. }
            | ResolveError::MissingParam { token, .. }
            | ResolveError::MissingTableKey { token, .. }
            | ResolveError::MissingEnv { token, .. }
            | ResolveError::MissingCaptured { token, .. }
            | ResolveError::DateOutOfRange { token } => token,
        }
    }
}

impl<'a> Resolver<'a> {
    /// A resolver with no parameters, table, environment or captures yet. `unique_seed` must
    /// differ between executions (see [`new_unique_seed`]); `today` is the day `{date}` means.
    pub fn new(today: Date, unique_seed: impl Into<String>) -> Resolver<'a> {
        Resolver {
            params: HashMap::new(),
            table: HashMap::new(),
            env: Box::new(|_| None),
            unique_seed: unique_seed.into(),
            today,
            captured: HashMap::new(),
        }
    }

    /// The Outline row's values by column name.
    pub fn with_params<K: Into<String>, V: Into<String>>(
        mut self,
        params: impl IntoIterator<Item = (K, V)>,
    ) -> Resolver<'a> {
        self.params = collect(params);
        self
    }

    /// The step's key/value table, by key.
    pub fn with_table<K: Into<String>, V: Into<String>>(
        mut self,
        table: impl IntoIterator<Item = (K, V)>,
    ) -> Resolver<'a> {
        self.table = collect(table);
        self
    }

    /// The step's data table as written: each row of exactly two cells is a key and its
    /// value; other rows are not key/value rows and are ignored.
    pub fn with_table_rows(self, rows: &[Vec<String>]) -> Resolver<'a> {
        let pairs = rows.iter().filter_map(|row| match row.as_slice() {
            [key, value] => Some((key.clone(), value.clone())),
            _ => None,
        });
        self.with_table(pairs)
    }

    /// How `{env:NAME}` is looked up. Only the names a template mentions are ever asked for,
    /// so the environment is never enumerated.
    pub fn with_env(mut self, lookup: impl Fn(&str) -> Option<String> + 'a) -> Resolver<'a> {
        self.env = Box::new(lookup);
        self
    }

    /// Values captured before this execution started (a fixture's, for instance).
    pub fn with_captured<K: Into<String>, V: Into<String>>(
        mut self,
        captured: impl IntoIterator<Item = (K, V)>,
    ) -> Resolver<'a> {
        self.captured = collect(captured);
        self
    }

    /// Record a value captured during the run, for later `{captured:name}` tokens. A later
    /// capture under the same name replaces the earlier one.
    pub fn capture(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.captured.insert(name.into(), value.into());
    }

    /// Replace every token of `template` by its value.
    pub fn resolve(&self, template: &str) -> Result<Resolved, ResolveError> {
        self.substitute(template, |value| value.to_string())
    }

    /// Resolve a regex template: substituted values are escaped, so a value such as
    /// `1.50 (EUR)` matches itself rather than acting as a pattern.
    pub fn resolve_regex(&self, template: &str) -> Result<Resolved, ResolveError> {
        self.substitute(template, regex::escape)
    }

    fn substitute(&self, template: &str, quote: impl Fn(&str) -> String) -> Result<Resolved, ResolveError> {
        let mut value = String::with_capacity(template.len());
        let mut secrets = Vec::new();
        let mut position = 0;
        for token in tokenize(template) {
            value.push_str(&template[position..token.span.start]);
            position = token.span.end;
            let text = token.text.to_string();
            let replacement = match &token.kind {
                TokenKind::Param(name) => self
                    .params
                    .get(*name)
                    .cloned()
                    .ok_or_else(|| ResolveError::MissingParam { token: text.clone(), name: name.to_string() })?,
                TokenKind::Table(key) => self
                    .table
                    .get(*key)
                    .cloned()
                    .ok_or_else(|| ResolveError::MissingTableKey { token: text.clone(), key: key.to_string() })?,
                TokenKind::Env(name) => {
                    let secret = (self.env)(name)
                        .ok_or_else(|| ResolveError::MissingEnv { token: text.clone(), name: name.to_string() })?;
                    secrets.push(Secret { name: name.to_string(), value: secret.clone() });
                    secret
                }
                TokenKind::Unique(name) => format!("{name}-{}", self.unique_seed),
                TokenKind::Captured(name) => self
                    .captured
                    .get(*name)
                    .cloned()
                    .ok_or_else(|| ResolveError::MissingCaptured { token: text.clone(), name: name.to_string() })?,
                TokenKind::Date { offset_days, format } => self.date(&text, *offset_days, *format)?,
                TokenKind::Unknown { .. } | TokenKind::Malformed { .. } => {
                    return Err(ResolveError::Invalid {
                        problem: token.problem().unwrap_or_else(|| text.clone()),
                        token: text,
                    });
                }
            };
            value.push_str(&quote(&replacement));
        }
        value.push_str(&template[position..]);
        Ok(Resolved { value, secrets })
    }

    fn date(&self, token: &str, offset_days: i64, format: Option<&str>) -> Result<String, ResolveError> {
        let day = self
            .today
            .add_days(offset_days)
            .ok_or_else(|| ResolveError::DateOutOfRange { token: token.to_string() })?;
        match format {
            None => Ok(day.to_string()),
            Some(format) => day.format(format).map_err(|problem| ResolveError::Invalid {
                token: token.to_string(),
                problem: format!("{token}: {problem}"),
            }),
        }
    }
}

/// A fresh seed for `{unique:name}`: ten lowercase hex digits, different for every call in
/// every process, safe inside e-mail addresses, URLs and usernames.
pub fn new_unique_seed() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_nanos()).unwrap_or(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let input = format!("{nanos}:{}:{count}", std::process::id());
    let mut seed = hex::encode(Sha256::digest(input.as_bytes()));
    seed.truncate(10);
    seed
}

fn collect<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> HashMap<String, String> {
    pairs.into_iter().map(|(key, value)| (key.into(), value.into())).collect()
}

// Debug output ends up in logs and panics; it must not carry the secret.
impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secret").field("name", &self.name).field("value", &"<hidden>").finish()
    }
}

impl fmt::Debug for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut masker = crate::mask::Masker::new();
        masker.add_all(&self.secrets);
        f.debug_struct("Resolved").field("value", &masker.mask(&self.value)).field("secrets", &self.secrets).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> Date {
        Date::from_ymd(2026, 11, 29).expect("valid date")
    }

    fn resolver() -> Resolver<'static> {
        Resolver::new(today(), "s33d")
            .with_params([("product", "Tea (green)"), ("first name", "Ada")])
            .with_table_rows(&[
                vec!["Email".into(), "ada@example.com".into()],
                vec!["a".into(), "b".into(), "c".into()],
            ])
            .with_env(|name| (name == "USER_PASSWORD").then(|| "hunter22".to_string()))
            .with_captured([("orderId", "A-17")])
    }

    #[test]
    fn resolves_every_token_kind() {
        let resolver = resolver();
        let cases = [
            ("Add <product>", "Add Tea (green)"),
            ("Hi <first name>!", "Hi Ada!"),
            ("<table:Email>", "ada@example.com"),
            ("{unique:user}@example.com", "user-s33d@example.com"),
            ("/orders/{captured:orderId}", "/orders/A-17"),
            ("{date}", "2026-11-29"),
            ("{date+3}", "2026-12-02"),
            ("{date-1:%d/%m/%Y}", "28/11/2026"),
            ("no tokens, {\"json\": true} a < b", "no tokens, {\"json\": true} a < b"),
            ("", ""),
        ];
        for (template, expected) in cases {
            let resolved = resolver.resolve(template).expect(template);
            assert_eq!(resolved.value, expected, "{template}");
            assert!(resolved.secrets.is_empty());
        }
    }

    #[test]
    fn unique_is_stable_within_an_execution_and_differs_between_them() {
        let resolver = resolver();
        let first = resolver.resolve("{unique:a}").expect("resolves").value;
        assert_eq!(resolver.resolve("{unique:a}").expect("resolves").value, first);
        assert_ne!(resolver.resolve("{unique:b}").expect("resolves").value, first);
        let seeds: std::collections::HashSet<String> = (0..1000).map(|_| new_unique_seed()).collect();
        assert_eq!(seeds.len(), 1000);
        assert!(seeds.iter().all(|seed| seed.len() == 10));
    }

    #[test]
    fn secrets_are_reported_and_hidden_from_debug() {
        let resolved = resolver().resolve("user:{env:USER_PASSWORD}").expect("resolves");
        assert_eq!(resolved.value, "user:hunter22");
        assert_eq!(resolved.secrets, vec![Secret { name: "USER_PASSWORD".into(), value: "hunter22".into() }]);
        let debug = format!("{resolved:?}");
        assert!(!debug.contains("hunter22"), "{debug}");
        assert!(debug.contains("{env:USER_PASSWORD}"), "{debug}");
    }

    #[test]
    fn errors_name_the_token() {
        let mut resolver = resolver();
        let cases = [
            ("<colour>", "no value for <colour>: the scenario has no Examples column \"colour\""),
            ("<table:Phone>", "no value for <table:Phone>: the step's data table has no row \"Phone\""),
            ("{env:API_KEY}", "no value for {env:API_KEY}: set the environment variable API_KEY"),
            (
                "{captured:invoice}",
                "no value for {captured:invoice}: nothing named \"invoice\" was captured \
                 earlier in this run",
            ),
            (
                "x {evn:USER_PASSWORD}",
                "unknown token {evn:USER_PASSWORD}: tokens are <param>, <table:key>, \
                 {env:NAME}, {unique:name}, {date+N}, {date-N:format} or {captured:name}",
            ),
            ("{env}", "{env}: needs a name: {env:NAME}"),
        ];
        for (template, message) in cases {
            let error = resolver.resolve(template).expect_err(template);
            assert_eq!(error.to_string(), message);
            assert!(template.contains(error.token()));
        }
        resolver.capture("invoice", "INV-1");
        assert_eq!(resolver.resolve("{captured:invoice}").map(|r| r.value), Ok("INV-1".to_string()));
        let far = Resolver::new(Date::from_ymd(9999, 12, 30).expect("valid"), "s");
        assert!(matches!(far.resolve("{date+2}"), Err(ResolveError::DateOutOfRange { .. })));
    }

    #[test]
    fn regex_templates_escape_substituted_values() {
        let resolved = resolver().resolve_regex(r"^Add <product> \d+$").expect("resolves");
        assert_eq!(resolved.value, r"^Add Tea \(green\) \d+$");
        let pattern = regex::Regex::new(&resolved.value).expect("compiles");
        assert!(pattern.is_match("Add Tea (green) 3"));
    }
}
