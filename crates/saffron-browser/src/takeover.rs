//! The takeover bar: in a run a person watches, a small button Saffron adds to every page of a
//! recording context, so the person can take the browser from the agent and give it back.
//!
//! The bar lives in an isolated world of its own (the page's scripts cannot see it, call its
//! binding or fake its clicks: a click counts only when the browser says it is trusted), inside
//! a closed shadow root under an `aria-hidden` host, so neither the snapshot the agent reads
//! (the accessibility tree leaves hidden subtrees out) nor a locator by role, name or text
//! (role queries skip ignored nodes, scripts cannot enter a closed shadow root) finds it; its
//! button never takes the focus, which would lift `aria-hidden`. A click reaches Rust through a
//! CDP binding (`Runtime.addBinding`) exposed to that world only.
//!
//! Who holds the browser is not decided here: a click is passed on as [`PersonAsks`], and the
//! owner of the lease says what the bar shows with [`TakeoverBar::show`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::page::Page;
use chromiumoxide::cdp::js_protocol::runtime::EventBindingCalled;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::cdp::{self, CdpFail};
use crate::context::{Context, Shared, State};
use crate::error::BrowserError;

/// The isolated world the bar runs in.
const WORLD: &str = "saffron-takeover";

/// The binding the bar calls, exposed in [`WORLD`] only.
const BINDING: &str = "__saffronTakeover";

/// The bar. It shows who holds the browser and is one button: "Take over" while the agent
/// does, "Give back to agent" while the person does. It tells Rust `take`, `give`, or `ready`
/// (a new document shows the bar: Rust answers with who holds the browser).
const BAR: &str = r#"(() => {
  if (window !== window.top || globalThis.__saffronBar) return;
  const send = globalThis.__saffronTakeover;
  if (typeof send !== 'function') return;
  const host = document.createElement('saffron-takeover');
  host.setAttribute('aria-hidden', 'true');
  host.setAttribute('data-saffron-takeover', '');
  host.style.cssText = 'all: initial; position: fixed; z-index: 2147483647; right: 8px; bottom: 8px;';
  const root = host.attachShadow({ mode: 'closed' });
  const button = document.createElement('button');
  button.type = 'button';
  button.style.cssText = 'font: 13px/1.2 sans-serif; padding: 6px 10px; border: 1px solid #b45309; '
    + 'border-radius: 6px; background: #fef3c7; color: #1c1917; cursor: pointer; box-shadow: 0 1px 4px #0004;';
  // Never focused: Chromium exposes an aria-hidden subtree that holds the focus, and a person
  // typing in the page keeps their caret.
  button.tabIndex = -1;
  button.addEventListener('mousedown', (event) => event.preventDefault());
  root.append(button);
  let personHolds = false;
  const show = (held) => {
    personHolds = held;
    button.textContent = held ? 'Saffron: you have control \u2014 Give back to agent' : 'Saffron: the agent has control \u2014 Take over';
    button.style.background = held ? '#dcfce7' : '#fef3c7';
  };
  button.addEventListener('click', (event) => {
    if (!event.isTrusted) return;
    event.stopPropagation();
    send(personHolds ? 'give' : 'take');
  });
  show(false);
  const attach = () => {
    if (document.documentElement && !host.isConnected) document.documentElement.append(host);
    if (host.getAttribute('aria-hidden') !== 'true') host.setAttribute('aria-hidden', 'true');
  };
  new MutationObserver(attach).observe(document, { childList: true });
  document.addEventListener('DOMContentLoaded', () => {
    attach();
    new MutationObserver(attach).observe(document.documentElement, { childList: true });
    new MutationObserver(attach).observe(host, { attributes: true });
  });
  attach();
  globalThis.__saffronBar = { show };
  send('ready');
})()"#;

/// What the person asked for with the bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PersonAsks {
    /// "Take over": the person wants the browser.
    TakeOver,
    /// "Give back to agent".
    GiveBack,
}

/// What the bar shows, in every tab of its context.
#[derive(Clone)]
pub struct TakeoverBar {
    shared: Arc<Shared>,
}

/// What every tab of a context with a bar needs: where clicks go, what the bar shows, and
/// where each tab's bar lives.
pub(crate) struct Wiring {
    asks: UnboundedSender<PersonAsks>,
    person_holds: bool,
    /// The tabs (target ids) the bar was added to.
    installed: HashSet<String>,
    /// Per tab, the world of the bar its document shows now (each document says so when its
    /// bar is ready).
    worlds: HashMap<String, i64>,
}

impl Context {
    /// Adds the takeover bar to every tab of the context, now and to come; the person's clicks
    /// come out of the receiver. Only for a run a person watches (the runner asks for it when
    /// its options say so; `saffron run` says so in a headed run).
    pub async fn enable_takeover_bar(&self) -> Result<(TakeoverBar, UnboundedReceiver<PersonAsks>), BrowserError> {
        let (asks, clicks) = tokio::sync::mpsc::unbounded_channel();
        let tabs = self.shared.update(|state| {
            let wiring = Wiring { asks, person_holds: false, installed: HashSet::new(), worlds: HashMap::new() };
            state.takeover = Some(wiring);
            let ready: Vec<String> =
                state.tabs.iter().filter(|tab| tab.ready).map(|tab| tab.target_id.clone()).collect();
            ready.into_iter().filter_map(|target_id| claim(state, &target_id)).collect::<Vec<_>>()
        });
        for (target_id, page) in tabs {
            install(&page, &target_id, &self.shared)
                .await
                .map_err(|error| BrowserError::Protocol(error.to_string()))?;
        }
        Ok((TakeoverBar { shared: self.shared.clone() }, clicks))
    }
}

impl TakeoverBar {
    /// Shows in every tab who holds the browser (`true`: the person).
    pub async fn show(&self, person_holds: bool) {
        let bars = self.shared.update(|state| {
            let Some(wiring) = state.takeover.as_mut() else { return Vec::new() };
            wiring.person_holds = person_holds;
            let worlds = wiring.worlds.clone();
            state
                .tabs
                .iter()
                .filter(|tab| !tab.closed)
                .filter_map(|tab| Some((tab.page.clone()?, *worlds.get(&tab.target_id)?)))
                .collect::<Vec<_>>()
        });
        for (page, world) in bars {
            // A tab that is navigating has no such world any more: its new document's bar asks.
            let _ = show_in(&page, world, person_holds).await;
        }
    }
}

/// The target id and page of a tab that has no bar yet, marking it as having one.
fn claim(state: &mut State, target_id: &str) -> Option<(String, Page)> {
    let page = state.tabs.iter().find(|tab| tab.target_id == target_id)?.page.clone()?;
    let wiring = state.takeover.as_mut()?;
    wiring.installed.insert(target_id.to_owned()).then(|| (target_id.to_owned(), page))
}

/// Adds the bar to a tab that was just attached, when the context has one.
pub(crate) async fn on_attached(target_id: &str, shared: &Arc<Shared>) {
    if shared.read(|state| state.takeover.is_none()) {
        return;
    }
    let Some((target_id, page)) = shared.update(|state| claim(state, target_id)) else { return };
    if let Err(error) = install(&page, &target_id, shared).await {
        shared.update(|state| state.notes.push(format!("the takeover bar could not be added to a tab: {error}")));
    }
}

/// The binding, the bar in every new document, the listener of its clicks, and the bar in the
/// document the tab shows now.
async fn install(page: &Page, target_id: &str, shared: &Arc<Shared>) -> Result<(), CdpFail> {
    let mut calls = page.chromium("the takeover bar")?.event_listener::<EventBindingCalled>().await?;
    cdp::call(page, "Runtime.addBinding", json!({ "name": BINDING, "executionContextName": WORLD })).await?;
    cdp::call(page, "Page.addScriptToEvaluateOnNewDocument", json!({ "source": BAR, "worldName": WORLD })).await?;
    let listener = {
        let (page, shared, target_id) = (page.clone(), shared.clone(), target_id.to_owned());
        tokio::spawn(async move {
            while let Some(call) = calls.next().await {
                if call.name != BINDING {
                    continue;
                }
                let world = *call.execution_context_id.inner();
                let ask = match call.payload.as_str() {
                    "take" => Some(PersonAsks::TakeOver),
                    "give" => Some(PersonAsks::GiveBack),
                    _ => None,
                };
                let held = shared.update(|state| {
                    let wiring = state.takeover.as_mut()?;
                    match ask {
                        Some(ask) => {
                            let _ = wiring.asks.send(ask);
                        }
                        None => {
                            wiring.worlds.insert(target_id.clone(), world);
                        }
                    }
                    Some(wiring.person_holds)
                });
                // A new document's bar shows who holds the browser.
                if let (None, Some(held)) = (ask, held) {
                    let _ = show_in(&page, world, held).await;
                }
            }
        })
    };
    shared.update(|state| state.tasks.push(listener));
    // The document shown now was created before the script was added: its bar is added here.
    let frame = page.target_id();
    let answer = cdp::call(page, "Page.createIsolatedWorld", json!({ "frameId": frame, "worldName": WORLD })).await?;
    let world = answer
        .get("executionContextId")
        .and_then(Value::as_i64)
        .ok_or_else(|| CdpFail::Protocol("Page.createIsolatedWorld returned no context".to_owned()))?;
    cdp::call(page, "Runtime.evaluate", json!({ "expression": BAR, "contextId": world })).await?;
    Ok(())
}

async fn show_in(page: &Page, world: i64, person_holds: bool) -> Result<(), CdpFail> {
    let expression = format!("globalThis.__saffronBar && globalThis.__saffronBar.show({person_holds})");
    cdp::call(page, "Runtime.evaluate", json!({ "expression": expression, "contextId": world })).await?;
    Ok(())
}
