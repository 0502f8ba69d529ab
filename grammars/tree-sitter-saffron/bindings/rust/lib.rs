//! tree-sitter grammar for Gherkin (`.feature`) and the Saffron dialect (`.saffron`).
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser
//!     .set_language(&tree_sitter_saffron::LANGUAGE.into())
//!     .expect("the grammar's ABI matches tree-sitter");
//! let source = "Feature: Login\n  Scenario: ok\n    Given I am on the login page\n";
//! let tree = parser.parse(source, None).expect("a tree");
//! assert!(!tree.root_node().has_error());
//! ```
//!
//! Every language of Cucumber's `gherkin-languages.json` is recognised; a `# language: xx`
//! header at the top of a file selects it.

use tree_sitter_language::LanguageFn;

unsafe extern "C" {
    fn tree_sitter_saffron() -> *const ();
}

/// The tree-sitter [`LanguageFn`] for this grammar.
///
/// Convert it with `tree_sitter::Language::from(LANGUAGE)` or `LANGUAGE.into()`.
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_saffron) };

/// The node types (`src/node-types.json`).
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

/// Syntax highlighting query.
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");

/// Folding ranges query (`@fold`).
pub const FOLDS_QUERY: &str = include_str!("../../queries/folds.scm");

/// Language injections: doc string content by its media type.
pub const INJECTIONS_QUERY: &str = include_str!("../../queries/injections.scm");

/// Step set definitions and invocations as definitions and references.
pub const LOCALS_QUERY: &str = include_str!("../../queries/locals.scm");

#[cfg(test)]
mod tests;
