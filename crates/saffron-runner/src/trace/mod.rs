//! Traces: what one attempt of a scenario did, action by action, with the page's network,
//! console and tabs, a picture after each action (`--trace on`), and at a failure the page's
//! DOM snapshot; for a recording or a repair, the agent's conversation too. One file per
//! attempt under the run's artifacts folder, read by `saffron trace`'s viewer.

mod dom;
mod model;
mod tracer;
mod viewer;

pub use model::*;
pub(crate) use tracer::Tracer;
pub use viewer::viewer_html;

use saffron_recording::Masker;
use serde_json::Value;

use crate::orchestrator::run::RunOptions;
use crate::{ScenarioResult, Verdict};

/// Whether `mode` keeps the trace of an attempt that ended in `outcome`: `on` keeps every one;
/// `retain-on-failure` keeps one that did not pass plainly (red, blocked, yellow) and every
/// proof replay of the agent's work, which a reviewer reads.
pub(crate) fn keeps(mode: TraceMode, outcome: &Verdict, kind: TraceKind) -> bool {
    match mode {
        TraceMode::Off => false,
        TraceMode::On => true,
        TraceMode::RetainOnFailure => kind != TraceKind::Replay || !matches!(outcome, Verdict::Green),
    }
}

/// Fields that hold pictures in base64: masking could only break them (a short secret may
/// occur in base64 by chance), and what they show is covered when they are taken.
const PICTURES: [&str; 2] = ["jpeg", "screenshot"];

/// Every text of the trace masked, pictures aside.
pub(crate) fn masked_json<T: serde::Serialize>(trace: &T, masker: &Masker) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&masked_value(trace, masker)?)
}

/// [`masked_json`], as a value.
pub(crate) fn masked_value<T: serde::Serialize>(trace: &T, masker: &Masker) -> Result<Value, serde_json::Error> {
    fn mask(value: &mut Value, masker: &Masker) {
        match value {
            Value::String(text) => *text = masker.mask(text),
            Value::Array(items) => items.iter_mut().for_each(|item| mask(item, masker)),
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    if !PICTURES.contains(&key.as_str()) {
                        mask(field, masker);
                    }
                }
            }
            _ => {}
        }
    }
    let mut value = serde_json::to_value(trace)?;
    mask(&mut value, masker);
    Ok(value)
}

/// The trace file's stem: the scenario's, as the failure screenshot's, then what it traced.
fn stem(trace: &Trace) -> String {
    let feature = saffron_recording::feature_slug(&trace.scenario.file);
    let scenario = saffron_recording::scenario_slugs(&[trace.scenario.name.as_str()]).pop().unwrap_or_default();
    let what = match trace.kind {
        TraceKind::Replay => format!("attempt-{}", trace.attempt),
        TraceKind::Recording => "recording".to_owned(),
        TraceKind::Repair => "repair".to_owned(),
    };
    // A browser other than Chromium is named, so a matrix's traces of one scenario are told apart.
    let browser = match trace.browser.as_str() {
        "firefox" => "-firefox",
        _ => "",
    };
    format!("{feature}--{scenario}-{}{browser}-{what}", trace.scenario.line)
}

/// Writes `trace` into the run's artifacts folder when the run's mode keeps it, and names it
/// in `outcome`.
pub(crate) fn keep(options: &RunOptions, outcome: &mut ScenarioResult, trace: Option<Trace>, masker: &Masker) {
    let Some(trace) = trace else { return };
    if !keeps(options.trace, &trace.outcome, trace.kind) {
        return;
    }
    let name = options.artifacts.free_name("traces", &stem(&trace), "trace.json");
    let written = masked_json(&trace, masker)
        .map_err(std::io::Error::other)
        .and_then(|bytes| options.artifacts.write(&name, &bytes));
    match written {
        Ok(path) => outcome.traces.push(path),
        // A run whose scenario passed or failed is not changed by its trace.
        Err(error) => {
            eprintln!("warning: the trace of {}:{} was not written: {error}", trace.scenario.file, trace.scenario.line)
        }
    }
}

/// The agent's side of a trace: who it was and the conversation as it went.
pub(crate) fn agent_trace(
    driver: &dyn saffron_agent::AgentDriver,
    conversation: &[saffron_agent::Message],
) -> AgentTrace {
    AgentTrace {
        agent: driver.describe(),
        turns: conversation.iter().map(crate::record::evidence::message_json).collect(),
    }
}

/// [`keep`] for the proof replay of the agent's work: the trace carries the conversation.
pub(crate) fn keep_proof(
    options: &RunOptions,
    outcome: &mut ScenarioResult,
    trace: Option<Trace>,
    agent: AgentTrace,
    masker: &Masker,
) {
    keep(options, outcome, trace.map(|trace| trace.with_agent(agent)), masker);
}
