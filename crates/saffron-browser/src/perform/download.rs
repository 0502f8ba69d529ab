//! `expectDownload`: a file the context downloaded during the scenario, by name and contents.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::context::Context;
use crate::downloads::{Download, Progress};
use crate::error::{ActionFailure, FailureKind};

use super::{compiled, seconds};

/// Files larger than this are read only this far for `contains`.
const READ_LIMIT: u64 = 64 * 1024 * 1024;

/// What is checked of a download.
pub(super) struct Wanted<'a> {
    pub file_name: Option<&'a str>,
    pub file_name_regex: Option<&'a str>,
    pub contains: Option<&'a str>,
}

impl Context {
    /// Waits for a download of this context, completed, named as wanted and holding the text
    /// wanted.
    pub(super) async fn expect_download(
        &self,
        verb: &str,
        wanted: Wanted<'_>,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), ActionFailure> {
        let pattern = wanted.file_name_regex.map(|pattern| self.guard.judged_pattern(pattern));
        let pattern = compiled(verb, "fileNameRegex", pattern.as_deref())?;
        let named = |download: &Download| {
            let file_name = self.guard.judged(&download.file_name);
            match (&wanted.file_name, &pattern) {
                (Some(name), _) => file_name == self.guard.judged(name),
                (None, Some(pattern)) => pattern.is_match(&file_name),
                (None, None) => true,
            }
        };
        // Each completed file is read once: it does not change after.
        let mut contents: HashMap<PathBuf, String> = HashMap::new();
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let saved: Vec<PathBuf> = self.shared.read(|state| {
                state
                    .downloads
                    .iter()
                    .filter(|download| download.ours && named(download))
                    .filter_map(|download| match &download.progress {
                        Progress::Saved(file) => Some(file.clone()),
                        _ => None,
                    })
                    .collect()
            });
            for file in saved {
                let Some(text) = wanted.contains else { return Ok(()) };
                let held = match contents.get(&file) {
                    Some(held) => held,
                    None => {
                        let read = self.guard.judged_owned(read_text(&file).await);
                        contents.entry(file).or_insert(read)
                    }
                };
                if held.contains(&*self.guard.judged(text)) {
                    return Ok(());
                }
            }
            if tokio::time::timeout_at(deadline.into(), notified).await.is_err() {
                return Err(self.no_download(verb, &wanted, &contents, timeout));
            }
        }
    }

    fn no_download(
        &self,
        verb: &str,
        wanted: &Wanted<'_>,
        contents: &HashMap<PathBuf, String>,
        timeout: Duration,
    ) -> ActionFailure {
        let expected = saffron_recording::describe_download(wanted.file_name, wanted.file_name_regex, wanted.contains);
        let found: Vec<String> = self.shared.read(|state| {
            state
                .downloads
                .iter()
                .filter(|download| download.ours)
                .map(|download| {
                    let mut line = download.describe();
                    if let (Progress::Saved(file), Some(held)) = (&download.progress, wanted.contains)
                        && let Some(text) = contents.get(file)
                        && !text.contains(held)
                    {
                        let start: String = text.chars().take(80).collect();
                        line.push_str(&format!(", which does not hold {held:?}: it begins {start:?}"));
                    }
                    line
                })
                .collect()
        });
        let found = if found.is_empty() { "no downloads".to_owned() } else { found.join("; ") };
        let remote = match (self.browser.remote_endpoint(), &self.download_folder) {
            (Some(endpoint), Some(folder)) => format!(
                " (the remote browser at {endpoint} saves downloads in {}, which it reaches only when it shares this \
                 machine's file system)",
                folder.path().display()
            ),
            _ => String::new(),
        };
        ActionFailure::new(
            FailureKind::AssertionFailed,
            format!(
                "{verb}: expected {expected} during the scenario within {}, found {found}{remote}",
                seconds(timeout)
            ),
        )
        .with(Some(expected), Some(found))
    }
}

/// The file's text (invalid UTF-8 replaced), up to [`READ_LIMIT`]; empty when unreadable.
async fn read_text(file: &std::path::Path) -> String {
    let file = file.to_owned();
    let read = tokio::task::spawn_blocking(move || {
        use std::io::Read;
        let mut bytes = Vec::new();
        std::fs::File::open(&file)?.take(READ_LIMIT).read_to_end(&mut bytes)?;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&bytes).into_owned())
    });
    match read.await {
        Ok(Ok(text)) => text,
        _ => String::new(),
    }
}
