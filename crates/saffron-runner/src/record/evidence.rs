//! What is kept of a recording that was not saved: each attempt's recording, its proof
//! replay's verdict and the conversation with the agent, masked, under
//! `.saffron/artifacts/recording/<feature>/<scenario>/`.

use std::path::{Path, PathBuf};

use saffron_agent::{Block, Message, Role, ToolInput};
use saffron_recording::{Masker, Store, layout};
use serde_json::{Value, json};

use super::Attempt;
use crate::plan::Execution;

/// Why the evidence could not be kept.
#[derive(Debug, thiserror::Error)]
pub(super) enum EvidenceError {
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
    #[error("{}: {source}", .path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// Writes every attempt's evidence; the folder, relative to the root.
pub(super) fn keep(
    root: &Path,
    execution: &Execution,
    attempts: &[Attempt],
    masker: &Masker,
) -> Result<String, EvidenceError> {
    let folder = layout::recording_evidence(&execution.recording_path);
    for (number, attempt) in attempts.iter().enumerate() {
        let evidence = json!({
            "attempt": number + 1,
            "recording": attempt.recording,
            "proof": attempt.proof.as_ref().map(|proof| json!({ "verdict": proof.verdict, "steps": proof.steps })),
            "conversation": attempt.conversation.iter().map(message_json).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&evidence)?;
        let path = root.join(&folder).join(format!("attempt-{}.json", number + 1));
        let store = Store::open(root)
            .map_err(|error| EvidenceError::Write { path: path.clone(), source: std::io::Error::other(error) })?;
        store
            .write_file(&path, masker.mask(&text).as_bytes())
            .map_err(|error| EvidenceError::Write { path, source: std::io::Error::other(error) })?;
    }
    Ok(folder.to_string_lossy().replace('\\', "/"))
}

pub(crate) fn message_json(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let content: Vec<Value> = message
        .content
        .iter()
        .map(|block| match block {
            Block::Text { text } => json!({ "text": text }),
            Block::ToolUse { id, name, input } => {
                let input = match input {
                    ToolInput::Json(value) => value.clone(),
                    ToolInput::Malformed { raw, .. } => Value::String(raw.clone()),
                };
                json!({ "toolUse": { "id": id, "name": name, "input": input } })
            }
            Block::ToolResult { tool_use_id, content, is_error } => {
                json!({ "toolResult": { "id": tool_use_id, "content": content, "isError": is_error } })
            }
        })
        .collect();
    json!({ "role": role, "content": content })
}
