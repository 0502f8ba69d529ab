//! `saffron messages`: Cucumber Messages NDJSON, the format `@cucumber/gherkin` prints.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use saffron_syntax::{Project, messages};

use crate::problem;
use crate::walk;

#[derive(Args)]
pub struct MessagesArgs {
    /// Feature files (`.feature` or `.saffron`); StepSets resolve across all of them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub fn run(args: MessagesArgs) -> Result<ExitCode> {
    let files = walk::feature_files(&args.files)?;
    let (texts, problems) = walk::read_all(files);
    for problem in &problems {
        problem.write_text(&mut std::io::stderr())?;
    }
    let project = Project::parse_all(texts);
    let registry = &project.step_sets;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for file in &project.files {
        let uri = file.path.display().to_string();
        for envelope in messages::envelopes(&uri, &file.text, &file.parsed, &registry) {
            serde_json::to_writer(&mut out, &envelope)?;
            writeln!(out)?;
        }
    }
    Ok(problem::exit_code(&problems))
}
