//! Writing a trace down as a replay goes: the replay tells the tracer what it did, the tracer
//! asks the browser context for what it saw.

use std::time::{Instant, SystemTime};

use base64::Engine as _;
use saffron_browser::{ActionFailure, ActionTrail, Context, Observed, Performed};
use saffron_recording::{Action, Masker};

use super::model::{
    AgentTrace, Bounds, ConsoleLine, DomSnapshot, Failure, Frame, Request, TabEvent, Trace, TraceAction, TraceError,
    TraceKind, TraceMode, TraceScenario, TraceStep,
};
use crate::plan::Execution;
use crate::{StepResult, Verdict};

/// One attempt's trace while it is being made.
pub(crate) struct Tracer {
    trace: Trace,
    /// The tab each passed `switchTab` made active.
    switches: Vec<TabEvent>,
    started: Instant,
    started_wall: SystemTime,
}

fn millis_since(start: SystemTime, at: SystemTime) -> u64 {
    at.duration_since(start).map(|elapsed| elapsed.as_millis() as u64).unwrap_or(0)
}

impl Tracer {
    /// The trace of a run in `engine` (`chromium`, `firefox`).
    pub(crate) fn in_browser(mut self, engine: &str) -> Tracer {
        self.trace.browser = engine.to_owned();
        self
    }

    /// A tracer for a replay under `mode`, or none when traces are off.
    pub(crate) fn start(mode: TraceMode, kind: TraceKind, execution: &Execution, base_url: &str) -> Option<Tracer> {
        if mode == TraceMode::Off {
            return None;
        }
        let trace = Trace {
            saffron_trace: super::model::TRACE_FORMAT,
            scenario: TraceScenario {
                file: execution.file.display().to_string().replace('\\', "/"),
                line: execution.line,
                name: execution.name.clone(),
            },
            attempt: 1,
            browser: "chromium".to_owned(),
            mode,
            started_at: saffron_recording::now_rfc3339(),
            base_url: base_url.to_owned(),
            duration_ms: 0,
            outcome: Verdict::Green,
            kind,
            steps: Vec::new(),
            actions: Vec::new(),
            frames: Vec::new(),
            network: Vec::new(),
            console: Vec::new(),
            tabs: Vec::new(),
            failure: None,
            agent: None,
            exchanges: Vec::new(),
        };
        Some(Tracer { trace, switches: Vec::new(), started: Instant::now(), started_wall: SystemTime::now() })
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Pictures after each action are taken only with `--trace on`: they cost a quarter of an
    /// action's time (see docs/benchmarks.md).
    pub(crate) fn wants_frames(&self) -> bool {
        self.trace.mode == TraceMode::On
    }

    /// The milliseconds since the attempt began, for an action's start.
    pub(crate) fn mark(&self) -> u64 {
        self.now_ms()
    }

    /// An action performed, after `context` performed it (successfully or not); `trail` is how
    /// it went on its way ([`Context::last_trail`], read once by the replay for its report too).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn action(
        &mut self,
        context: &Context,
        step: usize,
        action: &Action,
        start_ms: u64,
        outcome: Result<&Performed, &ActionFailure>,
        trail: &ActionTrail,
        drift: &[String],
        masker: &Masker,
    ) {
        let duration_ms = self.now_ms().saturating_sub(start_ms);
        let (passed, tier, locator, notes, error) = match outcome {
            Ok(performed) => (true, performed.tier, performed.locator.clone(), performed.notes.clone(), None),
            Err(failure) => (
                false,
                None,
                failure.found_by.clone(),
                Vec::new(),
                Some(TraceError {
                    kind: failure.kind.to_string(),
                    message: failure.message.clone(),
                    expected: failure.expected.clone(),
                    found: failure.found.clone(),
                }),
            ),
        };
        let mut traced = TraceAction {
            step,
            action: action.to_string(),
            kind: action.type_name().to_owned(),
            start_ms,
            duration_ms,
            passed,
            tier,
            locator,
            bounds: trail.bounds.map(|b| Bounds { x: b.x, y: b.y, width: b.width, height: b.height }),
            attempts: trail.attempts,
            waited: trail.waited.clone(),
            drift: drift.to_vec(),
            notes,
            matched: trail.matched.clone(),
            url: None,
            frame: None,
            error,
        };
        if self.wants_frames() || (passed && matches!(action, Action::SwitchTab { .. })) {
            traced.url = context.url().await.ok();
        }
        if passed && matches!(action, Action::SwitchTab { .. }) {
            self.switches.push(TabEvent {
                at_ms: self.now_ms(),
                event: "switched".to_owned(),
                tab: context.active_tab(),
                url: traced.url.clone().unwrap_or_default(),
            });
        }
        if self.wants_frames() {
            let secrets: Vec<&str> = masker.spellings().collect();
            if let Ok(picture) = context.frame_picture(&secrets).await {
                self.trace.frames.push(Frame {
                    at_ms: self.now_ms(),
                    width: picture.width,
                    height: picture.height,
                    jpeg: base64::engine::general_purpose::STANDARD.encode(&picture.jpeg),
                });
                traced.frame = Some(self.trace.frames.len() - 1);
            }
        }
        self.trace.actions.push(traced);
    }

    /// The trace of an `@api` execution: no browser took part.
    pub(crate) fn over_http(mut self) -> Tracer {
        self.trace.browser = "none (HTTP)".to_owned();
        self
    }

    /// A request or a check of its response, performed by the HTTP client (no page to read).
    pub(crate) fn http_action(&mut self, step: usize, action: &Action, start_ms: u64, failure: Option<&str>) {
        let duration_ms = self.now_ms().saturating_sub(start_ms);
        self.trace.actions.push(TraceAction {
            step,
            action: action.to_string(),
            kind: action.type_name().to_owned(),
            start_ms,
            duration_ms,
            passed: failure.is_none(),
            tier: None,
            locator: None,
            bounds: None,
            attempts: 1,
            waited: Vec::new(),
            drift: Vec::new(),
            notes: Vec::new(),
            matched: None,
            url: None,
            frame: None,
            error: failure.map(|message| TraceError {
                kind: "http".to_owned(),
                message: message.to_owned(),
                expected: None,
                found: None,
            }),
        });
    }

    /// The exchanges of the attempt, for the viewer's API tab.
    pub(crate) fn exchanges(&mut self, exchanges: Vec<crate::transcript::Exchange>) {
        self.trace.exchanges = exchanges;
    }

    /// A step finished (or was skipped).
    pub(crate) fn step(&mut self, report: &StepResult, start_ms: u64) {
        self.trace.steps.push(TraceStep {
            kind: report.kind,
            text: report.text.clone(),
            outcome: report.outcome,
            start_ms,
            duration_ms: report.duration_ms,
            cleared: report.cleared.clone(),
        });
    }

    /// The page at a failure: its picture (secrets covered already) and its DOM.
    pub(crate) async fn failure(
        &mut self,
        context: &Context,
        message: &str,
        url: Option<String>,
        png: Option<&[u8]>,
        masker: &Masker,
    ) {
        let (snapshot, snapshot_error) = match context.dom_snapshot().await {
            Ok(mhtml) => match super::dom::self_contained(&mhtml, masker) {
                Ok(html) => (Some(DomSnapshot { html, mhtml_bytes: mhtml.len() }), None),
                Err(error) => (None, Some(format!("the DOM snapshot could not be read: {error}"))),
            },
            Err(error) => (None, Some(format!("no DOM snapshot: {error}"))),
        };
        self.trace.failure = Some(Failure {
            action: self.trace.actions.len().checked_sub(1),
            message: message.to_owned(),
            url,
            screenshot: png.map(|png| base64::engine::general_purpose::STANDARD.encode(png)),
            snapshot,
            snapshot_error,
        });
    }

    /// Takes in what the context observed (before it is closed).
    pub(crate) fn observe(&mut self, context: &Context) {
        let Observed { network, console, tabs } = context.observed();
        let start = self.started_wall;
        let action_at = |at_ms: u64, actions: &[TraceAction]| -> Option<usize> {
            actions.iter().rposition(|action| action.start_ms <= at_ms)
        };
        self.trace.network = network
            .into_iter()
            .map(|request| {
                let start_ms = millis_since(start, request.started);
                Request {
                    method: request.method,
                    url: request.url,
                    status: request.status,
                    resource_type: request.resource_type,
                    mime_type: request.mime_type,
                    start_ms,
                    end_ms: request.ended.map(|ended| millis_since(start, ended)),
                    encoded_bytes: request.encoded_bytes,
                    failed: request.failure,
                    body: request.body,
                    action: action_at(start_ms, &self.trace.actions),
                    tab: request.tab,
                }
            })
            .collect();
        self.trace.console = console
            .into_iter()
            .map(|line| {
                let at_ms = millis_since(start, line.at);
                ConsoleLine {
                    at_ms,
                    level: line.level,
                    text: line.text,
                    source: line.source,
                    action: action_at(at_ms, &self.trace.actions),
                }
            })
            .collect();
        let mut events = Vec::new();
        for (tab, record) in tabs.into_iter().enumerate() {
            events.push(TabEvent {
                at_ms: millis_since(start, record.opened_at),
                event: "opened".to_owned(),
                tab,
                url: record.url.clone(),
            });
            if let Some(closed) = record.closed_at {
                events.push(TabEvent {
                    at_ms: millis_since(start, closed),
                    event: "closed".to_owned(),
                    tab,
                    url: record.url,
                });
            }
        }
        events.extend(self.switches.iter().cloned());
        events.sort_by_key(|event| event.at_ms);
        self.trace.tabs = events;
    }

    /// The finished trace, with the attempt's outcome.
    pub(crate) fn finish(mut self, outcome: &Verdict, duration_ms: u64) -> Trace {
        self.trace.outcome = outcome.clone();
        self.trace.duration_ms = duration_ms;
        self.trace
    }
}

impl Trace {
    /// Adds the agent's side of a recording or a repair.
    pub(crate) fn with_agent(mut self, agent: AgentTrace) -> Trace {
        self.agent = Some(agent);
        self
    }
}
