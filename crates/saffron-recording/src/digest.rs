//! Digests that bind recordings and proposals to what they were made for.
//!
//! Every digest is SHA-256, written as 64 lowercase hex digits, over a canonical JSON text
//! (object keys sorted, no whitespace), so it does not depend on field order, on serde_json's
//! map flavour or on how a file happens to be pretty-printed.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::action::Action;
use crate::model::{Recording, StepSpec};
use crate::proposal::Proposal;
use crate::tokens::{TokenKind, tokenize};

/// Digest of a scenario's steps as written: `[[kind, text, table, docString], ...]`.
///
/// Examples values play no part (an Outline's rows share one recording), so an edited
/// Examples cell leaves it unchanged; an edited step, table or doc string changes it. This is
/// the digest of a recording that reads no table value through `<table:key>`; see
/// [`steps_digest_reading`] for one that does ([`Recording::digest_for`] picks the right one).
pub fn steps_digest(steps: &[StepSpec]) -> String {
    steps_digest_reading(steps, &[])
}

/// Digest of a scenario's steps for a recording whose step `i` reads the values of the table
/// keys `reads[i]` through `<table:key>` (missing entries read none).
///
/// In a **key/value table** (every row exactly two cells, no key twice: what `<table:key>` can
/// address), the value of a row whose key the step's actions read is left out (its cell
/// becomes `null`): replay takes that value from the scenario as it is now, so editing it
/// needs no new recording. Everything else stays in: the keys, the rows no action reads (their
/// value may be recorded as a literal, and an edit must not go unnoticed), and every table that
/// is not key/value shaped, which digests as it always did.
pub fn steps_digest_reading(steps: &[StepSpec], reads: &[BTreeSet<String>]) -> String {
    let value = Value::Array(steps.iter().enumerate().map(|(i, step)| step_value(step, reads.get(i))).collect());
    sha256_hex(&value)
}

/// The table keys `actions` read through `<table:key>`, in any of their operands.
pub fn table_keys_of(actions: &[Action]) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for operand in actions.iter().flat_map(Action::operands) {
        insert_table_keys(operand.value, &mut keys);
    }
    keys
}

fn insert_table_keys(text: &str, keys: &mut BTreeSet<String>) {
    for token in tokenize(text) {
        if let TokenKind::Table(key) = token.kind {
            keys.insert(key.to_string());
        }
    }
}

/// True when `<table:key>` can address every row of `rows`: two cells each, no key twice.
pub(crate) fn is_key_value_table(rows: &[Vec<String>]) -> bool {
    let mut keys = BTreeSet::new();
    !rows.is_empty() && rows.iter().all(|row| row.len() == 2 && keys.insert(row[0].as_str()))
}

/// Digest of a recording's contract: its steps and their actions.
///
/// Advisory data stays out: the locator tier a target fired at, when it was recorded and
/// against which base URL. A proposal bound to this digest goes stale when someone else
/// changes what the committed recording does, not when its metadata moves.
pub fn contract_digest(recording: &Recording) -> String {
    let steps = recording
        .steps
        .iter()
        .map(|step| {
            let mut actions = serde_json::to_value(&step.actions).unwrap_or(Value::Null);
            strip_tiers(&mut actions);
            let mut value = step_value(&step.spec(), None);
            if let Value::Array(items) = &mut value {
                items.push(actions);
            }
            value
        })
        .collect();
    sha256_hex(&Value::Array(steps))
}

/// Digest of a proposal's executable content: the recording `saffron accept` would write and
/// the feature edits `--with-feature-edit` would apply. The narrative, adaptations, diff and
/// usage are read, never applied, so they are not bound. An unverified proposal binds its proof
/// failure too, so deleting the mark by hand makes it stale rather than acceptable (verified
/// proposals keep the digest they always had).
pub fn content_digest(proposal: &Proposal) -> String {
    let mut value = json!({
        "recording": serde_json::to_value(&proposal.recording).unwrap_or(Value::Null),
        "featureEdits": serde_json::to_value(&proposal.feature_edits).unwrap_or(Value::Null),
    });
    if let Some(failure) = &proposal.unverified {
        value["unverified"] = json!(failure);
    }
    sha256_hex(&value)
}

/// True when `text` has the shape of a digest this module writes.
pub(crate) fn is_digest(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn step_value(step: &StepSpec, reads: Option<&BTreeSet<String>>) -> Value {
    let table = match (&step.table, reads) {
        (Some(rows), Some(keys)) if !keys.is_empty() && is_key_value_table(rows) => Value::Array(
            rows.iter().map(|row| if keys.contains(&row[0]) { json!([row[0], null]) } else { json!(row) }).collect(),
        ),
        (table, _) => json!(table),
    };
    json!([step.kind.as_str(), step.text, table, step.doc_string])
}

fn strip_tiers(actions: &mut Value) {
    let Value::Array(actions) = actions else {
        return;
    };
    for action in actions {
        // A drag's drop target is a target too.
        for field in ["target", "to"] {
            if let Some(target) = action.get_mut(field) {
                strip_target_tiers(target);
            }
        }
    }
}

// A scope's container and a frame are targets too: their tiers are as advisory as the
// element's.
fn strip_target_tiers(target: &mut Value) {
    if let Value::Object(object) = target {
        object.remove("tier");
        for inner in ["within", "frame"] {
            if let Some(inner) = object.get_mut(inner) {
                strip_target_tiers(inner);
            }
        }
    }
}

fn sha256_hex(value: &Value) -> String {
    let mut text = String::new();
    write_canonical(value, &mut text);
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Action;
    use crate::model::{RecordedStep, StepKind};
    use crate::target::{Target, Tier};

    fn recording() -> Recording {
        Recording::new(
            "features/a.feature",
            "A",
            vec![RecordedStep::new(
                StepSpec::new(StepKind::Action, "I save"),
                vec![Action::Click { target: Target::role("button", "Save"), timeout_ms: None }],
            )],
        )
    }

    #[test]
    fn canonical_json_sorts_keys_and_has_no_whitespace() {
        let mut out = String::new();
        write_canonical(&json!({"b": [1, {"z": null, "a": "é\n"}], "a": true}), &mut out);
        assert_eq!(out, r#"{"a":true,"b":[1,{"a":"é\n","z":null}]}"#);
    }

    #[test]
    fn steps_digest_is_hex_sha256_and_sensitive_to_every_part() {
        let base = vec![StepSpec::new(StepKind::Context, "I am here")];
        let digest = steps_digest(&base);
        assert!(is_digest(&digest), "{digest}");
        // Known answer, so the canonical form cannot drift unnoticed.
        assert_eq!(digest, hex::encode(Sha256::digest(br#"[["context","I am here",null,null]]"#)));
        let mut other = base.clone();
        other[0].doc_string = Some(String::new());
        assert_ne!(steps_digest(&other), digest, "empty doc string is not no doc string");
        let mut other = base.clone();
        other[0].kind = StepKind::Outcome;
        assert_ne!(steps_digest(&other), digest);
        assert_ne!(steps_digest(&[]), digest);
    }

    #[test]
    fn read_key_value_cells_become_null_in_the_known_answer() {
        let table = vec![vec!["Email".to_string(), "a@b.c".to_string()], vec!["Password".to_string(), "x".to_string()]];
        let step = StepSpec { table: Some(table), ..StepSpec::new(StepKind::Context, "I sign in") };
        let reads = [BTreeSet::from(["Email".to_string()])];
        assert_eq!(
            steps_digest_reading(std::slice::from_ref(&step), &reads),
            hex::encode(Sha256::digest(br#"[["context","I sign in",[["Email",null],["Password","x"]],null]]"#))
        );
        // A key that is not in the table, or no key at all, leaves today's digest.
        let elsewhere = [BTreeSet::from(["Name".to_string()])];
        assert_eq!(
            steps_digest_reading(std::slice::from_ref(&step), &elsewhere),
            steps_digest(std::slice::from_ref(&step))
        );
        assert_eq!(steps_digest_reading(std::slice::from_ref(&step), &[BTreeSet::new()]), steps_digest(&[step]));
    }

    #[test]
    fn table_keys_are_read_from_every_value_of_the_actions() {
        let actions: Vec<Action> = serde_json::from_value(json!([
            {"type": "fill", "target": {"label": "<table:Email>"}, "value": "<table:Password> and <table:Email>"},
            {"type": "expectText", "target": {"css": ["#x"]}, "text": "<name> {env:USER} a < b"}
        ]))
        .expect("actions");
        assert_eq!(table_keys_of(&actions), BTreeSet::from(["Email".to_string(), "Password".to_string()]));
        assert_eq!(table_keys_of(&[]), BTreeSet::new());
    }

    #[test]
    fn contract_digest_ignores_advisory_fields_only() {
        let base = recording();
        let digest = contract_digest(&base);
        let mut advisory = base.clone();
        advisory.recorded_at = Some("2026-11-01T10:00:00Z".into());
        advisory.base_url = Some("http://localhost:8080".into());
        if let Some(target) = advisory.steps[0].actions[0].target_mut() {
            target.tier = Some(Tier::Css);
        }
        assert_eq!(contract_digest(&advisory), digest);
        let mut changed = base.clone();
        if let Some(target) = changed.steps[0].actions[0].target_mut() {
            target.css.push("#save".into());
        }
        assert_ne!(contract_digest(&changed), digest);
        let mut changed = base;
        changed.steps[0].actions.clear();
        assert_ne!(contract_digest(&changed), digest);
    }

    #[test]
    fn a_frame_is_contract_and_its_tier_is_advisory() {
        let mut framed = recording();
        if let Some(target) = framed.steps[0].actions[0].target_mut() {
            target.frame =
                Some(Box::new(Target { css: vec!["#card".into()], tier: Some(Tier::Css), ..Target::default() }));
        }
        let digest = contract_digest(&framed);
        assert_ne!(digest, contract_digest(&recording()));
        let mut retiered = framed.clone();
        if let Some(frame) = retiered.steps[0].actions[0].target_mut().and_then(|target| target.frame.as_mut()) {
            frame.tier = None;
        }
        assert_eq!(contract_digest(&retiered), digest);
        let mut elsewhere = framed.clone();
        if let Some(frame) = elsewhere.steps[0].actions[0].target_mut().and_then(|target| target.frame.as_mut()) {
            frame.css = vec!["#gift".into()];
        }
        assert_ne!(contract_digest(&elsewhere), digest, "another frame is another contract");
    }

    #[test]
    fn a_drop_target_is_contract_and_its_tier_is_advisory() {
        let mut dragged = recording();
        let to = Target { css: vec!["#done".into()], tier: Some(Tier::Css), ..Target::default() };
        let drag = |to: Target| Action::Drag { target: Target::role("listitem", "Card"), to, timeout_ms: None };
        dragged.steps[0].actions = vec![drag(to.clone())];
        let digest = contract_digest(&dragged);
        let mut retiered = dragged.clone();
        retiered.steps[0].actions = vec![drag(Target { tier: None, ..to.clone() })];
        assert_eq!(contract_digest(&retiered), digest);
        let mut elsewhere = dragged.clone();
        elsewhere.steps[0].actions = vec![drag(Target { css: vec!["#archive".into()], ..to })];
        assert_ne!(contract_digest(&elsewhere), digest, "another drop target is another contract");
    }

    #[test]
    fn a_scope_is_contract_and_its_tier_is_advisory() {
        let mut scoped = recording();
        if let Some(target) = scoped.steps[0].actions[0].target_mut() {
            target.within = Some(Box::new(crate::target::Scope {
                container: Target { role: Some("row".into()), tier: Some(Tier::Role), ..Target::default() },
                has_text: Some("Order 1002".into()),
                has_text_regex: None,
            }));
        }
        let digest = contract_digest(&scoped);
        assert_ne!(digest, contract_digest(&recording()));
        let mut retiered = scoped.clone();
        if let Some(scope) = retiered.steps[0].actions[0].target_mut().and_then(|target| target.within.as_mut()) {
            scope.container.tier = Some(Tier::Css);
        }
        assert_eq!(contract_digest(&retiered), digest);
        let mut other_row = scoped;
        if let Some(scope) = other_row.steps[0].actions[0].target_mut().and_then(|target| target.within.as_mut()) {
            scope.has_text = Some("Order 1003".into());
        }
        assert_ne!(contract_digest(&other_row), digest);
    }
}
