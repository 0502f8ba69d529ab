//! Gherkin and the `.saffron` dialect.
//!
//! - [`parse`] reads one file into a [`Document`] (always) and a list of errors, recovering
//!   after each error the way an editor needs.
//! - [`messages`] renders a document as Cucumber Messages, for conformance with the reference
//!   implementation.
//! - [`pickles`] compiles scenarios into runnable step lists (Backgrounds merged, Outline rows
//!   expanded).

pub mod ast;
pub mod diagnostic;
pub mod dialect;
pub mod encoding;
mod lexer;
pub mod messages;
mod parser;
pub mod pickles;
pub mod project;
pub mod step_sets;
pub mod step_text;

pub use ast::*;
pub use diagnostic::{Diagnostic, DiagnosticCode, Severity};
pub use encoding::{NotUtf8, decode_source};
pub use parser::{Parsed, parse};
pub use project::{FileDiagnostic, Project, SourceFile, document_checks};
pub use step_sets::{StepSetDefinition, StepSetRegistry};
