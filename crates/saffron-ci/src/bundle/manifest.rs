//! `manifest.json`: what a bundle is (its format and the Saffron that made it), where it comes
//! from (repository, branch, commit, CI run, shard), and every file it holds with its digest;
//! each proposal with its binding and its revision (the digest of its bytes, which a reviewer
//! accepts).

use saffron_recording::Binding;
use serde::{Deserialize, Serialize};

use crate::ci_env::CiRun;
use crate::identity::RepositoryId;

/// The `format` every bundle's manifest names.
pub const FORMAT: &str = "saffron-bundle";
/// The format version this Saffron writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// The largest manifest read, in bytes: it lists files, it holds none.
pub const MAX_MANIFEST_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The Saffron that made it.
    pub saffron_version: String,
    /// The repository, from its remotes, credentials dropped; `None` outside git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Repository>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit a reviewer has (on a pull request build, its head).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<CiRun>,
    /// The shard the run was, `--shard I/N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Every file of the bundle but the manifest.
    pub files: Vec<FileDigest>,
    /// The proposals among them.
    pub proposals: Vec<ProposalEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repository {
    /// The remote's URL as git has it, without credentials.
    pub url: String,
    /// Host and path, normalised.
    pub id: RepositoryId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub total: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDigest {
    /// The path in the bundle.
    pub path: String,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalEntry {
    /// The path in the bundle.
    pub path: String,
    /// The feature file and scenario, as the proposal names them.
    pub feature: String,
    pub scenario: String,
    /// SHA-256 of the proposal file's bytes: the revision a reviewer accepts.
    pub revision: String,
    pub binding: Binding,
}

impl Manifest {
    /// Why this Saffron cannot read it, if it cannot.
    pub fn unreadable_format(&self) -> Option<String> {
        if self.format != FORMAT {
            return Some(format!("its manifest says format `{}`, not `{FORMAT}`", self.format));
        }
        if self.format_version != FORMAT_VERSION {
            return Some(format!(
                "it is format version {} (this saffron reads {FORMAT_VERSION}): made by saffron {}; use that version or \
                 a newer one",
                self.format_version, self.saffron_version
            ));
        }
        None
    }

    /// The file's digest entry.
    pub fn file(&self, path: &str) -> Option<&FileDigest> {
        self.files.iter().find(|file| file.path == path)
    }
}
