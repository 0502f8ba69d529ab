//! The tool gateway served as an MCP server over streamable HTTP, on loopback, behind a bearer
//! token.
//!
//! rmcp answers MCP; axum owns the socket and checks the token in front of it. The server runs
//! **stateless** (no `Mcp-Session-Id`, answers as plain JSON): one program talks to it for one
//! scenario and every tool call is request and answer, so there is nothing a session would keep,
//! no event stream the server must push, and stopping the server leaves no session or open
//! stream behind to hold the port.
//!
//! The gateway itself is `&mut` and lives on the driver's task, so a call does not run here: the
//! handler sends it through a channel and waits for the driver's answer on a oneshot.

use std::net::Ipv4Addr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::ErrorData as McpError;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use saffron_agent::{ToolOutput, ToolSpec};
use serde_json::Value;
use subtle::ConstantTimeEq;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The path the server answers MCP on.
pub(crate) const ENDPOINT_PATH: &str = "/mcp";

/// One `tools/call`, on its way to the driver.
pub(crate) struct ToolCall {
    pub name: String,
    pub input: Value,
    pub answer: oneshot::Sender<ToolOutput>,
}

/// What the program is told when it calls a tool after the session ended.
const SESSION_OVER: &str = "the recording session is over: no more tool calls are taken";

const INSTRUCTIONS: &str = "Saffron's browser tools for recording one scenario. Act only through these tools, and \
    call the tool that ends the session when you are finished.";

/// The rmcp side: lists the gateway's tools and forwards calls.
#[derive(Clone)]
struct GatewayHandler {
    tools: Arc<Vec<Tool>>,
    calls: mpsc::Sender<ToolCall>,
}

impl ServerHandler for GatewayHandler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        let mut implementation = Implementation::new("saffron", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("Saffron recording gateway".to_string());
        ServerConfig::new(capabilities).with_server_info(implementation).with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // An unknown name goes to the gateway too: it answers with a tool error the agent can
        // read, as it does for every agent.
        let input = Value::Object(request.arguments.unwrap_or_default());
        let (answer, answered) = oneshot::channel();
        let call = ToolCall { name: request.name.to_string(), input, answer };
        let output = match self.calls.send(call).await {
            Ok(()) => answered.await.unwrap_or_else(|_| ToolOutput::error(SESSION_OVER)),
            Err(_) => ToolOutput::error(SESSION_OVER),
        };
        let content = vec![ContentBlock::text(output.content)];
        let result = if output.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
        Ok(result.into())
    }
}

/// The tools as MCP lists them. A schema that is not a JSON object (MCP requires one) is
/// listed as taking any object, and the gateway judges the input.
pub(crate) fn mcp_tools(specs: &[ToolSpec]) -> Vec<Tool> {
    specs
        .iter()
        .map(|spec| {
            let schema: JsonObject = match &spec.input_schema {
                Value::Object(object) => object.clone(),
                _ => JsonObject::from_iter([("type".to_string(), Value::from("object"))]),
            };
            Tool::new(spec.name.clone(), spec.description.clone(), Arc::new(schema))
        })
        .collect()
}

/// A random bearer token: 32 bytes from the operating system, hex-encoded.
pub(crate) fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|error| std::io::Error::other(format!("no randomness for the token: {error}")))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Whether `authorization` (the header's value) carries exactly `token`, compared in constant
/// time so that the answer's timing says nothing about how much of a guess was right.
fn bearer_matches(authorization: Option<&[u8]>, token: &str) -> bool {
    let Some(value) = authorization else { return false };
    // The scheme's name is case-insensitive (RFC 9110).
    let Some((scheme, presented)) = value.split_at_checked(b"Bearer ".len()) else { return false };
    scheme.eq_ignore_ascii_case(b"Bearer ") && bool::from(presented.ct_eq(token.as_bytes()))
}

/// Refuses a request that a web page sent: a browser names the page's origin in `Origin`, and
/// no agent program does. Without this a page could reach the gateway through a DNS name it
/// rebinds to 127.0.0.1 (the MCP transport requires servers to validate `Origin`). The
/// gateway's own origin is the one exception a browser may name.
async fn refuse_foreign_origin(State(own): State<Arc<[String]>>, request: Request, next: Next) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = String::from_utf8_lossy(origin.as_bytes()).trim().to_ascii_lowercase();
        if !own.contains(&origin) {
            return (
                StatusCode::FORBIDDEN,
                "a request from a web page (its Origin is not this gateway's) is refused: the gateway serves the \
                 agent program only",
            )
                .into_response();
        }
    }
    next.run(request).await
}

async fn require_token(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let authorization = request.headers().get(header::AUTHORIZATION).map(|value| value.as_bytes());
    if !bearer_matches(authorization, &token) {
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], "a valid bearer token is required")
            .into_response();
    }
    next.run(request).await
}

/// The running server. [`GatewayServer::stop`] closes the port; dropping it without stopping
/// aborts the server task.
pub(crate) struct GatewayServer {
    pub url: String,
    shutdown: Option<oneshot::Sender<()>>,
    mcp_cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl GatewayServer {
    /// Serves `tools` on 127.0.0.1 at a port the system picks; each call arrives on `calls`.
    pub async fn start(tools: Vec<Tool>, token: &str, calls: mpsc::Sender<ToolCall>) -> std::io::Result<GatewayServer> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let address = listener.local_addr()?;
        let handler = GatewayHandler { tools: Arc::new(tools), calls };
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None);
        let mcp_cancel = config.cancellation_token.clone();
        let service =
            StreamableHttpService::new(move || Ok(handler.clone()), Arc::new(NeverSessionManager::default()), config);
        let token: Arc<str> = Arc::from(token);
        let port = address.port();
        let own: Arc<[String]> =
            Arc::from(vec![format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")]);
        let app = axum::Router::new()
            .route_service(ENDPOINT_PATH, service)
            .layer(middleware::from_fn_with_state(token, require_token))
            .layer(middleware::from_fn_with_state(own, refuse_foreign_origin));
        let (shutdown, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = stopped.await;
            });
            if let Err(error) = serve.await {
                eprintln!("saffron: the agent's MCP gateway stopped: {error}");
            }
        });
        Ok(GatewayServer {
            url: format!("http://{address}{ENDPOINT_PATH}"),
            shutdown: Some(shutdown),
            mcp_cancel,
            task,
        })
    }

    /// Stops taking requests, ends those in flight, and closes the port.
    pub async fn stop(mut self) {
        self.mcp_cancel.cancel();
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        // A connection kept open by a client that never reads is not waited for.
        let task = &mut self.task;
        if tokio::time::timeout(std::time::Duration::from_secs(2), &mut *task).await.is_err() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for GatewayServer {
    fn drop(&mut self) {
        self.mcp_cancel.cancel();
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "test-token-0123456789";

    fn specs() -> Vec<ToolSpec> {
        let schema = serde_json::json!({"type": "object", "properties": {"ref": {"type": "string"}}});
        vec![
            ToolSpec { name: "click".into(), description: "Clicks.".into(), input_schema: schema },
            // Not an object: listed as taking any object.
            ToolSpec { name: "odd".into(), description: "Odd schema.".into(), input_schema: Value::Bool(true) },
        ]
    }

    /// A server whose calls are answered by echoing the tool's name, as the driver would.
    async fn server() -> GatewayServer {
        let (calls_in, mut calls) = mpsc::channel::<ToolCall>(8);
        tokio::spawn(async move {
            while let Some(call) = calls.recv().await {
                let output = match call.name.as_str() {
                    "click" => ToolOutput::ok(format!("clicked {}", call.input)),
                    other => ToolOutput::error(format!("there is no tool `{other}`")),
                };
                let _ = call.answer.send(output);
            }
        });
        GatewayServer::start(mcp_tools(&specs()), TOKEN, calls_in).await.expect("server")
    }

    fn client() -> reqwest::Client {
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::new()
    }

    async fn post(url: &str, authorization: Option<&str>, body: &str) -> (u16, String) {
        let mut request = client()
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let response = request.send().await.expect("an answer");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    }

    fn rpc(id: u64, method: &str, params: Value) -> String {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    }

    fn initialize() -> String {
        rpc(
            1,
            "initialize",
            serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "test", "version": "0"}}),
        )
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn every_request_without_the_token_is_refused() {
        let server = server().await;
        let bearer = format!("Bearer {TOKEN}");
        for authorization in [None, Some("Bearer wrong"), Some(TOKEN), Some(&*format!("Bearer {TOKEN}x"))] {
            let (status, body) = post(&server.url, authorization, &initialize()).await;
            assert_eq!(status, 401, "{authorization:?}: {body}");
            assert!(!body.contains(TOKEN));
        }
        // Any path, any method.
        let other = server.url.replace("/mcp", "/other");
        assert_eq!(post(&other, None, "{}").await.0, 401);
        let get = client().get(&server.url).send().await.expect("an answer");
        assert_eq!(get.status().as_u16(), 401);
        let (status, body) = post(&server.url, Some(&bearer), &initialize()).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"name\":\"saffron\""), "{body}");
        server.stop().await;
    }

    /// A request a web page sends names its origin: refused, token or not, so that a page
    /// that rebinds a DNS name to 127.0.0.1 cannot reach the gateway. The gateway's own origin
    /// and no origin at all (an agent program) are served.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_request_from_a_foreign_origin_is_refused_even_with_the_token() {
        let server = server().await;
        let bearer = format!("Bearer {TOKEN}");
        let own = server.url.trim_end_matches(ENDPOINT_PATH).to_string();
        for (origin, expected) in [
            (Some("http://evil.example"), 403),
            (Some("http://127.0.0.1:1"), 403),
            (Some("null"), 403),
            (Some(own.as_str()), 200),
            (None, 200),
        ] {
            let mut request = client()
                .post(&server.url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("authorization", &bearer)
                .body(initialize());
            if let Some(origin) = origin {
                request = request.header("origin", origin);
            }
            let response = request.send().await.expect("an answer");
            let status = response.status().as_u16();
            let body = response.text().await.unwrap_or_default();
            assert_eq!(status, expected, "{origin:?}: {body}");
        }
        server.stop().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn malformed_requests_get_error_replies_and_the_server_serves_on() {
        let server = server().await;
        let bearer = format!("Bearer {TOKEN}");
        let bearer = Some(bearer.as_str());
        let (status, body) = post(&server.url, bearer, "{not json").await;
        assert!((400..500).contains(&status), "{status} {body}");
        for (id, method, params) in
            [(2, "tools/call", serde_json::json!({"name": 5})), (3, "no/such", serde_json::json!({}))]
        {
            let (status, body) = post(&server.url, bearer, &rpc(id, method, params)).await;
            let answer: Value = serde_json::from_str(&body).expect("a JSON-RPC answer");
            assert_eq!((status, &answer["id"]), (200, &serde_json::json!(id)), "{body}");
            assert!(answer["error"]["code"].is_i64(), "{method}: {body}");
        }

        let (status, body) = post(&server.url, bearer, &rpc(4, "tools/list", serde_json::json!({}))).await;
        assert_eq!(status, 200, "{body}");
        let listed: Value = serde_json::from_str(&body).expect("JSON");
        let tools = &listed["result"]["tools"];
        assert_eq!(tools[0]["name"], "click");
        assert_eq!(tools[0]["inputSchema"]["properties"]["ref"]["type"], "string");
        assert_eq!(tools[1]["inputSchema"], serde_json::json!({"type": "object"}));

        let call =
            |id, name: &str| rpc(id, "tools/call", serde_json::json!({"name": name, "arguments": {"ref": "e1"}}));
        let (status, body) = post(&server.url, bearer, &call(5, "click")).await;
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(answer["result"]["content"][0]["text"], "clicked {\"ref\":\"e1\"}");
        assert_eq!(answer["result"]["isError"], false);
        let (_, body) = post(&server.url, bearer, &call(6, "nope")).await;
        let answer: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(answer["result"]["isError"], true, "an unknown tool is a tool error: {body}");
        server.stop().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_call_after_the_session_ended_is_a_tool_error_and_stop_closes_the_port() {
        let (calls_in, calls) = mpsc::channel::<ToolCall>(8);
        let server = GatewayServer::start(mcp_tools(&specs()), TOKEN, calls_in).await.expect("server");
        drop(calls);
        let bearer = format!("Bearer {TOKEN}");
        let body = rpc(1, "tools/call", serde_json::json!({"name": "click", "arguments": {}}));
        let (status, body) = post(&server.url, Some(&bearer), &body).await;
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(answer["result"]["isError"], true);
        assert!(answer["result"]["content"][0]["text"].as_str().is_some_and(|text| text.contains("session is over")));
        let address = server.url.trim_start_matches("http://").trim_end_matches(ENDPOINT_PATH).to_string();
        server.stop().await;
        assert!(tokio::net::TcpStream::connect(address).await.is_err(), "the port is closed");
    }

    #[test]
    fn only_the_exact_token_after_bearer_passes() {
        let token = "0123abcd";
        assert!(bearer_matches(Some(b"Bearer 0123abcd"), token));
        assert!(bearer_matches(Some(b"bearer 0123abcd"), token));
        assert!(!bearer_matches(Some(b"Bearer 0123ABCD"), token));
        assert!(!bearer_matches(None, token));
        assert!(!bearer_matches(Some(b""), token));
        assert!(!bearer_matches(Some(b"Bearer "), token));
        assert!(!bearer_matches(Some(b"Bearer 0123abc"), token));
        assert!(!bearer_matches(Some(b"Bearer 0123abcde"), token));
        assert!(!bearer_matches(Some(b"Basic 0123abcd"), token));
        assert!(!bearer_matches(Some(b"0123abcd"), token));
    }

    #[test]
    fn tokens_are_long_and_fresh() {
        let first = new_token().expect("token");
        let second = new_token().expect("token");
        assert_eq!(first.len(), 64);
        assert!(first.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(first, second);
    }
}
