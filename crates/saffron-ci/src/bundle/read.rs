//! Reading a bundle without trusting it: its central directory is read from the file on disk
//! (never the whole bundle into memory), every entry is checked against the manifest (its path,
//! its size, its digest) and inflated no further than its header says, into a private folder.
//! Only a bundle that passes every check whole is handed on.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zip::{CompressionMethod, ZipArchive};

use super::manifest::{MAX_MANIFEST_BYTES, Manifest};
use super::paths::{self, Entry, MANIFEST};
use super::{BundleError, Limits};

/// A bundle whose every check passed, its entries unzipped into a private folder that is
/// removed with it.
#[derive(Debug)]
pub struct VerifiedBundle {
    pub path: PathBuf,
    pub manifest: Manifest,
    /// Bundle path -> (what it is, where it was unzipped).
    pub entries: BTreeMap<String, (Entry, PathBuf)>,
    /// How many bytes it unzipped to.
    pub unzipped: u64,
    _folder: tempfile::TempDir,
}

/// The bundles a path names: the file itself, or every `saffron-bundle*.zip` in a folder and
/// in its folders one level down (`gh run download` puts each artifact in a folder of its own),
/// in name order.
pub fn find_bundles(path: &Path) -> io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        // Opened (and so reported missing) by `verify`.
        return Ok(vec![path.to_path_buf()]);
    }
    let mut found = Vec::new();
    let mut folders = vec![(path.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        for entry in std::fs::read_dir(&folder)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if kind.is_dir() && depth == 0 {
                folders.push((entry.path(), depth + 1));
            } else if kind.is_file() && name.starts_with("saffron-bundle") && name.ends_with(".zip") {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Checks `bundle` whole: a zip, a manifest of a format this Saffron reads, every entry a
/// bundle path listed in the manifest once, none a link, none encrypted, none over the limits
/// or inflating past its header, every digest as the manifest says. `budget` is what is left
/// of the import's total limit; it is reduced by what this bundle unzips to.
pub fn verify(bundle: &Path, limits: &Limits, budget: &mut u64) -> Result<VerifiedBundle, BundleError> {
    let damaged = |reason: String| BundleError::Damaged { bundle: bundle.to_path_buf(), reason };
    let file = File::open(bundle).map_err(|source| BundleError::Read { path: bundle.to_path_buf(), source })?;
    let mut archive = ZipArchive::new(BufReader::new(file)).map_err(|error| damaged(format!("not a zip: {error}")))?;

    if archive.has_duplicate_names() {
        let mut seen = HashSet::new();
        let twice = archive.file_names_raw().find(|name| !seen.insert(name.to_vec())).map(String::from_utf8_lossy);
        return Err(damaged(format!("`{}` is in it twice", printable(&twice.unwrap_or_default()))));
    }
    // Every local header agrees with the central directory, no two entries share bytes (a zip
    // bomb made of overlapping entries), no entry hides outside the directory.
    archive.validate_header_consistency().map_err(|error| damaged(format!("its headers: {error}")))?;
    let mut names = Vec::with_capacity(archive.len());
    for index in 0..archive.len() {
        let entry = archive.by_index_raw(index).map_err(|error| damaged(format!("entry {index}: {error}")))?;
        let name = entry.name().map_err(|error| damaged(format!("entry {index}: its name: {error}")))?.into_owned();
        names.push(name);
    }

    let manifest_index = names.iter().position(|name| name == MANIFEST).ok_or_else(|| BundleError::UnknownFormat {
        bundle: bundle.to_path_buf(),
        reason: "it has no manifest.json: not a saffron bundle".into(),
    })?;
    let manifest_bytes = {
        let mut entry = archive.by_index(manifest_index).map_err(|error| damaged(format!("{MANIFEST}: {error}")))?;
        if entry.size() > MAX_MANIFEST_BYTES {
            return Err(damaged(format!("{MANIFEST} says it is {} bytes", entry.size())));
        }
        let mut bytes = Vec::new();
        (&mut entry)
            .take(MAX_MANIFEST_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| damaged(format!("{MANIFEST}: {error}")))?;
        if bytes.len() as u64 > entry.size() {
            return Err(damaged(format!("{MANIFEST} inflates past the size its header gives")));
        }
        bytes
    };
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes).map_err(|error| BundleError::UnknownFormat {
        bundle: bundle.to_path_buf(),
        reason: format!("its manifest.json is not a saffron bundle's manifest: {error}"),
    })?;
    if let Some(reason) = manifest.unreadable_format() {
        return Err(BundleError::UnknownFormat { bundle: bundle.to_path_buf(), reason });
    }
    let listed: HashSet<&str> = manifest.files.iter().map(|file| file.path.as_str()).collect();
    if listed.len() != manifest.files.len() {
        return Err(damaged("its manifest lists a file twice".into()));
    }
    for proposal in &manifest.proposals {
        if !listed.contains(proposal.path.as_str()) {
            return Err(damaged(format!("its manifest names the proposal `{}` among no file", proposal.path)));
        }
    }

    let folder = tempfile::Builder::new()
        .prefix("saffron-import-")
        .tempdir()
        .map_err(|source| BundleError::Write { path: std::env::temp_dir(), source })?;
    let mut entries = BTreeMap::new();
    let mut unzipped = 0u64;
    for (index, name) in names.iter().enumerate() {
        if index == manifest_index {
            continue;
        }
        let kind = paths::classify(name).map_err(|reason| damaged(format!("`{}`: {reason}", printable(name))))?;
        let Some(expected) = manifest.file(name) else {
            return Err(damaged(format!("`{name}` is not in its manifest")));
        };
        let mut entry = archive.by_index(index).map_err(|error| damaged(format!("`{name}`: {error}")))?;
        if entry.is_symlink() {
            return Err(damaged(format!("`{name}` is a symbolic link")));
        }
        if entry.is_dir() {
            return Err(damaged(format!("`{name}` is a folder entry")));
        }
        if entry.encrypted() {
            return Err(damaged(format!("`{name}` is encrypted")));
        }
        if !matches!(entry.compression(), CompressionMethod::Stored | CompressionMethod::Deflated) {
            return Err(damaged(format!(
                "`{name}` is compressed with {:?}, not stored or deflated",
                entry.compression()
            )));
        }
        let declared = entry.size();
        if declared != expected.size {
            return Err(damaged(format!("`{name}`: its header says {declared} bytes, its manifest {}", expected.size)));
        }
        if declared > limits.entry {
            return Err(BundleError::TooLarge(format!(
                "{}: `{name}` is {declared} bytes unzipped, over the {} an entry may hold",
                bundle.display(),
                limits.entry
            )));
        }
        if declared > *budget {
            return Err(BundleError::TooLarge(format!(
                "{}: unzipping `{name}` would take the import over the {} bytes it may unzip",
                bundle.display(),
                limits.total
            )));
        }
        let staged = folder.path().join(format!("entry-{index}"));
        let out = File::create(&staged).map_err(|source| BundleError::Write { path: staged.clone(), source })?;
        let mut writer = HashingWriter { inner: BufWriter::new(out), hasher: Sha256::new() };
        let copied = io::copy(&mut (&mut entry).take(declared + 1), &mut writer)
            .map_err(|error| damaged(format!("`{name}`: {error}")))?;
        writer.inner.flush().map_err(|source| BundleError::Write { path: staged.clone(), source })?;
        if copied > declared {
            return Err(damaged(format!("`{name}` inflates past the {declared} bytes its header gives")));
        }
        if copied < declared {
            return Err(damaged(format!("`{name}` holds {copied} bytes, not the {declared} its header gives")));
        }
        if hex::encode(writer.hasher.finalize()) != expected.sha256 {
            return Err(damaged(format!("`{name}` does not match its digest in the manifest")));
        }
        *budget -= declared;
        unzipped += declared;
        entries.insert(name.clone(), (kind, staged));
    }
    if let Some(missing) = manifest.files.iter().find(|file| !entries.contains_key(&file.path)) {
        return Err(damaged(format!("its manifest lists `{}`, which it does not hold", missing.path)));
    }
    Ok(VerifiedBundle { path: bundle.to_path_buf(), manifest, entries, unzipped, _folder: folder })
}

// A name from a hostile bundle, fit to print on one line.
fn printable(name: &str) -> String {
    name.chars().flat_map(char::escape_default).take(200).collect()
}

struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.hasher.update(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
