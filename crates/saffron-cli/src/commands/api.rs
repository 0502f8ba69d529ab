//! `saffron api pin [SERVICE] [--url URL]`: fetches a service's OpenAPI 3 document and writes it
//! into the project, where `expectSchema` checks read it.

use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use clap::{Args, Subcommand};
use saffron_runner::contract::{Contract, contract_path, digest, document_json, fetch};

use crate::project;
use crate::terminal::{escape_controls, out};

#[derive(Args)]
pub struct ApiArgs {
    #[command(subcommand)]
    command: ApiCommand,
}

#[derive(Subcommand)]
enum ApiCommand {
    /// Fetch a service's OpenAPI 3 document (JSON) into the project: `contract` in its
    /// [api.services.NAME] table, else contracts/NAME.openapi.json.
    Pin(PinArgs),
}

#[derive(Args)]
struct PinArgs {
    /// The service, as named in [api.services] (default: the only one).
    service: Option<String>,
    /// Where the document is (default: the service's `openapi_url`).
    #[arg(long)]
    url: Option<String>,
}

pub fn run(args: ApiArgs) -> Result<ExitCode> {
    match args.command {
        ApiCommand::Pin(pin) => pin_contract(pin),
    }
}

fn pin_contract(args: PinArgs) -> Result<ExitCode> {
    let root = project::find_root()?;
    let config = saffron_runner::session::load_config(&root)?;
    let services = &config.api.services;
    let name = match (args.service, services.len()) {
        (Some(name), _) => name,
        (None, 1) => services.keys().next().cloned().unwrap_or_default(),
        (None, 0) => bail!("no service is configured: add [api.services.NAME] with its base_url to saffron.toml"),
        (None, _) => bail!(
            "several services are configured ({}): name the one to pin",
            services.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    };
    let Some(service) = services.get(&name) else {
        bail!(
            "there is no service `{name}` in [api.services] ({})",
            services.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    };
    let url = match args.url.or_else(|| service.openapi_url.clone()).filter(|url| !url.trim().is_empty()) {
        Some(url) => url,
        None => {
            bail!("the service `{name}` has no openapi_url: pass --url, or set openapi_url in [api.services.{name}]")
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let bytes = runtime.block_on(fetch(url.trim())).map_err(anyhow::Error::msg)?;
    let cannot = || format!("the document at {url} cannot be pinned");
    let (document, was_yaml) = document_json(&bytes).with_context(cannot)?;
    // A YAML document is pinned as the JSON it says: one format in the project, read everywhere.
    let bytes = if was_yaml {
        let mut json = serde_json::to_vec_pretty(&document)?;
        json.push(b'\n');
        json
    } else {
        bytes
    };
    let contract = Contract::from_document(document).with_context(cannot)?;
    let path = contract_path(&root, &name, service);
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    }
    saffron_recording::write_atomic(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
    let shown = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
    out!(
        "pinned {name}: {} ({} operations, sha256 {}{})",
        escape_controls(&shown),
        contract.operations(),
        digest(&bytes),
        if was_yaml { "; converted from YAML" } else { "" }
    );
    Ok(ExitCode::SUCCESS)
}
