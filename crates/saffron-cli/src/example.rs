//! The example project `saffron demo` replays, embedded in the binary: outside this repository
//! it is written to a folder of its own, which the demo names so a newcomer can open it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use saffron_recording::write_atomic;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/example_project.rs"));
}

/// Writes the example project into `folder` (created if missing); files already there are
/// replaced by the example's, anything else is left alone.
pub fn write_to(folder: &Path) -> Result<()> {
    for (relative, contents) in embedded::FILES {
        let path = folder.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        write_atomic(&path, contents).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Whether `root` holds the example project: each of its feature files is there (a clone of
/// this repository, or the folder the demo wrote it to), whatever they now say. A project of the
/// user's own, features and all, is not the example: the demo never replays it against the shop.
pub fn is_at(root: &Path) -> bool {
    embedded::FILES.iter().filter(|(path, _)| path.starts_with("features/")).all(|(path, _)| root.join(path).is_file())
}

/// Where `saffron demo` writes the example project when run outside one: a folder of the
/// user's temporary directory, the same on each run, so a second demo reuses it.
pub fn default_folder() -> PathBuf {
    std::env::temp_dir().join("saffron-example")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_example_holds_its_features_recordings_and_handlers() {
        let paths: Vec<&str> = embedded::FILES.iter().map(|(path, _)| *path).collect();
        assert!(paths.contains(&"features/orders.saffron"), "{paths:?}");
        assert!(paths.contains(&"saffron.toml"), "{paths:?}");
        assert!(paths.iter().any(|path| path.starts_with(".saffron/cache/") && path.ends_with(".json")), "{paths:?}");
        assert!(paths.contains(&".saffron/handlers/cookie-consent.json"), "{paths:?}");
        let dir = tempfile::tempdir().expect("a folder");
        write_to(dir.path()).expect("written");
        assert!(is_at(dir.path()), "the written example is the example");
        std::fs::remove_file(dir.path().join("features/orders.saffron")).expect("removed");
        assert!(!is_at(dir.path()), "a folder without one of the example's features is not the example");
        write_to(dir.path()).expect("written again");
        let written = std::fs::read(dir.path().join("features/orders.saffron")).expect("a feature");
        assert_eq!(
            written,
            embedded::FILES.iter().find(|(path, _)| *path == "features/orders.saffron").expect("listed").1
        );
    }
}
