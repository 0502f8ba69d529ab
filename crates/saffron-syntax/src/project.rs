//! A set of feature files read together: the unit the `.saffron` rules are judged on.
//!
//! This module does no I/O; callers hand it file names and texts.

use std::path::{Path, PathBuf};

use crate::ast::{Document, SourceKind};
use crate::diagnostic::Diagnostic;
use crate::parser::{Parsed, parse};
use crate::pickles::{self, Pickle};
use crate::step_sets::{self, StepSetRegistry};

/// One parsed file.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    pub parsed: Parsed,
}

impl SourceFile {
    /// Parses a `.feature` or `.saffron` file; `None` for any other extension.
    pub fn parse(path: PathBuf, text: String) -> Option<SourceFile> {
        let kind = SourceKind::from_path(&path)?;
        let parsed = parse(&text, kind);
        Some(SourceFile { path, text, parsed })
    }
}

/// A problem and the file it is in.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDiagnostic<'a> {
    pub file: &'a Path,
    pub diagnostic: Diagnostic,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Project {
    pub files: Vec<SourceFile>,
    pub step_sets: StepSetRegistry,
}

/// What a parsed document is checked for beyond its syntax: its dialect (StepSets and
/// Fixtures, against the project's `registry`) and its step texts. `saffron check` and the
/// editors report the same.
pub fn document_checks(path: &Path, document: &Document, registry: &StepSetRegistry) -> Vec<Diagnostic> {
    let mut checks = step_sets::check(path, document, registry);
    checks.extend(crate::step_text::check(document));
    checks
}

impl Project {
    pub fn new(mut files: Vec<SourceFile>) -> Project {
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let step_sets = StepSetRegistry::build(files.iter().map(|file| (file.path.as_path(), &file.parsed.document)));
        Project { files, step_sets }
    }

    /// Parses many files on all cores. Files with other extensions are left out.
    pub fn parse_all(inputs: Vec<(PathBuf, String)>) -> Project {
        let threads = std::thread::available_parallelism().map_or(1, usize::from).min(inputs.len().max(1));
        let chunk_size = inputs.len().div_ceil(threads).max(1);
        let mut chunks: Vec<Vec<(PathBuf, String)>> = Vec::new();
        let mut inputs = inputs.into_iter().peekable();
        while inputs.peek().is_some() {
            chunks.push(inputs.by_ref().take(chunk_size).collect());
        }
        let files = std::thread::scope(|scope| {
            let handles: Vec<_> = chunks
                .into_iter()
                .map(|chunk| {
                    scope.spawn(move || {
                        chunk.into_iter().filter_map(|(path, text)| SourceFile::parse(path, text)).collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect()
        });
        Project::new(files)
    }

    pub fn file(&self, path: &Path) -> Option<&SourceFile> {
        self.files.iter().find(|file| file.path == path)
    }

    /// Syntax errors, dialect problems and step text warnings of every file, by file then
    /// position.
    pub fn diagnostics(&self) -> Vec<FileDiagnostic<'_>> {
        let mut out = Vec::new();
        for file in &self.files {
            let mut diagnostics = file.parsed.errors.clone();
            diagnostics.extend(document_checks(&file.path, &file.parsed.document, &self.step_sets));
            diagnostics.sort_by_key(|diagnostic| diagnostic.location);
            out.extend(diagnostics.into_iter().map(|diagnostic| FileDiagnostic { file: &file.path, diagnostic }));
        }
        out
    }

    /// Every runnable scenario, expanded, one per Outline row.
    pub fn pickles(&self) -> Vec<(&SourceFile, Pickle<'_>)> {
        let registry = &self.step_sets;
        self.files
            .iter()
            .flat_map(|file| pickles::compile(&file.parsed.document, &registry).into_iter().map(move |p| (file, p)))
            .collect()
    }

    /// Every runnable scenario, expanded, one per Outline (placeholders kept).
    pub fn scenario_templates(&self) -> Vec<(&SourceFile, Pickle<'_>)> {
        let registry = &self.step_sets;
        self.files
            .iter()
            .flat_map(|file| {
                pickles::compile_templates(&file.parsed.document, &registry).into_iter().map(move |p| (file, p))
            })
            .collect()
    }
}
