//! Recordings written or edited by hand, run as a user runs saffron on them: `check` validates
//! them, `status` says why one is stale or matches no scenario, `skeleton` starts one, and the
//! read-only commands leave the project as they found it.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::example_project;

fn saffron(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saffron")).args(args).current_dir(cwd).output().expect("saffron runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every folder and file under `root` with its bytes (None for a folder).
fn tree(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
        for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).expect("inside").to_path_buf();
            if path.is_dir() {
                out.insert(relative, None);
                walk(root, &path, out);
            } else {
                out.insert(relative, Some(std::fs::read(&path).expect("read")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn read_only_commands_leave_the_project_byte_for_byte_as_it_was() {
    // Recordings but no proposals, reports or artifacts folder; and a project with no store at all.
    let with_cache = example_project("readonly-cache");
    let without_store = example_project("readonly-bare");
    std::fs::remove_dir_all(without_store.join(".saffron")).expect("remove the store");
    std::fs::write(without_store.join("saffron.toml"), "").expect("write");
    for root in [&with_cache, &without_store] {
        let before = tree(root);
        for args in [
            &["status"][..],
            &["status", "--format", "json"],
            &["steps"],
            &["steps", "--format", "json"],
            &["check"],
            &["check", "--format", "json"],
        ] {
            let output = saffron(args, root);
            assert!(matches!(output.status.code(), Some(0 | 1)), "{args:?}: {}", stderr(&output));
            let after = tree(root);
            let added: Vec<_> = after.keys().filter(|path| !before.contains_key(*path)).collect();
            assert!(added.is_empty(), "saffron {args:?} created {added:?} in {}", root.display());
            assert!(before == after, "saffron {args:?} changed a file in {}", root.display());
        }
    }
    let _ = std::fs::remove_dir_all(&with_cache);
    let _ = std::fs::remove_dir_all(&without_store);
}
