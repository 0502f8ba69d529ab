//! `saffron steps --propose-renames`: files a proposal for each scenario that writes a wording
//! proven, by identical recordings, to be another wording of a step (see
//! `saffron_index::renames`). Mechanical: no AI, no browser.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use saffron_index::renames::{RenamePlan, SkippedScenario, Wording};
use saffron_index::{Snapshot, rename_plan_for};
use saffron_recording::{FeatureEdit, Store};
use serde::Serialize;

use crate::project;
use crate::terminal::escape_controls;

/// What became of one drafted proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
enum Outcome {
    Filed,
    /// `--dry-run`: nothing was written.
    WouldFile,
    /// A proposal for the scenario appeared on disk since the index was read: left as it is.
    Pending,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonProposal<'a> {
    path: String,
    outcome: Outcome,
    feature: &'a str,
    scenario: &'a str,
    feature_edits: &'a [FeatureEdit],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonRenames<'a> {
    dry_run: bool,
    groups: &'a [saffron_index::renames::DuplicateWordings],
    proposals: Vec<JsonProposal<'a>>,
    skipped: Vec<&'a SkippedScenario>,
}

/// Drafts the rename proposals of the scenarios under `filters` and files them (unless
/// `dry_run`) under the store's lock, never over a pending proposal; prints what it did.
pub fn propose(root: &Path, snapshot: &Snapshot, filters: &[PathBuf], dry_run: bool, json: bool) -> Result<()> {
    let plan = rename_plan_for(snapshot, |file| project::selected(file, filters));
    let outcomes = file(root, &plan, dry_run)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if json {
        let report = JsonRenames {
            dry_run,
            groups: &plan.groups,
            proposals: plan
                .proposals
                .iter()
                .zip(&outcomes)
                .map(|(filed, outcome)| JsonProposal {
                    path: slashed(&filed.path),
                    outcome: *outcome,
                    feature: &filed.proposal.scenario.feature,
                    scenario: &filed.proposal.scenario.name,
                    feature_edits: &filed.proposal.feature_edits,
                })
                .collect(),
            skipped: plan.skipped.iter().collect(),
        };
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write_text(&mut out, &plan, &outcomes)?;
    }
    let count = |wanted| outcomes.iter().filter(|outcome| **outcome == wanted).count();
    let done = if dry_run {
        format!("{} proposal(s) would be filed (dry run)", count(Outcome::WouldFile))
    } else {
        format!("{} proposal(s) filed", count(Outcome::Filed))
    };
    eprintln!(
        "{} group(s) of behaviour-proven duplicate wordings; {done}; {} scenario(s) skipped",
        plan.groups.len(),
        plan.skipped.len() + count(Outcome::Pending)
    );
    Ok(())
}

/// Writes each proposal atomically, all under one hold of the store's lock, so a run or an
/// accept in another process cannot interleave; a proposal already on disk is never replaced.
fn file(root: &Path, plan: &RenamePlan, dry_run: bool) -> Result<Vec<Outcome>> {
    if dry_run {
        return Ok(plan.proposals.iter().map(|_| Outcome::WouldFile).collect());
    }
    if plan.proposals.is_empty() {
        return Ok(Vec::new());
    }
    let store = Store::open(root)?;
    let lock = store.lock()?;
    let mut outcomes = Vec::with_capacity(plan.proposals.len());
    for filed in &plan.proposals {
        let path = root.join(&filed.path);
        if path.symlink_metadata().is_ok() {
            outcomes.push(Outcome::Pending);
            continue;
        }
        lock.write_proposal(&path, &filed.proposal)?;
        outcomes.push(Outcome::Filed);
    }
    Ok(outcomes)
}

fn write_text(out: &mut impl Write, plan: &RenamePlan, outcomes: &[Outcome]) -> Result<()> {
    let quoted = |wording: &Wording| format!("\"{}\" (written {}×)", escape_controls(&wording.text), wording.uses);
    for group in &plan.groups {
        writeln!(out, "same behaviour ({} steps): keep {}", group.kind.keyword(), quoted(&group.keep))?;
        for wording in &group.renamed {
            writeln!(out, "  rename {}", quoted(wording))?;
        }
        for wording in &group.not_renamed {
            let text = escape_controls(&wording.text);
            writeln!(out, "  leave \"{text}\": {}", escape_controls(&wording.reason))?;
        }
    }
    for (filed, outcome) in plan.proposals.iter().zip(outcomes) {
        let verb = match outcome {
            Outcome::Filed => "filed",
            Outcome::WouldFile => "would file",
            Outcome::Pending => "skipped (a proposal is already pending there)",
        };
        let scenario = &filed.proposal.scenario;
        writeln!(
            out,
            "{verb} {}  {}: {}",
            slashed(&filed.path),
            escape_controls(&scenario.feature),
            escape_controls(&scenario.name)
        )?;
        for edit in &filed.proposal.feature_edits {
            writeln!(
                out,
                "  {}:{}  {} → {}",
                escape_controls(&edit.file),
                edit.line,
                escape_controls(edit.before.trim()),
                escape_controls(edit.after.trim())
            )?;
        }
    }
    for skipped in &plan.skipped {
        writeln!(
            out,
            "skipped {}:{}  {}: {}",
            skipped.file.display(),
            skipped.line,
            escape_controls(&skipped.name),
            escape_controls(&skipped.reason)
        )?;
    }
    Ok(())
}

fn slashed(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}
