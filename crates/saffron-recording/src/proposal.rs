//! Proposals: a healed or new recording waiting for a person to accept or reject it.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diff::{StepDiff, diff_recordings};
use crate::digest::{content_digest, contract_digest};
use crate::model::{Recording, StepSpec};

/// The proposal format version this crate writes and reads.
pub const PROPOSAL_VERSION: u32 = 1;

/// A proposed recording with everything a reviewer needs, bound to what it was made against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a proposal (a JSON object)")]
pub struct Proposal {
    /// Format version: 1.
    pub version: u32,
    /// Which scenario, and where its recording lives.
    pub scenario: ScenarioRef,
    /// The recording `saffron accept` would write.
    pub recording: Recording,
    /// The action-level diff from the committed recording, for review.
    #[serde(default)]
    pub diff: Vec<StepDiff>,
    /// Edits to feature files that keep the written steps true to the recording.
    #[serde(default)]
    pub feature_edits: Vec<FeatureEdit>,
    /// The agent's account of what changed and why.
    #[serde(default)]
    pub narrative: String,
    /// One line per adaptation the agent made.
    #[serde(default)]
    pub adaptations: Vec<String>,
    /// Tokens and cost of the session that made it, as the provider reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Digests of what the proposal was made against.
    pub binding: Binding,
    /// When it was filed (RFC 3339), informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filed_at: Option<String>,
    /// Set when the repaired recording did not pass its proof replay (after one refine): how the
    /// proof failed. Such a proposal is kept for a person to read; it is never replayed as
    /// pending and `saffron accept` refuses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified: Option<String>,
}

/// The scenario a proposal is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a scenario reference (a JSON object)")]
pub struct ScenarioRef {
    /// The feature file, relative to the project root.
    pub feature: String,
    /// The scenario name as written.
    pub name: String,
    /// The recording's path relative to the project root, `.saffron/cache/...json`.
    pub cache_path: String,
}

/// A one-line edit to a feature file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a feature edit (a JSON object)")]
pub struct FeatureEdit {
    /// The file, relative to the project root.
    pub file: String,
    /// The 1-based line.
    pub line: u32,
    /// The line as it is now; the edit is refused if it is no longer there.
    pub before: String,
    /// The line as proposed.
    pub after: String,
    /// The StepSet the step comes from, when the line is inside one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_set: Option<String>,
}

/// Model usage as reported by the provider; absent numbers were not reported.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "usage (a JSON object)")]
pub struct Usage {
    /// Input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Cost in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// The three digests a proposal is bound to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", expecting = "a binding (a JSON object)")]
pub struct Binding {
    /// Steps digest of the scenario when the proposal was filed.
    pub steps_digest: String,
    /// Contract digest of the committed recording when filed (its steps and actions); absent
    /// when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_digest: Option<String>,
    /// Content digest of the proposal's own recording and feature edits.
    pub content_digest: String,
}

/// What a proposal is made of before it is filed.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposalDraft {
    /// See [`Proposal::scenario`].
    pub scenario: ScenarioRef,
    /// See [`Proposal::recording`].
    pub recording: Recording,
    /// See [`Proposal::feature_edits`].
    pub feature_edits: Vec<FeatureEdit>,
    /// See [`Proposal::narrative`].
    pub narrative: String,
    /// See [`Proposal::adaptations`].
    pub adaptations: Vec<String>,
    /// See [`Proposal::usage`].
    pub usage: Option<Usage>,
    /// See [`Proposal::filed_at`].
    pub filed_at: Option<String>,
    /// See [`Proposal::unverified`].
    pub unverified: Option<String>,
}

/// Why a proposal no longer fits and cannot be accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stale {
    /// The scenario's steps changed since the proposal was filed.
    StepsChanged,
    /// The committed recording changed, appeared or disappeared since the proposal was filed.
    CommittedRecordingChanged,
    /// The proposal's recording or feature edits were changed after it was filed.
    ContentChanged,
}

impl fmt::Display for Stale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stale::StepsChanged => "the scenario's steps changed since this proposal was filed: run the scenario again",
            Stale::CommittedRecordingChanged => {
                "the committed recording changed since this proposal was filed: run the scenario \
                 again to get a proposal bound to it"
            }
            Stale::ContentChanged => {
                "the proposal was edited after it was filed: run the scenario again rather than \
                 editing a proposal"
            }
        })
    }
}

impl Proposal {
    /// File `draft` against `committed`, the recording now in the cache (none for a first
    /// recording): computes the diff and the binding.
    pub fn file(draft: ProposalDraft, committed: Option<&Recording>) -> Proposal {
        let mut proposal = Proposal {
            version: PROPOSAL_VERSION,
            diff: diff_recordings(committed, &draft.recording),
            binding: Binding {
                steps_digest: draft.recording.digest_for(&draft.recording.step_specs()),
                contract_digest: committed.map(contract_digest),
                content_digest: String::new(),
            },
            scenario: draft.scenario,
            recording: draft.recording,
            feature_edits: draft.feature_edits,
            narrative: draft.narrative,
            adaptations: draft.adaptations,
            usage: draft.usage,
            filed_at: draft.filed_at,
            unverified: draft.unverified,
        };
        proposal.binding.content_digest = content_digest(&proposal);
        proposal
    }

    /// Every reason the proposal is stale against the scenario's `current_steps` and the
    /// `committed` recording; empty when it may be accepted.
    pub fn stale_reasons(&self, current_steps: &[StepSpec], committed: Option<&Recording>) -> Vec<Stale> {
        let mut reasons = Vec::new();
        if self.recording.digest_for(current_steps) != self.binding.steps_digest
            || self.recording.digest_for(&self.recording.step_specs()) != self.binding.steps_digest
        {
            reasons.push(Stale::StepsChanged);
        }
        if committed.map(contract_digest) != self.binding.contract_digest {
            reasons.push(Stale::CommittedRecordingChanged);
        }
        if content_digest(self) != self.binding.content_digest {
            reasons.push(Stale::ContentChanged);
        }
        reasons
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Action;
    use crate::model::{RecordedStep, StepKind};
    use crate::target::Target;

    fn recording(button: &str) -> Recording {
        Recording::new(
            "features/a.feature",
            "Buy",
            vec![RecordedStep::new(
                StepSpec::new(StepKind::Action, "I buy"),
                vec![Action::Click { target: Target::role("button", button), timeout_ms: None }],
            )],
        )
    }

    fn draft(button: &str) -> ProposalDraft {
        ProposalDraft {
            scenario: ScenarioRef {
                feature: "features/a.feature".into(),
                name: "Buy".into(),
                cache_path: ".saffron/cache/a/buy.json".into(),
            },
            recording: recording(button),
            feature_edits: vec![],
            narrative: "The button was renamed.".into(),
            adaptations: vec!["locator: Buy → Buy now".into()],
            usage: Some(Usage { input_tokens: Some(1200), output_tokens: Some(300), cost_usd: Some(0.0123) }),
            filed_at: None,
            unverified: None,
        }
    }

    #[test]
    fn a_fresh_proposal_is_not_stale() {
        let committed = recording("Buy");
        let proposal = Proposal::file(draft("Buy now"), Some(&committed));
        assert_eq!(proposal.diff.len(), 1);
        assert_eq!(proposal.stale_reasons(&committed.step_specs(), Some(&committed)), vec![]);
    }

    #[test]
    fn each_binding_names_its_reason() {
        let committed = recording("Buy");
        let proposal = Proposal::file(draft("Buy now"), Some(&committed));
        let steps = committed.step_specs();

        let mut edited_steps = steps.clone();
        edited_steps[0].text = "I buy it".into();
        assert_eq!(proposal.stale_reasons(&edited_steps, Some(&committed)), vec![Stale::StepsChanged]);

        let colleague = recording("Purchase");
        assert_eq!(proposal.stale_reasons(&steps, Some(&colleague)), vec![Stale::CommittedRecordingChanged]);
        assert_eq!(proposal.stale_reasons(&steps, None), vec![Stale::CommittedRecordingChanged]);

        let mut hand_edited = proposal.clone();
        hand_edited.feature_edits.push(FeatureEdit {
            file: "features/a.feature".into(),
            line: 3,
            before: "When I buy".into(),
            after: "When I buy now".into(),
            from_set: None,
        });
        assert_eq!(hand_edited.stale_reasons(&steps, Some(&committed)), vec![Stale::ContentChanged]);

        let mut narrated = proposal.clone();
        narrated.narrative = "Reworded.".into();
        narrated.usage = None;
        assert_eq!(narrated.stale_reasons(&steps, Some(&committed)), vec![]);
    }

    #[test]
    fn a_first_recording_binds_no_contract() {
        let proposal = Proposal::file(draft("Buy"), None);
        assert_eq!(proposal.binding.contract_digest, None);
        let steps = proposal.recording.step_specs();
        assert_eq!(proposal.stale_reasons(&steps, None), vec![]);
        let appeared = recording("Buy");
        assert_eq!(proposal.stale_reasons(&steps, Some(&appeared)), vec![Stale::CommittedRecordingChanged]);
        assert!(Stale::StepsChanged.to_string().contains("run the scenario again"));
    }
}
