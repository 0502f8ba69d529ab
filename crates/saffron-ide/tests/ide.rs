//! Editor features on small fixtures with a `$0` cursor, checked against snapshots
//! (refresh with `UPDATE_EXPECT=1 cargo test -p saffron-ide`).

use std::path::{Path, PathBuf};

use expect_test::{Expect, expect};
use saffron_ide::*;
use saffron_index::{Change, IndexHost};

/// Files separated by `//- path` lines; one of them holds `$0`. Files under `.saffron/cache`
/// are recordings.
fn fixture(text: &str) -> (IndexHost, PathBuf, usize) {
    let mut host = IndexHost::new();
    let mut cursor = None;
    let mut last_file = PathBuf::new();
    let mut changes = Vec::new();
    for chunk in text.split("//- ").filter(|c| !c.trim().is_empty()) {
        let (path, body) = chunk.split_once('\n').expect("a path line");
        let path = PathBuf::from(path.trim());
        let mut body = body.to_string();
        if let Some(at) = body.find("$0") {
            body.replace_range(at..at + 2, "");
            cursor = Some((path.clone(), at));
        }
        if path.starts_with(".saffron/cache") {
            let recording = saffron_recording::parse_recording(&body).expect("valid recording");
            changes.push(Change::SetRecording { path, recording: Box::new(recording) });
        } else {
            last_file = path.clone();
            changes.push(Change::SetFile { path, text: body });
        }
    }
    host.apply_all(changes);
    let (path, offset) = cursor.unwrap_or((last_file, 0));
    (host, path, offset)
}

/// A recording of `steps` (kind, text, actions JSON) with a correct digest.
fn recording(feature: &str, scenario: &str, steps: &[(&str, &str, &str)]) -> String {
    let steps: Vec<saffron_recording::RecordedStep> = steps
        .iter()
        .map(|(kind, text, actions)| {
            let kind = match *kind {
                "context" => saffron_recording::StepKind::Context,
                "action" => saffron_recording::StepKind::Action,
                _ => saffron_recording::StepKind::Outcome,
            };
            let actions: Vec<saffron_recording::Action> = serde_json_actions(actions);
            saffron_recording::RecordedStep::new(saffron_recording::StepSpec::new(kind, *text), actions)
        })
        .collect();
    let recording = saffron_recording::Recording::new(feature, scenario, steps);
    String::from_utf8(saffron_recording::to_json_bytes(&recording).expect("json")).expect("utf-8")
}

fn serde_json_actions(json: &str) -> Vec<saffron_recording::Action> {
    let value: serde_json_value::Value = serde_json_value::from_str(json).expect("actions json");
    serde_json_value::from_value(value).expect("actions")
}

mod serde_json_value {
    pub use serde_json::{Value, from_str, from_value};
}

fn project() -> String {
    let sign_in = recording(
        "features/sign_in.feature",
        "Sign in",
        &[
            ("context", "I am on the sign-in page", r#"[{"type":"goto","url":"/login"}]"#),
            (
                "action",
                "I sign in with the demo account",
                r#"[{"type":"fill","target":{"role":"textbox","name":"Email"},"value":"demo@saffron.test"},{"type":"click","target":{"role":"button","name":"Sign in"}}]"#,
            ),
            (
                "outcome",
                "I see the orders page",
                r#"[{"type":"expectVisible","target":{"role":"heading","name":"Orders"}}]"#,
            ),
        ],
    );
    format!(
        "//- features/shared.steps.saffron
Feature: Shared
  StepSet: signed in
    Given I am on the sign-in page
    When I sign in with the demo account
//- features/sign_in.feature
Feature: Sign in
  Scenario: Sign in
    Given I am on the sign-in page
    When I sign in with the demo account
    Then I see the orders page
//- .saffron/cache/sign-in/sign-in.json
{sign_in}"
    )
}

fn with_file(file: &str) -> (IndexHost, PathBuf, usize) {
    fixture(&format!("{}\n{file}", project()))
}

fn render_completions(host: &IndexHost, path: &Path, offset: usize) -> String {
    let snapshot = host.snapshot();
    let (items, incomplete) = completions(&snapshot, path, offset);
    let mut out: Vec<String> = items
        .iter()
        .map(|item| {
            format!(
                "{:?} {} | {} | insert {:?}{}",
                item.kind,
                item.label,
                item.description.as_ref().map(ToString::to_string).unwrap_or_default(),
                item.insert_text(),
                if item.is_snippet { " (snippet)" } else { "" }
            )
        })
        .collect();
    if incomplete {
        out.push("(incomplete)".into());
    }
    out.join("\n")
}

fn check_completions(file: &str, expect: Expect) {
    let (host, path, offset) = with_file(file);
    expect.assert_eq(&render_completions(&host, &path, offset));
}

#[test]
fn completion_offers_the_vocabulary_ranked_prefix_then_recorded_then_usage() {
    check_completions(
        "//- features/orders.saffron
Feature: Orders
  Scenario: Search
    StepSet signed in
    When I search for \"tea\" as <user>
    Then I se$0
",
        expect![[r#"
            Step I see the orders page | ✓ recorded · 1× | insert "I see the orders page"
            Step I search for "tea" as <user> | ○ unrecorded · 1× | insert "I search for \"${1:tea}\" as ${2:user}" (snippet)"#]],
    );
}

#[test]
fn completion_after_stepset_offers_set_names() {
    check_completions(
        "//- features/orders.saffron
Feature: Orders
  Scenario: Search
    StepSet sig$0
",
        expect![[r#"StepSet signed in | StepSet · 2 steps | insert "signed in""#]],
    );
}

#[test]
fn completion_at_block_level_offers_keywords_of_the_file_language() {
    check_completions(
        "//- features/fr.feature
# language: fr
Fonctionnalité: Commandes
  Sc$0
",
        expect![[r#"Keyword Scénario: | français | insert "Scénario: ""#]],
    );
}

#[test]
fn hover_shows_status_usage_and_recorded_actions() {
    let (host, path, offset) = with_file(
        "//- features/orders.saffron
Feature: Orders
  Scenario: Search
    When I sign in with the demo acc$0ount
",
    );
    let hover = hover(&host.snapshot(), &path, offset).expect("hover");
    expect![[r#"
        **✓ recorded** · written 3× · in 1 recording

        _recorded: replays for free_

        recorded as:
        - `fill textbox "Email" with "demo@saffron.test"`
        - `click button "Sign in"`"#]]
    .assert_eq(&hover.markdown);
}

#[test]
fn completion_after_as_offers_the_sessions_the_project_uses() {
    let recorded = recording(
        "features/orders_api.feature",
        "Two clients",
        &[(
            "action",
            "As \"carol\" the API client signs in",
            r#"[{"type":"request","service":"app","method":"POST","path":"/api/session","session":"carol"}]"#,
        )],
    );
    let source = format!(
        "//- features/orders_api.feature
@api
Feature: Orders
  Scenario: Two clients
    Given As \"alice\" the API client signs in
    And As \"alice\" the API client orders tea
    When As \"bob\" the API client reads the orders
    Then As \"a$0\" the orders are listed
//- .saffron/cache/orders-api/two-clients.json
{recorded}"
    );
    let (host, path, offset) = fixture(&source);
    expect![[r#"Session alice | session · in 2 step(s) | insert "alice""#]]
        .assert_eq(&render_completions(&host, &path, offset));
    let (host, path, offset) = fixture(&source.replace("As \"a$0\"", "As \"$0"));
    expect![[r#"
        Session alice | session · in 2 step(s) | insert "alice"
        Session bob | session · in 1 step(s) | insert "bob"
        Session carol | session · in 0 step(s) | insert "carol""#]]
    .assert_eq(&render_completions(&host, &path, offset));
}

/// Completion offers the steps recorded as requests with the rest of the vocabulary, and says
/// which they are.
#[test]
fn completion_says_which_steps_are_api_steps() {
    let orders = recording(
        "features/orders_api.feature",
        "Order",
        &[
            (
                "action",
                "the API client orders 2 \"Tea\"",
                r#"[{"type":"request","service":"app","method":"POST","path":"/api/orders"}]"#,
            ),
            ("outcome", "the order is listed", r#"[{"type":"expectVisible","target":{"role":"row"}}]"#),
        ],
    );
    let (host, path, offset) = fixture(&format!(
        "//- features/orders_api.feature
@api
Feature: Orders
  Scenario: Order
    When the API client orders 2 \"Tea\"
    Then the order is listed
  Scenario: Another
    When the $0
//- .saffron/cache/orders-api/order.json
{orders}"
    ));
    let snapshot = host.snapshot();
    let (items, _) = completions(&snapshot, &path, offset);
    let details: Vec<String> =
        items.iter().map(|item| format!("{} | {}", item.label, item.detail.as_deref().unwrap_or_default())).collect();
    expect![[r#"
        the API client orders 2 "Tea" | recorded: replays for free · API
        the order is listed | recorded: replays for free"#]]
    .assert_eq(&details.join("\n"));
    assert_eq!(
        saffron_ide::completion_detail(&snapshot, "the API client orders 2 \"Tea\"").as_deref(),
        Some("recorded: replays for free · API")
    );
}

#[test]
fn hover_on_an_api_step_says_so_and_shows_its_requests() {
    let orders = recording(
        "features/orders_api.feature",
        "Order",
        &[(
            "action",
            "the API client orders 2 \"Tea\"",
            r#"[{"type":"request","service":"app","method":"POST","path":"/api/orders","body":{"quantity":2}},{"type":"expectStatus","status":"201"}]"#,
        )],
    );
    let (host, path, offset) = fixture(&format!(
        "//- features/orders_api.feature
@api
Feature: Orders
  Scenario: Order
    When the API client ord$0ers 2 \"Tea\"
//- .saffron/cache/orders-api/order.json
{orders}"
    ));
    let hover = hover(&host.snapshot(), &path, offset).expect("hover");
    expect![[r#"
        **✓ recorded** · written 1× · in 1 recording

        _recorded: replays for free_

        _an API step: Saffron's HTTP client sends its requests, in an `@api` scenario_

        recorded as:
        - `send POST /api/orders to app`
        - `expect status 201`"#]]
    .assert_eq(&hover.markdown);
}

#[test]
fn hover_shows_the_scope_of_a_recorded_target() {
    let cache = recording(
        "features/tasks.feature",
        "Ship an order",
        &[(
            "action",
            "I ship order 1002",
            r#"[{"type": "check", "target": {"role": "checkbox", "within": {"role": "listitem", "css": ["li"], "hasText": "Order 1002"}}},
                {"type": "click", "target": {"css": ["button.delete"], "within": {"testId": "orders", "within": {"role": "dialog", "name": "Orders"}}}}]"#,
        )],
    );
    let (host, path, offset) = fixture(&format!(
        "//- features/tasks.feature
Feature: Tasks
  Scenario: Ship an order
    When I ship or$0der 1002
//- .saffron/cache/tasks/ship-an-order.json
{cache}"
    ));
    let hover = hover(&host.snapshot(), &path, offset).expect("hover");
    expect![[r#"
        **✓ recorded** · written 1× · in 1 recording

        _recorded: replays for free_

        recorded as:
        - `check checkbox within listitem with text "Order 1002"`
        - `click css "button.delete" within test id "orders" within dialog "Orders"`"#]]
    .assert_eq(&hover.markdown);
}

#[test]
fn hover_on_an_invocation_shows_the_expansion() {
    let (host, path, offset) = with_file(
        "//- features/orders.saffron
Feature: Orders
  Scenario: Search
    StepSet sig$0ned in
",
    );
    let hover = hover(&host.snapshot(), &path, offset).expect("hover");
    expect![[r#"
        **StepSet** `signed in` · features/shared.steps.saffron:2

        ```gherkin
        Given I am on the sign-in page
        When I sign in with the demo account
        ```

        - ✓ recorded I am on the sign-in page
        - ✓ recorded I sign in with the demo account

        invoked 1×"#]]
    .assert_eq(&hover.markdown);
}

#[test]
fn hover_on_a_session_step_set_says_it_signs_in_once() {
    let (host, path, offset) = fixture(
        "//- features/shared.steps.saffron
Feature: Shared
  @session
  StepSet: sig$0ned in
    Given I am on the sign-in page
//- features/orders.saffron
Feature: Orders
  Scenario: Search
    StepSet signed in
",
    );
    let hover = hover(&host.snapshot(), &path, offset).expect("hover");
    expect![[r#"
        **StepSet** `signed in` · features/shared.steps.saffron:3

        ```gherkin
        Given I am on the sign-in page
        ```

        - ○ unrecorded I am on the sign-in page

        invoked 1×

        **signs in once per run** (`@session`): the first scenario that starts with it performs it; the later ones restore the session it left (cookies, localStorage) instead"#]].assert_eq(&hover.markdown);
}

fn render_diagnostics(host: &IndexHost, path: &Path) -> String {
    let snapshot = host.snapshot();
    let text = &snapshot.file(path).expect("file").source.text;
    diagnostics(&snapshot, path)
        .iter()
        .map(|d| {
            format!(
                "{:?} {} [{}] {} | hint: {}",
                d.severity,
                &text[d.span.start..d.span.end],
                d.code,
                d.message,
                d.hint.as_deref().unwrap_or("-")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn diagnostics_flag_near_duplicates_unknown_sets_and_stale_recordings() {
    let (host, path, _) = with_file(
        "//- features/orders.saffron
Feature: Orders
  Scenario: Search
    StepSet signed on
    Then I should see the orders page
",
    );
    expect![[r#"
        Error signed on [unknown-step-set] unknown StepSet 'signed on' | hint: did you mean 'StepSet signed in'?
        Warning I should see the orders page [near-duplicate] near-duplicate of the existing step "I see the orders page" (similarity 0.83), which is recorded and replays for free | hint: use the existing wording: a different wording is another step to record (✓ recorded)"#]]
    .assert_eq(&render_diagnostics(&host, &path));

    // Editing the recorded scenario makes its recording stale.
    let (mut host, _, _) = with_file("");
    let edited =
        "Feature: Sign in\n  Scenario: Sign in\n    Given I am on the sign-in page\n    Then I see the orders page\n";
    host.apply(Change::SetFile { path: PathBuf::from("features/sign_in.feature"), text: edited.into() });
    expect![[r#"Information Scenario: Sign in [stale-recording] the recording of this scenario is stale: its steps changed since it was recorded | hint: the next run records it again (.saffron/cache/sign-in/sign-in.json); steps that are already recorded elsewhere are reused"#]]
    .assert_eq(&render_diagnostics(&host, Path::new("features/sign_in.feature")));
}

/// A quote that no other closes is a warning at the quote, in the editor as in `saffron check`.
#[test]
fn diagnostics_flag_an_unclosed_quote() {
    let (host, path, _) = with_file(
        "//- features/tea.feature
Feature: Tea
  Scenario: Search
    When I search for \"green tea
    Then I see \"green tea\" in the users' list
",
    );
    expect![[r#"Warning " [unclosed-quote] this quote is not closed: `"green tea` is read as words, not as a value | hint: close the value with a second `"`, or remove the quote"#]]
    .assert_eq(&render_diagnostics(&host, &path));
}

/// The better-established wording is another use of the same step; the fix writes it with the
/// step's own value, and the step used with another value alone is not flagged.
#[test]
fn a_near_duplicate_with_other_values_keeps_its_own() {
    let (host, path, _) = with_file(
        "//- features/search.feature
Feature: Search
  Scenario: A
    When I search all the orders of the customer named \"Ada\" by their name
    Then I search all the orders of the customer named \"Ada\" by their name
  Scenario: B
    When I search all the orders of the customer named \"Bob\" by their name
    When I search all the order of the customer named \"Zed\" by their name
",
    );
    let snapshot = host.snapshot();
    let near: Vec<(String, Option<String>)> = diagnostics(&snapshot, &path)
        .into_iter()
        .filter(|d| d.code == "near-duplicate")
        .map(|d| (d.message, d.replacement))
        .collect();
    assert_eq!(
        near,
        [(
            "near-duplicate of the existing step \"I search all the orders of the customer named \"Ada\" by their \
             name\" (similarity 0.71)"
                .to_string(),
            Some("I search all the orders of the customer named \"Zed\" by their name".to_string())
        )]
    );
}

#[test]
fn quick_fixes_use_the_existing_wording_and_the_intended_set() {
    let (host, path, _) = with_file(
        "//- features/orders.saffron
Feature: Orders
  Scenario: Search
    StepSet signed on
    Then I should see the orders page
",
    );
    let snapshot = host.snapshot();
    let text = &snapshot.file(&path).expect("file").source.text;
    let actions = code_actions(&snapshot, &path, Span::new(0, text.len()));
    let rendered: Vec<String> = actions
        .iter()
        .map(|a| {
            let (_, edits) = &a.change.edits[0];
            format!(
                "{} => {:?} replaces {:?}",
                a.title,
                edits[0].new_text,
                &text[edits[0].span.start..edits[0].span.end]
            )
        })
        .collect();
    expect![[r#"
        Invoke 'StepSet signed in' => "signed in" replaces "signed on"
        Use the existing wording 'I see the orders page' (recorded: replays for free) => "I see the orders page" replaces "I should see the orders page""#]]
    .assert_eq(&rendered.join("\n"));
}

/// A lone quote is closed where the step ends (its trailing blanks and line break kept out),
/// or removed.
#[test]
fn quick_fixes_close_or_remove_an_unclosed_quote() {
    let (host, path, _) = with_file(
        "//- features/tea.feature
Feature: Tea
  Scenario: Search
    When I search for \"green tea  \r
    Then I see 5\" screens
",
    );
    let snapshot = host.snapshot();
    let text = &snapshot.file(&path).expect("file").source.text;
    let fixed: Vec<String> = code_actions(&snapshot, &path, Span::new(0, text.len()))
        .iter()
        .map(|action| {
            let (_, edits) = &action.change.edits[0];
            let mut fixed = text.clone();
            fixed.replace_range(edits[0].span.start..edits[0].span.end, &edits[0].new_text);
            let line = text[..edits[0].span.start].matches('\n').count();
            let preferred = if action.is_preferred { " (preferred)" } else { "" };
            format!("{}{preferred} => {:?}", action.title, fixed.lines().nth(line).unwrap_or(""))
        })
        .collect();
    expect![[r#"
        Close the quote at the end of the step (preferred) => "    When I search for \"green tea\"  "
        Remove the quote => "    When I search for green tea  "
        Close the quote at the end of the step (preferred) => "    Then I see 5\" screens\""
        Remove the quote => "    Then I see 5 screens""#]]
    .assert_eq(&fixed.join("\n"));
}

#[test]
fn a_feature_file_using_the_dialect_can_be_renamed() {
    let (host, path, _) = fixture("//- features/plain.feature\nFeature: P\n  Scenario: S\n    StepSet login\n");
    let actions = code_actions(&host.snapshot(), &path, Span::new(0, 60));
    let rename = actions.iter().find(|a| !a.change.renamed_files.is_empty()).expect("rename action");
    assert_eq!(rename.title, "Rename the file to plain.saffron");
    assert_eq!(rename.change.renamed_files, vec![(path.clone(), PathBuf::from("features/plain.saffron"))]);
}

#[test]
fn definition_and_references() {
    let (host, path, offset) = with_file(
        "//- features/orders.saffron
Feature: Orders
  Scenario: Search
    StepSet si$0gned in
    Given I am on the sign-in page
",
    );
    let snapshot = host.snapshot();
    let target = definition(&snapshot, &path, offset).expect("definition");
    let text = &snapshot.file(&target.file).expect("file").source.text;
    assert_eq!(
        (target.file.to_str(), &text[target.span.start..target.span.end]),
        (Some("features/shared.steps.saffron"), "signed in")
    );

    let set_refs: Vec<String> =
        references(&snapshot, &path, offset).iter().map(|r| r.file.display().to_string()).collect();
    assert_eq!(set_refs, ["features/orders.saffron", "features/shared.steps.saffron"]);

    let step_offset = snapshot.file(&path).expect("file").source.text.find("I am on").expect("step");
    let step_refs: Vec<String> =
        references(&snapshot, &path, step_offset).iter().map(|r| r.file.display().to_string()).collect();
    assert_eq!(step_refs, ["features/orders.saffron", "features/shared.steps.saffron", "features/sign_in.feature"]);
}

#[test]
fn rename_a_step_everywhere_and_in_its_recordings() {
    let (host, path, offset) = with_file(
        "//- features/orders.saffron
Feature: Orders
  Scenario: Search
    Then I see the ord$0ers page
",
    );
    let snapshot = host.snapshot();
    let change = rename(&snapshot, &path, offset, "I see the list of orders").expect("rename");
    let files: Vec<String> =
        change.edits.iter().map(|(file, edits)| format!("{} ({} edit)", file.display(), edits.len())).collect();
    assert_eq!(files, ["features/orders.saffron (1 edit)", "features/sign_in.feature (1 edit)"]);
    assert_eq!(change.recordings.len(), 1);
    let (recording_path, recording) = &change.recordings[0];
    assert_eq!(recording_path, Path::new(".saffron/cache/sign-in/sign-in.json"));
    assert_eq!(recording.steps[2].text, "I see the list of orders");
    // The digest follows the new text, so the renamed scenario stays fresh.
    assert!(recording.is_fresh_for(&recording.step_specs()));
    assert_eq!(rename(&snapshot, &path, offset, "  "), Err(RenameError::InvalidText("the new text is empty")));
}

#[test]
fn formatting_indents_by_nesting_and_aligns_tables() {
    let text = "@tag\nFeature: F\n    Some description\n      indented more\nScenario Outline: S\n        # a comment\n  Given a table:\n |a| bb |\n |ccc|d|\n     When <x>   \n   \"\"\"json\n   {\n     \"k\": 1\n   }\n   \"\"\"\nExamples:\n| x |\n|  1|\n";
    let parsed = saffron_syntax::parse(text, saffron_syntax::SourceKind::Feature);
    let formatted = format(text, &parsed.document, !parsed.errors.is_empty()).expect("formatted");
    expect![[r#"
        @tag
        Feature: F
          Some description
            indented more
          Scenario Outline: S
            # a comment
            Given a table:
              | a   | bb |
              | ccc | d  |
            When <x>
              """json
              {
                "k": 1
              }
              """
            Examples:
              | x |
              | 1 |
    "#]]
    .assert_eq(&formatted);
    let again = saffron_syntax::parse(&formatted, saffron_syntax::SourceKind::Feature);
    assert_eq!(format(&formatted, &again.document, false).as_deref(), Some(formatted.as_str()), "idempotent");
    let broken = saffron_syntax::parse("Feature: x\n  nope |\n", saffron_syntax::SourceKind::Feature);
    assert_eq!(format("not gherkin\n", &broken.document, true), None);
}

#[test]
fn symbols_folding_lenses_and_tokens() {
    let (host, _, _) = with_file("");
    let snapshot = host.snapshot();
    let path = Path::new("features/sign_in.feature");
    let file = snapshot.file(path).expect("file");
    let symbols = document_symbols(&file.source.parsed.document);
    assert_eq!(symbols[0].name, "Sign in");
    assert_eq!(symbols[0].children[0].kind, SymbolKind::Scenario);
    assert!(!folding_ranges(&file.source.parsed.document, &file.source.text).is_empty());
    let lenses: Vec<String> = code_lenses(&snapshot, path)
        .iter()
        .map(|l| format!("{} {} {:?}", l.command.title, l.command.command, l.command.arguments))
        .collect();
    expect![[r#"
        ▶ Run feature saffron.runFeature ["features/sign_in.feature"]
        ▶ Run scenario (replays for free) saffron.run ["features/sign_in.feature:2"]"#]]
    .assert_eq(&lenses.join("\n"));
    let text = "Feature: F\n  Scenario: S\n    Given I add 2 \"tea\" for <who>\n";
    let parsed = saffron_syntax::parse(text, saffron_syntax::SourceKind::Feature);
    let tokens: Vec<String> = semantic_tokens(&parsed.document, text)
        .iter()
        .map(|t| format!("{:?} {:?}", t.kind, &text[t.span.start..t.span.end]))
        .collect();
    expect![[r#"
        Keyword "Feature:"
        Namespace "F"
        Keyword "Scenario:"
        Namespace "S"
        Keyword "Given"
        Function "I add "
        Number "2"
        Function " "
        String "\"tea\""
        Function " for "
        Parameter "<who>""#]]
    .assert_eq(&tokens.join("\n"));
}

/// A vocabulary large enough for every way the step list is found: thousands of texts, some
/// sharing a prefix by the hundred, some words in most texts and some in few, used 1–7 times.
fn large_vocabulary() -> IndexHost {
    let verbs = ["click", "see", "open", "choose", "want to create", "want to delete", "add", "remove"];
    let things = ["the button", "a new channel", "the product", "an order", "the cart", "a zone", "the tax"];
    let mut changes = Vec::new();
    let mut n = 0usize;
    for (f, verb) in verbs.iter().enumerate() {
        let mut text = String::from("Feature: F\n");
        for thing in things {
            for variant in 0..60 {
                n += 1;
                let step = match variant % 4 {
                    0 => format!("I {verb} {thing} number {variant}"),
                    1 => format!("the shop {verb}s {thing} {variant}"),
                    2 => format!("I {verb} <count> of {thing} {variant}"),
                    _ => format!("{thing} is {verb} {variant} times"),
                };
                for _ in 0..=(n * 7919 % 7) {
                    text.push_str(&format!("  Scenario: S{n}\n    Given {step}\n"));
                }
            }
        }
        changes.push(Change::SetFile { path: PathBuf::from(format!("features/f{f}.feature")), text });
    }
    let mut host = IndexHost::new();
    host.apply_all(changes);
    host
}

/// The step list as its definition reads: every step pattern with a variant matching what was
/// typed, ranked in context ([`rank_steps`]) with every text of the vocabulary a candidate;
/// the first `MAX_STEP_ITEMS`.
fn ranked_by_definition(snapshot: &saffron_index::Snapshot, path: &Path, typed: &str) -> (Vec<String>, bool) {
    let context = StepContext {
        previous: saffron_index::BLOCK_START,
        role: saffron_index::StepRole::Action,
        file: Some(path),
        ..StepContext::NONE
    };
    let typed = typed.trim_start().to_lowercase();
    let every_text = snapshot.entries_unordered().map(|entry| entry.text.as_ref());
    let (steps, incomplete) = rank_steps(snapshot, &context, &typed, every_text, &Excluded::NONE, MAX_STEP_ITEMS);
    (steps.into_iter().map(|step| step.text.to_string()).collect(), incomplete)
}

#[test]
fn step_lists_match_their_definition_on_a_large_vocabulary() {
    let host = large_vocabulary();
    let snapshot = host.snapshot();
    assert!(snapshot.entry_count() > 2_000, "{}", snapshot.entry_count());
    // Typed in a file the index does not have, so no text is the line being typed.
    let path = Path::new("features/new.feature");
    let typed = [
        "",
        "I",
        "I ",
        "I w",
        "I want",
        "I want to c",
        "I want to create a n",
        "the",
        "the shop ",
        "the shop a",
        "the button",
        "the button is",
        "a zone is cl",
        "sh cl",
        "I cl the",
        "I click the button number 1",
        "zone",
        "tax 5",
        "number",
        "xyz",
        "I see a",
        "I add <co",
        "<count> of",
        "ad <count",
    ];
    for typed in typed {
        let text = format!("Feature: F\n  Scenario: S\n    When {typed}\n");
        let (items, incomplete) = completions_in(&snapshot, path, &text, text.len() - 1);
        // One item per pattern, labelled by the variant its defaults write: compared by pattern.
        let pattern = saffron_index::tokens::pattern_key;
        let labels: Vec<String> = items.iter().map(|item| pattern(&item.label)).collect();
        let (expected, _) = ranked_by_definition(&snapshot, path, typed);
        let expected: Vec<String> = expected.iter().map(|text| pattern(text)).collect();
        assert_eq!(labels, expected, "typed {typed:?}");
        assert!(incomplete || labels.len() < MAX_STEP_ITEMS, "typed {typed:?}");
    }
}

#[test]
fn the_line_being_typed_is_not_offered_even_as_the_index_last_saw_it() {
    let (host, path, _) = with_file(
        "//- features/typing.feature\nFeature: Typing\n  Scenario: s\n    When I see the orders of last week\n",
    );
    let snapshot = host.snapshot();
    let labels = |text: &str| -> Vec<String> {
        let (items, _) = completions_in(&snapshot, &path, text, text.len() - 1);
        items.into_iter().map(|item| item.label.into_owned()).collect()
    };
    // The editor is a few keystrokes ahead of the index: characters were deleted since.
    let behind = labels("Feature: Typing\n  Scenario: s\n    When I see the orders\n");
    assert!(!behind.iter().any(|label| label == "I see the orders of last week"), "{behind:?}");
    // Up to date: the typed text is the indexed one.
    let current = labels("Feature: Typing\n  Scenario: s\n    When I see the orders of last week\n");
    assert!(!current.iter().any(|label| label == "I see the orders of last week"), "{current:?}");
    // A line was added above since: the indexed line number is stale, the text is not.
    let moved = labels("Feature: Typing\n\n  Scenario: s\n    When I see the orders of last week\n");
    assert!(!moved.iter().any(|label| label == "I see the orders of last week"), "{moved:?}");
    // The same text written on another line of another file is a real suggestion.
    let other = "Feature: O\n  Scenario: s\n    When I see the\n";
    let (elsewhere, _) = completions_in(&snapshot, Path::new("features/other.feature"), other, other.len() - 1);
    assert!(elsewhere.iter().any(|item| item.label == "I see the orders of last week"), "{elsewhere:?}");
}

/// The step list with each item's detail, for the ranking tests.
fn render_ranked(text: &str) -> String {
    let (host, path, offset) = fixture(text);
    let snapshot = host.snapshot();
    let (items, _) = completions(&snapshot, &path, offset);
    items
        .iter()
        .map(|item| {
            format!(
                "{} | {} | {} | insert {:?}",
                item.label,
                item.description.as_ref().map(ToString::to_string).unwrap_or_default(),
                item.detail.as_deref().unwrap_or_default(),
                item.insert_text(),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Steps a shop's features share: "I save my changes" is followed by the notification check
/// everywhere, and "I should see the dashboard" is the most used outcome.
const SHOP: &str = "//- features/admin/products/edit.feature
Feature: Edit products
  Scenario: a
    Given I am logged in as an administrator
    When I rename the product to \"Mug\"
    And I save my changes
    Then I should be notified that it has been successfully edited
  Scenario: b
    Given I am logged in as an administrator
    When I rename the product to \"Cup\"
    And I save my changes
    Then I should be notified that it has been successfully edited
//- features/shop/home.feature
Feature: Home
  Scenario: a
    Given I am logged in as a customer
    When I open the home page
    Then I should see the dashboard
  Scenario: b
    Given I am logged in as a customer
    When I open the home page
    Then I should see the dashboard
  Scenario: c
    Given I am logged in as a customer
    When I open the home page
    Then I should see the dashboard
";

#[test]
fn after_a_step_what_followed_it_elsewhere_comes_first() {
    let file = "//- features/admin/taxes/edit.feature
Feature: Edit taxes
  Scenario: a
    Given I am logged in as an administrator
    When I rename the tax to \"VAT\"
    And I save my changes
    Then $0
";
    // The steps this scenario already wrote come after the others (a pattern with values
    // excepted: it is written once per value).
    expect![[r#"
        I should be notified that it has been successfully edited | ○ unrecorded · 2× | unrecorded: using it costs a recording | insert "I should be notified that it has been successfully edited"
        I should see the dashboard | ○ unrecorded · 3× | unrecorded: using it costs a recording | insert "I should see the dashboard"
        I am logged in as a customer | ○ unrecorded · 3× | unrecorded: using it costs a recording | insert "I am logged in as a customer"
        I open the home page | ○ unrecorded · 3× | unrecorded: using it costs a recording | insert "I open the home page"
        I rename the product to "Cup" | ○ unrecorded · 2× | 2 variants · unrecorded: using it costs a recording | insert "I rename the product to \"${1:Cup}\""
        I am logged in as an administrator | ○ unrecorded · 3× | unrecorded: using it costs a recording | insert "I am logged in as an administrator"
        I save my changes | ○ unrecorded · 3× | unrecorded: using it costs a recording | insert "I save my changes"
        I rename the tax to "VAT" | ○ unrecorded · 1× | unrecorded: using it costs a recording | insert "I rename the tax to \"${1:VAT}\"""#]].assert_eq(&render_ranked(&format!("{SHOP}{file}")));
}

#[test]
fn a_then_wants_outcomes_and_a_given_context() {
    let file = "//- features/shop/cart.feature
Feature: Cart
  Scenario: a
    Given $0
";
    expect![[r#"
        I am logged in as a customer | ○ unrecorded · 3× | unrecorded: using it costs a recording | insert "I am logged in as a customer"
        I am logged in as an administrator | ○ unrecorded · 2× | unrecorded: using it costs a recording | insert "I am logged in as an administrator"
        I open the home page | ○ unrecorded · 3× | unrecorded: using it costs a recording | insert "I open the home page"
        I should see the dashboard | ○ unrecorded · 3× | unrecorded: using it costs a recording | insert "I should see the dashboard"
        I rename the product to "Cup" | ○ unrecorded · 2× | 2 variants · unrecorded: using it costs a recording | insert "I rename the product to \"${1:Cup}\""
        I save my changes | ○ unrecorded · 2× | unrecorded: using it costs a recording | insert "I save my changes"
        I should be notified that it has been successfully edited | ○ unrecorded · 2× | unrecorded: using it costs a recording | insert "I should be notified that it has been successfully edited""#]].assert_eq(&render_ranked(&format!("{SHOP}{file}")));
}

#[test]
fn value_variants_are_one_snippet_item_with_the_most_used_value() {
    let file = "//- features/search.feature
Feature: Search
  Scenario: a
    When I search for \"tea\" in 2 shops
    When I search for \"tea\" in 3 shops
    When I search for \"mugs\" in 2 shops
    When I search$0
";
    expect![[r#"I search for "tea" in 2 shops | ○ unrecorded · 3× | 3 variants · unrecorded: using it costs a recording | insert "I search for \"${1:tea}\" in ${2:2} shops""#]].assert_eq(&render_ranked(file));
}

#[test]
fn a_grouped_item_resolves_to_the_same_detail() {
    let (host, path, offset) = fixture(
        "//- features/search.feature
Feature: Search
  Scenario: a
    When I search for \"tea\"
    When I search for \"mugs\"
    When I sea$0
",
    );
    let snapshot = host.snapshot();
    let (items, _) = completions(&snapshot, &path, offset);
    let item = items.first().expect("an item");
    assert_eq!(item.detail.as_deref(), Some("2 variants · unrecorded: using it costs a recording"));
    assert_eq!(completion_detail(&snapshot, &item.label).as_deref(), item.detail.as_deref());
}

/// The project with a proposal for "Sign in" filed against its recording: its sign-in button
/// is found by a CSS selector too, and the proof replay failed with `unverified` when given.
fn with_proposal(unverified: Option<&str>) -> IndexHost {
    let (mut host, _, _) = with_file("");
    let snapshot = host.snapshot();
    let committed = &snapshot.recording(Path::new(".saffron/cache/sign-in/sign-in.json")).expect("recorded").recording;
    let mut proposed = committed.clone();
    let moved = proposed.steps[1].actions.iter_mut().filter_map(|action| action.target_mut()).last();
    moved.expect("a step 2 action with a target").css = vec!["#sign-in".into()];
    let draft = saffron_recording::ProposalDraft {
        scenario: saffron_recording::ScenarioRef {
            feature: "features/sign_in.feature".into(),
            name: "Sign in".into(),
            cache_path: ".saffron/cache/sign-in/sign-in.json".into(),
        },
        recording: proposed,
        feature_edits: vec![],
        narrative: String::new(),
        adaptations: vec![],
        usage: None,
        filed_at: None,
        unverified: unverified.map(str::to_string),
    };
    let proposal = saffron_recording::Proposal::file(draft, Some(committed));
    host.apply(Change::SetProposal {
        path: PathBuf::from(".saffron/proposals/sign-in/sign-in.json"),
        proposal: Box::new(proposal),
    });
    host
}

fn proposal_lens_and_diagnostic(host: &IndexHost) -> String {
    let path = Path::new("features/sign_in.feature");
    let snapshot = host.snapshot();
    let lenses = code_lenses(&snapshot, path);
    let lens = lenses.iter().find(|l| l.command.command == "saffron.reviewProposal").expect("a review lens");
    let diagnostics = render_diagnostics(host, path);
    let diagnostic = diagnostics.lines().find(|d| d.contains("[pending-proposal]")).expect("a diagnostic");
    format!("{} {:?}\n{diagnostic}", lens.command.title, lens.command.arguments)
}

#[test]
fn the_review_lens_and_the_pending_proposal_diagnostic_say_why_a_proposal_cannot_be_accepted() {
    let mut host = with_proposal(None);
    expect![[r#"
        Review proposal [".saffron/proposals/sign-in/sign-in.json"]
        Information Scenario: Sign in [pending-proposal] a proposal for this scenario is waiting for review: .saffron/proposals/sign-in/sign-in.json | hint: review it, then accept or reject it"#]]
    .assert_eq(&proposal_lens_and_diagnostic(&host));

    // The scenario's steps change under the proposal: it goes stale.
    let edited = "Feature: Sign in\n  Scenario: Sign in\n    Given I am on the sign-in page\n    When I sign in with the demo account\n    Then I see my orders\n";
    host.apply(Change::SetFile { path: PathBuf::from("features/sign_in.feature"), text: edited.into() });
    expect![[r#"
        Review proposal (stale: the scenario's steps changed since this proposal was filed: run the scenario again) [".saffron/proposals/sign-in/sign-in.json"]
        Information Scenario: Sign in [pending-proposal] a proposal for this scenario is waiting for review and cannot be accepted: the scenario's steps changed since this proposal was filed: run the scenario again (.saffron/proposals/sign-in/sign-in.json) | hint: read it, reject it, and run the scenario again for a proposal bound to the files as they are"#]]
    .assert_eq(&proposal_lens_and_diagnostic(&host));

    let host = with_proposal(Some("step 3: no heading \"My orders\""));
    expect![[r#"
        Review proposal (unverified: its proof replay failed: step 3: no heading "My orders") [".saffron/proposals/sign-in/sign-in.json"]
        Information Scenario: Sign in [pending-proposal] a proposal for this scenario is waiting for review and cannot be accepted: unverified: its recording did not pass its proof replay (step 3: no heading "My orders") (.saffron/proposals/sign-in/sign-in.json) | hint: read it, reject it, and run the scenario again for a proposal bound to the files as they are"#]]
    .assert_eq(&proposal_lens_and_diagnostic(&host));
}

/// Highlighting (from the parser and from the tree-sitter grammar), snippets and the
/// vocabulary's pattern keys cut step text with one lexer: a single-quoted value, an escaped
/// quote, an ordinal and a placeholder are the same values in all of them.
#[test]
fn every_feature_sees_the_same_values_in_step_text() {
    let step = r#"I give 'Ann' the 2nd "say \"hi\"" for <who> at the order's desk"#;
    let text = format!("Feature: F\n  Scenario: S\n    Given {step}\n");
    let values = |tokens: Vec<SemanticToken>| -> Vec<String> {
        tokens
            .iter()
            .filter(|t| matches!(t.kind, TokenType::String | TokenType::Number | TokenType::Parameter))
            .map(|t| format!("{:?} {}", t.kind, &text[t.span.start..t.span.end]))
            .collect()
    };
    let parsed = saffron_syntax::parse(&text, saffron_syntax::SourceKind::Feature);
    let expected = ["String 'Ann'", "Number 2nd", r#"String "say \"hi\"""#, "Parameter <who>"];
    assert_eq!(values(semantic_tokens(&parsed.document, &text)), expected);
    assert_eq!(values(SyntaxTree::parse(&text).expect("parses").semantic_tokens(&text)), expected);
    assert_eq!(snippet_body(step), r#"I give '${1:Ann}' the 2nd "${2:say \\"hi\\"}" for ${3:who} at the order's desk"#);
    assert_eq!(saffron_index::tokens::pattern_key(step), r#"i give "" the 0 "" for <> at the order's desk"#);
}

/// The run history shows where its scenario is: a flaky or chronic scenario gets a lens with its
/// recent verdicts that opens `saffron history` for it; a scenario whose runs are plain gets none.
#[test]
fn flaky_and_chronic_scenarios_get_a_history_lens() {
    use saffron_index::history::{HistoryLine, summarize};
    let mut host = with_proposal(None);
    let run = |verdict: &str, flaky: bool| HistoryLine {
        time: "2026-12-05T10:00:00Z".into(),
        commit: None,
        branch: None,
        shard: None,
        browser: "chromium".into(),
        file: "features/sign_in.feature".into(),
        line: 2,
        name: "Sign in".into(),
        verdict: verdict.into(),
        flaky,
        attempts: 1,
        duration_ms: 100,
        drift: 0,
        tokens: 0,
        cost_usd: None,
        proposal: None,
    };
    let history_lens = |host: &IndexHost| -> Vec<String> {
        code_lenses(&host.snapshot(), Path::new("features/sign_in.feature"))
            .iter()
            .filter(|lens| lens.command.command == "saffron.history")
            .map(|lens| format!("{} {:?}", lens.command.title, lens.command.arguments))
            .collect()
    };
    let plain = vec![run("green", false), run("green", false)];
    host.apply(Change::SetHistory { scenarios: summarize(&plain, 10) });
    assert!(history_lens(&host).is_empty(), "plain runs say nothing");

    let flaky = vec![run("green", false), run("green", true), run("green", false)];
    host.apply(Change::SetHistory { scenarios: summarize(&flaky, 10) });
    expect![[r#"flaky: ✓≈✓ (last 3 runs) ["features/sign_in.feature:2"]"#]].assert_eq(&history_lens(&host).join("\n"));

    let chronic = vec![run("red", false), run("green", false), run("red", false), run("yellow", false)];
    host.apply(Change::SetHistory { scenarios: summarize(&chronic, 10) });
    expect![[r#"chronic: ✗✓✗~ (last 4 runs) ["features/sign_in.feature:2"]"#]]
        .assert_eq(&history_lens(&host).join("\n"));

    // A matrix: green in Chromium, flaky in Firefox. The lens names the browser in trouble.
    let in_firefox = |verdict: &str, flaky: bool| HistoryLine { browser: "firefox".into(), ..run(verdict, flaky) };
    let matrix = vec![run("green", false), in_firefox("green", true), run("green", false), in_firefox("green", false)];
    host.apply(Change::SetHistory { scenarios: summarize(&matrix, 10) });
    expect![[r#"flaky in firefox: ≈✓ (last 2 runs) ["features/sign_in.feature:2"]"#]]
        .assert_eq(&history_lens(&host).join("\n"));
}
