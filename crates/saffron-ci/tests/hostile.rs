//! Hostile bundles, written byte by byte (a zip writer would refuse to make most of them): each
//! is refused whole by `verify`, and by `import` before anything is written.

use std::path::{Path, PathBuf};

use saffron_ci::bundle::{self, BundleError, Limits};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// One entry of a hand-made zip.
struct Raw {
    name: String,
    /// What the entry's bytes are in the zip (stored, or deflated).
    data: Vec<u8>,
    /// The size the headers declare, unzipped.
    declared: u64,
    deflated: bool,
    /// Unix mode in the external attributes (a symbolic link is 0o120777).
    mode: u32,
}

fn stored(name: &str, data: &[u8]) -> Raw {
    Raw { name: name.into(), data: data.to_vec(), declared: data.len() as u64, deflated: false, mode: 0o100644 }
}

fn zip_bytes(entries: &[Raw]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for entry in entries {
        let offset = out.len() as u32;
        let method: u16 = if entry.deflated { 8 } else { 0 };
        let crc = if entry.deflated { 0 } else { crc32fast::hash(&entry.data) };
        let name = entry.name.as_bytes();
        out.extend(0x04034b50u32.to_le_bytes());
        out.extend(20u16.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out.extend(method.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(crc.to_le_bytes());
        out.extend((entry.data.len() as u32).to_le_bytes());
        out.extend((entry.declared as u32).to_le_bytes());
        out.extend((name.len() as u16).to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out.extend(name);
        out.extend(&entry.data);
        central.extend(0x02014b50u32.to_le_bytes());
        central.extend((3u16 << 8 | 20).to_le_bytes());
        central.extend(20u16.to_le_bytes());
        central.extend(0u16.to_le_bytes());
        central.extend(method.to_le_bytes());
        central.extend(0u32.to_le_bytes());
        central.extend(crc.to_le_bytes());
        central.extend((entry.data.len() as u32).to_le_bytes());
        central.extend((entry.declared as u32).to_le_bytes());
        central.extend((name.len() as u16).to_le_bytes());
        central.extend([0u8; 8]);
        central.extend((entry.mode << 16).to_le_bytes());
        central.extend(offset.to_le_bytes());
        central.extend(name);
    }
    let start = out.len() as u32;
    let count = entries.len() as u16;
    out.extend(&central);
    out.extend(0x06054b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend(count.to_le_bytes());
    out.extend(count.to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(start.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A manifest listing `files` (path, bytes) as they are.
fn manifest(files: &[(&str, &[u8])], edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut value = json!({
        "format": "saffron-bundle",
        "formatVersion": 1,
        "saffronVersion": "0.1.0",
        "repository": { "url": "https://github.com/acme/shop", "id": { "host": "github.com", "path": "acme/shop" } },
        "files": files.iter().map(|(path, bytes)| json!({ "path": path, "sha256": sha(bytes), "size": bytes.len() })).collect::<Vec<_>>(),
        "proposals": [],
    });
    edit(&mut value);
    serde_json::to_vec(&value).expect("json")
}

fn write(folder: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = folder.join(name);
    std::fs::write(&path, bytes).expect("write the bundle");
    path
}

fn refusal(what: &str, path: &Path, limits: Limits) -> String {
    let mut budget = limits.total;
    match bundle::verify(path, &limits, &mut budget) {
        Ok(_) => panic!("{what}: the bundle was accepted"),
        Err(error) => error.to_string(),
    }
}

const SCREENSHOT: &[u8] = b"\x89PNG\r\n\x1a\n not really a picture";

#[test]
fn a_well_formed_bundle_passes_and_is_unzipped_privately() {
    let folder = tempfile::tempdir().expect("a folder");
    let entry = "artifacts/run-1-2-0/orders--new-order-3.png";
    let bytes =
        zip_bytes(&[stored(entry, SCREENSHOT), stored("manifest.json", &manifest(&[(entry, SCREENSHOT)], |_| {}))]);
    let path = write(folder.path(), "saffron-bundle.zip", &bytes);
    let mut budget = Limits::default().total;
    let verified = bundle::verify(&path, &Limits::default(), &mut budget).expect("a good bundle passes");
    let (_, staged) = &verified.entries[entry];
    assert_eq!(std::fs::read(staged).expect("staged"), SCREENSHOT);
    assert_eq!(verified.unzipped, SCREENSHOT.len() as u64);
}

#[test]
fn every_hostile_bundle_is_refused_with_its_reason() {
    let folder = tempfile::tempdir().expect("a folder");
    let limits = Limits { entry: 1 << 20, total: 4 << 20 };
    let good = "artifacts/run-1/shot.png";
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not a zip", b"PK but not really a zip at all".to_vec(), "not a zip"),
        (
            "path traversal",
            {
                let name = "proposals/../../../etc/passwd.json";
                zip_bytes(&[stored(name, b"{}"), stored("manifest.json", &manifest(&[(name, b"{}")], |_| {}))])
            },
            "not manifest.json, report.json, history.jsonl, proposals",
        ),
        (
            "a parent folder for a feature",
            {
                let name = "proposals/../cache.json";
                zip_bytes(&[stored(name, b"{}"), stored("manifest.json", &manifest(&[(name, b"{}")], |_| {}))])
            },
            "`..` is not a feature slug",
        ),
        (
            "an absolute path",
            {
                let name = "/etc/cron.d/x";
                zip_bytes(&[stored(name, b"x"), stored("manifest.json", &manifest(&[(name, b"x")], |_| {}))])
            },
            "not manifest.json",
        ),
        (
            "a digest mismatch",
            zip_bytes(&[
                stored(good, b"tampered"),
                stored("manifest.json", &manifest(&[(good, b"original")], |m| m["files"][0]["size"] = json!(8))),
            ]),
            "does not match its digest",
        ),
        (
            "a symbolic link",
            zip_bytes(&[
                Raw { mode: 0o120777, ..stored(good, b"/etc/passwd") },
                stored("manifest.json", &manifest(&[(good, b"/etc/passwd")], |_| {})),
            ]),
            "is a symbolic link",
        ),
        (
            "a duplicate entry",
            zip_bytes(&[
                stored(good, SCREENSHOT),
                stored(good, SCREENSHOT),
                stored("manifest.json", &manifest(&[(good, SCREENSHOT)], |_| {})),
            ]),
            "is in it twice",
        ),
        (
            "an entry the manifest does not list",
            zip_bytes(&[stored(good, SCREENSHOT), stored("manifest.json", &manifest(&[], |_| {}))]),
            "is not in its manifest",
        ),
        (
            "a listed entry it does not hold",
            zip_bytes(&[stored("manifest.json", &manifest(&[(good, SCREENSHOT)], |_| {}))]),
            "which it does not hold",
        ),
        (
            "an unknown format version",
            zip_bytes(&[stored("manifest.json", &manifest(&[], |m| m["formatVersion"] = json!(9)))]),
            "format version 9",
        ),
        ("no manifest", zip_bytes(&[stored(good, SCREENSHOT)]), "no manifest.json"),
        (
            "an entry over the limit by its header",
            {
                let big = vec![0u8; (1 << 20) + 1];
                zip_bytes(&[stored(good, &big), stored("manifest.json", &manifest(&[(good, &big)], |_| {}))])
            },
            "over the 1048576 an entry may hold",
        ),
        (
            "a zip bomb: a header that says little and a stream that inflates to much",
            {
                use std::io::Write as _;
                let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
                encoder.write_all(&vec![0u8; 8 << 20]).expect("deflate");
                let bomb = encoder.finish().expect("deflate");
                let claimed = vec![0u8; 1000];
                zip_bytes(&[
                    Raw { name: good.into(), data: bomb, declared: 1000, deflated: true, mode: 0o100644 },
                    stored("manifest.json", &manifest(&[(good, &claimed)], |_| {})),
                ])
            },
            // The zip reader stops it before our own count does; either refuses it.
            "inflates past the 1000 bytes its header gives|larger than its declared uncompressed size",
        ),
    ];
    for (what, bytes, expected) in cases {
        let path = write(folder.path(), "saffron-bundle.zip", &bytes);
        let reason = refusal(what, &path, limits);
        assert!(
            expected.split('|').any(|alternative| reason.contains(alternative)),
            "{what}: refused, but with {reason:?}, not {expected:?}"
        );
    }
}

#[test]
fn the_total_limit_counts_every_bundle_of_an_import() {
    let folder = tempfile::tempdir().expect("a folder");
    let limits = Limits { entry: 1 << 20, total: 1500 };
    let name = "artifacts/run-1/shot.png";
    let data = vec![7u8; 1000];
    let bytes = zip_bytes(&[stored(name, &data), stored("manifest.json", &manifest(&[(name, &data)], |_| {}))]);
    let first = write(folder.path(), "saffron-bundle-shard-1-of-2.zip", &bytes);
    let second = write(folder.path(), "saffron-bundle-shard-2-of-2.zip", &bytes);
    let mut budget = limits.total;
    bundle::verify(&first, &limits, &mut budget).expect("the first fits");
    let error = bundle::verify(&second, &limits, &mut budget).expect_err("the second would go over");
    assert!(matches!(error, BundleError::TooLarge(_)), "{error}");
    let found = bundle::find_bundles(folder.path()).expect("listed");
    assert_eq!(found, vec![first, second]);
}
