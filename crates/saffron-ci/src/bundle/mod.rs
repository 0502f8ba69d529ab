//! Heal bundles: one zip a CI run exports and a reviewer imports.

mod export;
mod import;
pub mod manifest;
pub mod paths;
mod read;

use std::io;
use std::path::PathBuf;

pub use export::{ExportInput, Exported, default_name, export, last_run_shard};
pub use import::{ImportInput, ImportOutcome, Imported, ProposalOutcome, import};
pub use manifest::{Manifest, Shard};
pub use read::{VerifiedBundle, find_bundles, verify};

/// How much a bundle may hold, checked on export and on import before anything is inflated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most one entry may hold, unzipped.
    pub entry: u64,
    /// The most one import may unzip, every bundle together.
    pub total: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { entry: 1 << 30, total: 8 << 30 }
    }
}

/// Why a bundle could not be exported or imported. On import, each of these refuses the
/// bundles whole: nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("{}: {source}", .path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("{}: {source}", .path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("{0}")]
    Project(String),
    #[error("{}: it changed while it was being read; export again once the run that writes it is done", .0.display())]
    Changed(PathBuf),
    #[error("{0}")]
    TooLarge(String),
    /// The zip or an entry of it cannot be trusted: refused whole.
    #[error("{}: damaged or tampered with: {reason}", .bundle.display())]
    Damaged { bundle: PathBuf, reason: String },
    #[error("{}: {reason}", .bundle.display())]
    UnknownFormat { bundle: PathBuf, reason: String },
    #[error("{}: {reason}", .bundle.display())]
    Foreign { bundle: PathBuf, reason: String },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    NothingToImport(String),
}

impl BundleError {
    /// A hint for a person.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            BundleError::Damaged { .. } => Some("download the bundle again; a bundle is never imported in part"),
            BundleError::UnknownFormat { .. } => {
                Some("import it with the saffron version that made it, or a newer one")
            }
            BundleError::Foreign { .. } => Some(
                "import it in a clone of the repository it was made in (any remote counts: add it as upstream), or pass \
                 --allow-unknown-repository for a bundle made outside git",
            ),
            BundleError::Changed(_) => Some("a run was writing the file: export once it is done"),
            _ => None,
        }
    }
}

/// A proposal's revision: SHA-256 of its file's bytes, hex. A reviewer accepts a revision.
pub fn revision(bytes: &[u8]) -> String {
    export::sha256_hex(bytes)
}
