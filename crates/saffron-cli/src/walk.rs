//! Finding a project's feature files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use saffron_syntax::{NotUtf8, decode_source};

use crate::problem::Problem;

/// Every `.feature` and `.saffron` file under the given paths (files are taken as given),
/// walked as the index walks a project (honouring `.gitignore`, leaving nested projects
/// alone), sorted and without duplicates.
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
        for file in saffron_index::walk_feature_files(path) {
            let file = file.with_context(|| format!("cannot walk {}", path.display()))?;
            files.push(clean(&file));
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
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
