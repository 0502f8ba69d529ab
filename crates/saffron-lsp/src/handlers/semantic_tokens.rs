//! Semantic tokens, full and delta. A delta is computed against the last full result sent for
//! the document: the common prefix and suffix of the encoded arrays are kept, the middle
//! replaced by one edit.

use saffron_ide::TokenType;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types as lsp;

use crate::context::RequestContext;
use crate::line_index::LineIndex;

pub fn legend() -> lsp::SemanticTokensLegend {
    let name = |kind: TokenType| match kind {
        TokenType::Keyword => lsp::SemanticTokenType::KEYWORD,
        TokenType::Comment => lsp::SemanticTokenType::COMMENT,
        TokenType::Decorator => lsp::SemanticTokenType::DECORATOR,
        TokenType::Function => lsp::SemanticTokenType::FUNCTION,
        TokenType::Parameter => lsp::SemanticTokenType::PARAMETER,
        TokenType::String => lsp::SemanticTokenType::STRING,
        TokenType::Number => lsp::SemanticTokenType::NUMBER,
        TokenType::Namespace => lsp::SemanticTokenType::NAMESPACE,
        TokenType::Variable => lsp::SemanticTokenType::VARIABLE,
    };
    lsp::SemanticTokensLegend {
        token_types: TokenType::ALL.iter().map(|kind| name(*kind)).collect(),
        token_modifiers: Vec::new(),
    }
}

/// The encoded tokens of a document (LSP's relative five-number form), from its tree-sitter
/// tree: the open document's incrementally maintained one, or a fresh parse.
pub fn encode(context: &RequestContext, uri: &lsp::Uri, tree: Option<saffron_ide::SyntaxTree>) -> Result<Vec<u32>> {
    let path = context.path(uri)?;
    let Some(file) = context.snapshot.file(&path) else { return Ok(Vec::new()) };
    let text = &file.source.text;
    let tree = tree.or_else(|| saffron_ide::SyntaxTree::parse(text));
    let tokens = match &tree {
        Some(tree) => tree.semantic_tokens(text),
        None => saffron_ide::semantic_tokens(&file.source.parsed.document, text),
    };
    let index = LineIndex::new(text);
    let mut data = Vec::new();
    let (mut previous_line, mut previous_start) = (0u32, 0u32);
    for token in tokens {
        let start = index.position(token.span.start);
        let end = index.position(token.span.end);
        if end.line != start.line {
            continue;
        }
        let delta_line = start.line - previous_line;
        let delta_start = if delta_line == 0 { start.character - previous_start } else { start.character };
        data.extend([delta_line, delta_start, end.character - start.character, token.kind.index(), 0]);
        previous_line = start.line;
        previous_start = start.character;
    }
    Ok(data)
}

pub fn to_tokens(data: &[u32], result_id: String) -> lsp::SemanticTokens {
    lsp::SemanticTokens {
        result_id: Some(result_id),
        data: data
            .chunks_exact(5)
            .map(|c| lsp::SemanticToken {
                delta_line: c[0],
                delta_start: c[1],
                length: c[2],
                token_type: c[3],
                token_modifiers_bitset: c[4],
            })
            .collect(),
    }
}

/// One edit turning `old` into `new`, in whole tokens.
pub fn delta(old: &[u32], new: &[u32]) -> Vec<lsp::SemanticTokensEdit> {
    let prefix = old.chunks_exact(5).zip(new.chunks_exact(5)).take_while(|(a, b)| a == b).count() * 5;
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old[prefix..]
        .rchunks_exact(5)
        .zip(new[prefix..].rchunks_exact(5))
        .take_while(|(a, b)| a == b)
        .count()
        .min(max_suffix / 5)
        * 5;
    if prefix == old.len() && prefix == new.len() {
        return Vec::new();
    }
    let inserted = &new[prefix..new.len() - suffix];
    vec![lsp::SemanticTokensEdit {
        start: prefix as u32,
        delete_count: (old.len() - suffix - prefix) as u32,
        data: Some(to_tokens(inserted, String::new()).data),
    }]
}

#[cfg(test)]
mod tests {
    use super::delta;

    fn apply(old: &[u32], edits: &[tower_lsp_server::ls_types::SemanticTokensEdit]) -> Vec<u32> {
        let mut out = old.to_vec();
        for edit in edits {
            let data: Vec<u32> = edit
                .data
                .iter()
                .flatten()
                .flat_map(|t| [t.delta_line, t.delta_start, t.length, t.token_type, t.token_modifiers_bitset])
                .collect();
            out.splice(edit.start as usize..(edit.start + edit.delete_count) as usize, data);
        }
        out
    }

    #[test]
    fn a_delta_applied_to_the_old_tokens_gives_the_new() {
        let old = [0, 0, 7, 0, 0, 1, 2, 3, 1, 0, 0, 5, 2, 2, 0];
        let new = [0, 0, 7, 0, 0, 1, 2, 4, 1, 0, 0, 5, 2, 2, 0, 1, 0, 1, 1, 0];
        assert_eq!(apply(&old, &delta(&old, &new)), new);
        assert_eq!(apply(&new, &delta(&new, &old)), old);
        assert!(delta(&old, &old).is_empty());
        assert_eq!(apply(&old, &delta(&old, &[])), Vec::<u32>::new());
    }
}
