//! Upload: the files of a file input, chosen as a person chooses them. A target that is the
//! file input, or a label of one, gets the files as the file chooser gives them. Any other
//! element (an "Upload photo" button that opens a hidden input's chooser) is clicked as a
//! person clicks it, and the chooser it opens is answered.

use std::path::Path;
use std::time::{Duration, Instant, UNIX_EPOCH};

use crate::page::Page;
use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::page::{EventFileChooserOpened, FileChooserOpenedMode};
use chromiumoxide::listeners::EventStream;
use futures::StreamExt;
use saffron_recording::Target;
use serde_json::{Value, json};

use crate::cdp::{self, CdpFail};
use crate::context::Context;
use crate::error::{ActionFailure, FailureKind};
use crate::js;

use super::browser_failure;
use super::input::{acknowledged, click_at, dispatched};
use super::retry::{Attempt, Checks, Resolved, about, on_cdp, script_outcome};

/// The most a remote browser is sent for one upload (the files go inside a DevTools message,
/// in base64). Playwright keeps the same limit for a browser it reaches over the network.
const REMOTE_LIMIT: u64 = 50 * 1024 * 1024;

/// How long a click gets to open the file chooser when the action's own time has run out: the
/// click is already sent, and the page answers it at its own pace.
const CHOOSER_GRACE: Duration = Duration::from_millis(500);

/// How the files reach the page.
enum Files {
    /// Paths the browser reads itself (a browser on this machine).
    Paths(Vec<String>),
    /// The files' contents, for a browser on another machine.
    Contents(Value),
}

impl Context {
    pub(super) async fn upload(
        &self,
        target: &Target,
        paths: &[String],
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<Resolved, ActionFailure> {
        let unreadable = |message: String| {
            ActionFailure::new(FailureKind::Invalid, format!("{}: {message}", about("upload", target, None)))
        };
        let files = match self.browser.remote_endpoint() {
            // Chromium empties the input without an event when given no paths; a person who
            // cancels the chooser gets `input` and `change`, which the script sends.
            _ if paths.is_empty() => Files::Contents(Value::Array(Vec::new())),
            // A path that names no file fails here, with its name, before the page sees anything.
            None => Files::Paths(readable(paths).await.map_err(unreadable)?),
            Some(_) => Files::Contents(contents(paths).await.map_err(unreadable)?),
        };
        let count = json!(paths.len());
        let (input, found) = self
            .resolve_then("upload", target, deadline, timeout, group, async |page: &Page, found| {
                let answer =
                    match cdp::call_on(page, &found.object_id, js::FILE_INPUT, std::slice::from_ref(&count), false)
                        .await
                    {
                        Ok(answer) => answer,
                        Err(error) => return on_cdp(error),
                    };
                if let Some(input) = answer.node() {
                    return Attempt::Done(Some((page.clone(), input.to_owned())));
                }
                let value = answer
                    .value
                    .as_ref()
                    .and_then(Value::as_str)
                    .and_then(|text| serde_json::from_str::<Value>(text).ok())
                    .unwrap_or(Value::Null);
                if value.get("chooser").and_then(Value::as_bool) == Some(true) {
                    return Attempt::Done(None);
                }
                script_outcome(&value).map(|()| None)
            })
            .await?;
        let (page, input, resolved) = match input {
            Some((page, input)) => {
                let resolved = Resolved::observe(&page, target, &found).await;
                (page, input, resolved)
            }
            None => self.through_chooser(target, paths.len(), deadline, timeout, group).await?,
        };
        let set = match &files {
            Files::Paths(paths) => match &page {
                Page::Firefox(tab) => tab.set_files(&input, paths).await,
                Page::Chromium(_) => {
                    cdp::call(&page, "DOM.setFileInputFiles", json!({ "files": paths, "objectId": input }))
                        .await
                        .map(drop)
                }
            },
            Files::Contents(contents) => cdp::call_value(&page, &input, js::SET_FILES, std::slice::from_ref(contents))
                .await
                .and_then(|answer| match answer.get("ok").and_then(Value::as_bool) {
                    Some(true) => Ok(()),
                    _ => Err(CdpFail::Protocol(format!("the page did not take the files: {answer}"))),
                }),
        };
        set.map_err(|error| {
            ActionFailure::new(FailureKind::Browser, format!("the files were not set: {error}"))
                .found_by(found.fallback_locator(target))
                .prefixed("upload", target)
        })?;
        Ok(resolved)
    }

    /// Clicks the target with the file chooser intercepted, and gives back the file input whose
    /// chooser opened. The click is sent once: it may do more than open a chooser.
    async fn through_chooser(
        &self,
        target: &Target,
        count: usize,
        deadline: Instant,
        timeout: Duration,
        group: &str,
    ) -> Result<(Page, String, Resolved), ActionFailure> {
        let page = self.active_page().map_err(browser_failure)?;
        let mut choosers = Choosers::intercept(&page).await.map_err(|error| {
            ActionFailure::new(FailureKind::Browser, format!("the file chooser cannot be answered: {error}"))
        })?;
        let chosen = async {
            let ready = self.ready("upload", target, &Checks::click(), deadline, timeout, group).await?;
            let resolved = Resolved::observe(&ready.page, target, &ready.found).await;
            acknowledged(click_at(&ready, 1))
                .await
                .map_err(|error| dispatched("upload", target, &ready.found, error))?;
            let wait = deadline.saturating_duration_since(Instant::now()).max(CHOOSER_GRACE);
            let not_opened = |why: String| {
                ActionFailure::new(FailureKind::NotActionable { reason: why.clone() }, why)
                    .found_by(ready.found.fallback_locator(target))
                    .prefixed("upload", target)
            };
            let Ok(Some(chooser)) = tokio::time::timeout(wait, choosers.next()).await else {
                if choosers.opened_before(self) {
                    return Err(not_opened(
                        "clicking it opened no file chooser: this page opened one already, and Firefox opens one \
                         file chooser per page (its headless chooser is never closed); target the file input itself"
                            .to_owned(),
                    ));
                }
                return Err(not_opened(format!(
                    "clicking it opened no file chooser within {:.1} s: target the file input, or the \
                     button or label that opens one",
                    wait.as_secs_f64()
                )));
            };
            if count > 1 && chooser.single {
                return Err(not_opened(format!(
                    "its file chooser takes one file (no multiple attribute), {count} were given"
                )));
            }
            let Some(input) = chooser.input else {
                return Err(not_opened(
                    "it opened the page's own file picker (showOpenFilePicker), not a file input's chooser: not \
                     supported"
                        .to_owned(),
                ));
            };
            let object = match input {
                ChooserInput::Element(handle) => Some(handle),
                ChooserInput::Backend(node) => {
                    cdp::call(&page, "DOM.resolveNode", json!({ "backendNodeId": node, "objectGroup": group }))
                        .await
                        .ok()
                        .and_then(|answer| {
                            answer.pointer("/object/objectId").and_then(Value::as_str).map(str::to_owned)
                        })
                }
            }
            .ok_or_else(|| not_opened("its file input went away before the files were chosen".to_owned()))?;
            Ok((ready.page.clone(), object, resolved))
        }
        .await;
        choosers.release(&page).await;
        chosen
    }
}

/// The file input a chooser opened for: a DevTools backend node, or a Firefox element handle.
enum ChooserInput {
    Backend(i64),
    Element(String),
}

/// A file chooser the page opened.
struct Chooser {
    /// It takes one file (no `multiple`).
    single: bool,
    /// `None`: the page's own picker (`showOpenFilePicker`), no file input.
    input: Option<ChooserInput>,
}

/// The file choosers the active tab opens, held back from the person and reported.
enum Choosers {
    /// Intercepted (`Page.setInterceptFileChooserDialog`) and reported.
    Chromium(EventStream<EventFileChooserOpened>),
    /// Reported by `input.fileDialogOpened` (never shown: the session ignores file dialogs),
    /// for the tab's frames.
    Firefox(tokio::sync::broadcast::Receiver<crate::bidi::Event>, Vec<String>),
}

impl Choosers {
    async fn intercept(page: &Page) -> Result<Choosers, CdpFail> {
        match page {
            Page::Firefox(tab) => Ok(Choosers::Firefox(tab.bidi.events(), tab.frames().await?)),
            Page::Chromium(chromium) => {
                let opened = chromium.event_listener::<EventFileChooserOpened>().await?;
                cdp::call(page, "Page.setInterceptFileChooserDialog", json!({ "enabled": true })).await?;
                Ok(Choosers::Chromium(opened))
            }
        }
    }

    /// The next chooser; `None` when the tab can report none any more.
    async fn next(&mut self) -> Option<Chooser> {
        match self {
            Choosers::Chromium(opened) => opened.next().await.map(|event| Chooser {
                single: event.mode == FileChooserOpenedMode::SelectSingle,
                input: event.backend_node_id.map(|node| ChooserInput::Backend(*node.inner())),
            }),
            Choosers::Firefox(events, frames) => loop {
                match events.recv().await {
                    Ok(event) if event.method == "input.fileDialogOpened" => {
                        let params = &event.params;
                        let context = params.get("context").and_then(Value::as_str).unwrap_or_default();
                        if !frames.iter().any(|frame| frame == context) {
                            continue;
                        }
                        let input = params.pointer("/element/sharedId").and_then(Value::as_str);
                        return Some(Chooser {
                            single: params.get("multiple").and_then(Value::as_bool) == Some(false),
                            input: input.map(|shared_id| {
                                ChooserInput::Element(crate::firefox::element_handle(context, shared_id))
                            }),
                        });
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                }
            },
        }
    }

    /// Whether a document of the tab had opened a file chooser before (Firefox; see
    /// `State::chooser_opened`).
    fn opened_before(&self, context: &Context) -> bool {
        match self {
            Choosers::Chromium(_) => false,
            Choosers::Firefox(_, frames) => {
                context.shared.read(|state| frames.iter().any(|frame| state.chooser_opened.contains(frame)))
            }
        }
    }

    /// Stops intercepting: a chooser left intercepted would swallow the next one a click
    /// opens, without a word.
    async fn release(self, page: &Page) {
        if let Choosers::Chromium(_) = self {
            let _ = cdp::call(page, "Page.setInterceptFileChooserDialog", json!({ "enabled": false })).await;
        }
    }
}

/// The paths, once each is known to name a file.
async fn readable(paths: &[String]) -> Result<Vec<String>, String> {
    for path in paths {
        match tokio::fs::metadata(path).await {
            Ok(metadata) if metadata.is_file() => {}
            Ok(_) => return Err(format!("{path} is not a file")),
            Err(error) => return Err(format!("the file {path} cannot be read: {error}")),
        }
    }
    Ok(paths.to_vec())
}

/// The files' names, types, dates and contents, for [`js::SET_FILES`].
async fn contents(paths: &[String]) -> Result<Value, String> {
    let mut files = Vec::with_capacity(paths.len());
    let mut total = 0;
    for path in paths {
        let path = Path::new(path);
        let metadata = tokio::fs::metadata(path).await.map_err(|error| format!("{}: {error}", path.display()))?;
        total += metadata.len();
        if total > REMOTE_LIMIT {
            return Err(format!(
                "the files come to more than {} MB, the most a browser on another machine is sent",
                REMOTE_LIMIT / 1024 / 1024
            ));
        }
        let bytes = tokio::fs::read(path).await.map_err(|error| format!("{}: {error}", path.display()))?;
        let modified = metadata
            .modified()
            .ok()
            .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |since| since.as_millis() as u64);
        let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        files.push(json!({
            "name": name,
            "mimeType": mime_type(&name),
            "lastModified": modified,
            "base64": base64::engine::general_purpose::STANDARD.encode(&bytes),
        }));
    }
    Ok(Value::Array(files))
}

/// The type a browser gives a file it reads from disk, for the usual kinds of upload; other
/// files get none, as Chromium gives a file whose extension it does not know.
fn mime_type(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "csv" => "text/csv",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "xml" => "text/xml",
        "zip" => "application/zip",
        "mp4" => "video/mp4",
        "mp3" => "audio/mpeg",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::mime_type;

    #[test]
    fn common_kinds_have_their_type_and_others_none() {
        assert_eq!(mime_type("cat.PNG"), "image/png");
        assert_eq!(mime_type("orders.csv"), "text/csv");
        assert_eq!(mime_type("notes"), "");
        assert_eq!(mime_type("archive.tar.unknown"), "");
    }
}
