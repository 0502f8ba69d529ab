//! `saffron skeleton FILE:LINE`: a recording to fill in by hand, for one scenario: its steps as
//! the scenario runs them and their digest, every action list empty.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use saffron_index::{recording_paths, step_specs};
use saffron_recording::{RecordedStep, Recording, Store, layout};
use saffron_syntax::{ScenarioKind, pickles};

use crate::project;
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct SkeletonArgs {
    /// The scenario: `FILE:LINE`, any line of it (its title, a step, an Examples row).
    target: String,
    /// Replace a recording that is already there.
    #[arg(long)]
    force: bool,
}

pub fn run(args: SkeletonArgs) -> Result<ExitCode> {
    let (file, line) = saffron_runner::line_target(&args.target);
    let Some(line) = line else {
        bail!("{}: name the scenario as FILE:LINE, e.g. features/orders.saffron:12", args.target);
    };
    let root = project::find_root()?;
    let relative = project::relative_filters(&root, std::slice::from_ref(&file))?.remove(0);
    let (snapshot, problems) = project::load_index(&root);
    // A feature file that does not parse may hide the scenario, so its problems are shown. The
    // recordings and proposals are `check`'s business: skeletons written one after another are
    // each unreadable until filled in, and listing them all at every call buries the answer.
    let (elsewhere, about_features): (Vec<_>, Vec<_>) = problems.into_iter().partition(|problem| {
        let path = std::path::Path::new(&problem.file);
        layout::in_cache(path) || layout::in_proposals(path)
    });
    project::report(&about_features)?;
    let Some(data) = snapshot.file(&relative) else {
        bail!("{}: not a .feature or .saffron file of the project at {}", file.display(), root.display());
    };
    let document = &data.source.parsed.document;
    let templates = pickles::compile_templates(document, &snapshot.step_sets());
    let paths = recording_paths(&relative, &templates);
    let last_line = |offset: usize| data.source.text[..offset.min(data.source.text.len())].matches('\n').count() + 1;
    let found = templates.iter().zip(paths).find(|(template, _)| {
        let first = template.scenario.header.location.line as usize;
        (first..=last_line(template.scenario.span.end)).contains(&(line as usize))
    });
    let Some((template, (recording_path, _))) = found else {
        if document.scenarios().any(|scenario| {
            scenario.kind == ScenarioKind::StepSet
                && (scenario.header.location.line as usize..=last_line(scenario.span.end)).contains(&(line as usize))
        }) {
            bail!("{}: a StepSet has no recording of its own: name a scenario that invokes it", args.target);
        }
        bail!("{}: no scenario, Scenario Outline or Fixture on that line", args.target);
    };
    let target = root.join(&recording_path);
    if !args.force && target.symlink_metadata().is_ok() {
        bail!(
            "{} already exists: it is not replaced (pass --force to replace it with an empty skeleton)",
            recording_path.display()
        );
    }
    let feature = relative.components().map(|part| part.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
    let steps = step_specs(template).into_iter().map(|spec| RecordedStep::new(spec, Vec::new())).collect();
    let recording = Recording::new(feature, template.scenario.header.name.clone(), steps);
    let store = Store::open(&root).context("cannot open the store")?;
    store.write_skeleton(&target, &recording)?;
    let written = recording_path.to_string_lossy();
    let others = elsewhere.iter().filter(|problem| problem.file != written).count();
    if others > 0 {
        eprintln!(
            "({others} other recording(s) or proposal(s) of the project do not check: `saffron check` lists them)"
        );
    }
    println!("{}", escape_controls(&PathBuf::from(&recording_path).display().to_string()));
    eprintln!(
        "wrote a skeleton for \"{}\" ({} step(s), no actions): fill in each step's actions, with at least one \
         expect* action in each Then step (until then the recording is refused, never replayed green); run \
         `saffron check` to validate it (adding or removing a <table:key> changes stepsDigest, and check names the \
         new value)",
        escape_controls(&recording.scenario),
        recording.steps.len()
    );
    Ok(ExitCode::SUCCESS)
}
