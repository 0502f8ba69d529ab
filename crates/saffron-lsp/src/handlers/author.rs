//! `saffron.authorSelection [FILE, PROSE]`: scenarios drafted from prose selected in a feature's
//! description. The code action is offered on such a selection; the command runs `saffron author
//! --stdin --stdout --format json --out FILE` on a thread of its own (a model answers in
//! seconds; the loop goes on), appends the drafted scenarios to the document with
//! `workspace/applyEdit`, and tells the user what they cost (free or needs recording) and what
//! the model calls used. Nothing is saved: the edit is the user's to keep or undo.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use ls_types as lsp;
use ls_types::notification::{LogMessage, ShowMessage};
use serde_json::{Value, json};

use crate::context::RequestContext;
use crate::line_index::LineIndex;
use crate::main_loop::GlobalState;
use crate::transport::Output;

pub const AUTHOR_SELECTION: &str = "saffron.authorSelection";

/// The code action on prose selected in the description of the feature at `path`.
pub fn action(context: &RequestContext, path: &Path, selection: saffron_ide::Span) -> Option<lsp::CodeActionOrCommand> {
    let prose = saffron_ide::prose_in_description(&context.snapshot, path, selection)?;
    let title = "Draft scenarios from this prose (saffron author)".to_string();
    let relative = path.to_str()?.to_string();
    Some(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
        title: title.clone(),
        kind: Some(lsp::CodeActionKind::REFACTOR_REWRITE),
        command: Some(lsp::Command {
            title,
            command: AUTHOR_SELECTION.to_string(),
            arguments: Some(vec![json!(relative), json!(prose)]),
        }),
        ..lsp::CodeAction::default()
    }))
}

/// Drafts on a thread; `relative` is a checked project file.
pub fn start(state: &mut GlobalState, relative: String, prose: String) {
    let root = state.root().to_path_buf();
    let path = root.join(&relative);
    let Some(uri) = lsp::Uri::from_file_path(&path) else { return };
    // The draft is appended to the text as it is now: an edit made meanwhile stays above it.
    let text = match state.opened(&uri) {
        Some(document) => document.rope.to_string(),
        None => std::fs::read_to_string(&path).unwrap_or_default(),
    };
    let output = state.output.clone();
    let spawned = std::thread::Builder::new().name("saffron-author".to_string()).spawn(move || {
        let drafted = draft(&root, &relative, &prose);
        report(&output, &uri, &PathBuf::from(&relative), &text, drafted);
    });
    if let Err(error) = spawned {
        let message = format!("saffron author: cannot start it: {error}");
        state.output.notify::<ShowMessage>(&lsp::ShowMessageParams { typ: lsp::MessageType::ERROR, message });
    }
}

/// Why `saffron author` gave no answer.
#[derive(Debug, thiserror::Error)]
enum DraftError {
    #[error("cannot find saffron: {0}")]
    NoProgram(std::io::Error),
    #[error("cannot run saffron author: {0}")]
    CannotRun(std::io::Error),
    #[error("saffron author did not finish: {0}")]
    Unfinished(std::io::Error),
    #[error("saffron author gave no answer")]
    Silent,
    /// What it said on stderr instead, its lines joined.
    #[error("{0}")]
    Said(String),
}

/// What `saffron author` printed: its JSON answer, or the reason it gave none.
fn draft(root: &Path, relative: &str, prose: &str) -> Result<Value, DraftError> {
    let program = std::env::current_exe().map_err(DraftError::NoProgram)?;
    let mut child = Command::new(program)
        .args(["author", "--stdin", "--stdout", "--format", "json", "--out", relative])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(DraftError::CannotRun)?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that exits early closes its input: what it printed says why.
        let _ = stdin.write_all(prose.as_bytes());
    }
    let finished = child.wait_with_output().map_err(DraftError::Unfinished)?;
    match serde_json::from_slice::<Value>(&finished.stdout) {
        Ok(answer) => Ok(answer),
        Err(_) => {
            let stderr = String::from_utf8_lossy(&finished.stderr);
            let said: Vec<&str> = stderr.lines().filter(|line| !line.trim().is_empty()).collect();
            Err(if said.is_empty() { DraftError::Silent } else { DraftError::Said(said.join(" ")) })
        }
    }
}

static EDITS: AtomicU64 = AtomicU64::new(0);

fn report(output: &Output, uri: &lsp::Uri, path: &Path, text: &str, drafted: Result<Value, DraftError>) {
    let show = |typ: lsp::MessageType, message: String| {
        output.notify::<ShowMessage>(&lsp::ShowMessageParams { typ, message });
    };
    let answer = match drafted {
        Ok(answer) => answer,
        Err(reason) => return show(lsp::MessageType::ERROR, format!("saffron author: {reason}")),
    };
    let agent = answer["agent"].as_str().unwrap_or_default().to_string();
    output.notify::<LogMessage>(&lsp::LogMessageParams {
        typ: lsp::MessageType::LOG,
        message: format!("saffron author\n{}", serde_json::to_string_pretty(&answer).unwrap_or_default()),
    });
    let Some(draft) = answer["draft"]["text"].as_str() else {
        let error = answer["error"].as_str().unwrap_or("no draft");
        let hint = answer["hint"].as_str().map(|hint| format!(" ({hint})")).unwrap_or_default();
        return show(lsp::MessageType::ERROR, format!("saffron author: {error}{hint}; {agent}"));
    };
    let Some(insertion) = saffron_ide::draft_to_append(text, path, draft) else {
        return show(lsp::MessageType::WARNING, format!("saffron author: the draft has no scenario to add; {agent}"));
    };
    let at = LineIndex::new(text).position(insertion.offset);
    let edit = lsp::TextEdit { range: lsp::Range { start: at, end: at }, new_text: insertion.text };
    let params = lsp::ApplyWorkspaceEditParams {
        label: Some("Draft scenarios (saffron author)".to_string()),
        edit: lsp::WorkspaceEdit {
            changes: Some([(uri.clone(), vec![edit])].into_iter().collect()),
            ..lsp::WorkspaceEdit::default()
        },
    };
    // The reply is not waited for: the loop drops replies to ids it did not register.
    let id = lsp_server::RequestId::from(format!("saffron-author/{}", EDITS.fetch_add(1, Ordering::Relaxed)));
    output.request(&lsp_server::Request::new(id, "workspace/applyEdit".to_string(), params));
    let summary = answer["draft"]["totals"].clone();
    let totals = format!(
        "{} of {} distinct steps replay for free, {} need recording",
        summary["free"], summary["distinctSteps"], summary["needsRecording"]
    );
    show(lsp::MessageType::INFO, format!("saffron author: drafted scenarios: {totals}; {agent}"));
}
