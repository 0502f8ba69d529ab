use crate::context::Result;
use ls_types as lsp;

use crate::context::RequestContext;
use crate::convert::fold_kind;
use crate::line_index::LineIndex;

pub fn handle(context: &RequestContext, params: lsp::FoldingRangeParams) -> Result<Option<Vec<lsp::FoldingRange>>> {
    let path = context.path(&params.text_document.uri)?;
    let Some(file) = context.snapshot.file(&path) else { return Ok(None) };
    let index = LineIndex::new(&file.source.text);
    let ranges = saffron_ide::folding_ranges(&file.source.parsed.document, &file.source.text)
        .into_iter()
        .map(|range| lsp::FoldingRange {
            start_line: index.position(range.span.start).line,
            end_line: index.position(range.span.end).line,
            kind: Some(fold_kind(range.kind)),
            ..lsp::FoldingRange::default()
        })
        .filter(|range| range.end_line > range.start_line)
        .collect();
    Ok(Some(ranges))
}
