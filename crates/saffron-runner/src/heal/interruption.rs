//! A repair that met an interruption becomes a handler, never a flow change.
//!
//! The agent reports `change: page-added` and its repair only inserts actions before the one
//! that failed, the rest of the scenario as recorded. That is an interruption when the page
//! shows it was one, in a way the scenario's happy path never does:
//!
//! - the failed action's element was there but covered ("intercepts pointer events"), and the
//!   inserted actions act on something the recording never touches: the first such target is
//!   the detector, and the run carries on where the handler leaves the page;
//! - or the page had been sent back to a page the recording goes to, at another address
//!   (`/login?expired=1` where the recording signs in at `/login`): that address is the
//!   detector, and the run returns to the page it was on.
//!
//! A page inserted into the flow for good (a confirmation step) is neither: its element was
//! missing, not covered, at an address of its own, so it stays a flow change for review.

use saffron_browser::FailureKind;
use saffron_recording::{Action, Detector, Handler, Recording, Resume, Target};

use crate::record::tools::ChangeKind;

/// What the repair's session saw and did, for telling an interruption apart.
pub(crate) struct Met<'a> {
    pub change: Option<ChangeKind>,
    /// The recording the replay ran, and the repair of it.
    pub replayed: &'a Recording,
    pub repaired: &'a Recording,
    /// The committed recording: the happy path, whose targets a detector may not be.
    pub committed: &'a Recording,
    pub failed_step: usize,
    /// Actions of the failed step performed before the failed one.
    pub performed: usize,
    pub failure: &'a FailureKind,
    /// The page's address when the action failed.
    pub url: &'a str,
    pub base_url: &'a str,
}

/// The handler the repair amounts to, if it met an interruption.
pub(crate) fn as_handler(met: &Met<'_>) -> Option<Handler> {
    if met.change != Some(ChangeKind::PageAdded) {
        return None;
    }
    let mut inserted = inserted_actions(met)?;
    let relative = saffron_browser::relativize_url(met.base_url, met.url);
    if crate::interrupt::sent_back(&met.committed.steps, &relative) {
        // The agent signed in again, then redid what the step had done before it was sent
        // back: that part is the scenario's, and taking the step up again redoes it.
        let done = &met.replayed.steps[met.failed_step].actions[..met.performed];
        if let Some(redone) = inserted.iter().position(|action| done.iter().any(|was| same_action(was, action))) {
            inserted.truncate(redone);
        }
        if inserted.is_empty() {
            return None;
        }
        let detect = Detector {
            target: None,
            url_regex: Some(format!("^{}$", saffron_index::repair_rules::regex_escape(&relative))),
        };
        let mut handler = Handler::new(format!("Sent back to {relative}"), detect, inserted);
        handler.resume = Resume::ReturnToPage;
        return Some(handler);
    }
    let FailureKind::NotActionable { reason } = met.failure else { return None };
    if !reason.contains("intercepts pointer events") {
        return None;
    }
    let happy_path: Vec<&Target> =
        met.committed.steps.iter().flat_map(|step| &step.actions).flat_map(Action::targets).collect();
    let detector = inserted
        .iter()
        .flat_map(Action::targets)
        .find(|target| !happy_path.iter().any(|known| same_element(known, target)))?
        .clone();
    let name = covering_name(reason).unwrap_or_else(|| detector.to_string());
    let detector = Target { tier: None, ..detector };
    Some(Handler::new(name, Detector { target: Some(detector), url_regex: None }, inserted))
}

/// The actions the repair put in front of the failed one, when that is all it changed.
fn inserted_actions(met: &Met<'_>) -> Option<Vec<Action>> {
    let (replayed, repaired) = (&met.replayed.steps, &met.repaired.steps);
    if replayed.len() != repaired.len() {
        return None;
    }
    // The steps before are as recorded; those after, done again by the agent, the same
    // actions found its own way.
    for (index, (before, after)) in replayed.iter().zip(repaired).enumerate() {
        let kept = match index.cmp(&met.failed_step) {
            std::cmp::Ordering::Less => before.actions == after.actions,
            std::cmp::Ordering::Equal => true,
            std::cmp::Ordering::Greater => {
                before.actions.len() == after.actions.len()
                    && before.actions.iter().zip(&after.actions).all(|(was, now)| was.type_name() == now.type_name())
            }
        };
        if !kept {
            return None;
        }
    }
    let before = &replayed.get(met.failed_step)?.actions;
    let after = &repaired.get(met.failed_step)?.actions;
    let added = after.len().checked_sub(before.len()).filter(|added| *added > 0)?;
    let performed = met.performed.min(before.len());
    if after[..performed] != before[..performed] {
        return None;
    }
    // The failed action and those after it are the same actions, found as the agent found
    // them (its own locators).
    let tail_kept = after[performed + added..]
        .iter()
        .zip(&before[performed..])
        .all(|(now, was)| now.type_name() == was.type_name());
    tail_kept.then(|| after[performed..performed + added].to_vec())
}

/// Whether `repaired` does what `committed` does, action for action, on the same elements with
/// the same values (found by other signals, maybe): a repair that changes nothing.
pub(crate) fn changes_nothing(committed: &Recording, repaired: &Recording) -> bool {
    committed.steps.len() == repaired.steps.len()
        && committed.steps.iter().zip(&repaired.steps).all(|(was, now)| {
            was.actions.len() == now.actions.len()
                && was.actions.iter().zip(&now.actions).all(|(was, now)| same_action(was, now) && same_values(was, now))
        })
}

/// The two actions, their targets left out, are equal.
fn same_values(a: &Action, b: &Action) -> bool {
    let mut a = a.clone();
    let mut b = b.clone();
    for action in [&mut a, &mut b] {
        if let Some(target) = action.target_mut() {
            *target = Target::default();
        }
        if let Action::Drag { to, .. } = action {
            *to = Target::default();
        }
    }
    a == b
}

/// The same kind of action on the same element.
fn same_action(a: &Action, b: &Action) -> bool {
    a.type_name() == b.type_name()
        && a.targets().len() == b.targets().len()
        && a.targets().iter().zip(b.targets()).all(|(a, b)| same_element(a, b))
}

/// Two targets that name the same element by any semantic signal both hold.
fn same_element(a: &Target, b: &Target) -> bool {
    let both = |x: &Option<String>, y: &Option<String>| x.is_some() && x == y;
    let same_place = a.within == b.within && a.frame == b.frame;
    a == b
        || (same_place && both(&a.role, &b.role) && a.name == b.name && a.name_regex == b.name_regex)
        || (both(&a.role, &b.role) && both(&a.name, &b.name))
        || both(&a.label, &b.label)
        || both(&a.placeholder, &b.placeholder)
        || both(&a.test_id, &b.test_id)
        || both(&a.text, &b.text)
        || a.css.iter().any(|css| b.css.contains(css))
}

/// The covering element's accessible name, from the reason Chromium's hit test gave
/// (`<div id="consent" role="dialog" aria-label="Cookie consent"> intercepts pointer events`).
fn covering_name(reason: &str) -> Option<String> {
    let (_, rest) = reason.split_once("aria-label=\"")?;
    let (name, _) = rest.split_once('"')?;
    (!name.trim().is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_covering_dialog_names_the_handler() {
        assert_eq!(
            covering_name(r#"<div id="consent" role="dialog" aria-label="Cookie consent"> intercepts pointer events"#),
            Some("Cookie consent".into())
        );
        assert_eq!(covering_name("<div> intercepts pointer events"), None);
    }
}
