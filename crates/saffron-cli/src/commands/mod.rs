pub mod accept;
pub mod api;
pub mod author;
pub mod check;
pub mod diff;
pub mod doctor;
pub mod export;
pub mod history;
pub mod import;
pub mod init;
pub mod mcp;
pub mod messages;
pub mod proposals;
pub mod reject;
pub mod renames;
pub mod report;
pub mod run;
pub mod runs;
pub mod schema;
pub mod skeleton;
pub mod snapshot;
pub mod status;
pub mod steps;
pub mod trace;

/// `--format` of the commands that print either for people or for programs.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}
