//! The MCP edge: rmcp's `ServerHandler` over the plain tool functions.
//!
//! Tools are dispatched by hand rather than with rmcp's `#[tool_router]` macros, for two
//! reasons: the tool list depends on the project's config (`accept` and `reject` exist only
//! when `saffron.toml` opts in), and arguments that do not fit the schema become an `isError`
//! result saying what to send instead, which a model can act on, rather than a JSON-RPC error
//! a client shows as "tool failed".

use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::ErrorData as McpError;
use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::project::{Project, display_path, project_path};
use crate::tools::author_feature::{AuthorFeatureArgs, AuthorFeatureOutput};
use crate::tools::check_feature::{CheckFeatureArgs, CheckFeatureOutput};
use crate::tools::find_steps::{FindStepsArgs, FindStepsOutput};
use crate::tools::proposals::{
    AcceptOutput, ListProposalsArgs, ListProposalsOutput, ProposalArgs, RejectOutput, ShowProposalOutput,
};
use crate::tools::run::{RunArgs, RunOutput};
use crate::tools::scenarios::{ListScenariosArgs, ListScenariosOutput, StatusArgs, StatusOutput};
use crate::tools::vocabulary::{VocabularyArgs, VocabularyOutput};
use crate::tools::{self, Render, ToolError};
use crate::{prompt, resources};

const INSTRUCTIONS: &str = "Saffron runs Gherkin browser tests with no step glue: each step's browser actions are \
    recorded once by an AI agent and replayed by the step's exact text. Before writing or editing a .feature or \
    .saffron file, look the wording up (find_steps, vocabulary) and reuse existing steps exactly, recorded ones \
    first; then call check_feature with the draft and fix its errors and near-duplicate warnings. list_scenarios \
    and status tell which recordings are fresh, stale or missing; list_proposals and show_proposal show healed \
    recordings waiting for a person's review. run replays scenarios in headless Chromium (no tokens: only \
    recorded scenarios pass; the others are blocked with \"needs recording\": `saffron run` in a terminal records \
    them with the project's agent) and gives each a verdict.";

/// The server: one project, behind a lock, since every tool call refreshes its index first.
#[derive(Clone)]
pub struct SaffronServer {
    project: Arc<Mutex<Project>>,
    root: PathBuf,
    /// Every tool, listed or not: a call to an opt-in tool that is not enabled is told so.
    table: Arc<Vec<ToolEntry>>,
    tools: Arc<Vec<Tool>>,
    allow_accept: bool,
}

/// One tool: what `tools/list` shows and how `tools/call` answers it.
struct ToolEntry {
    tool: Tool,
    route: Route,
    /// Listed and callable only when saffron.toml sets `[mcp] allow_accept = true`.
    opt_in: bool,
}

/// How a tool call is answered.
enum Route {
    /// At once, under the project's lock.
    Locked(LockedHandler),
    /// Planned under the lock, replayed on a blocking thread (seconds to minutes).
    Run,
    /// Prepared under the lock, then the project's model is asked without it.
    AuthorFeature,
}

type LockedHandler = Box<dyn Fn(&mut Project, JsonObject) -> CallToolResult + Send + Sync>;

impl SaffronServer {
    /// Loads the project at `root` (found by the caller) and decides the tool list from its
    /// config.
    pub fn open(root: PathBuf) -> SaffronServer {
        let project = Project::open(root.clone());
        let allow_accept = project.config().allow_accept;
        if let Some(problem) = &project.config().problem {
            eprintln!("saffron mcp: {problem}");
        }
        for warning in &project.config().warnings {
            eprintln!("saffron mcp: saffron.toml:{warning}");
        }
        let table = tool_table();
        let tools = listed(&table, allow_accept).cloned().collect();
        SaffronServer {
            project: Arc::new(Mutex::new(project)),
            root,
            table: Arc::new(table),
            tools: Arc::new(tools),
            allow_accept,
        }
    }

    /// The tools as listed.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The project, refreshed from disk. A tool that panicked left it in an unknown state, so
    /// a poisoned lock gets a freshly loaded project rather than the old one.
    fn project(&self) -> MutexGuard<'_, Project> {
        match self.project.lock() {
            Ok(mut project) => {
                project.refresh();
                project
            }
            Err(poisoned) => {
                let mut project = poisoned.into_inner();
                *project = Project::open(self.root.clone());
                self.project.clear_poison();
                project
            }
        }
    }

    fn route(&self, name: &str) -> Option<&ToolEntry> {
        self.table.iter().find(|entry| entry.tool.name == name)
    }

    /// Runs one tool call that is answered under the project's lock; `None` for a tool this
    /// server does not have or answers otherwise (`run`, `author_feature`).
    pub fn call(&self, name: &str, arguments: JsonObject) -> Option<CallToolResult> {
        let entry = self.route(name)?;
        let Route::Locked(handle) = &entry.route else { return None };
        if entry.opt_in && !self.allow_accept {
            return Some(error(&ToolError::new(
                format!("the {name} tool is not enabled in this project"),
                "accepting and rejecting proposals is a person's act: show the proposal (show_proposal) and ask \
                 them, or have them set [mcp] allow_accept = true in saffron.toml and restart the server",
            )));
        }
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| handle(&mut self.project(), arguments)));
        Some(outcome.unwrap_or_else(|_| internal_error(name)))
    }

    /// The `run` tool: planned here, replayed on a blocking thread with its own runtime (a
    /// replay takes seconds to minutes; the server keeps answering meanwhile).
    pub async fn run(&self, arguments: JsonObject) -> CallToolResult {
        let args: RunArgs = match serde_json::from_value(serde_json::Value::Object(arguments)) {
            Ok(args) => args,
            Err(problem) => {
                return error(&ToolError::new(
                    format!("invalid arguments for run: {problem}"),
                    "call run again with arguments that match its input schema",
                ));
            }
        };
        let planned = std::panic::catch_unwind(AssertUnwindSafe(|| tools::run::prepare(&self.project(), args)));
        let session = match planned {
            Ok(Ok(session)) => session,
            Ok(Err(problem)) => return error(&problem),
            Err(_) => return internal_error("run"),
        };
        let replayed = tokio::task::spawn_blocking(move || {
            std::panic::catch_unwind(AssertUnwindSafe(|| tools::run::execute(session)))
        })
        .await;
        match replayed {
            Ok(Ok(Ok(output))) => answer(&output),
            Ok(Ok(Err(problem))) => error(&problem),
            _ => internal_error("run"),
        }
    }
    /// The `author_feature` tool: prepared under the project's lock, then one or two model calls
    /// without it (a model answers in seconds; the server keeps answering meanwhile).
    pub async fn author_feature(&self, arguments: JsonObject) -> CallToolResult {
        let args: AuthorFeatureArgs = match serde_json::from_value(serde_json::Value::Object(arguments)) {
            Ok(args) => args,
            Err(problem) => {
                return error(&ToolError::new(
                    format!("invalid arguments for author_feature: {problem}"),
                    "call author_feature again with arguments that match its input schema",
                ));
            }
        };
        let prepared =
            std::panic::catch_unwind(AssertUnwindSafe(|| tools::author_feature::prepare(&self.project(), args)));
        let prepared = match prepared {
            Ok(Ok(prepared)) => prepared,
            Ok(Err(problem)) => return error(&problem),
            Err(_) => return internal_error("author_feature"),
        };
        // A task of its own, so that a panic in it is a tool error, not a dead server.
        match tokio::spawn(tools::author_feature::execute(prepared)).await {
            Ok(Ok(output)) => answer(&output),
            Ok(Err(problem)) => error(&problem),
            Err(_) => internal_error("author_feature"),
        }
    }
}

/// Parses the arguments, runs the tool, and shapes the answer: `structuredContent` plus a text
/// rendering, or an `isError` result naming the problem and what to do.
fn respond<A, O>(tool: &str, arguments: JsonObject, run: impl FnOnce(A) -> Result<O, ToolError>) -> CallToolResult
where
    A: DeserializeOwned,
    O: Serialize + Render,
{
    let args: A = match serde_json::from_value(serde_json::Value::Object(arguments)) {
        Ok(args) => args,
        Err(problem) => {
            return error(&ToolError::new(
                format!("invalid arguments for {tool}: {problem}"),
                format!("call {tool} again with arguments that match its input schema"),
            ));
        }
    };
    match run(args) {
        Ok(output) => answer(&output),
        Err(problem) => error(&problem),
    }
}

/// `structuredContent` plus its text rendering.
fn answer<O: Serialize + Render>(output: &O) -> CallToolResult {
    match serde_json::to_value(output) {
        Ok(value) => {
            let mut result = CallToolResult::structured(value);
            result.content = vec![ContentBlock::text(output.render())];
            result
        }
        Err(problem) => error(&ToolError::new(format!("the answer could not be encoded: {problem}"), "retry")),
    }
}

fn internal_error(name: &str) -> CallToolResult {
    error(&ToolError::new(
        format!("saffron hit an internal error while running {name} (details on the server's stderr)"),
        "retry once; if it fails again, report it with the arguments you sent",
    ))
}

/// A tool error as the model reads it. No `structuredContent`: the output schema describes a
/// success, and a client may check structured content against it.
fn error(problem: &ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(problem.render())])
}

/// A tool as listed, typed by the arguments it takes and the answer it gives, so that the
/// handler the table pairs it with takes and gives the same types its schemas describe.
struct Described<A, O> {
    tool: Tool,
    types: PhantomData<fn(A) -> O>,
}

fn tool<A: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    title: &str,
    description: &'static str,
    annotations: ToolAnnotations,
) -> Described<A, O> {
    // Schemas come from the argument and answer types themselves, so they cannot drift from
    // what the tools accept and return. A type whose schema is not an object is a bug here,
    // caught by the tests; it degrades to an open object rather than a crash.
    let mut input = schema_for_input::<A>().map(|schema| schema.as_ref().clone()).unwrap_or_else(|_| {
        let mut open = JsonObject::new();
        open.insert("type".to_string(), serde_json::Value::String("object".to_string()));
        open
    });
    // A tool without arguments still lists `properties`: some clients require the key.
    input.entry("properties").or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
    let input = Arc::new(input);
    let tool = Tool::new(name, description, input)
        .with_title(title)
        .with_raw_output_schema(schema_for_output::<O>())
        .with_annotations(annotations);
    Described { tool, types: PhantomData }
}

fn read_only(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title).read_only(true).destructive(false).idempotent(true).open_world(false)
}

/// The tools as listed under a config: the opt-in ones only when it enables them.
fn listed(table: &[ToolEntry], allow_accept: bool) -> impl Iterator<Item = &Tool> {
    table.iter().filter(move |entry| allow_accept || !entry.opt_in).map(|entry| &entry.tool)
}

#[cfg(test)]
fn tool_list(allow_accept: bool) -> Vec<Tool> {
    listed(&tool_table(), allow_accept).cloned().collect()
}

/// A tool answered under the project's lock by `run`.
fn locked<A, O>(described: Described<A, O>, run: fn(&mut Project, A) -> Result<O, ToolError>) -> ToolEntry
where
    A: DeserializeOwned + 'static,
    O: Serialize + Render + 'static,
{
    let tool = described.tool;
    let name = tool.name.to_string();
    let route = Route::Locked(Box::new(move |project, arguments| respond(&name, arguments, |args| run(project, args))));
    ToolEntry { tool, route, opt_in: false }
}

/// Every tool, in the order listed: its name, description and schemas, and how it is answered.
fn tool_table() -> Vec<ToolEntry> {
    vec![
        locked(
            tool::<VocabularyArgs, VocabularyOutput>(
                "vocabulary",
                "Step vocabulary",
                "The project's step vocabulary: every step text written in its feature files or held by a recording, \
                 with its status (recorded: replays for free; divergent: recorded with different actions; \
                 unrecorded: costs a recording), how often it is written and where, and its near-duplicates. \
                 Recorded first, most used first. Filter by text, status or file; page with limit and offset.",
                read_only("Step vocabulary"),
            ),
            |project, args| tools::vocabulary::run(&project.snapshot(), args),
        ),
        locked(
            tool::<FindStepsArgs, FindStepsOutput>(
                "find_steps",
                "Find existing steps",
                "The existing step wordings closest to an intent or a draft step, best first, each with its status \
                 and why it ranks there (exact, same pattern with other values, prefix, near-duplicate, shared \
                 words; recorded wordings first). Call it before writing a step: reusing a recorded wording exactly \
                 makes the step replay for free.",
                read_only("Find existing steps"),
            ),
            |project, args| tools::find_steps::run(&project.snapshot(), args),
        ),
        locked(
            tool::<CheckFeatureArgs, CheckFeatureOutput>(
                "check_feature",
                "Check a draft feature",
                "Checks a draft .feature/.saffron text against the project as if it were saved (nothing is \
                 written): parse errors with hints, unknown or duplicate StepSets, near-duplicate steps with the \
                 existing wording to write instead, and for every step whether it replays for free or needs \
                 recording, with per-scenario and total costs.",
                read_only("Check a draft feature"),
            ),
            tools::check_feature::run,
        ),
        locked(
            tool::<ListScenariosArgs, ListScenariosOutput>(
                "list_scenarios",
                "List scenarios",
                "Every runnable scenario (and Fixture) with the state of its recording: fresh (replays as \
                 recorded), stale (edited since: records again), unrecorded (the first run records it) or \
                 unreadable (with the reason), and any proposal pending review. Verdicts come from the run tool.",
                read_only("List scenarios"),
            ),
            |project, args| tools::scenarios::list(&project.snapshot(), args),
        ),
        locked(
            tool::<StatusArgs, StatusOutput>(
                "status",
                "Project status",
                "The project at a glance: scenario counts by recording state, step counts by status, pending and \
                 stale proposals, unreadable files, the scenarios that need attention, and the last run's verdict \
                 counts (from .saffron/reports/latest.json).",
                read_only("Project status"),
            ),
            |project, args| tools::scenarios::status(project, args),
        ),
        locked(
            tool::<ListProposalsArgs, ListProposalsOutput>(
                "list_proposals",
                "List proposals",
                "Proposals waiting for review (healed or new recordings filed by runs): their scenario, how many \
                 steps and actions change, feature edits, the agent's narrative, and whether they are stale (cannot \
                 be accepted, with the reasons).",
                read_only("List proposals"),
            ),
            |project, args| tools::proposals::list(project, args),
        ),
        locked(
            tool::<ProposalArgs, ShowProposalOutput>(
                "show_proposal",
                "Show a proposal",
                "One proposal in full: the action-level diff per changed step (added, removed, changed actions), the \
                 feature-file edits it carries, the narrative and adaptations, usage, and staleness with reasons.",
                read_only("Show a proposal"),
            ),
            |project, args| tools::proposals::show(project, args),
        ),
        ToolEntry {
            tool: tool::<RunArgs, RunOutput>(
                "run",
                "Run scenarios",
                "Replays the recordings of the selected scenarios in headless Chromium against the application (its \
                 base URL from baseUrl, $SAFFRON_BASE_URL or saffron.toml), with the project's setup and teardown \
                 hooks, and answers with a verdict per scenario: green (replayed as recorded), yellow (passed by \
                 replaying a proposal pending review), red (failed: the step, what was expected and what was found) \
                 or blocked (no browser..., or a scenario without a fresh recording: \"needs recording\", which \
                 `saffron run` records with the project's agent). Writes the reports under .saffron/reports/. Costs \
                 no tokens: nothing is recorded.",
                ToolAnnotations::with_title("Run scenarios")
                    .read_only(false)
                    .destructive(false)
                    .idempotent(false)
                    .open_world(true),
            )
            .tool,
            route: Route::Run,
            opt_in: false,
        },
        ToolEntry {
            tool: tool::<AuthorFeatureArgs, AuthorFeatureOutput>(
                "author_feature",
                "Draft a feature from prose",
                "Drafts a .saffron/.feature file from a prose description with the project's own model ([agent] in \
                 saffron.toml), given the project's vocabulary (recorded steps first) chosen by relevance to the \
                 prose. The draft parses (one repair round), its near-duplicate steps are rewritten to the project's \
                 existing wording, and each step says whether it replays for free or needs recording. Nothing is \
                 written: show the draft and save it where the person wants it. Costs model tokens (reported in \
                 `agent`).",
                ToolAnnotations::with_title("Draft a feature from prose")
                    .read_only(true)
                    .destructive(false)
                    .idempotent(false)
                    .open_world(true),
            )
            .tool,
            route: Route::AuthorFeature,
            opt_in: false,
        },
        ToolEntry {
            opt_in: true,
            ..locked(
                tool::<ProposalArgs, AcceptOutput>(
                    "accept",
                    "Accept a proposal",
                    "Accepts a pending proposal: writes its recording into .saffron/cache (validated, atomically) \
                     and removes the proposal. Refuses a stale proposal, giving the reasons, and a proposal that \
                     also edits feature files (a person accepts those with `saffron accept --with-feature-edit`). \
                     A proposed handler (a path under .saffron/handlers/proposed/, listed by list_proposals) is \
                     moved into .saffron/handlers/: replay then clears that interruption wherever it shows. \
                     Enabled because saffron.toml sets [mcp] allow_accept = true.",
                    ToolAnnotations::with_title("Accept a proposal")
                        .read_only(false)
                        .destructive(true)
                        .idempotent(false)
                        .open_world(false),
                ),
                tools::proposals::accept,
            )
        },
        ToolEntry {
            opt_in: true,
            ..locked(
                tool::<ProposalArgs, RejectOutput>(
                    "reject",
                    "Reject a proposal",
                    "Rejects a pending proposal or a proposed handler: deletes the proposal file; the committed \
                     recording and handlers are left as they are. Enabled because saffron.toml sets [mcp] \
                     allow_accept = true.",
                    ToolAnnotations::with_title("Reject a proposal")
                        .read_only(false)
                        .destructive(true)
                        .idempotent(false)
                        .open_world(false),
                ),
                tools::proposals::reject,
            )
        },
    ]
}

impl ServerHandler for SaffronServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().build();
        let mut implementation = Implementation::new("saffron", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("Saffron".to_string());
        ServerConfig::new(capabilities).with_server_info(implementation).with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        match self.route(&name).map(|entry| &entry.route) {
            Some(Route::Run) => return Ok(self.run(arguments).await.into()),
            Some(Route::AuthorFeature) => return Ok(self.author_feature(arguments).await.into()),
            Some(Route::Locked(_)) | None => {}
        }
        match self.call(&name, arguments) {
            Some(result) => Ok(result.into()),
            None => {
                let names: Vec<&str> = self.tools.iter().map(|tool| tool.name.as_ref()).collect();
                Err(McpError::invalid_params(
                    format!("unknown tool `{name}`; the tools are {}", names.join(", ")),
                    None,
                ))
            }
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let listed = resources::list(&self.project());
        let resources = listed
            .into_iter()
            .map(|r| Resource::new(r.uri, r.name).with_description(r.description).with_mime_type(r.mime_type))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let template = ResourceTemplate::new(resources::TEMPLATE, "project file")
            .with_title("A feature file, recording or proposal")
            .with_description(
                "A feature file (features/orders.saffron), a recording (.saffron/cache/...json) or a proposal \
                 (.saffron/proposals/...json), by its path relative to the project root",
            );
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let read = resources::read(&self.project(), &request.uri);
        match read {
            Ok((text, mime_type)) => {
                let contents = ResourceContents::text(text, request.uri).with_mime_type(mime_type);
                Ok(ReadResourceResult::new(vec![contents]).into())
            }
            Err(resources::NotFound(message)) => Err(McpError::resource_not_found(message, None)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let arguments = vec![
            PromptArgument::new("description")
                .with_description("The behaviour to test, in prose: who does what and what they should see.")
                .with_required(true),
            PromptArgument::new("path")
                .with_description("Where the file will be saved, relative to the project root (optional).")
                .with_required(false),
        ];
        let mut draft = Prompt::new(prompt::NAME, Some(prompt::DESCRIPTION), Some(arguments));
        draft.title = Some("Draft a feature file".to_string());
        Ok(ListPromptsResult::with_all_items(vec![draft]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != prompt::NAME {
            return Err(McpError::invalid_params(
                format!("unknown prompt `{}`; the prompt is {}", request.name, prompt::NAME),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let argument = |key: &str| arguments.get(key).and_then(|value| value.as_str()).map(str::trim);
        let Some(description) = argument("description").filter(|text| !text.is_empty()) else {
            return Err(McpError::invalid_params(
                "draft_feature needs a `description` argument: the behaviour to test, in prose",
                None,
            ));
        };
        let path = match argument("path").filter(|text| !text.is_empty()) {
            None => None,
            Some(path) => match project_path(path) {
                Some(path) => Some(display_path(&path)),
                None => {
                    return Err(McpError::invalid_params(
                        format!(
                            "draft_feature: `{path}` is not a path inside the project; give a path relative to the \
                             project root, such as features/orders.saffron, without `..`"
                        ),
                        None,
                    ));
                }
            },
        };
        let text = prompt::text(&self.project().snapshot(), description, path.as_deref());
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description("Draft a feature file with the project's vocabulary as the required wording")
            .into())
    }
}

/// Serves the project at `root` over stdio until the client closes the connection.
pub async fn serve_stdio(root: PathBuf) -> std::io::Result<()> {
    let server = SaffronServer::open(root);
    let running = server.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_object_schemas_for_input_and_output() {
        assert_eq!(tool_list(false).len(), 9);
        let tools = tool_list(true);
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names[7..], ["run", "author_feature", "accept", "reject"]);
        for tool in &tools {
            assert_eq!(tool.input_schema.get("type"), Some(&serde_json::json!("object")), "{}", tool.name);
            assert!(tool.input_schema.contains_key("properties"), "{}", tool.name);
            let output = tool.output_schema.as_ref().expect("output schema");
            assert_eq!(output.get("type"), Some(&serde_json::json!("object")), "{}", tool.name);
        }
    }

    #[test]
    fn every_tool_in_the_table_is_answered_by_its_route() {
        let dir = tempfile::tempdir().expect("temp dir");
        let server = SaffronServer::open(dir.path().to_path_buf());
        for entry in server.table.iter() {
            let answered = server.call(&entry.tool.name, JsonObject::new());
            match entry.route {
                Route::Locked(_) => assert!(answered.is_some(), "{}", entry.tool.name),
                Route::Run | Route::AuthorFeature => assert!(answered.is_none(), "{}", entry.tool.name),
            }
        }
        let refused = server.call("accept", JsonObject::new()).expect("answered");
        assert_eq!(refused.is_error, Some(true));
        let text = serde_json::to_string(&refused.content).expect("json");
        assert!(text.contains("the accept tool is not enabled in this project"), "{text}");
        assert!(server.tools().iter().all(|tool| tool.name != "accept" && tool.name != "reject"));
    }

    #[test]
    fn unknown_tools_and_bad_arguments_are_answered() {
        let dir = tempfile::tempdir().expect("temp dir");
        let server = SaffronServer::open(dir.path().to_path_buf());
        assert!(server.call("run", JsonObject::new()).is_none());
        let mut arguments = JsonObject::new();
        arguments.insert("limit".into(), serde_json::json!("many"));
        let result = server.call("vocabulary", arguments).expect("a tool");
        assert_eq!(result.is_error, Some(true));
        let answered = server.call("status", JsonObject::new()).expect("a tool");
        assert_eq!(answered.is_error, Some(false));
        assert!(answered.structured_content.is_some());
    }
}
