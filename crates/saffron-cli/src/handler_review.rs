//! Proposed handlers under review: a repair that met an interruption files a handler in
//! `.saffron/handlers/proposed/` instead of changing the scenario. `saffron proposals` lists
//! them, `diff` shows one, `accept` moves it up into `.saffron/handlers/` (replay uses it from
//! then on), `reject` deletes it. The commands take the proposed handler by its path or as
//! `handlers/<name>`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use saffron_recording::{Handler, Resume, Store, layout};

use crate::terminal::escape_controls;

/// The proposed handler a command line names, relative to the project root, if it names one.
pub fn named(id: &str) -> Option<PathBuf> {
    let id = id.trim_start_matches("./").replace('\\', "/");
    if let Some(name) = id.strip_prefix("handlers/").filter(|name| !name.contains('/')) {
        return Some(layout::handler_proposal(name.trim_end_matches(".json")));
    }
    let path = PathBuf::from(&id);
    layout::is_handler_proposal(&path).then_some(path)
}

/// A proposed handler in words, one line each.
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

fn accepted_path(proposed: &Path) -> PathBuf {
    Path::new(layout::HANDLERS).join(proposed.file_name().unwrap_or_default())
}

fn read(root: &Path, relative: &Path) -> Result<Handler, ExitCode> {
    let store = Store::open(root).map_err(|error| refuse("read", &error.to_string()))?;
    store.read_handler(&root.join(relative)).map_err(|error| refuse("read", &error.to_string()))
}

fn refuse(verb: &str, why: &str) -> ExitCode {
    eprintln!("saffron {verb}: failed: {}", escape_controls(why));
    eprintln!("  hint: `saffron proposals` lists the proposed handlers");
    ExitCode::from(2)
}

/// `saffron diff handlers/<name>`.
pub fn diff(root: &Path, relative: &Path) -> Result<ExitCode> {
    let handler = match read(root, relative) {
        Ok(handler) => handler,
        Err(code) => return Ok(code),
    };
    let mut lines = vec![format!(
        "Proposed handler {} \"{}\" (becomes {} when accepted)",
        relative.display(),
        handler.name,
        accepted_path(relative).display()
    )];
    lines.extend(describe(&handler).into_iter().map(|line| format!("  {line}")));
    if root.join(accepted_path(relative)).exists() {
        lines.push(format!("  it replaces the handler {} of the same name", accepted_path(relative).display()));
    }
    lines.push("Acceptable: a handler runs only when its detector shows; the scenarios are not changed.".to_owned());
    for line in lines {
        println!("{}", escape_controls(&line));
    }
    Ok(ExitCode::SUCCESS)
}

/// `saffron accept handlers/<name>`: written into `.saffron/handlers/` and the proposal removed,
/// under the store lock.
pub fn accept(root: &Path, relative: &Path) -> Result<ExitCode> {
    let handler = match read(root, relative) {
        Ok(handler) => handler,
        Err(code) => return Ok(code),
    };
    let store = Store::open(root).context("cannot open the store")?;
    let lock = store.lock().context("cannot lock the store")?;
    let target = accepted_path(relative);
    lock.write_handler(&root.join(&target), &handler).context("cannot write the handler")?;
    lock.remove(&root.join(relative)).context("cannot remove the proposal")?;
    let line = format!(
        "Accepted {}: the handler \"{}\" is {} from now on; replay clears this interruption wherever it shows.",
        relative.display(),
        handler.name,
        target.display()
    );
    println!("{}", escape_controls(&line));
    Ok(ExitCode::SUCCESS)
}

/// `saffron reject handlers/<name>`.
pub fn reject(root: &Path, relative: &Path) -> Result<ExitCode> {
    let store = Store::open(root).context("cannot open the store")?;
    let lock = store.lock().context("cannot lock the store")?;
    if !root.join(relative).exists() {
        return Ok(refuse("reject", &format!("no proposed handler at {}", relative.display())));
    }
    lock.remove(&root.join(relative)).context("cannot remove the proposal")?;
    println!("{}", escape_controls(&format!("Rejected {}; no handler was added.", relative.display())));
    Ok(ExitCode::SUCCESS)
}

/// The lines `saffron proposals` adds for the proposed handlers, and how many there are.
pub fn listing(root: &Path) -> (Vec<String>, usize) {
    let Ok(store) = Store::open(root) else { return (Vec::new(), 0) };
    let scan = store.load_handler_proposals();
    let mut lines = Vec::new();
    for (path, handler) in &scan.found {
        let relative = path.strip_prefix(root).unwrap_or(path);
        lines.push(format!("{}  handler \"{}\"", relative.display(), handler.name));
        lines.extend(describe(handler).into_iter().map(|line| format!("    {line}")));
    }
    for (path, error) in &scan.unreadable {
        let relative = path.strip_prefix(root).unwrap_or(path);
        lines.push(format!("{}  unreadable: {error}", relative.display()));
    }
    (lines, scan.found.len() + scan.unreadable.len())
}
