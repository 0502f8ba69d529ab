//! The vendors' own agent clients, started and contained by Saffron: it builds the command line
//! (the client's own flags that leave it Saffron's tools and nothing else), hands it the
//! gateway's address with the token kept out of every command line, and reads the client's
//! usage from its structured output.
//!
//! A client is proven with one version: an older one, or one that lacks a flag the preset
//! passes, is refused at start with the install hint (a flag a client silently ignored could
//! leave it a shell). Each client is one [`Preset`]; a third client is one more module.

mod claude_code;
mod codex;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use saffron_agent::{Client, ClientPreset, Usage};

pub use self::claude_code::CLAUDE_CODE_PROVEN;
pub use self::codex::CODEX_PROVEN;

/// The name the gateway is registered under: its tools reach the model as `mcp__saffron__<tool>`.
const SERVER_NAME: &str = "saffron";

/// What Saffron knows of one vendor's client.
trait Preset: Sync {
    /// The version its containment was proven with; older ones are refused.
    fn proven(&self) -> &'static str;
    /// The arguments whose output lists the flags the preset passes, and those flags.
    fn help(&self) -> (&'static [&'static str], &'static [&'static str]);
    /// How to install it.
    fn install(&self) -> &'static str;
    /// The command line of one session (its first item the program), its files written into
    /// `folder`, the session's own.
    fn prepare(&self, found: &Found, gateway: &Gateway, folder: &Path) -> std::io::Result<Vec<String>>;
    /// What the session used, from the client's standard output.
    fn usage(&self, stdout: &str) -> Option<Usage>;
    /// What the client last said, or the error it ended on, from its standard output.
    fn last_words(&self, stdout: &str) -> Option<String>;
}

fn preset(client: Client) -> &'static dyn Preset {
    match client {
        Client::ClaudeCode => &claude_code::ClaudeCode,
        Client::Codex => &codex::Codex,
    }
}

/// The gateway a session's client connects to. The token is not here: the client reads it from
/// the variable named `token_variable`, set in its environment.
pub struct Gateway<'a> {
    pub url: &'a str,
    pub token_variable: &'a str,
}

/// A client found on PATH, its version checked, with the project's choices for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub preset: ClientPreset,
    pub path: PathBuf,
    pub version: String,
}

impl Found {
    pub fn client(&self) -> Client {
        self.preset.client
    }
}

/// Why a client cannot be used, with what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}; {hint}")]
pub struct Unusable {
    pub problem: String,
    pub hint: String,
    /// It is not on PATH at all (rather than there and unfit).
    pub absent: bool,
}

fn install_hint(client: Client) -> String {
    let preset = preset(client);
    format!(
        "install {} {} or later (`{}`) and sign in with `{}`, or set `provider` and an API key in [agent] \
         instead (docs/agent.md)",
        client.name(),
        preset.proven(),
        preset.install(),
        client.program()
    )
}

/// The client's program on `path_variable` (PATH), its version and flags checked.
pub fn find(wanted: &ClientPreset, path_variable: Option<std::ffi::OsString>) -> Result<Found, Unusable> {
    let client = wanted.client;
    let unusable = |problem: String| Unusable { problem, hint: install_hint(client), absent: false };
    let program = client.program();
    let path = path_variable
        .iter()
        .flat_map(std::env::split_paths)
        .map(|folder| folder.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| Unusable {
            absent: true,
            ..unusable(format!("`{program}` ({}) is not on PATH", client.name()))
        })?;
    let said = |args: &[&str]| -> Result<String, Unusable> {
        let output = std::process::Command::new(&path)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|error| unusable(format!("{} could not be run: {error}", path.display())))?;
        Ok(format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr)))
    };
    let preset = preset(client);
    let proven = preset.proven();
    // `2.1.332 (Claude Code)`, `codex-cli 0.171.0`: the first word that is a version.
    let version_text = said(&["--version"])?;
    let version = version_text.split_whitespace().find(|word| numbers(word).is_some()).unwrap_or_default().to_owned();
    match (numbers(&version), numbers(proven)) {
        (Some(found), Some(needed)) if found >= needed => {}
        _ => {
            let shown = version_text.split_whitespace().next().unwrap_or("(no version)");
            return Err(unusable(format!(
                "{} {} is older than {proven}, the version Saffron's containment was proven with",
                client.name(),
                if version.is_empty() { shown } else { version.as_str() }
            )));
        }
    }
    let (help_args, flags) = preset.help();
    let help = said(help_args)?;
    if let Some(missing) = flags.iter().find(|flag| !help.contains(*flag)) {
        return Err(unusable(format!(
            "{} {version} has no `{missing}` flag, which Saffron needs to contain it",
            client.name()
        )));
    }
    Ok(Found { preset: wanted.clone(), path, version })
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata().is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// `2.1.332` as numbers, for comparing versions.
fn numbers(version: &str) -> Option<Vec<u64>> {
    let parts: Option<Vec<u64>> = version.split('.').map(|part| part.parse().ok()).collect();
    parts.filter(|parts| !parts.is_empty())
}

/// What one session of a client needs: its command line, and the private folder its
/// configuration is in, which is also where it runs (so no instruction or configuration file of
/// the project reaches it), removed with it.
pub struct Prepared {
    pub argv: Vec<String>,
    pub folder: tempfile::TempDir,
}

/// Prepares one session of the client found.
pub fn prepare(found: &Found, gateway: &Gateway) -> std::io::Result<Prepared> {
    let folder = tempfile::Builder::new().prefix("saffron-client-").tempdir()?;
    let argv = preset(found.client()).prepare(found, gateway, folder.path())?;
    Ok(Prepared { argv, folder })
}

/// What the session used, from the client's structured output.
pub fn usage(client: Client, stdout: &str) -> Option<Usage> {
    preset(client).usage(stdout)
}

/// What the client last said, or the error it ended on, from its structured output.
pub fn last_words(client: Client, stdout: &str) -> Option<String> {
    preset(client).last_words(stdout)
}

/// Each line of `stdout` that is a JSON event, last first.
fn events_backwards(stdout: &str) -> impl Iterator<Item = serde_json::Value> + '_ {
    stdout.lines().rev().filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
}

/// A TOML string (a `-c key=value` value): JSON's quoting is valid TOML.
fn toml_string(value: &str) -> String {
    serde_json::Value::String(value.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert!(numbers("2.1.332") >= numbers("2.1.332"));
        assert!(numbers("2.10.0") > numbers("2.9.99"));
        assert!(numbers("2.1.40") < numbers("2.1.332"));
        assert_eq!(numbers("x.1"), None);
        assert_eq!(numbers(""), None);
    }

    /// A stand-in `codex` that prints `version` and `help` (its `exec --help`).
    #[cfg(unix)]
    fn stand_in(folder: &Path, version: &str, help: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        let script = format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{version}'; exit 0; fi\ncat <<'HELP'\n{help}\nHELP\n"
        );
        let program = folder.join("codex");
        std::fs::write(&program, script).expect("stand-in");
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// A client as new as the proven one but without a flag the preset passes is refused, the
    /// flag named: a flag it ignored could leave it a shell.
    #[cfg(unix)]
    #[test]
    fn a_client_without_a_flag_the_preset_passes_is_refused() {
        let folder = tempfile::tempdir().expect("tempdir");
        let (_, flags) = preset(Client::Codex).help();
        let every_flag = flags.join("\n");
        stand_in(folder.path(), "codex-cli 0.200.1", &every_flag);
        let wanted = ClientPreset::new(Client::Codex);
        let found = find(&wanted, Some(folder.path().as_os_str().to_owned())).expect("fit");
        assert_eq!(found.version, "0.200.1");
        let without = flags.iter().filter(|flag| **flag != "--strict-config").copied().collect::<Vec<_>>().join("\n");
        // Another folder: a program rewritten right after it ran may still be busy.
        let other = tempfile::tempdir().expect("tempdir");
        stand_in(other.path(), "codex-cli 0.200.1", &without);
        let refused = find(&wanted, Some(other.path().as_os_str().to_owned())).expect_err("unfit");
        assert!(!refused.absent);
        assert!(refused.problem.contains("has no `--strict-config` flag"), "{}", refused.problem);
        assert!(refused.hint.contains("npm install -g @openai/codex"), "{}", refused.hint);
        let nowhere = tempfile::tempdir().expect("tempdir");
        let absent = find(&wanted, Some(nowhere.path().as_os_str().to_owned())).expect_err("absent");
        assert!(absent.absent && absent.problem.contains("`codex` (Codex) is not on PATH"), "{}", absent.problem);
    }

    #[test]
    fn toml_strings_are_quoted_and_escaped() {
        assert_eq!(toml_string("http://127.0.0.1:1/mcp"), "\"http://127.0.0.1:1/mcp\"");
        assert_eq!(toml_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}
