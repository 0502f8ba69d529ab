//! Saffron's demo app: "Saffron Shop back office", served on 127.0.0.1, that the example
//! scenarios run against.
//!
//! It is deliberately hostile on demand (after the "hostile app" of the design seeds): public
//! demo sites do not break on command, so drift, runtime faults and real defects are switches
//! here, and a test can show that drift is survived through locator fallbacks, that faults are
//! ridden out or reported, and that defects turn a scenario red.
//!
//! ```no_run
//! # async fn demo() -> saffron_demo::Result<()> {
//! use saffron_demo::{DemoConfig, DemoServer, Drift};
//!
//! let server = DemoServer::start(DemoConfig::default()).await?;
//! println!("open {}/login", server.url());
//! let mut config = server.config();
//! config.drift.insert(Drift::RenamedLabel);
//! server.set_config(config);
//! server.shutdown().await?;
//! # Ok(())
//! # }
//! ```
//!
//! The page and switch contract is in this crate's README.

mod api;
mod app;
mod config;
mod ledger;
mod meridian;
mod pages;
mod shop;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use app::{RequestLog, SLOW_PAGE_MS, STATUS_CLIENT_CLOSED};
pub use config::{
    DEFAULT_LATENCY_MS, DEFAULT_PASSWORD, DEMO_EMAIL, Defect, DemoConfig, Drift, Fault, ParseSwitchError,
};

/// How long `shutdown` waits for open connections to finish before dropping them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("could not listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: io::Error },
    #[error("demo server failed: {0}")]
    Serve(#[from] io::Error),
    #[error("demo server task failed: {0}")]
    Task(String),
}

pub type Result<T, E = DemoError> = std::result::Result<T, E>;

/// A running demo app. Dropping it stops the server too (without waiting); `shutdown` waits.
pub struct DemoServer {
    addr: SocketAddr,
    app: Arc<app::App>,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl DemoServer {
    /// Starts the app on a free port of 127.0.0.1 with fresh seed data.
    pub async fn start(config: DemoConfig) -> Result<DemoServer> {
        DemoServer::start_on_port(config, 0).await
    }

    /// Starts the app on the given port of 127.0.0.1 (0 picks a free one). Only loopback:
    /// the demo has a well-known password and a control plane anyone can call.
    pub async fn start_on_port(config: DemoConfig, port: u16) -> Result<DemoServer> {
        let listener =
            TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await.map_err(|source| DemoError::Bind { port, source })?;
        let addr = listener.local_addr()?;
        let (stop, stopping) = watch::channel(false);
        let app = Arc::new(app::App::new(config, stopping.clone()));
        let router = app::router(app.clone());
        let mut signal = stopping;
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    // An error means the sender is gone, which also means "stop".
                    let _ = signal.wait_for(|stop| *stop).await;
                })
                .await
        });
        Ok(DemoServer { addr, app, stop, task: Some(task) })
    }

    /// "http://127.0.0.1:PORT", without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The switches now in force.
    pub fn config(&self) -> DemoConfig {
        self.app.config()
    }

    /// Flips switches at runtime; the next request sees the new configuration. Sessions and
    /// data are kept, so a scenario can change the app under a signed-in browser.
    pub fn set_config(&self, config: DemoConfig) {
        self.app.set_config(config);
    }

    /// Every session token the demo handed out (signed out or not): what must never show in
    /// a report.
    pub fn issued_sessions(&self) -> Vec<String> {
        self.app.issued_sessions()
    }

    /// Every request so far (except the `/__demo/` control plane), in arrival order.
    pub fn requests(&self) -> Vec<RequestLog> {
        self.app.requests()
    }

    /// The lab ledger's switches (`notice`, `expire`: see `/lab/ledger`); its payments are
    /// emptied.
    pub fn set_ledger_switches(&self, notice: bool, expire: bool) {
        self.app.ledger_switches(notice, expire);
    }

    /// The payments posted to the lab ledger, as (payee, amount), in order.
    pub fn ledger_payments(&self) -> Vec<(String, String)> {
        self.app.ledger_payments()
    }

    /// Back to the seed data: orders, export jobs, sessions and the request log. The switches
    /// are kept. Lets one server host many scenarios that each start from the same state.
    pub fn reset(&self) {
        self.app.reset();
    }

    /// Stops accepting connections, lets open ones finish (at most a few seconds; latency
    /// sleeps are cut short) and waits for the server task.
    pub async fn shutdown(mut self) -> Result<()> {
        self.stop.send_replace(true);
        let Some(mut task) = self.task.take() else { return Ok(()) };
        match tokio::time::timeout(SHUTDOWN_GRACE, &mut task).await {
            Ok(Ok(served)) => Ok(served?),
            Ok(Err(join)) => Err(DemoError::Task(join.to_string())),
            Err(_elapsed) => {
                // A client holding a connection open must not hang the caller.
                task.abort();
                Ok(())
            }
        }
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

impl std::fmt::Debug for DemoServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoServer").field("addr", &self.addr).finish_non_exhaustive()
    }
}
