//! Proposed handlers under review: a repair that met an interruption files a handler in
//! `.saffron/handlers/proposed/` instead of changing the scenario. Accepting one moves it up
//! into `.saffron/handlers/` (replay uses it from then on), rejecting it deletes it. The CLI's
//! `saffron accept handlers/<name>` and the MCP `accept` tool both come here.
//!
//! There is no staleness to check: a handler is bound to no scenario, and it only ever runs
//! when its detector shows, so accepting one never changes a run where the interruption does
//! not appear.

use std::path::{Path, PathBuf};

use saffron_recording::{Handler, Resume, Scan, Store, layout};

use super::ReviewError;

/// The proposed handler `id` names, relative to the project root: `handlers/<name>` or its
/// path under `.saffron/handlers/proposed/`.
pub fn named(id: &str) -> Option<PathBuf> {
    let id = id.trim_start_matches("./").replace('\\', "/");
    if let Some(name) = id.strip_prefix("handlers/").filter(|name| !name.contains('/')) {
        return Some(layout::handler_proposal(name.trim_end_matches(".json")));
    }
    let path = PathBuf::from(&id);
    layout::is_handler_proposal(&path).then_some(path)
}

/// Where a proposed handler goes when it is accepted.
pub fn accepted_path(proposed: &Path) -> PathBuf {
    Path::new(layout::HANDLERS).join(proposed.file_name().unwrap_or_default())
}

/// A handler in words, one line each: what detects it, what clears it, where the run goes on.
pub fn describe(handler: &Handler) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(target) = &handler.detect.target {
        lines.push(format!("detect: {target} is visible"));
    }
    if let Some(pattern) = &handler.detect.url_regex {
        lines.push(format!("detect: the address matches /{pattern}/"));
    }
    match &handler.step_set {
        Some(set) => lines.push(format!("clear: the StepSet \"{set}\"")),
        None => lines.extend(handler.actions.iter().map(|action| format!("clear: {action}"))),
    }
    lines.push(match handler.resume {
        Resume::Here => "then: carry on where the handler leaves the page".to_owned(),
        Resume::ReturnToPage => "then: go back to the page the run was on, and take the step up again".to_owned(),
    });
    lines
}

/// The proposed handlers of the project, and the files that do not validate.
pub fn proposals(store: &Store) -> Scan<Handler> {
    store.load_handler_proposals()
}

fn io_error(error: saffron_recording::StoreError) -> ReviewError {
    ReviewError::Io { message: error.to_string() }
}

fn read(store: &Store, proposed: &Path) -> Result<Handler, ReviewError> {
    if !store.root().join(proposed).is_file() {
        return Err(ReviewError::NotFound { path: proposed.to_path_buf() });
    }
    store
        .read_handler(&store.root().join(proposed))
        .map_err(|error| ReviewError::Unreadable { path: proposed.to_path_buf(), reason: error.to_string() })
}

/// Accepts the proposed handler at `proposed` (relative to the root): written into
/// `.saffron/handlers/` (validated, atomically) and the proposal removed, under the store lock.
/// Returns the handler and where it now is.
pub fn accept(store: &Store, proposed: &Path) -> Result<(Handler, PathBuf), ReviewError> {
    let lock = store.lock().map_err(io_error)?;
    let handler = read(store, proposed)?;
    let target = accepted_path(proposed);
    lock.write_handler(&store.root().join(&target), &handler).map_err(io_error)?;
    lock.remove(&store.root().join(proposed)).map_err(io_error)?;
    Ok((handler, target))
}

/// Rejects the proposed handler at `proposed`: the file is removed, readable or not. Returns
/// the handler's name when it was readable.
pub fn reject(store: &Store, proposed: &Path) -> Result<Option<String>, ReviewError> {
    let lock = store.lock().map_err(io_error)?;
    let name = match read(store, proposed) {
        Ok(handler) => Some(handler.name),
        Err(ReviewError::Unreadable { .. }) => None,
        Err(error) => return Err(error),
    };
    lock.remove(&store.root().join(proposed)).map_err(io_error)?;
    Ok(name)
}
