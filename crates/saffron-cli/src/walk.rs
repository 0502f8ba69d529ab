//! Finding a project's feature files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use saffron_syntax::{NotUtf8, decode_source};

use crate::problem::Problem;

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

/// Reads the files. One that cannot be read, or is not UTF-8, is a problem naming it (and,
/// for bad UTF-8, the first bad byte); the others are still read.
pub fn read_all(files: Vec<PathBuf>) -> (Vec<(PathBuf, String)>, Vec<Problem>) {
    let mut texts = Vec::with_capacity(files.len());
    let mut problems = Vec::new();
    for path in files {
        match std::fs::read(&path) {
            Ok(bytes) => match decode_source(bytes) {
                Ok(text) => texts.push((path, text)),
                Err(bad) => problems
                    .push(Problem::error(&path, bad.location, "not-utf8", bad.to_string()).with_hint(NotUtf8::HINT)),
            },
            Err(error) => problems.push(Problem::unreadable(&path, &error)),
        }
    }
    (texts, problems)
}
