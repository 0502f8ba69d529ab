use crate::context::Result;
use ls_types as lsp;

use crate::context::RequestContext;

pub fn handle(context: &RequestContext, params: lsp::CodeLensParams) -> Result<Option<Vec<lsp::CodeLens>>> {
    let path = context.path(&params.text_document.uri)?;
    let lenses = saffron_ide::code_lenses(&context.snapshot, &path)
        .into_iter()
        .filter_map(|lens| {
            Some(lsp::CodeLens {
                range: context.range(&path, lens.span)?,
                command: Some(lsp::Command {
                    title: lens.command.title,
                    command: lens.command.command,
                    arguments: Some(lens.command.arguments.into_iter().map(serde_json::Value::String).collect()),
                }),
                data: None,
            })
        })
        .collect();
    Ok(Some(lenses))
}
