//! Where a bundle comes from: the branch and commit a reviewer has, and the CI run (GitHub
//! Actions' environment) with its attempt and link. Worked out from values the caller reads
//! (the environment, the event file, git's answers), so every rule is tested without a CI.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The CI run a bundle was made in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CiRun {
    /// `github-actions`.
    pub provider: String,
    /// The run's id, as `gh run download` takes it.
    pub id: String,
    /// Which attempt of the run (a re-run is the same run, another attempt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<String>,
    /// The run's page, built from the CI's own environment (never from a page or a model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// The branch, commit and run a bundle records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub run: Option<CiRun>,
}

/// What git says of the checkout.
#[derive(Debug, Clone, Default)]
pub struct GitFacts {
    pub head: Option<String>,
    pub head_parents: Vec<String>,
    pub branch: Option<String>,
}

/// The provenance of a bundle made here. `env` reads an environment variable; `event` is the
/// GitHub event (the JSON file `GITHUB_EVENT_PATH` names), when there is one.
///
/// On a pull request build CI tested a merge commit nobody has: the commit recorded is the
/// pull request's head, and only when HEAD is a merge whose second parent is that head (a
/// workflow that checked out the head itself tested the head). A `pull_request_target` build
/// checked out the base branch: it records that branch and the commit checked out, never the
/// fork's.
pub fn provenance(env: &dyn Fn(&str) -> Option<String>, event: Option<&Value>, git: &GitFacts) -> Provenance {
    let var = |name: &str| env(name).filter(|value| !value.is_empty());
    if var("GITLAB_CI").as_deref() == Some("true") {
        return gitlab(&var, git);
    }
    if var("GITHUB_ACTIONS").as_deref() != Some("true") {
        return Provenance { branch: git.branch.clone(), commit: git.head.clone(), run: None };
    }
    let run = var("GITHUB_RUN_ID").map(|id| {
        let attempt = var("GITHUB_RUN_ATTEMPT");
        let link = match (var("GITHUB_SERVER_URL"), var("GITHUB_REPOSITORY")) {
            (Some(server), Some(repository)) => Some(match &attempt {
                Some(attempt) => format!("{server}/{repository}/actions/runs/{id}/attempts/{attempt}"),
                None => format!("{server}/{repository}/actions/runs/{id}"),
            }),
            _ => None,
        };
        CiRun { provider: "github-actions".into(), id, attempt, link }
    });
    let event_name = var("GITHUB_EVENT_NAME").unwrap_or_default();
    let pull_request = event.and_then(|event| event.get("pull_request"));
    let head_of_event = |field: &str| {
        pull_request
            .and_then(|pr| pr.get("head"))
            .and_then(|head| head.get(field))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let checked_out = git.head.clone().or_else(|| var("GITHUB_SHA"));
    let (branch, commit) = match event_name.as_str() {
        "pull_request_target" => (var("GITHUB_BASE_REF").or_else(|| var("GITHUB_REF_NAME")), checked_out),
        "pull_request" | "pull_request_review" | "pull_request_review_comment" => {
            // GITHUB_HEAD_REF is set for pull_request only; the review events carry the branch
            // in their payload. Never `<n>/merge`.
            let branch = var("GITHUB_HEAD_REF").or_else(|| head_of_event("ref"));
            let head = head_of_event("sha");
            let commit = match (&head, git.head_parents.as_slice()) {
                (Some(head), [_, second]) if second == head => Some(head.clone()),
                _ => checked_out,
            };
            (branch, commit)
        }
        _ => {
            let branch = match var("GITHUB_REF_TYPE").as_deref() {
                Some("branch") => var("GITHUB_REF_NAME"),
                _ => None,
            };
            (branch.or_else(|| git.branch.clone()), checked_out)
        }
    };
    Provenance { branch, commit, run }
}

/// GitLab CI: the pipeline is the run. A merged-results pipeline tested a merge commit; the
/// commit recorded is the merge request's source, which the reviewer has.
fn gitlab(var: &dyn Fn(&str) -> Option<String>, git: &GitFacts) -> Provenance {
    let run = var("CI_PIPELINE_ID").map(|id| CiRun {
        provider: "gitlab-ci".into(),
        id,
        attempt: None,
        link: var("CI_PIPELINE_URL"),
    });
    let checked_out = git.head.clone().or_else(|| var("CI_COMMIT_SHA"));
    match var("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME") {
        Some(branch) => {
            let source = var("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA");
            let commit = match (&source, git.head_parents.as_slice()) {
                (Some(source), [_, second]) if second == source => Some(source.clone()),
                _ => checked_out,
            };
            Provenance { branch: Some(branch), commit, run }
        }
        None => Provenance { branch: var("CI_COMMIT_BRANCH").or_else(|| git.branch.clone()), commit: checked_out, run },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name: &str| map.get(name).cloned()
    }

    fn actions(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        let mut pairs = vec![
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_RUN_ID", "9001"),
            ("GITHUB_RUN_ATTEMPT", "2"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "acme/shop"),
        ];
        pairs.extend_from_slice(extra);
        pairs
    }

    #[test]
    fn outside_ci_the_checkout_says_it() {
        let git = GitFacts { head: Some("aaa".into()), head_parents: vec!["p".into()], branch: Some("main".into()) };
        let found = provenance(&env(&[]), None, &git);
        assert_eq!(found, Provenance { branch: Some("main".into()), commit: Some("aaa".into()), run: None });
    }

    #[test]
    fn a_push_build_records_its_branch_commit_and_run_with_its_attempt() {
        let git = GitFacts { head: Some("abc".into()), head_parents: vec!["p".into()], branch: None };
        let pairs =
            actions(&[("GITHUB_EVENT_NAME", "push"), ("GITHUB_REF_TYPE", "branch"), ("GITHUB_REF_NAME", "main")]);
        let found = provenance(&env(&pairs), None, &git);
        assert_eq!(found.branch.as_deref(), Some("main"));
        assert_eq!(found.commit.as_deref(), Some("abc"));
        let run = found.run.expect("a run");
        assert_eq!(run.id, "9001");
        assert_eq!(run.link.as_deref(), Some("https://github.com/acme/shop/actions/runs/9001/attempts/2"));
    }

    #[test]
    fn a_pull_request_build_records_the_head_the_reviewer_has_not_the_merge_ci_tested() {
        let event = json!({ "pull_request": { "head": { "ref": "fix-cart", "sha": "head1" } } });
        let merge =
            GitFacts { head: Some("merge1".into()), head_parents: vec!["base1".into(), "head1".into()], branch: None };
        let pairs = actions(&[
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("GITHUB_HEAD_REF", "fix-cart"),
            ("GITHUB_REF_NAME", "7/merge"),
        ]);
        let found = provenance(&env(&pairs), Some(&event), &merge);
        assert_eq!((found.branch.as_deref(), found.commit.as_deref()), (Some("fix-cart"), Some("head1")));
        // A workflow that checked out the head itself: the head is what it tested.
        let head = GitFacts { head: Some("head1".into()), head_parents: vec!["older".into()], branch: None };
        assert_eq!(provenance(&env(&pairs), Some(&event), &head).commit.as_deref(), Some("head1"));
        // A merge whose second parent is not the head is not taken for one.
        let other = GitFacts { head: Some("m2".into()), head_parents: vec!["a".into(), "b".into()], branch: None };
        assert_eq!(provenance(&env(&pairs), Some(&event), &other).commit.as_deref(), Some("m2"));
    }

    #[test]
    fn a_review_build_reads_its_branch_from_the_event_and_a_target_build_records_the_base() {
        let event = json!({ "pull_request": { "head": { "ref": "fix-cart", "sha": "head1" } } });
        let merge =
            GitFacts { head: Some("merge1".into()), head_parents: vec!["base1".into(), "head1".into()], branch: None };
        let review = actions(&[("GITHUB_EVENT_NAME", "pull_request_review"), ("GITHUB_REF_NAME", "7/merge")]);
        let found = provenance(&env(&review), Some(&event), &merge);
        assert_eq!((found.branch.as_deref(), found.commit.as_deref()), (Some("fix-cart"), Some("head1")));
        let base = GitFacts { head: Some("base1".into()), head_parents: vec!["b0".into()], branch: None };
        let target = actions(&[
            ("GITHUB_EVENT_NAME", "pull_request_target"),
            ("GITHUB_BASE_REF", "main"),
            ("GITHUB_HEAD_REF", "fork-branch"),
        ]);
        let found = provenance(&env(&target), Some(&event), &base);
        assert_eq!((found.branch.as_deref(), found.commit.as_deref()), (Some("main"), Some("base1")));
    }

    #[test]
    fn a_gitlab_pipeline_records_its_pipeline_and_a_merge_requests_source() {
        let merge =
            GitFacts { head: Some("m".into()), head_parents: vec!["target".into(), "src".into()], branch: None };
        let pairs = [
            ("GITLAB_CI", "true"),
            ("CI_PIPELINE_ID", "88"),
            ("CI_PIPELINE_URL", "https://gitlab.example/acme/shop/-/pipelines/88"),
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "fix-cart"),
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", "src"),
        ];
        let found = provenance(&env(&pairs), None, &merge);
        assert_eq!((found.branch.as_deref(), found.commit.as_deref()), (Some("fix-cart"), Some("src")));
        let run = found.run.expect("a run");
        assert_eq!((run.provider.as_str(), run.id.as_str()), ("gitlab-ci", "88"));
        let push = [("GITLAB_CI", "true"), ("CI_PIPELINE_ID", "89"), ("CI_COMMIT_BRANCH", "main")];
        let head = GitFacts { head: Some("h".into()), head_parents: vec!["p".into()], branch: None };
        let found = provenance(&env(&push), None, &head);
        assert_eq!((found.branch.as_deref(), found.commit.as_deref()), (Some("main"), Some("h")));
    }
}
