//! Where things live under `.saffron/`, as paths relative to the project root.
//!
//! The one place these names are spelled: the [`crate::Store`] joins them to its root, and a
//! caller that only needs to tell what a path is (an editor's file event, a path a client
//! passes, a file on the command line) compares against them without opening a store.

use std::path::{Path, PathBuf};

/// The store's folder.
pub const DIR: &str = ".saffron";
/// Recordings, committed: `cache/<feature-slug>/<scenario-slug>.json`.
pub const CACHE: &str = ".saffron/cache";
/// Proposals pending review: `proposals/<feature-slug>/<scenario-slug>.json`.
pub const PROPOSALS: &str = ".saffron/proposals";
/// Interruption handlers, committed: `handlers/<slug>.json` (see [`crate::Handler`]).
pub const HANDLERS: &str = ".saffron/handlers";
/// Run reports.
pub const REPORTS: &str = ".saffron/reports";
/// Screenshots and the evidence of recordings that were not saved.
pub const ARTIFACTS: &str = ".saffron/artifacts";
/// The store-wide write lock.
pub const LOCK: &str = ".saffron/.lock";
/// The last run's report, the one other tools read, in [`REPORTS`].
pub const LATEST_REPORT_FILE: &str = "latest.json";
/// The last run's report, relative to the project root.
pub const LATEST_REPORT: &str = ".saffron/reports/latest.json";

/// What `.gitignore` keeps out of version control: run output and the lock. Recordings are
/// committed.
pub const IGNORED: [&str; 3] = [".saffron/reports/", ".saffron/artifacts/", ".saffron/.lock"];

/// Where the recording of a scenario lives, relative to the project root (see
/// [`crate::feature_slug`] and [`crate::scenario_slugs`]).
pub fn recording(feature_slug: &str, scenario_slug: &str) -> PathBuf {
    Path::new(CACHE).join(feature_slug).join(format!("{scenario_slug}.json"))
}

/// Where the proposal for a scenario lives, relative to the project root.
pub fn proposal(feature_slug: &str, scenario_slug: &str) -> PathBuf {
    Path::new(PROPOSALS).join(feature_slug).join(format!("{scenario_slug}.json"))
}

/// Handlers a repair proposed, pending review: `handlers/proposed/<slug>.json`. Replay does not
/// use them until a person accepts one (`saffron accept`), which moves it up into [`HANDLERS`].
pub const HANDLER_PROPOSALS: &str = ".saffron/handlers/proposed";

/// Where a proposed handler lives, relative to the project root.
pub fn handler_proposal(slug: &str) -> PathBuf {
    Path::new(HANDLER_PROPOSALS).join(format!("{slug}.json"))
}

/// Whether `relative` (to the project root) names a proposed handler.
pub fn is_handler_proposal(relative: &Path) -> bool {
    relative.parent() == Some(Path::new(HANDLER_PROPOSALS)) && is_json(relative)
}

/// Where a handler lives, relative to the project root.
pub fn handler(slug: &str) -> PathBuf {
    Path::new(HANDLERS).join(format!("{slug}.json"))
}

/// Whether `relative` (to the project root) names a handler file (an accepted one).
pub fn is_handler(relative: &Path) -> bool {
    relative.parent() == Some(Path::new(HANDLERS)) && is_json(relative)
}

/// Whether `relative` (to the project root) is under the recordings.
pub fn in_cache(relative: &Path) -> bool {
    relative.starts_with(CACHE)
}

/// Whether `relative` (to the project root) is under the proposals.
pub fn in_proposals(relative: &Path) -> bool {
    relative.starts_with(PROPOSALS)
}

/// Whether `relative` (to the project root) names a recording file.
pub fn is_recording(relative: &Path) -> bool {
    in_cache(relative) && is_json(relative)
}

/// Whether `relative` (to the project root) names a proposal file.
pub fn is_proposal(relative: &Path) -> bool {
    in_proposals(relative) && is_json(relative)
}

/// The folders of files the index reads, recordings first.
pub fn indexed_folders() -> [&'static str; 2] {
    [CACHE, PROPOSALS]
}

/// Where the evidence of a recording that was not saved is kept, relative to the project
/// root: `.saffron/cache/<feature>/<scenario>.json` → `.saffron/artifacts/recording/<feature>/<scenario>`.
pub fn recording_evidence(recording: &Path) -> PathBuf {
    let relative = recording.strip_prefix(CACHE).unwrap_or(recording);
    Path::new(ARTIFACTS).join("recording").join(relative.with_extension(""))
}

/// Glob patterns for the store files the index reads, in any folder: what an editor watches.
pub fn indexed_globs() -> [String; 2] {
    indexed_folders().map(|folder| format!("**/{folder}/**/*.json"))
}

fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension == "json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_agree_with_each_other() {
        assert_eq!(Path::new(REPORTS).join(LATEST_REPORT_FILE), Path::new(LATEST_REPORT));
        assert_eq!(IGNORED.map(|line| line.trim_end_matches('/')), [REPORTS, ARTIFACTS, LOCK]);
        for folder in [CACHE, PROPOSALS, HANDLERS, REPORTS, ARTIFACTS, LOCK] {
            assert_eq!(Path::new(folder).parent(), Some(Path::new(DIR)), "{folder}");
        }
    }

    #[test]
    fn paths_are_told_apart_by_folder_and_extension() {
        assert_eq!(recording("shop", "buy"), Path::new(".saffron/cache/shop/buy.json"));
        assert_eq!(proposal("shop", "buy"), Path::new(".saffron/proposals/shop/buy.json"));
        assert!(is_recording(&recording("shop", "buy")) && !is_proposal(&recording("shop", "buy")));
        assert!(is_proposal(&proposal("shop", "buy")) && !is_recording(&proposal("shop", "buy")));
        assert!(!is_recording(Path::new(".saffron/cache/shop/buy.txt")));
        assert_eq!(handler("cookie-consent"), Path::new(".saffron/handlers/cookie-consent.json"));
        assert!(is_handler(&handler("cookie-consent")) && !is_recording(&handler("cookie-consent")));
        let proposed = handler_proposal("cookie-consent");
        assert!(is_handler_proposal(&proposed) && !is_handler(&proposed) && !is_proposal(&proposed));
        assert!(!is_recording(Path::new("features/.saffron/cache/a.json")), "relative to the root only");
        assert_eq!(recording_evidence(&recording("shop", "buy")), Path::new(".saffron/artifacts/recording/shop/buy"));
    }
}
