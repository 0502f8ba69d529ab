//! Failure screenshots never show a substituted secret: every field holding one is blanked for
//! the picture (whatever its type) and put back after, and so is any text that holds one.

use crate::common;

use common::{Scenario, run};
use saffron_demo::DemoConfig;
use serde_json::json;

/// Pixels that may differ between two pictures of the same page: a repaint of one region
/// anti-aliases the rounded corners it cuts through a little differently.
const NOISE: usize = 64;

/// How many pixels of two same-sized PNG screenshots differ.
fn differing_pixels(a: &[u8], b: &[u8]) -> usize {
    let decode = |bytes: &[u8]| {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a PNG");
        let mut pixels = vec![0; reader.output_buffer_size().expect("a size")];
        let info = reader.next_frame(&mut pixels).expect("a frame");
        pixels.truncate(info.buffer_size());
        (pixels, info.color_type.samples())
    };
    let ((a, samples), (b, _)) = (decode(a), decode(b));
    assert_eq!(a.len(), b.len(), "screenshots of one size");
    a.chunks(samples).zip(b.chunks(samples)).filter(|(x, y)| x != y).count()
}

/// Typed into the login form's email field: a text field, which shows what it holds.
const SECRET: &str = "agent.007@example.com";

#[test]
fn a_field_holding_a_secret_is_blank_in_the_screenshot_and_restored_after() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        let email = json!({ "role": "textbox", "name": "Email" });
        s.ok(json!({ "type": "fill", "target": email, "value": SECRET })).await;
        // Focus leaves the field, so no caret blinks in any of the pictures.
        s.ok(json!({ "type": "click", "target": { "role": "heading", "name": "Sign in" } })).await;

        let shown = s.context.screenshot().await.expect("a plain screenshot");
        let hiding = s.context.screenshot_hiding(&[SECRET]).await.expect("a screenshot hiding the secret");
        // The field is put back as it was, for the rest of the scenario.
        s.ok(json!({ "type": "expectValue", "target": email, "value": SECRET })).await;
        let after = s.context.screenshot().await.expect("a plain screenshot");
        assert!(differing_pixels(&after, &shown) < NOISE, "the page is as it was");

        s.ok(json!({ "type": "fill", "target": email, "value": "" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "heading", "name": "Sign in" } })).await;
        let empty = s.context.screenshot().await.expect("a plain screenshot");
        let secret_pixels = differing_pixels(&shown, &empty);
        assert!(secret_pixels > 10 * NOISE, "the secret is visible in a plain screenshot ({secret_pixels} pixels)");
        let left = differing_pixels(&hiding, &empty);
        assert!(left < NOISE, "the hiding screenshot is the page with the field empty ({left} pixels differ)");
        s.close().await;
    });
}

#[test]
fn text_holding_a_secret_is_hidden_and_other_secrets_are_left_alone() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        let shown = s.context.screenshot().await.expect("a plain screenshot");
        // The heading's text holds the "secret": it is not in the picture.
        let hiding = s.context.screenshot_hiding(&["Sign in"]).await.expect("a screenshot hiding the text");
        assert!(differing_pixels(&hiding, &shown) > 10 * NOISE, "the heading is hidden");
        // A secret the page does not show changes nothing.
        let unrelated = s.context.screenshot_hiding(&["not on this page"]).await.expect("a screenshot");
        assert!(differing_pixels(&unrelated, &shown) < NOISE);
        let after = s.context.screenshot().await.expect("a plain screenshot");
        assert!(differing_pixels(&after, &shown) < NOISE, "the page is as it was");
        s.ok(json!({ "type": "expectVisible", "target": { "role": "heading", "name": "Sign in" } })).await;
        s.close().await;
    });
}

#[test]
fn a_secret_typed_into_a_cross_site_frame_is_hidden_too() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/frames" })).await;
        let number = json!({ "role": "textbox", "name": "Card number", "frame": { "css": ["#card"] } });
        let heading = json!({ "role": "heading", "name": "Checkout" });
        s.ok(json!({ "type": "fill", "target": number, "value": "4000 0000 0000 4242" })).await;
        s.ok(json!({ "type": "click", "target": heading })).await;
        let shown = s.context.screenshot().await.expect("a plain screenshot");
        let hiding = s.context.screenshot_hiding(&["4000 0000 0000 4242"]).await.expect("a screenshot hiding it");
        s.ok(json!({ "type": "expectValue", "target": number, "value": "4000 0000 0000 4242" })).await;

        s.ok(json!({ "type": "fill", "target": number, "value": "" })).await;
        s.ok(json!({ "type": "click", "target": heading })).await;
        let empty = s.context.screenshot().await.expect("a plain screenshot");
        assert!(differing_pixels(&shown, &empty) > 10 * NOISE, "the number shows in a plain screenshot");
        let left = differing_pixels(&hiding, &empty);
        assert!(left < NOISE, "the hiding screenshot is the page with the card field empty ({left} pixels differ)");
        s.close().await;
    });
}

/// The vault page with `value` kept: it shows the value in a button, in a paragraph, split
/// over two elements, JSON-escaped and URL-encoded; the plain screenshot and the one hiding
/// every spelling of it.
async fn vault_pictures(browser: &saffron_browser::Browser, value: &str) -> (Vec<u8>, Vec<u8>) {
    let mut s = Scenario::start(browser, DemoConfig::default()).await;
    s.ok(json!({ "type": "goto", "url": "/lab/vault" })).await;
    s.ok(json!({ "type": "fill", "target": { "label": "Token" }, "value": value })).await;
    s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Keep" } })).await;
    s.ok(json!({ "type": "click", "target": { "role": "heading", "name": "Vault" } })).await;
    let masker: saffron_recording::Masker =
        [saffron_recording::Secret { name: "VAULT_TOKEN".into(), value: value.into() }].iter().collect();
    let spellings: Vec<&str> = masker.spellings().collect();
    let shown = s.context.screenshot().await.expect("a plain screenshot");
    let hiding = s.context.screenshot_hiding(&spellings).await.expect("a screenshot hiding the secret");
    s.ok(json!({ "type": "expectText", "target": { "testId": "shown" }, "text": format!("Kept {value}") })).await;
    s.close().await;
    (shown, hiding)
}

/// A page that shows a secret split over two elements, JSON-escaped and URL-encoded hides none
/// of it from the picture: the pictures hiding two different values (of one length, in a
/// monospace font) are the same picture, where the plain ones differ.
#[test]
fn a_secret_split_escaped_or_encoded_is_covered_in_the_screenshot() {
    run(|browser| async move {
        let (shown_a, hiding_a) = vault_pictures(&browser, "Kx\"Vn\\Qm7zz-alpha").await;
        let (shown_b, hiding_b) = vault_pictures(&browser, "Pq'Rs/Tu8yy-omega").await;
        let plain = differing_pixels(&shown_a, &shown_b);
        assert!(plain > 10 * NOISE, "the two values show in plain screenshots ({plain} pixels differ)");
        let left = differing_pixels(&hiding_a, &hiding_b);
        assert!(left < NOISE, "no spelling of either value is in its hiding screenshot ({left} pixels differ)");
    });
}
