//! `saffron mcp`: Saffron for AI coding assistants over the Model Context Protocol.
//!
//! Assistants cannot see completion popups, so they get the vocabulary, the checks and the
//! review queue as tools: `vocabulary`, `find_steps`, `check_feature`, `list_scenarios`,
//! `status`, `list_proposals`, `show_proposal`, and `accept` / `reject` when the project opts
//! in. Feature files, recordings and proposals are resources; `draft_feature` is a prompt.
//!
//! This is the only crate that knows MCP types (rmcp): the tools are plain functions over the
//! index ([`tools`]), and `server.rs` translates.
//!
//! [`external`] serves the recording agent's tool gateway over streamable HTTP to an external
//! agent program ([`ExternalDriver`]).

mod config;
pub mod external;
mod project;
mod prompt;
mod resources;
mod server;
pub mod tools;

pub use config::McpConfig;
pub use external::{ExternalDriver, client};
pub use project::{Project, Refresh};
pub use server::{SaffronServer, serve_stdio};

/// Serves the project at `root` on stdin/stdout until the client closes the connection.
/// Requests are answered on one thread: each is a few milliseconds of index work, and the
/// project's lock would serialise them anyway.
pub fn run_stdio(root: std::path::PathBuf) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve_stdio(root))
}
