//! Resources: the project's feature files, recordings and proposals, read-only, as
//! `saffron://project/<path relative to the project root>`.
//!
//! One scheme for every kind keeps URIs predictable for a model (`saffron://project/` plus the
//! path every tool prints); reads are limited to those three kinds of file, so the server never
//! becomes a way to read anything else in the folder.

use std::path::{Path, PathBuf};

use saffron_recording::layout;

use crate::project::{Project, display_path, project_path};

pub const SCHEME: &str = "saffron://project/";
pub const TEMPLATE: &str = "saffron://project/{+path}";

/// One resource as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub uri: String,
    pub name: String,
    pub description: String,
    pub mime_type: &'static str,
}

pub fn uri(path: &Path) -> String {
    format!("{SCHEME}{}", display_path(path))
}

pub fn list(project: &Project) -> Vec<Listed> {
    let snapshot = project.snapshot();
    let mut out = Vec::new();
    for file in snapshot.files() {
        let path = &file.source.path;
        let scenarios = snapshot.scenarios_in(path).len();
        out.push(Listed {
            uri: uri(path),
            name: display_path(path),
            description: format!("feature file, {scenarios} runnable scenario(s)"),
            mime_type: "text/x-gherkin",
        });
    }
    for recording in snapshot.recordings() {
        out.push(Listed {
            uri: uri(&recording.path),
            name: display_path(&recording.path),
            description: format!(
                "recording of \"{}\" in {} (do not edit by hand)",
                recording.recording.scenario, recording.recording.feature
            ),
            mime_type: "application/json",
        });
    }
    for proposal in snapshot.proposals() {
        out.push(Listed {
            uri: uri(&proposal.path),
            name: display_path(&proposal.path),
            description: format!(
                "proposal for \"{}\" in {}, waiting for review",
                proposal.proposal.scenario.name, proposal.proposal.scenario.feature
            ),
            mime_type: "application/json",
        });
    }
    out
}

/// Why a resource could not be read, in words a model can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound(pub String);

/// The text of a resource and its MIME type.
pub fn read(project: &Project, uri: &str) -> Result<(String, &'static str), NotFound> {
    let path = parse(uri)?;
    let snapshot = project.snapshot();
    if let Some(file) = snapshot.file(&path) {
        return Ok((file.source.text.clone(), "text/x-gherkin"));
    }
    let in_store = layout::is_recording(&path) || layout::is_proposal(&path);
    if in_store {
        // Read from disk rather than re-serialising the index's copy: the file as committed,
        // even when it does not validate (an unreadable recording is worth seeing).
        return std::fs::read_to_string(project.root().join(&path)).map(|text| (text, "application/json")).map_err(
            |error| NotFound(format!("{}: {error}; call resources/list for what exists", display_path(&path))),
        );
    }
    Err(NotFound(format!(
        "{} is not a feature file, recording or proposal of this project; call resources/list for what exists",
        display_path(&path)
    )))
}

fn parse(uri: &str) -> Result<PathBuf, NotFound> {
    let Some(rest) = uri.strip_prefix(SCHEME) else {
        return Err(NotFound(format!("unknown resource URI `{uri}`: Saffron's resources are {TEMPLATE}")));
    };
    let decoded = percent_decode(rest);
    project_path(&decoded).ok_or_else(|| NotFound(format!("`{rest}` is not a path inside the project")))
}

/// `%20` and friends, as a client may encode a path with spaces; invalid escapes stay as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(hex) = text.get(index + 1..index + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            index += 3;
            continue;
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_project_paths() {
        assert_eq!(parse("saffron://project/features/a%20b.feature"), Ok(PathBuf::from("features/a b.feature")));
        assert!(parse("saffron://project/../secret").is_err());
        assert!(parse("file:///etc/passwd").is_err());
        assert_eq!(percent_decode("%zz%41"), "%zzA");
    }
}
