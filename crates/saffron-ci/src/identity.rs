//! A repository's identity from its remote URLs: the spellings of one repository (HTTPS, SSH,
//! scp-like, with or without `.git`, Azure DevOps' three) normalise to one host and path, and
//! credentials a CI puts in a remote URL are dropped before anything is written.

use serde::{Deserialize, Serialize};

/// Where a repository lives: its host (lower case; empty for a path on this machine) and its
/// path on that host without `.git` or slashes around it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepositoryId {
    pub host: String,
    pub path: String,
}

impl RepositoryId {
    /// `github.com/owner/repo`, or the path alone for a repository on this machine.
    pub fn display(&self) -> String {
        if self.host.is_empty() { self.path.clone() } else { format!("{}/{}", self.host, self.path) }
    }

    /// The same repository: the same path (case aside, as the hosts that matter treat it; a
    /// local path exactly). The host is compared by [`judge`], which only warns about it.
    fn same_path(&self, other: &RepositoryId) -> bool {
        if self.host.is_empty() || other.host.is_empty() {
            self.path == other.path
        } else {
            self.path.eq_ignore_ascii_case(&other.path)
        }
    }
}

/// How a bundle's repository stands to the checkout's remotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// A remote is the bundle's repository.
    Same { remote: String },
    /// A remote has the bundle's path on another host: an SSH host alias or a mirror. Imported,
    /// with a warning.
    OtherHost { remote: String, host: String },
    /// No remote is the bundle's repository.
    Foreign,
}

/// Judges the bundle's repository against the checkout's remotes (name, URL): the first remote
/// that is the same repository wins, then one on another host.
pub fn judge(bundle: &RepositoryId, remotes: &[(String, String)]) -> Identity {
    let normalized: Vec<(&String, RepositoryId)> =
        remotes.iter().filter_map(|(name, url)| normalize(url).map(|id| (name, id))).collect();
    if let Some((name, _)) = normalized.iter().find(|(_, id)| id.same_path(bundle) && id.host == bundle.host) {
        return Identity::Same { remote: (*name).clone() };
    }
    if let Some((name, id)) = normalized.iter().find(|(_, id)| id.same_path(bundle)) {
        return Identity::OtherHost { remote: (*name).clone(), host: id.host.clone() };
    }
    Identity::Foreign
}

/// The URL with any user name and password of a URL-style remote removed
/// (`https://x-access-token:ghs_...@github.com/o/r` → `https://github.com/o/r`). scp-like
/// remotes (`git@host:path`) carry a user name only and are kept as they are.
pub fn strip_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}{path}")
}

/// The repository a remote URL names, or `None` for one that names none (empty, a bare word).
pub fn normalize(url: &str) -> Option<RepositoryId> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            (String::new(), rest.to_string())
        } else {
            let authority_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(authority_end);
            let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
            // A port is not part of the repository's identity (ssh://git@host:22/o/r).
            let host = host.split(':').next().unwrap_or(host);
            (host.to_ascii_lowercase(), path.to_string())
        }
    } else if url.starts_with('/') || url.starts_with('.') {
        (String::new(), url.to_string())
    } else if let Some((authority, path)) = url.split_once(':') {
        // scp-like: [user@]host:path.
        if authority.contains('/') {
            return None;
        }
        let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
        (host.to_ascii_lowercase(), path.to_string())
    } else {
        return None;
    };
    // A local path keeps its leading slash; a host's path is relative to the host.
    let path = if host.is_empty() { path.trim_end_matches('/') } else { path.trim_matches('/') };
    let path = path.strip_suffix(".git").unwrap_or(path).trim_end_matches('/');
    if path.is_empty() {
        return None;
    }
    let (host, path) = azure(&host, path).unwrap_or((host.clone(), path.to_string()));
    Some(RepositoryId { host, path })
}

// Azure DevOps spells one repository three ways; all become dev.azure.com/org/project/repo:
// https://dev.azure.com/org/project/_git/repo, https://org.visualstudio.com/project/_git/repo
// and git@ssh.dev.azure.com:v3/org/project/repo.
fn azure(host: &str, path: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = path.split('/').collect();
    let repository = match (host, parts.as_slice()) {
        ("dev.azure.com", [org, project, "_git", repo]) => format!("{org}/{project}/{repo}"),
        ("ssh.dev.azure.com" | "vs-ssh.visualstudio.com", ["v3", org, project, repo]) => {
            format!("{org}/{project}/{repo}")
        }
        (host, [project, "_git", repo]) if host.ends_with(".visualstudio.com") => {
            let org = host.strip_suffix(".visualstudio.com")?;
            format!("{org}/{project}/{repo}")
        }
        _ => return None,
    };
    Some(("dev.azure.com".to_string(), repository))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(url: &str) -> String {
        normalize(url).map(|id| id.display()).unwrap_or_else(|| "none".into())
    }

    #[test]
    fn the_spellings_of_one_repository_normalise_to_one() {
        for url in [
            "https://github.com/Owner/Repo.git",
            "https://github.com/Owner/Repo",
            "https://x-access-token:ghs_abc@github.com/Owner/Repo.git",
            "http://GitHub.com/Owner/Repo/",
            "ssh://git@github.com/Owner/Repo.git",
            "ssh://git@github.com:22/Owner/Repo.git",
            "git@github.com:Owner/Repo.git",
            "github.com:Owner/Repo",
            "git://github.com/Owner/Repo.git",
        ] {
            assert_eq!(id(url), "github.com/Owner/Repo", "{url}");
        }
        for url in [
            "https://dev.azure.com/acme/shop/_git/web",
            "https://acme@dev.azure.com/acme/shop/_git/web",
            "https://acme.visualstudio.com/shop/_git/web",
            "git@ssh.dev.azure.com:v3/acme/shop/web",
        ] {
            assert_eq!(id(url), "dev.azure.com/acme/shop/web", "{url}");
        }
        assert_eq!(id("/srv/git/shop.git"), "/srv/git/shop");
        assert_eq!(id("file:///srv/git/shop.git"), "/srv/git/shop");
        assert_eq!(id(""), "none");
        assert_eq!(id("origin"), "none");
    }

    #[test]
    fn credentials_are_dropped_from_url_remotes_only() {
        assert_eq!(
            strip_credentials("https://x-access-token:ghs_secret@github.com/o/r.git"),
            "https://github.com/o/r.git"
        );
        assert_eq!(strip_credentials("https://user@dev.azure.com/a/b/_git/c"), "https://dev.azure.com/a/b/_git/c");
        assert_eq!(strip_credentials("git@github.com:o/r.git"), "git@github.com:o/r.git");
        assert_eq!(strip_credentials("/srv/git/r.git"), "/srv/git/r.git");
    }

    #[test]
    fn a_remote_is_the_same_repository_another_host_warns_and_anything_else_is_foreign() {
        let bundle = RepositoryId { host: "github.com".into(), path: "acme/shop".into() };
        let remotes = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter().map(|(name, url)| (name.to_string(), url.to_string())).collect()
        };
        // A fork with an upstream remote: any remote counts.
        assert_eq!(
            judge(
                &bundle,
                &remotes(&[("origin", "git@github.com:me/shop.git"), ("upstream", "https://github.com/acme/shop")])
            ),
            Identity::Same { remote: "upstream".into() }
        );
        assert_eq!(
            judge(&bundle, &remotes(&[("origin", "git@gh-work:acme/shop.git")])),
            Identity::OtherHost { remote: "origin".into(), host: "gh-work".into() }
        );
        assert_eq!(judge(&bundle, &remotes(&[("origin", "https://github.com/acme/shop-fork")])), Identity::Foreign);
        assert_eq!(judge(&bundle, &[]), Identity::Foreign);
    }
}
