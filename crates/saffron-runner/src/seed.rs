//! Level-1 seeding ("record the gaps"): the steps of a scenario to be recorded that other
//! scenarios' recordings already perform are taken from them (replayed at zero tokens), and the
//! agent records only the remaining runs of steps, the segments.
//!
//! Step text is identity: two scenarios writing the same text is the author saying they do the
//! same thing. A step is seeded from a recorded step when
//! - the text, table and doc string are the same (the keyword is not: `Given`, `When` and `Then`
//!   share texts, as in Cucumber; but a `Then` is only seeded from actions that check something);
//! - or the text is the same pattern with other double-quoted values (`I search orders for
//!   "Grace Hopper"` / recorded `"Ada Lovelace"`): each recorded value is replaced where an
//!   action's field equals it exactly. A value found nowhere as a whole field, or also inside a
//!   longer field or a pattern (`Order #1001` for `"#1001"`), refuses the step: the actions
//!   hard-code something the substitution cannot follow. So does a value written twice that
//!   would become two different values;
//! - or the step's key/value table has the same keys, and every value that differs is one the
//!   recorded actions read through `<table:key>`.
//!
//! Texts are compared as written: an Outline's step keeps its `<param>` (its recording does
//! too), so `the saved total is "<total>"` is the same text in every Outline that writes it.
//! Actions that use a `<param>` the step does not show (in its text, table or doc string) are
//! never seeded: another scenario's column of that name may mean something else.
//!
//! Plain data in, plain data out: the caller gives only recordings that may seed (see
//! [`seed_sources`]: fresh, committed, not the scenario's own), never a stale recording or a
//! pending proposal.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use saffron_index::{RecordingState, Snapshot};
use saffron_recording::{
    Action, OperandKind, RecordedStep, Recording, StepKind, StepSpec, TokenKind, table_keys_of, tokenize,
};
use saffron_syntax::step_text::{Quote, StepTokenKind, lex};
use serde_json::Value;

/// The most agent segments a scenario is recorded in; past that, seeding saves little and
/// the agent loses the thread: it records the whole scenario.
pub const MAX_SEGMENTS: usize = 3;

/// What seeding found for one scenario's steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Seeding {
    /// One entry per step: its actions taken from another recording, or `None` for a gap the
    /// agent records.
    pub steps: Vec<Option<Seed>>,
    /// The maximal runs of gaps, in order: one agent session each.
    pub segments: Vec<Range<usize>>,
    /// True when the gaps made more than [`MAX_SEGMENTS`] segments, so the agent records the
    /// whole scenario: every step is then a gap and there is one segment.
    pub whole_scenario: bool,
}

/// A step's actions, taken from a recording of another scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Seed {
    pub actions: Vec<Action>,
    /// Where they come from: the recording's feature and scenario, and the step's index in it.
    pub feature: String,
    pub scenario: String,
    pub step: usize,
    /// The quoted values replaced, recorded value first (empty for the same text).
    pub substituted: Vec<(String, String)>,
    /// True when the table's values differ from the recorded ones (same keys, read through
    /// `<table:key>`).
    pub other_table_values: bool,
}

impl Seeding {
    /// How many steps are seeded.
    pub fn seeded_count(&self) -> usize {
        self.steps.iter().filter(|step| step.is_some()).count()
    }
}

/// Seeds `steps` (a scenario's steps as written) from `recordings`.
///
/// When several recorded steps fit, the same text wins over a generalised match, then the
/// action list recorded most often, then the freshest recording (`recordedAt`), then the
/// earlier in `recordings`.
pub fn seed(steps: &[StepSpec], recordings: &[&Recording]) -> Seeding {
    let seeded: Vec<Option<Seed>> = steps.iter().map(|step| best_seed(step, recordings)).collect();
    let segments = gap_runs(&seeded);
    if segments.len() > MAX_SEGMENTS {
        let every_step = 0..steps.len();
        return Seeding { steps: vec![None; steps.len()], segments: vec![every_step], whole_scenario: true };
    }
    Seeding { steps: seeded, segments, whole_scenario: false }
}

/// Whether a run would take `step`'s actions from one of `recordings` rather than have an agent
/// record them (the scenario's other steps aside: see [`MAX_SEGMENTS`]).
pub fn seedable(step: &StepSpec, recordings: &[&Recording]) -> bool {
    best_seed(step, recordings).is_some()
}

/// The recordings that may seed other scenarios: every committed recording of a runnable
/// scenario that is fresh. Pending proposals are not recordings yet, and a stale recording
/// performs steps that changed since. Found once per run: [`SeedSources::except`] then gives each
/// scenario's sources without looking through the project again.
#[derive(Debug, Clone, Default)]
pub struct SeedSources<'s> {
    recordings: Vec<(&'s Path, &'s Recording)>,
}

impl<'s> SeedSources<'s> {
    pub fn of(snapshot: &'s Snapshot) -> SeedSources<'s> {
        let mut paths: Vec<_> = snapshot
            .scenarios()
            .into_iter()
            .filter(|scenario| scenario.recording == RecordingState::Fresh)
            .map(|scenario| scenario.recording_path)
            .collect();
        paths.sort();
        paths.dedup();
        let recordings = paths
            .iter()
            .filter_map(|path| snapshot.recording(path))
            .map(|data| (data.path.as_ref(), &data.recording))
            .collect();
        SeedSources { recordings }
    }

    /// The sources of the scenario whose recording is (or will be) at `own_recording`: every
    /// one but its own.
    pub fn except(&self, own_recording: &Path) -> Vec<&'s Recording> {
        self.recordings.iter().filter(|(path, _)| *path != own_recording).map(|(_, recording)| *recording).collect()
    }
}

/// [`SeedSources::of`] `snapshot`, [`except`](SeedSources::except) `own_recording`.
pub fn seed_sources<'s>(snapshot: &'s Snapshot, own_recording: &Path) -> Vec<&'s Recording> {
    SeedSources::of(snapshot).except(own_recording)
}

fn gap_runs(steps: &[Option<Seed>]) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        if step.is_some() {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.end == index => run.end = index + 1,
            _ => runs.push(index..index + 1),
        }
    }
    runs
}

/// One recorded step that fits, and how many recorded steps do the same.
struct Candidate<'r> {
    seed: Seed,
    behaviour: Value,
    recorded_at: Option<&'r str>,
    uses: usize,
}

fn best_seed(step: &StepSpec, recordings: &[&Recording]) -> Option<Seed> {
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    for recording in recordings {
        for (index, recorded) in recording.steps.iter().enumerate() {
            let Some(seed) = seed_from(step, recorded, recording, index) else { continue };
            let behaviour = behaviour(&seed.actions);
            let exact = is_exact(&seed);
            // Uses count the same behaviour reached the same way (exactly or generalised).
            for other in candidates.iter_mut().filter(|c| c.behaviour == behaviour && is_exact(&c.seed) == exact) {
                other.uses += 1;
            }
            let uses = 1 + candidates.iter().filter(|c| c.behaviour == behaviour && is_exact(&c.seed) == exact).count();
            candidates.push(Candidate { seed, behaviour, recorded_at: recording.recorded_at.as_deref(), uses });
        }
    }
    // `max_by` keeps the last of equals: reversed, so the earliest recording wins a tie.
    candidates
        .into_iter()
        .rev()
        .max_by(|a, b| {
            // RFC 3339 timestamps in UTC (as Saffron writes them) order as text.
            (is_exact(&a.seed), a.uses, a.recorded_at).cmp(&(is_exact(&b.seed), b.uses, b.recorded_at))
        })
        .map(|candidate| candidate.seed)
}

fn is_exact(seed: &Seed) -> bool {
    seed.substituted.is_empty() && !seed.other_table_values
}

/// The actions as JSON without the tier each target fired at (advisory: the same behaviour).
fn behaviour(actions: &[Action]) -> Value {
    let mut value = serde_json::to_value(actions).unwrap_or(Value::Null);
    strip_key(&mut value, "tier");
    value
}

fn strip_key(value: &mut Value, key: &str) {
    match value {
        Value::Object(map) => {
            map.remove(key);
            map.values_mut().for_each(|item| strip_key(item, key));
        }
        Value::Array(items) => items.iter_mut().for_each(|item| strip_key(item, key)),
        _ => {}
    }
}

/// The recorded step's actions for `step`, when one of the rules allows it.
fn seed_from(step: &StepSpec, recorded: &RecordedStep, recording: &Recording, index: usize) -> Option<Seed> {
    if step.doc_string != recorded.doc_string {
        return None;
    }
    let substitutions =
        if step.text == recorded.text { Vec::new() } else { quoted_substitutions(&recorded.text, &step.text)? };
    let other_table_values = match (&step.table, &recorded.table) {
        (None, None) => false,
        (Some(written), Some(rows)) if written == rows => false,
        (Some(written), Some(rows)) => {
            same_keys_values_read(written, rows, &recorded.actions)?;
            true
        }
        _ => return None,
    };
    let actions = if substitutions.is_empty() {
        recorded.actions.clone()
    } else {
        substitute(&recorded.actions, &substitutions)?
    };
    // A `Then` checks: seeded from actions that only act, it would check nothing.
    if step.kind == StepKind::Outcome && !actions.iter().any(Action::is_assertion) {
        return None;
    }
    if !params_are_written(&actions, step) {
        return None;
    }
    Some(Seed {
        actions,
        feature: recording.feature.clone(),
        scenario: recording.scenario.clone(),
        step: index,
        substituted: substitutions,
        other_table_values,
    })
}

/// True when every `<param>` the actions use is written in the step (its text, table or doc
/// string): an Examples value the step does not show is a dependency its text does not declare,
/// and another scenario's column of that name may mean something else, or not exist.
fn params_are_written(actions: &[Action], step: &StepSpec) -> bool {
    let written = |param: &str| {
        let token = format!("<{param}>");
        step.text.contains(&token)
            || step.doc_string.as_deref().is_some_and(|doc| doc.contains(&token))
            || step.table.iter().flatten().flatten().any(|cell| cell.contains(&token))
    };
    actions.iter().flat_map(Action::operands).all(|operand| {
        tokenize(operand.value).into_iter().all(|token| match token.kind {
            TokenKind::Param(param) => written(param),
            _ => true,
        })
    })
}

/// A text split at its double-quoted values (as [`saffron_syntax::step_text`] reads them): the
/// text between them, and the values.
fn split_quoted(text: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut between, mut values) = (Vec::new(), Vec::new());
    let mut plain_from = 0;
    for value in lex(text).filter(|token| token.kind == StepTokenKind::Quoted(Quote::Double)) {
        between.push(&text[plain_from..value.start]);
        values.push(value.inner());
        plain_from = value.end();
    }
    between.push(&text[plain_from..]);
    (between, values)
}

/// The (recorded, written) value pairs that differ, when the two texts are one pattern with
/// other quoted values; `None` when they are not, or when a recorded value stands for two
/// different written ones (no field could say which), or a recorded value is empty.
fn quoted_substitutions(recorded: &str, written: &str) -> Option<Vec<(String, String)>> {
    let (recorded_between, recorded_values) = split_quoted(recorded);
    let (written_between, written_values) = split_quoted(written);
    if recorded_values.is_empty() || recorded_between != written_between {
        return None;
    }
    let mut mapping: BTreeMap<&str, &str> = BTreeMap::new();
    for (old, new) in recorded_values.iter().zip(&written_values) {
        if mapping.insert(old, new).is_some_and(|earlier| earlier != *new) {
            return None;
        }
    }
    let substitutions: Vec<(String, String)> = mapping
        .into_iter()
        .filter(|(old, new)| old != new)
        .map(|(old, new)| (old.to_string(), new.to_string()))
        .collect();
    if substitutions.iter().any(|(old, _)| old.is_empty()) {
        return None;
    }
    Some(substitutions)
}

/// `actions` with every field equal to a recorded value replaced by the written one; `None`
/// when a recorded value is not a whole field anywhere, or also occurs inside another field or
/// a pattern.
fn substitute(actions: &[Action], substitutions: &[(String, String)]) -> Option<Vec<Action>> {
    let mut actions = actions.to_vec();
    let mut found = vec![false; substitutions.len()];
    for operand in actions.iter_mut().flat_map(Action::operands_mut) {
        if operand.kind == OperandKind::Text
            && let Some(index) = substitutions.iter().position(|(old, _)| operand.value == old)
        {
            *operand.value = substitutions[index].1.clone();
            found[index] = true;
        } else if substitutions.iter().any(|(old, _)| operand.value.contains(old.as_str())) {
            return None;
        }
    }
    if found.contains(&false) {
        return None;
    }
    Some(actions)
}

/// `Some` when both tables are key/value tables with the same keys and every key whose value
/// differs is read through `<table:key>` by the recorded actions (a value not read that way may
/// be recorded as a literal).
fn same_keys_values_read(written: &[Vec<String>], recorded: &[Vec<String>], actions: &[Action]) -> Option<()> {
    let written = key_values(written)?;
    let recorded = key_values(recorded)?;
    if written.keys().collect::<BTreeSet<_>>() != recorded.keys().collect::<BTreeSet<_>>() {
        return None;
    }
    let read = table_keys_of(actions);
    written.iter().all(|(key, value)| recorded.get(key) == Some(value) || read.contains(*key)).then_some(())
}

/// The rows of a key/value table (two cells each, no key twice) by key.
fn key_values(rows: &[Vec<String>]) -> Option<BTreeMap<&String, &String>> {
    let mut map = BTreeMap::new();
    for row in rows {
        let [key, value] = row.as_slice() else { return None };
        if map.insert(key, value).is_some() {
            return None;
        }
    }
    (!map.is_empty()).then_some(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn actions(value: Value) -> Vec<Action> {
        serde_json::from_value(value).expect("actions")
    }

    fn step(kind: StepKind, text: &str, value: Value) -> RecordedStep {
        RecordedStep::new(StepSpec::new(kind, text), actions(value))
    }

    fn recording(scenario: &str, steps: Vec<RecordedStep>) -> Recording {
        Recording::new("features/orders.saffron", scenario, steps)
    }

    fn sign_in_steps() -> Vec<RecordedStep> {
        vec![
            step(
                StepKind::Context,
                "I am on the sign-in page",
                json!([{"type": "goto", "url": "/login"},
                       {"type": "expectVisible", "target": {"role": "heading", "name": "Sign in", "tier": "role"}}]),
            ),
            step(
                StepKind::Action,
                "I sign in with the demo account",
                json!([{"type": "fill", "target": {"role": "textbox", "name": "Email"}, "value": "demo@saffron.test"},
                       {"type": "fill", "target": {"label": "Password"}, "value": "{env:DEMO_PASSWORD}"},
                       {"type": "click", "target": {"role": "button", "name": "Sign in"}}]),
            ),
            step(
                StepKind::Outcome,
                "I see the orders page",
                json!([{"type": "expectUrl", "url": "/orders"},
                       {"type": "expectVisible", "target": {"role": "heading", "name": "Orders"}}]),
            ),
        ]
    }

    /// "Search orders by customer", as the example project records it.
    fn search_orders() -> Recording {
        let mut steps = sign_in_steps();
        steps.push(step(
            StepKind::Action,
            "I search orders for \"Ada Lovelace\"",
            json!([{"type": "fill", "target": {"role": "searchbox", "name": "Search orders", "testId": "search",
                                               "css": ["#search"]}, "value": "Ada Lovelace"},
                   {"type": "click", "target": {"role": "button", "name": "Search"}}]),
        ));
        steps.push(step(
            StepKind::Outcome,
            "every order in the table is for \"Ada Lovelace\"",
            json!([{"type": "expectCount", "target": {"role": "cell", "name": "Ada Lovelace"}, "count": 2}]),
        ));
        recording("Search orders by customer", steps)
    }

    /// "Add a note to an order" and "Delete an order after confirming", as recorded.
    fn order_pages() -> Recording {
        let mut steps = sign_in_steps();
        steps.push(step(
            StepKind::Context,
            "I open the order \"#1001\"",
            json!([{"type": "click", "target": {"role": "link", "name": "#1001", "css": ["a[href=\"/orders/1001\"]"]}},
                   {"type": "expectVisible", "target": {"role": "heading", "name": "Order #1001"}}]),
        ));
        steps.push(step(
            StepKind::Outcome,
            "I see the message \"Order #1004 deleted\"",
            json!([{"type": "expectText", "target": {"testId": "flash", "css": ["#flash"]},
                    "text": "Order #1004 deleted"}]),
        ));
        steps.push(step(
            StepKind::Action,
            "I open the invoice of \"#1001\"",
            json!([{"type": "click", "target": {"role": "link", "name": "Open invoice of #1001"}},
                   {"type": "switchTab", "urlPattern": "/invoices/1001$"}]),
        ));
        recording("Orders", steps)
    }

    /// "Create an order for <customer>" (an Outline), as recorded.
    fn create_order() -> Recording {
        let mut steps = sign_in_steps();
        let mut fill = step(
            StepKind::Action,
            "I fill in the order form:",
            json!([{"type": "fill", "target": {"role": "textbox", "name": "Customer"}, "value": "<table:Customer>"},
                   {"type": "fill", "target": {"role": "spinbutton", "name": "Quantity"}, "value": "<table:Quantity>"},
                   {"type": "select", "target": {"role": "combobox", "name": "Product"}, "values": ["Tea"]}]),
        );
        fill.table = Some(table(&[("Customer", "<customer>"), ("Quantity", "<quantity>"), ("Product", "Tea")]));
        steps.push(fill);
        steps.push(step(
            StepKind::Outcome,
            "the saved total is \"<total>\"",
            json!([{"type": "expectText", "target": {"testId": "saved-total"}, "text": "Total: <total>"}]),
        ));
        steps.push(step(
            StepKind::Outcome,
            "the orders list shows an order for \"<customer>\"",
            json!([{"type": "goto", "url": "/orders"},
                   {"type": "expectVisible", "target": {"role": "cell", "name": "<customer>", "text": "<customer>"}}]),
        ));
        recording("Create an order for <customer>", steps)
    }

    fn table(rows: &[(&str, &str)]) -> Vec<Vec<String>> {
        rows.iter().map(|(key, value)| vec![key.to_string(), value.to_string()]).collect()
    }

    fn written(kind: StepKind, text: &str) -> StepSpec {
        StepSpec::new(kind, text)
    }

    fn seed_one(spec: StepSpec, recordings: &[&Recording]) -> Option<Seed> {
        seed(&[spec], recordings).steps.pop().flatten()
    }

    fn fill_value(seed: &Seed, index: usize) -> Option<&str> {
        match seed.actions.get(index) {
            Some(Action::Fill { value, .. }) => Some(value),
            _ => None,
        }
    }

    #[test]
    fn the_same_step_is_copied_whatever_its_keyword() {
        let source = search_orders();
        let seeded = seed_one(written(StepKind::Action, "I sign in with the demo account"), &[&source])
            .expect("the same text is seeded");
        assert_eq!(seeded.actions, source.steps[1].actions);
        assert_eq!((seeded.scenario.as_str(), seeded.step), ("Search orders by customer", 1));
        assert!(seeded.substituted.is_empty() && !seeded.other_table_values);
        // `Given I sign in...` is the same step: the keyword is no part of the identity.
        let as_given = seed_one(written(StepKind::Context, "I sign in with the demo account"), &[&source]);
        assert_eq!(as_given.map(|seed| seed.actions), Some(source.steps[1].actions.clone()));
    }

    #[test]
    fn a_then_is_not_seeded_from_actions_that_check_nothing() {
        let source = search_orders();
        assert!(seed_one(written(StepKind::Outcome, "I sign in with the demo account"), &[&source]).is_none());
        // The other way round is fine: a Given may check where it is.
        assert!(seed_one(written(StepKind::Context, "I see the orders page"), &[&source]).is_some());
    }

    #[test]
    fn a_different_table_or_doc_string_is_not_the_same_step() {
        let mut source = order_pages();
        source.steps[1].doc_string = Some("Deliver before noon, please.".into());
        let mut note = written(StepKind::Action, "I sign in with the demo account");
        assert!(seed_one(note.clone(), &[&source]).is_none(), "no doc string is not that doc string");
        note.doc_string = Some("Deliver after noon.".into());
        assert!(seed_one(note.clone(), &[&source]).is_none());
        note.doc_string = Some("Deliver before noon, please.".into());
        assert!(seed_one(note.clone(), &[&source]).is_some());
        note.table = Some(table(&[("Customer", "Ada")]));
        assert!(seed_one(note, &[&source]).is_none(), "a table the recording did not have");
    }

    #[test]
    fn another_quoted_value_replaces_the_fields_equal_to_the_recorded_one() {
        let source = search_orders();
        let seeded =
            seed_one(written(StepKind::Action, "I search orders for \"Grace Hopper\""), &[&source]).expect("seeded");
        assert_eq!(fill_value(&seeded, 0), Some("Grace Hopper"));
        assert_eq!(seeded.substituted, [("Ada Lovelace".to_string(), "Grace Hopper".to_string())]);
        // Everything else is as recorded.
        assert_eq!(seeded.actions[1], source.steps[3].actions[1]);
        let then = seed_one(written(StepKind::Outcome, "every order in the table is for \"Grace Hopper\""), &[&source])
            .expect("seeded");
        assert!(matches!(&then.actions[0], Action::ExpectCount { target, .. }
            if target.name.as_deref() == Some("Grace Hopper")));

        let messages = order_pages();
        let message = seed_one(written(StepKind::Outcome, "I see the message \"Order #1003 refunded\""), &[&messages])
            .expect("seeded");
        assert!(matches!(&message.actions[0], Action::ExpectText { text: Some(text), .. }
            if text == "Order #1003 refunded"));
    }

    #[test]
    fn a_value_also_inside_a_longer_field_or_a_pattern_refuses_the_step() {
        let source = order_pages();
        // The heading "Order #1001" holds the value inside a longer text: it would stay #1001.
        assert!(seed_one(written(StepKind::Context, "I open the order \"#1003\""), &[&source]).is_none());
        // The tab's URL pattern names the invoice: a pattern is never rewritten.
        assert!(seed_one(written(StepKind::Action, "I open the invoice of \"#1002\""), &[&source]).is_none());
    }

    #[test]
    fn a_value_no_field_holds_whole_refuses_the_step() {
        let source = create_order();
        // Recorded as "Total: <total>": the value is not a field of its own.
        assert!(seed_one(written(StepKind::Outcome, "the saved total is \"€9.00\""), &[&source]).is_none());
        // The heading is found by its test id: the recorded value is in no field at all.
        let heading = recording(
            "New order",
            vec![step(
                StepKind::Outcome,
                "I see the heading \"New order\"",
                json!([{"type": "expectVisible", "target": {"role": "heading", "testId": "page-title"}}]),
            )],
        );
        assert!(seed_one(written(StepKind::Outcome, "I see the heading \"Edit order\""), &[&heading]).is_none());
    }

    #[test]
    fn other_words_or_numbers_are_another_step() {
        let source = search_orders();
        assert!(seed_one(written(StepKind::Action, "I search invoices for \"Grace Hopper\""), &[&source]).is_none());
        let quantity = recording(
            "The total follows the quantity and the product",
            vec![step(
                StepKind::Action,
                "I set the quantity to 2 and choose \"Mugs\"",
                json!([{"type": "fill", "target": {"role": "spinbutton", "name": "Quantity"}, "value": "2"},
                       {"type": "select", "target": {"role": "combobox", "name": "Product"}, "values": ["Mugs"]}]),
            )],
        );
        // Unquoted numbers are words of the text, not values.
        assert!(
            seed_one(written(StepKind::Action, "I set the quantity to 3 and choose \"Tea\""), &[&quantity]).is_none()
        );
        let tea = seed_one(written(StepKind::Action, "I set the quantity to 2 and choose \"Tea\""), &[&quantity])
            .expect("only the quoted value differs");
        assert!(matches!(&tea.actions[1], Action::Select { values, .. } if values == &["Tea"]));
    }

    #[test]
    fn a_field_equal_to_one_value_is_replaced_even_when_another_value_is_part_of_it() {
        let source = recording(
            "Rename",
            vec![step(
                StepKind::Action,
                "I rename \"Ada\" to \"Ada Lovelace\"",
                json!([{"type": "fill", "target": {"role": "textbox", "name": "Ada"}, "value": "Ada Lovelace"}]),
            )],
        );
        let seeded = seed_one(written(StepKind::Action, "I rename \"Grace\" to \"Grace Hopper\""), &[&source])
            .expect("each field equals one recorded value");
        assert!(matches!(&seeded.actions[0], Action::Fill { target, value, .. }
            if target.name.as_deref() == Some("Grace") && value == "Grace Hopper"));
    }

    #[test]
    fn one_recorded_value_written_as_two_different_values_refuses_the_step() {
        let source = recording(
            "Move",
            vec![step(
                StepKind::Action,
                "I move the order \"#1001\" before \"#1001\"",
                json!([{"type": "click", "target": {"role": "link", "name": "#1001"}}]),
            )],
        );
        assert!(
            seed_one(written(StepKind::Action, "I move the order \"#1002\" before \"#1003\""), &[&source]).is_none()
        );
        assert!(
            seed_one(written(StepKind::Action, "I move the order \"#1001\" before \"#1003\""), &[&source]).is_none()
        );
        assert!(
            seed_one(written(StepKind::Action, "I move the order \"#1002\" before \"#1002\""), &[&source]).is_some()
        );
    }

    #[test]
    fn outline_steps_match_as_written_and_params_are_values_like_any_other() {
        let source = create_order();
        // The same Outline step elsewhere: the same text with its <param>, copied as recorded.
        let same =
            seed_one(written(StepKind::Outcome, "the orders list shows an order for \"<customer>\""), &[&source])
                .expect("seeded");
        assert!(same.substituted.is_empty());
        assert_eq!(same.actions, source.steps[5].actions);
        // A plain scenario's value in place of the <param>: name and text both follow.
        let plain =
            seed_one(written(StepKind::Outcome, "the orders list shows an order for \"Ada Lovelace\""), &[&source])
                .expect("seeded");
        assert!(matches!(&plain.actions[1], Action::ExpectVisible { target, .. }
            if target.name.as_deref() == Some("Ada Lovelace") && target.text.as_deref() == Some("Ada Lovelace")));
        // And the other way: another Outline's <param> in place of a recorded value.
        let search = search_orders();
        let outline = seed_one(written(StepKind::Action, "I search orders for \"<who>\""), &[&search]).expect("seeded");
        assert_eq!(fill_value(&outline, 0), Some("<who>"));
    }

    #[test]
    fn actions_that_use_an_examples_value_the_step_does_not_show_are_not_seeded() {
        let source = recording(
            "Create an order for <customer>",
            vec![step(
                StepKind::Action,
                "I choose the product",
                json!([{"type": "select", "target": {"role": "combobox", "name": "Product"}, "values": ["<product>"]}]),
            )],
        );
        assert!(seed_one(written(StepKind::Action, "I choose the product"), &[&source]).is_none());
        // Shown in the text, the value is the step's own: "the saved total is "<total>"".
        let shown = create_order();
        assert!(seed_one(written(StepKind::Outcome, "the saved total is \"<total>\""), &[&shown]).is_some());
        // Shown in the table.
        let mut customer = step(
            StepKind::Action,
            "I fill in the customer:",
            json!([{"type": "fill", "target": {"role": "textbox", "name": "Customer"}, "value": "<customer>"}]),
        );
        customer.table = Some(table(&[("Customer", "<customer>")]));
        let in_table = recording("Create an order for <customer>", vec![customer]);
        let form = StepSpec {
            table: Some(table(&[("Customer", "<customer>")])),
            ..written(StepKind::Action, "I fill in the customer:")
        };
        assert!(seed_one(form, &[&in_table]).is_some());
    }

    #[test]
    fn a_key_value_table_with_the_same_keys_is_seeded_when_its_values_are_read_through_tokens() {
        let source = create_order();
        let form = |rows: &[(&str, &str)]| StepSpec {
            table: Some(table(rows)),
            ..written(StepKind::Action, "I fill in the order form:")
        };
        let seeded = seed_one(form(&[("Quantity", "1"), ("Customer", "Ada Lovelace"), ("Product", "Tea")]), &[&source])
            .expect("same keys, the values that differ are read through <table:key>");
        assert!(seeded.other_table_values);
        assert_eq!(seeded.actions, source.steps[3].actions, "the actions read the new values at replay");
        // Product is recorded as a literal "Tea": another product is not what was recorded.
        assert!(seed_one(form(&[("Customer", "Ada"), ("Quantity", "1"), ("Product", "Mugs")]), &[&source]).is_none());
        // Another key, or one missing.
        assert!(seed_one(form(&[("Customer", "Ada"), ("Quantity", "1"), ("Colour", "Tea")]), &[&source]).is_none());
        assert!(seed_one(form(&[("Customer", "Ada"), ("Quantity", "1")]), &[&source]).is_none());
        // A table that is not key/value shaped is compared whole.
        let wide = StepSpec {
            table: Some(vec![vec!["Customer".into(), "Quantity".into(), "Product".into()]]),
            ..written(StepKind::Action, "I fill in the order form:")
        };
        assert!(seed_one(wide, &[&source]).is_none());
    }

    #[test]
    fn the_behaviour_recorded_most_often_wins_then_the_freshest() {
        let save = |scenario: &str, wait: bool, at: &str| {
            let mut actions = vec![json!({"type": "click", "target": {"role": "button", "name": "Save order"}})];
            if wait {
                actions.push(json!({"type": "waitForResponse", "response": {"urlRegex": "^/api/orders$"}}));
            }
            let mut recording =
                recording(scenario, vec![step(StepKind::Action, "I save the order", Value::Array(actions))]);
            recording.recorded_at = Some(at.to_string());
            recording
        };
        let waits = save("Create an order", true, "2026-11-30T10:00:00Z");
        let plain_old = save("An order needs a customer", false, "2026-11-01T10:00:00Z");
        let plain_older = save("Gift wrap", false, "2026-10-01T10:00:00Z");
        let chosen = seed_one(written(StepKind::Action, "I save the order"), &[&waits, &plain_old, &plain_older])
            .expect("seeded");
        assert_eq!(chosen.actions.len(), 1, "two recordings click only, one also waits");
        assert_eq!(chosen.scenario, "An order needs a customer", "the freshest of the two");
        let chosen = seed_one(written(StepKind::Action, "I save the order"), &[&plain_older, &waits]).expect("seeded");
        assert_eq!(chosen.scenario, "Create an order", "one each: the freshest");
        // The tier each target fired at is not behaviour.
        let mut retiered = save("Retiered", true, "2026-09-01T10:00:00Z");
        if let Some(target) = retiered.steps[0].actions[0].target_mut() {
            target.tier = Some(saffron_recording::Tier::Css);
        }
        let waits_before = save("Create an order", true, "2026-09-15T10:00:00Z");
        let chosen = seed_one(written(StepKind::Action, "I save the order"), &[&plain_old, &waits_before, &retiered])
            .expect("seeded");
        assert_eq!(chosen.scenario, "Create an order", "recorded twice, once at another tier");
    }

    #[test]
    fn the_same_text_wins_over_another_value() {
        let ada = search_orders();
        let mut grace = search_orders();
        grace.scenario = "Search for Grace".into();
        grace.steps[3] = step(
            StepKind::Action,
            "I search orders for \"Grace Hopper\"",
            json!([{"type": "fill", "target": {"role": "searchbox", "name": "Search orders"}, "value": "Grace Hopper"},
                   {"type": "press", "key": "Enter"}]),
        );
        let chosen = seed_one(written(StepKind::Action, "I search orders for \"Grace Hopper\""), &[&ada, &ada, &grace])
            .expect("seeded");
        assert_eq!(chosen.scenario, "Search for Grace");
        assert!(chosen.substituted.is_empty());
    }

    #[test]
    fn gaps_make_segments_and_more_than_three_give_the_agent_the_whole_scenario() {
        let source = search_orders();
        let known = |kind| written(kind, "I sign in with the demo account");
        let gap = |text: &str| written(StepKind::Action, text);
        // Steps of "Hovering the help button explains the search" with the search's sign-in.
        let steps = vec![
            written(StepKind::Context, "I am on the sign-in page"),
            known(StepKind::Action),
            written(StepKind::Outcome, "I see the orders page"),
            gap("I hover over the help button"),
            written(StepKind::Outcome, "I see the tooltip \"Search by customer name\""),
        ];
        let seeding = seed(&steps, &[&source]);
        let hover_and_tooltip = 3..5;
        assert_eq!(seeding.segments, [hover_and_tooltip]);
        assert_eq!(seeding.seeded_count(), 3);
        assert!(!seeding.whole_scenario);

        let islands = vec![
            gap("I export the orders"),
            known(StepKind::Action),
            gap("I hover over the help button"),
            known(StepKind::Action),
            gap("I refund the order"),
            known(StepKind::Action),
        ];
        let seeding = seed(&islands, &[&source]);
        assert_eq!(seeding.segments, [0..1, 2..3, 4..5], "three segments: still seeded");
        assert_eq!(seeding.seeded_count(), 3);

        let mut four = islands;
        four.push(gap("I sign out"));
        let seeding = seed(&four, &[&source]);
        assert!(seeding.whole_scenario, "four segments");
        let every_step = 0..four.len();
        assert_eq!(seeding.segments, [every_step]);
        assert_eq!(seeding.seeded_count(), 0);
        assert!(seeding.steps.iter().all(Option::is_none));

        let none = seed(&[], &[&source]);
        assert!(none.segments.is_empty() && !none.whole_scenario);
    }

    #[test]
    fn only_fresh_committed_recordings_of_other_scenarios_seed() {
        let root = tempfile::tempdir().expect("temp dir");
        let feature = "Feature: Orders\n\n  Scenario: Search orders by customer\n    Given I am on the sign-in page\n\n  \
                       Scenario: Export the orders\n    Given I am on the sign-in page\n    When I export the orders\n\n  \
                       Scenario: Refund an order\n    Given I am on the sign-in page\n";
        std::fs::create_dir_all(root.path().join("features")).expect("mkdir");
        std::fs::write(root.path().join("features/orders.feature"), feature).expect("feature");
        let (host, _) = saffron_index::IndexHost::load(root.path());
        let mut host = host;
        let on_sign_in = |scenario: &str, extra: &[&str]| {
            let mut steps = vec![sign_in_steps().remove(0)];
            for text in extra {
                steps.push(step(StepKind::Action, text, json!([{"type": "click", "target": {"role": "button"}}])));
            }
            recording(scenario, steps)
        };
        let cache = std::path::Path::new(".saffron/cache/orders");
        // Fresh; stale (a step was removed from the scenario since); the scenario's own.
        for (slug, recording) in [
            ("search-orders-by-customer.json", on_sign_in("Search orders by customer", &[])),
            ("export-the-orders.json", on_sign_in("Export the orders", &["I export the orders", "I wait"])),
            ("refund-an-order.json", on_sign_in("Refund an order", &[])),
        ] {
            host.apply(saffron_index::Change::SetRecording { path: cache.join(slug), recording: Box::new(recording) });
        }
        // A proposal pending review, made for "Export the orders" as it is now: not a recording yet.
        let proposal = saffron_recording::Proposal::file(
            saffron_recording::ProposalDraft {
                scenario: saffron_recording::ScenarioRef {
                    feature: "features/orders.feature".into(),
                    name: "Export the orders".into(),
                    cache_path: ".saffron/cache/orders/export-the-orders.json".into(),
                },
                recording: on_sign_in("Export the orders", &["I export the orders"]),
                feature_edits: Vec::new(),
                narrative: String::new(),
                adaptations: Vec::new(),
                usage: None,
                filed_at: None,
                unverified: None,
            },
            None,
        );
        host.apply(saffron_index::Change::SetProposal {
            path: ".saffron/proposals/orders/export-the-orders.json".into(),
            proposal: Box::new(proposal),
        });
        let snapshot = host.snapshot();
        let sources = seed_sources(&snapshot, &cache.join("refund-an-order.json"));
        let names: Vec<&str> = sources.iter().map(|recording| recording.scenario.as_str()).collect();
        assert_eq!(names, ["Search orders by customer"]);
        let export = seed(&[written(StepKind::Action, "I export the orders")], &sources);
        assert_eq!(export.segments.len(), 1, "neither the stale recording nor the proposal seeds it");
    }
}
