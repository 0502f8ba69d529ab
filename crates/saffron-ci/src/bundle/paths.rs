//! The paths a bundle may hold, and where each lands in a project. Every path is checked before
//! anything is read from it: only `manifest.json`, `report.json`, slug paths under `proposals/`
//! and `artifacts/`, so nothing a bundle holds can land outside `.saffron/`.

use std::path::PathBuf;

use saffron_recording::{MAX_SLUG_LEN, layout};

/// The manifest's path in a bundle.
pub const MANIFEST: &str = "manifest.json";
/// The run report's path in a bundle.
pub const REPORT: &str = "report.json";
/// The run history's path in a bundle (`.saffron/reports/history.jsonl`).
pub const HISTORY: &str = "history.jsonl";
/// Proposed handlers travel under `proposals/` in a folder no feature slug can be.
const HANDLERS: &str = "_handlers";
/// How many folders deep an artifact may be (`artifacts/<run>/<file>`, with room to grow).
const MAX_ARTIFACT_DEPTH: usize = 4;
/// The longest path a bundle holds, in bytes.
pub const MAX_PATH_LEN: usize = 512;

/// What a bundle path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Manifest,
    Report,
    /// The CI checkout's run history, merged into the reviewer's.
    History,
    /// A proposal, at its path relative to the project root.
    Proposal(PathBuf),
    /// A proposed handler, at its path relative to the project root.
    HandlerProposal(PathBuf),
    /// Evidence (a screenshot, a trace), at its path relative to the project root.
    Artifact(PathBuf),
}

impl Entry {
    /// Where it lands, relative to the project root (the manifest and report have no place of
    /// their own: the report becomes `latest.json`).
    pub fn project_path(&self) -> Option<&PathBuf> {
        match self {
            Entry::Proposal(path) | Entry::HandlerProposal(path) | Entry::Artifact(path) => Some(path),
            Entry::Manifest | Entry::Report | Entry::History => None,
        }
    }
}

/// What a bundle path is, or why it may not be in a bundle.
pub fn classify(name: &str) -> Result<Entry, String> {
    if name.len() > MAX_PATH_LEN {
        return Err(format!("a path of {} bytes (at most {MAX_PATH_LEN})", name.len()));
    }
    match name {
        MANIFEST => return Ok(Entry::Manifest),
        REPORT => return Ok(Entry::Report),
        HISTORY => return Ok(Entry::History),
        _ => {}
    }
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        ["proposals", HANDLERS, file] => {
            let slug = json_slug(file)?;
            Ok(Entry::HandlerProposal(layout::handler_proposal(slug)))
        }
        ["proposals", feature, file] => {
            if !is_slug(feature) {
                return Err(format!("`{feature}` is not a feature slug"));
            }
            let slug = json_slug(file)?;
            Ok(Entry::Proposal(layout::proposal(feature, slug)))
        }
        ["artifacts", rest @ ..] if !rest.is_empty() && rest.len() <= MAX_ARTIFACT_DEPTH => {
            if let Some(bad) = rest.iter().find(|part| !is_artifact_name(part)) {
                return Err(format!("`{bad}` is not a file or folder name an artifact has"));
            }
            Ok(Entry::Artifact(rest.iter().fold(PathBuf::from(layout::ARTIFACTS), |path, part| path.join(part))))
        }
        _ => Err("not manifest.json, report.json, history.jsonl, proposals/<feature>/<scenario>.json or artifacts/..."
            .into()),
    }
}

/// The bundle path of a file of the project, relative to its root: the inverse of [`classify`].
pub fn bundle_path(relative: &str) -> Option<String> {
    let relative = relative.replace('\\', "/");
    let name = if let Some(rest) = relative.strip_prefix(&format!("{}/", layout::HANDLER_PROPOSALS)) {
        format!("proposals/{HANDLERS}/{rest}")
    } else if let Some(rest) = relative.strip_prefix(&format!("{}/", layout::PROPOSALS)) {
        format!("proposals/{rest}")
    } else if let Some(rest) = relative.strip_prefix(&format!("{}/", layout::ARTIFACTS)) {
        format!("artifacts/{rest}")
    } else {
        return None;
    };
    classify(&name).ok().map(|_| name)
}

fn json_slug(file: &str) -> Result<&str, String> {
    file.strip_suffix(".json").filter(|slug| is_slug(slug)).ok_or_else(|| format!("`{file}` is not <slug>.json"))
}

/// A slug as `saffron_recording` makes them: lower-case ASCII letters and digits, joined by
/// dashes, not starting with one.
fn is_slug(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_SLUG_LEN + 8
        && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !text.starts_with('-')
}

// A run folder (`run-0001733400000000-42-0`) or a file (`orders--new-order.png`).
fn is_artifact_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 255
        && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.'))
        && text.as_bytes()[0].is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_slug_paths_under_proposals_and_artifacts_are_bundle_paths() {
        assert_eq!(classify("manifest.json"), Ok(Entry::Manifest));
        assert_eq!(classify("report.json"), Ok(Entry::Report));
        assert_eq!(
            classify("proposals/orders/new-order-2.json"),
            Ok(Entry::Proposal(PathBuf::from(".saffron/proposals/orders/new-order-2.json")))
        );
        assert_eq!(
            classify("proposals/_handlers/cookie-consent.json"),
            Ok(Entry::HandlerProposal(PathBuf::from(".saffron/handlers/proposed/cookie-consent.json")))
        );
        assert_eq!(
            classify("artifacts/run-0001-2-0/orders--new-order.png"),
            Ok(Entry::Artifact(PathBuf::from(".saffron/artifacts/run-0001-2-0/orders--new-order.png")))
        );
        for hostile in [
            "../outside.json",
            "proposals/../../etc/passwd",
            "proposals/orders/../../x.json",
            "proposals/Orders/new.json",
            "proposals/orders/new.txt",
            "proposals/orders/sub/new.json",
            "proposals/-x/new.json",
            "/abs/proposals/a/b.json",
            "artifacts/../cache/x.json",
            "artifacts/.hidden",
            "artifacts/run/..",
            "artifacts",
            "artifacts/a/b/c/d/e.png",
            "artifacts/run/x\\..\\y.png",
            "cache/orders/new.json",
            "proposals//new.json",
            "",
        ] {
            assert!(classify(hostile).is_err(), "{hostile:?} must be refused");
        }
    }

    #[test]
    fn a_project_path_and_its_bundle_path_round_trip() {
        for relative in [
            ".saffron/proposals/orders/new-order.json",
            ".saffron/handlers/proposed/cookie-consent.json",
            ".saffron/artifacts/run-1-2-0/orders--new-order.png",
        ] {
            let name = bundle_path(relative).expect("a bundle path");
            let entry = classify(&name).expect("classified");
            assert_eq!(entry.project_path().map(|path| path.to_string_lossy().into_owned()).as_deref(), Some(relative));
        }
        assert_eq!(bundle_path(".saffron/cache/orders/new-order.json"), None);
        assert_eq!(bundle_path("features/orders.feature"), None);
    }
}
