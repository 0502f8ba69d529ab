//! `saffron mcp`: the MCP server over stdio, for the project the current folder is in.

use std::process::ExitCode;

use anyhow::Result;

use crate::project;

pub fn run() -> Result<ExitCode> {
    let root = project::find_root()?;
    saffron_mcp::run_stdio(root)?;
    Ok(ExitCode::SUCCESS)
}
