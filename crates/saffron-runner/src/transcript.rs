//! The transcript of an `@api` scenario: each request and what came back (method, URL, status,
//! headers, bodies), kept in memory while the scenario runs and written once its verdict is in,
//! masked. `[api] transcript` says whose: `on-failure` (the default: a scenario that did not
//! pass plainly), `on` (every scenario's), `off` (none).

use serde::{Deserialize, Serialize};

use crate::config::TranscriptMode;
use crate::orchestrator::run::RunOptions;
use crate::{ScenarioResult, Verdict};

/// The transcript file's format version.
pub const TRANSCRIPT_FORMAT: u32 = 1;

/// One scenario's exchanges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transcript {
    pub saffron_transcript: u32,
    pub file: String,
    pub line: u32,
    pub name: String,
    pub outcome: Verdict,
    pub exchanges: Vec<Exchange>,
}

/// One request and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exchange {
    /// The attempt it was sent in (from 1): a scenario retried (`--retries`) keeps every
    /// attempt's exchanges.
    #[serde(default = "first_attempt", skip_serializing_if = "is_first_attempt")]
    pub attempt: u32,
    /// The step it was sent under (from 1).
    pub step: usize,
    pub service: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub method: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_headers: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    /// `None` when no response came (see `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_headers: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub duration_ms: u64,
}

fn first_attempt() -> u32 {
    1
}

fn is_first_attempt(attempt: &u32) -> bool {
    *attempt == 1
}

/// Whether `mode` keeps the transcript of a scenario with `verdict`.
pub fn keeps(mode: TranscriptMode, verdict: &Verdict) -> bool {
    match mode {
        TranscriptMode::On => true,
        TranscriptMode::Off => false,
        TranscriptMode::OnFailure => !matches!(verdict, Verdict::Green),
    }
}

/// Writes `exchanges` as `outcome`'s transcript when the mode keeps it, masked, into the run's
/// artifacts folder; its path goes on `outcome`.
pub(crate) fn keep(
    options: &RunOptions,
    outcome: &mut ScenarioResult,
    exchanges: Vec<Exchange>,
    masker: &saffron_recording::Masker,
) {
    if exchanges.is_empty() || !keeps(options.transcript, &outcome.verdict) {
        return;
    }
    let transcript = Transcript {
        saffron_transcript: TRANSCRIPT_FORMAT,
        file: outcome.file.clone(),
        line: outcome.line,
        name: outcome.name.clone(),
        outcome: outcome.verdict.clone(),
        exchanges,
    };
    let stem = format!("{}-{}", saffron_recording::feature_slug(&outcome.file), outcome.line);
    let name = options.artifacts.free_name("transcripts", &stem, "transcript.json");
    let written = crate::trace::masked_value(&transcript, masker)
        .and_then(|masked| Ok((serde_json::to_vec(&masked)?, masked)))
        .map_err(std::io::Error::other)
        .and_then(|(bytes, masked)| Ok((options.artifacts.write(&name, &bytes)?, masked)));
    match written {
        Ok((path, mut masked)) => {
            outcome.transcript = Some(path);
            // The HTML report shows them as written: masked.
            outcome.exchanges = serde_json::from_value(masked["exchanges"].take()).unwrap_or_default();
        }
        Err(error) => {
            eprintln!("warning: the transcript of {}:{} was not written: {error}", outcome.file, outcome.line)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_says_whose_transcript_is_kept() {
        let red = Verdict::Red { step: None, step_text: None, message: "x".into() };
        let yellow = Verdict::Yellow { proposal: "p".into() };
        assert!(keeps(TranscriptMode::OnFailure, &red) && keeps(TranscriptMode::OnFailure, &yellow));
        assert!(!keeps(TranscriptMode::OnFailure, &Verdict::Green));
        assert!(keeps(TranscriptMode::On, &Verdict::Green) && !keeps(TranscriptMode::Off, &red));
    }
}
