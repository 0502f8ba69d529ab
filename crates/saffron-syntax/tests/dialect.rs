//! The `.saffron` dialect: StepSets, Fixtures, expansion with provenance, and the errors each
//! misuse gets (with its hint).

use std::path::{Path, PathBuf};

use saffron_syntax::{Project, SourceFile};

fn project(files: &[(&str, &str)]) -> Project {
    Project::new(
        files
            .iter()
            .map(|(path, text)| SourceFile::parse(PathBuf::from(path), text.to_string()).expect("known extension"))
            .collect(),
    )
}

/// `file:line:col code: message (hint)` per diagnostic.
fn diagnostics(project: &Project) -> Vec<String> {
    project
        .diagnostics()
        .iter()
        .map(|d| {
            format!(
                "{}:{}:{} {:?}: {} ({})",
                d.file.display(),
                d.diagnostic.location.line,
                d.diagnostic.location.column,
                d.diagnostic.code,
                d.diagnostic.message,
                d.diagnostic.hint.as_deref().unwrap_or("no hint")
            )
        })
        .collect()
}

const SHARED: &str = "\
Feature: Shared
  StepSet: signed in
    Given I am on the sign-in page
    When I sign in as \"<user>\"
    Then I see the orders page
";

#[test]
fn invocations_expand_with_provenance_background_and_outline_values() {
    let orders = "\
Feature: Orders
  Background:
    Given the shop is open

  Scenario Outline: Search
    StepSet signed in
    When I search for \"<term>\"
    Then I see <count> orders

    Examples:
      | user | term | count |
      | ada  | tea  | 2     |
      | bob  | mugs | 0     |
";
    let project = project(&[("features/shared.steps.saffron", SHARED), ("features/orders.saffron", orders)]);
    assert_eq!(diagnostics(&project), Vec::<String>::new());
    let pickles = project.pickles();
    assert_eq!(pickles.len(), 2);
    let (file, first) = &pickles[0];
    let steps: Vec<(String, &str, Option<&str>, u32, &str)> = first
        .steps
        .iter()
        .map(|step| {
            let provenance = step.provenance(&file.path);
            (
                provenance.file.display().to_string(),
                step.text.as_str(),
                provenance.from_set,
                provenance.line,
                step.step_type.as_str(),
            )
        })
        .collect();
    let orders_file = "features/orders.saffron".to_string();
    let shared_file = "features/shared.steps.saffron".to_string();
    assert_eq!(
        steps,
        vec![
            (orders_file.clone(), "the shop is open", None, 3, "Context"),
            (shared_file.clone(), "I am on the sign-in page", Some("signed in"), 3, "Context"),
            (shared_file.clone(), "I sign in as \"ada\"", Some("signed in"), 4, "Action"),
            (shared_file, "I see the orders page", Some("signed in"), 5, "Outcome"),
            (orders_file.clone(), "I search for \"tea\"", None, 7, "Action"),
            (orders_file, "I see 2 orders", None, 8, "Outcome"),
        ]
    );
    assert_eq!(pickles[1].1.steps[2].text, "I sign in as \"bob\"");

    // A recording is made of the outline's template: placeholders kept, sets expanded.
    let templates = project.scenario_templates();
    assert_eq!(templates.len(), 1);
    let texts: Vec<&str> = templates[0].1.steps.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(texts[2], "I sign in as \"<user>\"");
    assert_eq!(texts[4], "I search for \"<term>\"");
}

#[test]
fn step_sets_are_not_runnable_and_fixtures_are() {
    let text = "\
Feature: Billing
  Fixture: a customer
    Given a customer exists

  Scenario: Pay
    StepSet signed in
    Then I see the invoice
";
    let project = project(&[("shared.steps.saffron", SHARED), ("billing.saffron", text)]);
    let names: Vec<String> = project.pickles().iter().map(|(_, p)| p.name.clone()).collect();
    assert_eq!(names, vec!["a customer", "Pay"]);
}

#[test]
fn a_duplicate_set_name_suggests_removing_the_colon() {
    let text = "\
Feature: Checkout
  Scenario: Pay
    StepSet: signed in
    Then I see the invoice
";
    let project = project(&[("a.steps.saffron", SHARED), ("checkout.saffron", text)]);
    assert_eq!(
        diagnostics(&project),
        vec![
            "checkout.saffron:3:14 DuplicateStepSet: StepSet 'signed in' is already defined at a.steps.saffron:2 \
             (did you mean to invoke it? remove the colon: 'StepSet signed in')"
        ]
    );
}

#[test]
fn an_unknown_set_names_the_closest_one() {
    let text = "\
Feature: Checkout
  Scenario: Pay
    StepSet signed on
    StepSet something else entirely
";
    let project = project(&[("shared.steps.saffron", SHARED), ("checkout.saffron", text)]);
    assert_eq!(
        diagnostics(&project),
        vec![
            "checkout.saffron:3:13 UnknownStepSet: unknown StepSet 'signed on' (did you mean 'StepSet signed in'?)",
            "checkout.saffron:4:13 UnknownStepSet: unknown StepSet 'something else entirely' (define it in a .saffron \
             file with 'StepSet: something else entirely' and its steps)",
        ]
    );
}

#[test]
fn sets_do_not_nest_and_take_no_examples() {
    let text = "\
Feature: Nesting
  StepSet: outer
    StepSet signed in
    Then done

    Examples:
      | a |
      | 1 |
";
    let project = project(&[("shared.steps.saffron", SHARED), ("nesting.saffron", text)]);
    assert_eq!(
        diagnostics(&project),
        vec![
            "nesting.saffron:3:5 NestedStepSet: StepSet 'outer' invokes StepSet 'signed in': sets cannot be nested \
             (copy that set's steps into this set, or invoke both sets from the scenario)",
            "nesting.saffron:6:5 StepSetWithExamples: a StepSet cannot have Examples (put the Examples on the \
             Scenario Outline that invokes the set; its <column> values reach the set's steps)",
        ]
    );
}

#[test]
fn fixture_rules() {
    let text = "\
Feature: Fixtures
  Fixture: first
    Given a customer

  Fixture: second
    Given another customer

    Examples:
      | a |
      | 1 |

  Rule: inside
    Fixture: third
      Given a third customer
";
    let project = project(&[("fixtures.saffron", text)]);
    let found = diagnostics(&project);
    let codes: Vec<&str> =
        found.iter().map(|d| d.split_whitespace().nth(1).unwrap_or_default().trim_end_matches(':')).collect();
    assert_eq!(codes, ["SecondFixture", "FixtureWithExamples", "SecondFixture", "FixtureInRule"]);
    assert!(found[0].starts_with("fixtures.saffron:5:12 SecondFixture: a feature has at most one Fixture"));
}

#[test]
fn dialect_keywords_in_a_feature_file_ask_for_a_rename() {
    let text = "\
Feature: Plain Gherkin
  StepSet: login
    Given I log in

  Scenario: Use it
    StepSet login
";
    let project = project(&[("plain.feature", text)]);
    assert_eq!(
        diagnostics(&project),
        vec![
            "plain.feature:2:3 DialectInFeatureFile: 'StepSet:' is a .saffron keyword, not Gherkin (rename the file \
             to .saffron: the dialect is a superset of Gherkin)",
            "plain.feature:6:5 DialectInFeatureFile: 'StepSet' is a .saffron keyword, not Gherkin (rename the file \
             to .saffron: the dialect is a superset of Gherkin)",
        ]
    );
}

#[test]
fn every_syntax_error_has_a_hint() {
    let text = "\
Feature: Broken
  Scenario: half typed
    Given a step
    this line is not a step
      | a | b |
      | c |
    \"\"\"
    never closed
";
    let project = project(&[("broken.feature", text)]);
    let found = project.diagnostics();
    assert!(found.len() >= 3, "{found:?}");
    for d in &found {
        assert!(d.diagnostic.hint.as_deref().is_some_and(|h| !h.is_empty()), "no hint: {d:?}");
        assert_eq!(d.file, Path::new("broken.feature"));
    }
    // The parser recovers: the scenario and its first step are still there.
    let document = &project.files[0].parsed.document;
    assert_eq!(document.scenarios().count(), 1);
    assert_eq!(document.steps()[0].text, "a step");
}
