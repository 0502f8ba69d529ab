//! `saffron check`: parse, expand and report, like a compiler would.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use saffron_recording::layout;
use saffron_syntax::{FileDiagnostic, Project};

use super::Format;
use crate::problem::{self, Problem};
use crate::project;
use crate::walk;

#[derive(Args)]
pub struct CheckArgs {
    /// Files or folders to check (default: the current folder).
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

fn from_diagnostic(d: &FileDiagnostic) -> Problem {
    let code = serde_json::to_value(d.diagnostic.code).ok().and_then(|code| code.as_str().map(str::to_string));
    Problem {
        file: d.file.display().to_string(),
        line: d.diagnostic.location.line,
        column: d.diagnostic.location.column,
        severity: d.diagnostic.severity.as_str(),
        code: code.unwrap_or_default(),
        message: d.diagnostic.message.clone(),
        hint: d.diagnostic.hint.clone(),
        unreadable: false,
    }
}

pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let paths = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths };
    let root = project::find_root()?;
    let (store_files, feature_paths) = split_store_files(&root, paths);
    let files = walk::feature_files(&feature_paths)?;
    let (texts, mut in_files) = walk::read_all(files);
    let project = Project::parse_all(texts);
    in_files.extend(project.diagnostics().iter().map(from_diagnostic));
    // Stable: each file's problems keep their order.
    in_files.sort_by(|a, b| a.file.cmp(&b.file));
    let mut problems = project::config_problems(&root);
    problems.extend(in_files);
    let store = check_store(&root, &store_files, &feature_paths)?;
    problems.extend(store.problems);
    let handlers = check_handlers(&root, &project, &store_files, &feature_paths);
    problems.extend(handlers.problems);

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &problems)?;
            writeln!(out)?;
        }
        Format::Text => {
            for problem in &problems {
                problem.write_text(&mut out)?;
            }
            let errors = problems.iter().filter(|problem| problem.is_error()).count();
            let steps: usize = project.files.iter().map(|f| f.parsed.document.steps().len()).sum();
            eprintln!(
                "checked {} file(s), {} step(s), {} StepSet(s), {} recording(s), {} proposal(s), {} handler(s): {} error(s)",
                project.files.len(),
                steps,
                project.step_sets.len(),
                store.recordings,
                store.proposals,
                handlers.count,
                errors
            );
        }
    }
    Ok(problem::exit_code(&problems))
}

/// Recording and proposal files named on the command line go to the store's check, not to the
/// Gherkin parser; the other paths are checked as feature files (and cover the store files
/// under them).
fn split_store_files(root: &Path, paths: Vec<PathBuf>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    paths.into_iter().partition(|path| {
        path.is_file()
            && path.extension().is_some_and(|extension| extension == "json")
            && project::store_relative(root, path).is_some()
    })
}

struct StoreCheck {
    problems: Vec<Problem>,
    recordings: usize,
    proposals: usize,
}

/// Validates every recording and proposal under the paths (the whole store when a path holds
/// the project root), as `saffron run` would read them.
fn check_store(root: &Path, store_files: &[PathBuf], folders: &[PathBuf]) -> Result<StoreCheck> {
    let mut covered: Vec<PathBuf> = store_files.iter().filter_map(|file| project::store_relative(root, file)).collect();
    for folder in folders.iter().filter(|path| path.is_dir()) {
        covered.extend(project::store_folders_under(root, folder));
    }
    let mut check = StoreCheck { problems: Vec::new(), recordings: 0, proposals: 0 };
    if covered.is_empty() {
        return Ok(check);
    }
    let (snapshot, problems) = project::load_index(root);
    let in_store = |path: &Path| layout::in_cache(path) || layout::in_proposals(path);
    let wanted = |path: &Path| in_store(path) && covered.iter().any(|cover| path.starts_with(cover));
    let orphans = project::orphan_problems(&snapshot);
    for problem in problems {
        if wanted(Path::new(&problem.file)) {
            if layout::in_cache(Path::new(&problem.file)) {
                check.recordings += 1;
            } else {
                check.proposals += 1;
            }
            check.problems.push(project::shown_from_root(root, problem));
        }
    }
    let orphans = orphans.into_iter().filter(|problem| wanted(Path::new(&problem.file)));
    check.problems.extend(orphans.map(|problem| project::shown_from_root(root, problem)));
    let files = snapshot
        .recordings()
        .map(|data| data.path.to_path_buf())
        .chain(snapshot.proposals().map(|data| data.path.to_path_buf()))
        .filter(|path| wanted(path));
    let secrets = secret_problems(root, &snapshot, files);
    check.problems.extend(secrets.into_iter().map(|problem| project::shown_from_root(root, problem)));
    check.recordings += snapshot.recordings().filter(|data| wanted(&data.path)).count();
    check.proposals += snapshot.proposals().filter(|data| wanted(&data.path)).count();
    Ok(check)
}

struct HandlerCheck {
    problems: Vec<Problem>,
    count: usize,
}

/// Validates the interruption handlers (`.saffron/handlers/`) when the paths cover them: each
/// reads as a handler, a StepSet it clears with is defined, and it holds no secret's value.
fn check_handlers(root: &Path, project: &Project, store_files: &[PathBuf], folders: &[PathBuf]) -> HandlerCheck {
    let mut check = HandlerCheck { problems: Vec::new(), count: 0 };
    let named: Vec<PathBuf> = store_files
        .iter()
        .filter_map(|file| project::store_relative(root, file))
        .filter(|p| layout::is_handler(p))
        .collect();
    let whole = folders.iter().filter(|path| path.is_dir()).any(|folder| project::covers_handlers(root, folder));
    if named.is_empty() && !whole {
        return check;
    }
    let Ok(store) = saffron_recording::Store::open(root) else { return check };
    let wanted = |path: &Path| {
        let relative = path.strip_prefix(root).unwrap_or(path);
        whole || named.iter().any(|file| file == relative)
    };
    let scan = store.load_handlers();
    for (path, error) in scan.unreadable.iter().filter(|(path, _)| wanted(path)) {
        check.count += 1;
        let relative = path.strip_prefix(root).unwrap_or(path);
        let (line, column) = match error {
            saffron_recording::StoreError::Invalid { source, .. } => source.location().unwrap_or((1, 1)),
            _ => (1, 1),
        };
        let location = saffron_syntax::Location { line: line as u32, column: column as u32 };
        let message = match error {
            saffron_recording::StoreError::Invalid { source, .. } => source.to_string(),
            other => other.to_string(),
        };
        let problem = Problem::error(relative, location, "invalid-handler", message)
            .with_hint("the handler format is in docs/handlers.md");
        check.problems.push(project::shown_from_root(root, problem));
    }
    let options = saffron_runner::session::options_with_env(root, Vec::new());
    let masker = saffron_runner::masker_for(&[], &options);
    for (path, handler) in scan.found.iter().filter(|(path, _)| wanted(path)) {
        check.count += 1;
        let relative = path.strip_prefix(root).unwrap_or(path);
        let Ok(text) = store.read_text(path) else { continue };
        if let Some(set) = &handler.step_set
            && project.step_sets.get(set).is_none()
        {
            let at = text.find("\"stepSet\"").unwrap_or(0);
            let (line, column) = saffron_recording::line_and_column(&text, at);
            let location = saffron_syntax::Location { line: line as u32, column: column as u32 };
            let hint = match project.step_sets.closest(set) {
                Some(closest) => format!("did you mean \"{closest}\"?"),
                None => "define the StepSet in a .saffron file, or write the handler's actions".to_owned(),
            };
            let problem =
                Problem::error(relative, location, "unknown-step-set", format!("no StepSet is named \"{set}\""))
                    .with_hint(hint);
            check.problems.push(project::shown_from_root(root, problem));
        }
        if let Some((range, name)) = masker.find(&text) {
            let (line, column) = saffron_recording::line_and_column(&text, range.start);
            let location = saffron_syntax::Location { line: line as u32, column: column as u32 };
            let problem = Problem::error(
                relative,
                location,
                "secret-in-file",
                format!("this handler holds the value of the secret {{env:{name}}}"),
            )
            .with_hint(format!("write {{env:{name}}} where the value is (replay fills it in)"));
            check.problems.push(project::shown_from_root(root, problem));
        }
    }
    check
}

/// An error for each recording or proposal that holds the value of a secret the project
/// declares (its `.env`, or a `{env:NAME}` its recordings use), in any spelling the masker
/// knows: these files are committed, and a secret in one is in the repository's history.
fn secret_problems(
    root: &Path,
    snapshot: &saffron_index::Snapshot,
    files: impl Iterator<Item = PathBuf>,
) -> Vec<Problem> {
    let options = saffron_runner::session::options_with_env(root, Vec::new());
    let executions = saffron_runner::plan(snapshot, &saffron_runner::Selection::default());
    let masker = saffron_runner::masker_for(&executions, &options);
    if masker.is_empty() {
        return Vec::new();
    }
    let Ok(store) = saffron_recording::Store::open(root) else { return Vec::new() };
    let mut problems = Vec::new();
    for path in files {
        let Ok(text) = store.read_text(&root.join(&path)) else { continue };
        let Some((range, name)) = masker.find(&text) else { continue };
        let (line, column) = saffron_recording::line_and_column(&text, range.start);
        let what = if layout::in_proposals(&path) { "proposal" } else { "recording" };
        let hint = if layout::in_proposals(&path) {
            format!(
                "reject it (saffron reject) and run its scenario again; where the page shows the secret, the recorder keeps {{env:{name}}}"
            )
        } else {
            format!(
                "write {{env:{name}}} where the value is (replay fills it in), or delete the recording so that its scenario \
                 is recorded again; if it was committed, the value is in the history: change the secret"
            )
        };
        let location = saffron_syntax::Location { line: line as u32, column: column as u32 };
        problems.push(
            Problem::error(
                &path,
                location,
                "secret-in-file",
                format!("this {what} holds the value of the secret {{env:{name}}}"),
            )
            .with_hint(hint),
        );
    }
    problems
}
