//! `saffron accept ID [--with-feature-edit] [--propagate] [--different-control] [--prove]`:
//! promote a proposal to the committed recording, after re-checking its bindings and the rules
//! a repair keeps under the store lock. A stale, unverified or refused proposal is refused by
//! reason (exit 1); there is no override.
//!
//! The proposal file is not trusted to say it passed its proof (its digests guard against
//! staleness, not against an edit): when the application answers at the project's base URL,
//! the proposal is replayed at zero tokens first and refused if it fails; when it does not,
//! the accept says so plainly, and `--prove` refuses instead.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use saffron_index::IndexHost;
use saffron_index::review::{self, AcceptOptions};
use saffron_recording::Store;

use crate::project;
use crate::review::{fail, resolve};
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct AcceptArgs {
    /// The proposal: its path (.saffron/proposals/<feature>/<scenario>.json) or <feature>/<scenario>;
    /// a proposed handler: its path (.saffron/handlers/proposed/<name>.json) or handlers/<name>.
    id: String,
    /// Also apply the proposal's feature edits (into StepSet files too), renaming the steps of
    /// every other recording that runs an edited line.
    #[arg(long)]
    with_feature_edit: bool,
    /// Also rewrite every other recording whose target has the same semantic core as a target
    /// the proposal changed.
    #[arg(long)]
    propagate: bool,
    /// Accept a proposal that acts on a different control than the committed recording
    /// (`saffron diff` names each): you say the application really changed so.
    #[arg(long)]
    different_control: bool,
    /// Refuse unless the proposal is replayed green against the application first (by default
    /// it is replayed when the application answers, and accepted unproven when it does not).
    #[arg(long)]
    prove: bool,
    /// The application's base URL for the proof (else SAFFRON_BASE_URL, else `base_url` in
    /// saffron.toml).
    #[arg(long)]
    base_url: Option<String>,
}

pub fn run(args: AcceptArgs) -> Result<ExitCode> {
    if let Some(handler) = crate::handler_review::named(&args.id) {
        return crate::handler_review::accept(&crate::project::find_root()?, &handler);
    }
    let path = match resolve(&args.id) {
        Ok(path) => path,
        Err(error) => return Ok(fail("accept", &error)),
    };
    let root = project::find_root()?;
    let store = Store::open(&root).context("cannot open the store")?;
    let mut options = AcceptOptions {
        with_feature_edit: args.with_feature_edit,
        propagate: args.propagate,
        refuse_feature_edits: false,
        different_control: args.different_control,
        proven_content: None,
    };
    let proof_line = match prove(&root, &path, &args, options.different_control)? {
        Proved::Passed { rows, base_url, digest } => {
            options.proven_content = Some(digest);
            Some(format!(" Proven: its recording replayed green against {base_url} ({rows} row(s)), at zero tokens."))
        }
        Proved::Failed(failure) => return Ok(fail("accept", &review::ReviewError::Unverified { failure })),
        Proved::Unchecked(why) if args.prove => {
            eprintln!(
                "saffron accept: failed: its proof could not be checked ({}); nothing was accepted",
                escape_controls(&why)
            );
            eprintln!(
                "  hint: start the application (or pass --base-url), or accept without --prove to take it unproven"
            );
            return Ok(ExitCode::from(2));
        }
        Proved::Unchecked(why) => Some(format!(
            " Not proven: its proof could not be checked here ({why}); only its bindings and the rules of repairs \
             were (`saffron accept --prove` refuses instead)."
        )),
        Proved::NotNeeded => None,
    };
    let accepted = match review::accept(&store, &path, options, || IndexHost::load(&root).0.snapshot()) {
        Ok(accepted) => accepted,
        Err(error) => return Ok(fail("accept", &error)),
    };
    // One line says what was written and whether it was proven: an editor shows the first line.
    let mut lines = vec![format!(
        "Accepted {}: wrote {} for {} / \"{}\".{}",
        review::display_path(&accepted.proposal),
        review::display_path(&accepted.recording),
        accepted.feature,
        accepted.scenario,
        proof_line.unwrap_or_default()
    )];
    for edit in &accepted.edits {
        lines.push(format!("  edited {}:{}: {}", edit.file, edit.line, edit.after.trim()));
    }
    for renamed in &accepted.renamed {
        lines.push(format!(
            "  renamed {} step(s) in {} ({} / \"{}\") to follow the edit",
            renamed.changes,
            review::display_path(&renamed.recording),
            renamed.feature,
            renamed.scenario
        ));
    }
    for propagated in &accepted.propagated {
        lines.push(format!(
            "  propagated to {} ({} / \"{}\"): {} action(s) changed",
            review::display_path(&propagated.recording),
            propagated.feature,
            propagated.scenario,
            propagated.changes
        ));
    }
    if args.propagate && accepted.propagated.is_empty() {
        lines.push("  propagated to no other recording: none uses a target this proposal changed".into());
    }
    for note in &accepted.notes {
        lines.push(format!("  note: {note}"));
    }
    lines.push("Commit the changed files.".into());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in lines {
        writeln!(out, "{}", escape_controls(&line))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What the proof before an accept found.
enum Proved {
    Passed {
        rows: usize,
        base_url: String,
        digest: String,
    },
    /// Why it failed, masked, as a refusal says it.
    Failed(String),
    Unchecked(String),
    /// The gate refuses the proposal anyway (stale, unverified, a rule broken): it says why.
    NotNeeded,
}

/// Replays the proposal's recording against the application, as `saffron run` would once it is
/// accepted, unless the gate would refuse it anyway.
fn prove(root: &std::path::Path, path: &std::path::Path, args: &AcceptArgs, different_control: bool) -> Result<Proved> {
    let (snapshot, _) = project::load_index(root);
    let Some(data) = crate::review::find(&snapshot, path) else { return Ok(Proved::NotNeeded) };
    let proposal = data.proposal.clone();
    let assessment = review::assess(&snapshot, &proposal);
    let held = !assessment.different_controls.is_empty() && !different_control;
    if assessment.is_stale() || assessment.unverified.is_some() || !assessment.refused.is_empty() || held {
        return Ok(Proved::NotNeeded);
    }
    let Some(cache_path) = review::recording_path(&proposal.scenario.cache_path) else { return Ok(Proved::NotNeeded) };
    let request = saffron_runner::RunRequest {
        targets: vec![proposal.scenario.feature.clone()],
        workers: 1,
        base_url: args.base_url.clone(),
        hooks: true,
        ..saffron_runner::RunRequest::default()
    };
    let session = match saffron_runner::Session::prepare(root, &snapshot, request) {
        Ok(session) => session,
        Err(error) => return Ok(Proved::Unchecked(error.to_string())),
    };
    let masker = session.masker();
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the runtime")?;
    let proof = runtime.block_on(session.prove(&cache_path, &proposal.recording));
    drop(runtime);
    Ok(match proof {
        saffron_runner::Proof::Passed(rows) => Proved::Passed {
            rows,
            base_url: session.options.base_url.clone(),
            digest: saffron_recording::content_digest(&proposal),
        },
        saffron_runner::Proof::Failed(result) => {
            let failure = match &result.verdict {
                saffron_runner::Verdict::Red { step: Some(step), step_text: Some(text), message } => {
                    format!("step {step} \"{text}\": {message}")
                }
                saffron_runner::Verdict::Red { message, .. } => message.clone(),
                other => other.name().to_string(),
            };
            Proved::Failed(masker.mask(&format!("replayed now before accepting, at zero tokens: {failure}")))
        }
        saffron_runner::Proof::Unchecked(why) => Proved::Unchecked(masker.mask(&why)),
    })
}
