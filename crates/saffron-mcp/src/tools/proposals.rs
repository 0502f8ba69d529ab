//! `list_proposals`, `show_proposal`, and (only when the project opts in) `accept` and
//! `reject`.
//!
//! Staleness is judged the way `saffron accept` judges it: the proposal's three digests
//! recomputed against the scenario as it is now and the committed recording
//! ([`Proposal::stale_reasons`]). Accepting writes the proposed recording through the store
//! (validated, atomic, under the store lock) and removes the proposal; it refuses a stale
//! proposal by reason and a proposal that also edits feature files, whose application is the
//! runner's `--with-feature-edit` and not offered here.

use std::fmt::Write as _;
use std::path::PathBuf;

use saffron_index::{CACHE_DIR, PROPOSALS_DIR, ProposalData, Snapshot, recording_paths, step_specs};
use saffron_recording::{ActionChange, FeatureEdit, Proposal, StepDiff, Store, Usage};
use saffron_syntax::pickles;
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
    /// The recording written.
    pub recording: String,
    pub feature: String,
    pub scenario: String,
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

/// Every reason `proposal` cannot be accepted now, in words; empty when it can.
pub fn stale_reasons(snapshot: &Snapshot, proposal: &Proposal) -> Vec<String> {
    let Some(cache_path) = recording_path(&proposal.scenario.cache_path) else {
        return vec![format!(
            "its cachePath `{}` is not a recording under {CACHE_DIR}: the proposal is damaged; reject it",
            proposal.scenario.cache_path
        )];
    };
    let Some(feature) = project_path(&proposal.scenario.feature) else {
        return vec![format!("its feature `{}` is not a project path: reject it", proposal.scenario.feature)];
    };
    let Some(file) = snapshot.file(&feature) else {
        return vec![format!("the feature file {} is gone: reject this proposal", proposal.scenario.feature)];
    };
    let registry = snapshot.step_sets();
    let templates = pickles::compile_templates(&file.source.parsed.document, &registry);
    let paths = recording_paths(&feature, &templates);
    let Some(pickle) =
        templates.iter().zip(&paths).find(|(_, (recording, _))| *recording == cache_path).map(|(pickle, _)| pickle)
    else {
        return vec![format!(
            "the scenario \"{}\" is no longer in {} (renamed or removed): run it again, and reject this proposal",
            proposal.scenario.name, proposal.scenario.feature
        )];
    };
    if let Some((_, reason)) = snapshot.unreadable_recordings().find(|(path, _)| path.as_ref() == cache_path) {
        return vec![format!(
            "the committed recording {} cannot be read ({reason}): whoever committed it decides; fix or delete it first",
            display_path(&cache_path)
        )];
    }
    let committed = snapshot.recording(&cache_path).map(|data| &data.recording);
    proposal.stale_reasons(&step_specs(pickle), committed).into_iter().map(|reason| reason.to_string()).collect()
}

/// A `.saffron/cache/...json` path from a proposal, checked: a hand-edited proposal must not be
/// able to make accept write anywhere else.
fn recording_path(text: &str) -> Option<PathBuf> {
    let path = project_path(text)?;
    (path.starts_with(CACHE_DIR) && path.extension().is_some_and(|e| e == "json")).then_some(path)
}

pub fn summary(snapshot: &Snapshot, data: &ProposalData) -> ProposalSummary {
    let proposal = &data.proposal;
    let stale_reasons = stale_reasons(snapshot, proposal);
    ProposalSummary {
        path: display_path(&data.path),
        feature: proposal.scenario.feature.clone(),
        scenario: proposal.scenario.name.clone(),
        cache_path: proposal.scenario.cache_path.clone(),
        filed_at: proposal.filed_at.clone(),
        changed_steps: proposal.diff.len(),
        action_changes: proposal.diff.iter().map(|step| step.changes.len()).sum(),
        feature_edits: proposal.feature_edits.len(),
        narrative: proposal.narrative.clone(),
        stale: !stale_reasons.is_empty(),
        stale_reasons,
    }
}

pub fn summaries(snapshot: &Snapshot) -> Vec<ProposalSummary> {
    snapshot.proposals().map(|data| summary(snapshot, data)).collect()
}

pub fn list(project: &Project, _args: ListProposalsArgs) -> Result<ListProposalsOutput, ToolError> {
    let snapshot = project.snapshot();
    Ok(ListProposalsOutput {
        proposals: summaries(&snapshot),
        unreadable: project
            .unreadable_proposals()
            .iter()
            .map(|(path, reason)| UnreadableProposal { path: display_path(path), reason: reason.clone() })
            .collect(),
        accept_enabled: project.config().allow_accept,
    })
}

/// The proposal a client names, as the index holds it.
fn find<'a>(project: &Project, snapshot: &'a Snapshot, given: &str) -> Result<&'a ProposalData, ToolError> {
    let path = project_path(given)
        .filter(|path| path.starts_with(PROPOSALS_DIR))
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
        diff: proposal.diff.clone(),
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

pub fn accept(project: &mut Project, args: ProposalArgs) -> Result<AcceptOutput, ToolError> {
    ensure_allowed(project, "accept")?;
    let store = open_store(project)?;
    // The lock first, then a fresh look at the disk: nothing written by another saffron
    // process can slip between the check and the write.
    let lock = store.lock().map_err(|error| ToolError::new(format!("cannot lock the store: {error}"), "try again"))?;
    project.refresh();
    let snapshot = project.snapshot();
    let data = find(project, &snapshot, &args.proposal)?;
    let proposal = &data.proposal;
    if !proposal.feature_edits.is_empty() {
        return Err(ToolError::new(
            format!(
                "this proposal also edits feature files ({} edit(s)); accepting it here would leave them out",
                proposal.feature_edits.len()
            ),
            "review the edits with show_proposal and ask a person to accept it with `saffron accept \
             --with-feature-edit`",
        ));
    }
    let reasons = stale_reasons(&snapshot, proposal);
    if !reasons.is_empty() {
        return Err(ToolError::new(
            format!("the proposal is stale and cannot be accepted: {}", reasons.join("; ")),
            "run the scenario again to get a proposal bound to the current steps and recording, and reject this one",
        ));
    }
    let Some(cache_path) = recording_path(&proposal.scenario.cache_path) else {
        return Err(ToolError::new("the proposal's cachePath is not a recording path", "reject it"));
    };
    lock.write_recording(&project.root().join(&cache_path), &proposal.recording).map_err(|error| {
        ToolError::new(
            format!("the recording could not be written: {error}"),
            "nothing was changed; fix the cause and retry",
        )
    })?;
    let proposal_path = project.root().join(&data.path);
    lock.remove(&proposal_path).map_err(|error| {
        ToolError::new(
            format!("the recording was written, but the proposal could not be removed: {error}"),
            "reject the proposal to remove it",
        )
    })?;
    let output = AcceptOutput {
        accepted: display_path(&data.path),
        recording: display_path(&cache_path),
        feature: proposal.scenario.feature.clone(),
        scenario: proposal.scenario.name.clone(),
    };
    drop(lock);
    project.refresh();
    Ok(output)
}

pub fn reject(project: &mut Project, args: ProposalArgs) -> Result<RejectOutput, ToolError> {
    ensure_allowed(project, "reject")?;
    let store = open_store(project)?;
    let lock = store.lock().map_err(|error| ToolError::new(format!("cannot lock the store: {error}"), "try again"))?;
    project.refresh();
    let snapshot = project.snapshot();
    let path = project_path(&args.proposal)
        .filter(|path| path.starts_with(PROPOSALS_DIR) && path.extension().is_some_and(|e| e == "json"))
        .ok_or_else(|| ToolError::new(format!("`{}` is not a proposal path", args.proposal), list_hint(&snapshot)))?;
    let readable = snapshot.proposals().find(|data| data.path.as_ref() == path);
    if readable.is_none() && !project.unreadable_proposals().contains_key(&path) {
        return Err(ToolError::new(format!("no pending proposal at {}", display_path(&path)), list_hint(&snapshot)));
    }
    let scenario = readable.map(|data| data.proposal.scenario.name.clone());
    lock.remove(&project.root().join(&path))
        .map_err(|error| ToolError::new(format!("the proposal could not be removed: {error}"), "check permissions"))?;
    drop(lock);
    project.refresh();
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
                if p.stale { " [STALE]" } else { "" }
            );
            for reason in &p.stale_reasons {
                let _ = writeln!(out, "    stale: {reason}");
            }
            if !p.narrative.is_empty() {
                let _ = writeln!(out, "    {}", p.narrative);
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
        format!(
            "Accepted {}: wrote {} for {} / \"{}\". Commit the recording.\n",
            self.accepted, self.recording, self.feature, self.scenario
        )
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
    use std::path::Path;

    use saffron_recording::{
        Action, FeatureEdit, ProposalDraft, RecordedStep, Recording, ScenarioRef, StepKind, StepSpec, Target,
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
