//! A minimal HTTP/1.1 client over `std::net::TcpStream`, so the tests make real requests to the
//! real server without an HTTP client dependency. Each request is one connection with
//! `Connection: close`: the body is everything until the server closes.
#![allow(dead_code)] // each test binary uses a different part of it

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use saffron_demo::{DEMO_EMAIL, DemoConfig, DemoServer};
use serde_json::Value;

/// Generous: only a hung server gets near it, and then the test fails instead of hanging.
pub const IO_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Every value of a header that may repeat (`set-cookie`).
    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The `"error"` field of a JSON error body.
    pub fn error(&self) -> String {
        self.json()["error"].as_str().unwrap_or_else(|| panic!("no error field: {}", self.body)).to_owned()
    }
}

/// A client with an optional session cookie, like one browser context.
#[derive(Debug, Clone)]
pub struct Client {
    pub addr: SocketAddr,
    pub cookie: Option<String>,
    /// Sent as `Authorization: Bearer …`.
    pub bearer: Option<String>,
}

impl Client {
    pub fn new(server: &DemoServer) -> Client {
        Client { addr: server.addr(), cookie: None, bearer: None }
    }

    /// A client signed in as the demo account with the server's configured password.
    pub async fn signed_in(server: &DemoServer) -> Client {
        let mut client = Client::new(server);
        let body = serde_json::json!({ "email": DEMO_EMAIL, "password": server.config().password }).to_string();
        let res = client.send("POST", "/api/session", Some(&body)).await;
        assert_eq!(res.status, 200, "sign-in failed: {}", res.body);
        client.cookie = Some(session_from(&res).expect("sign-in sets a session cookie"));
        client
    }

    pub async fn get(&self, path: &str) -> Response {
        self.send("GET", path, None).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Response {
        self.send("POST", path, Some(&body.to_string())).await
    }

    pub async fn send(&self, method: &str, path: &str, body: Option<&str>) -> Response {
        self.send_with_timeout(method, path, body, IO_TIMEOUT).await.unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    /// Like `send`, but gives up (and hangs up) after `timeout`, as an impatient client would.
    pub async fn send_with_timeout(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        timeout: Duration,
    ) -> std::io::Result<Response> {
        let request = self.request_bytes(method, path, body);
        let addr = self.addr;
        // Blocking I/O on a blocking thread keeps the server's runtime free to answer.
        tokio::task::spawn_blocking(move || exchange(addr, &request, timeout))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }

    fn request_bytes(&self, method: &str, path: &str, body: Option<&str>) -> Vec<u8> {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", self.addr);
        if let Some(cookie) = &self.cookie {
            head.push_str(&format!("Cookie: session={cookie}\r\n"));
        }
        if let Some(token) = &self.bearer {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        if let Some(body) = body {
            head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.unwrap_or_default().as_bytes());
        bytes
    }
}

fn exchange(addr: SocketAddr, request: &[u8], timeout: Duration) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.write_all(request)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse_response(&raw).ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("bad response: {}", String::from_utf8_lossy(&raw)))
    })
}

fn parse_response(raw: &[u8]) -> Option<Response> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned())).collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked =
        headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked"));
    if chunked {
        body = dechunk(&body)?;
    }
    Some(Response { status, headers, body: String::from_utf8(body).ok()? })
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

/// The session token a sign-in response sets, if any.
pub fn session_from(res: &Response) -> Option<String> {
    res.headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
        .filter_map(|(_, v)| v.split(';').next()?.trim().strip_prefix("session=").map(str::to_owned))
        .find(|token| !token.is_empty())
}

pub async fn start(config: DemoConfig) -> DemoServer {
    DemoServer::start(config).await.expect("demo server starts")
}

pub fn config_with(f: impl FnOnce(&mut DemoConfig)) -> DemoConfig {
    let mut config = DemoConfig::default();
    f(&mut config);
    config
}

/// Polls `check` until it returns `Some`, failing the test after `deadline`. For state that
/// changes with time (the export job), never as a stand-in for waiting on a response.
pub async fn poll_until<T>(deadline: Duration, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(started.elapsed() < deadline, "condition not met within {deadline:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The opening tag of the first element whose attributes contain `needle`.
pub fn tag_with<'a>(html: &'a str, needle: &str) -> &'a str {
    let at = html.find(needle).unwrap_or_else(|| panic!("no `{needle}` in page"));
    let start = html[..at].rfind('<').expect("inside a tag");
    let end = at + html[at..].find('>').expect("tag closes");
    &html[start..=end]
}

/// The text between `<tag ...needle...>` and the next `</`.
pub fn text_of<'a>(html: &'a str, needle: &str) -> &'a str {
    let tag = tag_with(html, needle);
    let start = html.find(tag).expect("tag is in page") + tag.len();
    let end = start + html[start..].find("</").expect("element closes");
    &html[start..end]
}
