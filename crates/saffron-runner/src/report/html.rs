//! `report.html`: one self-contained file (inline style, script and screenshots) that a person
//! opens after a run. Every scenario with its steps, each step's actions with the locator that
//! found their element and its tier, drift, timings, the failure and its screenshot; filters by
//! verdict, as Playwright's HTML report has (also from the address: `report.html#red`).

use std::fmt::Write as _;

use base64::Engine;

use html_escape::encode_quoted_attribute as escape_html;

use super::{RunReport, badge, failure_text, hook_outcome};
use crate::{ActionResult, AgentRun, ScenarioResult, StepOutcome, StepResult};

const VERDICTS: [(&str, &str); 4] = [("green", "✓"), ("yellow", "~"), ("red", "✗"), ("blocked", "!")];

const STYLE: &str = "\
body{font-family:system-ui,sans-serif;margin:2rem;color:#1f2328}\
code{font-size:.9em}nav{margin:1rem 0}nav button{margin-right:.4rem;padding:.3rem .7rem;border:1px solid #ccc;\
border-radius:1rem;background:#fff;cursor:pointer}nav button[aria-pressed=true]{background:#1f2328;color:#fff}\
.scenario{border-bottom:1px solid #ddd;padding:.3rem 0}summary{cursor:pointer}.time{color:#666;font-size:.9em}\
.green .badge{color:#1a7f37}.yellow .badge,.blocked .badge{color:#9a6700}.red .badge{color:#cf222e}\
ol.steps{margin:.5rem 0}li.skipped{color:#888}li.failed>.step{color:#cf222e;font-weight:600}\
ul.actions{list-style:none;padding-left:1rem;margin:.2rem 0}ul.actions li.failed{color:#cf222e}\
.kw{font-weight:600}.drift{color:#9a6700}pre{white-space:pre-wrap;background:#f6f8fa;padding:.5rem}\
img{max-width:640px;border:1px solid #ccc;display:block;margin:.5rem 0}table{border-collapse:collapse}\
td,th{border-bottom:1px solid #ddd;padding:.3rem .6rem;text-align:left}.agent{margin:.5rem 0}\
.fragile{color:#9a6700}\
body[data-filter=green] .scenario:not([data-verdict=green]),\
body[data-filter=yellow] .scenario:not([data-verdict=yellow]),\
body[data-filter=red] .scenario:not([data-verdict=red]),\
body[data-filter=blocked] .scenario:not([data-verdict=blocked]),\
body[data-filter=flaky] .scenario:not([data-flaky]),.scenario.unmatched{display:none}\
.strip{font-family:ui-monospace,monospace;color:#666;letter-spacing:.1em}\
input[type=search]{padding:.3rem .6rem;border:1px solid #ccc;border-radius:.3rem;min-width:20rem}";

const SCRIPT: &str = "\
const buttons=[...document.querySelectorAll('nav button')];\
const show=(filter)=>{document.body.dataset.filter=filter;\
for(const b of buttons){b.setAttribute('aria-pressed',String(b.dataset.show===filter));}};\
for(const b of buttons){b.addEventListener('click',()=>{show(b.dataset.show);\
history.replaceState(null,'',b.dataset.show==='all'?'#':'#'+b.dataset.show);});}\
const wanted=location.hash.slice(1);if(buttons.some((b)=>b.dataset.show===wanted)){show(wanted);}\
const search=document.querySelector('input[type=search]');const sections=[...document.querySelectorAll('.scenario')];\
search.addEventListener('input',()=>{const words=search.value.toLowerCase().split(/\\s+/).filter(Boolean);\
for(const s of sections){const text=s.querySelector('summary').textContent.toLowerCase();\
s.classList.toggle('unmatched',!words.every((w)=>text.includes(w)));}});";

fn seconds(ms: u64) -> String {
    if ms < 1000 { format!("{ms} ms") } else { format!("{:.1} s", ms as f64 / 1000.0) }
}

fn action_item(out: &mut String, action: &ActionResult) {
    let class = if action.passed { "passed" } else { "failed" };
    let _ = write!(out, "<li class=\"{class}\"><code>{}</code>", escape_html(&action.action));
    match (&action.locator, action.tier) {
        (Some(locator), Some(tier)) => {
            let _ = write!(out, " found by <code>{}</code> ({})", escape_html(locator), tier.as_str());
        }
        (Some(locator), None) => {
            let _ = write!(out, " found by <code>{}</code>", escape_html(locator));
        }
        _ => {}
    }
    let _ = write!(out, " <span class=\"time\">{}</span>", seconds(action.duration_ms));
    if action.attempts > 1 {
        let waited = if action.waited.is_empty() { String::new() } else { format!(": {}", action.waited.join("; ")) };
        let _ = write!(out, "<div class=\"waits\">looked {} times{}</div>", action.attempts, escape_html(&waited));
    }
    if let Some(matched) = &action.matched {
        let _ = write!(out, "<div class=\"matched\">matched <code>{}</code></div>", escape_html(matched));
    }
    for drift in &action.drift {
        let _ = write!(out, "<div class=\"drift\">drift: {}</div>", escape_html(drift));
    }
    for note in &action.notes {
        let _ = write!(out, "<div>{}</div>", escape_html(note));
    }
    out.push_str("</li>");
}

fn step_item(out: &mut String, step: &StepResult) {
    let class = match step.outcome {
        StepOutcome::Passed => "passed",
        StepOutcome::Failed => "failed",
        StepOutcome::Skipped => "skipped",
    };
    let _ = write!(
        out,
        "<li class=\"{class}\"><span class=\"step\"><span class=\"kw\">{}</span> {}</span>",
        step.kind.keyword(),
        escape_html(&step.text)
    );
    if step.outcome == StepOutcome::Skipped {
        out.push_str(" <span class=\"time\">not run</span></li>");
        return;
    }
    if step.restored {
        out.push_str(" <span class=\"time\">session restored</span></li>");
        return;
    }
    let _ = write!(out, " <span class=\"time\">{}</span>", seconds(step.duration_ms));
    for name in &step.cleared {
        let _ = write!(out, "<div class=\"cleared\">cleared: {}</div>", escape_html(name));
    }
    if !step.actions.is_empty() {
        out.push_str("<ul class=\"actions\">");
        for action in &step.actions {
            action_item(out, action);
        }
        out.push_str("</ul>");
    }
    out.push_str("</li>");
}

fn scenario_section(out: &mut String, s: &ScenarioResult, strip: Option<&str>) {
    let verdict = s.verdict.name();
    // A scenario that needs a look is open; a green one is one line until clicked.
    let open = if s.is_green() && s.drift.is_empty() { "" } else { " open" };
    let _ = write!(
        out,
        "<section class=\"scenario {verdict}\" data-verdict=\"{verdict}\"{}><details{open}><summary>\
         <span class=\"badge\">{}</span> <b>{}</b> <code>{}:{}</code> <span class=\"time\">{}</span>{}</summary>",
        if s.flaky { " data-flaky=\"true\"" } else { "" },
        badge(s),
        escape_html(&s.name),
        escape_html(&s.file),
        s.line,
        seconds(s.duration_ms),
        strip.map_or(String::new(), |strip| format!(
            " <span class=\"strip\" title=\"the last runs, oldest first: ✓ green, ≈ flaky, ~ yellow, ✗ red, ! blocked\">{}</span>",
            escape_html(strip)
        ))
    );
    if let Some(text) = failure_text(s) {
        let _ = write!(out, "<pre>{}</pre>", escape_html(&text));
    }
    if !s.retried.is_empty() {
        out.push_str("<p>retried after:</p><ul class=\"retried\">");
        for attempt in &s.retried {
            let _ = write!(out, "<li><code>{}</code></li>", escape_html(attempt));
        }
        out.push_str("</ul>");
    }
    if let Some(session) = &s.session
        && let Some(stale) = &session.stale
    {
        let _ = write!(
            out,
            "<p class=\"session\">session \"{}\": the kept one was stale ({}); signed in again</p>",
            escape_html(&session.name),
            escape_html(stale)
        );
    }
    if let Some(viewer) = s.trace_viewer.as_deref().and_then(|file| file.strip_prefix(".saffron/")) {
        // report.html is in .saffron/reports/, the viewer page in .saffron/artifacts/.
        let _ = write!(
            out,
            "<p class=\"trace\"><a href=\"../{}\">trace</a> ({} attempt(s); or <code>saffron trace {}:{}</code>)</p>",
            escape_html(viewer),
            s.traces.len(),
            escape_html(&s.file),
            s.line
        );
    } else if !s.traces.is_empty() {
        let _ =
            write!(out, "<p class=\"trace\">trace: <code>saffron trace {}:{}</code></p>", escape_html(&s.file), s.line);
    }
    if let Some(transcript) = &s.transcript {
        transcript_section(out, transcript, &s.exchanges);
    } else if let Some(url) = &s.url {
        let _ = write!(out, "<p>page: <code>{}</code></p>", escape_html(url));
    }
    if !s.console_errors.is_empty() {
        let _ = write!(
            out,
            "<p>the page logged {} error(s) before the failure:</p><ul class=\"console\">",
            s.console_errors.len()
        );
        for error in &s.console_errors {
            let _ = write!(out, "<li><code>{}</code></li>", escape_html(error));
        }
        out.push_str("</ul>");
    }
    if let Some(run) = &s.agent {
        agent_section(out, run);
    }
    if !s.steps.is_empty() {
        out.push_str("<ol class=\"steps\">");
        for step in &s.steps {
            step_item(out, step);
        }
        out.push_str("</ol>");
    } else {
        for drift in &s.drift {
            let _ = write!(out, "<p class=\"drift\">drift: {}</p>", escape_html(drift));
        }
    }
    if let Some(png) = &s.screenshot {
        let data = base64::engine::general_purpose::STANDARD.encode(png);
        let _ = write!(out, "<img alt=\"screenshot at the failure\" src=\"data:image/png;base64,{data}\">");
    } else if let Some(file) = s.screenshot_file.as_deref().and_then(|file| file.strip_prefix(".saffron/")) {
        // An imported run's picture, filed beside the reports: linked from report.html's folder.
        let _ = write!(out, "<img alt=\"screenshot at the failure\" src=\"../{}\">", escape_html(file));
    }
    out.push_str("</details></section>\n");
}

/// What the agent did for the scenario: its figures, what was saved, fragile targets.
fn agent_section(out: &mut String, run: &AgentRun) {
    let usage = &run.usage;
    let _ = write!(
        out,
        "<div class=\"agent\"><b>Recorded by {}</b><table><tr><th>tokens in</th><th>cached</th><th>out</th>\
         <th>calls</th><th>model time</th><th>cost</th><th>seeded</th><th>sessions</th></tr><tr><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} of {} steps</td><td>{}</td></tr></table>",
        escape_html(&run.agent),
        usage.input_tokens,
        usage.cache_read_tokens + usage.cache_write_tokens,
        usage.output_tokens,
        usage.calls,
        seconds(usage.model_time_ms),
        escape_html(&run.cost().to_string()),
        run.seeded_steps,
        run.steps,
        run.sessions
    );
    // The first line is the table's figures again.
    for line in run.lines().iter().skip(1) {
        let class = if line.starts_with("fragile target") { " class=\"fragile\"" } else { "" };
        let _ = write!(out, "<div{class}>{}</div>", escape_html(line));
    }
    out.push_str("</div>");
}

pub fn html(report: &RunReport) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Saffron run</title>\
         <style>{STYLE}</style></head><body data-filter=\"all\">\n<h1>Saffron run</h1>\n\
         <p>{} scenario(s) against <code>{}</code> in {:.1} s: {}.</p>\n",
        report.scenarios.len(),
        escape_html(&report.base_url),
        report.duration_ms as f64 / 1000.0,
        report.counts
    );
    if let Some(imported) = &report.imported {
        let _ = write!(out, "<p class=\"imported\">{}", escape_html(&imported.describe()));
        if let Some(link) = imported.web_link() {
            let _ = write!(out, ": <a href=\"{}\" rel=\"noopener noreferrer\">the run</a>", escape_html(link));
        }
        out.push_str(".</p>\n");
    }
    let _ = write!(
        out,
        "<nav aria-label=\"verdicts\"><button type=\"button\" data-show=\"all\" aria-pressed=\"true\">all ({})</button>",
        report.scenarios.len()
    );
    for (name, symbol) in VERDICTS {
        let count = report.scenarios.iter().filter(|s| s.verdict.name() == name).count();
        let _ = write!(
            out,
            "<button type=\"button\" data-show=\"{name}\" aria-pressed=\"false\">{symbol} {name} ({count})</button>"
        );
    }
    let flaky = report.scenarios.iter().filter(|s| s.flaky).count();
    let _ = write!(
        out,
        "<button type=\"button\" data-show=\"flaky\" aria-pressed=\"false\">≈ flaky ({flaky})</button> \
         <input type=\"search\" placeholder=\"Search scenarios and files\" aria-label=\"Search scenarios and files\">"
    );
    out.push_str("</nav>\n");
    if let Some(totals) = &report.agent {
        let _ = writeln!(
            out,
            "<section class=\"agent\"><h2>Agent</h2><p>{}.</p></section>",
            escape_html(&totals.summary())
        );
    }
    for s in &report.scenarios {
        scenario_section(&mut out, s, report.history.get(&s.history_key()).map(String::as_str));
    }
    if !report.hooks.is_empty() {
        out.push_str("<h2>Hooks</h2>\n<table>");
        for hook in &report.hooks {
            let _ = writeln!(
                out,
                "<tr class=\"{}\"><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                if hook.succeeded() { "green" } else { "red" },
                hook.phase.name(),
                escape_html(&hook.command),
                escape_html(&hook_outcome(hook)),
                seconds(hook.duration_ms)
            );
        }
        out.push_str("</table>\n");
    }
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body></html>\n");
    out
}

/// An `@api` scenario's exchanges (masked as its transcript was written): one line each, its
/// headers and bodies folded under it.
fn transcript_section(out: &mut String, path: &str, exchanges: &[crate::transcript::Exchange]) {
    let _ = write!(out, "<p>transcript: <code>{}</code></p>", escape_html(path));
    if exchanges.is_empty() {
        return;
    }
    out.push_str("<ol class=\"exchanges\">");
    // A retried scenario's exchanges are headed by their attempt.
    let retried = exchanges.iter().any(|exchange| exchange.attempt > 1);
    let mut heading = 0;
    for exchange in exchanges {
        if retried && exchange.attempt != heading {
            heading = exchange.attempt;
            let _ = write!(out, "<li class=\"attempt\">attempt {heading}</li>");
        }
        let answer = match (exchange.status, &exchange.error) {
            (Some(status), _) => status.to_string(),
            (None, Some(error)) => format!("no response: {error}"),
            (None, None) => "no response".to_owned(),
        };
        let _ = write!(
            out,
            "<li><details><summary>step {} <code>{} {}</code> → {} ({} ms)</summary>",
            exchange.step,
            escape_html(&exchange.method),
            escape_html(&exchange.url),
            escape_html(&answer),
            exchange.duration_ms
        );
        let headers = |headers: &[(String, String)]| {
            headers.iter().map(|(name, value)| format!("{name}: {value}")).collect::<Vec<_>>().join("\n")
        };
        for (label, text) in [
            ("request headers", headers(&exchange.request_headers)),
            ("request body", exchange.request_body.clone().unwrap_or_default()),
            ("response headers", headers(&exchange.response_headers)),
            ("response body", exchange.response_body.clone().unwrap_or_default()),
        ] {
            if !text.is_empty() {
                let _ = write!(out, "<p>{label}</p><pre>{}</pre>", escape_html(&text));
            }
        }
        out.push_str("</details></li>");
    }
    out.push_str("</ol>");
}
