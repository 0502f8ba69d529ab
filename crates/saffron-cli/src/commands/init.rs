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
//! member inserted into an MCP config. So everything else in them stays byte for byte, comments
//! and formatting included. Every write is atomic.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
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
    Ok(if problems > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
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

fn read(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| "not UTF-8 text: left as it is".to_string()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    write_atomic(path, text.as_bytes()).map_err(|error| format!("cannot write it: {error}"))
}

fn write_config(root: &Path) -> Outcome {
    let path = root.join("saffron.toml");
    match read(&path) {
        Ok(Some(_)) => Outcome::Unchanged("exists; your settings are kept".to_string()),
        Ok(None) => write(&path, SAFFRON_TOML).map_or_else(Outcome::Problem, |()| Outcome::Created),
        Err(problem) => Outcome::Problem(problem),
    }
}

/// Appends the missing ignore lines; an equivalent line already there (`/.saffron/reports`,
/// `.saffron/reports`) counts.
fn update_gitignore(root: &Path) -> Outcome {
    let path = root.join(".gitignore");
    let existing = match read(&path) {
        Ok(existing) => existing,
        Err(problem) => return Outcome::Problem(problem),
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
        Err(problem) => Outcome::Problem(problem),
    }
}

/// The skill is Saffron's own text: installed, and brought up to date on the next init.
fn install_file(path: &Path, content: &str) -> Outcome {
    match read(path) {
        Ok(Some(existing)) if existing == content => Outcome::Unchanged(String::new()),
        Ok(existing) => match write(path, content) {
            Ok(()) if existing.is_none() => Outcome::Created,
            Ok(()) => Outcome::Updated("replaced with this saffron's version".to_string()),
            Err(problem) => Outcome::Problem(problem),
        },
        Err(problem) => Outcome::Problem(problem),
    }
}

fn upsert_block_file(path: &Path, create: bool) -> Outcome {
    let existing = match read(path) {
        Ok(existing) => existing,
        Err(problem) => return Outcome::Problem(problem),
    };
    let Some(text) = existing else {
        if !create {
            return Outcome::Skipped("not present (init adds its block only to an existing CLAUDE.md)".to_string());
        }
        return write(path, AGENTS_BLOCK).map_or_else(Outcome::Problem, |()| Outcome::Created);
    };
    match upsert_block(&text, AGENTS_BLOCK) {
        Ok(None) => Outcome::Unchanged(String::new()),
        Ok(Some((updated, how))) => write(path, &updated).map_or_else(Outcome::Problem, |()| Outcome::Updated(how)),
        Err(problem) => Outcome::Problem(problem),
    }
}

/// `text` with `block` (which starts with [`BLOCK_BEGIN`] and ends with [`BLOCK_END`] and a
/// newline) in place of the existing marked block, or appended; `None` when it is already
/// there. Everything outside the markers is kept as it is.
pub fn upsert_block(text: &str, block: &str) -> Result<Option<(String, String)>, String> {
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
        _ => Err(format!(
            "has one of {BLOCK_BEGIN} and {BLOCK_END} without the other (or in the wrong order): fix the markers by \
             hand and run init again"
        )),
    }
}

fn register_mcp(path: &Path, host: &McpHost) -> Outcome {
    let existing = match read(path) {
        Ok(existing) => existing,
        Err(problem) => return Outcome::Problem(problem),
    };
    let manual =
        || format!("add \"saffron\": {} under \"{}\" by hand", server_entry(host, "", "", " "), host.servers_key);
    match existing {
        None => write(path, &new_mcp_file(host)).map_or_else(Outcome::Problem, |()| Outcome::Created),
        Some(text) if text.trim().is_empty() => {
            write(path, &new_mcp_file(host)).map_or_else(Outcome::Problem, |()| Outcome::Updated("was empty".into()))
        }
        Some(text) => match add_server(&text, host) {
            Ok(None) => Outcome::Unchanged("a saffron server is already registered".to_string()),
            Ok(Some(updated)) => write(path, &updated).map_or_else(Outcome::Problem, |()| {
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

/// `text` with the saffron server inserted into its servers object (created when missing), or
/// `None` when a server named "saffron" is already there (whatever its command: the user may
/// point it at their own build). Only the inserted text is new; every other byte is kept.
fn add_server(text: &str, host: &McpHost) -> Result<Option<String>, String> {
    let root = jsonc::parse(text)?;
    let jsonc::Node::Object(root_object) = &root else {
        return Err("the top level is not a JSON object".to_string());
    };
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let unit = indent_unit(text, root_object);
    let updated = match root_object.member(host.servers_key) {
        Some(member) => {
            let jsonc::Node::Object(servers) = &member.value else {
                return Err(format!("\"{}\" is not an object", host.servers_key));
            };
            if servers.member("saffron").is_some() {
                return Ok(None);
            }
            insert_member(text, servers, "saffron", &unit, newline, |indent| server_entry(host, indent, &unit, newline))
        }
        None => insert_member(text, root_object, host.servers_key, &unit, newline, |indent| {
            let inner = format!("{indent}{unit}");
            let entry = server_entry(host, &inner, &unit, newline);
            format!("{{{newline}{inner}\"saffron\": {entry}{newline}{indent}}}")
        }),
    };
    // What is written must read back with the server in place.
    let check = jsonc::parse(&updated)?;
    let registered = match &check {
        jsonc::Node::Object(object) => object
            .member(host.servers_key)
            .is_some_and(|m| matches!(&m.value, jsonc::Node::Object(s) if s.member("saffron").is_some())),
        jsonc::Node::Other => false,
    };
    if !registered {
        return Err("could not insert the server".to_string());
    }
    Ok(Some(updated))
}

/// The file's indentation unit, from its first indented member; two spaces when it has none.
fn indent_unit(text: &str, root: &jsonc::Object) -> String {
    root.members
        .first()
        .and_then(|member| own_line_indent(text, member.key_start))
        .filter(|indent| !indent.is_empty())
        .unwrap_or_else(|| "  ".to_string())
}

/// The whitespace before `offset` on its line, when nothing else precedes it there.
fn own_line_indent(text: &str, offset: usize) -> Option<String> {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    before.chars().all(|c| c == ' ' || c == '\t').then(|| before.to_string())
}

/// The whitespace at the start of the line holding `offset`.
fn line_indent(text: &str, offset: usize) -> String {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect()
}

/// Inserts `"key": value` as the object's last member, in the object's own layout.
fn insert_member(
    text: &str,
    object: &jsonc::Object,
    key: &str,
    unit: &str,
    newline: &str,
    value: impl Fn(&str) -> String,
) -> String {
    let (at, insertion) = match object.members.last() {
        Some(last) => match own_line_indent(text, last.key_start) {
            // One member per line: a new line with the same indentation, after anything that
            // ends the last member's line (a trailing comma, a `//` comment), which stays put.
            Some(indent) => {
                let member = format!("\"{key}\": {}", value(&indent));
                let (line_end, trailing_comma) = member_line_end(text, last.value_end);
                if trailing_comma {
                    (line_end, format!("{newline}{indent}{member},"))
                } else {
                    let with_comma = format!("{},{}", &text[..last.value_end], &text[last.value_end..line_end]);
                    return format!("{with_comma}{newline}{indent}{member}{}", &text[line_end..]);
                }
            }
            // All on one line: stay on it.
            None => {
                let indent = line_indent(text, last.key_start);
                (last.value_end, format!(", \"{key}\": {}", value(&indent)))
            }
        },
        None => {
            let outer = line_indent(text, object.open);
            let indent = format!("{outer}{unit}");
            let multiline = text[object.open..object.close].contains('\n');
            let closing = if multiline { String::new() } else { format!("{newline}{outer}") };
            (object.open + 1, format!("{newline}{indent}\"{key}\": {}{closing}", value(&indent)))
        }
    };
    format!("{}{insertion}{}", &text[..at], &text[at..])
}

/// Where the line of a member whose value ends at `value_end` ends, past a trailing comma and a
/// `//` comment, and whether the member has a trailing comma. Stops earlier when something
/// else follows on the line (a block comment), so nothing is ever skipped over.
fn member_line_end(text: &str, value_end: usize) -> (usize, bool) {
    let bytes = text.as_bytes();
    let skip_blanks = |mut at: usize| {
        while bytes.get(at).is_some_and(|b| *b == b' ' || *b == b'\t') {
            at += 1;
        }
        at
    };
    let mut at = skip_blanks(value_end);
    let trailing_comma = bytes.get(at) == Some(&b',');
    if trailing_comma {
        at = skip_blanks(at + 1);
    }
    if text[at..].starts_with("//") {
        at = text[at..].find(['\r', '\n']).map_or(text.len(), |i| at + i);
    } else if !matches!(bytes.get(at), Some(b'\r' | b'\n') | None) {
        // Something else shares the line: insert right after the value (or its comma).
        return (if trailing_comma { value_end_after_comma(text, value_end) } else { value_end }, trailing_comma);
    }
    (at, trailing_comma)
}

fn value_end_after_comma(text: &str, value_end: usize) -> usize {
    text[value_end..].find(',').map_or(value_end, |i| value_end + i + 1)
}

/// Just enough of JSON (with the comments and trailing commas VS Code's JSONC allows) to find
/// where an object's members are, so a member can be inserted as text.
mod jsonc {
    #[derive(Debug)]
    pub enum Node {
        Object(Object),
        Other,
    }

    #[derive(Debug)]
    pub struct Object {
        /// Offsets of `{` and `}`.
        pub open: usize,
        pub close: usize,
        pub members: Vec<Member>,
    }

    #[derive(Debug)]
    pub struct Member {
        pub key: String,
        pub key_start: usize,
        pub value: Node,
        /// Just after the value.
        pub value_end: usize,
    }

    impl Object {
        pub fn member(&self, key: &str) -> Option<&Member> {
            self.members.iter().find(|member| member.key == key)
        }
    }

    pub fn parse(text: &str) -> Result<Node, String> {
        let mut parser = Parser { text, bytes: text.as_bytes(), at: 0 };
        // A byte-order mark is not JSON, but editors write it.
        if text.starts_with('\u{feff}') {
            parser.at = 3;
        }
        parser.trivia()?;
        let node = parser.value()?;
        parser.trivia()?;
        if parser.at < parser.bytes.len() {
            return Err(parser.error("unexpected text after the JSON value"));
        }
        Ok(node)
    }

    struct Parser<'a> {
        text: &'a str,
        bytes: &'a [u8],
        at: usize,
    }

    impl Parser<'_> {
        fn error(&self, what: &str) -> String {
            let before = &self.text[..self.at.min(self.text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("not valid JSON at {line}:{column}: {what}")
        }

        fn peek(&self) -> Option<u8> {
            self.bytes.get(self.at).copied()
        }

        /// Whitespace and comments.
        fn trivia(&mut self) -> Result<(), String> {
            loop {
                match self.peek() {
                    Some(b' ' | b'\t' | b'\n' | b'\r') => self.at += 1,
                    Some(b'/') if self.bytes.get(self.at + 1) == Some(&b'/') => {
                        while self.peek().is_some_and(|b| b != b'\n') {
                            self.at += 1;
                        }
                    }
                    Some(b'/') if self.bytes.get(self.at + 1) == Some(&b'*') => {
                        let Some(end) = self.text[self.at + 2..].find("*/") else {
                            return Err(self.error("unclosed comment"));
                        };
                        self.at += 2 + end + 2;
                    }
                    _ => return Ok(()),
                }
            }
        }

        fn value(&mut self) -> Result<Node, String> {
            match self.peek() {
                Some(b'{') => self.object(),
                Some(b'[') => self.array(),
                Some(b'"') => self.string().map(|_| Node::Other),
                Some(b) if b == b'-' || b.is_ascii_alphanumeric() => {
                    let start = self.at;
                    while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) {
                        self.at += 1;
                    }
                    let word = &self.text[start..self.at];
                    let number = word.starts_with(|c: char| c == '-' || c.is_ascii_digit());
                    if matches!(word, "true" | "false" | "null") || (number && word.parse::<f64>().is_ok()) {
                        Ok(Node::Other)
                    } else {
                        self.at = start;
                        Err(self.error(&format!("unexpected `{word}`")))
                    }
                }
                Some(_) => Err(self.error("expected a value")),
                None => Err(self.error("unexpected end of file")),
            }
        }

        fn string(&mut self) -> Result<String, String> {
            let start = self.at;
            self.at += 1;
            let mut out = String::new();
            loop {
                let Some(rest) = self.text.get(self.at..) else { return Err(self.error("bad text")) };
                let mut chars = rest.chars();
                match chars.next() {
                    None => {
                        self.at = start;
                        return Err(self.error("unclosed string"));
                    }
                    Some('"') => {
                        self.at += 1;
                        return Ok(out);
                    }
                    Some('\\') => {
                        let escaped = chars.next().ok_or_else(|| self.error("unclosed string"))?;
                        self.at += 1 + escaped.len_utf8();
                        match escaped {
                            'n' => out.push('\n'),
                            't' => out.push('\t'),
                            'r' => out.push('\r'),
                            'b' => out.push('\u{8}'),
                            'f' => out.push('\u{c}'),
                            'u' => {
                                let hex =
                                    self.text.get(self.at..self.at + 4).ok_or_else(|| self.error("bad \\u escape"))?;
                                let code = u32::from_str_radix(hex, 16).map_err(|_| self.error("bad \\u escape"))?;
                                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                                self.at += 4;
                            }
                            other => out.push(other),
                        }
                    }
                    Some(c) => {
                        out.push(c);
                        self.at += c.len_utf8();
                    }
                }
            }
        }

        fn array(&mut self) -> Result<Node, String> {
            self.at += 1;
            loop {
                self.trivia()?;
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(Node::Other);
                }
                self.value()?;
                self.trivia()?;
                match self.peek() {
                    Some(b',') => self.at += 1,
                    Some(b']') => {}
                    _ => return Err(self.error("expected `,` or `]`")),
                }
            }
        }

        fn object(&mut self) -> Result<Node, String> {
            let open = self.at;
            self.at += 1;
            let mut members = Vec::new();
            loop {
                self.trivia()?;
                match self.peek() {
                    Some(b'}') => {
                        let close = self.at;
                        self.at += 1;
                        return Ok(Node::Object(Object { open, close, members }));
                    }
                    Some(b'"') => {}
                    _ => return Err(self.error("expected a member name in quotes or `}`")),
                }
                let key_start = self.at;
                let key = self.string()?;
                self.trivia()?;
                if self.peek() != Some(b':') {
                    return Err(self.error("expected `:`"));
                }
                self.at += 1;
                self.trivia()?;
                let value = self.value()?;
                members.push(Member { key, key_start, value, value_end: self.at });
                self.trivia()?;
                match self.peek() {
                    Some(b',') => self.at += 1,
                    Some(b'}') => {}
                    _ => return Err(self.error("expected `,` or `}`")),
                }
            }
        }
    }
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
        assert!(add_server("{\"a\": }", &CLAUDE).expect_err("invalid").contains("1:7"));
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
