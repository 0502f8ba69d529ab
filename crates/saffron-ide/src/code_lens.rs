//! Code lenses: run a scenario or the feature (the editor runs `saffron run FILE:LINE`), and
//! review a pending proposal.

use std::path::Path;

use saffron_index::Snapshot;
use saffron_index::review::{self, Assessment};
use saffron_syntax::Span;

use crate::context;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LensCommand {
    pub title: String,
    /// `saffron.run`, `saffron.runFeature`, `saffron.reviewProposal` or `saffron.history`; the
    /// editor client implements them.
    pub command: String,
    pub arguments: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeLens {
    pub span: Span,
    pub command: LensCommand,
}

pub fn code_lenses(snapshot: &Snapshot, path: &Path) -> Vec<CodeLens> {
    let Some(file) = context::file(snapshot, path) else { return Vec::new() };
    let document = file.document();
    let display = path.to_string_lossy().replace('\\', "/");
    let mut lenses = Vec::new();
    if let Some(feature) = &document.feature {
        lenses.push(CodeLens {
            span: feature.header.line_span,
            command: LensCommand {
                title: "▶ Run feature".to_string(),
                command: "saffron.runFeature".to_string(),
                arguments: vec![display.clone()],
            },
        });
    }
    for status in snapshot.scenarios_in(path) {
        let Some(scenario) = document.scenarios().find(|s| s.header.location == status.location) else { continue };
        let state = match status.recording.as_str() {
            "fresh" => "replays for free",
            "stale" => "will record again",
            "unrecorded" => "will record",
            _ => "recording unreadable",
        };
        lenses.push(CodeLens {
            span: scenario.header.line_span,
            command: LensCommand {
                title: format!("▶ Run scenario ({state})"),
                command: "saffron.run".to_string(),
                arguments: vec![format!("{display}:{}", status.location.line)],
            },
        });
        let histories = snapshot.history(&display, status.location.line);
        for history in histories.iter().filter(|history| history.flaky || history.chronic) {
            // Old trouble, said where the scenario is: a person deciding whether a red is new
            // sees at once that it is not. A browser is named when the scenario ran in more
            // than one, or in another than Chromium.
            let what = if history.chronic { "chronic" } else { "flaky" };
            let browser = history.in_browser(histories.len());
            lenses.push(CodeLens {
                span: scenario.header.line_span,
                command: LensCommand {
                    title: format!("{what}{browser}: {} (last {} runs)", history.strip, history.verdicts.len()),
                    command: "saffron.history".to_string(),
                    arguments: vec![format!("{display}:{}", status.location.line)],
                },
            });
        }
        if let Some(proposal) = &status.pending_proposal {
            // The reason shows where the button is: a reviewer learns before opening it that a
            // stale or unverified proposal can only be read and rejected.
            let assessment = snapshot.proposal(proposal).map(|data| review::assess(snapshot, &data.proposal));
            let title = match assessment {
                Some(assessment) if assessment.is_stale() => {
                    format!("Review proposal (stale: {})", assessment.stale_reasons.join("; "))
                }
                Some(Assessment { unverified: Some(failure), .. }) => {
                    format!("Review proposal (unverified: its proof replay failed: {failure})")
                }
                _ => "Review proposal".to_string(),
            };
            lenses.push(CodeLens {
                span: scenario.header.line_span,
                command: LensCommand {
                    title,
                    command: "saffron.reviewProposal".to_string(),
                    arguments: vec![proposal.to_string_lossy().replace('\\', "/")],
                },
            });
        }
    }
    lenses
}
