use std::path::{Path, PathBuf};
use std::sync::Mutex;

use saffron_agent::{BoxFuture, Response, StopReason};
use saffron_index::IndexHost;

use super::*;

/// The example project at the workspace root: recorded steps, StepSets.
fn example() -> Snapshot {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    IndexHost::load(&root).0.snapshot()
}

/// Answers with the texts given, in order, and keeps every request.
struct Scripted {
    answers: Mutex<Vec<String>>,
    requests: Mutex<Vec<Request>>,
}

impl Scripted {
    fn new(answers: &[&str]) -> Scripted {
        Scripted {
            answers: Mutex::new(answers.iter().rev().map(|a| a.to_string()).collect()),
            requests: Mutex::new(Vec::new()),
        }
    }
}

impl Provider for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }

    fn send<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ProviderError>> {
        self.requests.lock().expect("lock").push(request.clone());
        let answer = self.answers.lock().expect("lock").pop().unwrap_or_default();
        let usage = Usage { input_tokens: 10, output_tokens: 5, calls: 1, ..Usage::default() };
        Box::pin(async move {
            Ok(Response { content: vec![Block::Text { text: answer }], stop_reason: StopReason::EndTurn, usage })
        })
    }
}

fn run(snapshot: &Snapshot, provider: &Scripted, prose: &str) -> Authored {
    run_at(snapshot, provider, prose, "features/drafted.saffron")
}

/// Drafts for a file at `path` (its extension says the dialect).
fn run_at(snapshot: &Snapshot, provider: &Scripted, prose: &str, path: &str) -> Authored {
    let vocabulary = vocabulary::select(snapshot, prose, DEFAULT_VOCABULARY_BUDGET);
    let request =
        AuthorRequest { prose: prose.into(), path: PathBuf::from(path), vocabulary_budget: DEFAULT_VOCABULARY_BUDGET };
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    runtime.block_on(author(snapshot, provider, &Masker::new(), &vocabulary, &request))
}

#[test]
fn the_vocabulary_keeps_the_most_relevant_items_within_the_budget() {
    let snapshot = example();
    let everything = vocabulary::select(&snapshot, "open an invoice", usize::MAX);
    assert_eq!(everything.left_out, 0);
    assert!(everything.recorded.len() > 10, "{everything:?}");
    // A budget for a few lines keeps the steps about invoices, not the first ones in the list.
    let small = vocabulary::select(&snapshot, "open an invoice", 40);
    assert!(small.left_out > 0);
    let texts: Vec<&str> = small.texts().collect();
    assert!(texts.contains(&"I open the invoice of \"#1001\""), "{texts:?}");
    assert!(texts.contains(&"I see the invoice \"Invoice #1001\""), "{texts:?}");
    assert!(!texts.iter().any(|text| text.contains("gift wrap")), "{texts:?}");
    let rendered = small.render();
    let recorded = rendered.find("Recorded steps").expect("recorded first");
    let sets = rendered.find("StepSets").expect("sets");
    let unrecorded = rendered.find("not recorded yet").expect("unrecorded last");
    assert!(recorded < sets && sets < unrecorded);
    assert!(rendered.contains("[1×] I open the invoice of \"#1001\""), "{rendered}");
}

#[test]
fn the_answer_is_the_fenced_block() {
    let answer = "Here it is:\n```gherkin\nFeature: A\n  Scenario: B\n    Given x\n```\nEnjoy.";
    assert_eq!(extract_feature(answer).as_deref(), Some("Feature: A\n  Scenario: B\n    Given x\n"));
    assert_eq!(extract_feature("Feature: A\n").as_deref(), Some("Feature: A\n"));
    assert_eq!(extract_feature("```\n```"), None);
}

#[test]
fn near_duplicates_are_rewritten_and_priced() {
    let snapshot = example();
    let answer = "```gherkin\nFeature: Invoices\n  Background:\n    StepSet signed in as the demo user\n\n  \
                  Scenario: Search and open\n    When I search the orders for \"Ada Lovelace\"\n    \
                  Then the orders table shows 2 orders\n    When I open the invoice of \"#1001\"\n    \
                  Then I see an invoice \"Invoice #1001\"\n    And I see the invoice total \"€12.00\"\n```";
    let provider = Scripted::new(&[answer]);
    let authored = run(&snapshot, &provider, "search orders and open an invoice");
    let draft = authored.result.expect("a draft");
    assert!(draft.text.contains("When I search orders for \"Ada Lovelace\""), "{}", draft.text);
    assert!(draft.text.contains("Then I see the invoice \"Invoice #1001\""), "{}", draft.text);
    let search = draft.steps.iter().find(|s| s.text == "I search orders for \"Ada Lovelace\"").expect("step");
    assert_eq!(search.cost, StepCost::Free);
    assert_eq!(search.rewritten_from.as_deref(), Some("I search the orders for \"Ada Lovelace\""));
    let set_steps: Vec<_> = draft.steps.iter().filter(|s| s.step_set.is_some()).collect();
    assert_eq!(set_steps.len(), 3, "{:?}", draft.steps);
    let new = draft.steps.iter().find(|s| s.text.contains("invoice total")).expect("new step");
    assert_eq!(new.cost, StepCost::NeedsRecording);
    assert_eq!(draft.totals.rewritten, 2);
    assert_eq!((draft.totals.distinct_steps, draft.totals.free, draft.totals.needs_recording), (8, 7, 1));
    assert_eq!(authored.usage.calls, 1);
    assert!(!draft.repaired);
}

/// Paraphrases with synonyms are not near-duplicates; they become the project's wording when
/// exactly one of its steps or StepSets says the same, with the same kind of step.
#[test]
fn paraphrases_become_the_project_wording_and_replay_for_free() {
    let snapshot = example();
    let answer = "Feature: Totals\n  Scenario: Log in and see the total\n    Given I log in as the demo user\n    \
                  StepSet a new order form\n    When I set the quantity to 2 and choose \"Mugs\"\n    \
                  Then the total shows €14.00\n    When I pick gift wrap\n    Then gift wrap is not chosen\n    \
                  And the weather is sunny\n";
    let provider = Scripted::new(&[answer]);
    let draft = run(&snapshot, &provider, "log in and see the total").result.expect("a draft");
    assert!(draft.text.contains("    StepSet signed in as the demo user\n"), "{}", draft.text);
    assert!(draft.text.contains("    Then the live total is \"Total: €14.00\"\n"), "{}", draft.text);
    assert!(draft.text.contains("    When I choose gift wrap\n"), "{}", draft.text);
    assert!(draft.text.contains("    Then gift wrap is not selected\n"), "{}", draft.text);
    let step = |text: &str| draft.steps.iter().find(|step| step.text == text).expect(text).clone();
    let sign_in = step("I am on the sign-in page");
    assert_eq!(sign_in.step_set.as_deref(), Some("signed in as the demo user"));
    assert_eq!(sign_in.rewritten_from.as_deref(), Some("I log in as the demo user"));
    let total = step("the live total is \"Total: €14.00\"");
    assert_eq!((total.cost, total.rewritten_from.as_deref()), (StepCost::Free, Some("the total shows €14.00")));
    assert_eq!(step("gift wrap is not selected").cost, StepCost::Free);
    let weather = step("the weather is sunny");
    assert_eq!((weather.cost, weather.closest_recorded), (StepCost::NeedsRecording, None));
    assert_eq!(draft.totals.rewritten, 4);
    assert_eq!((draft.totals.free, draft.totals.needs_recording), (draft.totals.distinct_steps - 1, 1));
}

/// What a paraphrase must never become: the opposite action, a check turned into an action (or
/// the reverse), or one of two steps the draft does not tell apart.
#[test]
fn paraphrases_without_one_clear_meaning_stay_as_written() {
    let snapshot = example();
    let answer = "Feature: Kept\n  Scenario: Kept as written\n    Given I log out as the demo user\n    \
                  StepSet a new order form\n    When I save the order\n    Then the total shows €12.00\n    \
                  Then I delete gift wrap\n    When gift wrap is picked\n    Then the weather is sunny\n    \
                  When I delete the order \"#1005\"\n";
    let provider = Scripted::new(&[answer]);
    let draft = run(&snapshot, &provider, "kept").result.expect("a draft");
    for kept in [
        // `I delete the order "#1004" and confirm` has one word more, and nothing says it is meant.
        "When I delete the order \"#1005\"",
        "Given I log out as the demo user",
        // `the saved total` or `the live total`: nothing in the draft says which.
        "Then the total shows €12.00",
        "Then I delete gift wrap",
        "When gift wrap is picked",
    ] {
        assert!(draft.text.contains(kept), "`{kept}` in\n{}", draft.text);
    }
    assert_eq!(draft.totals.rewritten, 0, "{}", draft.text);
    let total = draft.steps.iter().find(|step| step.text == "the total shows €12.00").expect("kept");
    assert_eq!(total.cost, StepCost::NeedsRecording);
    assert!(total.closest_recorded.is_some(), "a suggestion instead: {total:?}");

    // The evidence that was missing: the step the project writes after the previous one, or a
    // value only that step records.
    let answer = "Feature: Saved\n  Scenario: Saved total\n    StepSet a new order form\n    When I save the order\n    \
                  Then I see the confirmation \"Order saved\"\n    And the total shows €12.00\n    \
                  When I remove the order #1004\n";
    let provider = Scripted::new(&[answer]);
    let draft = run(&snapshot, &provider, "saved").result.expect("a draft");
    assert!(draft.text.contains("And the saved total is \"€12.00\"\n"), "{}", draft.text);
    assert!(draft.text.contains("When I delete the order \"#1004\" and confirm\n"), "{}", draft.text);
}

/// Free means what a run does: a step recorded with other quoted values replays for free when
/// the run would substitute them, and needs recording when the recording hard-codes the value.
#[test]
fn steps_a_run_would_seed_are_free() {
    let snapshot = example();
    let answer = "Feature: Search\n  Scenario: Another customer\n    StepSet signed in as the demo user\n    \
                  When I search orders for \"Grace Hopper\"\n    And I open the invoice of \"#1002\"\n";
    let provider = Scripted::new(&[answer]);
    let draft = run(&snapshot, &provider, "search").result.expect("a draft");
    let cost = |text: &str| draft.steps.iter().find(|step| step.text == text).expect(text).cost;
    assert_eq!(cost("I search orders for \"Grace Hopper\""), StepCost::Free);
    // Its recording also checks `Invoice #1001`, which the substitution cannot follow.
    assert_eq!(cost("I open the invoice of \"#1002\""), StepCost::NeedsRecording);
    assert_eq!((draft.totals.free, draft.totals.needs_recording), (4, 1));
}

/// A plain `.feature` file cannot run a StepSet: none is written into it, nor suggested.
#[test]
fn a_feature_file_gets_no_step_set() {
    let snapshot = example();
    let answer = "Feature: Plain\n  Scenario: Log in\n    Given I log in as the demo user\n";
    let provider = Scripted::new(&[answer]);
    let draft = run_at(&snapshot, &provider, "log in", "features/drafted.feature").result.expect("a draft");
    assert!(draft.text.contains("Given I log in as the demo user"), "{}", draft.text);
    let step = &draft.steps[0];
    assert_eq!(step.cost, StepCost::NeedsRecording);
    assert!(!step.closest_recorded.as_deref().unwrap_or("").starts_with("StepSet"), "{step:?}");
}

#[test]
fn a_draft_that_does_not_parse_gets_one_repair_then_fails() {
    let snapshot = example();
    let broken = "```gherkin\nFeature: A\n  Scenario: B\n    Given I am on the sign-in page\n  | not | a table |\n  this line is prose\n```";
    let provider = Scripted::new(&[broken, broken, broken]);
    let authored = run(&snapshot, &provider, "sign in");
    let Err(AuthorError::Unparseable { errors, .. }) = authored.result else { panic!("{:?}", authored.result) };
    assert!(!errors.is_empty());
    let requests = provider.requests.lock().expect("lock");
    assert_eq!(requests.len(), 2, "exactly one repair round");
    let repair = requests[1].messages.last().expect("repair message").text();
    assert!(repair.contains("does not parse"), "{repair}");
    assert!(repair.contains(&errors[0].message), "{repair}");
    assert_eq!(authored.usage.calls, 2);

    let good = "Feature: A\n  Scenario: B\n    Given I am on the sign-in page\n";
    let provider = Scripted::new(&[broken, good]);
    let draft = run(&snapshot, &provider, "sign in").result.expect("repaired");
    assert!(draft.repaired);
}

#[test]
fn an_unknown_step_set_is_an_error_to_repair() {
    let snapshot = example();
    let unknown = "Feature: A\n  Scenario: B\n    StepSet signed in as the boss\n";
    let provider = Scripted::new(&[unknown, unknown]);
    let authored = run(&snapshot, &provider, "sign in");
    assert!(matches!(authored.result, Err(AuthorError::Unparseable { .. })), "{:?}", authored.result);
}

#[test]
fn the_prompt_masker_knows_the_vocabulary_secrets_and_the_key() {
    let vocabulary = Vocabulary {
        recorded: vec![VocabularyStep {
            text: "I sign in with the password \"{env:SHOP_PASSWORD}\"".into(),
            uses: 1,
            status: StepStatus::Recorded,
            api: false,
        }],
        ..Vocabulary::default()
    };
    let env = |name: &str| match name {
        "SHOP_PASSWORD" => Some("hunter2-value".to_string()),
        "API_KEY" => Some("sk-key-value".to_string()),
        "DOTENV_ONLY" => Some("dotenv-value".to_string()),
        _ => None,
    };
    let masker = masker_for_prompt(&["DOTENV_ONLY".to_string()], &vocabulary, Some("API_KEY"), &env);
    let masked = masker.mask("hunter2-value sk-key-value dotenv-value");
    assert!(!masked.contains("value"), "{masked}");
}

/// The Sylius suite's vocabulary (thousands of step texts) is cut to the budget by relevance:
/// `SAFFRON_CORPUS=/work/shared/corpus cargo test -p saffron-runner --lib large_vocabulary --
/// --nocapture` prints what was kept and how long choosing took. Without the corpus it passes
/// without checking anything.
#[test]
fn a_large_vocabulary_is_cut_to_the_budget_by_relevance() {
    let Some(corpus) = std::env::var_os("SAFFRON_CORPUS").map(PathBuf::from) else { return };
    let snapshot = IndexHost::load(&corpus.join("sylius")).0.snapshot();
    let prose = "apply a promotion coupon to the cart and check the order total";
    let started = std::time::Instant::now();
    let vocabulary = vocabulary::select(&snapshot, prose, DEFAULT_VOCABULARY_BUDGET);
    let took = started.elapsed();
    let rendered = vocabulary.render();
    let kept = vocabulary.recorded.len() + vocabulary.step_sets.len() + vocabulary.unrecorded.len();
    eprintln!(
        "{} step texts: {kept} kept, {} left out, ~{} tokens rendered, chosen in {took:?}",
        snapshot.entry_count(),
        vocabulary.left_out,
        vocabulary::estimate_tokens(&rendered)
    );
    assert!(vocabulary.left_out > 0, "the corpus does not fit the budget");
    // The item lines fill the budget; the section headers add a few dozen tokens.
    assert!(vocabulary::estimate_tokens(&rendered) <= DEFAULT_VOCABULARY_BUDGET + 100);
    let words = |text: &str| -> std::collections::HashSet<String> {
        saffron_index::tokens::tokens(&text.to_lowercase())
            .into_iter()
            .filter(|token| !saffron_index::drift::FUNCTION_WORDS.contains(&token.as_str()))
            .collect()
    };
    let wanted = words(prose);
    let steps: Vec<&VocabularyStep> = vocabulary.recorded.iter().chain(&vocabulary.unrecorded).collect();
    let unrelated: Vec<&str> =
        steps.iter().map(|step| step.text.as_str()).filter(|text| words(text).is_disjoint(&wanted)).collect();
    assert!(unrelated.is_empty(), "kept, sharing no word with the prose: {unrelated:?}");
    let mut patterns: Vec<String> = steps.iter().map(|step| saffron_index::tokens::pattern_key(&step.text)).collect();
    patterns.sort();
    patterns.dedup();
    assert_eq!(patterns.len(), steps.len(), "one item per step pattern");
}

/// The index's labelled pairs of different steps (Sylius and a holdout suite: another entity,
/// a qualifier, an antonym, a negation...), each side taken as a draft and the other as the only
/// recorded step: how often a paraphrase could be read into them. `cargo test -p saffron-runner
/// --lib different_steps -- --nocapture` prints the rates.
#[test]
fn different_steps_are_rarely_read_as_paraphrases_of_each_other() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../saffron-index/tests/near_duplicates");
    let mut rates = Vec::new();
    for (file, wanted) in
        [("labelled_pairs.tsv", "different"), ("holdout_pairs.tsv", "different"), ("hard_negatives.tsv", "")]
    {
        let text = std::fs::read_to_string(folder.join(file)).expect("labelled pairs");
        let pairs: Vec<(&str, &str)> = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split('\t');
                let label = fields.next()?;
                (wanted.is_empty() || label == wanted).then_some((fields.next()?, fields.next()?))
            })
            .collect();
        let read_as_one: Vec<&(&str, &str)> = pairs
            .iter()
            .filter(|(a, b)| {
                [false, true]
                    .into_iter()
                    .any(|outcome| paraphrase::could_mean(a, b, outcome) || paraphrase::could_mean(b, a, outcome))
            })
            .collect();
        eprintln!(
            "{file}: {} of {} pairs of different steps could be read as one: {read_as_one:#?}",
            read_as_one.len(),
            pairs.len()
        );
        rates.push((file, read_as_one.len() as f64 / pairs.len() as f64));
    }
    for (file, rate) in rates {
        assert!(rate <= 0.1, "{file}: {rate:.2}");
    }
}

/// Every text of the index's labelled sets (Sylius and a holdout suite), drafted as each kind
/// of step against the example project: a rewrite, when there is one, keeps the draft's
/// negations and its number of values, and nothing panics on odd text.
#[test]
fn rewrites_keep_negations_and_values_on_real_text() {
    let snapshot = example();
    let paraphraser = paraphrase::Paraphraser::new(&snapshot);
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../saffron-index/tests/near_duplicates");
    let mut texts: Vec<String> = Vec::new();
    for file in ["labelled_pairs.tsv", "holdout_pairs.tsv", "hard_negatives.tsv", "variants.tsv"] {
        let text = std::fs::read_to_string(folder.join(file)).expect("labelled texts");
        texts.extend(text.lines().flat_map(|line| line.split('\t').skip(1).map(str::to_string)));
    }
    texts.extend(["", " ", "\"", "€", "#", "\"unclosed", "<a>", "1st 2nd", "I log in"].map(str::to_string));
    // And paraphrases of the example's own steps, so that the rewrites' shape is checked too.
    let paraphrases =
        ["I log in as the demo user", "the total shows €14.00", "gift wrap is not chosen", "I pick gift wrap"];
    texts.extend(paraphrases.map(str::to_string));
    assert!(texts.len() > 700, "{}", texts.len());
    let shape = |text: &str| {
        let wording = saffron_index::drift::Wording::of(text);
        (wording.negations().into_iter().map(str::to_string).collect::<Vec<_>>(), wording.values.len())
    };
    let mut rewritten = 0;
    for text in &texts {
        for role in [StepRole::Context, StepRole::Action, StepRole::Outcome] {
            let step =
                paraphrase::DraftStep { text, role, previous: saffron_index::BLOCK_START, step_sets_allowed: true };
            match paraphraser.paraphrased(step) {
                Some(Paraphrased::Step(project)) => {
                    rewritten += 1;
                    assert_eq!(shape(&project), shape(text), "`{text}` became `{project}`");
                }
                Some(Paraphrased::StepSet(name)) => {
                    rewritten += 1;
                    assert!(role != StepRole::Outcome && shape(text).1 == 0, "`{text}` became StepSet {name}");
                }
                None => {}
            }
        }
    }
    // Shop steps and a demo's orders page share few words: little but the paraphrases is
    // rewritten (each in the kinds it is written as).
    assert!(rewritten >= paraphrases.len(), "{rewritten} rewritten");
    assert!(rewritten * 50 < texts.len(), "{rewritten} of {} rewritten", texts.len());
}
