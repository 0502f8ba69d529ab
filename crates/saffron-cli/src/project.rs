//! Finding the project a command works on and loading its index.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use saffron_index::{IndexHost, Snapshot};

/// The project root: the nearest folder, from the current one upwards, that holds
/// `saffron.toml` or `.saffron/`; the current folder when none does.
pub fn find_root() -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    Ok(cwd
        .ancestors()
        .find(|dir| dir.join("saffron.toml").is_file() || dir.join(".saffron").is_dir())
        .map_or_else(|| cwd.clone(), Path::to_path_buf))
}

/// Loads the project's index; files that could not be used are reported on stderr.
pub fn load_index(root: &Path) -> Snapshot {
    let (host, report) = IndexHost::load(root);
    for (path, problem) in &report.problems {
        eprintln!("saffron: skipped {}: {problem}", path.display());
    }
    host.snapshot()
}

/// Turns command-line paths into paths relative to the project root, for filtering.
pub fn relative_filters(root: &Path, paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    paths
        .iter()
        .map(|path| {
            let absolute = cwd.join(path);
            if !absolute.exists() {
                anyhow::bail!("{}: no such file or directory", path.display());
            }
            let absolute = absolute.canonicalize().with_context(|| format!("cannot resolve {}", path.display()))?;
            let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
            Ok(absolute.strip_prefix(&root).map(Path::to_path_buf).unwrap_or(absolute))
        })
        .collect()
}

/// Whether a project-relative file is under one of the filters (all files when there are none).
pub fn selected(file: &Path, filters: &[PathBuf]) -> bool {
    filters.is_empty() || filters.iter().any(|filter| filter.as_os_str().is_empty() || file.starts_with(filter))
}
