//! `saffron steps`: the project's step vocabulary, and what each step costs.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use saffron_index::{Entry, Snapshot, StepStatus};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::project;

#[derive(Args)]
pub struct StepsArgs {
    /// Only steps written (or recorded for features) under these paths.
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
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

pub fn badge(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Recorded => "✓ recorded",
        StepStatus::Divergent => "⚠ divergent",
        StepStatus::Unrecorded => "○ unrecorded",
    }
}

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
    let snapshot = project::load_index(&root);
    let entries = selected_entries(&snapshot, &filters);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            let steps: Vec<JsonStep> = entries
                .iter()
                .map(|entry| JsonStep {
                    text: entry.text.to_string(),
                    status: entry.status().as_str(),
                    uses: entry
                        .uses
                        .iter()
                        .map(|u| JsonUse { file: u.file.display().to_string(), line: u.location.line })
                        .collect(),
                    count: entry.count(),
                    near_duplicates: snapshot.near_duplicates(&entry.text).iter().map(|d| d.text.to_string()).collect(),
                    same_behaviour_as: snapshot.same_behaviour(&entry.text).iter().map(|t| t.to_string()).collect(),
                })
                .collect();
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
            for entry in &entries {
                let near = snapshot.near_duplicates(&entry.text);
                writeln!(out, "{:<13} {:>4}×  {}", badge(entry.status()), entry.count(), entry.text)?;
                for duplicate in near.iter().take(3) {
                    writeln!(out, "{:20}~ near-duplicate of \"{}\" ({:.2})", "", duplicate.text, duplicate.similarity)?;
                }
            }
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
    Ok(ExitCode::SUCCESS)
}

/// A snippet body: `<param>` placeholders and quoted values become tab stops; `$`, `}` and `\`
/// are escaped as VS Code's snippet syntax requires.
pub fn snippet_body(text: &str) -> String {
    fn escape(text: &str, in_placeholder: bool) -> String {
        let mut out = String::new();
        for c in text.chars() {
            if c == '$' || c == '\\' || (in_placeholder && c == '}') {
                out.push('\\');
            }
            out.push(c);
        }
        out
    }
    let mut body = String::new();
    let mut stop = 1;
    let mut rest = text;
    while let Some(start) = rest.find(['<', '"']) {
        let opener = rest.as_bytes()[start];
        let closer = if opener == b'<' { '>' } else { '"' };
        let Some(length) = rest[start + 1..].find(closer) else { break };
        let inner = &rest[start + 1..start + 1 + length];
        if opener == b'<' && (inner.is_empty() || inner.contains(char::is_whitespace)) {
            body.push_str(&escape(&rest[..=start], false));
            rest = &rest[start + 1..];
            continue;
        }
        body.push_str(&escape(&rest[..start], false));
        let default = escape(inner, true);
        if opener == b'<' {
            body.push_str(&format!("${{{stop}:{default}}}"));
        } else {
            body.push_str(&format!("\"${{{stop}:{default}}}\""));
        }
        stop += 1;
        rest = &rest[start + 2 + length..];
    }
    body.push_str(&escape(rest, false));
    body
}

#[cfg(test)]
mod tests {
    use super::snippet_body;

    #[test]
    fn placeholders_and_quoted_values_become_tab_stops() {
        assert_eq!(snippet_body("I add <count> \"Tea\" to the cart"), "I add ${1:count} \"${2:Tea}\" to the cart");
        assert_eq!(snippet_body("I pay $5 for a < b"), "I pay \\$5 for a < b");
        assert_eq!(snippet_body("I type \"a}b\""), "I type \"${1:a\\}b}\"");
    }
}
