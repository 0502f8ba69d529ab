//! `saffron import`: integrity first (every bundle checked whole before anything is written),
//! then the repository's identity, then each proposal on its own: one that no longer fits the
//! checkout is named with why and not copied; the rest are filed. The run's report becomes the
//! latest run, marked imported, so every surface that reads `latest.json` works unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use saffron_index::Snapshot;
use saffron_index::review::{assess, project_path, recording_path};
use saffron_recording::{Proposal, Store, contract_digest, parse_handler, parse_proposal, write_atomic};
use saffron_runner::{ImportedRun, RunReport, merge_reports, write_imported_reports};
use serde::Serialize;

use super::manifest::Manifest;
use super::paths::Entry;
use super::read::{VerifiedBundle, verify};
use super::{BundleError, Limits};
use crate::ci_env::CiRun;
use crate::git;
use crate::identity::{self, Identity};
use crate::ledger::{ImportedFrom, Ledger};

/// The checkout a bundle is imported into.
pub struct ImportInput<'a> {
    pub root: &'a Path,
    /// The project as the index holds it now: proposals are judged against it.
    pub snapshot: &'a Snapshot,
    /// The checkout's remotes, (name, URL).
    pub remotes: Vec<(String, String)>,
    /// The commit checked out.
    pub head: Option<String>,
    /// Import a bundle made outside git (it names no repository), with a warning.
    pub allow_unknown_repository: bool,
    pub limits: Limits,
}

/// What became of one proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Imported {
    /// Filed under `.saffron/proposals/` (or `.saffron/handlers/proposed/`).
    Imported,
    /// Filed, replacing a different pending proposal for the same scenario.
    Replaced,
    /// The same bytes are pending here already: nothing written.
    Unchanged,
    /// The committed recording is already the proposal's: nothing written.
    AlreadyAccepted,
    /// Its binding does not fit the checkout: not copied.
    Stale,
    /// It cannot be filed here (not a valid proposal, a feature outside the project).
    Refused,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalOutcome {
    /// Where it is (or would be) filed, relative to the project root.
    pub path: String,
    /// The feature and scenario it is for (empty for a handler).
    pub feature: String,
    pub scenario: String,
    pub outcome: Imported,
    /// Why it is stale or refused, in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// The bundle it came from.
    pub bundle: String,
}

/// One bundle, as imported.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleSummary {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<CiRun>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub unzipped_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportOutcome {
    pub bundles: Vec<BundleSummary>,
    pub proposals: Vec<ProposalOutcome>,
    pub warnings: Vec<String>,
    /// `latest.json` when the bundles' report was installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// Whether anything was written.
    pub changed: bool,
}

pub fn import(input: &ImportInput<'_>, bundle_paths: &[PathBuf]) -> Result<ImportOutcome, BundleError> {
    if bundle_paths.is_empty() {
        return Err(BundleError::NothingToImport("no saffron-bundle*.zip was found there".into()));
    }
    let mut budget = input.limits.total;
    let mut bundles = Vec::new();
    for path in bundle_paths {
        bundles.push(verify(path, &input.limits, &mut budget)?);
    }
    let mut warnings = identity_warnings(input, &bundles)?;
    warnings.extend(commit_warnings(input, &bundles));

    // Every proposal once: the same path from two bundles must be the same bytes.
    let mut planned: BTreeMap<PathBuf, (Entry, PathBuf, Vec<u8>, usize)> = BTreeMap::new();
    for (index, bundle) in bundles.iter().enumerate() {
        for (entry, staged) in bundle.entries.values() {
            let (Entry::Proposal(target) | Entry::HandlerProposal(target)) = entry else { continue };
            let bytes = std::fs::read(staged).map_err(|source| BundleError::Read { path: staged.clone(), source })?;
            if let Some((_, _, earlier, from)) = planned.get(target)
                && *earlier != bytes
            {
                return Err(BundleError::Conflict(format!(
                    "{} and {} hold different proposals for {}: import them one at a time",
                    name_of(&bundles[*from].path),
                    name_of(&bundle.path),
                    target.display()
                )));
            }
            planned.insert(target.clone(), (entry.clone(), staged.clone(), bytes, index));
        }
    }

    let report = merged_report(&bundles)?;
    let store = Store::open(input.root).map_err(|error| BundleError::Project(error.to_string()))?;
    let _lock = store.lock().map_err(|error| BundleError::Project(error.to_string()))?;
    let mut ledger = Ledger::read(input.root);
    let mut outcomes = Vec::new();
    let mut changed = false;
    for (target, (entry, _, bytes, from)) in &planned {
        let bundle = &bundles[*from];
        let mut outcome = judge(input, entry, target, bytes);
        outcome.bundle = name_of(&bundle.path);
        let destination = input.root.join(target);
        if matches!(outcome.outcome, Imported::Imported | Imported::Replaced) {
            store.ensure_inside(&destination).map_err(|error| BundleError::Project(error.to_string()))?;
            write_atomic(&destination, bytes)
                .map_err(|source| BundleError::Write { path: destination.clone(), source })?;
            changed = true;
        }
        if matches!(outcome.outcome, Imported::Imported | Imported::Replaced | Imported::Unchanged) {
            let entry = ImportedFrom {
                revision: super::revision(bytes),
                run: bundle.manifest.run.clone(),
                branch: bundle.manifest.branch.clone(),
                commit: bundle.manifest.commit.clone(),
                bundle: name_of(&bundle.path),
                imported_at: saffron_recording::now_rfc3339(),
            };
            let key = outcome.path.clone();
            if ledger.proposals.get(&key).is_none_or(|known| known.revision != entry.revision) {
                ledger.proposals.insert(key, entry);
                changed = true;
            }
        }
        outcomes.push(outcome);
    }

    // The evidence, streamed from the private folder into place, each file whole or not at all.
    for bundle in &bundles {
        for (entry, staged) in bundle.entries.values() {
            let Entry::Artifact(target) = entry else { continue };
            let destination = input.root.join(target);
            if files_equal(staged, &destination) {
                continue;
            }
            store.ensure_inside(&destination).map_err(|error| BundleError::Project(error.to_string()))?;
            copy_atomic(staged, &destination)
                .map_err(|source| BundleError::Write { path: destination.clone(), source })?;
            changed = true;
        }
    }

    // CI's run history joins this checkout's: each line it does not have yet, in order.
    let mut known: std::collections::HashSet<String> =
        saffron_runner::history::read(input.root).iter().filter_map(|line| serde_json::to_string(line).ok()).collect();
    let mut arrived = Vec::new();
    for bundle in &bundles {
        let Some((_, staged)) = bundle.entries.get(super::paths::HISTORY) else { continue };
        let text =
            std::fs::read_to_string(staged).map_err(|source| BundleError::Read { path: staged.clone(), source })?;
        for line in
            text.lines().filter_map(|line| serde_json::from_str::<saffron_runner::history::HistoryLine>(line).ok())
        {
            if let Ok(key) = serde_json::to_string(&line)
                && known.insert(key)
            {
                arrived.push(line);
            }
        }
    }
    if !arrived.is_empty() {
        saffron_runner::history::append(input.root, &arrived)
            .map_err(|source| BundleError::Write { path: input.root.join(saffron_runner::history::HISTORY), source })?;
        changed = true;
    }

    let mut report_path = None;
    if let Some(mut report) = report {
        report.imported = Some(imported_run(&bundles));
        // A picture or trace the report names is shown only when the bundle brought it.
        let filed: Vec<&Path> = bundles
            .iter()
            .flat_map(|bundle| bundle.entries.values())
            .filter_map(|(entry, _)| match entry {
                Entry::Artifact(target) => Some(target.as_path()),
                _ => None,
            })
            .collect();
        for scenario in &mut report.scenarios {
            scenario.screenshot = None;
            if scenario.screenshot_file.as_deref().is_some_and(|file| !filed.contains(&Path::new(file))) {
                scenario.screenshot_file = None;
            }
            scenario.traces.retain(|file| filed.contains(&Path::new(file)));
            if scenario.trace_viewer.as_deref().is_some_and(|file| !filed.contains(&Path::new(file))) {
                scenario.trace_viewer = None;
            }
        }
        let latest = input.root.join(saffron_recording::layout::LATEST_REPORT);
        let unchanged = std::fs::read(&latest)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<RunReport>(&bytes).ok())
            .is_some_and(|current| current.imported == report.imported);
        if !unchanged {
            write_imported_reports(input.root, &report)
                .map_err(|source| BundleError::Write { path: latest.clone(), source })?;
            changed = true;
        }
        report_path = Some(saffron_recording::layout::LATEST_REPORT.to_string());
    }
    if changed {
        ledger
            .write(input.root)
            .map_err(|source| BundleError::Write { path: input.root.join(crate::ledger::LEDGER), source })?;
    }

    let summaries = bundles
        .iter()
        .map(|bundle| BundleSummary {
            path: bundle.path.display().to_string(),
            run: bundle.manifest.run.clone(),
            branch: bundle.manifest.branch.clone(),
            commit: bundle.manifest.commit.clone(),
            shard: bundle.manifest.shard.map(|shard| format!("{}/{}", shard.index, shard.total)),
            unzipped_bytes: bundle.unzipped,
        })
        .collect();
    Ok(ImportOutcome { bundles: summaries, proposals: outcomes, warnings, report: report_path, changed })
}

fn name_of(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned())
}

/// Refuses bundles of no repository (unless allowed), of two repositories, or of none of the
/// checkout's remotes; warns about another host, and about a checkout with no remote.
fn identity_warnings(input: &ImportInput<'_>, bundles: &[VerifiedBundle]) -> Result<Vec<String>, BundleError> {
    let mut warnings = Vec::new();
    let first = &bundles[0];
    for bundle in &bundles[1..] {
        let id = |manifest: &Manifest| manifest.repository.as_ref().map(|repository| repository.id.clone());
        if id(&bundle.manifest) != id(&first.manifest) {
            return Err(BundleError::Conflict(format!(
                "{} and {} come from different repositories: import them one at a time",
                name_of(&first.path),
                name_of(&bundle.path)
            )));
        }
    }
    let Some(repository) = &first.manifest.repository else {
        if input.allow_unknown_repository {
            warnings.push(format!(
                "{} names no repository (it was made outside git); imported as --allow-unknown-repository asks",
                name_of(&first.path)
            ));
            return Ok(warnings);
        }
        return Err(BundleError::Foreign {
            bundle: first.path.clone(),
            reason: "it names no repository (it was made outside git), so nothing tells it belongs here".into(),
        });
    };
    if input.remotes.is_empty() {
        warnings.push(format!(
            "this checkout has no git remote, so {} (from {}) cannot be told to belong here",
            name_of(&first.path),
            repository.id.display()
        ));
        return Ok(warnings);
    }
    match identity::judge(&repository.id, &input.remotes) {
        Identity::Same { .. } => {}
        Identity::OtherHost { remote, host } => warnings.push(format!(
            "{} comes from {}; the remote `{remote}` has that path on {host} (an SSH alias or a mirror)",
            name_of(&first.path),
            repository.id.display()
        )),
        Identity::Foreign => {
            let remotes: Vec<String> = input
                .remotes
                .iter()
                .map(|(name, url)| format!("{name} {}", identity::strip_credentials(url)))
                .collect();
            return Err(BundleError::Foreign {
                bundle: first.path.clone(),
                reason: format!(
                    "it comes from {}, and no remote of this checkout is that repository ({})",
                    repository.id.display(),
                    remotes.join(", ")
                ),
            });
        }
    }
    Ok(warnings)
}

/// A bundle made on another commit than the one checked out: a warning, with how far apart they
/// are when git knows both. Never a refusal: each proposal's binding is what decides.
fn commit_warnings(input: &ImportInput<'_>, bundles: &[VerifiedBundle]) -> Vec<String> {
    let Some(head) = &input.head else { return Vec::new() };
    let mut warnings = Vec::new();
    for bundle in bundles {
        let Some(commit) = &bundle.manifest.commit else { continue };
        if commit == head {
            continue;
        }
        let short = |commit: &str| commit.chars().take(12).collect::<String>();
        let distance = match git::distance(input.root, head, commit) {
            Some((0, ahead)) => format!(", {ahead} commit(s) ahead of this checkout"),
            Some((behind, 0)) => format!(", {behind} commit(s) behind this checkout"),
            Some((here, there)) => format!("; the two have diverged ({here} here, {there} there)"),
            None => ", which this checkout does not have (fetch it to compare)".to_string(),
        };
        warnings.push(format!(
            "{} was made on commit {}{distance}; this checkout is at {}: a proposal that no longer fits is named \
             below and not imported",
            name_of(&bundle.path),
            short(commit),
            short(head)
        ));
    }
    warnings
}

fn judge(input: &ImportInput<'_>, entry: &Entry, target: &Path, bytes: &[u8]) -> ProposalOutcome {
    let path = target.to_string_lossy().replace('\\', "/");
    let mut outcome = ProposalOutcome {
        path,
        feature: String::new(),
        scenario: String::new(),
        outcome: Imported::Imported,
        reasons: Vec::new(),
        bundle: String::new(),
    };
    let refuse = |mut outcome: ProposalOutcome, reason: String| {
        outcome.outcome = Imported::Refused;
        outcome.reasons.push(reason);
        outcome
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return refuse(outcome, "it is not UTF-8".into());
    };
    let existing = std::fs::read(input.root.join(target)).ok();
    if let Entry::HandlerProposal(_) = entry {
        if let Err(error) = parse_handler(text) {
            return refuse(outcome, format!("not a valid handler: {error}"));
        }
        outcome.outcome = match existing {
            Some(current) if current == bytes => Imported::Unchanged,
            Some(_) => Imported::Replaced,
            None => Imported::Imported,
        };
        return outcome;
    }
    let proposal: Proposal = match parse_proposal(text) {
        Ok(proposal) => proposal,
        Err(error) => return refuse(outcome, format!("not a valid proposal: {error}")),
    };
    outcome.feature = proposal.scenario.feature.clone();
    outcome.scenario = proposal.scenario.name.clone();
    if project_path(&proposal.scenario.feature).is_none() {
        return refuse(
            outcome,
            format!("it names the feature file `{}`, outside the project", proposal.scenario.feature),
        );
    }
    if recording_path(&proposal.scenario.cache_path).is_none() {
        return refuse(
            outcome,
            format!("it names `{}`, which is not a recording's path", proposal.scenario.cache_path),
        );
    }
    if let Some(current) = &existing
        && current == bytes
    {
        outcome.outcome = Imported::Unchanged;
        return outcome;
    }
    if let Some(committed) =
        recording_path(&proposal.scenario.cache_path).and_then(|path| input.snapshot.recording(&path))
        && contract_digest(&committed.recording) == contract_digest(&proposal.recording)
    {
        outcome.outcome = Imported::AlreadyAccepted;
        return outcome;
    }
    let assessment = assess(input.snapshot, &proposal);
    if assessment.is_stale() {
        outcome.outcome = Imported::Stale;
        outcome.reasons = assessment.stale_reasons;
        return outcome;
    }
    outcome.outcome = if existing.is_some() { Imported::Replaced } else { Imported::Imported };
    outcome
}

/// The bundles' reports as one: a shard's alone, several shards' merged with `report --merge`'s
/// rules (a partial set too: CI exports the shards that failed).
fn merged_report(bundles: &[VerifiedBundle]) -> Result<Option<RunReport>, BundleError> {
    let mut reports = Vec::new();
    for bundle in bundles {
        let Some((_, staged)) = bundle.entries.get(super::paths::REPORT) else { continue };
        let bytes = std::fs::read(staged).map_err(|source| BundleError::Read { path: staged.clone(), source })?;
        let report: RunReport = serde_json::from_slice(&bytes).map_err(|error| BundleError::Damaged {
            bundle: bundle.path.clone(),
            reason: format!("its report.json is not a run report: {error}"),
        })?;
        reports.push(report);
    }
    match reports.len() {
        0 => Ok(None),
        1 => Ok(reports.pop()),
        _ => merge_reports(reports)
            .map(Some)
            .map_err(|error| BundleError::Conflict(format!("the bundles' reports: {error}"))),
    }
}

fn imported_run(bundles: &[VerifiedBundle]) -> ImportedRun {
    let first = &bundles[0].manifest;
    let mut shards: Vec<usize> = bundles.iter().filter_map(|bundle| bundle.manifest.shard.map(|s| s.index)).collect();
    shards.sort_unstable();
    shards.dedup();
    ImportedRun {
        run_id: first.run.as_ref().map(|run| run.id.clone()),
        attempt: first.run.as_ref().and_then(|run| run.attempt.clone()),
        link: first.run.as_ref().and_then(|run| run.link.clone()),
        branch: first.branch.clone(),
        commit: first.commit.clone(),
        shards,
        shard_total: first.shard.map(|shard| shard.total),
    }
}

/// Whether two files hold the same bytes (a missing one holds none), compared in chunks.
fn files_equal(a: &Path, b: &Path) -> bool {
    use std::io::Read as _;
    let (Ok(first), Ok(second)) = (std::fs::File::open(a), std::fs::File::open(b)) else { return false };
    if first.metadata().map(|m| m.len()).ok() != second.metadata().map(|m| m.len()).ok() {
        return false;
    }
    let (mut first, mut second) = (std::io::BufReader::new(first), std::io::BufReader::new(second));
    let (mut x, mut y) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let Ok(read) = first.read(&mut x) else { return false };
        if read == 0 {
            return second.read(&mut y).is_ok_and(|n| n == 0);
        }
        if second.read_exact(&mut y[..read]).is_err() || x[..read] != y[..read] {
            return false;
        }
    }
}

/// Copies `from` to `to` through a temporary file beside it, renamed into place when complete.
fn copy_atomic(from: &Path, to: &Path) -> std::io::Result<()> {
    let folder = to.parent().ok_or_else(|| std::io::Error::other("no folder"))?;
    std::fs::create_dir_all(folder)?;
    let mut temporary = tempfile::Builder::new().prefix(".saffron-import-").tempfile_in(folder)?;
    std::io::copy(&mut std::fs::File::open(from)?, temporary.as_file_mut())?;
    temporary.as_file().sync_all()?;
    temporary.persist(to).map_err(|error| error.error)?;
    Ok(())
}
