//! `saffron export`: the pending proposals (their exact bytes), the last run's report and the
//! evidence it names, and a manifest of digests, streamed into one zip that is renamed into
//! place only when complete.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use saffron_recording::{Store, layout, parse_handler, parse_proposal};
use saffron_runner::RunReport;
use sha2::{Digest, Sha256};
use zip::CompressionMethod;
use zip::write::{SimpleFileOptions, ZipWriter};

use super::manifest::{FORMAT, FORMAT_VERSION, FileDigest, Manifest, ProposalEntry, Repository, Shard};
use super::paths::{self, MANIFEST, REPORT};
use super::{BundleError, Limits};
use crate::ci_env::Provenance;

/// What the bundle is made of besides the project's files.
#[derive(Debug, Clone)]
pub struct ExportInput {
    /// The project root.
    pub root: PathBuf,
    /// Where the bundle goes; its folder must exist.
    pub out: PathBuf,
    pub provenance: Provenance,
    pub repository: Option<Repository>,
    pub saffron_version: String,
    pub limits: Limits,
}

/// What was exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub path: PathBuf,
    pub proposals: usize,
    pub handler_proposals: usize,
    pub artifacts: usize,
    pub report: bool,
    pub shard: Option<Shard>,
    /// Files left out, with why (an invalid proposal, a report that names a missing picture).
    pub left_out: Vec<String>,
    pub bytes: u64,
}

/// The default file name: `saffron-bundle.zip`, or `saffron-bundle-shard-<i>-of-<n>.zip`.
pub fn default_name(shard: Option<Shard>) -> String {
    match shard {
        Some(Shard { index, total }) => format!("saffron-bundle-shard-{index}-of-{total}.zip"),
        None => "saffron-bundle.zip".to_string(),
    }
}

/// The shard the last run was, from its report, to name the bundle before writing it.
pub fn last_run_shard(root: &Path) -> Option<Shard> {
    let bytes = std::fs::read(root.join(layout::LATEST_REPORT)).ok()?;
    let report: RunReport = serde_json::from_slice(&bytes).ok()?;
    report.shard.map(|shard| Shard { index: shard.index, total: shard.total })
}

/// A file to put in the bundle: its bundle path and where it is (or its bytes, already read).
enum Source {
    Bytes(Vec<u8>),
    File { path: PathBuf, sha256: String, size: u64 },
}

struct Planned {
    name: String,
    source: Source,
}

pub fn export(input: &ExportInput) -> Result<Exported, BundleError> {
    let root = &input.root;
    let store = Store::open(root).map_err(|error| BundleError::Project(error.to_string()))?;
    let mut left_out = Vec::new();
    let mut planned: Vec<Planned> = Vec::new();
    let mut proposals = Vec::new();

    let listing = store.list_proposals();
    for (path, error) in &listing.unreadable {
        left_out.push(format!("{}: {error}", display(root, path)));
    }
    for path in &listing.files {
        let relative = display(root, path);
        let Some(name) = paths::bundle_path(&relative) else {
            left_out
                .push(format!("{relative}: not at a proposal's path (.saffron/proposals/<feature>/<scenario>.json)"));
            continue;
        };
        let bytes = std::fs::read(path).map_err(|source| BundleError::Read { path: path.clone(), source })?;
        let proposal = match std::str::from_utf8(&bytes)
            .map_err(|error| error.to_string())
            .and_then(|text| parse_proposal(text).map_err(|error| error.to_string()))
        {
            Ok(proposal) => proposal,
            Err(error) => {
                left_out.push(format!("{relative}: not a valid proposal ({error}); saffron check names the problem"));
                continue;
            }
        };
        proposals.push(ProposalEntry {
            path: name.clone(),
            feature: proposal.scenario.feature.clone(),
            scenario: proposal.scenario.name.clone(),
            revision: sha256_hex(&bytes),
            binding: proposal.binding.clone(),
        });
        planned.push(Planned { name, source: Source::Bytes(bytes) });
    }

    let mut handler_proposals = 0;
    let handler_dir = root.join(layout::HANDLER_PROPOSALS);
    if let Ok(entries) = std::fs::read_dir(&handler_dir) {
        let mut files: Vec<PathBuf> = entries.filter_map(Result::ok).map(|entry| entry.path()).collect();
        files.sort();
        for path in files.into_iter().filter(|path| path.extension().is_some_and(|ext| ext == "json")) {
            let relative = display(root, &path);
            let Some(name) = paths::bundle_path(&relative) else { continue };
            let bytes = std::fs::read(&path).map_err(|source| BundleError::Read { path: path.clone(), source })?;
            let valid = std::str::from_utf8(&bytes).ok().is_some_and(|text| parse_handler(text).is_ok());
            if !valid {
                left_out.push(format!("{relative}: not a valid handler; saffron check names the problem"));
                continue;
            }
            handler_proposals += 1;
            planned.push(Planned { name, source: Source::Bytes(bytes) });
        }
    }

    let mut shard = None;
    let mut artifacts = 0;
    let report_path = root.join(layout::LATEST_REPORT);
    let report_bytes = match std::fs::read(&report_path) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(source) => return Err(BundleError::Read { path: report_path, source }),
    };
    let has_report = report_bytes.is_some();
    if let Some(bytes) = report_bytes {
        match serde_json::from_slice::<RunReport>(&bytes) {
            Ok(report) => {
                shard = report.shard.map(|shard| Shard { index: shard.index, total: shard.total });
                // Each scenario's failure picture and traces: the evidence the report names.
                let evidence = report
                    .scenarios
                    .iter()
                    .flat_map(|s| s.screenshot_file.iter().chain(&s.traces).chain(&s.trace_viewer));
                for file in evidence.map(String::as_str) {
                    let Some(name) = paths::bundle_path(file) else {
                        left_out.push(format!("{file}: the report names evidence outside {}", layout::ARTIFACTS));
                        continue;
                    };
                    let path = root.join(file);
                    store.ensure_inside(&path).map_err(|error| BundleError::Project(error.to_string()))?;
                    match digest_file(&path) {
                        Ok((sha256, size)) => {
                            artifacts += 1;
                            planned.push(Planned { name, source: Source::File { path, sha256, size } });
                        }
                        Err(error) if error.kind() == io::ErrorKind::NotFound => {
                            left_out.push(format!("{file}: named by the report, but gone (a later run cleared it)"));
                        }
                        Err(source) => return Err(BundleError::Read { path, source }),
                    }
                }
            }
            Err(error) => left_out.push(format!("{}: not a run report ({error})", layout::LATEST_REPORT)),
        }
        planned.push(Planned { name: REPORT.to_string(), source: Source::Bytes(bytes) });
    }
    // The run history travels too, so CI's history reaches the reviewer.
    let history = root.join(saffron_runner::history::HISTORY);
    if let Ok((sha256, size)) = digest_file(&history) {
        planned
            .push(Planned { name: paths::HISTORY.to_string(), source: Source::File { path: history, sha256, size } });
    }

    let mut total = 0u64;
    for file in &planned {
        let size = match &file.source {
            Source::Bytes(bytes) => bytes.len() as u64,
            Source::File { size, .. } => *size,
        };
        if size > input.limits.entry {
            return Err(BundleError::TooLarge(format!(
                "{} is {size} bytes, over the {} a bundle entry may hold",
                file.name, input.limits.entry
            )));
        }
        total += size;
    }
    if total > input.limits.total {
        return Err(BundleError::TooLarge(format!(
            "the bundle would hold {total} bytes, over the {} a bundle may hold",
            input.limits.total
        )));
    }

    let out_dir = input.out.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut temporary = tempfile::Builder::new()
        .prefix(".saffron-bundle-")
        .suffix(".tmp")
        .tempfile_in(out_dir)
        .map_err(|source| BundleError::Write { path: input.out.clone(), source })?;
    let write_error = |source: io::Error| BundleError::Write { path: input.out.clone(), source };
    let mut files = Vec::new();
    {
        let mut zip = ZipWriter::new(temporary.as_file_mut());
        for file in &planned {
            let options = options_for(&file.name);
            match &file.source {
                Source::Bytes(bytes) => {
                    zip.start_file(file.name.as_str(), options.large_file(bytes.len() as u64 > u32::MAX as u64))
                        .map_err(zip_error(&input.out))?;
                    zip.write_all(bytes).map_err(write_error)?;
                    files.push(FileDigest {
                        path: file.name.clone(),
                        sha256: sha256_hex(bytes),
                        size: bytes.len() as u64,
                    });
                }
                Source::File { path, sha256, size } => {
                    zip.start_file(file.name.as_str(), options.large_file(*size > u32::MAX as u64))
                        .map_err(zip_error(&input.out))?;
                    copy_verified(path, sha256, *size, &mut zip)?;
                    files.push(FileDigest { path: file.name.clone(), sha256: sha256.clone(), size: *size });
                }
            }
        }
        let manifest = Manifest {
            format: FORMAT.to_string(),
            format_version: FORMAT_VERSION,
            saffron_version: input.saffron_version.clone(),
            repository: input.repository.clone(),
            branch: input.provenance.branch.clone(),
            commit: input.provenance.commit.clone(),
            run: input.provenance.run.clone(),
            shard,
            files,
            proposals: proposals.clone(),
        };
        let json = saffron_recording::to_json_bytes(&manifest).map_err(|error| write_error(io::Error::other(error)))?;
        zip.start_file(MANIFEST, options_for(MANIFEST)).map_err(zip_error(&input.out))?;
        zip.write_all(&json).map_err(write_error)?;
        zip.finish().map_err(zip_error(&input.out))?;
    }
    temporary.as_file().sync_all().map_err(write_error)?;
    let bytes = temporary.as_file().metadata().map(|meta| meta.len()).unwrap_or_default();
    temporary.persist(&input.out).map_err(|error| write_error(error.error))?;
    Ok(Exported {
        path: input.out.clone(),
        proposals: proposals.len(),
        handler_proposals,
        artifacts,
        report: has_report,
        shard,
        left_out,
        bytes,
    })
}

// Pictures and archives are compressed already: stored, not deflated again.
fn options_for(name: &str) -> SimpleFileOptions {
    let stored = [".png", ".jpg", ".jpeg", ".webp", ".zip", ".gz", ".mhtml"].iter().any(|ext| name.ends_with(ext));
    let method = if stored { CompressionMethod::Stored } else { CompressionMethod::Deflated };
    SimpleFileOptions::default().compression_method(method).unix_permissions(0o644)
}

fn zip_error(path: &Path) -> impl Fn(zip::result::ZipError) -> BundleError + '_ {
    move |error| BundleError::Write { path: path.to_path_buf(), source: io::Error::other(error) }
}

fn display(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Copies `path` into `out`, reading it a second time in chunks and checking it is still the
/// file the first read digested (`sha256`, `size`): a file that changed in between is refused,
/// never bundled with a digest that does not match it. It reads no further than `size` and one
/// byte, so a file that keeps growing cannot make a bundle grow with it.
fn copy_verified(path: &Path, sha256: &str, size: u64, out: &mut impl Write) -> Result<(), BundleError> {
    let reader = File::open(path).map_err(|source| BundleError::Read { path: path.to_path_buf(), source })?;
    let mut hashing = HashingReader::new(BufReader::new(reader).take(size + 1));
    let copied =
        io::copy(&mut hashing, out).map_err(|source| BundleError::Read { path: path.to_path_buf(), source })?;
    if copied != size || hashing.hex() != sha256 {
        return Err(BundleError::Changed(path.to_path_buf()));
    }
    Ok(())
}

fn digest_file(path: &Path) -> io::Result<(String, u64)> {
    let mut hashing = HashingReader::new(BufReader::new(File::open(path)?));
    let size = io::copy(&mut hashing, &mut io::sink())?;
    Ok((hashing.hex(), size))
}

/// A reader that digests what passes through it.
pub(crate) struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
}

impl<R: Read> HashingReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        HashingReader { inner, hasher: Sha256::new() }
    }

    pub(crate) fn hex(&self) -> String {
        hex::encode(self.hasher.clone().finalize())
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.hasher.update(&buf[..read]);
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_changed_since_it_was_digested_is_refused() {
        let folder = tempfile::tempdir().expect("a folder");
        let path = folder.path().join("shot.png");
        std::fs::write(&path, vec![1u8; 100_000]).expect("write");
        let (sha256, size) = digest_file(&path).expect("digested");
        let mut copied = Vec::new();
        copy_verified(&path, &sha256, size, &mut copied).expect("unchanged: copied");
        assert_eq!(copied.len(), 100_000);
        // Rewritten in place, same size: the digest tells.
        std::fs::write(&path, vec![2u8; 100_000]).expect("rewrite");
        let error = copy_verified(&path, &sha256, size, &mut Vec::new()).expect_err("refused");
        assert!(matches!(error, BundleError::Changed(_)), "{error}");
        // Grown since: refused, and read no further than its size and a byte.
        std::fs::write(&path, vec![1u8; 300_000]).expect("grow");
        let mut partial = Vec::new();
        assert!(matches!(copy_verified(&path, &sha256, size, &mut partial), Err(BundleError::Changed(_))));
        assert_eq!(partial.len(), 100_001);
    }
}
