//! `saffron reject ID`: remove a proposal, readable or not; the committed recording is left as
//! it is.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use saffron_index::review;
use saffron_recording::Store;

use crate::project;
use crate::review::{fail, resolve};
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct RejectArgs {
    /// The proposal: its path (.saffron/proposals/<feature>/<scenario>.json) or <feature>/<scenario>;
    /// a proposed handler: its path (.saffron/handlers/proposed/<name>.json) or handlers/<name>.
    id: String,
}

pub fn run(args: RejectArgs) -> Result<ExitCode> {
    if let Some(handler) = crate::handler_review::named(&args.id) {
        return crate::handler_review::reject(&crate::project::find_root()?, &handler);
    }
    let path = match resolve(&args.id) {
        Ok(path) => path,
        Err(error) => return Ok(fail("reject", &error)),
    };
    let root = project::find_root()?;
    let store = Store::open(&root).context("cannot open the store")?;
    match review::reject(&store, &path) {
        Ok(scenario) => {
            let about = scenario.map(|name| format!(" (\"{name}\")")).unwrap_or_default();
            let line =
                format!("Rejected {}{about}; the committed recording is unchanged.", review::display_path(&path));
            println!("{}", escape_controls(&line));
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => Ok(fail("reject", &error)),
    }
}
