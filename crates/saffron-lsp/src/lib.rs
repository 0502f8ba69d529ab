//! `saffron lsp`: the language server. This is the only crate that knows LSP types; every
//! feature lives in `saffron-ide` as plain data and is translated here, one file per request
//! (`handlers/`).
//!
//! The server owns its main loop (`main_loop`), in rust-analyzer's shape: a reader thread of
//! its own that survives malformed frames (`transport`), a loop that owns the state and
//! answers typing on the spot, and a pool for the rest (`dispatch`). lsp-server gives the
//! message types, ls-types the protocol's, and `ext` the types where ls-types lags.

mod context;
mod convert;
mod dispatch;
mod documents;
mod ext;
mod handlers;
mod line_index;
mod main_loop;
mod transport;

use std::io::{Read, Write};
use std::time::Duration;

/// Serves the language server on stdin/stdout until the client exits. `true` when it exited
/// after `shutdown`, as the protocol asks (the process should then exit with 0, else 1).
pub fn run_stdio() -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        let (input, quiet) = transport::stdin()?;
        Ok(serve(input, quiet, transport::stdout()?))
    }
    #[cfg(not(unix))]
    {
        // Without a way to ask stdin whether more is coming, a frame is judged once it is whole.
        Ok(serve(std::io::stdin(), |_| true, std::io::stdout()))
    }
}

/// Serves one client: frames are read from `input` on a thread of their own and answers
/// written to `output`.
fn serve(
    input: impl Read + Send + 'static,
    quiet: impl FnMut(Duration) -> bool + Send + 'static,
    output: impl Write + Send + 'static,
) -> bool {
    let (sender, incoming) = crossbeam_channel::unbounded();
    // The reader is left behind at exit: it may be blocked on a read the client never ends.
    let reader = std::thread::Builder::new()
        .name("saffron-lsp-reader".to_string())
        .spawn(move || transport::read_frames(input, quiet, &sender));
    if reader.is_err() {
        return false;
    }
    main_loop::run(incoming, transport::Output::new(output))
}
