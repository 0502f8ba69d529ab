//! Random and mutated feature text: the parser never panics, and every span it returns lies
//! inside the input on character boundaries.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use saffron_syntax::pickles::NoStepSets;
use saffron_syntax::{Project, SourceFile, SourceKind, messages, parse};
use serde_json::Value;

/// Pieces of lines that drive the parser into every state.
const FRAGMENTS: &[&str] = &[
    "Feature: f",
    "Rule: r",
    "Background:",
    "Scenario: s",
    "Scenario Outline: o <a>",
    "Examples:",
    "StepSet: set",
    "StepSet set",
    "Fixture: fx",
    "Given ",
    "When x <a>",
    "Then ",
    "And ",
    "* ",
    "| a | b |",
    "| <a> |",
    "|",
    "\\|",
    "\\",
    "\\n",
    "\"\"\"",
    "\"\"\"json",
    "```",
    "\\\"\\\"\\\"",
    "@tag",
    "@a b",
    "# comment",
    "# language: fr",
    "#language:no-such",
    "Fonctionnalité: é",
    "Scénario: ü",
    "Soit ",
    "  ",
    "\t",
    "😀",
    "\u{feff}",
    "\u{a0}",
    ":",
    "text",
];

fn fragment_line() -> impl Strategy<Value = String> {
    (prop::collection::vec(prop::sample::select(FRAGMENTS), 0..4), 0usize..6)
        .prop_map(|(parts, indent)| format!("{}{}", " ".repeat(indent), parts.concat()))
}

fn feature_text() -> impl Strategy<Value = String> {
    (prop::collection::vec(fragment_line(), 0..40), prop::bool::ANY)
        .prop_map(|(lines, crlf)| lines.join(if crlf { "\r\n" } else { "\n" }))
}

fn corpus_file() -> impl Strategy<Value = String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/gherkin/good");
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "feature"))
                .filter_map(|p| std::fs::read_to_string(p).ok())
                .collect()
        })
        .unwrap_or_default();
    texts.sort();
    if texts.is_empty() {
        texts.push("Feature: x\n  Scenario: y\n    Given z\n".to_string());
    }
    prop::sample::select(texts)
}

/// A corpus file with a byte range cut out and fragments spliced in at random places.
fn mutated_text() -> impl Strategy<Value = String> {
    (
        corpus_file(),
        any::<prop::sample::Index>(),
        0usize..200,
        prop::collection::vec((any::<prop::sample::Index>(), fragment_line()), 0..4),
    )
        .prop_map(|(text, cut_at, cut_len, inserts)| {
            let mut text = text;
            let boundary = |text: &str, index: &prop::sample::Index| {
                let mut at = index.index(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                at
            };
            let start = boundary(&text, &cut_at);
            let mut end = (start + cut_len).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.replace_range(start..end, "");
            for (index, line) in inserts {
                let at = boundary(&text, &index);
                text.insert_str(at, &format!("\n{line}\n"));
            }
            text
        })
}

/// Every `{start, end}` object in the serialized tree lies inside the text.
fn assert_spans_inside(value: &Value, text: &str) {
    match value {
        Value::Object(map) => {
            if let (Some(Value::Number(start)), Some(Value::Number(end))) = (map.get("start"), map.get("end")) {
                let (start, end) = (start.as_u64().unwrap_or(u64::MAX) as usize, end.as_u64().unwrap_or(0) as usize);
                assert!(start <= end && end <= text.len(), "span {start}..{end} outside 0..{}", text.len());
                assert!(
                    text.is_char_boundary(start) && text.is_char_boundary(end),
                    "span {start}..{end} splits a char"
                );
            }
            map.values().for_each(|v| assert_spans_inside(v, text));
        }
        Value::Array(items) => items.iter().for_each(|v| assert_spans_inside(v, text)),
        _ => {}
    }
}

fn check_text(text: &str) {
    for kind in [SourceKind::Feature, SourceKind::Saffron] {
        let parsed = parse(text, kind);
        let tree = serde_json::to_value(&parsed.document).expect("serializable");
        assert_spans_inside(&tree, text);
        for error in &parsed.errors {
            assert!(!error.message.is_empty());
            assert!(error.hint.is_some(), "error without a hint: {error:?}");
            assert_spans_inside(&serde_json::to_value(error).expect("serializable"), text);
        }
        messages::envelopes("x.feature", text, &parsed, &NoStepSets);
    }
    let file = SourceFile::parse(PathBuf::from("x.saffron"), text.to_string()).expect("saffron");
    let project = Project::new(vec![file]);
    for d in project.diagnostics() {
        assert_spans_inside(&serde_json::to_value(&d.diagnostic).expect("serializable"), text);
    }
    project.pickles();
    project.scenario_templates();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_feature_text_never_panics(text in feature_text()) {
        check_text(&text);
    }

    #[test]
    fn mutated_corpus_files_never_panic(text in mutated_text()) {
        check_text(&text);
    }

    #[test]
    fn arbitrary_unicode_never_panics(text in "\\PC{0,300}") {
        check_text(&text);
    }
}
