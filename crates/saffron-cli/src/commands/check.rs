//! `saffron check`: parse, expand and report, like a compiler would.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use saffron_syntax::{FileDiagnostic, Project};

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

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
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
    let files = walk::feature_files(&paths)?;
    let (texts, mut in_files) = walk::read_all(files);
    let project = Project::parse_all(texts);
    in_files.extend(project.diagnostics().iter().map(from_diagnostic));
    // Stable: each file's problems keep their order.
    in_files.sort_by(|a, b| a.file.cmp(&b.file));
    let mut problems = project::config_problems(&project::find_root()?);
    problems.extend(in_files);

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
                "checked {} file(s), {} step(s), {} StepSet(s): {} error(s)",
                project.files.len(),
                steps,
                project.step_sets.len(),
                errors
            );
        }
    }
    Ok(problem::exit_code(&problems))
}
