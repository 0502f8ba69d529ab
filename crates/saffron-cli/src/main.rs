//! `saffron`: every subcommand is a thin client of the library crates.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod commands;
mod example;
mod handler_review;
mod problem;
mod project;
mod pull_request;
mod review;
mod terminal;
mod walk;

/// The index is hundreds of thousands of small allocations (entries, persistent-map nodes,
/// syntax trees) made at load and freed by every edit; mimalloc builds it in less time than
/// the system allocator. Without transparent huge pages (`no_thp`): asking for them made a
/// load stall now and then while the kernel compacted memory.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "saffron", version, about = "Gherkin browser tests with no step glue")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `saffron lsp`'s options. Language clients that start a server over stdio pass `--stdio`
/// (vscode-languageclient with `TransportKind.stdio`, among others); it is the only transport,
/// so it is accepted and changes nothing.
#[derive(clap::Args)]
struct LspArgs {
    /// Serve over stdin and stdout (the default and only transport).
    #[arg(long)]
    stdio: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Parse every .feature and .saffron file, expand StepSets and report problems.
    Check(commands::check::CheckArgs),
    /// Print Cucumber Messages (NDJSON) for feature files, to diff against Cucumber's parser.
    Messages(commands::messages::MessagesArgs),
    /// List the step vocabulary: written steps joined with recorded ones, and their status.
    Steps(commands::steps::StepsArgs),
    /// Show each scenario's recording state (fresh, stale, unrecorded) and pending proposals.
    Status(commands::status::StatusArgs),
    /// List the proposals waiting for review, with whether each may be accepted (stale, unverified).
    Proposals(commands::proposals::ProposalsArgs),
    /// Show one proposal: its action diff, adaptations, feature edits and staleness.
    Diff(commands::diff::DiffArgs),
    /// Accept a proposal: re-check its bindings under the store lock and write its recording.
    Accept(commands::accept::AcceptArgs),
    /// Reject a proposal: remove it, leaving the committed recording as it is.
    Reject(commands::reject::RejectArgs),
    /// Draft a feature file from prose in the project's vocabulary, each step priced (free or needs recording).
    Author(commands::author::AuthorArgs),
    /// Write a recording skeleton for one scenario (FILE:LINE): its steps and digest, no actions, to fill in by hand.
    Skeleton(commands::skeleton::SkeletonArgs),
    /// Print a page as the recording agent reads it (roles and names as Chromium computes them), and with --targets the target the recorder would write for each element.
    Snapshot(commands::snapshot::SnapshotArgs),
    /// Serve the language server over stdio (for editors).
    Lsp(LspArgs),
    /// Replay recorded scenarios in headless Chromium and give each a verdict.
    Run(commands::run::RunArgs),
    /// Merge the reports of `saffron run --shard i/n` runs into one set of reports.
    Report(commands::report::ReportArgs),
    /// Start the demo shop and replay the example project against it.
    Demo(commands::run::DemoArgs),
    /// Serve the MCP server over stdio (for AI assistants).
    Mcp,
    /// Check what a run needs (browser, config, base URL, agent, scenarios, editors), one line each.
    Doctor(commands::doctor::DoctorArgs),
    /// Write the pending proposals, the last run's report and its evidence into one heal bundle (for CI).
    Export(commands::export::ExportArgs),
    /// Import heal bundles from CI: check them whole, then file each proposal that fits this checkout.
    Import(commands::import::ImportArgs),
    /// Each scenario's recent runs: verdicts as a strip, flips, chronic trouble, flakiness, duration trend.
    History(commands::history::HistoryArgs),
    /// Open the trace viewer for a trace file, or for a scenario of the last run (FEATURE:LINE): its actions, pictures, network, console and agent turns.
    Trace(commands::trace::TraceArgs),
    /// List the branch's CI runs (through gh), with the proposals from each still pending here.
    Runs(commands::runs::RunsArgs),
    /// Print the JSON Schema of a recording, a proposal or a handler (for an editor's JSON validation).
    Schema(commands::schema::SchemaArgs),
    /// The HTTP services of `@api` scenarios: `saffron api pin` fetches a service's OpenAPI contract into the project.
    Api(commands::api::ApiArgs),
    /// Set a project up for Saffron: saffron.toml, .gitignore, the agent skill, AGENTS.md, MCP registration.
    Init(commands::init::InitArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => commands::check::run(args),
        Command::Messages(args) => commands::messages::run(args),
        Command::Steps(args) => commands::steps::run(args),
        Command::Status(args) => commands::status::run(args),
        Command::Proposals(args) => commands::proposals::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Accept(args) => commands::accept::run(args),
        Command::Reject(args) => commands::reject::run(args),
        Command::Skeleton(args) => commands::skeleton::run(args),
        Command::Snapshot(args) => commands::snapshot::run(args),
        Command::Author(args) => commands::author::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Demo(args) => commands::run::demo(args),
        // The protocol's exit code: 0 after `shutdown`, 1 when the client exits without it.
        Command::Lsp(_) => saffron_lsp::run_stdio()
            .map(|shut_down| if shut_down { ExitCode::SUCCESS } else { ExitCode::from(1) })
            .map_err(anyhow::Error::from),
        Command::Mcp => commands::mcp::run(),
        Command::Init(args) => commands::init::run(args),
        Command::Api(args) => commands::api::run(args),
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Schema(args) => commands::schema::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::Import(args) => commands::import::run(args),
        Command::Runs(args) => commands::runs::run(args),
        Command::History(args) => commands::history::run(args),
        Command::Trace(args) => commands::trace::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "saffron: {}", terminal::escape_controls(&format!("{error:#}")));
            ExitCode::from(2)
        }
    }
}
