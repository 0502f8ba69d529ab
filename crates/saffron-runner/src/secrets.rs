//! The secrets a run may substitute, known before it starts: every `{env:NAME}` its recordings
//! hold and every secret the project declares (its `.env`), looked up the way replay will look
//! them up. Every output of the run (the terminal, the reports, an MCP result, a screenshot, a
//! recording or a proposal) is masked with them, whether or not the replay got as far as
//! substituting them: a page may show a declared secret no recording types.

use saffron_recording::{Masker, Secret, TokenKind, tokenize};
use serde_json::Value;

use crate::orchestrator::run::RunOptions;
use crate::plan::Execution;

/// A masker for every `{env:NAME}` value the executions (and their Fixtures) may use, and for
/// every secret the project declares.
pub fn masker_for(executions: &[Execution], options: &RunOptions) -> Masker {
    let mut names: Vec<String> = options.secret_names.clone();
    let fixtures = executions.iter().filter_map(|execution| execution.fixture.as_deref());
    for execution in executions.iter().chain(fixtures) {
        if let Ok(recording) = &execution.recording
            && let Ok(json) = serde_json::to_value(recording)
        {
            collect_env_names(&json, &mut names);
        }
        for table in execution.steps.iter().filter_map(|step| step.table.as_ref()) {
            for cell in table.iter().flatten() {
                collect_env_names_in(cell, &mut names);
            }
        }
    }
    let env = &options.env;
    let secrets: Vec<Secret> =
        names.into_iter().filter_map(|name| env(&name).map(|value| Secret { name, value })).collect();
    secrets.iter().collect()
}

fn collect_env_names(value: &Value, names: &mut Vec<String>) {
    match value {
        Value::String(text) => collect_env_names_in(text, names),
        Value::Array(items) => items.iter().for_each(|item| collect_env_names(item, names)),
        Value::Object(map) => map.values().for_each(|item| collect_env_names(item, names)),
        _ => {}
    }
}

fn collect_env_names_in(text: &str, names: &mut Vec<String>) {
    for token in tokenize(text) {
        if let TokenKind::Env(name) = token.kind
            && !names.iter().any(|known| known == name)
        {
            names.push(name.to_owned());
        }
    }
}
