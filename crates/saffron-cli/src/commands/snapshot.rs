//! `saffron snapshot [URL] [--targets]`: a page as the recording agent reads it, for people who
//! write recordings by hand: each element's role and accessible name as Chromium computes them
//! (what a `role` + `name` target must say), and with `--targets` the target the recorder
//! would write for each element.

use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use saffron_browser::{Browser, ContextOptions};
use saffron_recording::{Action, Target};

use crate::project;
use crate::terminal::escape_controls;

#[derive(Args)]
pub struct SnapshotArgs {
    /// The page: a path relative to the base URL (`/login`), or a whole http(s) URL.
    #[arg(default_value = "/")]
    url: String,
    /// The application's base URL (else SAFFRON_BASE_URL, else `base_url` in saffron.toml).
    #[arg(long)]
    base_url: Option<String>,
    /// Use a browser that runs already, by its DevTools address, instead of launching Chromium.
    #[arg(long)]
    browser_url: Option<String>,
    /// Wait until the page shows this text before reading it (a page that loads its content
    /// after its load event), up to the assertion timeout.
    #[arg(long, value_name = "TEXT")]
    wait_for: Option<String>,
    /// After the page, the target the recorder would write for each element, one per line.
    #[arg(long)]
    targets: bool,
}

pub fn run(args: SnapshotArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let config = saffron_runner::session::load_config(&root)?;
    let (base_url, mut browser) =
        saffron_runner::session::browser_setup(&root, &config, args.base_url.clone(), args.browser_url.clone(), false)?;
    // The page as the project's device shows it (`[browser] device`).
    browser.device = saffron_runner::session::device_of(None, &config)?;
    // The project's secrets, as a run of every scenario would know them: a page may show one.
    let (index, _) = project::load_index(&root);
    let executions = saffron_runner::plan(&index, &saffron_runner::Selection::default());
    let options = saffron_runner::session::options_with_env(&root, Vec::new());
    let masker = saffron_runner::masker_for(&executions, &options);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the runtime")?;
    let lines = runtime.block_on(async {
        let browser = Browser::start(browser).await?;
        let outcome = read_page(&browser, &base_url, &args, config.timeouts.assertion_ms, &masker).await;
        browser.close().await;
        outcome
    })?;
    for line in lines {
        println!("{}", escape_controls(&masker.mask(&line)));
    }
    Ok(ExitCode::SUCCESS)
}

/// The snapshot's lines, then (with `targets`) one line per element: its ref and its target as
/// JSON, `(fragile)` when only its position identifies it.
async fn read_page(
    browser: &Browser,
    base_url: &str,
    args: &SnapshotArgs,
    wait_ms: u64,
    masker: &saffron_recording::Masker,
) -> Result<Vec<String>> {
    let mut context = browser.new_context(ContextOptions { base_url: base_url.to_owned() }).await?;
    let outcome = async {
        let url = &args.url;
        let goto = Action::Goto { url: url.clone(), timeout_ms: None };
        context.perform(&goto, None).await.map_err(|failure| anyhow!("{url}: {failure}"))?;
        if let Some(text) = &args.wait_for {
            let shown = Action::ExpectText {
                target: Target { css: vec!["body".to_owned()], ..Target::default() },
                text: None,
                text_regex: Some(regex::escape(text)),
                timeout_ms: Some(wait_ms),
            };
            context.perform(&shown, None).await.map_err(|failure| anyhow!("--wait-for: {failure}"))?;
        }
        let snapshot = context.snapshot_masked(masker).await?;
        let mut lines: Vec<String> = snapshot.text.lines().map(str::to_owned).collect();
        if args.targets {
            lines.push(String::new());
            for reference in refs(&snapshot.text) {
                let line = match context.target_for_ref(&reference).await {
                    Ok(found) => {
                        let json = serde_json::to_string(&found.target).context("a target serializes")?;
                        let fragile = if found.fragile { " (fragile)" } else { "" };
                        format!("{reference}  {json}{fragile}")
                    }
                    Err(error) => format!("{reference}  no target: {error}"),
                };
                lines.push(line);
            }
        }
        Ok(lines)
    }
    .await;
    context.close().await;
    outcome
}

/// The refs of a snapshot's text (`[ref=e12]`), in order.
fn refs(text: &str) -> Vec<String> {
    text.split("[ref=")
        .skip(1)
        .filter_map(|rest| rest.split_once(']').map(|(reference, _)| reference.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_read_in_order() {
        let text = "- heading \"Sign in\" [ref=e1]\n- textbox \"Email\" [ref=e2]: ada\n- button \"Go\" [ref=e10]";
        assert_eq!(refs(text), ["e1", "e2", "e10"]);
        assert!(refs("- text: no refs here").is_empty());
    }
}
