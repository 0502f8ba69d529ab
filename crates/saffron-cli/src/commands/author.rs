//! `saffron author "PROSE"`: a feature file drafted from prose in the project's own vocabulary,
//! each step priced (free or needs recording), written atomically or printed.

use std::io::Read as _;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use saffron_agent::{Cost, HttpSettings, Usage};
use saffron_index::Change;
use saffron_runner::AgentUsage;
use saffron_runner::author::{self, AuthorError, AuthorRequest, Draft};
use serde_json::json;

use super::Format;
use crate::project;
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct AuthorArgs {
    /// The behaviour, in prose: "search orders and open an invoice".
    prose: Option<String>,
    /// Read the prose from standard input.
    #[arg(long, conflicts_with = "prose")]
    stdin: bool,
    /// The file to write (.saffron or .feature). Default: features/<the prose's first words>.saffron.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the file when it exists.
    #[arg(long)]
    force: bool,
    /// Print the draft instead of writing it.
    #[arg(long, conflicts_with_all = ["force", "record"])]
    stdout: bool,
    /// Run `saffron run` on the new file right away (recording what needs it).
    #[arg(long)]
    record: bool,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Tokens the vocabulary may take in the prompt; the least relevant steps are left out.
    #[arg(long, default_value_t = author::DEFAULT_VOCABULARY_BUDGET)]
    vocabulary_tokens: usize,
}

pub fn run(args: AuthorArgs) -> Result<ExitCode> {
    let prose = match (&args.prose, args.stdin) {
        (_, true) => {
            let mut prose = String::new();
            std::io::stdin().read_to_string(&mut prose).context("cannot read the prose from standard input")?;
            prose
        }
        (Some(prose), false) => prose.clone(),
        (None, false) => {
            bail!("describe the behaviour: saffron author \"search orders and open an invoice\" (or --stdin)")
        }
    };
    let prose = prose.trim().to_string();
    if prose.is_empty() {
        bail!("the prose is empty: describe the behaviour to draft");
    }
    let root = project::find_root()?;
    let relative = match &args.out {
        Some(out) => project_relative(&root, out)?,
        None => default_path(&prose),
    };
    if !matches!(relative.extension().and_then(|e| e.to_str()), Some("saffron" | "feature")) {
        bail!("{}: the draft is a .saffron or .feature file", relative.display());
    }
    let target = root.join(&relative);
    // Before any token is spent.
    if !args.stdout && !args.force && target.symlink_metadata().is_ok() {
        bail!(
            "{} already exists: it is not overwritten (pass --force to replace it, or --stdout to print the draft)",
            relative.display()
        );
    }
    let agent = match author::connect(&root, &HttpSettings::default()) {
        Ok(agent) => agent,
        Err(error) => bail!("no model can draft: {}\n  hint: {}", error.problem, error.hint),
    };
    let (mut snapshot, _) = project::load_index(&root);
    if args.force && !args.stdout && snapshot.file(&relative).is_some() {
        // The file the draft replaces is not the project's wording any more: its steps would
        // pass for the project's own and keep a paraphrase from being matched.
        snapshot = snapshot.with_changes([Change::RemoveFile { path: relative.clone() }]);
    }
    let mut vocabulary = author::vocabulary::select(&snapshot, &prose, args.vocabulary_tokens);
    vocabulary.api_services = author::vocabulary::api_services(&root);
    let masker = agent.masker(&vocabulary);
    let request = AuthorRequest { prose, path: relative.clone(), vocabulary_budget: args.vocabulary_tokens };
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the runtime")?;
    let authored = runtime.block_on(author::author(&snapshot, agent.provider.as_ref(), &masker, &vocabulary, &request));
    let cost = Cost::of(&authored.usage, agent.prices);
    let usage_line = format!("{}: {}; {}", agent.provider.describe(), authored.usage, cost);
    let draft = match authored.result {
        Ok(draft) => draft,
        Err(error) => return Ok(failed(&error, &usage_line, &authored.usage, cost, args.format, &masker)),
    };
    let written = if args.stdout {
        None
    } else {
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        saffron_recording::write_atomic(&target, draft.text.as_bytes())
            .with_context(|| format!("cannot write {}", relative.display()))?;
        Some(relative.clone())
    };
    let mask = |text: &str| masked_lines(&masker, text);
    match args.format {
        Format::Json => {
            let mut value = usage_json(&usage_line, &authored.usage, cost);
            value["draft"] = serde_json::to_value(&draft)?;
            value["written"] = json!(written.as_ref().map(|path| path.display().to_string()));
            println!("{}", masker.mask(&serde_json::to_string_pretty(&value)?));
        }
        Format::Text => {
            if written.is_none() {
                print!("{}", mask(&draft.text));
            }
            let report = report(&draft, written.as_deref());
            if written.is_none() {
                eprint!("{}", mask(&report))
            } else {
                print!("{}", mask(&report))
            }
            eprintln!("agent: {}", mask(&usage_line));
        }
    }
    if args.record {
        let exe = std::env::current_exe().context("cannot find the saffron binary to run the new file")?;
        let status = std::process::Command::new(exe)
            .arg("run")
            .arg(&target)
            .status()
            .context("cannot start `saffron run` on the new file")?;
        return Ok(ExitCode::from(status.code().and_then(|code| u8::try_from(code).ok()).unwrap_or(2)));
    }
    Ok(ExitCode::SUCCESS)
}

/// What the draft costs, step by step, and the totals.
fn report(draft: &Draft, written: Option<&Path>) -> String {
    let mut out = String::new();
    if let Some(path) = written {
        out.push_str(&format!("wrote {}\n", path.display()));
    }
    if draft.repaired {
        out.push_str("the first answer did not parse; the repair round's did\n");
    }
    out.push_str("Steps:\n");
    for step in &draft.steps {
        let mut line = format!("  line {:>3}  {:<15} {}{}", step.line, step.cost.as_str(), step.keyword, step.text);
        if let Some(set) = &step.step_set {
            line.push_str(&format!("  (StepSet {set})"));
        }
        if let Some(from) = &step.rewritten_from {
            line.push_str(&format!("  (rewritten from: {from})"));
        }
        if let Some(closest) = &step.closest_recorded {
            line.push_str(&format!("  (closest recorded step: {closest})"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&draft.totals.summary());
    out.push('\n');
    if draft.vocabulary_left_out > 0 {
        out.push_str(&format!(
            "vocabulary: {} item(s) given, {} less relevant left out (--vocabulary-tokens)\n",
            draft.vocabulary_items, draft.vocabulary_left_out
        ));
    }
    out
}

fn usage_json(line: &str, usage: &Usage, cost: Cost) -> serde_json::Value {
    json!({
        "agent": line,
        "usage": AgentUsage::from(usage),
        "costUsd": cost.usd(),
        "cost": cost.to_string(),
    })
}

/// No draft: the reason (and the parser's errors), what the calls used; exit 2 when the
/// provider gave no answer (Saffron could not do its job), 1 when the model's answers were unusable.
fn failed(
    error: &AuthorError,
    usage_line: &str,
    usage: &Usage,
    cost: Cost,
    format: Format,
    masker: &saffron_recording::Masker,
) -> ExitCode {
    let mask = |text: &str| masked_lines(masker, text);
    match format {
        Format::Json => {
            let mut value = usage_json(usage_line, usage, cost);
            value["error"] = json!(error.to_string());
            value["hint"] = json!(error.hint());
            if let AuthorError::Unparseable { text, errors } = error {
                value["errors"] = serde_json::to_value(errors).unwrap_or_default();
                value["lastAnswer"] = json!(text);
            }
            println!("{}", masker.mask(&serde_json::to_string_pretty(&value).unwrap_or_default()));
        }
        Format::Text => {
            match error {
                AuthorError::Unparseable { errors, .. } => {
                    eprintln!("saffron: the drafted feature does not parse after one repair round:");
                    for problem in errors {
                        eprintln!("  {}", mask(&problem.to_string()));
                    }
                }
                other => eprintln!("saffron: {}", mask(&other.to_string())),
            }
            eprintln!("  hint: {}", mask(&error.hint()));
            eprintln!("agent: {}", mask(usage_line));
        }
    }
    match error {
        AuthorError::Provider(_) => ExitCode::from(2),
        _ => ExitCode::from(1),
    }
}

/// `text` masked, each line's control characters escaped: the draft is the model's text.
fn masked_lines(masker: &saffron_recording::Masker, text: &str) -> String {
    masker.mask(text).split('\n').map(|line| escape_controls(line).into_owned()).collect::<Vec<_>>().join("\n")
}

/// `--out` relative to the project root; a path outside it is refused.
fn project_relative(root: &Path, out: &Path) -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let absolute = cwd.join(out);
    let mut normal = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    match normal.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => Ok(relative.to_path_buf()),
        _ => bail!("{}: not a file inside the project at {}", out.display(), root.display()),
    }
}

/// `features/search-orders-and-open-an-invoice.saffron`: the prose's first words.
fn default_path(prose: &str) -> PathBuf {
    let words: Vec<String> = prose
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .take(6)
        .map(str::to_lowercase)
        .collect();
    let stem = if words.is_empty() { "drafted".to_string() } else { words.join("-") };
    PathBuf::from("features").join(format!("{stem}.saffron"))
}
