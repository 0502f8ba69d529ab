//! Finding and launching Chromium: one process per run, shared by every worker.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::handler::viewport::Viewport;
use futures::StreamExt;
use tokio::sync::RwLock;
use tokio::task::JoinHandle;

use crate::cdp::{CdpFail, Raw};
use crate::context::{Context, ContextOptions};
use crate::error::BrowserError;
use crate::lock;
use crate::profile::{PROFILE_ENV, Profile, sweep_stale_profiles};
use crate::remote::Endpoint;

/// Where Debian's `chromium` package puts its launcher.
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// The environment variable naming the Chromium executable to use.
pub const CHROMIUM_ENV: &str = "SAFFRON_CHROMIUM";

/// The browser engine that runs the contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Engine {
    /// Chromium over the DevTools protocol: records, repairs and replays.
    #[default]
    Chromium,
    /// Firefox over WebDriver BiDi: replays.
    Firefox,
}

impl Engine {
    /// Every engine, in the order a matrix runs them.
    pub const ALL: [Engine; 2] = [Engine::Chromium, Engine::Firefox];

    /// Its name on the command line and in reports: `chromium`, `firefox`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Chromium => "chromium",
            Engine::Firefox => "firefox",
        }
    }

    /// The engine `name` names.
    pub fn parse(name: &str) -> Option<Engine> {
        Engine::ALL.into_iter().find(|engine| engine.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How to launch the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserConfig {
    /// The engine.
    pub engine: Engine,
    /// The browser's executable; found by [`find_chromium`] (or
    /// [`crate::firefox::find_firefox`]) when `None`.
    pub executable: Option<PathBuf>,
    /// Run without a window (the default). A headed browser needs a display.
    pub headless: bool,
    /// How long an action waits (for its element, actionability, a response, ...) when neither
    /// the action's `timeoutMs` nor the caller says otherwise.
    pub default_timeout: Duration,
    /// Window and viewport size in CSS pixels (a remote browser's window keeps its size; its
    /// pages get this viewport).
    pub window: (u32, u32),
    /// The DevTools endpoint of a browser that runs already, to use instead of launching
    /// Chromium (`executable` and `headless` then do not apply): see [`Browser::connect`].
    pub url: Option<String>,
    /// The device every context emulates (its viewport, scale, user agent, touch), instead of
    /// a desktop window of `window`'s size.
    pub device: Option<&'static crate::Device>,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        BrowserConfig {
            engine: Engine::Chromium,
            executable: None,
            headless: true,
            default_timeout: Duration::from_secs(5),
            window: (1280, 720),
            url: None,
            device: None,
        }
    }
}

/// How long reaching a remote browser may take: resolving its `/json/version`, opening the
/// WebSocket, and its first answer, each.
const CONNECT_LIMIT: Duration = Duration::from_secs(15);

/// How long Chromium may take to print its DevTools endpoint: Playwright's default. A start takes
/// well under a second here, but the first one on a fresh CI machine once took more than 30 s
/// (cold disk and caches), and a run that gives up on a slow start fails for nothing.
const LAUNCH_LIMIT: Duration = Duration::from_secs(180);

/// How long a browser that may have gone away gets to answer before it is taken for gone.
const PROBE_LIMIT: Duration = Duration::from_secs(5);

/// Our own waits are bounded by each action's timeout; this only catches a browser that stopped
/// answering altogether.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

/// Finds Chromium: the configured path, else `$SAFFRON_CHROMIUM`, else `/usr/bin/chromium`.
/// A configured path or variable that points nowhere is an error rather than a silent fallback,
/// so a typo in the configuration is not hidden by whatever happens to be installed.
pub async fn find_chromium(configured: Option<&Path>) -> Result<PathBuf, BrowserError> {
    let from_env = std::env::var_os(CHROMIUM_ENV).filter(|value| !value.is_empty()).map(PathBuf::from);
    let candidate = match (configured, from_env) {
        (Some(path), _) => path.to_path_buf(),
        (None, Some(path)) => path,
        (None, None) => PathBuf::from(DEFAULT_CHROMIUM),
    };
    if is_executable(&candidate) { Ok(candidate) } else { Err(BrowserError::NotFound { searched: vec![candidate] }) }
}

/// One browser: a Chromium this process launched, or a remote one it connected to. Cheap to
/// clone: clones share the browser, so parallel workers each open their own [`Context`] in it.
#[derive(Clone)]
pub struct Browser {
    pub(crate) inner: Arc<BrowserInner>,
}

pub(crate) struct BrowserInner {
    /// `None` once closed. Read-locked for every use, write-locked only to close.
    pub(crate) browser: RwLock<Option<chromiumoxide::Browser>>,
    handler: std::sync::Mutex<Option<JoinHandle<()>>>,
    process_id: Option<u32>,
    /// The folder of [`Self::profile`], kept after it is released: the profile folder of a
    /// launched browser, where the contexts' download folders are made too; for a remote
    /// browser, a watched folder that holds only those.
    folder: PathBuf,
    /// The fresh profile directory and its watchdog: released (every browser process ended, the
    /// folder removed) when the browser is closed or dropped, or when this process dies. For a
    /// remote browser, which is not ours to end, the folder holds only downloads, and the
    /// watchdog finds no process of it to end.
    profile: std::sync::Mutex<Option<Profile>>,
    /// The endpoint of a remote browser, as it may be shown.
    remote: Option<String>,
    /// Why the connection ended, once it has: the connection task's last error, or a probe
    /// that got no answer. Every later browser-level call fails at once with it.
    lost: Arc<std::sync::Mutex<Option<String>>>,
    pub(crate) config: BrowserConfig,
    /// Set for Firefox, whose contexts go over this session instead of `browser`.
    pub(crate) firefox: Option<crate::firefox::Driver>,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser").field("config", &self.inner.config).finish_non_exhaustive()
    }
}

/// Flags beyond chromiumoxide's defaults, written without leading dashes (chromiumoxide adds
/// them; `--x` would arrive as `----x` and be ignored silently).
const FLAGS: &[&str] = &[
    "disable-gpu",
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
    "no-first-run",
    "no-default-browser-check",
    // Without it Chromium opens a new-tab page (and chromiumoxide attaches to it and enables
    // five domains there): about a second of browser work beside the first scenario, for a
    // window nothing uses. Each scenario opens its own context and tab.
    "no-startup-window",
    // Every frame in its page's renderer, cross-site ones included: a target in a frame is
    // found through the page's own session (site isolation would put a payment provider's
    // frame in a process of its own, out of its reach). A test browser loads only the app
    // under test.
    "disable-site-isolation-trials",
];

/// Features switched off, added to chromiumoxide's own list (the launcher joins the values of
/// one switch). See `disable-site-isolation-trials` above.
const DISABLED_FEATURES: &[&str] = &["IsolateOrigins", "site-per-process"];

/// Polls the connection on its own task for the browser's whole life (every command and event
/// flows through it), and records why it ended. An error from it means the WebSocket broke;
/// polling on would spin.
fn drive_connection(
    mut handler: chromiumoxide::Handler,
    lost: Arc<std::sync::Mutex<Option<String>>>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let cause = loop {
            match handler.next().await {
                Some(Ok(())) => {}
                Some(Err(error)) => break error.to_string(),
                None => break "the connection was closed".to_owned(),
            }
        };
        lock(&lost).get_or_insert(cause);
    })
}

impl Browser {
    /// Launches Chromium, or connects to the browser at `config.url` when there is one.
    pub async fn start(config: BrowserConfig) -> Result<Browser, BrowserError> {
        match config.url.clone() {
            Some(url) if config.engine == Engine::Firefox => Err(BrowserError::Connect {
                url: Endpoint::parse(&url)
                    .map(|endpoint| endpoint.shown())
                    .unwrap_or_else(|_| "(not shown)".to_owned()),
                message: "a remote browser is reached over the DevTools protocol, so it is Chromium: Firefox is \
                          launched by Saffron"
                    .to_owned(),
            }),
            Some(url) => Browser::connect(&url, config).await,
            None => Browser::launch(config).await,
        }
    }

    /// Connects to a browser that runs already, over its DevTools endpoint (`url`: `ws://` or
    /// `wss://` for its browser WebSocket, `http://` or `https://` for the server that names it
    /// in `/json/version`): a Chrome started with `--remote-debugging-port`, or a browser service
    /// that speaks CDP. Each [`Context`] is still a fresh browser context. The browser is not
    /// ours: [`Browser::close`] only disconnects, and the contexts opened here are disposed by
    /// the browser when the connection ends, however it ends. Must run inside a Tokio runtime,
    /// as [`Browser::launch`].
    pub async fn connect(url: &str, config: BrowserConfig) -> Result<Browser, BrowserError> {
        let endpoint = Endpoint::parse(url)
            .map_err(|error| BrowserError::Connect { url: url.to_owned(), message: error.to_string() })?;
        let shown = endpoint.shown();
        let failed = |message: String| BrowserError::Connect { url: shown.clone(), message };
        if endpoint.needs_tls() {
            return Err(failed(
                "wss:// and https:// are not supported yet (this build has no TLS): reach the browser over ws:// or \
                 http://, e.g. through an SSH tunnel (ssh -L 9222:127.0.0.1:9222 HOST, then http://127.0.0.1:9222)"
                    .to_owned(),
            ));
        }
        let websocket = endpoint.websocket_url(CONNECT_LIMIT).await.map_err(|error| failed(error.to_string()))?;
        let (width, height) = config.window;
        let handler_config = chromiumoxide::handler::HandlerConfig {
            viewport: Some(viewport(width, height)),
            request_timeout: REQUEST_TIMEOUT,
            ..chromiumoxide::handler::HandlerConfig::default()
        };
        let (browser, handler) =
            tokio::time::timeout(CONNECT_LIMIT, chromiumoxide::Browser::connect_with_config(websocket, handler_config))
                .await
                .map_err(|_| failed(format!("the WebSocket did not open within {} s", CONNECT_LIMIT.as_secs())))?
                .map_err(|error| failed(format!("the WebSocket did not open: {error}")))?;
        // Watched like a launched browser's profile, so that a run killed outright leaves no
        // download folder behind either.
        let downloads = watched_folder()
            .await
            .map_err(|error| failed(format!("could not create a folder for downloads: {error}")))?;
        let lost = Arc::new(std::sync::Mutex::new(None));
        let handler_task = drive_connection(handler, lost.clone());
        let browser = Browser {
            inner: Arc::new(BrowserInner {
                browser: RwLock::new(Some(browser)),
                handler: std::sync::Mutex::new(Some(handler_task)),
                process_id: None,
                folder: downloads.path().to_path_buf(),
                profile: std::sync::Mutex::new(Some(downloads)),
                remote: Some(shown.clone()),
                lost,
                config,
                firefox: None,
            }),
        };
        // An open WebSocket proves little (a proxy, another server): the browser must answer.
        match tokio::time::timeout(CONNECT_LIMIT, browser.call("Browser.getVersion", serde_json::json!({}))).await {
            Ok(Ok(_)) => Ok(browser),
            Ok(Err(error)) => Err(failed(format!("it did not answer as a browser does: {error}"))),
            Err(_) => Err(failed(format!("it did not answer within {} s", CONNECT_LIMIT.as_secs()))),
        }
    }

    /// Launches Chromium. Must run inside a Tokio runtime, which then drives the connection:
    /// keep that runtime alive as long as the browser is used.
    pub async fn launch(config: BrowserConfig) -> Result<Browser, BrowserError> {
        if config.engine == Engine::Firefox {
            return Browser::launch_firefox(config).await;
        }
        let _timed = crate::timing::lone_span("launch");
        let executable = find_chromium(config.executable.as_deref()).await?;
        let launch_error = |message: String| BrowserError::Launch { executable: executable.clone(), message };
        // Watched from before Chromium starts: a run killed while it launches leaves nothing either.
        let profile = watched_folder()
            .await
            .map_err(|error| launch_error(format!("could not create a profile directory: {error}")))?;
        let (width, height) = config.window;
        let mut builder = chromiumoxide::BrowserConfig::builder()
            .chrome_executable(&executable)
            .user_data_dir(profile.path())
            .env(PROFILE_ENV, profile.path().to_string_lossy())
            // Chromium's own scratch folders (`org.chromium.Chromium.*`, shared memory under
            // `--disable-dev-shm-usage`) go inside the profile, so a Chromium that is killed,
            // and cannot remove them, leaves them where the watchdog removes everything.
            .env("TMPDIR", profile.path().to_string_lossy())
            .no_sandbox()
            .window_size(width, height)
            .viewport(viewport(width, height))
            .launch_timeout(LAUNCH_LIMIT)
            .request_timeout(REQUEST_TIMEOUT)
            .args(FLAGS.iter().copied())
            .arg(("disable-features", DISABLED_FEATURES));
        if !config.headless {
            builder = builder.with_head();
        }
        let chromium_config = builder.build().map_err(launch_error)?;
        let (mut browser, handler) =
            chromiumoxide::Browser::launch(chromium_config).await.map_err(|error| launch_error(error.to_string()))?;
        let process_id = browser.get_mut_child().and_then(|child| child.as_mut_inner().id());
        let lost = Arc::new(std::sync::Mutex::new(None));
        let handler_task = drive_connection(handler, lost.clone());
        Ok(Browser {
            inner: Arc::new(BrowserInner {
                browser: RwLock::new(Some(browser)),
                handler: std::sync::Mutex::new(Some(handler_task)),
                process_id,
                folder: profile.path().to_path_buf(),
                profile: std::sync::Mutex::new(Some(profile)),
                remote: None,
                lost,
                config,
                firefox: None,
            }),
        })
    }

    /// Launches Firefox, with a fresh profile watched as Chromium's is.
    async fn launch_firefox(config: BrowserConfig) -> Result<Browser, BrowserError> {
        let _timed = crate::timing::lone_span("launch");
        let executable = crate::firefox::find_firefox(config.executable.as_deref())?;
        let temporary = std::env::temp_dir();
        let profile = Profile::create_named(&temporary, crate::profile::FIREFOX_PREFIX).map_err(|error| {
            BrowserError::FirefoxLaunch {
                executable: executable.clone(),
                message: format!("no profile folder: {error}"),
            }
        })?;
        let _ = tokio::task::spawn_blocking(move || sweep_stale_profiles(&temporary)).await;
        let driver = crate::firefox::launch(&executable, config.headless, &profile).await?;
        Ok(Browser {
            inner: Arc::new(BrowserInner {
                browser: RwLock::new(None),
                handler: std::sync::Mutex::new(None),
                process_id: driver.process_id(),
                folder: profile.path().to_path_buf(),
                profile: std::sync::Mutex::new(Some(profile)),
                remote: None,
                lost: Arc::new(std::sync::Mutex::new(None)),
                config,
                firefox: Some(driver),
            }),
        })
    }

    /// The browser's version, as it says it (`153.8.0` for Firefox, `156.0.8078.73` for
    /// Chromium).
    pub async fn version(&self) -> Option<String> {
        if let Some(firefox) = &self.inner.firefox {
            return Some(firefox.version.clone());
        }
        let answer = self.call("Browser.getVersion", serde_json::json!({})).await.ok()?;
        let product = answer.get("product").and_then(serde_json::Value::as_str)?;
        Some(product.rsplit('/').next().unwrap_or(product).to_owned())
    }

    /// The configuration the browser was launched with.
    pub fn config(&self) -> &BrowserConfig {
        &self.inner.config
    }

    /// The Chromium process id, so a supervisor can reap the browser if this process dies
    /// before [`Browser::close`] (a killed runner cannot close anything). `None` for a remote
    /// browser.
    pub fn process_id(&self) -> Option<u32> {
        self.inner.process_id
    }

    /// The browser's profile folder (`saffron-chromium-*` in the temporary directory), gone once
    /// the browser is closed or dropped. `None` for a remote browser.
    pub fn profile_dir(&self) -> Option<&Path> {
        self.inner.remote.is_none().then_some(self.inner.folder.as_path())
    }

    /// The folder the contexts' download folders are made in: the profile folder of a launched
    /// browser, a folder watched the same way for a remote one. Gone with the browser, however
    /// this process ends.
    pub fn downloads_parent(&self) -> &Path {
        &self.inner.folder
    }

    /// The remote browser's endpoint as it may be shown (no credentials, no query); `None` for
    /// a browser this process launched.
    pub fn remote_endpoint(&self) -> Option<&str> {
        self.inner.remote.as_deref()
    }

    /// Why the connection to the browser is gone (it crashed, was killed, or the socket closed),
    /// or `None` while it answers. Asks the browser when nothing is known yet, so that a failed
    /// action can be told apart from a browser that went away under it: the first is a verdict
    /// about the app, the second is not.
    pub async fn lost_connection(&self) -> Option<String> {
        // Not matched on directly: the guard would live through the probe, which locks it too.
        if let Some(firefox) = &self.inner.firefox {
            return firefox.bidi.closed().map(|cause| format!("lost the connection to Firefox: {cause}"));
        }
        let recorded = lock(&self.inner.lost).clone();
        let cause = match recorded {
            Some(cause) => cause,
            None => {
                match tokio::time::timeout(PROBE_LIMIT, self.call("Browser.getVersion", serde_json::json!({}))).await {
                    // Any answer, even an error, comes from a browser that is there.
                    Ok(Ok(_) | Err(CdpFail::Protocol(_))) => return None,
                    Ok(Err(error)) => lock(&self.inner.lost).get_or_insert(error.to_string()).clone(),
                    Err(_) => lock(&self.inner.lost)
                        .get_or_insert(format!("it did not answer for {} s", PROBE_LIMIT.as_secs()))
                        .clone(),
                }
            }
        };
        Some(match &self.inner.remote {
            Some(endpoint) => format!("lost the connection to the remote browser at {endpoint}: {cause}"),
            None => format!("lost the connection to Chromium: {cause}"),
        })
    }

    /// Opens a fresh, isolated browser context (own cookies, storage and cache) with one blank
    /// tab: one per scenario.
    pub async fn new_context(&self, options: ContextOptions) -> Result<Context, BrowserError> {
        Context::open(self.clone(), options).await
    }

    /// Sends a browser-level command.
    pub(crate) async fn call(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, CdpFail> {
        if let Some(cause) = lock(&self.inner.lost).clone() {
            return Err(CdpFail::Dead(cause));
        }
        let guard = self.inner.browser.read().await;
        let browser = guard.as_ref().ok_or_else(|| CdpFail::Dead("the browser was closed".to_owned()))?;
        Ok(browser.execute(Raw::new(method, params)).await?.result)
    }

    /// Closes every context and the browser process, and removes its profile directory. A
    /// remote browser is only disconnected from: it keeps running, without the contexts this
    /// process opened in it.
    pub async fn close(&self) {
        crate::timing::print_summary();
        if let Some(firefox) = &self.inner.firefox {
            firefox.close().await;
        }
        let taken = self.inner.browser.write().await.take();
        if let Some(mut browser) = taken
            && self.inner.remote.is_none()
        {
            // Ask politely, then make sure: a browser that ignores `Browser.close` must not
            // outlive the run.
            let closed = tokio::time::timeout(Duration::from_secs(5), browser.close()).await;
            let exited = match closed {
                Ok(Ok(_)) => tokio::time::timeout(Duration::from_secs(5), browser.wait()).await.is_ok(),
                _ => false,
            };
            if !exited {
                let _ = browser.kill().await;
            }
        }
        if let Some(handler) = lock(&self.inner.handler).take() {
            handler.abort();
        }
        // The processes Chromium leaves behind as it exits, then the folder.
        let profile = lock(&self.inner.profile).take();
        if let Some(mut profile) = profile {
            let _ = tokio::task::spawn_blocking(move || profile.release()).await;
        }
    }
}

/// A fresh folder in the temporary directory, locked and watched so that it goes however this
/// process ends; and, while at it, the folders of runs that died without their watchdog (killed
/// along with it, say).
async fn watched_folder() -> std::io::Result<Profile> {
    let temporary = std::env::temp_dir();
    let folder = Profile::create(&temporary)?;
    let _ = tokio::task::spawn_blocking(move || sweep_stale_profiles(&temporary)).await;
    Ok(folder)
}

fn viewport(width: u32, height: u32) -> Viewport {
    Viewport {
        width,
        height,
        device_scale_factor: None,
        emulating_mobile: false,
        is_landscape: width >= height,
        has_touch: false,
    }
}

impl Drop for BrowserInner {
    fn drop(&mut self) {
        // The last handle is gone without `close` (a cancelled run, a panic): the watchdog ends
        // the whole browser while its process tree is still intact, and removes the folder; this
        // waits for it (briefly), so that a process that exits next leaves nothing behind. The
        // connection task has nothing left to serve.
        if let Some(mut profile) = lock(&self.profile).take() {
            profile.release();
        }
        if let Some(handler) = lock(&self.handler).take() {
            handler.abort();
        }
    }
}
