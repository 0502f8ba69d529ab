//! The CI loop's tests: real git with a local bare repository as `origin` and clones of it, and
//! a run in a "CI" clone that repairs `relocated-save` with the scripted agent and files a
//! proposal.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use saffron_agent::testing::{FakeServer, Wire};
use saffron_demo::{DemoConfig, DemoServer};
use serde_json::json;

use super::agent::{Plans, Seen, check_on, click, configure_agent, repaired, scenario_at, scripted, step, text};

pub const NEEDS_CUSTOMER: &str = "An order needs a customer";
pub const PROPOSAL: &str = ".saffron/proposals/new-order/an-order-needs-a-customer.json";
pub const TIMEOUTS: &str = "[timeouts]\naction_ms = 2000\nassertion_ms = 2000\nnavigation_ms = 10000\n";

/// The environment GitHub Actions gives a push build of `main`, run 4242.
pub const ACTIONS_PUSH: [(&str, &str); 8] = [
    ("GITHUB_ACTIONS", "true"),
    ("GITHUB_RUN_ID", "4242"),
    ("GITHUB_RUN_ATTEMPT", "1"),
    ("GITHUB_SERVER_URL", "https://github.example"),
    ("GITHUB_REPOSITORY", "acme/shop"),
    ("GITHUB_EVENT_NAME", "push"),
    ("GITHUB_REF_TYPE", "branch"),
    ("GITHUB_REF_NAME", "main"),
];

pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Saffron Test")
        .env("GIT_AUTHOR_EMAIL", "test@saffron.invalid")
        .env("GIT_COMMITTER_NAME", "Saffron Test")
        .env("GIT_COMMITTER_EMAIL", "test@saffron.invalid")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// The real binary in `dir`, with GitHub Actions' variables of the machine left out and `env`
/// set.
pub fn saffron(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_saffron"));
    command.args(args).current_dir(dir).env_remove("DEMO_PASSWORD");
    for (name, _) in ACTIONS_PUSH {
        command.env_remove(name);
    }
    for name in ["GITHUB_EVENT_PATH", "GITHUB_HEAD_REF", "GITHUB_BASE_REF", "GH_TOKEN"] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    command.output().expect("saffron runs")
}

/// A bare `origin` holding the example project, and clones of it by name.
pub struct Origin {
    pub folder: tempfile::TempDir,
}

impl Origin {
    pub fn new() -> Origin {
        let folder = tempfile::tempdir().expect("a folder");
        let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let seed = folder.path().join("seed");
        super::copy_dir(&repository.join("features"), &seed.join("features"));
        super::copy_dir(&repository.join(".saffron/cache"), &seed.join(".saffron/cache"));
        git(folder.path(), &["init", "-q", "--bare", "-b", "main", "origin.git"]);
        git(&seed, &["init", "-q", "-b", "main"]);
        git(&seed, &["add", "-A"]);
        git(&seed, &["commit", "-q", "-m", "the example project"]);
        git(&seed, &["push", "-q", &folder.path().join("origin.git").display().to_string(), "main"]);
        let _ = std::fs::remove_dir_all(&seed);
        Origin { folder }
    }

    pub fn url(&self) -> String {
        self.folder.path().join("origin.git").display().to_string()
    }

    pub fn clone(&self, name: &str, password: &str) -> PathBuf {
        self.clone_with(name, password, &[])
    }

    pub fn clone_with(&self, name: &str, password: &str, options: &[&str]) -> PathBuf {
        let path = self.folder.path().join(name);
        let url = format!("file://{}", self.url());
        let mut args = vec!["clone", "-q"];
        args.extend_from_slice(options);
        args.extend_from_slice(&[url.as_str(), name]);
        git(self.folder.path(), &args);
        // The remote as CI checkouts name it: the repository's own URL, not file://.
        git(&path, &["remote", "set-url", "origin", &self.url()]);
        std::fs::write(path.join(".env"), format!("DEMO_PASSWORD={password}\n")).expect("write .env");
        path
    }
}

/// The scripted agent's repair of "An order needs a customer" under `relocated-save`: it saves
/// with the button the page has now, and checks the Then step as recorded.
pub fn relocated_save_repair() -> Vec<super::agent::Op> {
    vec![
        step(7),
        click("button \"Place order\""),
        step(8),
        check_on("alert", json!({ "check": "text", "text": "Customer is required" })),
        repaired("locator", &[]),
    ]
}

/// The demo with `relocated-save`, and a CI clone whose run repaired "An order needs a customer"
/// and filed its proposal.
pub struct Repaired {
    pub runtime: tokio::runtime::Runtime,
    pub demo: DemoServer,
    pub origin: Origin,
    pub ci: PathBuf,
    pub server: FakeServer,
    pub proposal: Vec<u8>,
}

impl Repaired {
    pub fn new() -> Repaired {
        let runtime = super::agent::runtime();
        let mut config = DemoConfig::default();
        config.drift.insert(saffron_demo::Drift::RelocatedSave);
        let demo = runtime.block_on(DemoServer::start(config)).expect("demo");
        let origin = Origin::new();
        let ci = origin.clone("ci", &demo.config().password);
        let mut plans = Plans::new();
        plans.insert(format!("{NEEDS_CUSTOMER} (repair)"), relocated_save_repair());
        let server = runtime.block_on(scripted(Wire::Anthropic, plans, Seen::default()));
        configure_agent(&ci, "anthropic", &server, TIMEOUTS);
        let target = scenario_at(&ci, "features/new_order.saffron", NEEDS_CUSTOMER);
        let run = saffron(&ci, &["run", "--base-url", &demo.url(), &target], &[]);
        assert!(text(&run).contains("1 yellow"), "{}", text(&run));
        let proposal = std::fs::read(ci.join(PROPOSAL)).expect("the proposal");
        Repaired { runtime, demo, origin, ci, server, proposal }
    }

    pub fn password(&self) -> String {
        self.demo.config().password.clone()
    }
}

/// Everything under `.saffron/` but the recordings: what an import may write.
pub fn written_by_import(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    super::agent::every_file(&root.join(".saffron"), &mut files);
    let mut names: Vec<String> = files
        .iter()
        .filter_map(|path| path.strip_prefix(root).ok().map(|p| p.to_string_lossy().into_owned()))
        .filter(|path| !path.starts_with(".saffron/cache/"))
        .collect();
    names.sort();
    names
}

/// A folder with a `gh` that logs its arguments into `log` and answers as the real one does:
/// `pr create` with a URL (or as GitHub refuses when workflows may not open pull requests, with
/// `GH_FAIL` set), `run list` with the JSON in the file `GH_RUNS`, `run download` by copying the
/// file `GH_BUNDLE` into `<dir>/saffron-bundle/` (one folder per artifact, as gh lays them out).
pub fn stand_in_gh(folder: &Path) -> (PathBuf, PathBuf) {
    let bin = folder.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let log = folder.join("gh.log");
    let script = format!(
        "#!/bin/sh\n\
         if [ \"$1\" = \"--version\" ]; then echo 'gh version 2.63.0 (stand-in)'; exit 0; fi\n\
         printf '%s\\n' \"$@\" >> '{log}'\n\
         if [ \"$1 $2\" = \"pr create\" ]; then\n\
           while [ $# -gt 0 ]; do if [ \"$1\" = \"--body-file\" ]; then cp \"$2\" '{log}.body'; fi; shift; done\n\
           if [ -n \"$GH_FAIL\" ]; then echo 'pull request create failed: GraphQL: GitHub Actions is not permitted to create or approve pull requests (createPullRequest)' >&2; exit 1; fi\n\
           echo 'https://github.example/acme/shop/pull/7'; exit 0\n\
         fi\n\
         if [ \"$1 $2\" = \"run list\" ]; then cat \"$GH_RUNS\"; exit 0; fi\n\
         if [ \"$1 $2\" = \"run download\" ]; then\n\
           dir=''; while [ $# -gt 0 ]; do if [ \"$1\" = \"--dir\" ]; then dir=\"$2\"; fi; shift; done\n\
           echo \"$dir\" > '{log}.dir'\n\
           mkdir -p \"$dir/saffron-bundle\" && cp \"$GH_BUNDLE\" \"$dir/saffron-bundle/saffron-bundle.zip\"; exit 0\n\
         fi\n\
         echo \"unknown command $1\" >&2; exit 1\n",
        log = log.display()
    );
    let path = bin.join("gh");
    std::fs::write(&path, script).expect("write gh");
    let mut permissions = std::fs::metadata(&path).expect("gh").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).expect("chmod gh");
    (bin, log)
}

/// PATH with `bin` first.
pub fn path_with(bin: &Path) -> String {
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}
