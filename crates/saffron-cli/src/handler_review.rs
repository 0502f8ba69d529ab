//! Proposed handlers under review: a repair that met an interruption files a handler in
//! `.saffron/handlers/proposed/` instead of changing the scenario. `saffron proposals` lists
//! them, `diff` shows one, `accept` moves it up into `.saffron/handlers/` (replay uses it from
//! then on), `reject` deletes it. The commands take the proposed handler by its path or as
//! `handlers/<name>`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use saffron_index::review::handlers::{self, accepted_path, describe};
use saffron_recording::Store;

use crate::terminal::escape_controls;

/// The proposed handler a command line names, relative to the project root, if it names one.
pub fn named(id: &str) -> Option<PathBuf> {
    handlers::named(id)
}

fn refuse(verb: &str, why: &str) -> ExitCode {
    eprintln!("saffron {verb}: failed: {}", escape_controls(why));
    eprintln!("  hint: `saffron proposals` lists the proposed handlers");
    ExitCode::from(2)
}

/// `saffron diff handlers/<name>`.
pub fn diff(root: &Path, relative: &Path) -> Result<ExitCode> {
    let store = Store::open(root).context("cannot open the store")?;
    let handler = match store.read_handler(&root.join(relative)) {
        Ok(handler) => handler,
        Err(error) => return Ok(refuse("diff", &error.to_string())),
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
    let store = Store::open(root).context("cannot open the store")?;
    let (handler, target) = match handlers::accept(&store, relative) {
        Ok(accepted) => accepted,
        Err(error) => return Ok(refuse("accept", &error.to_string())),
    };
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
    if let Err(error) = handlers::reject(&store, relative) {
        return Ok(refuse("reject", &error.to_string()));
    }
    println!("{}", escape_controls(&format!("Rejected {}; no handler was added.", relative.display())));
    Ok(ExitCode::SUCCESS)
}

/// The lines `saffron proposals` adds for the proposed handlers, and how many there are.
pub fn listing(root: &Path) -> (Vec<String>, usize) {
    let Ok(store) = Store::open(root) else { return (Vec::new(), 0) };
    let scan = handlers::proposals(&store);
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
