//! The crate's integration tests, one module per file, linked as one test binary (one link
//! instead of one per file: each links the whole workspace, about 100 MB on disk).

mod actions;
mod assertions;
mod common;
mod devices;
mod download;
mod drag;
mod drift;
mod fidelity;
mod firefox;
mod frames;
mod frameset;
mod ladder;
mod launch;
mod leftovers;
mod locate;
mod overhead;
mod processes;
mod scopes;
mod screenshots;
mod snapshot;
mod storage;
mod upload;

/// Cargo builds only this file (`autotests = false`), so a test file not declared above would
/// never run.
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = std::fs::read_to_string(root.join("browser.rs")).expect("the root test file");
    let entries = std::fs::read_dir(&root).expect("the tests folder");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(module) = name.strip_suffix(".rs").filter(|module| *module != "browser") {
            assert!(this.contains(&format!("mod {module};")), "tests/{name} is not declared in tests/browser.rs");
        }
    }
}
