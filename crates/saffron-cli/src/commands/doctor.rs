//! `saffron doctor`: what a run needs, checked one line each, with how to get what is missing.
//!
//! The checks read the machine and the project (never a secret's value: an API key is named by
//! its variable, and said present or not). What no run can do without (a browser, a readable
//! config, a configured agent that cannot work) fails the doctor (exit 1); what only some runs
//! need, or what is started just before a run (an agent, the application at the base URL), is a
//! warning.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::project;
use crate::terminal::{err, out};

#[derive(Args)]
pub struct DoctorArgs {
    /// The application's base URL to check (default: $SAFFRON_BASE_URL, then `base_url` in saffron.toml).
    #[arg(long)]
    base_url: Option<String>,
}

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    /// Only some runs need it.
    Warn,
    /// A run needs it: the doctor fails.
    Missing,
}

/// One line of the doctor's report.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Check {
    status: Status,
    name: &'static str,
    detail: String,
    /// How to get what is missing.
    hint: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check { status: Status::Ok, name, detail: detail.into(), hint: None }
    }

    fn warn(name: &'static str, detail: impl Into<String>, hint: impl Into<String>) -> Check {
        Check { status: Status::Warn, name, detail: detail.into(), hint: Some(hint.into()) }
    }

    fn missing(name: &'static str, detail: impl Into<String>, hint: impl Into<String>) -> Check {
        Check { status: Status::Missing, name, detail: detail.into(), hint: Some(hint.into()) }
    }

    fn line(&self) -> String {
        let mark = match self.status {
            Status::Ok => "ok     ",
            Status::Warn => "warn   ",
            Status::Missing => "MISSING",
        };
        let mut line = format!("{mark} {:<9} {}", self.name, self.detail);
        if let Some(hint) = &self.hint {
            line.push_str(&format!("\n        {:<9} hint: {hint}", ""));
        }
        line
    }
}

pub fn run(args: DoctorArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let mut checks = vec![Check::ok("saffron", format!("version {}", env!("CARGO_PKG_VERSION")))];
    checks.push(project_check(&root));
    let config = match saffron_runner::session::load_config_checked(&root) {
        Ok((config, unknown)) if unknown.is_empty() => {
            checks.push(Check::ok("config", config_detail(&root)));
            Some(config)
        }
        Ok((config, unknown)) => {
            let keys: Vec<String> = unknown.iter().map(|unknown| unknown.key.clone()).collect();
            checks.push(Check::warn(
                "config",
                format!("{}: keys nothing reads: {}", config_detail(&root), keys.join(", ")),
                "`saffron check` names each with the closest known key",
            ));
            Some(config)
        }
        Err(error) => {
            checks.push(Check::missing("config", error.to_string(), "fix saffron.toml (`saffron check` shows where)"));
            None
        }
    };
    let config = config.unwrap_or_default();
    checks.push(browser_check(&config));
    let base_url = args.base_url.or_else(|| std::env::var("SAFFRON_BASE_URL").ok().filter(|url| !url.is_empty()));
    checks.push(base_url_check(base_url.or(config.base_url.clone()).as_deref()));
    checks.push(agent_check(&root, config.agent.as_ref()));
    checks.push(scenarios_check(&root));
    checks.push(editors_check());
    for check in &checks {
        out!("{}", check.line());
    }
    let missing = checks.iter().filter(|check| check.status == Status::Missing).count();
    if missing > 0 {
        err!("saffron doctor: {missing} thing(s) a run needs are missing");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn config_detail(root: &Path) -> String {
    let path = root.join("saffron.toml");
    if path.is_file() { format!("{} reads", path.display()) } else { "no saffron.toml: the defaults".to_owned() }
}

fn project_check(root: &Path) -> Check {
    if root.join("saffron.toml").is_file() || root.join(saffron_recording::layout::DIR).is_dir() {
        Check::ok("project", root.display().to_string())
    } else {
        Check::warn(
            "project",
            format!("no saffron.toml or .saffron folder here or above: {} is taken as the root", root.display()),
            "`saffron init` sets a project up",
        )
    }
}

fn browser_check(config: &saffron_runner::config::Config) -> Check {
    let remote = config.browser.url.trim();
    if !remote.is_empty() {
        return match answers(remote) {
            Ok(()) => Check::ok("browser", format!("the remote browser at {remote} answers")),
            Err(why) => Check::missing(
                "browser",
                format!("the remote browser at {remote} ({why})"),
                "start it with --remote-debugging-port, or remove `[browser] url`",
            ),
        };
    }
    let configured = Some(config.browser.path.trim()).filter(|path| !path.is_empty()).map(Path::new);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let found = runtime.ok().and_then(|runtime| runtime.block_on(saffron_browser::find_chromium(configured)).ok());
    match found {
        Some(path) => {
            let version = std::process::Command::new(&path)
                .arg("--version")
                .output()
                .ok()
                .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
                .filter(|version| !version.is_empty())
                .unwrap_or_else(|| "version unknown".to_owned());
            Check::ok("browser", format!("{} ({version})", path.display()))
        }
        None => Check::missing(
            "browser",
            "no Chromium found".to_owned(),
            format!(
                "install it (Debian: `apt-get install chromium`), or point ${} or `[browser] path` at one",
                saffron_browser::CHROMIUM_ENV
            ),
        ),
    }
}

/// Whether something listens at `url`'s host and port, within a second.
fn answers(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|_| "not a URL".to_owned())?;
    let host = parsed.host_str().ok_or_else(|| "no host".to_owned())?.trim_matches(['[', ']']).to_owned();
    let port = parsed.port_or_known_default().ok_or_else(|| "no port".to_owned())?;
    let addresses = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port)).map_err(|e| e.to_string())?;
    for address in addresses {
        if std::net::TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_ok() {
            return Ok(());
        }
    }
    Err("does not answer within a second".to_owned())
}

fn base_url_check(base_url: Option<&str>) -> Check {
    match base_url {
        None => Check::warn(
            "base URL",
            "none set".to_owned(),
            "`saffron run` needs one: --base-url, $SAFFRON_BASE_URL or `base_url` in saffron.toml (`saffron demo` needs none)",
        ),
        Some(url) => match answers(url) {
            Ok(()) => Check::ok("base URL", format!("{url} answers")),
            // The application is often started just before a run: a warning, not a missing part.
            Err(why) => Check::warn(
                "base URL",
                format!("{url} {why}"),
                "start the application before `saffron run`, or fix the URL",
            ),
        },
    }
}

fn on_path(program: &str) -> Option<std::path::PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths).map(|dir| dir.join(program)).find(|path| path.is_file())
}

fn agent_check(root: &Path, agent: Option<&saffron_agent::AgentConfig>) -> Check {
    let Some(agent) = agent else {
        let clients: Vec<&str> = ["claude", "codex"].into_iter().filter(|program| on_path(program).is_some()).collect();
        let seen = if clients.is_empty() { String::new() } else { format!(" ({} is on PATH)", clients.join(", ")) };
        return Check::warn(
            "agent",
            format!("none configured{seen}: scenarios never recorded are blocked, failed replays are red"),
            "add an [agent] table to saffron.toml (docs/agent.md)",
        );
    };
    // The key is looked up as a run looks it up (the environment, then .env), and only said
    // present or missing.
    let options = saffron_runner::session::options_with_env(root, Vec::new());
    match agent.resolve(&|name| (options.env)(name)) {
        Ok(saffron_agent::AgentSetup::BuiltIn(built_in)) => {
            let key = built_in.key_env.as_deref().map_or_else(String::new, |name| format!(", key in ${name}"));
            Check::ok("agent", format!("{} {}{key}", built_in.provider.name(), built_in.model))
        }
        Ok(saffron_agent::AgentSetup::External(saffron_agent::ExternalAgent {
            command: saffron_agent::AgentCommand::Client(wanted),
            ..
        })) => match saffron_mcp::client::find(&wanted, std::env::var_os("PATH")) {
            Ok(found) => Check::ok(
                "agent",
                format!(
                    "{} {} ({}), contained to Saffron's tools",
                    wanted.client.name(),
                    found.version,
                    found.path.display()
                ),
            ),
            Err(unusable) => Check::missing("agent", unusable.problem, unusable.hint),
        },
        Ok(saffron_agent::AgentSetup::External(external)) => {
            // A shell line's program is its first word.
            let program = match &external.command {
                saffron_agent::AgentCommand::Shell(line) => {
                    line.split_whitespace().next().unwrap_or_default().to_owned()
                }
                saffron_agent::AgentCommand::Argv(argv) => argv.first().cloned().unwrap_or_default(),
                saffron_agent::AgentCommand::Client(wanted) => wanted.client.program().to_owned(),
            };
            match on_path(&program).or_else(|| Some(std::path::PathBuf::from(&program)).filter(|path| path.is_file())) {
                Some(path) => Check::ok("agent", format!("the program {}", path.display())),
                None => Check::missing(
                    "agent",
                    format!("the program `{program}` is not on PATH"),
                    "install it, or fix `command` in [agent]",
                ),
            }
        }
        Err(error) => Check::missing("agent", error.to_string(), error.hint()),
    }
}

fn scenarios_check(root: &Path) -> Check {
    let (snapshot, problems) = project::load_index(root);
    let scenarios = snapshot.scenarios();
    let files = snapshot.files().count();
    if scenarios.is_empty() {
        return Check::warn(
            "scenarios",
            format!("no scenario under {}", root.display()),
            "write a .feature file (or `saffron author`); `saffron demo` shows one",
        );
    }
    let detail = format!("{} scenario(s) in {files} file(s)", scenarios.len());
    if problems.is_empty() {
        Check::ok("scenarios", detail)
    } else {
        Check::warn("scenarios", format!("{detail}, {} problem(s)", problems.len()), "`saffron check` lists them")
    }
}

fn editors_check() -> Check {
    let editors: Vec<&str> = [("code", "VS Code"), ("nvim", "Neovim"), ("idea", "IntelliJ IDEA")]
        .into_iter()
        .filter(|(program, _)| on_path(program).is_some())
        .map(|(_, name)| name)
        .collect();
    if editors.is_empty() {
        Check::warn("editors", "none found on PATH", "each editor's setup is in docs/editors/")
    } else {
        Check::ok("editors", format!("{} on PATH (setup: docs/editors/)", editors.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_reads_as_one_line_and_its_hint_below() {
        assert_eq!(
            Check::ok("browser", "/usr/bin/chromium (Chromium 131)").line(),
            "ok      browser   /usr/bin/chromium (Chromium 131)"
        );
        let missing = Check::missing("browser", "no Chromium found", "install it");
        assert_eq!(missing.line(), "MISSING browser   no Chromium found\n                  hint: install it");
    }

    #[test]
    fn a_base_url_that_does_not_answer_or_none_is_a_warning() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
        assert_eq!(base_url_check(Some(&format!("http://127.0.0.1:{closed}"))).status, Status::Warn);
        assert_eq!(base_url_check(None).status, Status::Warn);
        let open = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://127.0.0.1:{}", open.local_addr().expect("addr").port());
        assert_eq!(base_url_check(Some(&url)).status, Status::Ok);
    }
}
