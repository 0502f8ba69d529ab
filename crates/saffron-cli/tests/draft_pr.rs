//! `saffron export --branch`: the proposals, and nothing else, pushed as a new branch on the
//! commit a reviewer has, and a draft pull request through `gh`. Real git with a local bare
//! `origin`; a stand-in `gh` on PATH that answers `pr create` as the real one does and records
//! its arguments and the description it was given.

use crate::support;

use std::path::Path;

use support::agent::text;
use support::ci::{ACTIONS_PUSH, PROPOSAL, Repaired, git, path_with, saffron, stand_in_gh};

const BRANCH: &str = "saffron/heal-4242";
/// A machine where nobody configured git (a CI runner): no user name or email.
const UNCONFIGURED_GIT: [(&str, &str); 2] = [("GIT_CONFIG_GLOBAL", "/dev/null"), ("GIT_CONFIG_NOSYSTEM", "1")];

#[test]
fn the_branch_holds_the_proposals_only_on_the_tested_commit_and_gh_opens_a_draft() {
    let repaired = Repaired::new();
    let ci = &repaired.ci;
    let tested = git(ci, &["rev-parse", "HEAD"]);
    let status_before = git(ci, &["status", "--porcelain", "--untracked-files=all"]);
    let tools = tempfile::tempdir().expect("a folder");
    let (bin, log) = stand_in_gh(tools.path());
    let path = path_with(&bin);
    let mut env: Vec<(&str, &str)> = ACTIONS_PUSH.to_vec();
    env.extend([("PATH", path.as_str()), UNCONFIGURED_GIT[0], UNCONFIGURED_GIT[1]]);
    let out = tools.path().join("saffron-bundle.zip");
    let out = out.display().to_string();

    // Names a reviewer would paste into a shell are refused before anything is written.
    let hostile = saffron(ci, &["export", "--out", &out, "--branch", "heal;rm -rf ~"], &env);
    assert_eq!(hostile.status.code(), Some(2), "{}", text(&hostile));
    assert!(!Path::new(&out).exists(), "nothing was written");

    let export = saffron(ci, &["export", "--out", &out, "--branch", BRANCH], &env);
    let said = text(&export);
    assert_eq!(export.status.code(), Some(0), "{said}");
    assert!(said.contains("opened the draft pull request https://github.example/acme/shop/pull/7"), "{said}");

    // On origin: one commit whose parent is the tested commit, holding the proposal only.
    let origin = repaired.origin.folder.path().join("origin.git");
    let tip = git(&origin, &["rev-parse", &format!("refs/heads/{BRANCH}")]);
    assert_eq!(git(&origin, &["rev-parse", &format!("{tip}^")]), tested);
    assert_eq!(git(&origin, &["diff-tree", "--no-commit-id", "--name-only", "-r", &tip]), PROPOSAL);
    assert_eq!(git(&origin, &["show", &format!("{tip}:{PROPOSAL}")]).into_bytes(), trimmed(&repaired.proposal));
    assert_eq!(
        git(&origin, &["log", "-1", "--format=%an <%ae>", &tip]),
        "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"
    );
    // The CI checkout was neither switched nor staged.
    assert_eq!(git(ci, &["rev-parse", "HEAD"]), tested);
    assert_eq!(git(ci, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
    assert_eq!(git(ci, &["status", "--porcelain", "--untracked-files=all"]), status_before);

    // gh was asked for a draft into the branch the run tested, with a description of data.
    let asked = std::fs::read_to_string(&log).expect("gh was called");
    let asked: Vec<&str> = asked.lines().collect();
    assert_eq!(&asked[..8], ["pr", "create", "--draft", "--base", "main", "--head", BRANCH, "--title"], "{asked:?}");
    let body = std::fs::read_to_string(format!("{}.body", log.display())).expect("the description");
    assert!(body.contains("[the CI run](https://github.example/acme/shop/actions/runs/4242/attempts/1)"), "{body}");
    assert!(
        body.contains("```diff\nWhen I save the order\n- [1] click button \"Save order\""),
        "the action changes are fenced: {body}"
    );
    assert!(body.contains(&format!("git fetch origin '{BRANCH}' && git switch '{BRANCH}'")), "{body}");

    // The reviewer fetches the branch the description names, accepts, and replays green with no
    // provider request.
    let reviewer = repaired.origin.clone("reviewer", &repaired.password());
    git(&reviewer, &["fetch", "-q", "origin", BRANCH]);
    git(&reviewer, &["switch", "-q", "-c", BRANCH, "FETCH_HEAD"]);
    assert_eq!(std::fs::read(reviewer.join(PROPOSAL)).expect("on the branch"), repaired.proposal);
    let demo_url = repaired.demo.url();
    let accept = saffron(&reviewer, &["accept", "new-order/an-order-needs-a-customer", "--base-url", &demo_url], &[]);
    assert_eq!(accept.status.code(), Some(0), "{}", text(&accept));
    support::agent::configure_agent(&reviewer, "anthropic", &repaired.server, support::ci::TIMEOUTS);
    let requests = repaired.server.requests().len();
    let target = support::agent::scenario_at(&reviewer, "features/new_order.saffron", support::ci::NEEDS_CUSTOMER);
    let run = saffron(&reviewer, &["run", "--base-url", &demo_url, &target], &[]);
    assert!(text(&run).contains("1 scenario(s): 1 green"), "{}", text(&run));
    assert_eq!(repaired.server.requests().len(), requests, "the replay asked the agent");

    // Never onto a branch that exists: refused, nothing pushed.
    let again = saffron(ci, &["export", "--out", &out, "--branch", BRANCH], &env);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(text(&again).contains(&format!("the branch {BRANCH} exists on origin")), "{}", text(&again));
    assert_eq!(git(&origin, &["rev-parse", &format!("refs/heads/{BRANCH}")]), tip);

    // gh refusing: the branch is pushed and the exit is 1, the one meaning of 1.
    let mut failing = env.clone();
    failing.push(("GH_FAIL", "1"));
    let refused = saffron(ci, &["export", "--out", &out, "--branch", "saffron/heal-4242-b"], &failing);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(text(&refused).contains("is pushed, but the pull request could not be opened"), "{}", text(&refused));
    git(&origin, &["rev-parse", "--verify", "refs/heads/saffron/heal-4242-b"]);

    // Off GitHub: the branch is pushed and the description written beside the bundle.
    let plain = [("PATH", path.as_str())];
    let elsewhere = saffron(ci, &["export", "--out", &out, "--branch", "saffron/heal-local"], &plain);
    assert_eq!(elsewhere.status.code(), Some(0), "{}", text(&elsewhere));
    let described = tools.path().join("saffron-pull-request.md");
    assert!(std::fs::read_to_string(&described).expect("the description").contains("## Saffron: 1 repair(s)"));
}

/// A pull request build: CI tested a merge commit whose second parent is the pull request's
/// head, in a shallow checkout that lacks the head. The branch is built on the head (fetched by
/// its hash), not on the merge, so the base branch's changes stay out of it.
#[test]
fn on_a_pull_request_the_branch_starts_on_its_head_fetched_into_a_shallow_checkout() {
    let repaired = Repaired::new();
    let ci = &repaired.ci;
    let origin = repaired.origin.folder.path().join("origin.git");
    // The pull request's branch, and main moving on meanwhile.
    git(ci, &["switch", "-q", "-c", "fix-cart"]);
    std::fs::write(ci.join("NOTES.md"), "fix\n").expect("write");
    git(ci, &["add", "NOTES.md"]);
    git(ci, &["commit", "-q", "-m", "the fix"]);
    git(ci, &["push", "-q", "origin", "fix-cart"]);
    let head = git(ci, &["rev-parse", "HEAD"]);
    git(ci, &["switch", "-q", "main"]);
    std::fs::write(ci.join("BASE.md"), "base moved\n").expect("write");
    git(ci, &["add", "BASE.md"]);
    git(ci, &["commit", "-q", "-m", "main moves on"]);
    git(ci, &["push", "-q", "origin", "main"]);
    // GitHub's refs/pull/7/merge: main merged with the head.
    git(ci, &["merge", "-q", "--no-ff", "fix-cart", "-m", "Merge fix-cart into main"]);
    git(ci, &["push", "-q", "origin", "HEAD:refs/heads/pull-7-merge"]);

    let shallow =
        repaired.origin.clone_with("shallow", &repaired.password(), &["--depth", "1", "--branch", "pull-7-merge"]);
    let lacks = std::process::Command::new("git")
        .args(["cat-file", "-e", &format!("{head}^{{commit}}")])
        .current_dir(&shallow)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("git runs");
    assert!(!lacks.success(), "the shallow checkout lacks the pull request's head");
    std::fs::create_dir_all(shallow.join(PROPOSAL).parent().expect("a folder")).expect("mkdir");
    std::fs::write(shallow.join(PROPOSAL), &repaired.proposal).expect("the CI run's proposal");
    let tools = tempfile::tempdir().expect("a folder");
    let (bin, _log) = stand_in_gh(tools.path());
    let event = tools.path().join("event.json");
    std::fs::write(
        &event,
        format!("{{\"pull_request\": {{\"head\": {{\"ref\": \"fix-cart\", \"sha\": \"{head}\"}}}}}}"),
    )
    .expect("event");
    let path = path_with(&bin);
    let event_path = event.display().to_string();
    let env = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_RUN_ID", "77"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_HEAD_REF", "fix-cart"),
        ("GITHUB_REF_NAME", "7/merge"),
        ("GITHUB_EVENT_PATH", event_path.as_str()),
        ("PATH", path.as_str()),
    ];
    let out = tools.path().join("saffron-bundle.zip").display().to_string();
    let export = saffron(&shallow, &["export", "--out", &out, "--branch", "saffron/heal-77"], &env);
    assert_eq!(export.status.code(), Some(0), "{}", text(&export));
    let tip = git(&origin, &["rev-parse", "refs/heads/saffron/heal-77"]);
    assert_eq!(git(&origin, &["rev-parse", &format!("{tip}^")]), head, "built on the pull request's head");
    assert_eq!(git(&origin, &["diff-tree", "--no-commit-id", "--name-only", "-r", &tip]), PROPOSAL);
    let tree = git(&origin, &["ls-tree", "--name-only", &tip]);
    assert!(!tree.lines().any(|name| name == "BASE.md"), "the base branch's change stays out: {tree}");
}

fn trimmed(bytes: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(bytes).trim().as_bytes().to_vec()
}
