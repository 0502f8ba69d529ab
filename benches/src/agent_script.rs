//! A scripted recording agent for the fake vendor servers: per scenario, a list of tool calls
//! whose `ref` is found by reading the latest snapshot the gateway sent (the line that holds a
//! given text), as a model would.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use saffron_agent::testing::Reply;
use saffron_agent::{Block, Request, Role};
use serde_json::{Value, json};

/// One tool call; `line` is text of the snapshot line whose ref goes into `input.ref`.
#[derive(Debug, Clone)]
pub struct Op {
    pub tool: String,
    pub input: Value,
    pub line: Option<String>,
}

/// A call whose arguments are not JSON (the OpenAI wire only).
pub const MALFORMED: &str = "(malformed)";

pub fn op(tool: &str, input: Value) -> Op {
    Op { tool: tool.into(), input, line: None }
}

pub fn on(tool: &str, line: &str, input: Value) -> Op {
    Op { tool: tool.into(), input, line: Some(line.into()) }
}

pub fn step(number: usize) -> Op {
    op("saffron_step", json!({ "step": number }))
}

pub fn goto(url: &str) -> Op {
    op("browser_goto", json!({ "url": url }))
}

pub fn click(line: &str) -> Op {
    on("browser_click", line, json!({}))
}

pub fn fill(line: &str, value: &str) -> Op {
    on("browser_fill", line, json!({ "value": value }))
}

pub fn check(input: Value) -> Op {
    op("saffron_assert", input)
}

pub fn check_on(line: &str, input: Value) -> Op {
    on("saffron_assert", line, input)
}

pub fn wait(pattern: &str, method: &str, status: &str) -> Op {
    op("saffron_wait_response", json!({ "url_pattern": pattern, "method": method, "status": status }))
}

pub fn done() -> Op {
    op("saffron_done", json!({ "success": true, "narrative": "Every step performed and verified." }))
}

/// Ends a repair: success, the kind of change, and rewordings as (step, text).
pub fn repaired(change: &str, rewrites: &[(usize, &str)]) -> Op {
    let rewrites: Vec<Value> = rewrites.iter().map(|(step, text)| json!({ "step": step, "text": text })).collect();
    op(
        "saffron_done",
        json!({ "success": true, "narrative": "The interface changed; adapted.", "change": change, "rewrites": rewrites }),
    )
}

/// Steps 1 and 2: the sign-in page, and signing in with the demo account.
pub fn open_and_sign_in() -> Vec<Op> {
    vec![
        step(1),
        goto("/login"),
        check_on("h1", json!({ "check": "visible" })),
        step(2),
        fill("textbox \"Email\"", "demo@saffron.test"),
        fill("textbox \"Password\"", "{env:DEMO_PASSWORD}"),
        click("button \"Sign in\""),
        wait("^/api/session$", "POST", "2xx"),
    ]
}

/// Steps 1 to 3: the `signed in as the demo user` set (or the same steps written out).
pub fn sign_in() -> Vec<Op> {
    let mut ops = open_and_sign_in();
    ops.extend([
        step(3),
        check(json!({ "check": "url", "url": "/orders" })),
        check_on("h1", json!({ "check": "visible" })),
    ]);
    ops
}

/// Steps 4 to 6: the `a new order form` set.
pub fn new_order_form() -> Vec<Op> {
    vec![
        step(4),
        check(json!({ "check": "url", "url": "/orders" })),
        step(5),
        click("link \"New order\""),
        step(6),
        check_on("h1", json!({ "check": "text", "text": "New order" })),
    ]
}

/// The scripts by scenario name (as the task names it).
pub type Plans = HashMap<String, Vec<Op>>;

/// The reply to `request`: the next call of its scenario's plan, by how many answers the model
/// gave in this conversation; past the end (or for a scenario without a plan), plain text.
pub fn reply(plans: &Plans, request: &Request) -> Reply {
    let task = request.messages.first().map(|message| message.text()).unwrap_or_default();
    let scenario = task.lines().find_map(|line| line.strip_prefix("Scenario: ")).unwrap_or_default();
    // A refine session (the first recording failed its proof) may have a plan of its own, and
    // so may a repair of a failed replay and its refine.
    let refine = plans.get(&format!("{scenario} (refine)")).filter(|_| task.contains("failed when replayed"));
    let repair = if task.contains("replayed from the start without you") {
        plans.get(&format!("{scenario} (repair refine)")).or_else(|| plans.get(&format!("{scenario} (repair)")))
    } else if task.contains("Replay failed at step") {
        plans.get(&format!("{scenario} (repair)"))
    } else {
        None
    };
    let Some(plan) = repair.or(refine).or_else(|| plans.get(scenario)) else {
        return Reply::text("I have no plan for this scenario.");
    };
    let index = request.answers_so_far();
    let Some(op) = plan.get(index) else { return Reply::text("I am finished.") };
    if op.tool == MALFORMED {
        return Reply::malformed_call(&format!("call-{index}"), "browser_click", &op.input.to_string()[1..]);
    }
    let mut input = op.input.clone();
    if let Some(line) = &op.line {
        let element = latest_snapshot(request)
            .and_then(|snapshot| ref_on_line(&snapshot, line))
            .unwrap_or_else(|| format!("(no line with {line})"));
        input["ref"] = json!(element);
    }
    Reply::call(&format!("call-{index}"), &op.tool, input)
}

/// The newest text the gateway sent that holds refs: a tool result, or the task.
pub fn latest_snapshot(request: &Request) -> Option<String> {
    request.messages.iter().rev().filter(|message| message.role == Role::User).find_map(|message| {
        message.content.iter().rev().find_map(|block| match block {
            Block::ToolResult { content, .. } if content.contains("[ref=") => Some(content.clone()),
            Block::Text { text } if text.contains("[ref=") => Some(text.clone()),
            _ => None,
        })
    })
}

/// The ref of the first element line that holds `text`.
pub fn ref_on_line(snapshot: &str, text: &str) -> Option<String> {
    let line = snapshot.lines().find(|line| line.contains(text) && line.contains("[ref="))?;
    // A line may hold several elements (a row and its cells): the element the text names is
    // the first ref after the text; text after every ref is the content of the last one.
    let at = line.find(text)?;
    let start = match line[at..].find("[ref=") {
        Some(after) => at + after,
        None => line[..at].rfind("[ref=")?,
    } + "[ref=".len();
    let end = line[start..].find(']')? + start;
    Some(line[start..end].to_string())
}

/// Every tool result the server received, for assertions on what the agent was told.
pub fn tool_results(request: &Request) -> Vec<(String, bool)> {
    request
        .messages
        .iter()
        .flat_map(|message| message.tool_results().map(|result| (result.content.to_string(), result.is_error)))
        .collect()
}

/// Keeps the requests a script saw, read back into the neutral form.
#[derive(Clone, Default)]
pub struct Seen(pub Arc<Mutex<Vec<Request>>>);

impl Seen {
    pub fn push(&self, request: &Request) {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(request.clone());
    }

    pub fn all(&self) -> Vec<Request> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}
