//! `saffron check`: parse, expand and report, like a compiler would.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use saffron_syntax::{Project, Severity};
use serde::Serialize;

use crate::terminal::escape_controls;
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

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: String,
    line: u32,
    column: u32,
    severity: &'static str,
    code: &'a saffron_syntax::DiagnosticCode,
    message: &'a str,
    hint: Option<&'a str>,
}

pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let paths = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths };
    let files = walk::feature_files(&paths)?;
    let project = Project::parse_all(walk::read_all(files)?);
    let diagnostics = project.diagnostics();
    let has_errors = diagnostics.iter().any(|d| d.diagnostic.severity == Severity::Error);

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            let json: Vec<JsonDiagnostic> = diagnostics
                .iter()
                .map(|d| JsonDiagnostic {
                    file: d.file.display().to_string(),
                    line: d.diagnostic.location.line,
                    column: d.diagnostic.location.column,
                    severity: d.diagnostic.severity.as_str(),
                    code: &d.diagnostic.code,
                    message: &d.diagnostic.message,
                    hint: d.diagnostic.hint.as_deref(),
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &json)?;
            writeln!(out)?;
        }
        Format::Text => {
            for d in &diagnostics {
                let location = d.diagnostic.location;
                let line = format!(
                    "{}:{}:{}: {}: {}",
                    d.file.display(),
                    location.line,
                    location.column,
                    d.diagnostic.severity.as_str(),
                    d.diagnostic.message
                );
                writeln!(out, "{}", escape_controls(&line))?;
                if let Some(hint) = &d.diagnostic.hint {
                    writeln!(out, "  hint: {}", escape_controls(hint))?;
                }
            }
            let errors = diagnostics.iter().filter(|d| d.diagnostic.severity == Severity::Error).count();
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
    Ok(if has_errors { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
