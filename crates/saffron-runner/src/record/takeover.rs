//! A person takes the browser over: the [`Lease`] of each live page, shared by the gateway
//! (every agent call), the takeover bar in the page and the terminal, and [`Takeover`], the
//! run's handle on all of them.
//!
//! Only a run a person watches has one (`saffron run --headed`): a headless run never adds the
//! bar, and its gateway has no lease.

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant, SystemTime};

use saffron_browser::PersonAsks;
use tokio::sync::watch;

use super::lease::{Lease, Refusal, Ticket};

/// The run's handle on the leases of its live pages: the terminal's key acts on them all, and
/// observers (the terminal's status line, tests) follow them.
#[derive(Clone)]
pub struct Takeover {
    hub: Arc<Hub>,
}

struct Hub {
    leases: Mutex<Vec<Weak<Mutex<Lease>>>>,
    /// Bumped on every change of any lease.
    version: watch::Sender<u64>,
}

impl Default for Takeover {
    fn default() -> Takeover {
        Takeover::new()
    }
}

impl std::fmt::Debug for Takeover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Takeover").field("leases", &self.leases()).finish()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Takeover {
    pub fn new() -> Takeover {
        Takeover { hub: Arc::new(Hub { leases: Mutex::new(Vec::new()), version: watch::channel(0).0 }) }
    }

    /// The leases of the live pages, as they are now.
    pub fn leases(&self) -> Vec<Lease> {
        let mut leases = lock(&self.hub.leases);
        leases.retain(|lease| lease.strong_count() > 0);
        leases.iter().filter_map(Weak::upgrade).map(|lease| lock(&lease).clone()).collect()
    }

    /// The terminal's key: gives every page a person holds back to the agent, or, when a
    /// person holds none, takes them all over. `true` when a person holds them now.
    pub fn toggle(&self) -> bool {
        let cells: Vec<Arc<Mutex<Lease>>> = lock(&self.hub.leases).iter().filter_map(Weak::upgrade).collect();
        let now = SystemTime::now();
        let held = cells.iter().any(|cell| lock(cell).person_holds());
        for cell in &cells {
            if held {
                lock(cell).give_back(now);
            } else {
                lock(cell).take_over(now);
            }
        }
        self.bump();
        !held && !cells.is_empty()
    }

    /// Changes to any lease (a new value each time), for observers.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.hub.version.subscribe()
    }

    /// Waits until `condition` holds of the leases (checked after every change).
    pub async fn wait_until(&self, condition: impl Fn(&[Lease]) -> bool) {
        let mut changes = self.changes();
        loop {
            changes.borrow_and_update();
            if condition(&self.leases()) {
                return;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// A new live page's lease: the agent holds it.
    pub(crate) fn register(&self) -> SharedLease {
        let cell = Arc::new(Mutex::new(Lease::new()));
        lock(&self.hub.leases).push(Arc::downgrade(&cell));
        self.bump();
        SharedLease { cell, takeover: self.clone() }
    }

    fn bump(&self) {
        self.hub.version.send_modify(|version| *version += 1);
    }
}

/// One live page's lease.
#[derive(Clone)]
pub(crate) struct SharedLease {
    cell: Arc<Mutex<Lease>>,
    takeover: Takeover,
}

impl SharedLease {
    pub(crate) fn read<R>(&self, look: impl FnOnce(&Lease) -> R) -> R {
        look(&lock(&self.cell))
    }

    /// Changes the lease; observers are woken when it did change.
    pub(crate) fn update<R>(&self, change: impl FnOnce(&mut Lease) -> R) -> R {
        let (result, changed) = {
            let mut lease = lock(&self.cell);
            let before = lease.clone();
            let result = change(&mut lease);
            (result, *lease != before)
        };
        if changed {
            self.takeover.bump();
        }
        result
    }

    /// An agent's call begins: waits (up to `limit`) while a person holds the browser, then its
    /// ticket, or that it must first be told of a give-back, or (`PersonHolds`) that the person
    /// still holds it.
    pub(crate) async fn acquire(&self, limit: Duration) -> Result<Ticket, Refusal> {
        self.acquire_with(limit, Lease::begin).await
    }

    /// Saffron's own action begins: as [`SharedLease::acquire`], the news of a give-back kept
    /// for the agent.
    pub(crate) async fn acquire_keeping_news(&self, limit: Duration) -> Result<Ticket, Refusal> {
        self.acquire_with(limit, Lease::begin_keeping_news).await
    }

    async fn acquire_with(
        &self,
        limit: Duration,
        begin: fn(&mut Lease) -> Result<Ticket, Refusal>,
    ) -> Result<Ticket, Refusal> {
        let deadline = Instant::now() + limit;
        let mut changes = self.takeover.changes();
        let mut waiting = false;
        let outcome = loop {
            changes.borrow_and_update();
            let begun = self.update(|lease| {
                let begun = begin(lease);
                if matches!(begun, Err(Refusal::PersonHolds(_))) && !waiting {
                    lease.wait(true);
                }
                begun
            });
            match begun {
                Err(Refusal::PersonHolds(since)) => {
                    waiting = true;
                    match tokio::time::timeout_at(deadline.into(), changes.changed()).await {
                        Ok(Ok(())) => continue,
                        _ => break Err(Refusal::PersonHolds(since)),
                    }
                }
                other => break other,
            }
        };
        if waiting {
            self.update(|lease| lease.wait(false));
        }
        outcome
    }

    /// The call that began with `ticket` is over.
    pub(crate) fn end(&self, ticket: Ticket) {
        let _ = self.update(|lease| lease.end(ticket));
    }

    /// Whether a call that began with `ticket` may still act and be recorded.
    pub(crate) fn admits(&self, ticket: Ticket) -> bool {
        self.read(|lease| lease.admits(ticket).is_ok())
    }

    /// The fence of an action of the call that began with `ticket`: it stops the action before
    /// any more input is dispatched once the lease moved.
    pub(crate) fn fence(&self, ticket: Ticket) -> saffron_browser::Fence {
        let lease = self.clone();
        saffron_browser::Fence::new(move || {
            (!lease.admits(ticket)).then(|| "a person took over the browser from the agent".to_owned())
        })
    }
}

/// The takeover bar of a live page, wired to its lease. Dropped, the bar no longer answers.
pub(crate) struct Wired {
    pub(crate) lease: SharedLease,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Wired {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Adds the takeover bar to `context` and gives its lease to `takeover`: the person's clicks
/// move the lease, and the bar shows who holds it, whatever moved it (the terminal's key too).
pub(crate) async fn wire(
    context: &saffron_browser::Context,
    takeover: &Takeover,
) -> Result<Wired, saffron_browser::BrowserError> {
    let (bar, mut asks) = context.enable_takeover_bar().await?;
    let lease = takeover.register();
    let task = tokio::spawn({
        let lease = lease.clone();
        let mut changes = takeover.changes();
        async move {
            let mut shown = false;
            loop {
                let held = lease.read(Lease::person_holds);
                if held != shown {
                    bar.show(held).await;
                    shown = held;
                }
                tokio::select! {
                    ask = asks.recv() => match ask {
                        Some(PersonAsks::TakeOver) => {
                            lease.update(|lease| lease.take_over(SystemTime::now()));
                        }
                        Some(PersonAsks::GiveBack) => {
                            lease.update(|lease| lease.give_back(SystemTime::now()));
                        }
                        None => break,
                    },
                    changed = changes.changed() => if changed.is_err() { break },
                }
            }
        }
    });
    Ok(Wired { lease, task })
}
