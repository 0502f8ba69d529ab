//! Gherkin's keyword tables, one per natural language.
//!
//! The table is Cucumber's own `gherkin-languages.json` (MIT, see `data/`), embedded so the
//! parser knows all 80 languages without touching the file system.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::ast::KeywordType;

const LANGUAGES_JSON: &str = include_str!("../data/gherkin-languages.json");

/// The language a file is read in when it has no `# language:` header.
pub const DEFAULT_LANGUAGE: &str = "en";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDialect {
    name: String,
    native: String,
    feature: Vec<String>,
    rule: Vec<String>,
    background: Vec<String>,
    scenario: Vec<String>,
    scenario_outline: Vec<String>,
    examples: Vec<String>,
    given: Vec<String>,
    when: Vec<String>,
    then: Vec<String>,
    and: Vec<String>,
    but: Vec<String>,
}

/// The keywords of one language.
#[derive(Debug)]
pub struct Dialect {
    pub code: String,
    pub name: String,
    pub native: String,
    pub feature: Vec<String>,
    pub rule: Vec<String>,
    pub background: Vec<String>,
    pub scenario: Vec<String>,
    pub scenario_outline: Vec<String>,
    pub examples: Vec<String>,
    pub given: Vec<String>,
    pub when: Vec<String>,
    pub then: Vec<String>,
    pub and: Vec<String>,
    pub but: Vec<String>,
    /// Every step keyword with its type, longest first, so that `Etant donné que ` wins over
    /// `Etant donné `. A keyword listed under several types (`* `) has type `Unknown`.
    step_keywords: Vec<(String, KeywordType)>,
}

impl Dialect {
    fn from_raw(code: &str, raw: RawDialect) -> Dialect {
        let mut typed: Vec<(String, KeywordType)> = Vec::new();
        let groups = [
            (&raw.given, KeywordType::Context),
            (&raw.when, KeywordType::Action),
            (&raw.then, KeywordType::Outcome),
            (&raw.and, KeywordType::Conjunction),
            (&raw.but, KeywordType::Conjunction),
        ];
        for (keywords, keyword_type) in groups {
            for keyword in keywords {
                typed.push((keyword.clone(), keyword_type));
            }
        }
        let mut step_keywords: Vec<(String, KeywordType)> = typed
            .iter()
            .map(|(keyword, _)| {
                let types: Vec<KeywordType> =
                    typed.iter().filter(|(other, _)| other == keyword).map(|(_, t)| *t).collect();
                let keyword_type = if types.len() > 1 { KeywordType::Unknown } else { types[0] };
                (keyword.clone(), keyword_type)
            })
            .collect();
        // Cucumber sorts by length in UTF-16 units, longest first, stable for equal lengths;
        // the same order keeps keyword choice identical for every language.
        step_keywords.sort_by_key(|(keyword, _)| std::cmp::Reverse(keyword.encode_utf16().count()));
        Dialect {
            code: code.to_string(),
            name: raw.name,
            native: raw.native,
            feature: raw.feature,
            rule: raw.rule,
            background: raw.background,
            scenario: raw.scenario,
            scenario_outline: raw.scenario_outline,
            examples: raw.examples,
            given: raw.given,
            when: raw.when,
            then: raw.then,
            and: raw.and,
            but: raw.but,
            step_keywords,
        }
    }

    /// Step keywords with their type, in matching order (longest first).
    pub fn step_keywords(&self) -> &[(String, KeywordType)] {
        &self.step_keywords
    }

    /// The block keywords a scenario may start with: `Scenario`, `Example`, `Scenario Outline`...
    pub fn scenario_keywords(&self) -> impl Iterator<Item = &str> {
        self.scenario.iter().chain(&self.scenario_outline).map(String::as_str)
    }
}

fn dialects() -> &'static HashMap<String, Dialect> {
    static DIALECTS: OnceLock<HashMap<String, Dialect>> = OnceLock::new();
    DIALECTS.get_or_init(|| {
        // The table is compiled in and checked by the conformance tests, so a failure here is a
        // build defect, not a user error.
        let raw: HashMap<String, RawDialect> =
            serde_json::from_str(LANGUAGES_JSON).expect("embedded gherkin-languages.json is valid");
        raw.into_iter()
            .map(|(code, raw)| {
                let dialect = Dialect::from_raw(&code, raw);
                (code, dialect)
            })
            .collect()
    })
}

/// The dialect for a language code such as `en`, `fr` or `zh-CN`.
pub fn dialect(code: &str) -> Option<&'static Dialect> {
    dialects().get(code)
}

/// The default (English) dialect.
pub fn default_dialect() -> &'static Dialect {
    dialect(DEFAULT_LANGUAGE).expect("the embedded table has English")
}

/// All language codes, sorted.
pub fn language_codes() -> Vec<&'static str> {
    let mut codes: Vec<&'static str> = dialects().keys().map(String::as_str).collect();
    codes.sort_unstable();
    codes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_eighty_languages_load() {
        assert_eq!(language_codes().len(), 80);
        let french = dialect("fr").expect("fr");
        assert_eq!(french.feature, vec!["Fonctionnalité"]);
    }

    #[test]
    fn star_is_unknown_and_longest_keyword_first() {
        let english = default_dialect();
        let star = english.step_keywords().iter().find(|(k, _)| k == "* ").expect("star");
        assert_eq!(star.1, KeywordType::Unknown);
        let french = dialect("fr").expect("fr");
        let position = |k: &str| french.step_keywords().iter().position(|(x, _)| x == k);
        assert!(position("Etant donné que ") < position("Etant donné "));
    }
}
