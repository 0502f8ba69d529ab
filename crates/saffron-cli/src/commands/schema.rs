//! `saffron schema NAME [--out FILE]`: the JSON Schema of a recording, a proposal or a handler,
//! from the binary itself, for an editor's JSON validation in a project without this repository.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use saffron_recording::{SchemaKind, write_atomic};

use crate::terminal::err;

#[derive(Args)]
pub struct SchemaArgs {
    /// Which schema: recording, proposal or handler.
    #[arg(value_parser = |name: &str| name.parse::<SchemaKind>())]
    kind: SchemaKind,
    /// Write it to FILE (replaced whole) instead of printing it.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub fn run(args: SchemaArgs) -> Result<ExitCode> {
    let json = args.kind.json();
    match args.out {
        Some(path) => {
            write_atomic(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
            err!("wrote the {} schema to {}", args.kind.name(), path.display());
        }
        None => {
            use std::io::Write as _;
            std::io::stdout().write_all(&json).context("cannot write to stdout")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
