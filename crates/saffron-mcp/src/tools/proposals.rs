//! `list_proposals`, `show_proposal`, and (only when the project opts in) `accept` and
//! `reject`.
//!
//! The rules are `saffron accept`'s own, from one owner ([`saffron_index::review`]): staleness
//! is the proposal's three digests recomputed against the scenario as it is now and the
//! committed recording, and an unverified proposal (its proof replay failed) cannot be
//! accepted. Accepting writes the proposed recording through the store (validated, atomic,
//! under the store lock) and removes the proposal; it refuses a stale or unverified proposal by
//! reason, and a proposal that also edits feature files: applying those is a person's
//! `saffron accept --with-feature-edit`, after reading them, and is not offered here.

use std::fmt::Write as _;

use saffron_index::review::{self, AcceptOptions, ReviewError, recording_path};
use saffron_index::{ProposalData, Snapshot};
use saffron_recording::{ActionChange, FeatureEdit, StepDiff, Store, Usage, layout};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Render, ToolError};
use crate::config::McpConfig;
use crate::project::{Project, display_path, project_path};

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListProposalsArgs {}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListProposalsOutput {
    pub proposals: Vec<ProposalSummary>,
    /// Handlers a repair filed when it met an interruption (a consent dialog, an expired
    /// session): accepting one adds it to `.saffron/handlers/`, and replay clears that
    /// interruption wherever it shows; no scenario changes.
    pub handlers: Vec<HandlerProposal>,
    /// Proposal files that do not validate, with the reason: they can only be rejected.
    pub unreadable: Vec<UnreadableProposal>,
    /// Whether the accept and reject tools are enabled.
    pub accept_enabled: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalSummary {
    /// Pass this to show_proposal (and accept or reject).
    pub path: String,
    pub feature: String,
    pub scenario: String,
    /// The recording it would replace or create.
    pub cache_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filed_at: Option<String>,
    /// Steps whose actions change.
    pub changed_steps: usize,
    /// Actions added, removed or changed, over all steps.
    pub action_changes: usize,
    /// One-line edits to feature files it carries.
    pub feature_edits: usize,
    pub narrative: String,
    /// Stale proposals cannot be accepted: re-run the scenario for a proposal bound to now.
    pub stale: bool,
    pub stale_reasons: Vec<String>,
    /// How its proof replay failed, when it did: such a proposal is kept to be read, and cannot
    /// be accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unverified: Option<String>,
    /// What it changes that no repair may (a check, a step's value): it can never be accepted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// Actions on a different control than the committed recording's: only a person accepts
    /// such a proposal, in a terminal (`saffron accept --different-control`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub different_controls: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HandlerProposal {
    /// Pass this to accept or reject.
    pub path: String,
    pub name: String,
    /// What detects the interruption, what clears it, where the run goes on: one line each.
    pub description: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnreadableProposal {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposalArgs {
    /// The proposal's path as list_proposals gives it: `.saffron/proposals/<feature>/<scenario>.json`.
    pub proposal: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShowProposalOutput {
    #[serde(flatten)]
    pub summary: ProposalSummary,
    /// Whether a committed recording exists (false: this is a first recording).
    pub replaces_recording: bool,
    /// The agent's adaptations, one line each.
    pub adaptations: Vec<String>,
    /// Tokens and cost of the session that made it, as the provider reported them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The action-level diff from the committed recording, per changed step.
    pub diff: Vec<StepDiff>,
    /// One-line edits to feature files (`saffron accept --with-feature-edit` applies them).
    pub edits: Vec<FeatureEdit>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AcceptOutput {
    /// The proposal accepted (now removed).
    pub accepted: String,
    /// The recording written (the handler's file, for a proposed handler).
    pub recording: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub feature: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub scenario: String,
    /// The handler's name, for a proposed handler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handler: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RejectOutput {
    /// The proposal removed.
    pub rejected: String,
    /// Its scenario, when the file was readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
}

pub fn summary(snapshot: &Snapshot, data: &ProposalData) -> ProposalSummary {
    let proposal = &data.proposal;
    let assessment = review::assess(snapshot, proposal);
    let changes = review::diff(snapshot, proposal);
    ProposalSummary {
        path: display_path(&data.path),
        feature: proposal.scenario.feature.clone(),
        scenario: proposal.scenario.name.clone(),
        cache_path: proposal.scenario.cache_path.clone(),
        filed_at: proposal.filed_at.clone(),
        changed_steps: changes.len(),
        action_changes: changes.iter().map(|step| step.changes.len()).sum(),
        feature_edits: proposal.feature_edits.len(),
        narrative: proposal.narrative.clone(),
        stale: assessment.is_stale(),
        stale_reasons: assessment.stale_reasons,
        unverified: assessment.unverified,
        refused: assessment.refused,
        different_controls: assessment.different_controls,
    }
}

pub fn summaries(snapshot: &Snapshot) -> Vec<ProposalSummary> {
    snapshot.proposals().map(|data| summary(snapshot, data)).collect()
}

pub fn list(project: &Project, _args: ListProposalsArgs) -> Result<ListProposalsOutput, ToolError> {
    let snapshot = project.snapshot();
    let mut unreadable: Vec<UnreadableProposal> = project
        .unreadable_proposals()
        .iter()
        .map(|(path, reason)| UnreadableProposal { path: display_path(path), reason: reason.clone() })
        .collect();
    let mut handlers = Vec::new();
    if let Ok(store) = Store::open(project.root()) {
        let scan = review::handlers::proposals(&store);
        let relative = |path: &std::path::Path| display_path(path.strip_prefix(project.root()).unwrap_or(path));
        for (path, handler) in &scan.found {
            let description = review::handlers::describe(handler);
            handlers.push(HandlerProposal { path: relative(path), name: handler.name.clone(), description });
        }
        for (path, reason) in &scan.unreadable {
            unreadable.push(UnreadableProposal { path: relative(path), reason: reason.to_string() });
        }
    }
    Ok(ListProposalsOutput {
        proposals: summaries(&snapshot),
        handlers,
        unreadable,
        accept_enabled: project.config().allow_accept,
    })
}

/// The proposal a client names, as the index holds it.
fn find<'a>(project: &Project, snapshot: &'a Snapshot, given: &str) -> Result<&'a ProposalData, ToolError> {
    let path = project_path(given)
        .filter(|path| layout::in_proposals(path))
        .ok_or_else(|| ToolError::new(format!("`{given}` is not a proposal path"), list_hint(snapshot)))?;
    if let Some(reason) = project.unreadable_proposals().get(&path) {
        return Err(ToolError::new(
            format!("the proposal {} cannot be read: {reason}", display_path(&path)),
            "it can only be rejected; run its scenario again for a new proposal",
        ));
    }
    snapshot
        .proposals()
        .find(|data| data.path.as_ref() == path)
        .map(AsRef::as_ref)
        .ok_or_else(|| ToolError::new(format!("no pending proposal at {}", display_path(&path)), list_hint(snapshot)))
}

fn list_hint(snapshot: &Snapshot) -> String {
    let paths: Vec<String> = snapshot.proposals().map(|data| display_path(&data.path)).take(5).collect();
    if paths.is_empty() {
        "there are no pending proposals; call list_proposals after a run files one".to_string()
    } else {
        format!("call list_proposals and pass one of its paths, such as {}", paths.join(", "))
    }
}

pub fn show(project: &Project, args: ProposalArgs) -> Result<ShowProposalOutput, ToolError> {
    let snapshot = project.snapshot();
    let data = find(project, &snapshot, &args.proposal)?;
    let proposal = &data.proposal;
    let replaces_recording = recording_path(&proposal.scenario.cache_path)
        .is_some_and(|path| snapshot.recording(&path).is_some() || project.root().join(&path).is_file());
    Ok(ShowProposalOutput {
        summary: summary(&snapshot, data),
        replaces_recording,
        adaptations: proposal.adaptations.clone(),
        usage: proposal.usage.clone(),
        diff: review::diff(&snapshot, proposal),
        edits: proposal.feature_edits.clone(),
    })
}

/// Accepting and rejecting are a person's act unless the project opts in; the config is read
/// again at each call, so turning the option off takes effect without a restart.
fn ensure_allowed(project: &Project, verb: &str) -> Result<(), ToolError> {
    if McpConfig::read(project.root()).allow_accept {
        return Ok(());
    }
    Err(ToolError::new(
        format!("{verb} is disabled: saffron.toml no longer sets [mcp] allow_accept = true"),
        "ask a person to review the proposal (show_proposal) and accept it with the saffron command",
    ))
}

fn open_store(project: &Project) -> Result<Store, ToolError> {
    Store::open(project.root()).map_err(|error| {
        ToolError::new(format!("cannot open the store: {error}"), "check the .saffron folder's permissions")
    })
}

fn tool_error(error: &ReviewError, snapshot: &Snapshot) -> ToolError {
    let hint = match error {
        ReviewError::NotAProposal { .. } | ReviewError::NotFound { .. } => list_hint(snapshot),
        ReviewError::FeatureEditsNotOffered { .. } => {
            "review the edits with show_proposal and ask a person to accept it \
                                                       with `saffron accept --with-feature-edit`"
                .to_string()
        }
        other => other.hint(),
    };
    ToolError::new(error.to_string(), hint)
}

/// The proposal path a client passes, checked to be one.
fn proposal_path(snapshot: &Snapshot, given: &str) -> Result<std::path::PathBuf, ToolError> {
    project_path(given)
        .filter(|path| layout::is_proposal(path))
        .ok_or_else(|| ToolError::new(format!("`{given}` is not a proposal path"), list_hint(snapshot)))
}

/// The proposed handler a client names, when it names one.
fn handler_path(given: &str) -> Option<std::path::PathBuf> {
    project_path(given).filter(|path| layout::is_handler_proposal(path))
}

pub fn accept(project: &mut Project, args: ProposalArgs) -> Result<AcceptOutput, ToolError> {
    ensure_allowed(project, "accept")?;
    let store = open_store(project)?;
    if let Some(path) = handler_path(&args.proposal) {
        let (handler, written) = review::handlers::accept(&store, &path)
            .map_err(|error| ToolError::new(error.to_string(), "call list_proposals for the proposed handlers"))?;
        project.refresh();
        return Ok(AcceptOutput {
            accepted: display_path(&path),
            recording: display_path(&written),
            feature: String::new(),
            scenario: String::new(),
            handler: Some(handler.name),
        });
    }
    let path = proposal_path(&project.snapshot(), &args.proposal)?;
    let options = AcceptOptions { refuse_feature_edits: true, ..AcceptOptions::default() };
    // The core takes the lock first and then asks for a fresh look at the disk.
    let accepted = review::accept(&store, &path, options, || {
        project.refresh();
        project.snapshot()
    });
    project.refresh();
    let accepted = accepted.map_err(|error| tool_error(&error, &project.snapshot()))?;
    Ok(AcceptOutput {
        accepted: display_path(&accepted.proposal),
        recording: display_path(&accepted.recording),
        feature: accepted.feature,
        scenario: accepted.scenario,
        handler: None,
    })
}

pub fn reject(project: &mut Project, args: ProposalArgs) -> Result<RejectOutput, ToolError> {
    ensure_allowed(project, "reject")?;
    let store = open_store(project)?;
    if let Some(path) = handler_path(&args.proposal) {
        let name = review::handlers::reject(&store, &path)
            .map_err(|error| ToolError::new(error.to_string(), "call list_proposals for the proposed handlers"))?;
        project.refresh();
        return Ok(RejectOutput {
            rejected: display_path(&path),
            scenario: name.map(|name| format!("handler {name}")),
        });
    }
    let path = proposal_path(&project.snapshot(), &args.proposal)?;
    let rejected = review::reject(&store, &path);
    project.refresh();
    let scenario = rejected.map_err(|error| tool_error(&error, &project.snapshot()))?;
    Ok(RejectOutput { rejected: display_path(&path), scenario })
}

impl Render for ListProposalsOutput {
    fn render(&self) -> String {
        let mut out = String::new();
        if self.proposals.is_empty() && self.unreadable.is_empty() {
            out.push_str("No proposal is waiting for review.\n");
        }
        for p in &self.proposals {
            let _ = writeln!(
                out,
                "{}  {} / \"{}\": {} step(s), {} action change(s), {} feature edit(s){}",
                p.path,
                p.feature,
                p.scenario,
                p.changed_steps,
                p.action_changes,
                p.feature_edits,
                if p.stale {
                    " [STALE]"
                } else if p.unverified.is_some() {
                    " [UNVERIFIED]"
                } else {
                    ""
                }
            );
            for reason in &p.stale_reasons {
                let _ = writeln!(out, "    stale: {reason}");
            }
            if let Some(failure) = &p.unverified {
                let _ = writeln!(out, "    unverified (cannot be accepted): {failure}");
            }
            if !p.narrative.is_empty() {
                let _ = writeln!(out, "    {}", p.narrative);
            }
        }
        for h in &self.handlers {
            let _ = writeln!(out, "{}  handler \"{}\"", h.path, h.name);
            for line in &h.description {
                let _ = writeln!(out, "    {line}");
            }
        }
        for u in &self.unreadable {
            let _ = writeln!(out, "{}  unreadable: {}", u.path, u.reason);
        }
        let _ = writeln!(out, "accept/reject tools: {}", if self.accept_enabled { "enabled" } else { "disabled" });
        out
    }
}

impl Render for ShowProposalOutput {
    fn render(&self) -> String {
        let s = &self.summary;
        let mut out = String::new();
        let _ = writeln!(out, "Proposal {} for {} / \"{}\"", s.path, s.feature, s.scenario);
        let _ = writeln!(
            out,
            "{} {}{}",
            if self.replaces_recording { "Replaces" } else { "Creates (first recording)" },
            s.cache_path,
            if s.stale { " — STALE, cannot be accepted" } else { "" }
        );
        for reason in &s.stale_reasons {
            let _ = writeln!(out, "  stale: {reason}");
        }
        if let Some(failure) = &s.unverified {
            let _ = writeln!(out, "  unverified, cannot be accepted: its proof replay failed: {failure}");
        }
        for reason in &s.refused {
            let _ = writeln!(out, "  refused, cannot be accepted: {reason}");
        }
        for change in &s.different_controls {
            let _ = writeln!(out, "  different control, only a person accepts it: {change}");
        }
        if !s.narrative.is_empty() {
            let _ = writeln!(out, "Narrative: {}", s.narrative);
        }
        for adaptation in &self.adaptations {
            let _ = writeln!(out, "  adaptation: {adaptation}");
        }
        for step in &self.diff {
            let _ = writeln!(out, "Step \"{}\" ({:?}):", step.text, step.kind);
            for change in &step.changes {
                let line = match change {
                    ActionChange::Added { index, action } => format!("  + [{index}] {}", compact(action)),
                    ActionChange::Removed { index, action } => format!("  - [{index}] {}", compact(action)),
                    ActionChange::Changed { before_index, after_index, before, after } => {
                        format!("  ~ [{before_index}→{after_index}] {}\n      was {}", compact(after), compact(before))
                    }
                };
                let _ = writeln!(out, "{line}");
            }
        }
        for edit in &self.edits {
            let _ = writeln!(out, "Edit {}:{}\n  - {}\n  + {}", edit.file, edit.line, edit.before, edit.after);
        }
        out
    }
}

fn compact(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

impl Render for AcceptOutput {
    fn render(&self) -> String {
        match &self.handler {
            Some(name) => format!(
                "Accepted {}: the handler \"{name}\" is {} from now on; replay clears this interruption wherever it \
                 shows. Commit it.\n",
                self.accepted, self.recording
            ),
            None => format!(
                "Accepted {}: wrote {} for {} / \"{}\". Commit the recording.\n",
                self.accepted, self.recording, self.feature, self.scenario
            ),
        }
    }
}

impl Render for RejectOutput {
    fn render(&self) -> String {
        match &self.scenario {
            Some(scenario) => {
                format!("Rejected {} (\"{scenario}\"); the committed recording is unchanged.\n", self.rejected)
            }
            None => format!("Rejected {}; the committed recording is unchanged.\n", self.rejected),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use saffron_recording::{
        Action, FeatureEdit, Proposal, ProposalDraft, RecordedStep, Recording, ScenarioRef, StepKind, StepSpec, Target,
    };

    use super::*;

    const FEATURE: &str = "Feature: A\n  Scenario: Buy\n    Given I am on the shop\n    When I buy\n";
    const CACHE: &str = ".saffron/cache/a/buy.json";
    const PROPOSAL: &str = ".saffron/proposals/a/buy.json";

    fn recording(button: &str) -> Recording {
        Recording::new(
            "features/a.feature",
            "Buy",
            vec![
                RecordedStep::new(
                    StepSpec::new(StepKind::Context, "I am on the shop"),
                    vec![Action::Goto { url: "/shop".into(), timeout_ms: None }],
                ),
                RecordedStep::new(
                    StepSpec::new(StepKind::Action, "I buy"),
                    vec![Action::Click { target: Target::role("button", button), timeout_ms: None }],
                ),
            ],
        )
    }

    /// A proposal for the scenario "Buy" whose button reads `button`.
    fn draft(button: &str, feature_edits: Vec<FeatureEdit>, narrative: &str) -> ProposalDraft {
        ProposalDraft {
            scenario: ScenarioRef {
                feature: "features/a.feature".into(),
                name: "Buy".into(),
                cache_path: CACHE.into(),
            },
            recording: recording(button),
            feature_edits,
            narrative: narrative.into(),
            adaptations: vec![],
            usage: None,
            filed_at: None,
            unverified: None,
        }
    }

    /// A project with one recorded scenario and a fresh proposal renaming its button.
    fn project(allow_accept: bool, edits: Vec<FeatureEdit>) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("features")).expect("mkdir");
        std::fs::write(root.join("features/a.feature"), FEATURE).expect("write");
        std::fs::write(root.join("saffron.toml"), format!("[mcp]\nallow_accept = {allow_accept}\n")).expect("write");
        let store = Store::open(root).expect("store");
        let committed = recording("Buy");
        store.write_recording(&root.join(CACHE), &committed).expect("recording");
        let draft = draft("Buy now", edits, "The button was renamed.");
        store.write_proposal(&root.join(PROPOSAL), &Proposal::file(draft, Some(&committed))).expect("proposal");
        let project = Project::open(root.to_path_buf());
        (dir, project)
    }

    fn args() -> ProposalArgs {
        ProposalArgs { proposal: PROPOSAL.into() }
    }

    fn committed_button(root: &Path) -> String {
        let text = std::fs::read_to_string(root.join(CACHE)).expect("read");
        let recording = saffron_recording::parse_recording(&text).expect("valid");
        serde_json::to_value(&recording.steps[1].actions[0]).expect("json")["target"]["name"].to_string()
    }

    #[test]
    fn accept_promotes_a_fresh_proposal_atomically() {
        let (dir, mut project) = project(true, vec![]);
        let listed = list(&project, ListProposalsArgs {}).expect("list");
        assert_eq!(listed.proposals.len(), 1);
        assert!(!listed.proposals[0].stale, "{:?}", listed.proposals[0].stale_reasons);
        let accepted = accept(&mut project, args()).expect("accepted");
        assert_eq!(accepted.recording, CACHE);
        assert_eq!(committed_button(dir.path()), "\"Buy now\"");
        assert!(!dir.path().join(PROPOSAL).exists());
        assert_eq!(project.snapshot().scenarios()[0].recording.as_str(), "fresh");
        assert!(accept(&mut project, args()).is_err(), "nothing left to accept");
    }

    #[test]
    fn a_proposed_handler_is_listed_accepted_into_the_handlers_and_rejected() {
        const PROPOSED: &str = ".saffron/handlers/proposed/cookie-consent.json";
        let handler: saffron_recording::Handler = serde_json::from_str(
            r#"{ "version": 1, "name": "Cookie consent", "detect": { "target": { "role": "dialog", "name": "Cookies" } },
                 "actions": [{ "type": "click", "target": { "role": "button", "name": "Accept" } }] }"#,
        )
        .expect("a handler");
        let (dir, mut project) = project(true, vec![]);
        let root = dir.path();
        let store = Store::open(root).expect("store");
        store.lock().expect("lock").write_handler(&root.join(PROPOSED), &handler).expect("filed");
        let listed = list(&project, ListProposalsArgs {}).expect("list");
        assert_eq!(listed.handlers.len(), 1, "{listed:?}");
        assert_eq!((listed.handlers[0].path.as_str(), listed.handlers[0].name.as_str()), (PROPOSED, "Cookie consent"));
        assert!(listed.handlers[0].description.iter().any(|line| line.contains("clear: click button \"Accept\"")));

        let accepted = accept(&mut project, ProposalArgs { proposal: PROPOSED.into() }).expect("accepted");
        assert_eq!(accepted.recording, ".saffron/handlers/cookie-consent.json");
        assert_eq!(accepted.handler.as_deref(), Some("Cookie consent"));
        let kept = store.read_handler(&root.join(".saffron/handlers/cookie-consent.json")).expect("moved up");
        assert_eq!(kept, handler);
        assert!(!root.join(PROPOSED).exists());
        assert!(list(&project, ListProposalsArgs {}).expect("list").handlers.is_empty());

        store.lock().expect("lock").write_handler(&root.join(PROPOSED), &handler).expect("filed again");
        let rejected = reject(&mut project, ProposalArgs { proposal: PROPOSED.into() }).expect("rejected");
        assert_eq!(rejected.rejected, PROPOSED);
        assert!(!root.join(PROPOSED).exists());
        // The recording proposal is untouched by either.
        assert!(root.join(PROPOSAL).exists());

        let (dir, mut project) = project_off();
        let off = Store::open(dir.path()).expect("store");
        off.lock().expect("lock").write_handler(&dir.path().join(PROPOSED), &handler).expect("filed");
        let refused = accept(&mut project, ProposalArgs { proposal: PROPOSED.into() }).expect_err("off");
        assert!(refused.message.contains("disabled"), "{refused:?}");
        assert!(dir.path().join(PROPOSED).exists());
    }

    #[test]
    fn accept_refuses_stale_proposals_by_reason_and_writes_nothing() {
        let (dir, mut project) = project(true, vec![]);
        std::fs::write(dir.path().join("features/a.feature"), FEATURE.replace("I buy", "I buy it")).expect("edit");
        let refused = accept(&mut project, args()).expect_err("stale");
        assert!(refused.message.contains("steps changed"), "{refused:?}");
        assert_eq!(committed_button(dir.path()), "\"Buy\"");
        assert!(dir.path().join(PROPOSAL).exists());

        std::fs::write(dir.path().join("features/a.feature"), FEATURE.replace("Scenario: Buy", "Scenario: Sell"))
            .expect("rename");
        project.refresh();
        let reasons = list(&project, ListProposalsArgs {}).expect("list").proposals[0].stale_reasons.clone();
        assert!(reasons[0].contains("no longer in features/a.feature"), "{reasons:?}");
    }

    #[test]
    fn accept_refuses_feature_edits_and_is_off_unless_opted_in() {
        let edit = FeatureEdit {
            file: "features/a.feature".into(),
            line: 4,
            before: "    When I buy".into(),
            after: "    When I buy now".into(),
            from_set: None,
        };
        let (dir, mut project) = project(true, vec![edit]);
        let refused = accept(&mut project, args()).expect_err("edits");
        assert!(refused.hint.contains("--with-feature-edit"), "{refused:?}");
        assert_eq!(committed_button(dir.path()), "\"Buy\"");

        let (dir, mut project) = project_off();
        assert!(accept(&mut project, args()).expect_err("off").message.contains("disabled"));
        assert!(reject(&mut project, args()).expect_err("off").message.contains("disabled"));
        assert!(dir.path().join(PROPOSAL).exists());
    }

    #[test]
    fn an_unverified_proposal_is_listed_with_its_proof_failure_and_refused() {
        let (dir, _) = project(true, vec![]);
        let root = dir.path();
        let mut unverified = draft("Buy now", vec![], "Renamed.");
        unverified.unverified = Some("step 2: no button \"Buy now\"".into());
        let store = Store::open(root).expect("store");
        store.write_proposal(&root.join(PROPOSAL), &Proposal::file(unverified, Some(&recording("Buy")))).expect("file");
        let mut project = Project::open(root.to_path_buf());
        let listed = list(&project, ListProposalsArgs {}).expect("list");
        assert!(!listed.proposals[0].stale, "{:?}", listed.proposals[0].stale_reasons);
        assert!(listed.proposals[0].unverified.as_deref().is_some_and(|f| f.contains("no button")), "{listed:?}");
        let refused = accept(&mut project, args()).expect_err("unverified");
        assert!(refused.message.contains("did not pass its proof replay"), "{refused:?}");
        assert_eq!(committed_button(root), "\"Buy\"");
        assert!(root.join(PROPOSAL).exists());
    }

    fn project_off() -> (tempfile::TempDir, Project) {
        project(false, vec![])
    }

    #[test]
    fn reject_removes_only_the_proposal() {
        let (dir, mut project) = project(true, vec![]);
        let rejected = reject(&mut project, args()).expect("rejected");
        assert_eq!(rejected.scenario.as_deref(), Some("Buy"));
        assert!(!dir.path().join(PROPOSAL).exists());
        assert_eq!(committed_button(dir.path()), "\"Buy\"");
        assert!(reject(&mut project, args()).is_err());
        let outside = ProposalArgs { proposal: "features/a.feature".into() };
        assert!(reject(&mut project, outside).is_err());
        assert!(dir.path().join("features/a.feature").exists());
    }

    /// A proposal planted as a link to a file outside the project: never shown, never applied.
    #[cfg(unix)]
    #[test]
    fn a_proposal_linked_from_outside_the_project_is_neither_shown_nor_accepted() {
        let (dir, _) = project(true, vec![]);
        let outside = tempfile::tempdir().expect("temp dir");
        let planted = outside.path().join("planted.json");
        std::fs::rename(dir.path().join(PROPOSAL), &planted).expect("move the proposal out");
        std::os::unix::fs::symlink(&planted, dir.path().join(PROPOSAL)).expect("link it back in");
        let mut project = Project::open(dir.path().to_path_buf());

        let listed = list(&project, ListProposalsArgs {}).expect("list");
        assert!(listed.proposals.is_empty(), "{:?}", listed.proposals.len());
        assert!(listed.unreadable[0].reason.contains("leads outside the project"), "{:?}", listed.unreadable[0].reason);
        let refused = show(&project, args()).expect_err("not shown");
        assert!(refused.message.contains("leads outside the project"), "{refused:?}");
        let refused = accept(&mut project, args()).expect_err("not accepted");
        assert!(refused.message.contains("cannot be read"), "{refused:?}");
        assert_eq!(committed_button(dir.path()), "\"Buy\"", "the committed recording is untouched");
        // Rejecting removes the link, not the file it points to.
        reject(&mut project, args()).expect("rejected");
        assert!(!dir.path().join(PROPOSAL).exists() && planted.exists());
    }

    /// The cache folder a proposal for a new scenario would be accepted into is a link out of
    /// the project.
    #[cfg(unix)]
    #[test]
    fn accept_never_writes_through_a_folder_linked_outside_the_project() {
        let (dir, _) = project(true, vec![]);
        let root = dir.path();
        let outside = tempfile::tempdir().expect("temp dir");
        let cache_folder = root.join(".saffron/cache/a");
        std::fs::remove_dir_all(&cache_folder).expect("remove the committed recording");
        std::os::unix::fs::symlink(outside.path(), &cache_folder).expect("link the cache folder out");
        let draft = draft("Buy now", vec![], "First recording.");
        let store = Store::open(root).expect("store");
        store.write_proposal(&root.join(PROPOSAL), &Proposal::file(draft, None)).expect("proposal");
        let mut project = Project::open(root.to_path_buf());
        let refused = accept(&mut project, args()).expect_err("not written");
        assert!(refused.message.contains("leads outside the project"), "{refused:?}");
        assert_eq!(std::fs::read_dir(outside.path()).expect("read").count(), 0, "nothing was written outside");
        assert!(root.join(PROPOSAL).exists(), "the proposal is kept");
    }

    #[test]
    fn a_cache_path_outside_the_cache_is_never_written() {
        assert_eq!(recording_path(".saffron/cache/a/b.json"), Some(PathBuf::from(".saffron/cache/a/b.json")));
        assert_eq!(recording_path(".saffron/cache/../../x.json"), None);
        assert_eq!(recording_path("features/a.feature"), None);
        assert_eq!(recording_path(".saffron/cache/a/b.txt"), None);
    }
}
