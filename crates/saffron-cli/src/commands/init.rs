//! `saffron init`: sets a project up for Saffron and for the AI assistants that write its tests.
//!
//! It writes `saffron.toml` (documented defaults) when there is none, keeps run output out of
//! git, installs the agent skill into `.claude/skills/saffron` and `.agents/skills/saffron`,
//! upserts a marked block in `AGENTS.md` (and in `CLAUDE.md` when that file exists), and
//! registers the `saffron mcp` server with Claude Code (`.mcp.json`), Cursor
//! (`.cursor/mcp.json`) and VS Code (`.vscode/mcp.json`).
//!
//! Running it again changes nothing. Files that belong to the user are edited as text, never
//! re-serialised: a line appended to `.gitignore`, a block between markers in `AGENTS.md`, one
//! member inserted into an MCP config through its concrete syntax tree. So everything else in them stays byte for byte, comments
//! and formatting included. Every write is atomic.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use saffron_recording::{layout, write_atomic};

#[derive(Args)]
pub struct InitArgs {
    /// The project folder (default: the current folder).
    path: Option<PathBuf>,
}

const SAFFRON_TOML: &str = include_str!("../../skill/saffron.toml");
const SKILL_FILES: [(&str, &str); 6] = [
    ("SKILL.md", include_str!("../../skill/SKILL.md")),
    ("references/wording.md", include_str!("../../skill/references/wording.md")),
    ("references/dialect.md", include_str!("../../skill/references/dialect.md")),
    ("references/values.md", include_str!("../../skill/references/values.md")),
    ("references/review-loop.md", include_str!("../../skill/references/review-loop.md")),
    ("references/anti-patterns.md", include_str!("../../skill/references/anti-patterns.md")),
];
const SKILL_DIRS: [&str; 2] = [".claude/skills/saffron", ".agents/skills/saffron"];

pub const BLOCK_BEGIN: &str = "<!-- saffron:begin -->";
pub const BLOCK_END: &str = "<!-- saffron:end -->";
const AGENTS_BLOCK: &str = include_str!("../../skill/agents-block.md");

/// The MCP hosts with a project-level config file, and the key each keeps its servers under.
const MCP_HOSTS: [McpHost; 3] = [
    McpHost { file: ".mcp.json", servers_key: "mcpServers", with_type: false },
    McpHost { file: ".cursor/mcp.json", servers_key: "mcpServers", with_type: false },
    // VS Code's format names the transport and keeps servers under "servers".
    McpHost { file: ".vscode/mcp.json", servers_key: "servers", with_type: true },
];

struct McpHost {
    file: &'static str,
    servers_key: &'static str,
    with_type: bool,
}

/// What init did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Created,
    Updated(String),
    Unchanged(String),
    /// Left alone on purpose (CLAUDE.md that does not exist).
    Skipped(String),
    /// Could not be done; the detail says what to do by hand.
    Problem(String),
}

pub fn run(args: InitArgs) -> Result<ExitCode> {
    let root = match args.path {
        Some(path) => path,
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    if !root.is_dir() {
        anyhow::bail!("{}: no such folder", root.display());
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "Setting up Saffron in {}", root.display())?;
    let outcomes = init(&root);
    let mut problems = 0;
    for (path, outcome) in &outcomes {
        let (word, detail) = match outcome {
            Outcome::Created => ("created", String::new()),
            Outcome::Updated(detail) => ("updated", format!(": {detail}")),
            Outcome::Unchanged(detail) if detail.is_empty() => ("unchanged", String::new()),
            Outcome::Unchanged(detail) => ("unchanged", format!(" ({detail})")),
            Outcome::Skipped(detail) => ("skipped", format!(": {detail}")),
            Outcome::Problem(detail) => {
                problems += 1;
                ("PROBLEM", format!(": {detail}"))
            }
        };
        writeln!(out, "{word:<9} {path}{detail}")?;
    }
    writeln!(
        out,
        "Codex has no project-level MCP file: register the server once with `codex mcp add saffron -- saffron mcp`."
    )?;
    if let Some(offer) = client_offer(&root, std::env::var_os("PATH")) {
        writeln!(out, "{offer}")?;
    }
    Ok(if problems > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

/// With no agent configured and vendors' clients on PATH, what to add to record with one. It is
/// offered, never set: `saffron run` uses only the agent the configuration names.
fn client_offer(root: &Path, path_variable: Option<std::ffi::OsString>) -> Option<String> {
    let config = saffron_runner::session::load_config(root).ok()?;
    if config
        .agent
        .as_ref()
        .is_some_and(|agent| agent.provider.is_some() || agent.program.is_some() || agent.command.is_some())
    {
        return None;
    }
    let mut offers = Vec::new();
    for client in saffron_agent::Client::ALL {
        match saffron_mcp::client::find(&saffron_agent::ClientPreset::new(client), path_variable.clone()) {
            Ok(found) => offers.push(format!(
                "{} {} is on PATH: to record scenarios with it, on your own login and contained to Saffron's \
                 tools, add to saffron.toml:\n  [agent]\n  program = \"{}\"",
                client.name(),
                found.version,
                client.program()
            )),
            // Found but unusable (too old, a flag missing): said, with what to do.
            Err(unusable) if !unusable.absent => {
                offers.push(format!("{} cannot record for Saffron: {unusable}", client.name()));
            }
            Err(_) => {}
        }
    }
    (!offers.is_empty()).then(|| offers.join("\n"))
}

/// Every step of init, in order, with what it did per file (paths relative to `root`).
pub fn init(root: &Path) -> Vec<(String, Outcome)> {
    let mut outcomes = Vec::new();
    outcomes.push(("saffron.toml".to_string(), write_config(root)));
    outcomes.push((".gitignore".to_string(), update_gitignore(root)));
    for directory in SKILL_DIRS {
        for (name, content) in SKILL_FILES {
            let path = format!("{directory}/{name}");
            outcomes.push((path.clone(), install_file(&root.join(&path), content)));
        }
    }
    outcomes.push(("AGENTS.md".to_string(), upsert_block_file(&root.join("AGENTS.md"), true)));
    outcomes.push(("CLAUDE.md".to_string(), upsert_block_file(&root.join("CLAUDE.md"), false)));
    for host in &MCP_HOSTS {
        outcomes.push((host.file.to_string(), register_mcp(&root.join(host.file), host)));
    }
    outcomes
}

/// Why a file init looks after could not be read or written.
#[derive(Debug, thiserror::Error)]
enum FileError {
    #[error("not UTF-8 text: left as it is")]
    NotUtf8,
    #[error("{0}")]
    Read(std::io::Error),
    #[error("cannot write it: {0}")]
    Write(std::io::Error),
}

impl From<FileError> for Outcome {
    fn from(problem: FileError) -> Outcome {
        Outcome::Problem(problem.to_string())
    }
}

fn read(path: &Path) -> Result<Option<String>, FileError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| FileError::NotUtf8),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(FileError::Read(error)),
    }
}

fn write(path: &Path, text: &str) -> Result<(), FileError> {
    write_atomic(path, text.as_bytes()).map_err(FileError::Write)
}

fn write_config(root: &Path) -> Outcome {
    let path = root.join("saffron.toml");
    match read(&path) {
        Ok(Some(_)) => Outcome::Unchanged("exists; your settings are kept".to_string()),
        Ok(None) => write(&path, SAFFRON_TOML).map_or_else(Outcome::from, |()| Outcome::Created),
        Err(problem) => problem.into(),
    }
}

/// Appends the missing ignore lines; an equivalent line already there (`/.saffron/reports`,
/// `.saffron/reports`) counts.
fn update_gitignore(root: &Path) -> Outcome {
    let path = root.join(".gitignore");
    let existing = match read(&path) {
        Ok(existing) => existing,
        Err(problem) => return problem.into(),
    };
    let text = existing.clone().unwrap_or_default();
    let normal = |line: &str| line.trim().trim_start_matches('/').trim_end_matches('/').to_string();
    let present: Vec<String> = text.lines().map(normal).collect();
    let missing: Vec<&str> = layout::IGNORED.iter().copied().filter(|line| !present.contains(&normal(line))).collect();
    if missing.is_empty() {
        return Outcome::Unchanged(String::new());
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut updated = text.clone();
    if !updated.is_empty() && !updated.ends_with('\n') {
        updated.push_str(newline);
    }
    if !updated.is_empty() {
        updated.push_str(newline);
    }
    updated
        .push_str("# Saffron: run reports, artifacts and the store lock (recordings in .saffron/cache are committed)");
    updated.push_str(newline);
    for line in &missing {
        updated.push_str(line);
        updated.push_str(newline);
    }
    match write(&path, &updated) {
        Ok(()) if existing.is_none() => Outcome::Created,
        Ok(()) => Outcome::Updated(format!("added {}", missing.join(", "))),
        Err(problem) => problem.into(),
    }
}

/// The skill is Saffron's own text: installed, and brought up to date on the next init.
fn install_file(path: &Path, content: &str) -> Outcome {
    match read(path) {
        Ok(Some(existing)) if existing == content => Outcome::Unchanged(String::new()),
        Ok(existing) => match write(path, content) {
            Ok(()) if existing.is_none() => Outcome::Created,
            Ok(()) => Outcome::Updated("replaced with this saffron's version".to_string()),
            Err(problem) => problem.into(),
        },
        Err(problem) => problem.into(),
    }
}

fn upsert_block_file(path: &Path, create: bool) -> Outcome {
    let existing = match read(path) {
        Ok(existing) => existing,
        Err(problem) => return problem.into(),
    };
    let Some(text) = existing else {
        if !create {
            return Outcome::Skipped("not present (init adds its block only to an existing CLAUDE.md)".to_string());
        }
        return write(path, AGENTS_BLOCK).map_or_else(Outcome::from, |()| Outcome::Created);
    };
    match upsert_block(&text, AGENTS_BLOCK) {
        Ok(None) => Outcome::Unchanged(String::new()),
        Ok(Some((updated, how))) => write(path, &updated).map_or_else(Outcome::from, |()| Outcome::Updated(how)),
        Err(problem) => problem.into(),
    }
}

/// A file with one block marker and not the other, or with them in the wrong order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "has one of {BLOCK_BEGIN} and {BLOCK_END} without the other (or in the wrong order): fix the markers by hand and \
     run init again"
)]
pub struct MarkerError;

impl From<MarkerError> for Outcome {
    fn from(problem: MarkerError) -> Outcome {
        Outcome::Problem(problem.to_string())
    }
}

/// `text` with `block` (which starts with [`BLOCK_BEGIN`] and ends with [`BLOCK_END`] and a
/// newline) in place of the existing marked block, or appended; `None` when it is already
/// there. Everything outside the markers is kept as it is.
pub fn upsert_block(text: &str, block: &str) -> Result<Option<(String, String)>, MarkerError> {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let block = block.replace('\n', newline);
    let block_body = block.trim_end_matches(newline);
    match (text.find(BLOCK_BEGIN), text.find(BLOCK_END)) {
        (Some(begin), Some(end)) if end > begin => {
            let end = end + BLOCK_END.len();
            if &text[begin..end] == block_body {
                return Ok(None);
            }
            let updated = format!("{}{}{}", &text[..begin], block_body, &text[end..]);
            Ok(Some((updated, "replaced the saffron block".to_string())))
        }
        (None, None) => {
            let mut updated = text.to_string();
            if !updated.is_empty() && !updated.ends_with('\n') {
                updated.push_str(newline);
            }
            if !updated.is_empty() {
                updated.push_str(newline);
            }
            updated.push_str(&block);
            Ok(Some((updated, "added the saffron block at the end".to_string())))
        }
        _ => Err(MarkerError),
    }
}

fn register_mcp(path: &Path, host: &McpHost) -> Outcome {
    let existing = match read(path) {
        Ok(existing) => existing,
        Err(problem) => return problem.into(),
    };
    let manual =
        || format!("add \"saffron\": {} under \"{}\" by hand", server_entry(host, "", "", " "), host.servers_key);
    match existing {
        None => write(path, &new_mcp_file(host)).map_or_else(Outcome::from, |()| Outcome::Created),
        Some(text) if text.trim().is_empty() => {
            write(path, &new_mcp_file(host)).map_or_else(Outcome::from, |()| Outcome::Updated("was empty".into()))
        }
        Some(text) => match add_server(&text, host) {
            Ok(None) => Outcome::Unchanged("a saffron server is already registered".to_string()),
            Ok(Some(updated)) => write(path, &updated).map_or_else(Outcome::from, |()| {
                Outcome::Updated(format!("added the saffron server under \"{}\"", host.servers_key))
            }),
            Err(problem) => Outcome::Problem(format!("{problem}; left as it is: {}", manual())),
        },
    }
}

fn new_mcp_file(host: &McpHost) -> String {
    let entry = server_entry(host, "    ", "  ", "\n");
    format!("{{\n  \"{}\": {{\n    \"saffron\": {entry}\n  }}\n}}\n", host.servers_key)
}

/// The server's value, pretty-printed for a member indented by `indent`.
fn server_entry(host: &McpHost, indent: &str, unit: &str, newline: &str) -> String {
    let inner = format!("{indent}{unit}");
    let mut fields = Vec::new();
    if host.with_type {
        fields.push("\"type\": \"stdio\"");
    }
    fields.push("\"command\": \"saffron\"");
    fields.push("\"args\": [\"mcp\"]");
    let mut out = String::from("{");
    for (index, field) in fields.iter().enumerate() {
        let _ = write!(out, "{}{newline}{inner}{field}", if index > 0 { "," } else { "" });
    }
    let _ = write!(out, "{newline}{indent}}}");
    out
}

/// Why the saffron server could not be added to an MCP config file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum McpConfigError {
    #[error("not valid JSON at {line}:{column}: {what}")]
    Invalid { line: usize, column: usize, what: String },
    #[error("the top level is not a JSON object")]
    NotAnObject,
    #[error("\"{0}\" is not an object")]
    ServersNotAnObject(&'static str),
    #[error("could not insert the server")]
    NotInserted,
}

/// The JSON VS Code's settings files allow: comments and trailing commas, nothing looser.
fn parse_jsonc(text: &str) -> Result<CstRootNode, McpConfigError> {
    let options = ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    CstRootNode::parse(text, &options).map_err(|error| McpConfigError::Invalid {
        line: error.line_display(),
        column: error.column_display(),
        what: error.kind().to_string(),
    })
}

/// `text` with the saffron server inserted into its servers object (created when missing), or
/// `None` when a server named "saffron" is already there (whatever its command: the user may
/// point it at their own build). The concrete syntax tree keeps every other byte, comments and
/// layout included.
fn add_server(text: &str, host: &McpHost) -> Result<Option<String>, McpConfigError> {
    // A byte-order mark is not JSON, but editors write it.
    let (mark, json) = text.strip_prefix('\u{feff}').map_or(("", text), |rest| ("\u{feff}", rest));
    let root = parse_jsonc(json)?;
    let root_object = root.object_value().ok_or(McpConfigError::NotAnObject)?;
    let newline = if json.contains("\r\n") { "\r\n" } else { "\n" };
    let unit = root.single_indent_text().filter(|unit| !unit.is_empty()).unwrap_or_else(|| "  ".to_string());
    let servers = match root_object.get(host.servers_key) {
        Some(member) => {
            let servers = member.object_value().ok_or(McpConfigError::ServersNotAnObject(host.servers_key))?;
            if servers.get("saffron").is_some() {
                return Ok(None);
            }
            servers
        }
        None => root_object
            .append(host.servers_key, CstInputValue::Object(Vec::new()))
            .object_value()
            .ok_or(McpConfigError::NotInserted)?,
    };
    // The entry is written as text, in the layout `server_entry` gives it (the tree would put
    // `["mcp"]` on three lines).
    let member = servers.append("saffron", CstInputValue::Number("0".to_string()));
    let indent = member.indent_text().unwrap_or_default();
    let placeholder = member.value().and_then(|value| value.as_number_lit()).ok_or(McpConfigError::NotInserted)?;
    placeholder.set_raw_value(server_entry(host, &indent, &unit, newline));
    let updated = format!("{mark}{root}");
    // What is written must read back with the server in place.
    let check = parse_jsonc(&updated[mark.len()..])?;
    let registered = check
        .object_value()
        .and_then(|object| object.object_value(host.servers_key))
        .is_some_and(|servers| servers.get("saffron").is_some());
    if !registered {
        return Err(McpConfigError::NotInserted);
    }
    Ok(Some(updated))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: McpHost = McpHost { file: ".mcp.json", servers_key: "mcpServers", with_type: false };
    const VSCODE: McpHost = McpHost { file: ".vscode/mcp.json", servers_key: "servers", with_type: true };

    fn added(text: &str, host: &McpHost) -> String {
        add_server(text, host).expect("valid").expect("changed")
    }

    #[test]
    fn the_config_init_writes_has_only_keys_saffron_reads() {
        let (config, unknown) = saffron_runner::config::Config::parse_checked(SAFFRON_TOML).expect("valid TOML");
        assert!(unknown.is_empty(), "{unknown:?}");
        assert_eq!(config.browser, saffron_runner::config::BrowserSection::default());
    }

    #[test]
    fn inserts_beside_other_servers_in_their_layout() {
        let text = "{\n    \"mcpServers\": {\n        \"other\": { \"command\": \"x\" }\n    }\n}\n";
        let out = added(text, &CLAUDE);
        assert_eq!(
            out,
            "{\n    \"mcpServers\": {\n        \"other\": { \"command\": \"x\" },\n        \"saffron\": {\n            \
             \"command\": \"saffron\",\n            \"args\": [\"mcp\"]\n        }\n    }\n}\n"
        );
        assert_eq!(add_server(&out, &CLAUDE), Ok(None));
        let value: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(value["mcpServers"]["saffron"]["args"][0], "mcp");
    }

    #[test]
    fn creates_the_servers_key_and_keeps_comments() {
        let text = "// my settings\n{\n  \"inputs\": [], // keep\n}\n";
        let out = added(text, &VSCODE);
        assert!(out.starts_with("// my settings\n{\n  \"inputs\": [], // keep\n  \"servers\": {\n    \"saffron\": {\n      \"type\": \"stdio\""), "{out}");
        assert!(out.ends_with("    }\n  },\n}\n"), "{out}");
        let commented = added("{\n  \"mcpServers\": {\n    \"a\": {} // mine\n  }\n}\n", &CLAUDE);
        assert!(commented.contains("\"a\": {}, // mine\n    \"saffron\": {"), "{commented}");
        assert_eq!(add_server(&out, &VSCODE), Ok(None));
    }

    #[test]
    fn empty_objects_and_one_liners() {
        assert_eq!(
            added("{}", &CLAUDE),
            "{\n  \"mcpServers\": {\n    \"saffron\": {\n      \"command\": \"saffron\",\n      \"args\": [\"mcp\"]\n    }\n  }\n}"
        );
        let out = added("{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}", &CLAUDE);
        assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok(), "{out}");
        let out = added("{\r\n  \"mcpServers\": {\r\n  }\r\n}\r\n", &CLAUDE);
        assert!(!out.replace("\r\n", "").contains('\n'), "line endings kept: {out:?}");
    }

    #[test]
    fn refuses_what_it_cannot_edit_safely() {
        assert!(add_server("[1]", &CLAUDE).is_err());
        assert!(add_server("{\"mcpServers\": []}", &CLAUDE).is_err());
        assert!(add_server("{\"a\": }", &CLAUDE).expect_err("invalid").to_string().contains("1:7"));
        assert!(add_server("{\"a\": 1", &CLAUDE).is_err());
    }

    #[test]
    fn the_block_is_upserted_between_markers() {
        let block = format!("{BLOCK_BEGIN}\nnew\n{BLOCK_END}\n");
        let (once, _) = upsert_block("# Mine\n\ntext", &block).expect("ok").expect("changed");
        assert_eq!(once, format!("# Mine\n\ntext\n\n{BLOCK_BEGIN}\nnew\n{BLOCK_END}\n"));
        assert_eq!(upsert_block(&once, &block), Ok(None));
        let old = format!("a\n{BLOCK_BEGIN}\nold\n{BLOCK_END}\nb\n");
        let (replaced, _) = upsert_block(&old, &block).expect("ok").expect("changed");
        assert_eq!(replaced, format!("a\n{BLOCK_BEGIN}\nnew\n{BLOCK_END}\nb\n"));
        assert!(upsert_block(&format!("{BLOCK_BEGIN}\n"), &block).is_err());
    }
}
