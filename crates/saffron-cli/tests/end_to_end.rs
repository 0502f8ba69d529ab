//! The crate's integration tests, one module per file, linked as one test binary (one link
//! instead of one per file: each links the whole workspace, about 100 MB on disk).

mod anywhere;
mod api;
mod api_servers;
mod author;
mod browsers;
mod bundles;
mod check;
mod draft_pr;
mod drift_needs_heal;
mod handwritten;
mod heal;
mod heal_api;
mod hooks;
mod hostile_repairs;
mod hostile_secrets;
mod init;
mod interruptions;
mod leftovers;
mod lsp;
mod lsp_fuzz;
mod record;
mod record_api;
mod record_clients;
mod record_external;
mod record_faults;
mod refresh_drift;
mod remote;
mod renames;
mod report;
mod retries;
mod review;
mod review_gate;
mod run;
mod secrets;
mod sign_in_once;
mod support;
mod targets;
mod traces;
mod vocabulary;

/// Cargo builds only this file (`autotests = false`), so a test file not declared above would
/// never run.
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = std::fs::read_to_string(root.join("end_to_end.rs")).expect("the root test file");
    let entries = std::fs::read_dir(&root).expect("the tests folder");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(module) = name.strip_suffix(".rs").filter(|module| *module != "end_to_end") {
            assert!(this.contains(&format!("mod {module};")), "tests/{name} is not declared in tests/end_to_end.rs");
        }
    }
}
