//! Saffron's Chromium medium: performs one already-resolved [`Action`] at a time in a real
//! Chromium, over the DevTools protocol, and reports exactly what happened.
//!
//! This is the only crate that knows CDP (through `chromiumoxide`); everything else hands it
//! plain recording data and gets plain data back.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use saffron_browser::{Browser, BrowserConfig, ContextOptions};
//! use saffron_recording::{Action, Target};
//!
//! let browser = Browser::launch(BrowserConfig::default()).await?;
//! let mut context = browser.new_context(ContextOptions { base_url: "http://127.0.0.1:8080".into() }).await?;
//! context.begin_step();
//! context.perform(&Action::Goto { url: "/login".into(), timeout_ms: None }, None).await?;
//! let sign_in = Action::Click { target: Target::role("button", "Sign in"), timeout_ms: None };
//! let performed = context.perform(&sign_in, None).await?;
//! assert!(performed.drift.is_empty());
//! context.close().await;
//! browser.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! How it behaves, in the manner of Playwright:
//! - **Targets** resolve tier by tier (role + accessible name from Chromium's accessibility
//!   tree, label, placeholder, test id, text, then each CSS fallback); a tier fires only on
//!   exactly one match. A scoped target (`within`) is looked for inside the one container whose
//!   text matches, as Playwright's `filter({ hasText })` and chaining do.
//! - **Drift**: every signal the recording holds is compared with the element found (the tier
//!   that fired, role and name, label, placeholder, test id, text, each CSS fallback), and
//!   each changed one is reported as a [`Drift`], recorded value → value now.
//! - **Actions** wait for actionability (attached, visible, stable, enabled, receiving events at
//!   the click point, editable) and then dispatch real input once; clicks, key presses and
//!   dialog answers are never repeated.
//! - **Assertions** are retried until their timeout and fail with what was expected and found.
//!
//! [`Action`]: saffron_recording::Action

#![warn(missing_docs)]

pub mod bidi;
mod browser;
mod cdp;
mod context;
mod cookies;
pub mod devices;
mod downloads;
mod drift;
mod error;
pub mod firefox;
mod frame_tree;
mod guard;
mod interruption;
mod js;
mod keys;
mod ladder;
#[cfg(test)]
mod launch_tests;
mod locate;
mod network;
mod observed;
mod page;
mod perform;
mod profile;
mod remote;
mod snapshot;
mod storage_state;
mod takeover;
mod timing;
mod url;

use std::sync::{Mutex, MutexGuard};

#[cfg(feature = "testing")]
pub mod testing;

pub use browser::{Browser, BrowserConfig, CHROMIUM_ENV, DEFAULT_CHROMIUM, Engine, find_chromium};
pub use context::{Context, ContextOptions};
pub use cookies::SetCookie;
pub use devices::{Device, UnknownDevice, device};
pub use drift::{Drift, Signal};
pub use error::{ActionFailure, BrowserError, FailureKind};
pub use guard::{Fence, Guard, HandlerBounds, SecretOrigins};
pub use interruption::Detector;
pub use ladder::{ElementSummary, LadderTarget, RefError};
pub use observed::{ActionTrail, Bounds, ConsoleRecord, FramePicture, NetworkRecord, Observed, TabRecord};
pub use perform::Performed;
pub use profile::{WatchedFolder, sweep_stale_profiles};
pub use remote::{Endpoint, EndpointError};
pub use snapshot::{PageSnapshot, TabSummary};
pub use storage_state::StorageState;
pub use takeover::{PersonAsks, TakeoverBar};
pub use timing::TIMING_ENV;
pub use url::{relativize_url, resolve_url};

/// Locks a mutex, recovering it if a panicking holder poisoned it: the guarded data here is
/// only ever appended to or replaced whole, so it stays usable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Collapses runs of whitespace to one space and trims, as text assertions compare.
pub(crate) fn normalize_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An accessible name as a person reads it, for comparing a recorded name with the page's: its
/// visible characters other than white space. Chromium puts a space into a name where the page
/// allows a line break (`/pets<wbr>/{id}` is named `/pets /{id}`), and pages put invisible
/// characters into long words so that they may break (zero-width space, soft hyphen, word
/// joiner, BOM). A person sees neither, and Playwright's `getByRole` finds such elements by the
/// name as shown (tried on Swagger UI's operation buttons).
pub(crate) fn name_key(name: &str) -> String {
    name.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '\u{200b}' | '\u{00ad}' | '\u{2060}' | '\u{feff}'))
        .collect()
}
