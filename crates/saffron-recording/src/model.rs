//! The recording (cache) file: one scenario's steps and the actions recorded for each.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::digest::{steps_digest_reading, table_keys_of};

/// The recording format version this crate writes and reads.
pub const RECORDING_VERSION: u32 = 1;

/// One scenario's recording. An Outline's Examples rows share one recording: `scenario` and
/// the step texts keep their `<param>` placeholders as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a recording (a JSON object)")]
pub struct Recording {
    /// Format version: 1.
    pub version: u32,
    /// The feature file, relative to the project root, with `/` separators.
    pub feature: String,
    /// The scenario name as written.
    pub scenario: String,
    /// The scenario's steps, Background steps and StepSet expansions included.
    pub steps: Vec<RecordedStep>,
    /// SHA-256 of the steps as written (kind, text, table, doc string), 64 hex digits: the
    /// recording is fresh while the scenario's steps have this digest.
    pub steps_digest: String,
    /// When it was recorded (RFC 3339), informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<String>,
    /// The base URL it was recorded against, informational: replay uses the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// SHA-256 (64 hex digits) of each pinned OpenAPI contract its `expectSchema` checks were
    /// recorded against, by service: the recording is stale once one of them changes.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub api_contracts: std::collections::BTreeMap<String, String>,
}

/// One step of the scenario and the actions that perform or check it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a step (a JSON object)")]
pub struct RecordedStep {
    /// Given, When or Then (And and But take the kind of the step before).
    pub kind: StepKind,
    /// The step text without its keyword, placeholders as written.
    pub text: String,
    /// The step's data table, rows of cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Vec<Vec<String>>>,
    /// The step's doc string content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc_string: Option<String>,
    /// What replay does for this step, in order.
    pub actions: Vec<Action>,
}

/// A step's role in the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StepKind {
    /// `Given`: setting up.
    Context,
    /// `When`: doing.
    Action,
    /// `Then`: checking. Its assertions are never healed.
    Outcome,
}

/// A scenario step as written, without actions: what freshness and digests are computed over.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StepSpec {
    /// See [`RecordedStep::kind`].
    pub kind: StepKind,
    /// See [`RecordedStep::text`].
    pub text: String,
    /// See [`RecordedStep::table`].
    pub table: Option<Vec<Vec<String>>>,
    /// See [`RecordedStep::doc_string`].
    pub doc_string: Option<String>,
}

impl StepKind {
    /// The kind of a step from its English keyword (`Given`, `When`, `Then`, `And`, `But`,
    /// `*`), given the kind of the step before it. A conjunction with nothing before it, or
    /// a keyword this function does not know, counts as context: a parser with localized
    /// keywords maps them to Given/When/Then itself.
    pub fn from_keyword(keyword: &str, previous: Option<StepKind>) -> StepKind {
        match keyword.trim() {
            "Given" => StepKind::Context,
            "When" => StepKind::Action,
            "Then" => StepKind::Outcome,
            _ => previous.unwrap_or(StepKind::Context),
        }
    }

    /// The English keyword a step of this kind is written with, for people and prompts.
    pub fn keyword(self) -> &'static str {
        match self {
            StepKind::Context => "Given",
            StepKind::Action => "When",
            StepKind::Outcome => "Then",
        }
    }

    /// The kind's name as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Context => "context",
            StepKind::Action => "action",
            StepKind::Outcome => "outcome",
        }
    }
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl StepSpec {
    /// A step with no table and no doc string.
    pub fn new(kind: StepKind, text: impl Into<String>) -> StepSpec {
        StepSpec { kind, text: text.into(), table: None, doc_string: None }
    }
}

impl RecordedStep {
    /// The step as written, without its actions.
    pub fn spec(&self) -> StepSpec {
        StepSpec {
            kind: self.kind,
            text: self.text.clone(),
            table: self.table.clone(),
            doc_string: self.doc_string.clone(),
        }
    }

    /// A recorded step for `spec` performing `actions`.
    pub fn new(spec: StepSpec, actions: Vec<Action>) -> RecordedStep {
        RecordedStep { kind: spec.kind, text: spec.text, table: spec.table, doc_string: spec.doc_string, actions }
    }
}

impl Recording {
    /// A version-1 recording of `steps`, its steps digest computed.
    pub fn new(feature: impl Into<String>, scenario: impl Into<String>, steps: Vec<RecordedStep>) -> Recording {
        let mut recording = Recording {
            version: RECORDING_VERSION,
            feature: feature.into(),
            scenario: scenario.into(),
            steps,
            steps_digest: String::new(),
            recorded_at: None,
            base_url: None,
            api_contracts: Default::default(),
        };
        recording.update_steps_digest();
        recording
    }

    /// The services whose responses an `expectSchema` check reads: those of the requests
    /// before each check.
    pub fn schema_checked_services(&self) -> std::collections::BTreeSet<String> {
        let mut services = std::collections::BTreeSet::new();
        let mut latest: std::collections::BTreeMap<Option<&String>, &String> = Default::default();
        for action in self.steps.iter().flat_map(|step| &step.actions) {
            match action {
                Action::Request { service, session, .. } => {
                    latest.insert(session.as_ref(), service);
                }
                Action::ExpectSchema { session, .. } => {
                    if let Some(service) = latest.get(&session.as_ref()) {
                        services.insert((*service).clone());
                    }
                }
                _ => {}
            }
        }
        services
    }

    /// Sets `stepsDigest` to the digest of the recording's own steps, after they were edited.
    pub fn update_steps_digest(&mut self) {
        self.steps_digest = self.digest_for(&self.step_specs());
    }

    /// The steps digest `steps` have for this recording: the values of key/value tables that
    /// its actions read through `<table:key>` are left out (see
    /// [`crate::steps_digest_reading`]).
    pub fn digest_for(&self, steps: &[StepSpec]) -> String {
        let reads: Vec<_> = self.steps.iter().map(|step| table_keys_of(&step.actions)).collect();
        steps_digest_reading(steps, &reads)
    }

    /// The steps as written, without actions.
    pub fn step_specs(&self) -> Vec<StepSpec> {
        self.steps.iter().map(RecordedStep::spec).collect()
    }

    /// The actions of the step at `index`, or `None` past the last step.
    pub fn actions_of(&self, index: usize) -> Option<&[Action]> {
        self.steps.get(index).map(|step| step.actions.as_slice())
    }

    /// True when the recording was made for exactly these steps (kinds, texts, tables and doc
    /// strings; Examples values and the table values it reads through `<table:key>` play no
    /// part). A stale recording is re-recorded, not replayed.
    pub fn is_fresh_for(&self, current_steps: &[StepSpec]) -> bool {
        self.digest_for(current_steps) == self.steps_digest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Target;

    fn sample() -> Recording {
        Recording::new(
            "features/shop/cart.feature",
            "Add <product> to the cart",
            vec![
                RecordedStep::new(
                    StepSpec::new(StepKind::Context, "I am on the shop"),
                    vec![Action::Goto { url: "/".into(), timeout_ms: None }],
                ),
                RecordedStep::new(
                    StepSpec::new(StepKind::Action, "I add <product>"),
                    vec![Action::Click { target: Target::role("button", "Add <product>"), timeout_ms: None }],
                ),
            ],
        )
    }

    #[test]
    fn keywords_map_to_kinds_and_conjunctions_inherit() {
        assert_eq!(StepKind::from_keyword("Given ", None), StepKind::Context);
        assert_eq!(StepKind::from_keyword("When", None), StepKind::Action);
        assert_eq!(StepKind::from_keyword("Then", None), StepKind::Outcome);
        assert_eq!(StepKind::from_keyword("And", Some(StepKind::Outcome)), StepKind::Outcome);
        assert_eq!(StepKind::from_keyword("But", Some(StepKind::Action)), StepKind::Action);
        assert_eq!(StepKind::from_keyword("*", None), StepKind::Context);
    }

    #[test]
    fn freshness_follows_the_steps_as_written() {
        let recording = sample();
        let mut current = recording.step_specs();
        assert!(recording.is_fresh_for(&current));
        current[1].table = Some(vec![vec!["a".into()]]);
        assert!(!recording.is_fresh_for(&current));
        current[1].table = None;
        current[1].kind = StepKind::Outcome;
        assert!(!recording.is_fresh_for(&current));
        assert!(!recording.is_fresh_for(&current[..1]));
    }

    #[test]
    fn actions_of_a_step() {
        let recording = sample();
        assert_eq!(recording.actions_of(1).map(<[Action]>::len), Some(1));
        assert_eq!(recording.actions_of(2), None);
    }

    #[test]
    fn json_is_camel_case_and_omits_absent_fields() {
        let json = serde_json::to_value(sample()).expect("serializes");
        assert_eq!(json["version"], 1);
        assert!(json.get("stepsDigest").is_some());
        assert!(json.get("recordedAt").is_none());
        assert!(json["steps"][0].get("docString").is_none());
        assert_eq!(json["steps"][1]["actions"][0]["target"]["role"], "button");
    }
}
