//! Drafting scenarios from the prose of a feature's description, in the editor: which selection
//! is prose to draft from, and what of a draft (`saffron author`'s) is appended to the file.

use std::path::Path;

use saffron_syntax::{FeatureChild, SourceKind, Span};

use crate::Snapshot;

/// The prose selected in the feature's description of `path`, lines trimmed; `None` when the
/// selection is empty or outside the description.
pub fn prose_in_description(snapshot: &Snapshot, path: &Path, selection: Span) -> Option<String> {
    let file = snapshot.file(path)?;
    let feature = file.source.parsed.document.feature.as_ref()?;
    let description = feature.description.span?;
    let start = selection.start.max(description.start);
    let end = selection.end.min(description.end);
    if start >= end {
        return None;
    }
    let selected = file.source.text.get(start..end)?;
    let prose: Vec<&str> = selected.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    (!prose.is_empty()).then(|| prose.join("\n"))
}

/// Text to insert at `offset` of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insertion {
    pub offset: usize,
    pub text: String,
}

/// The blocks of `draft` (a whole feature file) to append to `document`: its scenarios and rules
/// as the draft writes them, and its Background only when the document has none (a second one
/// would not parse). `None` when the draft has no block to add.
pub fn draft_to_append(document: &str, path: &Path, draft: &str) -> Option<Insertion> {
    let kind = SourceKind::from_path(path).unwrap_or(SourceKind::Saffron);
    let has_background = saffron_syntax::parse(document, kind)
        .document
        .feature
        .is_some_and(|feature| feature.children.iter().any(|child| matches!(child, FeatureChild::Background(_))));
    let parsed = saffron_syntax::parse(draft, kind);
    let feature = parsed.document.feature?;
    let blocks: Vec<&str> = feature
        .children
        .iter()
        .filter_map(|child| match child {
            FeatureChild::Background(_) if has_background => None,
            FeatureChild::Background(background) => Some(background.span),
            FeatureChild::Scenario(scenario) => Some(scenario.span),
            FeatureChild::Rule(rule) => Some(rule.span),
        })
        .filter_map(|span| whole_lines(draft, span))
        .collect();
    if blocks.is_empty() {
        return None;
    }
    let separator = if document.ends_with("\n\n") || document.is_empty() {
        ""
    } else if document.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    Some(Insertion { offset: document.len(), text: format!("{separator}{}\n", blocks.join("\n\n")) })
}

/// `span` widened to whole lines (its first line's indentation kept), trailing blank lines and
/// the final line break dropped.
fn whole_lines(text: &str, span: Span) -> Option<&str> {
    let start = text.get(..span.start)?.rfind('\n').map_or(0, |newline| newline + 1);
    let end = text.get(span.end..)?.find('\n').map_or(text.len(), |newline| span.end + newline);
    text.get(start..end).map(str::trim_end)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use saffron_index::{Change, IndexHost};

    use super::*;

    const FILE: &str = "Feature: Invoices\n  Support staff search orders\n  and open their invoices.\n\n  \
                        Scenario: Existing\n    Given I am on the orders page\n";

    fn snapshot(text: &str) -> Snapshot {
        let mut host = IndexHost::new();
        host.apply(Change::SetFile { path: PathBuf::from("features/invoices.saffron"), text: text.into() });
        host.snapshot()
    }

    #[test]
    fn the_prose_is_the_selection_inside_the_description() {
        let snapshot = snapshot(FILE);
        let path = Path::new("features/invoices.saffron");
        let from = FILE.find("Support").expect("prose");
        let to = FILE.find("invoices.\n").expect("end") + "invoices.".len();
        assert_eq!(
            prose_in_description(&snapshot, path, Span::new(from, to)).as_deref(),
            Some("Support staff search orders\nand open their invoices.")
        );
        // A selection that runs past the description keeps only the prose.
        let past = FILE.find("Given").expect("step");
        assert_eq!(
            prose_in_description(&snapshot, path, Span::new(from, past)).as_deref(),
            Some("Support staff search orders\nand open their invoices.")
        );
        assert_eq!(prose_in_description(&snapshot, path, Span::new(from, from)), None, "an empty selection");
        assert_eq!(prose_in_description(&snapshot, path, Span::new(past, past + 5)), None, "a step is not prose");
    }

    #[test]
    fn the_draft_scenarios_are_appended_and_a_second_background_is_not() {
        let path = Path::new("features/invoices.saffron");
        let draft = "Feature: Drafted\n  Prose.\n\n  Background:\n    StepSet signed in as the demo user\n\n  \
                     @smoke\n  Scenario: Open an invoice\n    When I open the invoice of \"#1001\"\n\n\n  \
                     Scenario: Another\n    Then I see the orders page\n";
        let appended = draft_to_append(FILE, path, draft).expect("blocks");
        assert_eq!(appended.offset, FILE.len());
        assert_eq!(
            appended.text,
            "\n  Background:\n    StepSet signed in as the demo user\n\n  @smoke\n  Scenario: Open an invoice\n    \
             When I open the invoice of \"#1001\"\n\n  Scenario: Another\n    Then I see the orders page\n"
        );
        let with_background = "Feature: Invoices\n  Background:\n    Given I am on the orders page\n\n  \
                               Scenario: Existing\n    Then I see the orders page\n";
        let appended = draft_to_append(with_background, path, draft).expect("blocks");
        assert!(!appended.text.contains("Background"), "{}", appended.text);
        assert!(appended.text.starts_with("\n  @smoke\n  Scenario: Open an invoice"), "{}", appended.text);
        assert_eq!(draft_to_append(FILE, path, "Feature: Empty\n"), None);
    }
}
