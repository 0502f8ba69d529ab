//! For tests of other crates (the `testing` feature): a headless Chromium started with a
//! DevTools port, as a browser Saffron did not launch (a remote browser, a browser a test
//! drives over its own connection, as a person's hands).

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The flags every test browser starts with: headless, a fresh profile, and a free port that
/// Chromium writes to `DevToolsActivePort` in it.
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-port=0",
];

/// A Chromium with a DevTools port, ended with every process it started when dropped.
pub struct DebuggableChromium {
    process: Child,
    /// Its DevTools port.
    pub port: u16,
    /// `/devtools/browser/<id>`.
    pub browser_path: String,
    _profile: tempfile::TempDir,
}

impl DebuggableChromium {
    /// Starts `$SAFFRON_CHROMIUM` (else `/usr/bin/chromium`) with the test flags and `extra`,
    /// in a fresh profile named after `prefix`; waits up to 30 s for its port. Panics when it
    /// cannot start: this is for tests.
    pub fn start(prefix: &str, extra: &[&str]) -> DebuggableChromium {
        let executable = std::env::var_os("SAFFRON_CHROMIUM")
            .filter(|value| !value.is_empty())
            .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
        let profile = tempfile::Builder::new().prefix(prefix).tempdir().expect("a profile folder");
        let mut process = Command::new(&executable)
            .args(FLAGS)
            .args(extra)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("Chromium starts");
        let active_port = profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        // Chromium says where it listens only in this file.
        let (port, browser_path) = loop {
            let text = std::fs::read_to_string(&active_port).unwrap_or_default();
            let mut lines = text.lines();
            if let (Some(Ok(port)), Some(path)) = (lines.next().map(str::parse::<u16>), lines.next()) {
                break (port, path.to_owned());
            }
            assert!(process.try_wait().expect("a status").is_none(), "Chromium exited at start");
            assert!(Instant::now() < deadline, "Chromium wrote no DevToolsActivePort within 30 s");
            std::thread::sleep(Duration::from_millis(50));
        };
        DebuggableChromium { process, port, browser_path, _profile: profile }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn http_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `ws://127.0.0.1:PORT/devtools/browser/<id>`.
    pub fn ws_url(&self) -> String {
        format!("ws://127.0.0.1:{}{}", self.port, self.browser_path)
    }

    /// Whether the browser process still runs.
    pub fn is_running(&mut self) -> bool {
        self.process.try_wait().expect("a status").is_none()
    }

    /// Kills the browser and every process it started: its zygote and renderers outlive a
    /// killed browser process for a moment and write into the profile, which then cannot be
    /// removed.
    pub fn kill(&mut self) {
        let group = format!("-{}", self.process.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

impl Drop for DebuggableChromium {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Serves `page` (HTML) for every request on a loopback port, for the life of the test
/// process; its `http://127.0.0.1:PORT` address.
pub fn serve_page(page: String) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(read) => request.extend_from_slice(&buffer[..read]),
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                page.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(page.as_bytes()));
        }
    });
    format!("http://{address}")
}
