//! Conformance with Cucumber's reference parser, on its own test data: every good file must
//! give the expected document and pickles, every bad file the expected errors.

use std::path::{Path, PathBuf};

use saffron_syntax::messages;
use saffron_syntax::pickles::NoStepSets;
use saffron_syntax::{SourceKind, parse};
use serde_json::Value;

fn corpus() -> PathBuf {
    match std::env::var_os("SAFFRON_GHERKIN_CORPUS") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/gherkin"),
    }
}

fn feature_files(folder: &str) -> Vec<PathBuf> {
    let dir = corpus().join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "feature"))
        .collect();
    files.sort();
    files
}

/// The reference data names files `../testdata/<folder>/<name>`.
fn reference_uri(folder: &str, path: &Path) -> String {
    format!("../testdata/{folder}/{}", path.file_name().and_then(|n| n.to_str()).expect("name"))
}

fn read_ndjson(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("valid ndjson")).collect()
}

fn ours(folder: &str, path: &Path) -> Vec<Value> {
    let source = std::fs::read_to_string(path).expect("read feature");
    let parsed = parse(&source, SourceKind::Feature);
    messages::envelopes(&reference_uri(folder, path), &source, &parsed, &NoStepSets)
}

fn of_kind(envelopes: &[Value], kind: &str) -> Vec<Value> {
    envelopes.iter().filter(|e| e.get(kind).is_some()).cloned().collect()
}

/// The JSON path of the first difference, with both values there (kept short to read).
fn first_difference(expected: &[Value], actual: &[Value]) -> String {
    fn walk(path: String, expected: &Value, actual: &Value) -> Option<String> {
        match (expected, actual) {
            (Value::Object(e), Value::Object(a)) => {
                let keys: std::collections::BTreeSet<&String> = e.keys().chain(a.keys()).collect();
                keys.into_iter().find_map(|key| {
                    let (ev, av) = (e.get(key).unwrap_or(&Value::Null), a.get(key).unwrap_or(&Value::Null));
                    walk(format!("{path}.{key}"), ev, av)
                })
            }
            (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
                e.iter().zip(a).enumerate().find_map(|(i, (ev, av))| walk(format!("{path}[{i}]"), ev, av))
            }
            _ if expected == actual => None,
            _ => {
                let short = |v: &Value| v.to_string().chars().take(300).collect::<String>();
                Some(format!("{path}\n expected: {}\n   actual: {}", short(expected), short(actual)))
            }
        }
    }
    let expected = Value::Array(expected.to_vec());
    let actual = Value::Array(actual.to_vec());
    walk("$".to_string(), &expected, &actual).unwrap_or_else(|| "no difference".to_string())
}

#[test]
fn every_good_file_matches_the_reference_document_pickles_and_source() {
    let files = feature_files("good");
    assert_eq!(files.len(), 50, "the corpus has 50 good files");
    let mut failures = Vec::new();
    for path in &files {
        let actual = ours("good", path);
        for (suffix, kind) in [("ast", "gherkinDocument"), ("pickles", "pickle"), ("source", "source")] {
            let expected_path = PathBuf::from(format!("{}.{suffix}.ndjson", path.display()));
            let expected = read_ndjson(&expected_path);
            let produced = of_kind(&actual, kind);
            if expected != produced {
                failures.push(format!("{} ({suffix}): {}", path.display(), first_difference(&expected, &produced)));
            }
        }
        let errors = of_kind(&actual, "parseError");
        if !errors.is_empty() {
            failures.push(format!("{}: unexpected errors {errors:?}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{} of {} good files differ:\n{}", failures.len(), files.len(), failures.join("\n\n"));
}

#[test]
fn every_bad_file_gives_the_reference_errors() {
    let files = feature_files("bad");
    assert_eq!(files.len(), 12, "the corpus has 12 bad files");
    let mut failures = Vec::new();
    for path in &files {
        let expected = read_ndjson(&PathBuf::from(format!("{}.errors.ndjson", path.display())));
        let produced = of_kind(&ours("bad", path), "parseError");
        if expected != produced {
            failures.push(format!("{}: {}", path.display(), first_difference(&expected, &produced)));
        }
    }
    assert!(failures.is_empty(), "{} of {} bad files differ:\n{}", failures.len(), files.len(), failures.join("\n\n"));
}
