//! `saffron lsp`: the language server. This is the only crate that knows LSP types; every
//! feature lives in `saffron-ide` as plain data and is translated here, one file per request
//! (`handlers/`).

mod context;
mod convert;
mod documents;
mod handlers;
mod json_text;
mod line_index;
mod server;
mod transport;

use tower_lsp_server::{LspService, Server};

/// Serves the language server on stdin/stdout until the client exits.
pub fn run_stdio() -> std::io::Result<()> {
    // One thread for the protocol: a message wakes the thread that answers it, not a worker
    // that hands it over (a round trip took about 40 µs less). The heavy work (loading,
    // diagnostics, most requests) runs on blocking threads, so this one stays responsive.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let replies = std::sync::Arc::new(transport::PreparedReplies::default());
        let backend_replies = replies.clone();
        let mut direct = None;
        let (service, socket) = LspService::build(|client| {
            let backend = server::Backend::new(client, backend_replies);
            direct = Some(backend.direct_handler());
            backend
        })
        .custom_method(transport::MALFORMED_METHOD, server::Backend::malformed_message)
        .custom_method(transport::COMPLETION_METHOD, server::Backend::completion)
        .custom_method(transport::COMPLETION_RESOLVE_METHOD, server::Backend::completion_resolve)
        .finish();
        let output = transport::shared_output(transport::stdout());
        let input = transport::guarded_input(transport::stdin(), direct.map(|handler| (handler, output.clone())));
        let output = transport::guarded_output(output, replies);
        Server::new(input, output, socket).serve(service).await;
    });
    // The stdin reader may still be blocked on a read the client never completes; after `exit`
    // nothing is left to wait for.
    runtime.shutdown_background();
    Ok(())
}
