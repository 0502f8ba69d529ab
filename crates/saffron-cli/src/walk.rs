//! Finding a project's feature files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Every `.feature` and `.saffron` file under the given paths (files are taken as given),
/// honouring `.gitignore`, sorted and without duplicates.
pub fn feature_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if !path.exists() {
            bail!("{}: no such file or directory", path.display());
        }
        if path.is_file() {
            files.push(path.clone());
            continue;
        }
        for entry in ignore::WalkBuilder::new(path).build() {
            let entry = entry.with_context(|| format!("cannot walk {}", path.display()))?;
            let is_file = entry.file_type().is_some_and(|kind| kind.is_file());
            if is_file && is_feature_file(entry.path()) {
                files.push(clean(entry.path()));
            }
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

pub fn is_feature_file(path: &Path) -> bool {
    saffron_syntax::SourceKind::from_path(path).is_some()
}

/// `./features/a.feature` reads better as `features/a.feature`.
fn clean(path: &Path) -> PathBuf {
    path.strip_prefix(".").map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

/// Reads the files; a file that is not UTF-8 is an error naming it.
pub fn read_all(files: Vec<PathBuf>) -> Result<Vec<(PathBuf, String)>> {
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
            Ok((path, text))
        })
        .collect()
}
