//! Target resolution: the tier ladder, exactly one match per tier.
//!
//! - role: Chromium's own accessibility tree (`Accessibility.queryAXTree` by role and exact
//!   accessible name, or by role then filtered by `nameRegex`), so names are computed the way
//!   the browser computes them for assistive technology, and hidden elements (not in the tree)
//!   never match, as with Playwright's `getByRole`;
//! - label, placeholder, testId, text, css: one `Runtime.evaluate` of [`js::FIND`] per tier.
//!
//! A tier is tried only if the target has it. One match fires the tier; none moves on; several
//! are remembered as "ambiguous" and move on too. The report lists what every tier found, for
//! the failure message.

use std::collections::HashSet;

use chromiumoxide::Page;
use regex::Regex;
use saffron_recording::{Target, Tier};
use serde_json::{Value, json};

use crate::cdp::{self, CdpFail};
use crate::js;

/// The element a target resolved to.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// `Runtime.RemoteObjectId` of the element.
    pub object_id: String,
    /// The tier that found it.
    pub tier: Tier,
}

/// What each tier found, in ladder order, e.g. `role button "Save": 0 matches`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Report {
    pub lines: Vec<String>,
    pub ambiguous: bool,
}

impl Report {
    pub(crate) fn summary(&self) -> String {
        self.lines.join("; ")
    }
}

/// The outcome of one resolution attempt.
#[derive(Debug, Clone)]
pub(crate) enum Located {
    One(Found),
    /// No tier had exactly one match (`report.ambiguous` when some had several).
    None(Report),
}

/// How one tier's query reads in reports.
fn describe_tier(target: &Target, tier: Tier, css_index: usize) -> String {
    let quoted = |value: &Option<String>| format!("{:?}", value.as_deref().unwrap_or_default());
    match tier {
        Tier::Role => {
            let role = target.role.as_deref().unwrap_or_default();
            match (&target.name, &target.name_regex) {
                (Some(name), _) => format!("role {role} {name:?}"),
                (None, Some(pattern)) => format!("role {role} /{pattern}/"),
                (None, None) => format!("role {role}"),
            }
        }
        Tier::Label => format!("label {}", quoted(&target.label)),
        Tier::Placeholder => format!("placeholder {}", quoted(&target.placeholder)),
        Tier::TestId => format!("testId {}", quoted(&target.test_id)),
        Tier::Text => format!("text {}", quoted(&target.text)),
        Tier::Css => format!("css {:?}", target.css.get(css_index).map(String::as_str).unwrap_or_default()),
    }
}

fn matches_phrase(count: usize) -> String {
    match count {
        0 => "0 matches".to_owned(),
        1 => "1 match".to_owned(),
        n => format!("{n} matches (ambiguous)"),
    }
}

/// One tier's answer: the element when unique, else how many matched (or why none could).
enum TierResult {
    One(String),
    Count(usize),
    Error(String),
}

/// Resolves the target against the page's current document.
pub(crate) async fn locate(page: &Page, target: &Target, group: &str) -> Result<Located, CdpFail> {
    let mut report = Report::default();
    for tier in target.tiers() {
        let queries: Vec<(usize, TierResult)> = if tier == Tier::Css {
            let mut results = Vec::new();
            for (index, selector) in target.css.iter().enumerate() {
                let result = find(page, "css", selector, group).await?;
                let unique = matches!(result, TierResult::One(_));
                results.push((index, result));
                if unique {
                    break;
                }
            }
            results
        } else {
            vec![(0, query_tier(page, target, tier, group).await?)]
        };
        for (index, result) in queries {
            let name = describe_tier(target, tier, index);
            match result {
                TierResult::One(object_id) => return Ok(Located::One(Found { object_id, tier })),
                TierResult::Count(count) => {
                    report.ambiguous |= count > 1;
                    report.lines.push(format!("{name}: {}", matches_phrase(count)));
                }
                TierResult::Error(error) => report.lines.push(format!("{name}: {error}")),
            }
        }
    }
    if report.lines.is_empty() {
        report.lines.push("the target has no locator".to_owned());
    }
    Ok(Located::None(report))
}

/// How many elements match the target's sturdiest tier (its first CSS selector for a CSS-only
/// target), with that tier: what `expectCount` counts.
pub(crate) async fn count(page: &Page, target: &Target, group: &str) -> Result<(Option<Tier>, usize), CdpFail> {
    let Some(tier) = target.tiers().first().copied() else { return Ok((None, 0)) };
    let result = match tier {
        Tier::Role => role_matches(page, target, group).await?.map(|ids| ids.len()),
        Tier::Css => {
            count_of(find(page, "css", target.css.first().map(String::as_str).unwrap_or_default(), group).await?)
        }
        other => count_of(query_tier(page, target, other, group).await?),
    };
    result.map(|count| (Some(tier), count)).map_err(CdpFail::Protocol)
}

fn count_of(result: TierResult) -> Result<usize, String> {
    match result {
        TierResult::One(_) => Ok(1),
        TierResult::Count(count) => Ok(count),
        TierResult::Error(error) => Err(error),
    }
}

async fn query_tier(page: &Page, target: &Target, tier: Tier, group: &str) -> Result<TierResult, CdpFail> {
    let value = |field: &Option<String>| field.clone().unwrap_or_default();
    match tier {
        Tier::Role => match role_matches(page, target, group).await? {
            Ok(ids) if ids.len() == 1 => {
                let resolved =
                    cdp::call(page, "DOM.resolveNode", json!({ "backendNodeId": ids[0], "objectGroup": group }))
                        .await?;
                match resolved.pointer("/object/objectId").and_then(Value::as_str) {
                    Some(object_id) => Ok(TierResult::One(object_id.to_owned())),
                    None => Ok(TierResult::Error("the accessibility node has no element".to_owned())),
                }
            }
            Ok(ids) => Ok(TierResult::Count(ids.len())),
            Err(error) => Ok(TierResult::Error(error)),
        },
        Tier::Label => find(page, "label", &value(&target.label), group).await,
        Tier::Placeholder => find(page, "placeholder", &value(&target.placeholder), group).await,
        Tier::TestId => find(page, "testId", &value(&target.test_id), group).await,
        Tier::Text => find(page, "text", &value(&target.text), group).await,
        Tier::Css => find(page, "css", target.css.first().map(String::as_str).unwrap_or_default(), group).await,
    }
}

/// Backend node ids of the elements with the target's role and name, or why none can be found.
async fn role_matches(page: &Page, target: &Target, group: &str) -> Result<Result<Vec<i64>, String>, CdpFail> {
    let Some(role) = target.role.as_deref() else { return Ok(Ok(Vec::new())) };
    let pattern = match target.name_regex.as_deref().map(Regex::new) {
        Some(Ok(pattern)) => Some(pattern),
        Some(Err(error)) => return Ok(Err(format!("invalid nameRegex: {error}"))),
        None => None,
    };
    let document = cdp::evaluate(page, "document", group, false).await?;
    let Some(document_id) = document.object_id else {
        return Ok(Err("the page has no document".to_owned()));
    };
    let mut params = json!({ "objectId": document_id, "role": role });
    if let Some(name) = target.name.as_deref() {
        params["accessibleName"] = json!(name);
    }
    let answer = cdp::call(page, "Accessibility.queryAXTree", params).await?;
    let nodes = answer.get("nodes").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut seen = HashSet::new();
    let mut ids = Vec::new();
    for node in nodes {
        if node.get("ignored").and_then(Value::as_bool).unwrap_or(false) {
            continue;
        }
        // Text runs carry the name of their parent; they are not elements one can act on.
        let node_role = node.pointer("/role/value").and_then(Value::as_str).unwrap_or_default();
        if matches!(node_role, "StaticText" | "InlineTextBox") {
            continue;
        }
        if let Some(pattern) = &pattern {
            let name = node.pointer("/name/value").and_then(Value::as_str).unwrap_or_default();
            if !pattern.is_match(name) {
                continue;
            }
        }
        if let Some(id) = node.get("backendDOMNodeId").and_then(Value::as_i64)
            && seen.insert(id)
        {
            ids.push(id);
        }
    }
    Ok(Ok(ids))
}

/// Runs [`js::FIND`] for one non-role tier.
async fn find(page: &Page, tier: &str, value: &str, group: &str) -> Result<TierResult, CdpFail> {
    let expression = format!("({})({}, {})", js::FIND, json!(tier), json!(value));
    let remote = cdp::evaluate(page, &expression, group, false).await?;
    if let Some(object_id) = remote.node() {
        return Ok(TierResult::One(object_id.to_owned()));
    }
    Ok(match remote.value {
        Some(Value::Number(count)) => TierResult::Count(count.as_u64().unwrap_or(0) as usize),
        Some(Value::String(error)) => TierResult::Error(error),
        other => TierResult::Error(format!("unexpected answer {other:?}")),
    })
}
