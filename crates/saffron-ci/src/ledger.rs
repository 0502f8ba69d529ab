//! `.saffron/reports/imported.json`: which CI run each imported proposal came from. Proposals
//! travel byte for byte, so their provenance cannot go inside them, and the imported report is
//! replaced by the next local run, usually before the reviewer accepts. The ledger is keyed by
//! file and revision: a proposal says where it came from only while it is the revision imported.
//! It describes this checkout, not the repository, so it lives with the git-ignored reports.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use saffron_recording::{layout, write_atomic};
use serde::{Deserialize, Serialize};

use crate::ci_env::CiRun;

/// The ledger, relative to the project root.
pub const LEDGER: &str = ".saffron/reports/imported.json";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub version: u32,
    /// Proposal path (relative to the project root) -> where its imported revision came from.
    pub proposals: BTreeMap<String, ImportedFrom>,
}

/// Where an imported proposal came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedFrom {
    /// SHA-256 of the proposal file as imported.
    pub revision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<CiRun>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The bundle's file name.
    pub bundle: String,
    pub imported_at: String,
}

impl Ledger {
    /// The ledger of the project at `root`; an empty one when there is none or it cannot be
    /// read (it is a convenience: nothing depends on it but the provenance shown).
    pub fn read(root: &Path) -> Ledger {
        std::fs::read(root.join(LEDGER))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or(Ledger { version: 1, proposals: BTreeMap::new() })
    }

    pub fn write(&self, root: &Path) -> io::Result<()> {
        let bytes = saffron_recording::to_json_bytes(self).map_err(io::Error::other)?;
        std::fs::create_dir_all(root.join(layout::REPORTS))?;
        write_atomic(&root.join(LEDGER), &bytes)
    }

    /// Where the proposal file at `relative` under `root` came from, if it holds the revision
    /// imported (read now; its path as the index gives it, either slash).
    pub fn imported_from_file(&self, root: &Path, relative: &Path) -> Option<&ImportedFrom> {
        let relative = relative.to_string_lossy().replace('\\', "/");
        let entry = self.proposals.get(&relative)?;
        let bytes = std::fs::read(root.join(&relative)).ok()?;
        (entry.revision == crate::bundle::revision(&bytes)).then_some(entry)
    }
}
