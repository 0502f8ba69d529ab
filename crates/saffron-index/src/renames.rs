//! Behaviour-proven duplicate wordings and the rename proposals that converge them.
//!
//! Two wordings of the same step kind whose fresh recordings perform identical action lists
//! are one step written two ways: a duplicate by definition, whatever the words. For each such
//! group one wording is kept (the most written; ties go to the one written first, by file and
//! line) and every scenario that writes another wording gets a proposal: its committed
//! recording, unchanged, with one feature edit per line to rename. Accepting it with
//! `--with-feature-edit` renames the lines and the recording's steps. No AI is involved.
//!
//! A line shared by several scenarios (a StepSet's step, a Background's step) is edited once,
//! in the proposal of the first of them in path order that can take it; the others get no edit
//! for it (one proposal per scenario would edit the same line twice, and the second would be
//! stale once the first is accepted), and that proposal's narrative names them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use saffron_recording::{
    Action, FeatureEdit, Proposal, ProposalDraft, Recording, ScenarioRef, StepKind, StepSpec, TokenKind, tokenize,
};
use saffron_syntax::StepSetRegistry;
use saffron_syntax::pickles::{self, Pickle};
use serde::Serialize;

use crate::snapshot::{Snapshot, is_runnable, recording_paths, step_specs};

/// How many recordings a narrative names for each wording before it says "and N more".
const NAMED_RECORDINGS: usize = 3;

/// Everything a rename pass found: the duplicate groups, the proposals to file, and the
/// scenarios that write a duplicate wording but get no proposal, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RenamePlan {
    pub groups: Vec<DuplicateWordings>,
    pub proposals: Vec<RenameProposal>,
    pub skipped: Vec<SkippedScenario>,
}

/// Wordings of one step kind recorded with identical actions.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DuplicateWordings {
    pub kind: StepKind,
    /// The wording every other one is renamed to.
    pub keep: Wording,
    /// The wordings renamed to `keep`.
    pub renamed: Vec<Wording>,
    /// Wordings proven the same that are not renamed, with the reason.
    pub not_renamed: Vec<NotRenamed>,
}

/// One wording of a step and what proves it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Wording {
    pub text: Arc<str>,
    /// How many places write it (a StepSet's step counts once).
    pub uses: usize,
    /// Where it is first written, by file then line.
    pub first_use: Option<Place>,
    /// The fresh recordings that perform it, by path.
    pub recorded_in: Vec<RecordedStepRef>,
}

/// A wording left as it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotRenamed {
    pub text: Arc<str>,
    pub reason: String,
}

/// A file and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Place {
    pub file: Arc<Path>,
    pub line: u32,
}

/// A step of a recording: its path and the step's 1-based number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct RecordedStepRef {
    pub recording: Arc<Path>,
    pub step: usize,
}

/// A proposal ready to be written, and where.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RenameProposal {
    /// Relative to the project root: `.saffron/proposals/<feature>/<scenario>.json`.
    pub path: PathBuf,
    pub proposal: Proposal,
}

/// A scenario that writes a wording to rename but gets no proposal.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedScenario {
    pub file: Arc<Path>,
    pub name: String,
    pub line: u32,
    pub reason: String,
}

/// One use of a wording by a scenario with a fresh recording.
struct RecordedUse {
    scenario: usize,
    step: usize,
    behaviour: Arc<str>,
}

/// A runnable scenario as the pass sees it.
struct ScenarioInfo<'a> {
    file: &'a Arc<Path>,
    pickle: Pickle<'a>,
    specs: Vec<StepSpec>,
    recording_path: PathBuf,
    proposal_path: PathBuf,
    /// The committed recording, when it is fresh for the scenario's steps.
    fresh: Option<&'a Recording>,
}

/// Finds the behaviour-proven duplicate wordings among the fresh recordings of `snapshot` and
/// drafts a rename proposal for each scenario that writes a wording other than the kept one.
/// Scenarios with a pending proposal get none (it is never overwritten). Deterministic: the
/// same project gives the same plan.
pub fn rename_plan(snapshot: &Snapshot) -> RenamePlan {
    rename_plan_for(snapshot, |_| true)
}

/// Like [`rename_plan`], with proposals only for the scenarios of the feature files `selected`
/// accepts (every fresh recording still counts as proof, and a shared line goes to the first
/// selected scenario that runs it).
pub fn rename_plan_for(snapshot: &Snapshot, selected: impl Fn(&Path) -> bool) -> RenamePlan {
    let registry: &StepSetRegistry = snapshot.step_sets();
    let mut scenarios: Vec<ScenarioInfo<'_>> = Vec::new();
    for file in snapshot.files() {
        let Some(path) = snapshot.file_key(&file.source.path) else { continue };
        let templates: Vec<Pickle<'_>> = pickles::compile_templates(&file.source.parsed.document, &registry)
            .into_iter()
            .filter(|pickle| is_runnable(pickle.scenario.kind))
            .collect();
        let paths = recording_paths(path, &templates);
        for (pickle, (recording_path, proposal_path)) in templates.into_iter().zip(paths) {
            let specs = step_specs(&pickle);
            let fresh = snapshot
                .recording(&recording_path)
                .map(|data| &data.recording)
                .filter(|recording| recording.is_fresh_for(&specs) && recording.steps.len() == specs.len());
            scenarios.push(ScenarioInfo { file: path, pickle, specs, recording_path, proposal_path, fresh });
        }
    }
    // Path order, then file order: who takes a shared line must not depend on the map's order.
    scenarios
        .sort_by(|a, b| (a.file, a.pickle.scenario.header.location).cmp(&(b.file, b.pickle.scenario.header.location)));

    let mut uses: BTreeMap<(u8, Arc<str>), Vec<RecordedUse>> = BTreeMap::new();
    for (index, scenario) in scenarios.iter().enumerate() {
        let Some(recording) = scenario.fresh else { continue };
        for (step_index, step) in recording.steps.iter().enumerate() {
            if step.actions.is_empty() {
                continue;
            }
            uses.entry((order(step.kind), Arc::from(step.text.as_str()))).or_default().push(RecordedUse {
                scenario: index,
                step: step_index,
                behaviour: behaviour_of(&step.actions),
            });
        }
    }

    // A wording recorded two ways proves nothing about another wording: it is left out.
    let mut by_behaviour: BTreeMap<(u8, Arc<str>), Vec<Arc<str>>> = BTreeMap::new();
    for ((kind, text), recorded) in &uses {
        let behaviours: BTreeSet<&Arc<str>> = recorded.iter().map(|use_| &use_.behaviour).collect();
        if let [behaviour] = behaviours.into_iter().collect::<Vec<_>>()[..] {
            by_behaviour.entry((*kind, behaviour.clone())).or_default().push(text.clone());
        }
    }

    let mut groups = Vec::new();
    for ((kind_order, _), texts) in by_behaviour {
        if texts.len() < 2 {
            continue;
        }
        let Some(kind) = recorded_kind(kind_order) else { continue };
        let mut wordings: Vec<Wording> = texts
            .iter()
            .filter_map(|text| Some(wording(snapshot, &scenarios, text, uses.get(&(kind_order, text.clone()))?)))
            .collect();
        wordings.sort_by(|a, b| {
            b.uses.cmp(&a.uses).then_with(|| first_place_order(a, b)).then_with(|| a.text.cmp(&b.text))
        });
        let keep = wordings.remove(0);
        let keep_params = params(&keep.text);
        let mut renamed = Vec::new();
        let mut not_renamed = Vec::new();
        for other in wordings {
            if params(&other.text) == keep_params {
                renamed.push(other);
            } else {
                not_renamed.push(NotRenamed {
                    text: other.text.clone(),
                    reason: format!(
                        "it names other <placeholders> than \"{}\": renaming would change which Examples \
                         column the step reads",
                        keep.text
                    ),
                });
            }
        }
        groups.push(DuplicateWordings { kind, keep, renamed, not_renamed });
    }
    groups.sort_by(|a, b| (order(a.kind), &a.keep.text).cmp(&(order(b.kind), &b.keep.text)));
    // (kind, wording) → (kept wording, index of its group).
    let mut renames: HashMap<(StepKind, Arc<str>), (Arc<str>, usize)> = HashMap::new();
    for (index, group) in groups.iter().enumerate() {
        for wording in &group.renamed {
            renames.insert((group.kind, wording.text.clone()), (group.keep.text.clone(), index));
        }
    }

    let mut plan = RenamePlan { groups, proposals: Vec::new(), skipped: Vec::new() };
    if renames.is_empty() {
        return plan;
    }
    // A shared line: which scenario's proposal edits it, and the others that write it.
    let mut claimed: HashMap<(Arc<Path>, u32), usize> = HashMap::new();
    let mut sharers: BTreeMap<usize, Vec<(Place, usize)>> = BTreeMap::new();
    let mut drafts: Vec<(usize, Vec<FeatureEdit>, BTreeSet<usize>)> = Vec::new();
    for (index, scenario) in scenarios.iter().enumerate() {
        let to_rename: Vec<usize> = scenario
            .specs
            .iter()
            .enumerate()
            .filter(|(_, spec)| renames.contains_key(&(spec.kind, Arc::from(spec.text.as_str()))))
            .map(|(step, _)| step)
            .collect();
        if to_rename.is_empty() || !selected(scenario.file) {
            continue;
        }
        let skip = |reason: String| SkippedScenario {
            file: scenario.file.clone(),
            name: scenario.pickle.scenario.header.name.clone(),
            line: scenario.pickle.scenario.header.location.line,
            reason,
        };
        if scenario.fresh.is_none() {
            plan.skipped.push(skip(
                "its recording is not fresh, so it cannot prove the rename: record it again, or rename the step \
                 by hand"
                    .into(),
            ));
            continue;
        }
        if snapshot.proposal(&scenario.proposal_path).is_some() {
            plan.skipped.push(skip(format!(
                "a proposal is pending review ({}): accept or reject it first",
                scenario.proposal_path.display()
            )));
            continue;
        }
        let mut edits = Vec::new();
        let mut groups_used = BTreeSet::new();
        let mut problems = Vec::new();
        for step in to_rename {
            let spec = &scenario.specs[step];
            let Some((keep, group)) = renames.get(&(spec.kind, Arc::from(spec.text.as_str()))) else { continue };
            let pickle_step = &scenario.pickle.steps[step];
            let provenance = pickle_step.provenance(scenario.file);
            let Some(file) = snapshot.file_key(provenance.file) else { continue };
            let place = Place { file: file.clone(), line: provenance.line };
            match claimed.get(&(file.clone(), provenance.line)) {
                Some(&owner) if owner == index => continue,
                Some(&owner) => {
                    sharers.entry(owner).or_default().push((place, index));
                    continue;
                }
                None => {}
            }
            match line_edit(snapshot, &place, &pickle_step.step.keyword, &pickle_step.step.text, keep) {
                Ok((before, after)) => {
                    claimed.insert((file.clone(), provenance.line), index);
                    groups_used.insert(*group);
                    edits.push(FeatureEdit {
                        file: slashed(file),
                        line: provenance.line,
                        before,
                        after,
                        from_set: provenance.from_set.map(str::to_string),
                    });
                }
                Err(problem) => problems.push(problem.to_string()),
            }
        }
        if !problems.is_empty() {
            plan.skipped.push(skip(problems.join("; ")));
        }
        if !edits.is_empty() {
            drafts.push((index, edits, groups_used));
        }
    }

    for lines in sharers.values_mut() {
        lines.sort();
        lines.dedup();
    }
    // Each scenario's lines renamed by another scenario's proposal, with that scenario.
    let mut elsewhere: BTreeMap<usize, Vec<(Place, usize)>> = BTreeMap::new();
    for (owner, lines) in &sharers {
        for (place, index) in lines {
            elsewhere.entry(*index).or_default().push((place.clone(), *owner));
        }
    }
    for (index, edits, groups_used) in drafts {
        let scenario = &scenarios[index];
        let Some(committed) = scenario.fresh else { continue };
        let shared = sharers.get(&index).map_or(&[][..], Vec::as_slice);
        let renamed_elsewhere = elsewhere.remove(&index).unwrap_or_default();
        let narrative = narrative(&plan.groups, &groups_used, &scenarios, shared, &renamed_elsewhere);
        let adaptations = edits.iter().map(adaptation).collect();
        let draft = ProposalDraft {
            scenario: ScenarioRef {
                feature: slashed(scenario.file),
                name: scenario.pickle.scenario.header.name.clone(),
                cache_path: slashed(&scenario.recording_path),
            },
            recording: committed.clone(),
            feature_edits: edits,
            narrative,
            adaptations,
            usage: None,
            filed_at: None,
            unverified: None,
        };
        plan.proposals.push(RenameProposal {
            path: scenario.proposal_path.clone(),
            proposal: Proposal::file(draft, Some(committed)),
        });
    }
    // Scenarios whose only renamed lines are renamed by another scenario's proposal.
    for (index, lines) in elsewhere {
        let scenario = &scenarios[index];
        plan.skipped.push(SkippedScenario {
            file: scenario.file.clone(),
            name: scenario.pickle.scenario.header.name.clone(),
            line: scenario.pickle.scenario.header.location.line,
            reason: lines
                .iter()
                .map(|(place, owner)| shared_line(place, &scenarios[*owner]))
                .collect::<Vec<_>>()
                .join("; "),
        });
    }
    plan.skipped.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    plan
}

/// Given, When, Then: the order groups are listed in.
fn order(kind: StepKind) -> u8 {
    match kind {
        StepKind::Context => 0,
        StepKind::Action => 1,
        StepKind::Outcome => 2,
    }
}

fn recorded_kind(order: u8) -> Option<StepKind> {
    [StepKind::Context, StepKind::Action, StepKind::Outcome].get(usize::from(order)).copied()
}

/// The actions as recorded, tokens included, with the tier that fired left out (as the
/// contract digest leaves it out, scopes' containers and frames included): a canonical text.
fn behaviour_of(actions: &[Action]) -> Arc<str> {
    let mut actions = actions.to_vec();
    fn strip(target: &mut saffron_recording::Target) {
        target.tier = None;
        if let Some(scope) = target.within.as_mut() {
            strip(&mut scope.container);
        }
        if let Some(frame) = target.frame.as_mut() {
            strip(frame);
        }
    }
    for action in &mut actions {
        if let Some(target) = action.target_mut() {
            strip(target);
        }
    }
    Arc::from(serde_json::to_string(&actions).unwrap_or_default().as_str())
}

fn wording(snapshot: &Snapshot, scenarios: &[ScenarioInfo<'_>], text: &Arc<str>, recorded: &[RecordedUse]) -> Wording {
    let entry = snapshot.entry(text);
    let mut recorded_in: Vec<RecordedStepRef> = recorded
        .iter()
        .map(|use_| RecordedStepRef {
            recording: Arc::from(scenarios[use_.scenario].recording_path.as_path()),
            step: use_.step + 1,
        })
        .collect();
    recorded_in.sort();
    recorded_in.dedup();
    Wording {
        text: text.clone(),
        uses: entry.map_or(0, |entry| entry.count()),
        first_use: entry
            .and_then(|entry| entry.uses.first())
            .map(|use_| Place { file: use_.file.clone(), line: use_.location.line }),
        recorded_in,
    }
}

/// Written first wins; a wording written nowhere comes last.
fn first_place_order(a: &Wording, b: &Wording) -> std::cmp::Ordering {
    match (&a.first_use, &b.first_use) {
        (Some(a), Some(b)) => a.cmp(b),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}

/// The `<placeholders>` a text names, sorted.
fn params(text: &str) -> Vec<&str> {
    let mut names: Vec<&str> = tokenize(text)
        .into_iter()
        .filter_map(|token| match token.kind {
            TokenKind::Param(name) => Some(name),
            _ => None,
        })
        .collect();
    names.sort_unstable();
    names
}

/// A step's line that does not read as the index parsed it (the file changed under the index),
/// so no edit of it can be planned.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line} does not hold the step \"{text}\" as parsed", .file.display())]
struct NotAsParsed {
    file: Arc<Path>,
    line: u32,
    text: String,
}

/// The line at `place` as it is and with the step's text replaced by `new_text`, keyword,
/// indentation and anything after the text kept.
fn line_edit(
    snapshot: &Snapshot,
    place: &Place,
    keyword: &str,
    old_text: &str,
    new_text: &str,
) -> Result<(String, String), NotAsParsed> {
    let unexpected = || NotAsParsed { file: place.file.clone(), line: place.line, text: old_text.to_string() };
    let file = snapshot.file(&place.file).ok_or_else(unexpected)?;
    let index = usize::try_from(place.line).ok().and_then(|line| line.checked_sub(1)).ok_or_else(unexpected)?;
    let line = file.source.text.lines().nth(index).ok_or_else(unexpected)?;
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    let keyword = keyword.trim_end();
    let after_keyword = body.strip_prefix(keyword).ok_or_else(unexpected)?;
    let text = after_keyword.trim_start();
    let gap = &after_keyword[..after_keyword.len() - text.len()];
    let rest = text.strip_prefix(old_text).ok_or_else(unexpected)?;
    Ok((line.to_string(), format!("{indent}{keyword}{gap}{new_text}{rest}")))
}

fn narrative(
    groups: &[DuplicateWordings],
    used: &BTreeSet<usize>,
    scenarios: &[ScenarioInfo<'_>],
    shared: &[(Place, usize)],
    renamed_elsewhere: &[(Place, usize)],
) -> String {
    let mut paragraphs = Vec::new();
    for group in used.iter().filter_map(|index| groups.get(*index)) {
        let mut wordings = vec![&group.keep];
        wordings.extend(&group.renamed);
        let proofs: Vec<String> =
            wordings.iter().map(|wording| format!("\"{}\" in {}", wording.text, named_recordings(wording))).collect();
        let renamed: Vec<String> =
            group.renamed.iter().map(|wording| format!("\"{}\" (written {}×)", wording.text, wording.uses)).collect();
        paragraphs.push(format!(
            "Behaviour-proven duplicate wordings ({} steps): their recordings perform identical actions: {}. \
             Keeping \"{}\" (written {}×) over {}.",
            group.kind.keyword(),
            proofs.join("; "),
            group.keep.text,
            group.keep.uses,
            renamed.join(", ")
        ));
    }
    paragraphs.push(
        "The recording is unchanged: accepting with --with-feature-edit applies the feature edits and renames \
         the recording's steps to match. No AI was involved."
            .to_string(),
    );
    if !shared.is_empty() {
        let mut names: Vec<String> = shared
            .iter()
            .map(|(place, index)| {
                let scenario = &scenarios[*index];
                format!(
                    "\"{}\" ({}, through {}:{})",
                    scenario.pickle.scenario.header.name,
                    scenario.file.display(),
                    place.file.display(),
                    place.line
                )
            })
            .collect();
        names.dedup();
        paragraphs.push(format!(
            "A renamed line is also run by other scenarios, which get no edit of their own for it: {}. \
             Accepting this proposal changes their steps too; saffron accept says what becomes of their \
             recordings.",
            names.join(", ")
        ));
    }
    if !renamed_elsewhere.is_empty() {
        let lines: Vec<String> =
            renamed_elsewhere.iter().map(|(place, owner)| shared_line(place, &scenarios[*owner])).collect();
        paragraphs.push(format!(
            "Not edited here: {}. Once that proposal is accepted this one is stale: run saffron steps \
             --propose-renames again.",
            lines.join("; ")
        ));
    }
    paragraphs.join("\n\n")
}

fn shared_line(place: &Place, owner: &ScenarioInfo<'_>) -> String {
    format!(
        "{}:{} is shared with \"{}\" ({}), whose proposal renames it",
        place.file.display(),
        place.line,
        owner.pickle.scenario.header.name,
        owner.file.display()
    )
}

fn named_recordings(wording: &Wording) -> String {
    let mut named: Vec<String> = wording
        .recorded_in
        .iter()
        .take(NAMED_RECORDINGS)
        .map(|step| format!("{} step {}", step.recording.display(), step.step))
        .collect();
    if wording.recorded_in.len() > NAMED_RECORDINGS {
        named.push(format!("and {} more", wording.recorded_in.len() - NAMED_RECORDINGS));
    }
    named.join(", ")
}

fn adaptation(edit: &FeatureEdit) -> String {
    let set = edit.from_set.as_ref().map(|name| format!(" (StepSet \"{name}\")")).unwrap_or_default();
    format!("rename {}:{}{set}: \"{}\" → \"{}\"", edit.file, edit.line, edit.before.trim(), edit.after.trim())
}

/// A project path as files refer to each other: relative, with `/` separators.
fn slashed(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Change, IndexHost};
    use saffron_recording::{RecordedStep, Target, Tier};

    fn goto(url: &str) -> Action {
        Action::Goto { url: url.into(), timeout_ms: None }
    }

    fn click(name: &str) -> Action {
        Action::Click { target: Target::role("button", name), timeout_ms: None }
    }

    /// A project of `files`, each scenario recorded for its steps as written now, with the
    /// actions `actions` gives each step (by kind and text).
    fn project(files: &[(&str, &str)], actions: impl Fn(&str, StepKind, &str) -> Vec<Action>) -> IndexHost {
        let mut host = IndexHost::new();
        host.apply_all(files.iter().map(|(path, text)| Change::SetFile { path: path.into(), text: text.to_string() }));
        let snapshot = host.snapshot();
        let registry = snapshot.step_sets();
        let mut recordings = Vec::new();
        for file in snapshot.files() {
            let templates: Vec<Pickle<'_>> =
                pickles::compile_templates(&file.source.parsed.document, &registry).into_iter().collect();
            let paths = recording_paths(&file.source.path, &templates);
            for (pickle, (path, _)) in templates.iter().zip(paths) {
                let name = &pickle.scenario.header.name;
                let steps = step_specs(pickle)
                    .into_iter()
                    .map(|spec| {
                        let recorded = actions(name, spec.kind, &spec.text);
                        RecordedStep::new(spec, recorded)
                    })
                    .collect();
                let feature = file.source.path.to_string_lossy().to_string();
                recordings.push(Change::SetRecording {
                    path,
                    recording: Box::new(Recording::new(feature, name.clone(), steps)),
                });
            }
        }
        host.apply_all(recordings);
        host
    }

    const SHOP: &str = "\
Feature: Shop
  Scenario: Buy tea
    Given I am on the shop
    When I buy \"tea\"

  Scenario: Buy mugs
    Given I visit the shop
      | size | large |
    When I buy \"mugs\"

  Scenario: Buy cups
    Given I am on the shop
    When I buy \"cups\"
";

    fn shop_actions(_: &str, _: StepKind, text: &str) -> Vec<Action> {
        match text {
            "I am on the shop" => vec![goto("/"), click("Shop")],
            // The tier that fired is advisory: it does not make another behaviour.
            "I visit the shop" => {
                let mut target = Target::role("button", "Shop");
                target.tier = Some(Tier::Css);
                vec![goto("/"), Action::Click { target, timeout_ms: None }]
            }
            other => vec![click(other)],
        }
    }

    #[test]
    fn two_wordings_recorded_alike_give_one_proposal_with_the_line_renamed() {
        let host = project(&[("features/shop.feature", SHOP)], shop_actions);
        let snapshot = host.snapshot();
        let plan = rename_plan(&snapshot);
        assert_eq!(plan.groups.len(), 1, "{plan:#?}");
        let group = &plan.groups[0];
        assert_eq!(group.kind, StepKind::Context);
        assert_eq!(&*group.keep.text, "I am on the shop");
        assert_eq!(group.keep.uses, 2);
        assert_eq!(group.renamed.iter().map(|w| &*w.text).collect::<Vec<_>>(), ["I visit the shop"]);
        assert_eq!(plan.proposals.len(), 1, "{plan:#?}");
        assert_eq!(plan.skipped, vec![]);

        let filed = &plan.proposals[0];
        assert_eq!(filed.path, Path::new(".saffron/proposals/shop/buy-mugs.json"));
        let proposal = &filed.proposal;
        assert_eq!(proposal.scenario.feature, "features/shop.feature");
        assert_eq!(proposal.scenario.name, "Buy mugs");
        assert_eq!(proposal.scenario.cache_path, ".saffron/cache/shop/buy-mugs.json");
        // Only the step line changes: its table stays as it is, on the line below.
        assert_eq!(
            proposal.feature_edits,
            vec![FeatureEdit {
                file: "features/shop.feature".into(),
                line: 7,
                before: "    Given I visit the shop".into(),
                after: "    Given I am on the shop".into(),
                from_set: None,
            }]
        );
        let committed =
            &snapshot.recording(Path::new(".saffron/cache/shop/buy-mugs.json")).expect("recorded").recording;
        assert_eq!(&proposal.recording, committed, "the committed recording, unchanged");
        assert_eq!(proposal.stale_reasons(&committed.step_specs(), Some(committed)), vec![]);
        assert!(proposal.diff.is_empty());
        assert_eq!(proposal.usage, None);
        assert_eq!(
            proposal.adaptations,
            ["rename features/shop.feature:7: \"Given I visit the shop\" → \"Given I am on the shop\""]
        );
        for needle in [
            "\"I visit the shop\" in .saffron/cache/shop/buy-mugs.json step 1",
            "\"I am on the shop\" in .saffron/cache/shop/buy-cups.json step 1, .saffron/cache/shop/buy-tea.json step 1",
            "Keeping \"I am on the shop\" (written 2×) over \"I visit the shop\" (written 1×)",
        ] {
            assert!(proposal.narrative.contains(needle), "{needle:?} not in {}", proposal.narrative);
        }
        // Deterministic: the same project gives the same plan.
        assert_eq!(rename_plan(&snapshot), plan);
    }

    #[test]
    fn a_tie_keeps_the_wording_written_first() {
        let text = SHOP.replace(
            "  Scenario: Buy cups\n    Given I am on the shop",
            "  Scenario: Buy cups\n    Given I visit the shop",
        );
        let host = project(&[("features/shop.feature", &text)], shop_actions);
        let plan = rename_plan(&host.snapshot());
        assert_eq!(plan.groups.len(), 1);
        assert_eq!(&*plan.groups[0].keep.text, "I visit the shop", "written 2× now");
        // 1× each: the one on line 3 is kept, though the other comes first by text.
        let text = SHOP
            .replace("  Scenario: Buy cups\n    Given I am on the shop\n", "  Scenario: Buy cups\n")
            .replace("Given I am on the shop", "Given I was on the shop")
            .replace("Given I visit the shop", "Given I am on the shop")
            .replace("Given I was on the shop", "Given I visit the shop");
        let host = project(&[("features/shop.feature", &text)], shop_actions);
        let plan = rename_plan(&host.snapshot());
        assert_eq!(&*plan.groups[0].keep.text, "I visit the shop", "line 3 before line 7");
        assert_eq!(plan.proposals.iter().map(|p| p.proposal.scenario.name.as_str()).collect::<Vec<_>>(), ["Buy mugs"]);
    }

    #[test]
    fn the_same_text_recorded_two_ways_proves_nothing() {
        // "I am on the shop" goes to / in two scenarios and to /store in another: divergent, so
        // "I visit the shop" (also /) is not proven the same as it.
        let host = project(&[("features/shop.feature", SHOP)], |scenario, kind, text| match (scenario, text) {
            ("Buy cups", "I am on the shop") => vec![goto("/store"), click("Shop")],
            _ => shop_actions(scenario, kind, text),
        });
        let plan = rename_plan(&host.snapshot());
        assert_eq!(plan.groups, vec![]);
        assert_eq!(plan.proposals, vec![]);
    }

    #[test]
    fn actions_compare_as_recorded_css_fallbacks_included() {
        let host = project(&[("features/shop.feature", SHOP)], |scenario, kind, text| match text {
            "I visit the shop" => vec![goto("/?from=home"), click("Shop")],
            _ => shop_actions(scenario, kind, text),
        });
        assert_eq!(rename_plan(&host.snapshot()).groups, vec![]);
        let host = project(&[("features/shop.feature", SHOP)], |scenario, kind, text| match text {
            "I buy \"mugs\"" => {
                let mut target = Target::role("button", "I buy \"tea\"");
                target.css.push("#buy".into());
                vec![Action::Click { target, timeout_ms: None }]
            }
            _ => shop_actions(scenario, kind, text),
        });
        let plan = rename_plan(&host.snapshot());
        assert!(plan.groups.iter().all(|group| group.kind == StepKind::Context), "{plan:#?}");
    }

    #[test]
    fn wordings_of_different_kinds_are_different_steps() {
        let text = "\
Feature: Shop
  Scenario: Browse
    Given I am on the shop

  Scenario: Go
    When I go to the shop
";
        let host = project(&[("features/shop.feature", text)], |_, _, _| vec![goto("/shop")]);
        let plan = rename_plan(&host.snapshot());
        assert_eq!(plan.groups, vec![]);
        assert_eq!(plan.proposals, vec![]);
    }

    const SETS: &str = "\
Feature: Shared
  StepSet: in the shop
    Given I visit the shop
";

    const SET_USERS: &str = "\
Feature: Cart
  Scenario: Fill the cart
    StepSet in the shop
    When I buy \"tea\"

  Scenario: Empty the cart
    StepSet in the shop
    When I buy \"mugs\"
";

    /// The shop with "I am on the shop" written three times.
    fn shop_on_the_shop() -> String {
        SHOP.replace("Given I visit the shop", "Given I am on the shop")
    }

    #[test]
    fn a_step_set_line_is_renamed_once_in_the_set_file() {
        let host = project(
            &[
                ("features/shared.steps.saffron", SETS),
                ("features/cart.saffron", SET_USERS),
                ("features/shop.feature", &shop_on_the_shop()),
            ],
            shop_actions,
        );
        let plan = rename_plan(&host.snapshot());
        assert_eq!(&*plan.groups[0].keep.text, "I am on the shop");
        let names: Vec<&str> = plan.proposals.iter().map(|p| p.proposal.scenario.name.as_str()).collect();
        // "Empty the cart" invokes the set too, but is written after "Fill the cart".
        assert_eq!(names, ["Fill the cart"], "{plan:#?}");
        let fill = &plan.proposals[0].proposal;
        assert_eq!(
            fill.feature_edits,
            vec![FeatureEdit {
                file: "features/shared.steps.saffron".into(),
                line: 3,
                before: "    Given I visit the shop".into(),
                after: "    Given I am on the shop".into(),
                from_set: Some("in the shop".into()),
            }]
        );
        assert!(fill.adaptations[0].contains("(StepSet \"in the shop\")"), "{:?}", fill.adaptations);
        assert!(
            fill.narrative.contains("also run by other scenarios") && fill.narrative.contains("\"Empty the cart\""),
            "{}",
            fill.narrative
        );
        assert_eq!(plan.skipped.len(), 1, "{plan:#?}");
        assert_eq!(plan.skipped[0].name, "Empty the cart");
        assert!(plan.skipped[0].reason.contains("shared with \"Fill the cart\""), "{}", plan.skipped[0].reason);
    }

    #[test]
    fn a_shared_line_goes_to_the_first_selected_scenario() {
        let (fill, empty) = SET_USERS.split_at(SET_USERS.find("  Scenario: Empty").expect("second scenario"));
        let empty = format!("Feature: Emptying\n{empty}");
        let files = [
            ("features/shared.steps.saffron", SETS),
            ("features/a.saffron", fill),
            ("features/b.saffron", empty.as_str()),
            ("features/shop.feature", &shop_on_the_shop()),
        ];
        let host = project(&files, shop_actions);
        let plan = rename_plan_for(&host.snapshot(), |file| file == Path::new("features/b.saffron"));
        let names: Vec<&str> = plan.proposals.iter().map(|p| p.proposal.scenario.name.as_str()).collect();
        assert_eq!(names, ["Empty the cart"], "{plan:#?}");
        assert_eq!(plan.proposals[0].proposal.feature_edits[0].from_set.as_deref(), Some("in the shop"));
        assert_eq!(plan.skipped, vec![]);
        assert_eq!(plan.groups.len(), 1, "every fresh recording still proves");
    }

    #[test]
    fn a_background_line_is_renamed_once_for_the_scenarios_that_share_it() {
        let text = "\
Feature: Cart
  Background:
    Given I visit the shop

  Scenario: Fill the cart
    When I buy \"tea\"

  Scenario: Empty the cart
    When I buy \"mugs\"
";
        let host =
            project(&[("features/cart.feature", text), ("features/shop.feature", &shop_on_the_shop())], shop_actions);
        let plan = rename_plan(&host.snapshot());
        assert_eq!(plan.proposals.len(), 1, "{plan:#?}");
        let fill = &plan.proposals[0].proposal;
        assert_eq!(fill.scenario.name, "Fill the cart");
        assert_eq!(fill.feature_edits.len(), 1);
        assert_eq!((fill.feature_edits[0].line, fill.feature_edits[0].from_set.as_deref()), (3, None));
        assert_eq!(plan.skipped.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["Empty the cart"]);
    }

    #[test]
    fn a_pending_proposal_is_left_alone_and_a_shared_line_goes_to_the_next_scenario() {
        let mut host = project(
            &[
                ("features/shared.steps.saffron", SETS),
                ("features/cart.saffron", SET_USERS),
                ("features/shop.feature", &shop_on_the_shop()),
            ],
            shop_actions,
        );
        let first = rename_plan(&host.snapshot()).proposals.remove(0);
        host.apply(Change::SetProposal { path: first.path.clone(), proposal: Box::new(first.proposal) });
        let plan = rename_plan(&host.snapshot());
        let names: Vec<&str> = plan.proposals.iter().map(|p| p.proposal.scenario.name.as_str()).collect();
        assert_eq!(names, ["Empty the cart"]);
        assert_eq!(plan.proposals[0].proposal.feature_edits[0].file, "features/shared.steps.saffron");
        assert_eq!(plan.skipped.len(), 1);
        assert!(plan.skipped[0].reason.contains("a proposal is pending review"), "{:?}", plan.skipped);
    }

    #[test]
    fn outline_placeholders_must_match_to_rename() {
        let text = "\
Feature: Pages
  Scenario Outline: Open <page>
    Given I open the <page> page
    When I look around

    Examples:
      | page |
      | home |

  Scenario Outline: Visit <page>
    Given I visit the <page> page
    When I look around

    Examples:
      | page |
      | help |

  Scenario: Home
    Given I open the home page
    When I look around
";
        let host = project(&[("features/pages.feature", text)], |_, kind, text| match kind {
            StepKind::Context if text.contains("<page>") || text.contains("home") => vec![goto("/<page>")],
            _ => vec![click(text)],
        });
        let plan = rename_plan(&host.snapshot());
        assert_eq!(plan.groups.len(), 1, "{plan:#?}");
        let group = &plan.groups[0];
        assert_eq!(&*group.keep.text, "I open the <page> page");
        assert_eq!(group.renamed.iter().map(|w| &*w.text).collect::<Vec<_>>(), ["I visit the <page> page"]);
        assert_eq!(group.not_renamed.iter().map(|w| &*w.text).collect::<Vec<_>>(), ["I open the home page"]);
        assert_eq!(plan.proposals.len(), 1);
        assert_eq!(plan.proposals[0].proposal.feature_edits[0].after, "    Given I open the <page> page");
        assert_eq!(plan.proposals[0].proposal.feature_edits[0].line, 11);
    }
}
