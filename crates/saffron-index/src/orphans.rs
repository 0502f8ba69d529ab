//! Recordings that belong to no scenario: a misnamed or moved file, or the recording of a
//! scenario that was renamed or deleted. Each comes with the scenario it most likely belongs to.

use std::path::Path;
use std::sync::Arc;

use saffron_recording::{Recording, scenario_slug};
use similar::{Algorithm, capture_diff_slices, get_diff_ratio};

/// A recording file that no scenario's recording path names.
#[derive(Debug, Clone, PartialEq)]
pub struct OrphanRecording {
    /// Relative to the project root.
    pub path: Arc<Path>,
    pub closest: Option<ClosestScenario>,
}

/// The scenario an orphan recording most likely belongs to, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosestScenario {
    pub file: Arc<Path>,
    pub name: String,
    pub line: u32,
    /// Where its recording belongs.
    pub recording_path: Arc<Path>,
    /// Whether a recording is already there.
    pub recorded: bool,
    /// Steps written alike in both (as a multiset), and the longer of the two step counts.
    pub common_steps: usize,
    pub steps: usize,
    /// How alike the names are, 0 to 1: the file's name against the scenario's slug, or the
    /// recording's `scenario` against the scenario's name, whichever is closer.
    pub name_similarity: f64,
    /// The recording's `feature` and `scenario` name this scenario exactly.
    pub named_in_file: bool,
}

/// A scenario an orphan could belong to.
pub(crate) struct Candidate<'a> {
    pub file: &'a Arc<Path>,
    pub name: &'a str,
    pub line: u32,
    pub recording_path: Arc<Path>,
    pub recorded: bool,
    pub step_texts: Vec<String>,
}

/// Below this score a scenario is not offered as the orphan's owner.
const MIN_SCORE: f64 = 0.4;

pub(crate) fn closest(path: &Path, recording: &Recording, candidates: &[Candidate<'_>]) -> Option<ClosestScenario> {
    let stem = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    let recorded_texts: Vec<&str> = recording.steps.iter().map(|step| step.text.as_str()).collect();
    let scored = candidates.iter().map(|candidate| {
        let named_in_file = recording.feature == candidate.file.to_string_lossy().replace('\\', "/")
            && recording.scenario == candidate.name;
        let name_similarity = similarity(&stem, &scenario_slug(candidate.name))
            .max(similarity(&recording.scenario.to_lowercase(), &candidate.name.to_lowercase()));
        let common_steps = common(&recorded_texts, &candidate.step_texts);
        let steps = recorded_texts.len().max(candidate.step_texts.len());
        let overlap = if steps == 0 { 0.0 } else { common_steps as f64 / steps as f64 };
        let score = if named_in_file { 2.0 } else { (overlap + name_similarity) / 2.0 };
        (score, candidate, name_similarity, common_steps, steps, named_in_file)
    });
    let best = scored.max_by(|a, b| a.0.total_cmp(&b.0))?;
    let (score, candidate, name_similarity, common_steps, steps, named_in_file) = best;
    (score >= MIN_SCORE).then(|| ClosestScenario {
        file: candidate.file.clone(),
        name: candidate.name.to_string(),
        line: candidate.line,
        recording_path: candidate.recording_path.clone(),
        recorded: candidate.recorded,
        common_steps,
        steps,
        name_similarity,
        named_in_file,
    })
}

/// Character-level similarity, 0 to 1 (1: equal).
fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    f64::from(get_diff_ratio(&capture_diff_slices(Algorithm::Myers, &a, &b), a.len(), b.len()))
}

/// How many texts the two lists share, each counted as often as both have it.
fn common(a: &[&str], b: &[String]) -> usize {
    let mut rest: Vec<&str> = b.iter().map(String::as_str).collect();
    a.iter()
        .filter(|text| match rest.iter().position(|other| other == *text) {
            Some(index) => {
                rest.swap_remove(index);
                true
            }
            None => false,
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_and_common_steps() {
        assert_eq!(similarity("search-orders", "search-orders"), 1.0);
        assert!(similarity("serch-orders", "search-orders") > 0.9);
        assert!(similarity("export", "delete-an-order") < 0.5);
        let texts = vec!["a".to_string(), "b".to_string(), "b".to_string()];
        assert_eq!(common(&["b", "b", "b", "c"], &texts), 2);
    }
}
