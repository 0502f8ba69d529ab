//! `saffron steps`: the project's step vocabulary, and what each step costs.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use saffron_index::{Entry, Snapshot, StepStatus};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::problem;
use crate::project;
use crate::terminal::escape_controls;
use saffron_ide::{badge, snippet_body};

#[derive(Args)]
pub struct StepsArgs {
    /// Only steps written (or recorded for features) under these paths.
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// File a proposal for each scenario that writes a wording whose recordings perform the same
    /// actions as another wording of the step: the most written one is kept (no AI).
    #[arg(long)]
    propose_renames: bool,
    /// With --propose-renames: print what would be filed, write nothing.
    #[arg(long, requires = "propose_renames")]
    dry_run: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
    /// A VS Code snippets file: `<param>` and quoted values become tab stops.
    Snippets,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonStep {
    text: String,
    status: &'static str,
    /// Recorded as requests (an `@api` scenario's step).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    api: bool,
    uses: Vec<JsonUse>,
    count: usize,
    near_duplicates: Vec<String>,
    same_behaviour_as: Vec<String>,
}

#[derive(Serialize)]
struct JsonUse {
    file: String,
    line: u32,
}

/// Texts whose near-duplicates are searched together (on all cores) before they are printed.
const NEAR_DUPLICATE_BLOCK: usize = 4096;

fn selected_entries<'a>(snapshot: &'a Snapshot, filters: &[PathBuf]) -> Vec<&'a std::sync::Arc<Entry>> {
    snapshot
        .entries()
        .into_iter()
        .filter(|entry| {
            entry.uses.iter().any(|u| project::selected(&u.file, filters))
                || (entry.uses.is_empty()
                    && entry.recordings.iter().any(|r| {
                        snapshot.recording(&r.recording).is_some_and(|data| {
                            project::selected(std::path::Path::new(&data.recording.feature), filters)
                        })
                    }))
        })
        .collect()
}

pub fn run(args: StepsArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let filters = project::relative_filters(&root, &args.paths)?;
    let (snapshot, problems) = project::load_index(&root);
    project::report(&problems)?;
    if args.propose_renames {
        let json = match args.format {
            Format::Text => false,
            Format::Json => true,
            Format::Snippets => anyhow::bail!("--propose-renames prints text or json, not snippets"),
        };
        crate::commands::renames::propose(&root, &snapshot, &filters, args.dry_run, json)?;
        return Ok(problem::exit_code(&problems));
    }
    let entries = selected_entries(&snapshot, &filters);
    let texts: Vec<&str> = entries.iter().map(|entry| entry.text.as_ref()).collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            let mut steps: Vec<JsonStep> = Vec::with_capacity(entries.len());
            for (entries, texts) in entries.chunks(NEAR_DUPLICATE_BLOCK).zip(texts.chunks(NEAR_DUPLICATE_BLOCK)) {
                let near = snapshot.near_duplicates_of_each(texts);
                steps.extend(entries.iter().zip(near).map(|(entry, near)| {
                    JsonStep {
                        text: entry.text.to_string(),
                        status: entry.status().as_str(),
                        api: entry.over_http(),
                        uses: entry
                            .uses
                            .iter()
                            .map(|u| JsonUse { file: u.file.display().to_string(), line: u.location.line })
                            .collect(),
                        count: entry.count(),
                        near_duplicates: near.iter().map(|d| d.text.to_string()).collect(),
                        same_behaviour_as: snapshot.same_behaviour(&entry.text).iter().map(|t| t.to_string()).collect(),
                    }
                }));
            }
            serde_json::to_writer_pretty(&mut out, &steps)?;
            writeln!(out)?;
        }
        Format::Snippets => {
            let mut snippets = Map::new();
            for entry in &entries {
                snippets.insert(
                    entry.text.to_string(),
                    json!({
                        "prefix": entry.text.to_string(),
                        "body": [snippet_body(&entry.text)],
                        "description": format!("{} · written {}×", badge(entry.status()), entry.count()),
                    }),
                );
            }
            serde_json::to_writer_pretty(&mut out, &Value::Object(snippets))?;
            writeln!(out)?;
        }
        Format::Text => {
            // A block at a time, so only a block's near-duplicates are held at once.
            for (entries, texts) in entries.chunks(NEAR_DUPLICATE_BLOCK).zip(texts.chunks(NEAR_DUPLICATE_BLOCK)) {
                let near = snapshot.near_duplicates_of_each(texts);
                for (entry, near) in entries.iter().zip(&near) {
                    let text = escape_controls(&entry.text);
                    let api = if entry.over_http() { "  (API)" } else { "" };
                    writeln!(out, "{:<13} {:>4}×  {text}{api}", badge(entry.status()), entry.count())?;
                    for duplicate in near.iter().take(3) {
                        let text = escape_controls(&duplicate.text);
                        writeln!(out, "{:20}~ near-duplicate of \"{text}\" ({:.2})", "", duplicate.similarity)?;
                    }
                }
            }
            // The list before the count, when both go to one terminal or file.
            out.flush()?;
            let count = |status| entries.iter().filter(|e| e.status() == status).count();
            eprintln!(
                "{} step(s): {} recorded, {} divergent, {} unrecorded",
                entries.len(),
                count(StepStatus::Recorded),
                count(StepStatus::Divergent),
                count(StepStatus::Unrecorded)
            );
        }
    }
    Ok(problem::exit_code(&problems))
}
