//! Every switch changes only what it says, the control plane, and the request log.

use crate::support;

use std::time::{Duration, Instant};

use saffron_demo::{DEMO_EMAIL, Defect, DemoConfig, Drift, Fault, RequestLog, STATUS_CLIENT_CLOSED};
use serde_json::json;
use support::{Client, config_with, poll_until, session_from, start, tag_with, text_of};

const PAGES: [&str; 5] = ["/login", "/orders", "/orders/new", "/orders/1001", "/invoices/1001"];

fn all_drift() -> DemoConfig {
    config_with(|c| c.drift = Drift::ALL.iter().copied().collect())
}

fn entry(method: &str, path: &str, status: u16) -> RequestLog {
    RequestLog { method: method.to_owned(), path: path.to_owned(), status }
}

// ---- drift -------------------------------------------------------------------------------

#[tokio::test]
async fn renamed_label_changes_the_label_texts_only() {
    let server = start(config_with(|c| {
        c.drift.insert(Drift::RenamedLabel);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    let login = client.get("/login").await.body;
    assert!(login.contains(r#"<label for="email">E-mail address</label>"#));
    assert!(!login.contains(">Email<"));
    // What a fallback would find it by is unchanged.
    assert!(tag_with(&login, r#"id="email""#).contains(r#"data-testid="email""#));
    assert!(login.contains(r#"<label for="password">Password</label>"#));

    let form = client.get("/orders/new").await.body;
    assert!(form.contains(r#"<label for="customer">Customer name</label>"#));
    assert!(!form.contains(">Customer<"));
    assert!(tag_with(&form, r#"id="customer""#).contains(r#"data-testid="customer""#));
    assert!(form.contains(r#"<label for="quantity">Quantity</label>"#));
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn removed_test_id_strips_every_test_id_and_nothing_else() {
    let normal = start(DemoConfig::default()).await;
    let drifted = start(config_with(|c| {
        c.drift.insert(Drift::RemovedTestId);
    }))
    .await;
    let (a, b) = (Client::signed_in(&normal).await, Client::signed_in(&drifted).await);
    for page in PAGES {
        let before = a.get(page).await.body;
        let after = b.get(page).await.body;
        assert!(before.contains("data-testid=\""), "{page} has test ids normally");
        assert!(!after.contains("data-testid"), "{page} still has a test id");
        // Nothing else moved: removing the attributes from the normal page gives the drifted one.
        let mut stripped = before.clone();
        while let Some(at) = stripped.find(" data-testid=\"") {
            let end = at + 14 + stripped[at + 14..].find('"').expect("attribute closes");
            stripped.replace_range(at..=end, "");
        }
        assert_eq!(stripped, after, "{page}");
    }
    let login = b.get("/login").await.body;
    assert_eq!(
        tag_with(&login, r#"id="email""#),
        r#"<input id="email" name="email" type="email" autocomplete="username">"#
    );
    normal.shutdown().await.expect("clean shutdown");
    drifted.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn moved_element_puts_search_and_new_order_in_a_sidebar_before_the_table() {
    let server = start(config_with(|c| {
        c.drift.insert(Drift::MovedElement);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    let html = client.get("/orders").await.body;
    let aside_start = html.find(r#"<aside class="sidebar" aria-label="Sidebar">"#).expect("sidebar");
    let aside_end = html.find("</aside>").expect("sidebar ends");
    let table = html.find("<table").expect("table");
    assert!(aside_start < aside_end && aside_end < table, "sidebar comes before the table");
    let aside = &html[aside_start..aside_end];
    assert!(
        aside
            .contains(r#"<input id="search" name="q" type="search" placeholder="Customer name" data-testid="search">"#)
    );
    // The compact sidebar search keeps no visible label: its placeholder names it.
    assert!(!html.contains(r#"<label for="search">"#));
    assert!(aside.contains(r#"data-testid="search-button">Search</button>"#));
    assert!(aside.contains(r#"<a href="/orders/new" class="btn btn-link" data-testid="new-order">New order</a>"#));
    // Each exists once: moved, not copied.
    assert_eq!(html.matches(r#"<input id="search""#).count(), 1);
    assert_eq!(html.matches(r#"data-testid="new-order""#).count(), 1);
    // The rest of the page is where it was.
    assert!(html.contains(r#"<a href="/invoices/1001" target="_blank" rel="noopener">Open invoice of #1001</a>"#));
    assert_eq!(text_of(&html, r#"data-testid="result-count""#), "4 orders");

    let normal = start(DemoConfig::default()).await;
    let plain = Client::signed_in(&normal).await.get("/orders").await.body;
    assert!(!plain.contains("<aside"));
    assert!(plain.find(r#"data-testid="new-order""#) > plain.find("</table>"), "normally New order is below the table");
    server.shutdown().await.expect("clean shutdown");
    normal.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn restyled_button_changes_classes_and_wraps_the_primary_buttons() {
    let server = start(config_with(|c| {
        c.drift.insert(Drift::RestyledButton);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    let login = client.get("/login").await.body;
    assert!(login.contains(
        r#"<div class="actions"><button type="submit" data-testid="sign-in" class="button button--cta">Sign in</button></div>"#
    ));
    let form = client.get("/orders/new").await.body;
    assert!(form.contains(
        r#"<div class="actions"><button type="submit" data-testid="save-order" class="button button--cta">Save order</button></div>"#
    ));
    for html in [&login, &form] {
        assert!(!html.contains(r#"class="btn btn-primary""#));
    }
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn relocated_save_renames_retags_and_moves_the_save_button_to_the_top_of_the_form() {
    let normal = start(DemoConfig::default()).await;
    let drifted = start(config_with(|c| {
        c.drift.insert(Drift::RelocatedSave);
    }))
    .await;
    let before = Client::signed_in(&normal).await.get("/orders/new").await.body;
    let after = Client::signed_in(&drifted).await.get("/orders/new").await.body;
    let save = r#"<button type="submit" data-testid="save-order" class="btn btn-primary">Save order</button>"#;
    let toolbar =
        r#"<div class="toolbar"><button data-testid="place-order" class="btn btn-primary">Place order</button></div>"#;
    assert!(before.contains(save));
    let form = after.find(r#"<form id="order-form""#).expect("the form");
    let moved = after.find(toolbar).expect("the toolbar");
    let first_field = after.find(r#"<input id="customer""#).expect("the customer field");
    assert!(form < moved && moved < first_field, "the toolbar opens the form");
    // Every signal the recordings hold for it misses: role and name, test id, and
    // `form button[type=submit]` (the only button has no `type`, so it submits by default).
    assert!(!after.contains("Save order") && !after.contains("save-order"));
    assert!(!after.contains(r#"type="submit""#));
    assert_eq!(after.matches("<button").count(), 1);
    // Nothing else changed.
    assert_eq!(after.replace(toolbar, ""), before.replace(save, ""));

    // With restyled-button too, the moved button takes the new classes (and no wrapper).
    drifted.set_config(config_with(|c| {
        c.drift.extend([Drift::RelocatedSave, Drift::RestyledButton]);
    }));
    let both = Client::signed_in(&drifted).await.get("/orders/new").await.body;
    assert!(both.contains(
        r#"<div class="toolbar"><button data-testid="place-order" class="button button--cta">Place order</button></div>"#
    ));
    assert!(!both.contains(r#"<div class="actions">"#));
    normal.shutdown().await.expect("clean shutdown");
    drifted.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn confirm_step_puts_a_confirmation_page_between_the_orders_list_and_an_order() {
    let server = start(config_with(|c| {
        c.drift.insert(Drift::ConfirmStep);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    let list = client.get("/orders").await.body;
    assert!(list.contains(r#"<a href="/orders/1001/confirm">#1001</a>"#));
    assert!(!list.contains(r#"href="/orders/1001""#));
    // Rows re-rendered by a search link the same way.
    assert!(list.contains(r#"const ORDER_LINK_SUFFIX = "/confirm";"#));
    let confirm = client.get("/orders/1001/confirm").await;
    assert_eq!(confirm.status, 200);
    assert!(confirm.body.contains("<h1>Open order #1001?</h1>"));
    assert!(
        confirm
            .body
            .contains(r#"<button type="button" class="btn" id="continue" data-href="/orders/1001">Continue</button>"#)
    );
    assert!(!confirm.body.contains("<h1>Order #1001</h1>"));
    // The order page itself is unchanged and still reachable directly.
    let order = client.get("/orders/1001").await;
    assert_eq!(order.status, 200);
    assert!(order.body.contains("<h1>Order #1001</h1>"));
    assert_eq!(client.get("/orders/9999/confirm").await.status, 404);

    // Without the drift there is no such page, and the links lead straight to the order.
    server.set_config(DemoConfig::default());
    let list = client.get("/orders").await.body;
    assert!(list.contains(r#"<a href="/orders/1001">#1001</a>"#));
    assert!(list.contains(r#"const ORDER_LINK_SUFFIX = "";"#));
    assert_eq!(client.get("/orders/1001/confirm").await.status, 404);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn all_drift_at_once_still_renders_every_page() {
    let server = start(all_drift()).await;
    let client = Client::signed_in(&server).await;
    for page in PAGES {
        let res = client.get(page).await;
        assert_eq!(res.status, 200, "{page}");
        assert!(!res.body.contains("{{"), "{page}");
        assert!(!res.body.contains("data-testid"), "{page}");
    }
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn switches_flip_at_runtime_under_a_signed_in_client() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    assert!(client.get("/login").await.body.contains(">Email</label>"));
    server.set_config(config_with(|c| {
        c.drift.insert(Drift::RenamedLabel);
    }));
    assert!(client.get("/login").await.body.contains(">E-mail address</label>"));
    // The session survived the switch.
    assert_eq!(client.get("/orders").await.status, 200);
    server.set_config(DemoConfig::default());
    assert!(client.get("/login").await.body.contains(">Email</label>"));
    server.shutdown().await.expect("clean shutdown");
}

// ---- faults ------------------------------------------------------------------------------

#[tokio::test]
async fn server_error_fails_order_saves_but_not_reads() {
    let server = start(config_with(|c| {
        c.faults.insert(Fault::ServerError);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    let res = client.post("/api/orders", &json!({ "customer": "Ada", "quantity": 1, "product": "Tea" })).await;
    assert_eq!(res.status, 500);
    assert_eq!(res.json(), json!({ "error": "internal error" }));
    assert_eq!(client.get("/api/orders").await.status, 200);
    assert_eq!(client.get("/api/orders").await.json()["count"], 4, "nothing stored");
    assert_eq!(client.get("/orders").await.status, 200);
    let form = client.get("/orders/new").await;
    assert_eq!(form.status, 200);
    assert!(form.body.contains(r#"show(saveError, "Could not save the order" + detail)"#));
    assert!(tag_with(&form.body, r#"id="save-error""#).contains(r#"role="alert""#));
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn latency_delays_api_responses_only() {
    let server = start(config_with(|c| {
        c.faults.insert(Fault::Latency);
        c.latency_ms = 300;
    }))
    .await;
    let client = Client::signed_in(&server).await;
    let started = Instant::now();
    let res = client.get("/api/orders").await;
    assert_eq!(res.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(300), "took {:?}", started.elapsed());

    // With a delay far beyond the client's patience, pages still answer at once.
    server.set_config(config_with(|c| {
        c.faults.insert(Fault::Latency);
        c.latency_ms = 600_000;
    }));
    let page = client.send_with_timeout("GET", "/orders", None, Duration::from_secs(10)).await;
    assert_eq!(page.map(|r| r.status).ok(), Some(200));
    let login = client.send_with_timeout("GET", "/login", None, Duration::from_secs(10)).await;
    assert_eq!(login.map(|r| r.status).ok(), Some(200));
    // Shutdown cuts the sleeps short instead of waiting ten minutes.
    let slow = client.clone();
    let pending =
        tokio::spawn(async move { slow.send_with_timeout("GET", "/api/orders", None, Duration::from_secs(30)).await });
    poll_until(Duration::from_secs(10), async || {
        server.requests().iter().any(|r| r.path == "/api/orders" && r.status == 0).then_some(())
    })
    .await;
    let stopping = Instant::now();
    server.shutdown().await.expect("clean shutdown");
    assert!(stopping.elapsed() < Duration::from_secs(10), "shutdown took {:?}", stopping.elapsed());
    let _ = pending.await;
}

#[tokio::test]
async fn a_slow_post_the_client_gave_up_on_is_logged_and_still_took_effect() {
    let server = start(DemoConfig::default()).await;
    // Signing in is an API call too, so the fault goes on only after it.
    let client = Client::signed_in(&server).await;
    server.set_config(config_with(|c| {
        c.faults.insert(Fault::Latency);
        c.latency_ms = 600_000;
    }));
    let body = json!({ "customer": "Impatient", "quantity": 1, "product": "Tea" }).to_string();
    let gave_up = client.send_with_timeout("POST", "/api/orders", Some(&body), Duration::from_millis(300)).await;
    assert!(gave_up.is_err(), "the client should have timed out");
    // The server accepted it: only the answer was slow. This is why replay must not click again.
    let logged = poll_until(Duration::from_secs(10), async || {
        server.requests().into_iter().find(|r| r.method == "POST" && r.path == "/api/orders" && r.status != 0)
    })
    .await;
    assert_eq!(logged.status, STATUS_CLIENT_CLOSED);
    server.set_config(DemoConfig::default());
    let listed = client.get("/api/orders?q=impatient").await.json();
    assert_eq!(listed["count"], 1);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn interstitial_covers_signed_in_pages_until_accepted() {
    let server = start(config_with(|c| {
        c.faults.insert(Fault::Interstitial);
    }))
    .await;
    let dialog = r#"<div class="consent" id="consent" role="dialog" aria-label="Cookie consent">"#;
    let anonymous = Client::new(&server);
    assert!(!anonymous.get("/login").await.body.contains("Cookie consent"));

    let client = Client::signed_in(&server).await;
    for page in ["/orders", "/orders/new", "/orders/1001", "/invoices/1001"] {
        let html = client.get(page).await.body;
        assert!(html.contains(dialog), "{page}");
        assert!(html.contains(r#"id="accept-cookies">Accept cookies</button>"#), "{page}");
        // It is a full-page fixed layer above everything, so it takes the clicks.
        assert!(html.contains(".consent { position: fixed; inset: 0; z-index: 1000;"), "{page}");
    }
    let accepted = client.send("POST", "/api/consent", None).await;
    assert_eq!(accepted.status, 204);
    for page in ["/orders", "/orders/new"] {
        assert!(!client.get(page).await.body.contains("Cookie consent"), "{page}");
    }
    // Consent is per session: a new sign-in sees it again.
    let other = Client::signed_in(&server).await;
    assert!(other.get("/orders").await.body.contains(dialog));
    // Everything else on the page is unchanged.
    let plain = client.get("/orders").await.body;
    let covered = other.get("/orders").await.body;
    let start = covered.find(dialog).expect("dialog");
    let block_end = "</div>\n</div>\n";
    let end = start + covered[start..].find(block_end).expect("dialog ends") + block_end.len();
    assert_eq!(format!("{}{}", &covered[..start], &covered[end..]), plain);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn session_expiry_serves_one_page_then_sends_back_to_sign_in() {
    let server = start(config_with(|c| {
        c.faults.insert(Fault::SessionExpiry);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    assert_eq!(client.get("/orders").await.status, 200);
    let expired = client.get("/orders").await;
    assert_eq!(expired.status, 302);
    assert_eq!(expired.header("location"), Some("/login?expired=1"));
    let cleared = expired.header("set-cookie").expect("cookie cleared");
    assert!(cleared.starts_with("session=;") && cleared.contains("Max-Age=0"), "{cleared}");
    // The session is gone for good, even for the API.
    assert_eq!(client.get("/api/orders").await.status, 401);

    // After a page load, the page's next API call is refused as expired.
    let second = Client::signed_in(&server).await;
    assert_eq!(second.get("/orders").await.status, 200);
    let api = second.send("DELETE", "/api/orders/1001", None).await;
    assert_eq!(api.status, 401);
    assert_eq!(api.error(), "session expired");
    assert_eq!(Client::signed_in(&server).await.get("/api/orders").await.json()["count"], 4, "delete did not run");

    let login = client.get("/login?expired=1").await.body;
    assert!(login.contains(r#"<p role="alert" id="login-error" class="error">Your session expired</p>"#));
    assert!(!client.get("/login").await.body.contains("Your session expired"));
    // The pages' scripts send a refused call to the same place.
    assert!(client.get("/login").await.body.contains(r#"location.assign("/login?expired=1")"#));

    // The expiry marks the browser; its next sign-in gets a session that lasts, as a person who
    // signs in again carries on.
    let marks: Vec<&str> = expired.headers_named("set-cookie");
    assert!(marks.iter().any(|cookie| cookie.starts_with("expired_before=1")), "{marks:?}");
    let mut returning = Client::new(&server);
    // The client sends `session=<cookie>`: an empty session and the mark.
    returning.cookie = Some("; expired_before=1".into());
    let body = serde_json::json!({ "email": DEMO_EMAIL, "password": server.config().password }).to_string();
    let signed = returning.send("POST", "/api/session", Some(&body)).await;
    let token = session_from(&signed).expect("a session");
    returning.cookie = Some(format!("{token}; expired_before=1"));
    for _ in 0..3 {
        assert_eq!(returning.get("/orders").await.status, 200);
    }
    server.shutdown().await.expect("clean shutdown");
}

// ---- defects -----------------------------------------------------------------------------

#[tokio::test]
async fn wrong_total_overcharges_new_orders_by_one_euro_everywhere() {
    let server = start(config_with(|c| {
        c.defects.insert(Defect::WrongTotal);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    let res = client.post("/api/orders", &json!({ "customer": "Ada", "quantity": 3, "product": "Tea" })).await;
    assert_eq!(res.status, 201);
    assert_eq!(res.json()["total"], "€14.50", "3 × €4.50 + €1.00");
    assert_eq!(client.get("/api/orders/1005").await.json()["total_cents"], 1450);
    assert!(client.get("/orders").await.body.contains("<td>Ada</td><td>€14.50</td>"));
    // The live total on the form is wrong the same way.
    let form = client.get("/orders/new").await.body;
    assert_eq!(text_of(&form, r#"data-testid="order-total""#), "Total: €5.50");
    assert!(form.contains("const SURCHARGE_CENTS = 100;"));
    // Seed orders are as they were.
    assert_eq!(client.get("/api/orders/1001").await.json()["total"], "€9.00");
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn missing_confirmation_saves_but_never_says_so() {
    let server = start(config_with(|c| {
        c.defects.insert(Defect::MissingConfirmation);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    let res = client.post("/api/orders", &json!({ "customer": "Ada", "quantity": 1, "product": "Mugs" })).await;
    assert_eq!(res.status, 201);
    assert_eq!(client.get("/api/orders").await.json()["count"], 5);
    let form = client.get("/orders/new").await.body;
    assert!(!form.contains(r#"data-testid="confirmation""#));
    assert!(!form.contains(r#"id="confirmation""#));
    // The rest of the success path is still there.
    assert!(form.contains(r#"<p data-testid="saved-total" id="saved-total" hidden></p>"#));
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn save_fails_answers_created_but_stores_nothing() {
    let server = start(config_with(|c| {
        c.defects.insert(Defect::SaveFails);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    let res =
        client.post("/api/orders", &json!({ "customer": "Vanishing", "quantity": 2, "product": "Saffron" })).await;
    assert_eq!(res.status, 201);
    assert_eq!(res.json()["id"], 1005);
    assert_eq!(res.json()["total"], "€24.00");
    assert_eq!(client.get("/api/orders?q=vanishing").await.json()["count"], 0);
    assert!(!client.get("/orders").await.body.contains("Vanishing"));
    assert_eq!(client.get("/orders/1005").await.status, 404);
    server.shutdown().await.expect("clean shutdown");
}

// ---- control plane and request log -------------------------------------------------------

#[tokio::test]
async fn demo_config_round_trips_over_http() {
    let server = start(DemoConfig::default()).await;
    let client = Client::new(&server);
    let initial = client.get("/__demo/config").await;
    assert_eq!(initial.status, 200);
    assert_eq!(
        initial.json(),
        json!({ "drift": [], "faults": [], "defects": [], "password": "saffron-demo", "latency_ms": 1500 })
    );

    let wanted = json!({
        "drift": ["renamed-label", "moved-element"],
        "faults": ["server-error"],
        "defects": ["wrong-total"],
        "password": "saffron-demo",
        "latency_ms": 20
    });
    let put = client.send("PUT", "/__demo/config", Some(&wanted.to_string())).await;
    assert_eq!(put.status, 200);
    assert_eq!(put.json(), wanted);
    assert_eq!(client.get("/__demo/config").await.json(), wanted);
    let config = server.config();
    assert!(config.has_drift(Drift::RenamedLabel) && config.has_drift(Drift::MovedElement));
    assert!(config.has_fault(Fault::ServerError) && config.has_defect(Defect::WrongTotal));
    assert_eq!(config.latency_ms, 20);
    // And it is in force.
    let signed_in = Client::signed_in(&server).await;
    assert_eq!(
        signed_in.post("/api/orders", &json!({ "customer": "A", "quantity": 1, "product": "Tea" })).await.status,
        500
    );

    // Refused: unknown switch, unknown field, bad JSON. The config stays as it was.
    for bad in [r#"{"drift":["renamed-labels"]}"#, r#"{"fault":["latency"]}"#, "{", r#"{"latency_ms":-1}"#] {
        let res = client.send("PUT", "/__demo/config", Some(bad)).await;
        assert_eq!(res.status, 400, "{bad}");
        assert!(!res.error().is_empty());
    }
    assert_eq!(client.get("/__demo/config").await.json(), wanted);

    // Fields left out take their defaults: PUT replaces the whole configuration.
    let put = client.send("PUT", "/__demo/config", Some(r#"{"faults":["latency"]}"#)).await;
    assert_eq!(put.json()["drift"], json!([]));
    assert_eq!(put.json()["latency_ms"], 1500);

    // set_config is visible to an external process.
    server.set_config(DemoConfig::default());
    assert_eq!(client.get("/__demo/config").await.json()["faults"], json!([]));
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn the_request_log_records_every_app_request_in_order() {
    let server = start(DemoConfig::default()).await;
    let anonymous = Client::new(&server);
    anonymous.get("/login").await;
    anonymous.post("/api/session", &json!({ "email": DEMO_EMAIL, "password": "nope" })).await;
    let client = Client::signed_in(&server).await;
    client.get("/orders").await;
    client.get("/api/orders?q=ada").await;
    client.post("/api/orders", &json!({ "customer": "Ada", "quantity": 1, "product": "Tea" })).await;
    client.send("DELETE", "/api/orders/1001", None).await;
    anonymous.get("/orders/new").await;
    anonymous.get("/api/orders").await;
    client.get("/nowhere").await;
    client.post("/api/orders", &json!({})).await;
    // The control plane is not logged.
    anonymous.get("/__demo/config").await;

    let expected = vec![
        entry("GET", "/login", 200),
        entry("POST", "/api/session", 401),
        entry("POST", "/api/session", 200),
        entry("GET", "/orders", 200),
        entry("GET", "/api/orders", 200),
        entry("POST", "/api/orders", 201),
        entry("DELETE", "/api/orders/1001", 200),
        entry("GET", "/orders/new", 302),
        entry("GET", "/api/orders", 401),
        entry("GET", "/nowhere", 404),
        entry("POST", "/api/orders", 400),
    ];
    assert_eq!(server.requests(), expected);
    let over_http: Vec<RequestLog> =
        serde_json::from_value(anonymous.get("/__demo/requests").await.json()).expect("request log JSON");
    assert_eq!(over_http, expected);
    // The question the log exists for: was the order posted exactly once before it failed?
    let saves =
        server.requests().iter().filter(|r| r.method == "POST" && r.path == "/api/orders" && r.status == 201).count();
    assert_eq!(saves, 1);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn reset_restores_the_seed_data_and_forgets_sessions() {
    let server = start(config_with(|c| {
        c.drift.insert(Drift::RenamedLabel);
    }))
    .await;
    let client = Client::signed_in(&server).await;
    client.send("DELETE", "/api/orders/1001", None).await;
    client.post("/api/orders", &json!({ "customer": "Temp", "quantity": 1, "product": "Tea" })).await;
    let reset = Client::new(&server).send("POST", "/__demo/reset", None).await;
    assert_eq!(reset.status, 204);
    assert!(server.requests().is_empty());
    assert_eq!(client.get("/orders").await.status, 302, "sessions are forgotten");
    let fresh = Client::signed_in(&server).await;
    let orders = fresh.get("/api/orders").await.json();
    assert_eq!(orders["count"], 4);
    assert_eq!(orders["orders"][0]["id"], 1001);
    // Ids start over too, and the switches are kept.
    let created = fresh.post("/api/orders", &json!({ "customer": "Again", "quantity": 1, "product": "Tea" })).await;
    assert_eq!(created.json()["id"], 1005);
    assert!(server.config().has_drift(Drift::RenamedLabel));
    server.reset();
    assert_eq!(Client::signed_in(&server).await.get("/api/orders").await.json()["count"], 4);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn servers_are_independent_and_url_is_loopback() {
    let a = start(DemoConfig::default()).await;
    let b = start(DemoConfig::default()).await;
    assert!(a.url().starts_with("http://127.0.0.1:"));
    assert_ne!(a.url(), b.url());
    Client::signed_in(&a).await.send("DELETE", "/api/orders/1001", None).await;
    assert_eq!(Client::signed_in(&b).await.get("/api/orders").await.json()["count"], 4);
    a.shutdown().await.expect("clean shutdown");
    b.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn renamed_api_field_reads_the_quantity_from_count_and_the_page_sends_count() {
    let normal = start(DemoConfig::default()).await;
    let drifted = start(config_with(|c| {
        c.drift.insert(Drift::RenamedApiField);
    }))
    .await;
    let order = |field: &str| json!({ "customer": "Ada", field: 1, "product": "Tea" });
    let client = Client::signed_in(&drifted).await;
    let refused = client.post("/api/orders", &order("quantity")).await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.json(), json!({ "error": "Quantity is required (the field is `count` now)" }));
    assert_eq!(client.post("/api/orders", &order("count")).await.status, 201);
    assert!(client.get("/orders/new").await.body.contains(r#"const QUANTITY_FIELD = "count";"#));
    // Without the drift nothing changed.
    let client = Client::signed_in(&normal).await;
    assert_eq!(client.post("/api/orders", &order("quantity")).await.status, 201);
    assert_eq!(client.post("/api/orders", &order("count")).await.status, 400);
    assert!(client.get("/orders/new").await.body.contains(r#"const QUANTITY_FIELD = "quantity";"#));
    normal.shutdown().await.expect("clean shutdown");
    drifted.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn an_api_client_signs_in_for_a_bearer_token_the_api_takes_as_a_session() {
    let server = start(DemoConfig::default()).await;
    let mut client = Client::new(&server);
    let wrong = client.post("/api/token", &json!({ "email": DEMO_EMAIL, "password": "wrong" })).await;
    assert_eq!(wrong.status, 401);
    assert_eq!(client.get("/api/orders").await.status, 401, "no token, no session");
    let answer = client.post("/api/token", &json!({ "email": DEMO_EMAIL, "password": server.config().password })).await;
    assert_eq!(answer.status, 201);
    assert_eq!(answer.json()["tokenType"], "Bearer");
    assert!(answer.header("set-cookie").is_none(), "a token, not a cookie");
    client.bearer = answer.json()["token"].as_str().map(str::to_owned);
    assert_eq!(client.get("/api/orders").await.status, 200);
    client.bearer = Some("not-a-token".into());
    assert_eq!(client.get("/api/orders").await.status, 401);
    server.shutdown().await.expect("clean shutdown");
}
