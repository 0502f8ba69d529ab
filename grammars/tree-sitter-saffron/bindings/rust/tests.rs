use std::path::{Path, PathBuf};

use serde_json::Value;
use tree_sitter::{Language, Node, Parser, Query, Tree};

fn language() -> Language {
    super::LANGUAGE.into()
}

fn parse(source: &str) -> Tree {
    let mut parser = Parser::new();
    parser.set_language(&language()).expect("ABI-compatible grammar");
    parser.parse(source, None).expect("parsing returns a tree")
}

/// The Gherkin conformance data: `$SAFFRON_GHERKIN_CORPUS`, by default
/// `../../../shared/corpus/gherkin` from this crate's manifest directory.
fn corpus_dir() -> PathBuf {
    match std::env::var_os("SAFFRON_GHERKIN_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/gherkin"),
    }
}

fn good_features() -> Vec<PathBuf> {
    let dir = corpus_dir().join("good");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot read {} ({error}); set SAFFRON_GHERKIN_CORPUS", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "feature"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .feature files in {}", dir.display());
    files
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    &source[node.byte_range()]
}

fn walk<'t>(node: Node<'t>, visit: &mut impl FnMut(Node<'t>)) {
    visit(node);
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        walk(child, visit);
    }
}

/// ERROR and MISSING nodes, as `line:column kind`.
fn problems(tree: &Tree) -> Vec<String> {
    let mut found = Vec::new();
    walk(tree.root_node(), &mut |node| {
        if node.is_error() || node.is_missing() {
            let at = node.start_position();
            let what = if node.is_missing() { format!("MISSING {}", node.kind()) } else { "ERROR".into() };
            found.push(format!("{}:{} {what}", at.row + 1, at.column + 1));
        }
    });
    found
}

/// (step text, 1-based line) of every step, in document order.
fn step_lines(tree: &Tree, source: &str) -> Vec<(String, usize)> {
    let mut steps = Vec::new();
    walk(tree.root_node(), &mut |node| {
        if node.kind() == "step" {
            let step_text = node.child_by_field_name("text").map_or("", |t| text(t, source));
            steps.push((step_text.to_string(), node.start_position().row + 1));
        }
    });
    steps
}

#[test]
fn queries_compile() {
    let language = language();
    for (name, source) in [
        ("highlights", super::HIGHLIGHTS_QUERY),
        ("folds", super::FOLDS_QUERY),
        ("injections", super::INJECTIONS_QUERY),
        ("locals", super::LOCALS_QUERY),
    ] {
        if let Err(error) = Query::new(&language, source) {
            panic!("{name}.scm does not compile: {error}");
        }
    }
    let node_types: Value = serde_json::from_str(super::NODE_TYPES).expect("node-types.json is JSON");
    assert!(node_types.as_array().is_some_and(|types| !types.is_empty()));
}

#[test]
fn conformance_corpus_parses_without_errors() {
    let mut failures = Vec::new();
    let mut all_steps = Vec::new();
    for path in good_features() {
        let source = std::fs::read_to_string(&path).expect("readable feature file");
        let tree = parse(&source);
        let found = problems(&tree);
        let name = path.file_name().expect("file name").to_string_lossy().into_owned();
        if !found.is_empty() {
            failures.push(format!("{name}: {}", found.join(", ")));
        }
        for (step, line) in step_lines(&tree, &source) {
            all_steps.push((name.clone(), step, line));
        }
    }
    assert!(failures.is_empty(), "syntax errors in valid files:\n{}", failures.join("\n"));
    assert!(all_steps.contains(&("minimal.feature".into(), "the minimalism".into(), 4)));
    assert!(all_steps.contains(&("i18n_fr.feature".into(), "j'ai 1 gâteau".into(), 6)));
    assert!(all_steps.contains(&("i18n_emoji.feature".into(), "🎸".into(), 5)));
}

// ---------------------------------------------------------------------------------------
// The trees agree with Cucumber's own AST (`*.feature.ast.ndjson`) on steps, blocks, tags,
// table cells and doc strings.

#[derive(Debug, Default, PartialEq)]
struct Facts {
    /// (keyword without trailing space, text, line)
    steps: Vec<(String, String, usize)>,
    /// (keyword, name, description lines without comments and blank lines, line) of
    /// Feature, Rule, Background, Scenario, Examples
    blocks: Vec<(String, String, String, usize)>,
    /// (tag, line)
    tags: Vec<(String, usize)>,
    /// (cell values, line)
    rows: Vec<(Vec<String>, usize)>,
    /// (delimiter, media type, content with each line trimmed, line)
    doc_strings: Vec<(String, String, String, usize)>,
}

impl Facts {
    fn sorted(mut self) -> Facts {
        self.steps.sort();
        self.blocks.sort();
        self.tags.sort();
        self.rows.sort();
        self.doc_strings.sort();
        self
    }
}

fn line_of(value: &Value) -> usize {
    value["location"]["line"].as_u64().expect("location.line") as usize
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or("")
}

fn description_lines(description: &str) -> String {
    let lines = description.lines().map(str::trim);
    lines.filter(|line| !line.is_empty() && !line.starts_with('#')).collect::<Vec<_>>().join("\n")
}

fn trim_lines(content: &str) -> String {
    content.lines().map(str::trim).collect::<Vec<_>>().join("\n").trim().to_string()
}

fn cucumber_facts(ast: &Value) -> Facts {
    fn visit(value: &Value, facts: &mut Facts) {
        match value {
            Value::Array(items) => items.iter().for_each(|item| visit(item, facts)),
            Value::Object(map) => {
                if map.contains_key("keywordType") {
                    facts.steps.push((
                        str_of(value, "keyword").trim_end().to_string(),
                        str_of(value, "text").to_string(),
                        line_of(value),
                    ));
                } else if map.contains_key("keyword") && map.contains_key("name") {
                    facts.blocks.push((
                        str_of(value, "keyword").to_string(),
                        str_of(value, "name").to_string(),
                        description_lines(str_of(value, "description")),
                        line_of(value),
                    ));
                }
                if let Some(Value::Array(tags)) = map.get("tags") {
                    for tag in tags {
                        facts.tags.push((str_of(tag, "name").to_string(), line_of(tag)));
                    }
                }
                if let Some(Value::Array(cells)) = map.get("cells") {
                    let values = cells.iter().map(|cell| str_of(cell, "value").to_string()).collect();
                    facts.rows.push((values, line_of(value)));
                }
                if let Some(doc) = map.get("docString") {
                    facts.doc_strings.push((
                        str_of(doc, "delimiter").to_string(),
                        str_of(doc, "mediaType").to_string(),
                        trim_lines(str_of(doc, "content")),
                        line_of(doc),
                    ));
                }
                for (key, child) in map {
                    if key != "tags" {
                        visit(child, facts);
                    }
                }
            }
            _ => {}
        }
    }
    let mut facts = Facts::default();
    visit(ast, &mut facts);
    facts.sorted()
}

fn unescape_cell(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('|') => out.push('|'),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                _ => {
                    out.push('\\');
                    continue;
                }
            }
            chars.next();
        } else {
            out.push(c);
        }
    }
    out
}

fn tree_facts(tree: &Tree, source: &str) -> Facts {
    const BLOCKS: [&str; 6] = ["feature", "rule", "background", "scenario", "scenario_outline", "examples"];
    let mut facts = Facts::default();
    walk(tree.root_node(), &mut |node| {
        let line = node.start_position().row + 1;
        match node.kind() {
            "step" => {
                let keyword = node.child_by_field_name("keyword").expect("step keyword");
                let step_text = node.child_by_field_name("text").map_or("", |t| text(t, source));
                facts.steps.push((text(keyword, source).to_string(), step_text.to_string(), line));
            }
            kind if BLOCKS.contains(&kind) => {
                let keyword = node.child_by_field_name("keyword").expect("block keyword");
                let name = node.child_by_field_name("name").map_or("", |n| text(n, source));
                let description = node.child_by_field_name("description").map_or("", |d| text(d, source));
                let keyword_line = keyword.start_position().row + 1;
                facts.blocks.push((
                    text(keyword, source).to_string(),
                    name.to_string(),
                    description_lines(description),
                    keyword_line,
                ));
            }
            "tag" => facts.tags.push((text(node, source).to_string(), line)),
            "table_row" => {
                // A cell lies between two pipes; an empty cell has no node.
                let mut cells = Vec::new();
                let mut pipes = 0;
                let mut cell = String::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    match child.kind() {
                        "|" => {
                            if pipes > 0 {
                                cells.push(std::mem::take(&mut cell));
                            }
                            pipes += 1;
                        }
                        "table_cell" => cell = unescape_cell(text(child, source)),
                        _ => {}
                    }
                }
                facts.rows.push((cells, line));
            }
            "doc_string" => {
                let delimiter = node.child_by_field_name("delimiter").expect("delimiter");
                let media_type = node.child_by_field_name("media_type").map_or("", |m| text(m, source));
                let content = node.child_by_field_name("content").map_or("", |c| text(c, source));
                let delimiter = text(delimiter, source);
                let escaped: String = delimiter.chars().flat_map(|c| ['\\', c]).collect();
                let content = trim_lines(content).replace(&escaped, delimiter);
                facts.doc_strings.push((delimiter.to_string(), media_type.to_string(), content, line));
            }
            _ => {}
        }
    });
    facts.sorted()
}

/// The first differing entry of each kind, to keep failure messages readable.
fn difference(expected: &Facts, actual: &Facts) -> String {
    fn first<T: std::fmt::Debug + PartialEq>(kind: &str, expected: &[T], actual: &[T]) -> Option<String> {
        if expected == actual {
            return None;
        }
        let at = expected.iter().zip(actual).position(|(e, a)| e != a).unwrap_or(expected.len().min(actual.len()));
        Some(format!(
            "{kind} #{at}: cucumber {:?}, tree {:?} ({} vs {} entries)",
            expected.get(at),
            actual.get(at),
            expected.len(),
            actual.len()
        ))
    }
    [
        first("step", &expected.steps, &actual.steps),
        first("block", &expected.blocks, &actual.blocks),
        first("tag", &expected.tags, &actual.tags),
        first("row", &expected.rows, &actual.rows),
        first("doc string", &expected.doc_strings, &actual.doc_strings),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("; ")
}

#[test]
fn trees_agree_with_cucumber_ast() {
    let mut disagreements = Vec::new();
    let mut compared = 0;
    for path in good_features() {
        let ast_path = PathBuf::from(format!("{}.ast.ndjson", path.display()));
        let Ok(ndjson) = std::fs::read_to_string(&ast_path) else { continue };
        let ast: Value = ndjson
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find_map(|message| message.get("gherkinDocument").cloned())
            .expect("a gherkinDocument message");
        let source = std::fs::read_to_string(&path).expect("readable feature file");
        let tree = parse(&source);
        let expected = cucumber_facts(&ast["feature"]);
        let actual = tree_facts(&tree, &source);
        if expected != actual {
            disagreements.push(format!("{}: {}", path.display(), difference(&expected, &actual)));
        }
        compared += 1;
    }
    assert_eq!(compared, good_features().len(), "every valid file has its Cucumber AST");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn saffron_dialect() {
    let source = "\
Feature: Checkout
  Fixture: seeded shop
    Given the shop has 3 products

  StepSet: log in as <user>
    Given I open \"/login\"
    When I sign in

  Scenario: buy
    StepSet log in as admin
    Then I see the cart
";
    let tree = parse(source);
    assert!(problems(&tree).is_empty(), "{}", tree.root_node().to_sexp());
    let mut kinds = Vec::new();
    walk(tree.root_node(), &mut |node| kinds.push(node.kind()));
    assert!(kinds.contains(&"fixture"));
    assert!(kinds.contains(&"step_set"));
    assert!(kinds.contains(&"step_set_invocation"));

    let query = Query::new(&language(), super::LOCALS_QUERY).expect("locals query");
    let mut cursor = tree_sitter::QueryCursor::new();
    let mut definitions = Vec::new();
    let mut references = Vec::new();
    use tree_sitter::StreamingIterator;
    let mut matches = cursor.matches(&query, tree.root_node(), source.as_bytes());
    while let Some(found) = matches.next() {
        for capture in found.captures() {
            let name = query.capture_names()[capture.index as usize];
            let captured = text(capture.node, source).to_string();
            match name {
                "local.definition" => definitions.push(captured),
                "local.reference" => references.push(captured),
                _ => {}
            }
        }
    }
    assert_eq!(definitions, ["log in as <user>"]);
    assert_eq!(references, ["log in as admin"]);
}

#[test]
fn language_header_switches_keywords() {
    let source = "# language: de\nFunktionalität: Anmelden\n  Szenario: ok\n    Angenommen ich bin da\n";
    let tree = parse(source);
    assert!(problems(&tree).is_empty(), "{}", tree.root_node().to_sexp());
    assert_eq!(step_lines(&tree, source), [("ich bin da".to_string(), 4)]);
    // Without the header the same text is not German.
    let tree = parse(&source["# language: de\n".len()..]);
    assert!(!problems(&tree).is_empty());
}

// ---------------------------------------------------------------------------------------
// Incremental parsing: after an edit, reusing the old tree gives the same tree as a fresh
// parse. This exercises the scanner state (dialect, line kind, open doc string), the tag
// look-ahead and the keyword-or-description choice.

fn point_at(source: &str, byte: usize) -> tree_sitter::Point {
    let before = &source[..byte];
    let row = before.matches('\n').count();
    let column = before.rfind('\n').map_or(byte, |newline| byte - newline - 1);
    tree_sitter::Point { row, column }
}

fn shape(tree: &Tree) -> String {
    let mut out = String::new();
    walk(tree.root_node(), &mut |node| {
        out.push_str(&format!("{}{:?} ", node.kind(), node.byte_range()));
    });
    out
}

/// Replaces `range` of `source` by `replacement`, reparses incrementally and compares.
fn check_edit(
    parser: &mut Parser,
    source: &str,
    old: &Tree,
    range: std::ops::Range<usize>,
    replacement: &str,
) -> Result<(), String> {
    let edited = format!("{}{}{}", &source[..range.start], replacement, &source[range.end..]);
    let new_end = range.start + replacement.len();
    let mut tree = old.clone();
    tree.edit(&tree_sitter::InputEdit {
        start_byte: range.start,
        old_end_byte: range.end,
        new_end_byte: new_end,
        start_position: point_at(source, range.start),
        old_end_position: point_at(source, range.end),
        new_end_position: point_at(&edited, new_end),
    });
    let incremental = parser.parse(&edited, Some(&tree)).expect("incremental parse");
    let fresh = parser.parse(&edited, None).expect("fresh parse");
    if shape(&incremental) == shape(&fresh) {
        Ok(())
    } else {
        Err(format!(
            "replacing {range:?} by {replacement:?}:\n  incremental {}\n  fresh       {}",
            incremental.root_node().to_sexp(),
            fresh.root_node().to_sexp()
        ))
    }
}

#[test]
fn incremental_reparse_matches_fresh_parse() {
    let mut parser = Parser::new();
    parser.set_language(&language()).expect("ABI-compatible grammar");
    let mut failures = Vec::new();
    let mut sources: Vec<(String, String)> = good_features()
        .into_iter()
        .map(|path| {
            let name = path.file_name().expect("file name").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).expect("readable feature file"))
        })
        .collect();
    sources.push((
        "header edits".into(),
        "# language: fr\nFonctionnalité: f\n  Scénario: s\n    Soit x\n    @t\n    Exemples:\n      | a |\n".into(),
    ));
    for (name, source) in &sources {
        let old = parser.parse(source, None).expect("parse");
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < source.len())
            .collect();
        let step = (line_starts.len() / 12).max(1);
        for &start in line_starts.iter().step_by(step) {
            let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
            let indent = source[start..line_end].len() - source[start..line_end].trim_start().len();
            let first = start + indent;
            let first_len = source[first..line_end].chars().next().map_or(0, char::len_utf8);
            let edits: [(std::ops::Range<usize>, &str); 5] = [
                (first..first + first_len, ""),   // "Given x" -> "iven x"
                (start..start, "x"),              // prefix the line
                (start..line_end, ""),            // blank the line
                (line_end..line_end, "\n\"\"\""), // open a doc string after it
                (start..start, "# language: de\n"),
            ];
            for (range, replacement) in edits {
                if let Err(error) = check_edit(&mut parser, source, &old, range, replacement) {
                    failures.push(format!("{name}: {error}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures, first:\n{}",
        failures.len(),
        failures[..failures.len().min(3)].join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Every keyword of every language in gherkin-languages.json.

#[test]
fn every_language_and_keyword() {
    let path = corpus_dir().join("gherkin-languages.json");
    let json = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let languages: serde_json::Map<String, Value> = serde_json::from_str(&json).expect("languages JSON");
    assert_eq!(languages.len(), 80);
    let list = |language: &Value, key: &str| -> Vec<String> {
        language[key].as_array().expect(key).iter().map(|k| k.as_str().expect("keyword").to_string()).collect()
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for (code, language) in &languages {
        // Each step keyword with the node kind it should produce.
        let mut steps: Vec<(String, &str)> = Vec::new();
        for (key, kind) in [
            ("given", "given_keyword"),
            ("when", "when_keyword"),
            ("then", "then_keyword"),
            ("and", "and_keyword"),
            ("but", "but_keyword"),
        ] {
            for keyword in list(language, key) {
                match steps.iter_mut().find(|(k, _)| *k == keyword) {
                    Some(existing) => existing.1 = "star_keyword",
                    None => steps.push((keyword, kind)),
                }
            }
        }
        let blocks = ["feature", "background", "rule", "scenario", "scenarioOutline", "examples"];
        let rounds = blocks.iter().map(|key| list(language, key).len()).max().unwrap_or(1);
        for round in 0..rounds {
            let pick = |key: &str| {
                let keywords = list(language, key);
                keywords[round % keywords.len()].clone()
            };
            let mut source = format!("# language: {code}\n{}: f\n", pick("feature"));
            source.push_str(&format!("  {}: b\n", pick("background")));
            source.push_str(&format!("  {}: r\n", pick("rule")));
            source.push_str(&format!("  {}: s\n", pick("scenario")));
            for (keyword, _) in &steps {
                source.push_str(&format!("    {keyword}zzz\n"));
            }
            source.push_str(&format!("  {}: o\n    {}<a>\n", pick("scenarioOutline"), steps[0].0));
            source.push_str(&format!("    {}: e\n      | a |\n      | 1 |\n", pick("examples")));

            let tree = parse(&source);
            let found = problems(&tree);
            if !found.is_empty() {
                failures.push(format!("{code}: {}\n{source}", found.join(", ")));
                continue;
            }
            let mut kinds = Vec::new();
            let mut step_keywords = Vec::new();
            walk(tree.root_node(), &mut |node| {
                kinds.push(node.kind());
                if node.kind() == "step" {
                    let keyword = node.child_by_field_name("keyword").expect("keyword");
                    let step_text = node.child_by_field_name("text").map_or("", |t| text(t, &source));
                    step_keywords.push((text(keyword, &source).to_string(), keyword.kind(), step_text.to_string()));
                }
            });
            for kind in ["language_header", "feature", "background", "rule", "scenario", "scenario_outline", "examples"]
            {
                if !kinds.contains(&kind) {
                    failures.push(format!("{code}: no {kind}\n{source}"));
                }
            }
            let expected: Vec<(String, &str, String)> = steps
                .iter()
                .map(|(keyword, kind)| (keyword.trim_end().to_string(), *kind, "zzz".to_string()))
                .chain(std::iter::once((steps[0].0.trim_end().to_string(), steps[0].1, "<a>".to_string())))
                .collect();
            if step_keywords != expected {
                failures.push(format!("{code}: steps {step_keywords:?}, expected {expected:?}"));
            }
            checked += 1;
        }
    }
    assert!(checked >= 80);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures[..failures.len().min(5)].join("\n"));
}

/// The project's example features (`features/`), `.feature` and `.saffron`.
fn example_features() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../features");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|path| saffron_syntax::SourceKind::from_path(path).is_some());
    files.sort();
    files
}

/// (text, line) of every step and StepSet invocation, as saffron-syntax reads the file.
fn syntax_step_lines(path: &Path, source: &str) -> Vec<(String, usize)> {
    let kind = saffron_syntax::SourceKind::from_path(path).expect("feature file");
    let parsed = saffron_syntax::parse(source, kind);
    assert!(parsed.errors.is_empty(), "{}: {:?}", path.display(), parsed.errors);
    parsed.document.steps().iter().map(|step| (step.text.clone(), step.location.line as usize)).collect()
}

/// (text, line) of every step and invocation in the tree.
fn tree_step_lines(tree: &Tree, source: &str) -> Vec<(String, usize)> {
    let mut steps = Vec::new();
    walk(tree.root_node(), &mut |node| match node.kind() {
        "step" => {
            let step_text = node.child_by_field_name("text").map_or("", |t| text(t, source));
            steps.push((step_text.to_string(), node.start_position().row + 1));
        }
        "step_set_invocation" => {
            let name = node.child_by_field_name("name").map_or("", |t| text(t, source));
            steps.push((name.to_string(), node.start_position().row + 1));
        }
        _ => {}
    });
    steps
}

#[test]
fn the_grammar_finds_the_same_steps_as_saffron_syntax() {
    let files: Vec<PathBuf> = good_features().into_iter().chain(example_features()).collect();
    assert!(files.len() > 50, "the conformance corpus and features/");
    for path in files {
        let source = std::fs::read_to_string(&path).expect("readable");
        let tree = parse(&source);
        assert_eq!(problems(&tree), Vec::<String>::new(), "{}", path.display());
        assert_eq!(tree_step_lines(&tree, &source), syntax_step_lines(&path, &source), "{}", path.display());
    }
}
