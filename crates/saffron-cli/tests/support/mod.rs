//! Shared by the end-to-end tests: the LSP client (from saffron-benches, which drives the same
//! client in the LSP benchmark) and a copy of the example project.

// Each test file uses a different part of this module.
#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod agent;
pub mod ci;

pub use saffron_benches::lsp_client::{LspClient, position_of, uri};

/// Starts the real `saffron lsp` in `root`.
pub fn start_saffron_lsp(root: &Path) -> LspClient {
    let mut command = Command::new(env!("CARGO_BIN_EXE_saffron"));
    command.arg("lsp");
    LspClient::spawn(command, root)
}

/// A copy of the example project (features and recordings) in a fresh temp folder.
pub fn example_project(name: &str) -> PathBuf {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = std::env::temp_dir().join(format!("saffron-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    copy_dir(&repository.join("features"), &root.join("features"));
    copy_dir(&repository.join(".saffron/cache"), &root.join(".saffron/cache"));
    // The API scenario's contract (`expectSchema`).
    copy_dir(&repository.join("contracts"), &root.join("contracts"));
    root
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}

/// A demo shop with the default configuration on a runtime of its own, and its password.
pub fn demo() -> (tokio::runtime::Runtime, saffron_demo::DemoServer, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let config = saffron_demo::DemoConfig::default();
    let password = config.password.clone();
    let server = runtime.block_on(saffron_demo::DemoServer::start(config)).expect("demo");
    (runtime, server, password)
}
