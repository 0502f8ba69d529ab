//! The app with every switch off: the page/DOM contract recordings rely on, and the JSON API.

use crate::support;

use std::time::Duration;

use saffron_demo::{DEMO_EMAIL, DemoConfig};
use serde_json::json;
use support::{Client, poll_until, session_from, start, tag_with, text_of};

#[tokio::test]
async fn root_redirects_to_login_and_login_page_has_the_form() {
    let server = start(DemoConfig::default()).await;
    let client = Client::new(&server);

    let root = client.get("/").await;
    assert_eq!(root.status, 302);
    assert_eq!(root.header("location"), Some("/login"));

    let login = client.get("/login").await;
    assert_eq!(login.status, 200);
    assert!(login.header("content-type").is_some_and(|v| v.starts_with("text/html")));
    let html = &login.body;
    assert!(html.contains("<h1>Sign in</h1>"));
    assert!(html.contains(r#"<label for="email">Email</label>"#));
    assert_eq!(
        tag_with(html, r#"id="email""#),
        r#"<input id="email" name="email" type="email" autocomplete="username" data-testid="email">"#
    );
    assert!(html.contains(r#"<label for="password">Password</label>"#));
    assert!(tag_with(html, r#"id="password""#).contains(r#"type="password""#));
    assert!(tag_with(html, r#"id="password""#).contains(r#"data-testid="password""#));
    assert_eq!(
        tag_with(html, r#"data-testid="sign-in""#),
        r#"<button type="submit" data-testid="sign-in" class="btn btn-primary">"#
    );
    assert_eq!(text_of(html, r#"data-testid="sign-in""#), "Sign in");
    // The alert is present but hidden and empty until something goes wrong.
    assert_eq!(tag_with(html, r#"id="login-error""#), r#"<p role="alert" id="login-error" class="error" hidden>"#);
    // The page script signs in through the API and goes to /orders.
    assert!(html.contains(r#"fetch("/api/session""#));
    assert!(html.contains(r#"location.assign("/orders")"#));
    assert!(html.contains("Email or password is wrong"));
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn sign_in_sets_an_http_only_session_cookie_and_wrong_credentials_are_401() {
    let server = start(DemoConfig::default()).await;
    let client = Client::new(&server);

    let ok = client.post("/api/session", &json!({ "email": DEMO_EMAIL, "password": "saffron-demo" })).await;
    assert_eq!(ok.status, 200);
    let cookie = ok.header("set-cookie").expect("Set-Cookie");
    assert!(cookie.starts_with("session="), "{cookie}");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("Path=/"), "{cookie}");
    let token = session_from(&ok).expect("token");
    assert!(token.len() >= 32, "token too short to be unguessable: {token}");

    // Each sign-in is a new session.
    let again = client.post("/api/session", &json!({ "email": DEMO_EMAIL, "password": "saffron-demo" })).await;
    assert_ne!(session_from(&again), Some(token));

    // E-mail case does not matter; the password does.
    let upper = client.post("/api/session", &json!({ "email": "Demo@Saffron.Test", "password": "saffron-demo" })).await;
    assert_eq!(upper.status, 200);

    for (email, password) in [(DEMO_EMAIL, "wrong"), ("someone@saffron.test", "saffron-demo"), (DEMO_EMAIL, "")] {
        let bad = client.post("/api/session", &json!({ "email": email, "password": password })).await;
        assert_eq!(bad.status, 401, "{email} / {password}");
        assert_eq!(bad.error(), "Email or password is wrong");
        assert_eq!(bad.header("set-cookie"), None);
    }

    let missing = client.post("/api/session", &json!({ "email": DEMO_EMAIL })).await;
    assert_eq!(missing.status, 400);
    assert!(missing.error().contains("password"), "{}", missing.body);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn a_configured_password_replaces_the_default() {
    let server = start(support::config_with(|c| c.password = "correct horse".into())).await;
    let client = Client::new(&server);
    let old = client.post("/api/session", &json!({ "email": DEMO_EMAIL, "password": "saffron-demo" })).await;
    assert_eq!(old.status, 401);
    let new = client.post("/api/session", &json!({ "email": DEMO_EMAIL, "password": "correct horse" })).await;
    assert_eq!(new.status, 200);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn pages_and_api_require_a_session() {
    let server = start(DemoConfig::default()).await;
    let anonymous = Client::new(&server);
    let forged = Client { cookie: Some("0123456789abcdef0123456789abcdef".into()), ..Client::new(&server) };
    for client in [&anonymous, &forged] {
        for page in ["/orders", "/orders/new", "/orders/1001", "/invoices/1001"] {
            let res = client.get(page).await;
            assert_eq!(res.status, 302, "{page}");
            assert_eq!(res.header("location"), Some("/login"), "{page}");
        }
        for (method, path) in [
            ("GET", "/api/orders"),
            ("POST", "/api/orders"),
            ("DELETE", "/api/orders/1001"),
            ("POST", "/api/exports"),
            ("GET", "/api/exports/1"),
            ("POST", "/api/orders/1001/notes"),
        ] {
            let res = client.send(method, path, Some("{}")).await;
            assert_eq!(res.status, 401, "{method} {path}");
            assert_eq!(res.error(), "not signed in");
        }
    }
    // Nothing was changed by the refused calls.
    let signed_in = Client::signed_in(&server).await;
    assert_eq!(signed_in.get("/api/orders").await.json()["count"], 4);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn orders_page_lists_the_seed_orders_with_the_contracted_markup() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let res = client.get("/orders").await;
    assert_eq!(res.status, 200);
    let html = &res.body;

    assert!(html.contains("<h1>Orders</h1>"));
    // Header navigation: the Orders link and the Help button with its (hidden) tooltip.
    let nav = &html[html.find(r#"<nav aria-label="Main">"#).expect("nav")..html.find("</nav>").expect("nav ends")];
    assert!(nav.contains(r#"<a href="/orders">Orders</a>"#));
    assert!(
        nav.contains(
            r#"<button type="button" class="btn btn-link" id="help" aria-describedby="help-tip">Help</button>"#
        )
    );
    assert_eq!(tag_with(nav, r#"role="tooltip""#), r#"<div role="tooltip" id="help-tip" class="tooltip" hidden>"#);
    assert_eq!(text_of(nav, r#"role="tooltip""#), "Search by customer name");
    assert!(html.contains(r#"help.addEventListener("mouseenter", showTip)"#));

    // Search form.
    assert!(html.contains(r#"<label for="search">Search orders</label>"#));
    assert_eq!(
        tag_with(html, r#"id="search""#),
        r#"<input id="search" name="q" type="search" placeholder="Customer name" data-testid="search">"#
    );
    assert_eq!(text_of(html, r#"data-testid="search-button""#), "Search");

    // The table, header cells and one row per order, in id order; each row may be dragged onto
    // the pinned orders.
    assert!(html.contains(r#"<table aria-label="Orders" class="orders">"#));
    for th in ["Order", "Customer", "Total", "Status"] {
        assert!(html.contains(&format!(r#"<th scope="col">{th}</th>"#)), "{th}");
    }
    assert!(html.contains(r#"<section aria-label="Pinned orders" class="pinned" id="pinned">"#));
    let rows: Vec<&str> = html
        .match_indices(r#"<tr draggable="true"><td>"#)
        .map(|(i, _)| &html[i..i + html[i..].find("</tr>").expect("row ends")])
        .collect();
    assert_eq!(rows.len(), 4);
    let expected = [
        ("1001", "Ada Lovelace", "€9.00", "Paid"),
        ("1002", "Ada Lovelace", "€12.00", "Pending"),
        ("1003", "Grace Hopper", "€21.00", "Paid"),
        ("1004", "Alan Turing", "€4.50", "Shipped"),
    ];
    for (row, (id, customer, total, status)) in rows.iter().zip(expected) {
        assert!(row.contains(&format!(r#"<a href="/orders/{id}">#{id}</a>"#)), "{row}");
        assert!(row.contains(&format!("<td>{customer}</td><td>{total}</td><td>{status}</td>")), "{row}");
        assert!(row.contains(&format!(r#"aria-label="Delete order #{id}">Delete</button>"#)), "{row}");
    }

    assert_eq!(
        tag_with(html, r#"data-testid="result-count""#),
        r#"<p role="status" data-testid="result-count" id="result-count">"#
    );
    assert_eq!(text_of(html, r#"data-testid="result-count""#), "4 orders");
    assert_eq!(
        tag_with(html, r#"data-testid="new-order""#),
        r#"<a href="/orders/new" class="btn btn-link" data-testid="new-order">"#
    );
    assert_eq!(text_of(html, r#"data-testid="new-order""#), "New order");
    assert_eq!(
        tag_with(html, r#"href="/invoices/1001""#),
        r#"<a href="/invoices/1001" target="_blank" rel="noopener">"#
    );
    assert_eq!(text_of(html, r#"href="/invoices/1001""#), "Open invoice of #1001");
    assert_eq!(text_of(html, r#"id="export""#), "Export orders");
    assert!(tag_with(html, r#"data-testid="export-status""#).contains(r#"role="status""#));

    // Client behaviour the recordings exercise: confirm before delete, the status texts, and
    // polling every 250 ms.
    assert!(html.contains(r#"window.confirm("Delete order #" + id + "?")"#));
    assert!(html.contains(r#"show(flash, "Order #" + id + " deleted")"#));
    assert!(html.contains("Export running…"));
    assert!(html.contains(r#""Export ready: " + plural(r.data.rows)"#));
    assert!(html.contains("setTimeout(poll, 250)"));
    // No drift markup in the normal mode.
    assert!(!html.contains("<aside"));
    // Pages are never cached, so a flipped switch shows on the next load.
    assert_eq!(res.header("cache-control"), Some("no-store"));
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn search_filters_by_customer_ignoring_case() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let customers = async |q: &str| -> Vec<String> {
        let res = client.get(&format!("/api/orders?q={q}")).await;
        assert_eq!(res.status, 200);
        let body = res.json();
        let names: Vec<String> = body["orders"]
            .as_array()
            .expect("orders")
            .iter()
            .map(|o| o["customer"].as_str().unwrap_or("").to_owned())
            .collect();
        assert_eq!(body["count"], names.len());
        names
    };
    assert_eq!(customers("ada").await, ["Ada Lovelace", "Ada Lovelace"]);
    assert_eq!(customers("GRACE").await, ["Grace Hopper"]);
    assert_eq!(customers("ing").await, ["Alan Turing"]);
    assert_eq!(customers("Alan%20T").await, ["Alan Turing"]);
    assert!(customers("nobody").await.is_empty());
    assert_eq!(customers("").await.len(), 4);
    assert_eq!(client.get("/api/orders").await.json()["count"], 4);

    let first = &client.get("/api/orders?q=lovelace").await.json()["orders"][0];
    assert_eq!(first["id"], 1001);
    assert_eq!(first["number"], "#1001");
    assert_eq!(first["total"], "€9.00");
    assert_eq!(first["total_cents"], 900);
    assert_eq!(first["status"], "Paid");
    assert_eq!(first["lines"], json!([{ "product": "Tea", "quantity": 2, "unit_price_cents": 450 }]));
    // The page renders counts the same way the script does.
    assert!(client.get("/orders").await.body.contains(r#"return n === 1 ? "1 order" : n + " orders";"#));
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn new_order_page_has_the_form_and_validates_in_the_browser() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let res = client.get("/orders/new").await;
    assert_eq!(res.status, 200);
    let html = &res.body;
    assert!(html.contains("<h1>New order</h1>"));
    assert!(html.contains(r#"<label for="customer">Customer</label>"#));
    let customer = tag_with(html, r#"id="customer""#);
    assert!(customer.contains(r#"data-testid="customer""#));
    // Validated in JS, not by the browser: no `required`, and the form opts out of native checks.
    assert!(!customer.contains(" required"), "{customer}");
    assert!(html.contains(r#"<form id="order-form" class="card" novalidate>"#));
    assert!(html.contains(r#"<label for="quantity">Quantity</label>"#));
    assert_eq!(
        tag_with(html, r#"id="quantity""#),
        r#"<input id="quantity" name="quantity" type="number" min="1" value="1" data-testid="quantity">"#
    );
    assert!(html.contains(r#"<label for="product">Product</label>"#));
    assert!(tag_with(html, r#"id="product""#).starts_with(r#"<select id="product""#));
    for product in ["Tea", "Mugs", "Saffron"] {
        assert!(html.contains(&format!(r#"<option value="{product}">{product}</option>"#)), "{product}");
    }
    assert!(html.contains(r#"<input type="checkbox" id="gift" name="gift" data-testid="gift">"#));
    assert!(html.contains(r#"<label for="gift">Gift wrap</label>"#));
    assert_eq!(
        tag_with(html, r#"data-testid="order-total""#),
        r#"<p data-testid="order-total" role="status" id="order-total" class="total">"#
    );
    assert_eq!(text_of(html, r#"data-testid="order-total""#), "Total: €4.50");
    assert_eq!(
        tag_with(html, r#"data-testid="save-order""#),
        r#"<button type="submit" data-testid="save-order" class="btn btn-primary">"#
    );
    assert_eq!(text_of(html, r#"data-testid="save-order""#), "Save order");
    // Error texts, the prices the live total uses, and where the confirmation goes.
    assert!(tag_with(html, r#"id="customer-error""#).contains(r#"role="alert""#));
    assert!(html.contains(r#""Customer is required""#));
    assert!(html.contains(r#""Quantity must be at least 1""#));
    assert!(html.contains(r#"const PRICES = { "Tea": 450, "Mugs": 700, "Saffron": 1200 };"#));
    assert!(html.contains("const SURCHARGE_CENTS = 0;"));
    assert!(
        html.contains(r#"<p role="status" data-testid="confirmation" id="confirmation" class="flash" hidden></p>"#)
    );
    assert!(html.contains(r#"show(confirmation, "Order saved")"#));
    assert!(html.contains(r#"<p data-testid="saved-total" id="saved-total" hidden></p>"#));
    assert!(html.contains(r#""Could not save the order""#));
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn creating_an_order_computes_the_total_on_the_server_and_lists_it() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let res = client
        .post("/api/orders", &json!({ "customer": "  Katherine Johnson ", "quantity": 3, "product": "Tea", "gift": true, "total": "€0.01" }))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let body = res.json();
    assert_eq!(body["id"], 1005);
    assert_eq!(body["number"], "#1005");
    // 3 × €4.50, whatever total the client claimed.
    assert_eq!(body["total"], "€13.50");
    assert_eq!(body["total_cents"], 1350);
    assert_eq!(res.header("location"), Some("/orders/1005"));

    let listed = client.get("/api/orders?q=katherine").await.json();
    assert_eq!(listed["count"], 1);
    let order = &listed["orders"][0];
    assert_eq!(order["customer"], "Katherine Johnson");
    assert_eq!(order["status"], "Pending");
    assert_eq!(order["gift"], true);
    assert_eq!(client.get("/api/orders/1005").await.json()["total"], "€13.50");

    let page = client.get("/orders").await.body;
    assert!(
        page.contains(
            r#"<a href="/orders/1005">#1005</a></td><td>Katherine Johnson</td><td>€13.50</td><td>Pending</td>"#
        )
    );
    assert_eq!(text_of(&page, r#"data-testid="result-count""#), "5 orders");

    let detail = client.get("/orders/1005").await;
    assert_eq!(detail.status, 200);
    assert!(detail.body.contains("<h1>Order #1005</h1>"));
    assert!(detail.body.contains("<dt>Gift wrap</dt><dd>Yes</dd>"));
    assert!(detail.body.contains("<tr><td>Tea</td><td>3</td><td>€4.50</td><td>€13.50</td></tr>"));

    // Product names are matched without case; ids keep counting.
    let second = client
        .post("/api/orders", &json!({ "customer": "Dorothy Vaughan", "quantity": 1, "product": "saffron" }))
        .await;
    assert_eq!(second.status, 201);
    assert_eq!(second.json()["id"], 1006);
    assert_eq!(second.json()["total"], "€12.00");
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn the_api_rejects_invalid_orders_with_json_errors() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let cases = [
        (json!({ "quantity": 1, "product": "Tea" }), "Customer is required"),
        (json!({ "customer": "   ", "quantity": 1, "product": "Tea" }), "Customer is required"),
        (json!({ "customer": null, "quantity": 1, "product": "Tea" }), "Customer is required"),
        (json!({ "customer": "Ada", "quantity": 0, "product": "Tea" }), "Quantity must be at least 1"),
        (json!({ "customer": "Ada", "quantity": -3, "product": "Tea" }), "Quantity must be at least 1"),
        (json!({ "customer": "Ada", "product": "Tea" }), "Quantity is required"),
        (json!({ "customer": "Ada", "quantity": 99_999_999_999_i64, "product": "Tea" }), "Quantity is too large"),
        (json!({ "customer": "Ada", "quantity": 1 }), "Product is required"),
        (json!({ "customer": "Ada", "quantity": 1, "product": "Coffee" }), "Unknown product: Coffee"),
    ];
    for (body, message) in cases {
        let res = client.post("/api/orders", &body).await;
        assert_eq!(res.status, 400, "{body}");
        assert_eq!(res.error(), message, "{body}");
    }
    for raw in [
        "{not json",
        "",
        "[]",
        "42",
        r#"{"customer":"Ada","quantity":"two","product":"Tea"}"#,
        r#"{"customer":"Ada","quantity":1.5,"product":"Tea"}"#,
    ] {
        let res = client.send("POST", "/api/orders", Some(raw)).await;
        assert_eq!(res.status, 400, "{raw:?}");
        assert!(res.error().starts_with("invalid request body"), "{raw:?}: {}", res.body);
    }
    // Nothing was stored by any of them.
    assert_eq!(client.get("/api/orders").await.json()["count"], 4);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn deleting_an_order_removes_it_everywhere() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let res = client.send("DELETE", "/api/orders/1001", None).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({ "id": 1001, "deleted": true }));

    let listed = client.get("/api/orders").await.json();
    assert_eq!(listed["count"], 3);
    assert!(listed["orders"].as_array().expect("orders").iter().all(|o| o["id"] != 1001));
    let page = client.get("/orders").await.body;
    assert!(!page.contains(r#"href="/orders/1001""#));
    assert_eq!(text_of(&page, r#"data-testid="result-count""#), "3 orders");
    assert_eq!(client.get("/orders/1001").await.status, 404);

    let again = client.send("DELETE", "/api/orders/1001", None).await;
    assert_eq!(again.status, 404);
    assert_eq!(again.error(), "order #1001 not found");
    assert_eq!(client.send("DELETE", "/api/orders/abc", None).await.status, 404);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn an_export_job_runs_then_is_ready_with_the_row_count() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let started = client.send("POST", "/api/exports", None).await;
    assert_eq!(started.status, 202);
    let id = started.json()["id"].as_u64().expect("export id");
    assert_eq!(started.json()["status"], "RUNNING");

    // Immediately after starting, the job is still running (it lasts about a second).
    let first = client.get(&format!("/api/exports/{id}")).await.json();
    assert_eq!(first, json!({ "id": id, "status": "RUNNING" }));

    let ready = poll_until(Duration::from_secs(10), async || {
        let status = client.get(&format!("/api/exports/{id}")).await.json();
        (status["status"] == "READY").then_some(status)
    })
    .await;
    assert_eq!(ready["rows"], 4);

    assert_eq!(client.get("/api/exports/999").await.status, 404);
    assert_eq!(client.get("/api/exports/nope").await.status, 404);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn order_page_shows_the_order_and_notes_are_added() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let page = client.get("/orders/1003").await;
    assert_eq!(page.status, 200);
    let html = &page.body;
    assert!(html.contains("<h1>Order #1003</h1>"));
    assert!(html.contains(r#"<dt>Customer</dt><dd data-testid="customer-name">Grace Hopper</dd>"#));
    assert!(html.contains(r#"<dt>Total</dt><dd data-testid="total">€21.00</dd>"#));
    assert!(html.contains("<tr><td>Mugs</td><td>3</td><td>€7.00</td><td>€21.00</td></tr>"));
    assert!(html.contains(r#"<ul aria-label="Notes" id="notes" data-testid="notes">"#));
    assert!(html.contains(r#"<label for="note">Note</label>"#));
    assert!(html.contains(r#"<textarea id="note" name="note" rows="3" data-testid="note"></textarea>"#));
    assert!(html.contains(r#"<button type="submit" class="btn">Add note</button>"#));
    assert!(html.contains("const ORDER_ID = 1003;"));

    let added = client.post("/api/orders/1003/notes", &json!({ "text": "  Call before delivery " })).await;
    assert_eq!(added.status, 201);
    assert_eq!(added.json(), json!({ "text": "Call before delivery", "count": 1 }));
    let html = client.get("/orders/1003").await.body;
    assert!(html.contains("<li>Call before delivery</li>"));
    assert_eq!(client.get("/api/orders/1003").await.json()["notes"], json!(["Call before delivery"]));

    let empty = client.post("/api/orders/1003/notes", &json!({ "text": " " })).await;
    assert_eq!(empty.status, 400);
    assert_eq!(empty.error(), "Note is required");
    assert_eq!(client.post("/api/orders/9999/notes", &json!({ "text": "x" })).await.status, 404);

    for missing in ["/orders/9999", "/orders/abc", "/invoices/9999"] {
        let res = client.get(missing).await;
        assert_eq!(res.status, 404, "{missing}");
        assert!(res.body.contains("not found</h1>"), "{missing}");
    }
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn invoice_page_shows_the_total() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let res = client.get("/invoices/1001").await;
    assert_eq!(res.status, 200);
    assert!(res.body.contains("<h1>Invoice #1001</h1>"));
    assert!(res.body.contains("<strong>Ada Lovelace</strong>"));
    assert_eq!(text_of(&res.body, r#"data-testid="invoice-total""#), "Total: €9.00");
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn customer_text_is_escaped_in_pages() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let name = r#"<script>alert("x")</script> {{rows}} data-testid="pwn""#;
    let res = client.post("/api/orders", &json!({ "customer": name, "quantity": 1, "product": "Tea" })).await;
    assert_eq!(res.status, 201);
    let id = res.json()["id"].as_u64().expect("id");
    client.post(&format!("/api/orders/{id}/notes"), &json!({ "text": "<img src=x onerror=alert(1)>" })).await;
    let escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; {{rows}} data-testid=&quot;pwn&quot;";
    for page in ["/orders".to_owned(), format!("/orders/{id}"), format!("/invoices/{id}")] {
        let html = client.get(&page).await.body;
        assert!(html.contains(escaped), "{page}");
        assert!(!html.contains("<script>alert"), "{page}");
    }
    let detail = client.get(&format!("/orders/{id}")).await.body;
    assert!(detail.contains("<li>&lt;img src=x onerror=alert(1)&gt;</li>"));
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn unknown_routes_are_404_and_api_errors_are_json() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    let page = client.get("/nowhere").await;
    assert_eq!(page.status, 404);
    assert!(page.body.contains("<h1>Page not found</h1>"));
    let api = client.get("/api/nowhere").await;
    assert_eq!(api.status, 404);
    assert_eq!(api.error(), "no such endpoint");
    let wrong_method = client.send("PUT", "/api/orders", Some("{}")).await;
    assert_eq!(wrong_method.status, 405);
    assert_eq!(wrong_method.error(), "method not allowed");
    assert_eq!(client.get("/favicon.ico").await.status, 204);
    server.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn every_page_fills_all_its_template_holes() {
    let server = start(DemoConfig::default()).await;
    let client = Client::signed_in(&server).await;
    for page in ["/login", "/login?expired=1", "/orders", "/orders/new", "/orders/1001", "/invoices/1001", "/nowhere"] {
        let html = client.get(page).await.body;
        assert!(!html.contains("{{"), "{page} has an unfilled hole");
        assert!(html.starts_with("<!doctype html>"), "{page}");
        assert!(html.contains(r#"<html lang="en">"#), "{page}");
    }
    server.shutdown().await.expect("clean shutdown");
}
