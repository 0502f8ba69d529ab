//! Finding the project a command works on and loading its index.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use saffron_index::{IndexHost, LoadProblem, Snapshot};
use saffron_recording::layout;
use saffron_runner::config::{Config, ConfigError};
use saffron_syntax::{Location, NotUtf8};

use crate::problem::Problem;

/// The project root: the nearest folder, from the current one upwards, that holds
/// `saffron.toml` or `.saffron/`; the current folder when none does.
pub fn find_root() -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    Ok(cwd
        .ancestors()
        .find(|dir| dir.join("saffron.toml").is_file() || dir.join(layout::DIR).is_dir())
        .map_or_else(|| cwd.clone(), Path::to_path_buf))
}

/// Loads the project's index, and the files it could not use as problems (the caller reports
/// them: a project with an unreadable recording is not clean).
pub fn load_index(root: &Path) -> (Snapshot, Vec<Problem>) {
    let (host, report) = IndexHost::load(root);
    let problems = report.problems.iter().map(problem_of).collect();
    (host.snapshot(), problems)
}

fn problem_of(problem: &LoadProblem) -> Problem {
    let location = Location { line: problem.line as u32, column: problem.column as u32 };
    let code = if problem.unreadable { "unreadable-file" } else { "invalid-file" };
    let hint = if problem.unreadable {
        "check that the file exists and that you may read it"
    } else if layout::in_cache(&problem.path) {
        "an unreadable recording is red and never recorded over: fix it, restore it from version control, or \
         delete it so that its scenario is recorded again"
    } else if layout::in_proposals(&problem.path) {
        "fix the proposal, or delete it (saffron reject) and run its scenario again"
    } else {
        NotUtf8::HINT
    };
    Problem {
        unreadable: problem.unreadable,
        ..Problem::error(&problem.path, location, code, problem.message.clone()).with_hint(hint)
    }
}

/// A warning for each recording that matches no scenario (a misnamed or moved file, or the
/// recording of a renamed scenario), naming the scenario it most likely belongs to.
pub fn orphan_problems(snapshot: &Snapshot) -> Vec<Problem> {
    snapshot
        .orphan_recordings()
        .into_iter()
        .map(|orphan| {
            let problem = Problem::warning(
                &orphan.path,
                Location { line: 1, column: 1 },
                "orphan-recording",
                "this recording matches no scenario: no scenario's recording is at this path, so it is never replayed",
            );
            let Some(closest) = orphan.closest else {
                return problem.with_hint("no scenario resembles it: delete it if its scenario is gone");
            };
            let why = if closest.named_in_file {
                "its feature and scenario fields name it".to_string()
            } else {
                format!(
                    "{} of {} steps alike, name {:.0}% alike",
                    closest.common_steps,
                    closest.steps,
                    closest.name_similarity * 100.0
                )
            };
            let what_to_do = if closest.recorded {
                format!(
                    "that scenario already has its recording ({}): delete this one if it is left over",
                    closest.recording_path.display()
                )
            } else {
                format!("if this is its recording, rename the file to {}", closest.recording_path.display())
            };
            problem.with_hint(format!(
                "closest scenario: \"{}\" ({}:{}; {why}); {what_to_do}",
                closest.name,
                closest.file.display(),
                closest.line
            ))
        })
        .collect()
}

/// What is wrong with the project's `saffron.toml`: a file that is not valid TOML (an error),
/// keys that nothing reads (warnings, with the closest known key). None when there is no file.
pub fn config_problems(root: &Path) -> Vec<Problem> {
    let path = root.join("saffron.toml");
    let shown = std::env::current_dir().ok().and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    let shown = shown.unwrap_or_else(|| path.clone());
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(error) => return vec![Problem::unreadable(&shown, &error)],
    };
    let at = |line: usize, column: usize| Location { line: line as u32, column: column as u32 };
    match Config::parse_checked(&text) {
        Ok((_, unknown)) => unknown
            .iter()
            .map(|key| {
                Problem::warning(&shown, at(key.line, key.column), "unknown-config-key", key.message())
                    .with_hint(key.hint())
            })
            .collect(),
        Err(error) => vec![
            Problem::error(&shown, at(error.line, error.column), "invalid-config", error.message)
                .with_hint(ConfigError::HINT),
        ],
    }
}

/// `path` (a file or folder on the command line) relative to the project root, when it is in
/// the store's recordings or proposals.
pub fn store_relative(root: &Path, path: &Path) -> Option<PathBuf> {
    let relative = relative_to_root(root, path)?;
    (layout::in_cache(&relative) || layout::in_proposals(&relative) || layout::is_handler(&relative))
        .then_some(relative)
}

/// Whether a folder on the command line covers the project's handlers (it holds the project
/// root, `.saffron`, or the handlers' folder).
pub fn covers_handlers(root: &Path, folder: &Path) -> bool {
    relative_to_root(root, folder).is_some_and(|relative| Path::new(layout::HANDLERS).starts_with(relative))
}

/// The store folders (recordings, proposals) that a folder on the command line covers: both
/// when it holds the project root, the part of one when it is inside it.
pub fn store_folders_under(root: &Path, folder: &Path) -> Vec<PathBuf> {
    let Some(relative) = relative_to_root(root, folder) else { return Vec::new() };
    layout::indexed_folders()
        .iter()
        .map(PathBuf::from)
        .filter_map(|store| {
            if store.starts_with(&relative) {
                Some(store)
            } else if relative.starts_with(&store) {
                Some(relative.clone())
            } else {
                None
            }
        })
        .collect()
}

fn relative_to_root(root: &Path, path: &Path) -> Option<PathBuf> {
    let path = std::env::current_dir().ok()?.join(path).canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    path.strip_prefix(&root).ok().map(Path::to_path_buf)
}

/// A problem found by the index (its file relative to the project root) with its file as the
/// command line names files: relative to the current folder.
pub fn shown_from_root(root: &Path, problem: Problem) -> Problem {
    let absolute = root.join(&problem.file);
    let shown = std::env::current_dir().ok().and_then(|cwd| absolute.strip_prefix(cwd).ok().map(Path::to_path_buf));
    match shown {
        Some(shown) => Problem { file: shown.display().to_string(), ..problem },
        None => problem,
    }
}

/// Prints `problems` on stderr, in the text form every command uses.
pub fn report(problems: &[Problem]) -> Result<()> {
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    for problem in problems {
        // A closed stderr (`saffron run 2>&1 | head -1`) does not stop the command.
        if problem.write_text(&mut err).is_err() {
            break;
        }
    }
    Ok(())
}

/// Turns command-line paths into paths relative to the project root, for filtering.
pub fn relative_filters(root: &Path, paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    paths
        .iter()
        .map(|path| {
            let absolute = cwd.join(path);
            if !absolute.exists() {
                anyhow::bail!("{}: no such file or directory", path.display());
            }
            let absolute = absolute.canonicalize().with_context(|| format!("cannot resolve {}", path.display()))?;
            let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
            Ok(absolute.strip_prefix(&root).map(Path::to_path_buf).unwrap_or(absolute))
        })
        .collect()
}

/// Whether a project-relative file is under one of the filters (all files when there are none).
pub fn selected(file: &Path, filters: &[PathBuf]) -> bool {
    filters.is_empty() || filters.iter().any(|filter| filter.as_os_str().is_empty() || file.starts_with(filter))
}
