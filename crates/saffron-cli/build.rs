//! Embeds the example project (its features, recordings, handlers, API contracts and
//! `saffron.toml`) in the binary, so that `saffron demo` run anywhere replays it:
//! `$OUT_DIR/example_project.rs` lists each file with `include_bytes!` of its path in the
//! repository.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What of the repository is the example project, relative to its root.
const PARTS: [&str; 5] = ["features", ".saffron/cache", ".saffron/handlers", "contracts", "saffron.toml"];

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    let mut children: Vec<PathBuf> = entries.filter_map(Result::ok).map(|entry| entry.path()).collect();
    children.sort();
    for child in children {
        files(&child, out);
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let repository = manifest.join("../..");
    let mut found = Vec::new();
    for part in PARTS {
        let path = repository.join(part);
        println!("cargo:rerun-if-changed={}", path.display());
        files(&path, &mut found);
    }
    let mut listing = String::from("/// The example project's files: (path relative to its root, contents).\n");
    listing.push_str("pub const FILES: &[(&str, &[u8])] = &[\n");
    for path in &found {
        let relative = path.strip_prefix(&repository).expect("under the repository");
        let relative = relative.to_string_lossy().replace('\\', "/");
        let absolute = path.canonicalize().expect("an existing file");
        let _ = writeln!(listing, "    ({relative:?}, include_bytes!({:?})),", absolute.display().to_string());
    }
    listing.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("example_project.rs");
    std::fs::write(out, listing).expect("OUT_DIR is writable");
}
