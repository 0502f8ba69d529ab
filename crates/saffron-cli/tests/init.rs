//! `saffron init` on temporary projects, run as a user runs it: twice must change nothing, and
//! whatever the user had in `.gitignore`, `AGENTS.md`, `CLAUDE.md` and the MCP configs stays
//! byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A fresh, empty project folder.
fn project(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("saffron-init-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("mkdir");
    root
}

/// Runs `saffron init` in `root`: exit code and stdout.
fn init(root: &Path) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_saffron")).arg("init").current_dir(root).output().expect("runs");
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    (output.status.code().unwrap_or(-1), stdout)
}

/// Every file under `root` with its bytes.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).expect("read");
                out.insert(path.strip_prefix(root).expect("inside").to_path_buf(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// The status word init printed for a file.
fn status_of<'a>(stdout: &'a str, path: &str) -> &'a str {
    stdout
        .lines()
        .find(|line| line.split_whitespace().nth(1).is_some_and(|p| p.trim_end_matches(':') == path))
        .and_then(|line| line.split_whitespace().next())
        .unwrap_or_else(|| panic!("no line for {path} in:\n{stdout}"))
}

const USER_MCP: &str = "{\n    \"mcpServers\": {\n        \"github\": {\n            \"command\": \"gh-mcp\",\n            \
                        \"args\": [\"--verbose\"],\n            \"env\": { \"TOKEN\": \"é\" }\n        }\n    },\n    \
                        \"zzz\": 1\n}\n";
const USER_AGENTS: &str = "# Agents\n\nRun `make test` before committing.\n";
const USER_GITIGNORE: &str = "target/\n# my notes\nnode_modules";

#[test]
fn a_second_init_changes_nothing_and_user_content_survives() {
    let root = project("twice");
    std::fs::write(root.join(".mcp.json"), USER_MCP).expect("write");
    std::fs::write(root.join("AGENTS.md"), USER_AGENTS).expect("write");
    std::fs::write(root.join(".gitignore"), USER_GITIGNORE).expect("write");

    let (code, first) = init(&root);
    assert_eq!(code, 0, "{first}");
    assert_eq!(status_of(&first, "saffron.toml"), "created");
    assert_eq!(status_of(&first, ".gitignore"), "updated");
    assert_eq!(status_of(&first, "AGENTS.md"), "updated");
    assert_eq!(status_of(&first, "CLAUDE.md"), "skipped");
    assert_eq!(status_of(&first, ".mcp.json"), "updated");
    assert_eq!(status_of(&first, ".cursor/mcp.json"), "created");
    assert_eq!(status_of(&first, ".vscode/mcp.json"), "created");
    assert_eq!(status_of(&first, ".claude/skills/saffron/SKILL.md"), "created");
    assert_eq!(status_of(&first, ".agents/skills/saffron/references/anti-patterns.md"), "created");
    assert!(first.contains("codex mcp add saffron -- saffron mcp"), "{first}");

    // saffron.toml: documented defaults, accept off.
    let config = read(&root, "saffron.toml");
    assert!(config.contains("\n[mcp]\n") && config.contains("\nallow_accept = false\n"), "{config}");
    assert!(config.contains("base_url = ") && config.contains("[hooks]") && config.contains("[timeouts]"));

    // .gitignore: the user's bytes, then the three lines.
    let gitignore = read(&root, ".gitignore");
    assert!(gitignore.starts_with(USER_GITIGNORE), "{gitignore:?}");
    for line in [".saffron/reports/", ".saffron/artifacts/", ".saffron/.lock"] {
        assert_eq!(gitignore.lines().filter(|l| *l == line).count(), 1, "{line} in {gitignore:?}");
    }

    // AGENTS.md: the user's text, then one marked block.
    let agents = read(&root, "AGENTS.md");
    assert!(agents.starts_with(USER_AGENTS), "{agents}");
    assert_eq!(agents.matches("<!-- saffron:begin -->").count(), 1);
    assert!(agents.trim_end().ends_with("<!-- saffron:end -->"));
    assert!(!root.join("CLAUDE.md").exists(), "CLAUDE.md is only edited when it exists");

    // .mcp.json: the user's server untouched, text and order; ours added after it.
    let mcp = read(&root, ".mcp.json");
    let github_end = USER_MCP.find("        }\n    },").expect("fixture") + "        }".len();
    assert!(mcp.starts_with(&USER_MCP[..github_end]), "{mcp}");
    assert!(mcp.ends_with(&USER_MCP[github_end..]), "{mcp}");
    let value: Value = serde_json::from_str(&mcp).expect("valid JSON");
    assert_eq!(value["mcpServers"]["saffron"], serde_json::json!({"command": "saffron", "args": ["mcp"]}));
    assert_eq!(value["mcpServers"]["github"]["env"]["TOKEN"], "é");
    assert!(mcp.find("\"github\"") < mcp.find("\"saffron\""));

    // The other hosts, each in its own schema.
    let cursor: Value = serde_json::from_str(&read(&root, ".cursor/mcp.json")).expect("json");
    assert_eq!(cursor["mcpServers"]["saffron"], serde_json::json!({"command": "saffron", "args": ["mcp"]}));
    let vscode: Value = serde_json::from_str(&read(&root, ".vscode/mcp.json")).expect("json");
    assert_eq!(
        vscode["servers"]["saffron"],
        serde_json::json!({"type": "stdio", "command": "saffron", "args": ["mcp"]})
    );

    // The skill, in both agent folders, identical.
    for dir in [".claude/skills/saffron", ".agents/skills/saffron"] {
        let skill = read(&root, &format!("{dir}/SKILL.md"));
        assert!(skill.starts_with("---\nname: saffron\ndescription: "), "{skill}");
        for reference in ["wording", "dialect", "values", "review-loop", "anti-patterns"] {
            assert!(root.join(format!("{dir}/references/{reference}.md")).is_file(), "{dir} {reference}");
        }
    }
    assert_eq!(read(&root, ".claude/skills/saffron/SKILL.md"), read(&root, ".agents/skills/saffron/SKILL.md"));

    // The second run: nothing to do, byte for byte.
    let before = files(&root);
    let (code, second) = init(&root);
    assert_eq!(code, 0, "{second}");
    for line in second.lines().skip(1).filter(|line| !line.starts_with("Codex")) {
        let word = line.split_whitespace().next().unwrap_or_default();
        assert!(word == "unchanged" || line.starts_with("skipped   CLAUDE.md"), "second run did something: {line}");
    }
    assert_eq!(files(&root), before);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn claude_md_gets_the_block_only_when_present_and_old_blocks_are_replaced() {
    let root = project("claude");
    let claude = "# Claude\r\n\r\nBe brief.\r\n";
    std::fs::write(root.join("CLAUDE.md"), claude).expect("write");
    let agents = "Intro.\n\n<!-- saffron:begin -->\nan old block\n<!-- saffron:end -->\n\nMy own notes after it.\n";
    std::fs::write(root.join("AGENTS.md"), agents).expect("write");

    let (code, first) = init(&root);
    assert_eq!(code, 0, "{first}");
    assert_eq!(status_of(&first, "CLAUDE.md"), "updated");
    let updated = read(&root, "CLAUDE.md");
    assert!(updated.starts_with(claude), "{updated:?}");
    assert!(updated.contains("<!-- saffron:begin -->\r\n"), "the file's CRLF line endings are kept: {updated:?}");
    assert!(!updated.replace("\r\n", "").contains('\n'), "{updated:?}");

    let agents_now = read(&root, "AGENTS.md");
    assert!(agents_now.starts_with("Intro.\n\n<!-- saffron:begin -->\n"), "{agents_now}");
    assert!(agents_now.ends_with("<!-- saffron:end -->\n\nMy own notes after it.\n"), "{agents_now}");
    assert!(!agents_now.contains("an old block"));
    assert!(agents_now.contains("find_steps"));

    let before = files(&root);
    let (code, _) = init(&root);
    assert_eq!(code, 0);
    assert_eq!(files(&root), before);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn configs_it_cannot_edit_safely_are_left_alone_and_reported() {
    let root = project("problems");
    std::fs::create_dir_all(root.join(".vscode")).expect("mkdir");
    let broken = "{ \"servers\": { \"x\": }\n";
    std::fs::write(root.join(".vscode/mcp.json"), broken).expect("write");
    // A saffron server the user pointed at their own build stays as it is.
    let custom = "{\"mcpServers\":{\"saffron\":{\"command\":\"/opt/saffron/bin/saffron\",\"args\":[\"mcp\"]}}}";
    std::fs::write(root.join(".mcp.json"), custom).expect("write");
    std::fs::write(root.join("saffron.toml"), "base_url = \"http://localhost:3000\"\n").expect("write");

    let (code, stdout) = init(&root);
    assert_eq!(code, 2, "a file that could not be done is exit 2: {stdout}");
    assert_eq!(status_of(&stdout, ".vscode/mcp.json"), "PROBLEM");
    assert!(stdout.contains("not valid JSON at 1:21"), "{stdout}");
    assert_eq!(read(&root, ".vscode/mcp.json"), broken);
    assert_eq!(status_of(&stdout, ".mcp.json"), "unchanged");
    assert_eq!(read(&root, ".mcp.json"), custom);
    assert_eq!(status_of(&stdout, "saffron.toml"), "unchanged");
    assert_eq!(read(&root, "saffron.toml"), "base_url = \"http://localhost:3000\"\n");
    // Everything else was still done.
    assert_eq!(status_of(&stdout, ".cursor/mcp.json"), "created");
    assert_eq!(status_of(&stdout, "AGENTS.md"), "created");
    let _ = std::fs::remove_dir_all(&root);
}

/// With no agent configured and Claude Code and Codex on PATH, init offers both (the line to
/// add), and sets nothing; with an agent configured, or without the clients, it says nothing of
/// them. A `claude` too old for the preset is named as unfit.
#[test]
fn init_offers_the_clients_on_path_when_no_agent_is_configured() {
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients/node_modules/.bin");
    if !clients.join("claude").is_file() || !clients.join("codex").is_file() {
        eprintln!("skipped: the clients are not installed in tests/clients (`npm ci --prefix tests/clients`)");
        return;
    }
    // Codex's launcher is a Node script: Node's folder goes on PATH with it.
    let node = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .find(|folder| folder.join("node").is_file())
        .expect("node is on PATH");
    let init_with_path = |root: &Path, folders: &[&Path]| -> String {
        let output = Command::new(env!("CARGO_BIN_EXE_saffron"))
            .arg("init")
            .current_dir(root)
            .env("PATH", std::env::join_paths(folders).expect("PATH"))
            .output()
            .expect("runs");
        String::from_utf8(output.stdout).expect("utf-8")
    };
    let root = project("offer");
    let said = init_with_path(&root, &[&clients, &node]);
    assert!(said.contains("Claude Code 2.1.") && said.contains("program = \"claude\""), "{said}");
    assert!(said.contains("Codex 0.171.") && said.contains("program = \"codex\""), "{said}");
    assert!(!read(&root, "saffron.toml").contains("program ="), "offered, not set");
    let empty = root.join("no-programs");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let said = init_with_path(&root, &[&empty]);
    assert!(!said.contains("Claude Code") && !said.contains("Codex 0"), "nothing to offer without them: {said}");
    // A `claude` that is not the one the preset was proven with.
    let old = root.join("old-claude");
    std::fs::create_dir_all(&old).expect("mkdir");
    std::fs::write(old.join("claude"), "#!/bin/sh\necho '1.0.0 (Claude Code)'\n").expect("stand-in");
    std::fs::set_permissions(old.join("claude"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let said = init_with_path(&root, &[&old]);
    assert!(said.contains("Claude Code cannot record for Saffron") && said.contains("older than"), "{said}");
    std::fs::write(root.join("saffron.toml"), "[agent]\nprovider = \"anthropic\"\nmodel = \"m\"\n").expect("config");
    let said = init_with_path(&root, &[&clients, &node]);
    assert!(!said.contains("program = \"claude\"") && !said.contains("program = \"codex\""), "configured already");
    let _ = std::fs::remove_dir_all(&root);
}
