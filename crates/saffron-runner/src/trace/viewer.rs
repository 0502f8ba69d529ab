//! The trace viewer: one self-contained HTML page (no network, no script from elsewhere) that
//! shows one or more traces of a scenario (its attempts): a filmstrip, the steps and their
//! actions, before and after each action, the network, the console, the agent's turns, and at a
//! failure the reason and the page's DOM snapshot.

use super::model::Trace;

/// The page's markup, styles and script; the traces go where [`DATA_MARKER`] is.
const TEMPLATE: &str = include_str!("viewer.html");

/// Replaced by the traces as JSON, inside `<script type="application/json" id="traces">`.
const DATA_MARKER: &str = "/*SAFFRON_TRACES*/";

/// The viewer page for `traces` (attempts in order; the last is shown first).
pub fn viewer_html(traces: &[Trace]) -> String {
    let json = serde_json::to_string(traces).unwrap_or_else(|_| "[]".to_owned());
    TEMPLATE.replacen(DATA_MARKER, &script_safe(&json), 1)
}

/// JSON that cannot end its `<script>` element or open a comment in it: every `<` is written
/// as its JSON escape, which `JSON.parse` reads back as `<`.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_text_of_a_trace_can_close_the_data_script() {
        let safe = script_safe(r#"{"text":"</script><script>alert(1)</script>"}"#);
        assert!(!safe.contains("</script"));
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back["text"], "</script><script>alert(1)</script>");
    }
}
