//! `workspace/executeCommand`: the code lenses' commands, carried out by the server so they
//! work in every client (a client may still carry some out itself: see `initialize`).
//!
//! - `saffron.run [FILE:LINE]` and `saffron.runFeature [FILE]` run `saffron run` on a thread of
//!   their own (a run takes seconds; the loop goes on) and report the verdict with
//!   `window/showMessage`, with progress while it runs when the client shows progress;
//! - `saffron.reviewProposal [PROPOSAL]` sums the proposal up and asks, with
//!   `window/showMessageRequest`, whether to accept or reject it;
//! - `saffron.accept [PROPOSAL, "--with-feature-edit"?]` and `saffron.reject [PROPOSAL]` run
//!   `saffron accept` and `saffron reject`;
//! - `saffron.authorSelection [FILE, PROSE]` drafts scenarios from prose (see [`super::author`]);
//! - `saffron.history [FILE:LINE]` says the scenario's recent runs (the flaky and chronic lens).
//!
//! Every outcome is told to the user, failures included; the command's output goes to the log.

use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use ls_types as lsp;
use ls_types::notification::{LogMessage, Progress, ShowMessage};
use ls_types::request::{ShowMessageRequest, WorkDoneProgressCreate};
use saffron_recording::Store;
use serde_json::Value;

use crate::context::{Error, Result};
use crate::main_loop::GlobalState;
use crate::transport::Output;

pub const RUN: &str = "saffron.run";
pub const RUN_FEATURE: &str = "saffron.runFeature";
pub const REVIEW_PROPOSAL: &str = "saffron.reviewProposal";
pub const ACCEPT: &str = "saffron.accept";
pub const REJECT: &str = "saffron.reject";
pub const HISTORY: &str = "saffron.history";
pub const COMMANDS: [&str; 7] =
    [RUN, RUN_FEATURE, REVIEW_PROPOSAL, ACCEPT, REJECT, super::author::AUTHOR_SELECTION, HISTORY];

const WITH_FEATURE_EDIT: &str = "--with-feature-edit";

/// How much of a command's output goes to the log.
const MAX_LOGGED: usize = 64 << 10;

pub fn handle(state: &mut GlobalState, params: lsp::ExecuteCommandParams) -> Result<Option<Value>> {
    let argument = |index: usize| params.arguments.get(index).and_then(Value::as_str);
    let first = argument(0).ok_or_else(|| Error::invalid_params(format!("{} takes a path", params.command)))?;
    match params.command.as_str() {
        RUN => {
            let (file, line) = first.rsplit_once(':').filter(|(_, line)| line.parse::<u32>().is_ok()).unzip();
            let file = project_file(state.root(), file.unwrap_or(first))?;
            let target = match line {
                Some(line) => format!("{file}:{line}"),
                None => file,
            };
            start_saffron(state, vec!["run".to_string(), target]);
        }
        RUN_FEATURE => {
            let file = project_file(state.root(), first)?;
            start_saffron(state, vec!["run".to_string(), file]);
        }
        REVIEW_PROPOSAL => review(state, project_file(state.root(), first)?)?,
        ACCEPT => {
            let proposal = project_file(state.root(), first)?;
            let mut arguments = vec!["accept".to_string()];
            match argument(1) {
                None => {}
                Some(WITH_FEATURE_EDIT) => arguments.push(WITH_FEATURE_EDIT.to_string()),
                Some(other) => return Err(Error::invalid_params(format!("{ACCEPT}: unknown option {other:?}"))),
            }
            arguments.push(proposal);
            start_saffron(state, arguments);
        }
        REJECT => {
            let proposal = project_file(state.root(), first)?;
            start_saffron(state, vec!["reject".to_string(), proposal]);
        }
        super::author::AUTHOR_SELECTION => {
            let file = project_file(state.root(), first)?;
            let prose = argument(1).map(str::trim).filter(|prose| !prose.is_empty());
            let prose =
                prose.ok_or_else(|| Error::invalid_params(format!("{} takes a file and the prose", params.command)))?;
            super::author::start(state, file, prose.to_string());
        }
        HISTORY => {
            let (file, line) = first
                .rsplit_once(':')
                .and_then(|(file, line)| Some((file, line.parse::<u32>().ok()?)))
                .ok_or_else(|| Error::invalid_params(format!("{HISTORY} takes FILE:LINE")))?;
            let message = history_message(&state.context_as_indexed().snapshot, file, line);
            state.output.notify::<ShowMessage>(&lsp::ShowMessageParams { typ: lsp::MessageType::INFO, message });
        }
        other => return Err(Error::invalid_params(format!("unknown command {other}"))),
    }
    Ok(None)
}

/// The scenario's recent runs in one line, as `saffron history` says them: the summary the
/// index keeps of the history file, which the lens showed.
fn history_message(snapshot: &saffron_index::Snapshot, file: &str, line: u32) -> String {
    let summaries = snapshot.history(file, line);
    if summaries.is_empty() {
        return format!("{file}:{line} has no run history yet ({})", saffron_index::history::HISTORY);
    }
    let said: Vec<String> = summaries.iter().map(|summary| browser_history(summary, summaries.len() > 1)).collect();
    format!("{}. `saffron history {file}:{line}` for more", said.join("; "))
}

/// One browser's recent runs of a scenario, the browser named when `named`.
fn browser_history(summary: &saffron_index::history::ScenarioHistory, named: bool) -> String {
    let mut said = vec![format!("{} flip(s)", summary.flips)];
    if summary.chronic {
        said.push("chronic: red or yellow in most of its recent runs".to_string());
    }
    if summary.flaky {
        said.push("flaky: it passed only on a retry".to_string());
    }
    if let (Some(before), Some(now)) = (summary.duration_before_ms, summary.duration_now_ms) {
        said.push(format!("{:.1} s -> {:.1} s", before as f64 / 1000.0, now as f64 / 1000.0));
    }
    let browser = if named { format!(" in {}", summary.browser) } else { String::new() };
    format!(
        "{}{browser}: {} (last {} runs, oldest first); {}",
        summary.name,
        summary.strip,
        summary.verdicts.len(),
        said.join(", ")
    )
}

/// `relative` when it names a file of the project: never an option, an absolute path or a
/// path that climbs out of the root.
fn project_file(root: &Path, relative: &str) -> Result<String> {
    let path = Path::new(relative);
    let inside = !relative.is_empty()
        && !relative.starts_with('-')
        && path.components().all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(Error::invalid_params(format!("{relative:?} is not a path inside the project")));
    }
    if !root.join(path).is_file() {
        return Err(Error::invalid_params(format!("{relative} does not exist in {}", root.display())));
    }
    Ok(relative.to_string())
}

/// Asks the user what to do with a proposal, then does it.
fn review(state: &mut GlobalState, relative: String) -> Result<()> {
    let proposal = Store::open(state.root())
        .and_then(|store| store.read_proposal(&state.root().join(&relative)))
        .map_err(|error| Error::invalid_params(format!("cannot read the proposal: {error}")))?;
    let mut message = format!("Proposal for \"{}\" ({})", proposal.scenario.name, proposal.scenario.feature);
    if !proposal.narrative.is_empty() {
        message.push_str(&format!(": {}", proposal.narrative));
    }
    let edits = proposal.feature_edits.len();
    if edits > 0 {
        message.push_str(&format!(" It also proposes {edits} feature-file edit{}.", if edits == 1 { "" } else { "s" }));
    }
    let accept = "Accept";
    let accept_with_edits = "Accept with feature edits";
    let reject = "Reject";
    let mut choices = vec![accept];
    if edits > 0 {
        choices.push(accept_with_edits);
    }
    choices.push(reject);
    let params = lsp::ShowMessageRequestParams {
        typ: lsp::MessageType::INFO,
        message,
        actions: Some(
            choices
                .iter()
                .map(|title| lsp::MessageActionItem { title: title.to_string(), properties: Default::default() })
                .collect(),
        ),
    };
    state.send_request::<ShowMessageRequest>(params, move |state, reply| {
        let chosen =
            reply.ok().and_then(|value| serde_json::from_value::<Option<lsp::MessageActionItem>>(value).ok()).flatten();
        let arguments = match chosen.as_ref().map(|item| item.title.as_str()) {
            Some(title) if title == accept => vec!["accept".to_string(), relative],
            Some(title) if title == accept_with_edits => {
                vec!["accept".to_string(), WITH_FEATURE_EDIT.to_string(), relative]
            }
            Some(title) if title == reject => vec!["reject".to_string(), relative],
            // Dismissed: the proposal waits.
            _ => return,
        };
        start_saffron(state, arguments);
    });
    Ok(())
}

/// Where a command's progress stands, shared by the loop (which creates the token) and the
/// thread that runs the command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ProgressState {
    Requested,
    Begun,
    Finished,
}

/// Runs this saffron with `arguments` in the project root, on a thread of its own.
fn start_saffron(state: &mut GlobalState, arguments: Vec<String>) {
    let label = format!("saffron {}", arguments.join(" "));
    let progress = state.client.work_done_progress.then(|| begin_progress(state, &label));
    let root = state.root().to_path_buf();
    let output = state.output.clone();
    let reported = label.clone();
    let spawned = std::thread::Builder::new().name("saffron-command".to_string()).spawn(move || {
        let outcome = run_saffron(&root, &arguments);
        if let Some((token, progress)) = progress {
            let mut progress = progress.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if *progress == ProgressState::Begun {
                let end = lsp::WorkDoneProgress::End(lsp::WorkDoneProgressEnd { message: None });
                output
                    .notify::<Progress>(&lsp::ProgressParams { token, value: lsp::ProgressParamsValue::WorkDone(end) });
            }
            *progress = ProgressState::Finished;
        }
        report(&output, &reported, arguments.first().map_or("", String::as_str), outcome);
    });
    if let Err(error) = spawned {
        let message = format!("{label}: cannot start it: {error}");
        state.output.notify::<ShowMessage>(&lsp::ShowMessageParams { typ: lsp::MessageType::ERROR, message });
    }
}

/// Asks the client for a progress token; progress begins once it has one, unless the command
/// is over by then.
fn begin_progress(state: &mut GlobalState, label: &str) -> (lsp::ProgressToken, Arc<Mutex<ProgressState>>) {
    let token = lsp::ProgressToken::String(format!("saffron/{}", state.next_result_id()));
    let progress = Arc::new(Mutex::new(ProgressState::Requested));
    let (shared, begun_token, title) = (progress.clone(), token.clone(), label.to_string());
    let params = lsp::WorkDoneProgressCreateParams { token: token.clone() };
    state.send_request::<WorkDoneProgressCreate>(params, move |state, reply| {
        let mut progress = shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if reply.is_ok() && *progress == ProgressState::Requested {
            let begin = lsp::WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin { title, ..Default::default() });
            let value = lsp::ProgressParamsValue::WorkDone(begin);
            state.output.notify::<Progress>(&lsp::ProgressParams { token: begun_token, value });
            *progress = ProgressState::Begun;
        }
    });
    (token, progress)
}

struct Outcome {
    exit_code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run_saffron(root: &PathBuf, arguments: &[String]) -> std::io::Result<Outcome> {
    let program = std::env::current_exe()?;
    let output = Command::new(program).args(arguments).current_dir(root).stdin(Stdio::null()).output()?;
    Ok(Outcome {
        exit_code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// Tells the user how the command ended, and logs what it printed.
fn report(output: &Output, label: &str, subcommand: &str, outcome: std::io::Result<Outcome>) {
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            let message = format!("{label}: cannot run it: {error}");
            output.notify::<ShowMessage>(&lsp::ShowMessageParams { typ: lsp::MessageType::ERROR, message });
            return;
        }
    };
    let mut logged = format!("{label}\n{}{}", outcome.stderr, outcome.stdout);
    if logged.len() > MAX_LOGGED {
        let cut = (0..=MAX_LOGGED).rev().find(|at| logged.is_char_boundary(*at)).unwrap_or(0);
        logged.truncate(cut);
    }
    output.notify::<LogMessage>(&lsp::LogMessageParams { typ: lsp::MessageType::LOG, message: logged });
    let last_line = |text: &str| text.lines().rev().find(|line| !line.trim().is_empty()).map(str::to_string);
    let (typ, message) = if outcome.stderr.contains("unrecognized subcommand") {
        let version = env!("CARGO_PKG_VERSION");
        (
            lsp::MessageType::ERROR,
            format!("{label}: this saffron ({version}) has no `{subcommand}` command yet; nothing was changed"),
        )
    } else {
        // accept and reject say what they did on their first line, and why they refused on the
        // `saffron accept: refused: ...` line (the hint follows it).
        let decision = |text: &str| text.lines().find(|line| line.starts_with("saffron ")).map(str::to_string);
        let first_line = |text: &str| text.lines().find(|line| !line.trim().is_empty()).map(str::to_string);
        let summary = match subcommand {
            "accept" | "reject" => decision(&outcome.stderr).or_else(|| first_line(&outcome.stdout)),
            _ => None,
        };
        let summary = summary
            .or_else(|| outcome.stderr.lines().find(|line| line.contains("scenario(s):")).map(str::to_string))
            .or_else(|| last_line(&outcome.stderr))
            .or_else(|| last_line(&outcome.stdout));
        let (typ, verdict) = match (subcommand, outcome.exit_code) {
            ("run", Some(0)) => (lsp::MessageType::INFO, "passed".to_string()),
            ("run", Some(1)) => (lsp::MessageType::ERROR, "failed".to_string()),
            ("run", Some(2)) => (lsp::MessageType::ERROR, "blocked (not a verdict about the app)".to_string()),
            (_, Some(0)) => (lsp::MessageType::INFO, "done".to_string()),
            ("accept" | "reject", Some(1)) => (lsp::MessageType::ERROR, "refused".to_string()),
            (_, Some(code)) => (lsp::MessageType::ERROR, format!("failed with exit code {code}")),
            (_, None) => (lsp::MessageType::ERROR, "was stopped by a signal".to_string()),
        };
        let message = match summary {
            Some(summary) => format!("{label}: {verdict}: {summary}"),
            None => format!("{label}: {verdict}"),
        };
        (typ, message)
    };
    output.notify::<ShowMessage>(&lsp::ShowMessageParams { typ, message });
}
