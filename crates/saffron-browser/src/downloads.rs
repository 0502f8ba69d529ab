//! The files a context downloads.
//!
//! Chromium is told to save each context's downloads in a folder of its own, named by their
//! download ids (`Browser.setDownloadBehavior`, `allowAndName`), and to report them. A page's
//! download then never lands in the user's own downloads folder, and a scenario's files go
//! with its context when it closes. The reports (`Browser.downloadWillBegin`, then
//! `Browser.downloadProgress`) come for every context of the browser: a download is this
//! context's when one of its tabs started it, or when its file is in this context's folder
//! (a download started by a frame inside a tab).
//!
//! A launched browser's folders are inside its profile folder, which goes with it however the
//! run ends. A remote browser's are inside a folder in the temporary directory that is watched
//! the same way: it saves files there only when it shares this machine's file system (on this
//! machine, or in a container with that folder mounted); elsewhere its downloads fail, and a
//! check says why.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chromiumoxide::cdp::browser_protocol::browser::{
    DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
};
use chromiumoxide::listeners::EventStream;
use futures::{Stream, StreamExt};
use serde_json::json;

use crate::browser::Browser;
use crate::cdp::CdpFail;
use crate::context::Shared;

/// Where a download stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Progress {
    Saving,
    /// Complete, in this file.
    Saved(PathBuf),
    Canceled,
}

/// One download the context has seen begin.
#[derive(Debug, Clone)]
pub(crate) struct Download {
    guid: String,
    /// The name the browser suggests for it (from the link's `download` attribute, the
    /// response's `Content-Disposition`, or the URL).
    pub file_name: String,
    pub progress: Progress,
    pub received_bytes: u64,
    pub total_bytes: u64,
    /// Started by one of the context's tabs, or saved in its folder.
    pub ours: bool,
}

impl Download {
    /// A download one of the context's tabs began (Firefox's report: `id` is its navigation).
    pub(crate) fn begun(id: &str, file_name: &str) -> Download {
        Download {
            guid: id.to_owned(),
            file_name: file_name.to_owned(),
            progress: Progress::Saving,
            received_bytes: 0,
            total_bytes: 0,
            ours: true,
        }
    }

    /// Whether this is the download `id` reports on.
    pub(crate) fn is(&self, id: &str) -> bool {
        self.guid == id
    }

    /// How it reads in a failure message: `"orders.csv" (1,204 bytes)`.
    pub fn describe(&self) -> String {
        let name = format!("{:?}", self.file_name);
        match &self.progress {
            Progress::Saved(_) => format!("{name} ({} bytes)", self.received_bytes),
            Progress::Canceled => format!("{name} (canceled)"),
            Progress::Saving if self.total_bytes > 0 => {
                format!("{name} (in progress, {} of {} bytes)", self.received_bytes, self.total_bytes)
            }
            Progress::Saving => format!("{name} (in progress, {} bytes)", self.received_bytes),
        }
    }
}

/// The browser-wide download reports, subscribed to before anything can start a download.
pub(crate) struct DownloadReports {
    began: EventStream<EventDownloadWillBegin>,
    progressed: EventStream<EventDownloadProgress>,
}

impl DownloadReports {
    pub async fn subscribe(
        chromium: &chromiumoxide::Browser,
    ) -> Result<DownloadReports, chromiumoxide::error::CdpError> {
        let began = chromium.event_listener::<EventDownloadWillBegin>().await?;
        let progressed = chromium.event_listener::<EventDownloadProgress>().await?;
        Ok(DownloadReports { began, progressed })
    }
}

/// Makes the context save its downloads in a new folder of its own and report them.
/// The folder is removed when the returned handle is dropped, with the context.
pub(crate) async fn save_in_own_folder(browser: &Browser, context_id: &str) -> Result<tempfile::TempDir, String> {
    let folder = tempfile::Builder::new()
        .prefix("downloads-")
        .tempdir_in(browser.downloads_parent())
        .map_err(|error| format!("could not make a folder for the context's downloads: {error}"))?;
    let params = json!({
        "behavior": "allowAndName",
        "browserContextId": context_id,
        "downloadPath": folder.path().to_string_lossy(),
        "eventsEnabled": true,
    });
    browser.call("Browser.setDownloadBehavior", params).await.map_err(|error: CdpFail| error.to_string())?;
    Ok(folder)
}

/// Keeps the context's download list up to date until the context closes.
pub(crate) async fn watch(reports: DownloadReports, folder: PathBuf, shared: Arc<Shared>) {
    follow(reports.began, reports.progressed, folder, shared).await
}

async fn follow(
    mut began: impl Stream<Item = Arc<EventDownloadWillBegin>> + Unpin,
    mut progressed: impl Stream<Item = Arc<EventDownloadProgress>> + Unpin,
    folder: PathBuf,
    shared: Arc<Shared>,
) {
    // The two reports come on two channels. Chromium sends a download's beginning before its
    // progress and the reports are queued in that order, so looking at beginnings first sees
    // them first; a small file can be complete by then, and its progress must not be dropped
    // for a download not yet listed. Progress for a download not listed is kept until it is
    // (or forever, for a download that began before this context).
    let mut unlisted: HashMap<String, EventDownloadProgress> = HashMap::new();
    loop {
        tokio::select! {
            biased;
            Some(event) = began.next() => {
                let frame = event.frame_id.as_ref().to_owned();
                let early = unlisted.remove(&event.guid);
                let early = early.map(|progress| (saved_file(&progress, &folder), progress));
                shared.update(|state| {
                    // A tab's main frame has the tab's id.
                    let ours = state.tabs.iter().any(|tab| tab.target_id == frame);
                    let mut download = Download {
                        guid: event.guid.clone(),
                        file_name: event.suggested_filename.clone(),
                        progress: Progress::Saving,
                        received_bytes: 0,
                        total_bytes: 0,
                        ours,
                    };
                    if let Some((saved, progress)) = early {
                        download.apply(&progress, saved);
                    }
                    state.downloads.push(download);
                });
            }
            Some(event) = progressed.next() => {
                let saved = saved_file(&event, &folder);
                let listed = shared.update(|state| {
                    match state.downloads.iter_mut().find(|download| download.guid == event.guid) {
                        Some(download) => {
                            download.apply(&event, saved);
                            true
                        }
                        None => false,
                    }
                });
                if !listed && unlisted.len() < UNLISTED_KEPT {
                    unlisted.insert(event.guid.clone(), event.as_ref().clone());
                }
            }
            else => break,
        }
    }
}

/// Progress reports kept for downloads not listed yet; beyond this many, they are other
/// contexts' downloads that began before this one was made.
const UNLISTED_KEPT: usize = 256;

/// A completed download's file, and whether it is in this context's folder (another
/// context's file is in another folder).
fn saved_file(event: &EventDownloadProgress, folder: &Path) -> Option<(PathBuf, bool)> {
    match event.state {
        DownloadProgressState::Completed => {
            let file = event.file_path.as_deref().map_or_else(|| folder.join(&event.guid), PathBuf::from);
            let in_ours = file.starts_with(folder) && file.is_file();
            Some((file, in_ours))
        }
        _ => None,
    }
}

impl Download {
    fn apply(&mut self, event: &EventDownloadProgress, saved: Option<(PathBuf, bool)>) {
        self.received_bytes = event.received_bytes.max(0.0) as u64;
        self.total_bytes = event.total_bytes.max(0.0) as u64;
        match (&event.state, saved) {
            (DownloadProgressState::Completed, Some((file, in_ours))) => {
                self.ours = in_ours;
                self.progress = Progress::Saved(file);
            }
            (DownloadProgressState::Canceled, _) => self.progress = Progress::Canceled,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::State;
    use serde_json::Value;

    fn event<T: serde::de::DeserializeOwned>(fields: Value) -> Arc<T> {
        Arc::new(serde_json::from_value(fields).expect("a well-formed report"))
    }

    #[tokio::test]
    async fn a_download_complete_before_its_beginning_is_read_is_still_seen_complete() {
        let folder = tempfile::tempdir().expect("a folder");
        std::fs::write(folder.path().join("g1"), "number,customer\n").expect("the file is written");
        let shared = Arc::new(Shared { state: std::sync::Mutex::new(State::default()), changed: Default::default() });
        // The progress report is taken before the beginning: two channels, read in any order.
        let progressed = futures::stream::iter([event::<EventDownloadProgress>(json!({
            "guid": "g1", "totalBytes": 16.0, "receivedBytes": 16.0, "state": "completed",
        }))]);
        let beginning = event::<EventDownloadWillBegin>(json!({
            "frameId": "F", "guid": "g1", "url": "http://127.0.0.1/report.csv", "suggestedFilename": "report.csv",
        }));
        // Not ready when first looked at, so the progress report is read first.
        let began = Box::pin(futures::stream::once(async move {
            tokio::task::yield_now().await;
            beginning
        }));
        follow(began, progressed, folder.path().to_owned(), shared.clone()).await;
        let downloads = shared.read(|state| state.downloads.clone());
        assert_eq!(downloads.len(), 1);
        assert_eq!(downloads[0].progress, Progress::Saved(folder.path().join("g1")));
        assert!(downloads[0].ours, "its file is in the context's folder");
        assert_eq!(downloads[0].describe(), r#""report.csv" (16 bytes)"#);
    }
}
