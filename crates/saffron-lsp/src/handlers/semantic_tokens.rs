//! Semantic tokens, full and delta. A delta is computed against the last result sent for the
//! document: the common prefix and suffix of the encoded arrays are kept, the middle replaced
//! by one edit. The loop hands the pool the open document's text and syntax tree (edited with
//! it, reparsed there where the edits touched it) and a result id; the tokens are encoded
//! there, so the request never waits for the index.

use ls_types as lsp;
use saffron_ide::TokenType;

use crate::context::{RequestContext, Result};
use crate::dispatch::Deferred;
use crate::documents::Syntax;
use crate::line_index::LineIndex;
use crate::main_loop::{GlobalState, SentTokens};

/// `textDocument/semanticTokens/full`.
pub fn full(
    state: &mut GlobalState,
    params: lsp::SemanticTokensParams,
) -> Result<Deferred<Option<lsp::SemanticTokensResult>>> {
    let (uri, syntax, context, id, sent) = prepare(state, params.text_document.uri);
    Ok(Box::new(move || {
        let data = encode(&context, &uri, syntax)?;
        let tokens = to_tokens(&data, id.clone());
        remember(&sent, uri, id, data);
        Ok(Some(lsp::SemanticTokensResult::Tokens(tokens)))
    }))
}

/// `textDocument/semanticTokens/full/delta`: a delta when the client has the last result sent.
pub fn full_delta(
    state: &mut GlobalState,
    params: lsp::SemanticTokensDeltaParams,
) -> Result<Deferred<Option<lsp::SemanticTokensFullDeltaResult>>> {
    let previous_id = params.previous_result_id;
    let (uri, syntax, context, id, sent) = prepare(state, params.text_document.uri);
    Ok(Box::new(move || {
        let data = encode(&context, &uri, syntax)?;
        let previous = sent.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&uri).cloned();
        let result = match previous {
            Some((sent_id, sent_data)) if sent_id == previous_id => {
                lsp::SemanticTokensFullDeltaResult::TokensDelta(lsp::SemanticTokensDelta {
                    result_id: Some(id.clone()),
                    edits: delta(&sent_data, &data),
                })
            }
            _ => lsp::SemanticTokensFullDeltaResult::Tokens(to_tokens(&data, id.clone())),
        };
        remember(&sent, uri, id, data);
        Ok(Some(result))
    }))
}

/// What the pool needs, taken on the loop: the open document's text and tree (the indexed copy
/// of a file that is not open), a new result id.
fn prepare(state: &mut GlobalState, uri: lsp::Uri) -> (lsp::Uri, Option<Syntax>, RequestContext, String, SentTokens) {
    let syntax = state.open_syntax(&uri);
    let context = state.context_as_indexed();
    (uri, syntax, context, state.next_result_id(), state.semantic_tokens.clone())
}

fn remember(sent: &SentTokens, uri: lsp::Uri, id: String, data: Vec<u32>) {
    sent.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(uri, (id, data));
}

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
/// tree: the open document's incrementally maintained one, or a fresh parse of the indexed text.
pub fn encode(context: &RequestContext, uri: &lsp::Uri, syntax: Option<Syntax>) -> Result<Vec<u32>> {
    let path = context.path(uri)?;
    let indexed = context.snapshot.file(&path);
    let (text, tree) = match syntax {
        Some(syntax) => syntax.parse(),
        None => {
            let Some(file) = indexed else { return Ok(Vec::new()) };
            (file.source.text.clone(), saffron_ide::SyntaxTree::parse(&file.source.text))
        }
    };
    let tokens = match (&tree, indexed) {
        (Some(tree), _) => tree.semantic_tokens(&text),
        // No tree-sitter tree: the parser's document, when it is of this very text.
        (None, Some(file)) if file.source.text == text => {
            saffron_ide::semantic_tokens(&file.source.parsed.document, &text)
        }
        (None, _) => Vec::new(),
    };
    let text = text.as_str();
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

    fn apply(old: &[u32], edits: &[ls_types::SemanticTokensEdit]) -> Vec<u32> {
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
