//! Property tests: what the types can express round-trips and validates; nothing panics the
//! door, whatever JSON or text comes in.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use saffron_recording::{
    Action, Date, ElementState, FeatureEdit, Masker, Proposal, ProposalDraft, RecordedStep, Recording, Resolver,
    ResponseMatcher, ScenarioRef, Secret, StepKind, StepSpec, Target, Tier, Usage, feature_slug, parse_proposal,
    parse_recording, scenario_slug, scenario_slugs, steps_digest, tokenize, validate_proposal, validate_recording,
};
use serde_json::{Map, Value};

const TOKENS: [&str; 8] = [
    "<product>",
    "<first name>",
    "<table:Email>",
    "{env:PASSWORD}",
    "{unique:user}",
    "{date+3}",
    "{date-1:%d/%m/%Y}",
    "{captured:order.id}",
];

fn plain() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 äé€._/#-]{0,12}"
}

// A value as recordings hold them: literal text around at most one well-formed token.
fn template() -> impl Strategy<Value = String> {
    (plain(), option::of(proptest::sample::select(&TOKENS[..])), plain())
        .prop_map(|(before, token, after)| format!("{before}{}{after}", token.unwrap_or_default()))
}

fn non_empty_template() -> impl Strategy<Value = String> {
    template().prop_map(|text| if text.is_empty() { "x".to_string() } else { text })
}

fn pattern() -> impl Strategy<Value = String> {
    (
        plain(),
        option::of(proptest::sample::select(&TOKENS[..])),
        proptest::sample::select(&["", "$", "\\d+", "(?i)[a-z]{2,3}", ".*", "(one|two)"][..]),
    )
        .prop_map(|(literal, token, suffix)| {
            format!("^{}{}{suffix}", regex::escape(&literal), token.unwrap_or_default())
        })
}

fn timeout() -> impl Strategy<Value = Option<u64>> {
    option::of(1..u64::MAX)
}

fn target() -> impl Strategy<Value = Target> {
    let name = prop_oneof![
        Just((None, None)),
        non_empty_template().prop_map(|name| (Some(name), None)),
        pattern().prop_map(|regex| (None, Some(regex))),
    ];
    (
        option::of(proptest::sample::select(&["button", "link", "textbox", "heading", "checkbox"][..])),
        name,
        option::of(non_empty_template()),
        option::of(non_empty_template()),
        option::of(non_empty_template()),
        option::of("[a-z][a-z0-9-]{0,8}"),
        vec("[#.a-z][a-z0-9 >.#-]{0,10}", 0..3),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(role, (name, name_regex), label, placeholder, text, test_id, css, pick, record)| {
            let mut target =
                Target { role: role.map(str::to_string), label, placeholder, text, test_id, css, ..Target::default() };
            if target.role.is_some() {
                target.name = name;
                target.name_regex = name_regex;
            }
            if target.tiers().is_empty() {
                target.css = vec!["#fallback".into()];
            }
            let tiers = target.tiers();
            target.tier = record.then(|| *pick.get(&tiers));
            target
        })
}

fn response() -> impl Strategy<Value = ResponseMatcher> {
    (
        pattern(),
        option::of(proptest::sample::select(&["GET", "POST", "DELETE"][..])),
        option::of(proptest::sample::select(&["200", "201", "2xx", "404", "5xx"][..])),
        option::of(pattern()),
    )
        .prop_map(|(url_regex, method, status, body_regex)| ResponseMatcher {
            url_regex,
            method: method.map(str::to_string),
            status: status.map(str::to_string),
            body_regex,
        })
}

fn state() -> impl Strategy<Value = ElementState> {
    prop_oneof![
        "[a-z][a-z0-9_-]{0,8}".prop_map(|token| ElementState::Class { token }),
        ("[a-z][a-z-]{0,8}", option::of(template())).prop_map(|(name, value)| ElementState::Attribute { name, value }),
        ("[a-z][a-z-]{0,8}", template()).prop_map(|(property, value)| ElementState::Css { property, value }),
        Just(ElementState::Checked),
        Just(ElementState::Disabled),
        Just(ElementState::Enabled),
        Just(ElementState::Focused),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        ("/[a-z0-9/<>{}:+-]{0,10}", timeout()).prop_map(|(url, timeout_ms)| Action::Goto {
            url: if tokenize(&url).iter().any(|t| t.problem().is_some()) { "/".to_string() } else { url },
            timeout_ms
        }),
        (target(), timeout()).prop_map(|(target, timeout_ms)| Action::Click { target, timeout_ms }),
        (target(), timeout()).prop_map(|(target, timeout_ms)| Action::DoubleClick { target, timeout_ms }),
        (target(), vec("[a-z]{1,8}/[a-z]{1,8}\\.png", 0..3), timeout())
            .prop_map(|(target, files, timeout_ms)| Action::Upload { target, files, timeout_ms }),
        (target(), template(), timeout()).prop_map(|(target, value, timeout_ms)| Action::Fill {
            target,
            value,
            timeout_ms
        }),
        (target(), vec(template(), 0..3), timeout())
            .prop_map(|(target, values, timeout_ms)| { Action::Select { target, values, timeout_ms } }),
        (option::of(target()), "[A-Z][a-z]{0,5}(\\+[A-Z])?", timeout())
            .prop_map(|(target, key, timeout_ms)| Action::Press { target, key, timeout_ms }),
        (target(), timeout()).prop_map(|(target, timeout_ms)| Action::Check { target, timeout_ms }),
        (target(), timeout()).prop_map(|(target, timeout_ms)| Action::Uncheck { target, timeout_ms }),
        (target(), timeout()).prop_map(|(target, timeout_ms)| Action::Hover { target, timeout_ms }),
        (target(), target(), timeout()).prop_map(|(target, to, timeout_ms)| Action::Drag { target, to, timeout_ms }),
        (target(), non_empty_template(), timeout()).prop_map(|(target, text, timeout_ms)| Action::TypeText {
            target,
            text,
            timeout_ms
        }),
        (prop_oneof![any::<u32>().prop_map(Ok), pattern().prop_map(Err)], timeout()).prop_map(|(tab, timeout_ms)| {
            Action::SwitchTab { index: tab.clone().ok(), url_pattern: tab.err(), timeout_ms }
        }),
        (any::<bool>(), option::of(template()), timeout())
            .prop_map(|(accept, prompt_text, timeout_ms)| Action::Dialog { accept, prompt_text, timeout_ms }),
        (response(), timeout()).prop_map(|(response, timeout_ms)| Action::WaitForResponse { response, timeout_ms }),
        (target(), timeout()).prop_map(|(target, timeout_ms)| Action::ExpectVisible { target, timeout_ms }),
        (target(), timeout()).prop_map(|(target, timeout_ms)| Action::ExpectHidden { target, timeout_ms }),
        (target(), prop_oneof![template().prop_map(Ok), pattern().prop_map(Err)], timeout()).prop_map(
            |(target, text, timeout_ms)| Action::ExpectText {
                target,
                text: text.clone().ok(),
                text_regex: text.err(),
                timeout_ms
            }
        ),
        (target(), template(), timeout())
            .prop_map(|(target, value, timeout_ms)| { Action::ExpectValue { target, value, timeout_ms } }),
        (prop_oneof!["/[a-z0-9/]{0,10}".prop_map(Ok), pattern().prop_map(Err)], timeout()).prop_map(
            |(url, timeout_ms)| Action::ExpectUrl { url: url.clone().ok(), url_regex: url.err(), timeout_ms }
        ),
        (target(), state(), timeout())
            .prop_map(|(target, state, timeout_ms)| { Action::ExpectState { target, state, timeout_ms } }),
        (response(), timeout()).prop_map(|(response, timeout_ms)| Action::ExpectResponse { response, timeout_ms }),
        (option::of("[a-z]{1,8}\\.csv"), option::of(pattern()), option::of(non_empty_template()), timeout()).prop_map(
            |(file_name, regex, contains, timeout_ms)| Action::ExpectDownload {
                file_name_regex: regex.filter(|_| file_name.is_none()),
                file_name,
                contains,
                timeout_ms,
            }
        ),
        timeout().prop_map(|timeout_ms| Action::ExpectNoConsoleErrors { timeout_ms }),
        (target(), any::<u32>(), timeout())
            .prop_map(|(target, count, timeout_ms)| { Action::ExpectCount { target, count, timeout_ms } }),
    ]
}

fn table() -> impl Strategy<Value = Option<Vec<Vec<String>>>> {
    option::of((1usize..4).prop_flat_map(|width| vec(vec("\\PC{0,6}", width), 0..4)))
}

fn step() -> impl Strategy<Value = RecordedStep> {
    (
        proptest::sample::select(&[StepKind::Context, StepKind::Action, StepKind::Outcome][..]),
        "\\PC{1,30}",
        table(),
        option::of("\\PC{0,40}"),
        vec(action(), 0..5),
        action().prop_filter("a check", Action::is_assertion),
    )
        .prop_map(|(kind, text, table, doc_string, mut actions, check)| {
            // A Then step checks something, or no reader takes the recording.
            if kind == StepKind::Outcome && !actions.iter().any(Action::is_assertion) {
                actions.push(check);
            }
            RecordedStep::new(StepSpec { kind, text, table, doc_string }, actions)
        })
}

fn recording() -> impl Strategy<Value = Recording> {
    (
        "features/[a-z]{1,6}/[A-Za-z ]{1,10}\\.(feature|saffron)",
        "\\PC{1,30}",
        vec(step(), 0..5),
        option::of("20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:00:00Z"),
        option::of("https?://[a-z]{1,8}(:[0-9]{2,4})?(/[a-z]{1,5})?"),
    )
        .prop_map(|(feature, scenario, steps, recorded_at, base_url)| {
            let mut recording = Recording::new(feature, scenario, steps);
            recording.recorded_at = recorded_at;
            recording.base_url = base_url;
            recording
        })
}

fn proposal() -> impl Strategy<Value = Proposal> {
    (
        recording(),
        option::of(recording()),
        vec(
            ("features/[a-z]{1,8}\\.feature", 1u32..500, "\\PC{0,20}", "\\PC{0,20}", option::of("[A-Za-z ]{1,10}")),
            0..3,
        ),
        "\\PC{0,60}",
        vec("\\PC{0,30}", 0..3),
        option::of((
            option::of(any::<u64>()),
            option::of(any::<u64>()),
            // Sixteenths are exact in binary and short in decimal, so they survive JSON.
            option::of((0u32..1_000_000).prop_map(|n| f64::from(n) / 16.0)),
        )),
    )
        .prop_map(|(proposed, committed, edits, narrative, adaptations, usage)| {
            let draft = ProposalDraft {
                scenario: ScenarioRef {
                    feature: proposed.feature.clone(),
                    name: proposed.scenario.clone(),
                    cache_path: ".saffron/cache/a/b.json".into(),
                },
                recording: proposed,
                feature_edits: edits
                    .into_iter()
                    .map(|(file, line, before, after, from_set)| FeatureEdit { file, line, before, after, from_set })
                    .collect(),
                narrative,
                adaptations,
                usage: usage.map(|(input_tokens, output_tokens, cost_usd)| Usage {
                    input_tokens,
                    output_tokens,
                    cost_usd,
                }),
                filed_at: None,
                unverified: None,
            };
            Proposal::file(draft, committed.as_ref())
        })
}

// JSON biased towards the format's own keys and values, so random documents get past the
// first checks and reach deep into the validator.
fn json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        proptest::sample::select(
            &[
                "version",
                "feature",
                "scenario",
                "steps",
                "stepsDigest",
                "kind",
                "text",
                "table",
                "docString",
                "actions",
                "type",
                "target",
                "role",
                "name",
                "nameRegex",
                "css",
                "tier",
                "url",
                "urlRegex",
                "value",
                "values",
                "response",
                "state",
                "count",
                "index",
                "urlPattern",
                "accept",
                "timeoutMs",
                "recording",
                "binding",
                "diff",
                "changes",
                "change",
                "featureEdits",
                "usage",
                "costUsd",
            ][..]
        )
        .prop_map(str::to_string),
        "[a-z]{1,4}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        proptest::sample::select(
            &[
                "click",
                "goto",
                "fill",
                "expectUrl",
                "expectState",
                "switchTab",
                "context",
                "role",
                "css",
                "class",
                "2xx",
                "(",
                "{env:",
                "<table:>",
                "{date+99999999}",
                "",
                "added",
                "changed",
            ][..]
        )
        .prop_map(Value::from),
        "\\PC{0,10}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            vec((key.clone(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn pointers(value: &Value, prefix: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                let pointer = format!("{prefix}/{key}");
                out.push(pointer.clone());
                pointers(item, pointer, out);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let pointer = format!("{prefix}/{index}");
                out.push(pointer.clone());
                pointers(item, pointer, out);
            }
        }
        _ => {}
    }
}

fn mutate(mut value: Value, pick: prop::sample::Index, replacement: Value) -> Value {
    let mut all = Vec::new();
    pointers(&value, String::new(), &mut all);
    if all.is_empty() {
        return replacement;
    }
    let pointer = pick.get(&all);
    if let Some(slot) = value.pointer_mut(pointer) {
        *slot = replacement;
    }
    value
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn recordings_round_trip_through_json_and_validate(recording in recording()) {
        let value = serde_json::to_value(&recording).expect("serializes");
        prop_assert_eq!(validate_recording(&value), Ok(recording.clone()));
        let text = serde_json::to_string_pretty(&recording).expect("serializes");
        prop_assert_eq!(parse_recording(&text), Ok(recording.clone()));
        prop_assert!(recording.is_fresh_for(&recording.step_specs()));
        for action in recording.steps.iter().flat_map(|step| &step.actions) {
            prop_assert!(!action.to_string().is_empty());
        }
    }

    #[test]
    fn proposals_round_trip_through_json_validate_and_are_not_stale(proposal in proposal()) {
        let text = serde_json::to_string_pretty(&proposal).expect("serializes");
        let read = parse_proposal(&text);
        prop_assert_eq!(read.as_ref(), Ok(&proposal));
        let steps = proposal.recording.step_specs();
        let committed: Option<Recording> = None;
        let reasons = proposal.stale_reasons(&steps, committed.as_ref());
        let bound_to_nothing = proposal.binding.contract_digest.is_none();
        prop_assert_eq!(reasons.is_empty(), bound_to_nothing);
    }

    #[test]
    fn arbitrary_json_never_panics_the_validators(value in json()) {
        let _ = validate_recording(&value);
        let _ = validate_proposal(&value);
    }

    #[test]
    fn mutated_recordings_never_panic_and_name_a_path_or_stay_valid(
        recording in recording(),
        pick in any::<prop::sample::Index>(),
        replacement in json(),
    ) {
        let value = mutate(serde_json::to_value(&recording).expect("serializes"), pick, replacement);
        if let Ok(read) = validate_recording(&value) {
            // Whatever passes the door also deserializes to something that validates again.
            let again = serde_json::to_value(&read).expect("serializes");
            prop_assert_eq!(validate_recording(&again), Ok(read));
        }
    }

    #[test]
    fn mutated_proposals_never_panic(
        proposal in proposal(),
        pick in any::<prop::sample::Index>(),
        replacement in json(),
    ) {
        let value = mutate(serde_json::to_value(&proposal).expect("serializes"), pick, replacement);
        let _ = validate_proposal(&value);
    }

    #[test]
    fn arbitrary_text_never_panics_the_parsers(text in "\\PC{0,200}") {
        let _ = parse_recording(&text);
        let _ = parse_proposal(&text);
    }

    #[test]
    fn damaged_files_never_panic_the_parsers(
        recording in recording(),
        cut in any::<prop::sample::Index>(),
        noise in "[{}\\[\\]\",:0-9a-z\\\\ ]{0,4}",
    ) {
        let text = serde_json::to_string_pretty(&recording).expect("serializes");
        let boundaries: Vec<usize> = (0..=text.len()).filter(|i| text.is_char_boundary(*i)).collect();
        let at = *cut.get(&boundaries);
        let damaged = format!("{}{noise}{}", &text[..at], &text[at..]);
        let _ = parse_recording(&damaged);
        let _ = parse_recording(&text[..at]);
    }

    #[test]
    fn tokenizer_spans_are_ordered_and_on_char_boundaries(text in "\\PC{0,60}|[<>{}:+a-z%/ -]{0,40}") {
        let tokens = tokenize(&text);
        let mut end = 0;
        for token in &tokens {
            prop_assert!(token.span.start >= end);
            prop_assert!(token.span.start < token.span.end);
            prop_assert!(text.is_char_boundary(token.span.start));
            prop_assert!(text.is_char_boundary(token.span.end));
            prop_assert_eq!(&text[token.span.clone()], token.text);
            end = token.span.end;
        }
        let today = Date::from_ymd(2026, 1, 31).expect("valid date");
        let resolver = Resolver::new(today, "seed")
            .with_params([("product", "tea")])
            .with_env(|_| Some("secret".to_string()));
        let _ = resolver.resolve(&text);
        let _ = resolver.resolve_regex(&text);
    }

    #[test]
    fn masked_text_holds_no_secret(
        before in "\\PC{0,20}",
        after in "\\PC{0,20}",
        value in "[0-9]{3,8}",
        name in "[A-Z]{1,8}",
    ) {
        let mut masker = Masker::new();
        masker.add(&Secret { name: name.clone(), value: value.clone() });
        let masked = masker.mask(&format!("{before}{value}{after}"));
        prop_assert!(!masked.contains(&value));
        let token = format!("{{env:{name}}}");
        prop_assert!(masked.contains(&token));
    }

    #[test]
    fn slugs_are_always_well_formed(name in "\\PC{0,120}", names in vec("[A-Za-z ]{0,6}", 0..8)) {
        for slug in [feature_slug(&name), scenario_slug(&name)] {
            prop_assert!(!slug.is_empty() && slug.len() <= saffron_recording::MAX_SLUG_LEN);
            prop_assert!(slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
            prop_assert!(!slug.starts_with('-') && !slug.ends_with('-') && !slug.contains("--"));
        }
        let slugs = scenario_slugs(&names);
        let unique: std::collections::HashSet<&String> = slugs.iter().collect();
        prop_assert_eq!(unique.len(), slugs.len());
    }

    #[test]
    fn tiers_order_is_total_and_drift_means_weaker(a in 0usize..6, b in 0usize..6) {
        let (a, b) = (Tier::LADDER[a], Tier::LADDER[b]);
        prop_assert_eq!(Tier::is_drift(a, b), b < a);
    }
}

/// A key/value table (distinct keys) and, for each row, whether the step's actions read its
/// value through `<table:key>`.
fn key_value_table() -> impl Strategy<Value = (Vec<Vec<String>>, Vec<bool>)> {
    (proptest::collection::btree_set("[A-Z][a-z ]{0,8}", 1..6), vec("[a-z0-9 €]{0,8}", 6), vec(any::<bool>(), 6))
        .prop_map(|(keys, values, reads)| {
            let rows: Vec<Vec<String>> = keys.into_iter().zip(values).map(|(key, value)| vec![key, value]).collect();
            let reads = reads[..rows.len()].to_vec();
            (rows, reads)
        })
}

/// A recording of one step with `table`, filling one field per read row with `<table:key>`.
fn reading(table: &[Vec<String>], reads: &[bool]) -> Recording {
    let actions = table
        .iter()
        .zip(reads)
        .filter(|(_, read)| **read)
        .map(|(row, _)| Action::Fill {
            target: Target { label: Some(row[0].clone()), ..Target::default() },
            value: format!("<table:{}>", row[0]),
            timeout_ms: None,
        })
        .collect();
    let spec = StepSpec {
        kind: StepKind::Context,
        text: "I sign in with".into(),
        table: Some(table.to_vec()),
        doc_string: None,
    };
    Recording::new("features/a.feature", "A", vec![RecordedStep::new(spec, actions)])
}

fn with_table(recording: &Recording, table: Vec<Vec<String>>) -> Vec<StepSpec> {
    let mut steps = recording.step_specs();
    steps[0].table = Some(table);
    steps
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_read_value_edit_keeps_a_recording_fresh_and_every_other_table_edit_makes_it_stale(
        (table, reads) in key_value_table(),
        row in any::<prop::sample::Index>(),
        new in "[a-z0-9 ]{0,8}",
    ) {
        let recording = reading(&table, &reads);
        prop_assert!(parse_recording(&serde_json::to_string(&recording).expect("json")).is_ok());
        let row = row.index(table.len());
        let mut edited = table.clone();
        edited[row][1] = format!("{new}~");
        // A value the recording reads through <table:key> is taken from the scenario at replay.
        prop_assert_eq!(recording.is_fresh_for(&with_table(&recording, edited.clone())), reads[row]);
        // A key, a new row, a row gone or a third column always needs a new recording.
        let mut key_edit = table.clone();
        key_edit[row][0] = format!("{}~", key_edit[row][0]);
        prop_assert!(!recording.is_fresh_for(&with_table(&recording, key_edit)));
        let mut added = table.clone();
        added.push(vec!["Zz~".into(), new.clone()]);
        prop_assert!(!recording.is_fresh_for(&with_table(&recording, added)));
        let mut removed = table.clone();
        removed.remove(row);
        prop_assert!(!recording.is_fresh_for(&with_table(&recording, removed)));
        let widened: Vec<Vec<String>> =
            edited.iter().map(|cells| [cells.clone(), vec![String::new()]].concat()).collect();
        prop_assert!(!recording.is_fresh_for(&with_table(&recording, widened)));
    }

    #[test]
    fn tables_that_no_action_reads_or_that_are_not_key_value_keep_their_digest(
        (table, reads) in key_value_table(),
        extra in "[a-z]{0,4}",
    ) {
        let unread = reading(&table, &vec![false; table.len()]);
        prop_assert_eq!(&unread.steps_digest, &steps_digest(&unread.step_specs()));
        // A key twice: <table:key> cannot tell the rows apart, so every cell counts.
        let mut doubled = table.clone();
        doubled.push(vec![table[0][0].clone(), extra.clone()]);
        let recording = reading(&doubled, &[reads.clone(), vec![true]].concat());
        prop_assert_eq!(&recording.steps_digest, &steps_digest(&recording.step_specs()));
        // Three columns are not key/value either.
        let wide: Vec<Vec<String>> = table.iter().map(|row| [row.clone(), vec![extra.clone()]].concat()).collect();
        let recording = reading(&wide, &vec![true; wide.len()]);
        prop_assert_eq!(&recording.steps_digest, &steps_digest(&recording.step_specs()));
    }
}
