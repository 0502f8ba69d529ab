//! From the gateway's accepted calls to a recording: actions before the first announced step
//! are diagnosis and dropped, each action goes under the step announced last, and of
//! consecutive fills of one field only the last is kept (the agent corrected itself).

use saffron_recording::{Action, RecordedStep, Recording, StepSpec};

use super::gateway::Entry;

/// What a step's actions come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepSource {
    /// Given (seeded from another recording): replayed, not recorded by the agent.
    Given(Vec<Action>),
    /// Recorded by the agent.
    Agent,
}

/// Where a step's actions come from while the agent records its scenario: the actions another
/// recording has for it (`seed`), replayed on the page between the agent's segments, or the
/// agent. A step whose seed sends requests is the agent's: between segments only the page is
/// driven, and requests go through the agent's request tools.
pub fn source_of(seed: Option<&[Action]>) -> StepSource {
    match seed {
        Some(actions) if !actions.iter().any(Action::is_http) => StepSource::Given(actions.to_vec()),
        _ => StepSource::Agent,
    }
}

/// The actions of each step, from the given ones and the agent's entries (of every segment).
pub fn step_actions(sources: &[StepSource], entries: &[Entry]) -> Vec<Vec<Action>> {
    let mut steps: Vec<Vec<Action>> = sources
        .iter()
        .map(|source| match source {
            StepSource::Given(actions) => actions.clone(),
            StepSource::Agent => Vec::new(),
        })
        .collect();
    for entry in entries {
        let Some(index) = entry.step else { continue };
        let Some(actions) = steps.get_mut(index) else { continue };
        if matches!(sources.get(index), Some(StepSource::Given(_))) {
            continue;
        }
        if let (Action::Fill { target, .. }, Some(Action::Fill { target: last, .. })) = (&entry.action, actions.last())
            && last == target
        {
            actions.pop();
        }
        actions.push(entry.action.clone());
    }
    steps
}

/// The recording of `steps` (as written, placeholders kept) with `actions` per step.
pub fn build(feature: &str, scenario: &str, steps: &[StepSpec], actions: Vec<Vec<Action>>) -> Recording {
    let recorded = steps.iter().cloned().zip(actions).map(|(spec, actions)| RecordedStep::new(spec, actions)).collect();
    Recording::new(feature, scenario, recorded)
}

/// The fragile targets of the actions `kept` (per step: what the recording or the repair
/// keeps), one line each: an action the agent took that the recording does not hold (a check a
/// repair's merge discarded, a fill corrected later) is not worth a warning.
pub fn fragile_lines(entries: &[Entry], kept: &[Vec<Action>]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let is_kept = |entry: &&Entry| {
        entry.step.and_then(|step| kept.get(step)).is_some_and(|actions| actions.contains(&entry.action))
    };
    for line in entries.iter().filter(is_kept).filter_map(|entry| entry.fragile.clone()) {
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use saffron_recording::{StepKind, Target};

    use super::*;

    fn fill(name: &str, value: &str) -> Action {
        Action::Fill { target: Target::role("textbox", name), value: value.into(), timeout_ms: None }
    }

    fn entry(step: Option<usize>, action: Action) -> Entry {
        Entry { step, action, fragile: None }
    }

    #[test]
    fn a_seed_that_sends_requests_is_recorded_by_the_agent_not_replayed_on_the_page() {
        let page = vec![fill("Email", "ada@example.com")];
        assert_eq!(source_of(Some(&page)), StepSource::Given(page.clone()));
        let request: Action = serde_json::from_value(serde_json::json!({
            "type": "request", "service": "app", "method": "GET", "path": "/api/orders"
        }))
        .expect("a request");
        assert_eq!(source_of(Some(&[page[0].clone(), request])), StepSource::Agent);
        assert_eq!(source_of(None), StepSource::Agent);
    }

    #[test]
    fn fragile_lines_name_only_the_actions_the_recording_keeps() {
        let check = Action::ExpectVisible {
            target: Target { css: vec!["li:nth-of-type(1)".into()], ..Target::default() },
            timeout_ms: None,
        };
        let fragile = |step, action: Action, line: &str| Entry { step, action, fragile: Some(line.into()) };
        let entries = vec![
            fragile(None, fill("Search", "x"), "diagnosis"),
            fragile(Some(0), fill("Email", "a"), "corrected fill"),
            entry(Some(0), fill("Email", "ab")),
            fragile(Some(1), check.clone(), "discarded check"),
            fragile(Some(1), fill("Name", "Ada"), "kept fill"),
        ];
        // As a repair's merge keeps them: step 2's check discarded, the committed one kept.
        let kept = vec![vec![fill("Email", "ab")], vec![fill("Name", "Ada")]];
        assert_eq!(fragile_lines(&entries, &kept), vec!["kept fill".to_owned()]);
        let recorded = step_actions(&[StepSource::Agent, StepSource::Agent], &entries);
        assert_eq!(fragile_lines(&entries, &recorded), vec!["discarded check".to_owned(), "kept fill".to_owned()]);
    }

    #[test]
    fn diagnosis_is_dropped_fills_are_deduplicated_and_actions_go_under_their_step() {
        let click = Action::Click { target: Target::role("button", "Save"), timeout_ms: None };
        let entries = vec![
            entry(None, click.clone()),
            entry(Some(0), fill("Email", "a")),
            entry(Some(0), fill("Email", "ab")),
            entry(Some(0), fill("Name", "x")),
            entry(Some(0), fill("Email", "abc")),
            entry(Some(1), click.clone()),
        ];
        let sources = vec![StepSource::Agent, StepSource::Agent, StepSource::Agent];
        let actions = step_actions(&sources, &entries);
        assert_eq!(actions[0], vec![fill("Email", "ab"), fill("Name", "x"), fill("Email", "abc")]);
        assert_eq!(actions[1], vec![click]);
        assert!(actions[2].is_empty());
    }

    #[test]
    fn given_steps_keep_their_actions() {
        let given = vec![Action::Goto { url: "/login".into(), timeout_ms: None }];
        let sources = vec![StepSource::Given(given.clone()), StepSource::Agent];
        let entries = vec![entry(Some(0), fill("Email", "a")), entry(Some(1), fill("Email", "b"))];
        let actions = step_actions(&sources, &entries);
        assert_eq!(actions, vec![given, vec![fill("Email", "b")]]);
        let steps = vec![StepSpec::new(StepKind::Context, "a"), StepSpec::new(StepKind::Action, "b")];
        let recording = build("features/x.feature", "X", &steps, actions);
        assert!(recording.is_fresh_for(&steps));
    }
}
