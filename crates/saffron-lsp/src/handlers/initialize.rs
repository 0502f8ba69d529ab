//! `initialize`: the workspace is indexed (every `.feature`/`.saffron` file and every recording)
//! before the reply, and the reply states what the server does.

use ls_types as lsp;

use crate::context::{ClientFeatures, Result};
use crate::handlers;
use crate::main_loop::GlobalState;

pub fn handle(state: &mut GlobalState, params: lsp::InitializeParams) -> Result<lsp::InitializeResult> {
    #[allow(deprecated)] // root_uri is still what many clients send.
    let root = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .and_then(|folder| folder.uri.to_file_path().map(|p| p.into_owned()))
        .or_else(|| params.root_uri.as_ref().and_then(|uri| uri.to_file_path().map(|p| p.into_owned())))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let client = ClientFeatures::from_capabilities(&params.capabilities);
    // The commands the client carries out itself are not offered: a client that registers
    // every command the server executes (VS Code's) would then register them twice.
    let commands = handlers::execute_command::COMMANDS
        .iter()
        .filter(|command| !client.client_commands.iter().any(|own| own == *command))
        .map(|command| command.to_string())
        .collect();
    state.start(root, client);

    Ok(lsp::InitializeResult {
        server_info: Some(lsp::ServerInfo {
            name: "saffron".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
        capabilities: lsp::ServerCapabilities {
            position_encoding: Some(lsp::PositionEncodingKind::UTF16),
            text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                ..lsp::TextDocumentSyncOptions::default()
            })),
            completion_provider: Some(lsp::CompletionOptions {
                trigger_characters: Some(vec![" ".to_string()]),
                resolve_provider: Some(true),
                ..lsp::CompletionOptions::default()
            }),
            hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
            definition_provider: Some(lsp::OneOf::Left(true)),
            references_provider: Some(lsp::OneOf::Left(true)),
            rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
                prepare_provider: Some(true),
                work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
            })),
            code_action_provider: Some(lsp::CodeActionProviderCapability::Options(lsp::CodeActionOptions {
                code_action_kinds: Some(vec![lsp::CodeActionKind::QUICKFIX, lsp::CodeActionKind::REFACTOR_REWRITE]),
                ..lsp::CodeActionOptions::default()
            })),
            code_lens_provider: Some(lsp::CodeLensOptions { resolve_provider: Some(false) }),
            execute_command_provider: Some(lsp::ExecuteCommandOptions {
                commands,
                work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
            }),
            document_symbol_provider: Some(lsp::OneOf::Left(true)),
            folding_range_provider: Some(lsp::FoldingRangeProviderCapability::Simple(true)),
            document_formatting_provider: Some(lsp::OneOf::Left(true)),
            semantic_tokens_provider: Some(lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                lsp::SemanticTokensOptions {
                    legend: handlers::semantic_tokens::legend(),
                    full: Some(lsp::SemanticTokensFullOptions::Delta { delta: Some(true) }),
                    range: None,
                    work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
                },
            )),
            ..lsp::ServerCapabilities::default()
        },
        offset_encoding: None,
    })
}
