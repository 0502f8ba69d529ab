use crate::context::Result;
use ls_types as lsp;

use crate::context::RequestContext;
use crate::convert::workspace_edit;

pub fn handle(context: &RequestContext, params: lsp::CodeActionParams) -> Result<Option<lsp::CodeActionResponse>> {
    let path = context.path(&params.text_document.uri)?;
    let Some(text) = context.text(&path) else { return Ok(None) };
    let span = crate::line_index::LineIndex::new(text).span(params.range);
    let mut actions: Vec<lsp::CodeActionOrCommand> = saffron_ide::code_actions(&context.snapshot, &path, span)
        .into_iter()
        .map(|action| {
            let diagnostics: Vec<lsp::Diagnostic> = params
                .context
                .diagnostics
                .iter()
                .filter(|d| matches!(&d.code, Some(lsp::NumberOrString::String(code)) if *code == action.fixes))
                .cloned()
                .collect();
            lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: action.title,
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: (!diagnostics.is_empty()).then_some(diagnostics),
                edit: Some(workspace_edit(context, &action.change)),
                is_preferred: Some(action.is_preferred),
                ..lsp::CodeAction::default()
            })
        })
        .collect();
    actions.extend(super::author::action(context, &path, span));
    Ok(Some(actions))
}
