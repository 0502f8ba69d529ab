//! The HTML pages. Each page is a static fragment under `src/pages/` with `{{name}}` holes; the
//! holes are filled here, and only here do the drift switches change the markup.
//!
//! Server-rendered content (the orders table, the notes) is complete without JavaScript, so a
//! page load needs no API call: that keeps `Fault::SessionExpiry` to "the page loads, the next
//! action fails", and lets the tests check the DOM contract over plain HTTP.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::http::header::CACHE_CONTROL;
use axum::response::{Html, IntoResponse, Response};

use crate::api::{order_total, surcharge_cents};
use crate::app::{App, SessionCtx};
use crate::config::{Defect, DemoConfig, Drift};
use crate::shop::{Order, PRODUCTS, money};

const LAYOUT: &str = include_str!("pages/layout.html");
const CSS: &str = include_str!("pages/style.css");
const COMMON_JS: &str = include_str!("pages/common.js");
const NAV: &str = include_str!("pages/nav.html");
const HELP: &str = include_str!("pages/help.html");
const CONSENT: &str = include_str!("pages/consent.html");
const LOGIN: &str = include_str!("pages/login.html");
const LOGIN_JS: &str = include_str!("pages/login.js");
const ORDERS: &str = include_str!("pages/orders.html");
const ORDERS_JS: &str = include_str!("pages/orders.js");
const SEARCH_FORM: &str = include_str!("pages/search_form.html");
const NEW_ORDER_LINK: &str = include_str!("pages/new_order_link.html");
const NEW_ORDER: &str = include_str!("pages/new_order.html");
const NEW_ORDER_JS: &str = include_str!("pages/new_order.js");
const ORDER: &str = include_str!("pages/order.html");
const ORDER_JS: &str = include_str!("pages/order.js");
const CONFIRM_ORDER: &str = include_str!("pages/confirm_order.html");
const CONFIRM_ORDER_JS: &str = include_str!("pages/confirm_order.js");
const INVOICE: &str = include_str!("pages/invoice.html");
const NOT_FOUND: &str = include_str!("pages/not_found.html");

/// Fills `{{name}}` holes in one pass. Substituted text is never scanned again, so a customer
/// named "{{rows}}" stays a name; an unknown hole is left as written (the tests look for any).
pub fn render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + vars.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let key = &after[..end];
        match vars.iter().find(|(name, _)| *name == key) {
            Some((_, value)) => out.push_str(value),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Escapes text for HTML content and quoted attribute values (both quote kinds).
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    html_escape::encode_quoted_attribute(text)
}

/// `Drift::RemovedTestId`: drops every ` data-testid="…"` attribute. User text cannot be hit:
/// it is escaped, so it never contains a literal `"`.
pub fn strip_test_ids(html: &str) -> String {
    const ATTR: &str = " data-testid=\"";
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find(ATTR) {
        out.push_str(&rest[..start]);
        let value = start + ATTR.len();
        let Some(end) = rest[value..].find('"') else {
            out.push_str(&rest[start..]);
            return out;
        };
        rest = &rest[value + end + 1..];
    }
    out.push_str(rest);
    out
}

/// Class of primary buttons; `Drift::RestyledButton` swaps the design system's names.
fn primary_class(config: &DemoConfig) -> &'static str {
    if config.has_drift(Drift::RestyledButton) { "button button--cta" } else { "btn btn-primary" }
}

/// Opening and closing markup around the form's primary button.
fn actions_wrapper(config: &DemoConfig) -> (&'static str, &'static str) {
    if config.has_drift(Drift::RestyledButton) { ("<div class=\"actions\">", "</div>") } else { ("", "") }
}

/// The form's submit button, as (the toolbar at the top of the form, the button at its foot).
fn save_button(config: &DemoConfig) -> (String, String) {
    let class = primary_class(config);
    if config.has_drift(Drift::RelocatedSave) {
        // No `type` attribute: a button's default type is submit, so it still submits the form,
        // but the recorded `form button[type=submit]` selects nothing.
        let toolbar = format!(
            "<div class=\"toolbar\"><button data-testid=\"place-order\" class=\"{class}\">Place order</button></div>"
        );
        (toolbar, String::new())
    } else {
        let (open, close) = actions_wrapper(config);
        let button = format!(
            "{open}<button type=\"submit\" data-testid=\"save-order\" class=\"{class}\">Save order</button>{close}"
        );
        (String::new(), button)
    }
}

/// What the orders list's links add to `/orders/{id}`: `Drift::ConfirmStep` sends them to the
/// confirmation page first.
fn order_link_suffix(config: &DemoConfig) -> &'static str {
    if config.has_drift(Drift::ConfirmStep) { "/confirm" } else { "" }
}

/// "1 order", "4 orders": the text of the result count and the export status.
pub fn plural(n: usize) -> String {
    if n == 1 { "1 order".to_owned() } else { format!("{n} orders") }
}

struct Page<'a> {
    status: StatusCode,
    title: &'a str,
    /// The signed-in navigation; false on the login page.
    nav: bool,
    /// The Help button with its tooltip (orders page only).
    help: bool,
    /// The cookie-consent interstitial (`Fault::Interstitial`).
    overlay: bool,
    content: String,
    script: String,
}

fn finish(config: &DemoConfig, page: Page<'_>) -> Response {
    let nav = if page.nav { render(NAV, &[("help", if page.help { HELP } else { "" })]) } else { String::new() };
    let overlay =
        if page.overlay { render(CONSENT, &[("primary_class", primary_class(config))]) } else { String::new() };
    let script = format!("{COMMON_JS}\n{}", page.script);
    let html = render(
        LAYOUT,
        &[
            ("title", &escape(page.title)),
            ("css", CSS),
            ("nav", &nav),
            ("content", &page.content),
            ("overlay", &overlay),
            ("script", &script),
        ],
    );
    let html = if config.has_drift(Drift::RemovedTestId) { strip_test_ids(&html) } else { html };
    // No caching: a switch flipped between two loads must show on the second one.
    (page.status, [(CACHE_CONTROL, "no-store")], Html(html)).into_response()
}

pub async fn login(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    let config = app.config();
    let expired = query.as_deref().is_some_and(|q| q.split('&').any(|pair| pair == "expired=1"));
    let (open, close) = actions_wrapper(&config);
    let email_label = if config.has_drift(Drift::RenamedLabel) { "E-mail address" } else { "Email" };
    let content = render(
        LOGIN,
        &[
            ("email_label", email_label),
            ("notice", if expired { "Your session expired" } else { "" }),
            ("notice_hidden", if expired { "" } else { " hidden" }),
            ("primary_class", primary_class(&config)),
            ("actions_open", open),
            ("actions_close", close),
        ],
    );
    let page = Page {
        status: StatusCode::OK,
        title: "Sign in",
        nav: false,
        help: false,
        overlay: false,
        content,
        script: LOGIN_JS.to_owned(),
    };
    finish(&config, page)
}

fn order_row(order: &Order, link_suffix: &str) -> String {
    let number = order.number();
    format!(
        "<tr draggable=\"true\"><td><a href=\"/orders/{id}{link_suffix}\">{number}</a></td><td>{customer}</td><td>{total}</td><td>{status}</td>\
         <td><button type=\"button\" class=\"btn btn-danger\" data-id=\"{id}\" aria-label=\"Delete order {number}\">\
         Delete</button></td></tr>\n",
        id = order.id,
        customer = escape(&order.customer),
        total = money(order.total_cents),
        status = escape(&order.status),
    )
}

pub async fn orders(State(app): State<Arc<App>>, Extension(session): Extension<SessionCtx>) -> Response {
    let config = app.config();
    let (rows, count) = {
        let shop = app.shop();
        let orders = shop.search("");
        let link_suffix = order_link_suffix(&config);
        (orders.iter().map(|o| order_row(o, link_suffix)).collect::<String>(), orders.len())
    };
    let (before_table, new_order_below, after_table) = if config.has_drift(Drift::MovedElement) {
        // A compact sidebar keeps no room for the search box's visible label: its placeholder
        // is all that names it now, as in many real redesigns.
        let compact_search = SEARCH_FORM.replace("<label for=\"search\">Search orders</label>\n", "");
        let sidebar = format!(
            "<div class=\"with-sidebar\">\n<aside class=\"sidebar\" aria-label=\"Sidebar\">\n{compact_search}{NEW_ORDER_LINK}\
             </aside>\n<div class=\"main-column\">"
        );
        (sidebar, "", "</div>\n</div>")
    } else {
        (SEARCH_FORM.to_owned(), NEW_ORDER_LINK, "")
    };
    let content = render(
        ORDERS,
        &[
            ("before_table", &before_table),
            ("rows", &rows),
            ("count", &plural(count)),
            ("new_order_below", new_order_below),
            ("after_table", after_table),
        ],
    );
    let page = Page {
        status: StatusCode::OK,
        title: "Orders",
        nav: true,
        help: true,
        overlay: session.overlay,
        content,
        script: render(ORDERS_JS, &[("order_link_suffix", order_link_suffix(&config))]),
    };
    finish(&config, page)
}

pub async fn new_order(State(app): State<Arc<App>>, Extension(session): Extension<SessionCtx>) -> Response {
    let config = app.config();
    let (toolbar, save_button) = save_button(&config);
    let customer_label = if config.has_drift(Drift::RenamedLabel) { "Customer name" } else { "Customer" };
    let options: String =
        PRODUCTS.iter().map(|p| format!("<option value=\"{0}\">{0}</option>\n", p.name)).collect::<String>();
    let first = PRODUCTS[0];
    let initial_total = money(order_total(&config, first.price_cents, 1));
    let confirmation = if config.has_defect(Defect::MissingConfirmation) {
        ""
    } else {
        "<p role=\"status\" data-testid=\"confirmation\" id=\"confirmation\" class=\"flash\" hidden></p>"
    };
    let content = render(
        NEW_ORDER,
        &[
            ("customer_label", customer_label),
            ("product_options", options.trim_end()),
            ("initial_total", &initial_total),
            ("toolbar", &toolbar),
            ("save_button", &save_button),
            ("confirmation", confirmation),
        ],
    );
    let prices = PRODUCTS.iter().map(|p| format!("\"{}\": {}", p.name, p.price_cents)).collect::<Vec<_>>().join(", ");
    let surcharge = surcharge_cents(&config).to_string();
    let script = render(
        NEW_ORDER_JS,
        &[
            ("prices", &format!("{{ {prices} }}")),
            ("surcharge_cents", &surcharge),
            ("quantity_field", crate::api::quantity_field(&config)),
        ],
    );
    let page = Page {
        status: StatusCode::OK,
        title: "New order",
        nav: true,
        help: false,
        overlay: session.overlay,
        content,
        script,
    };
    finish(&config, page)
}

fn line_rows(order: &Order) -> String {
    order
        .lines
        .iter()
        .map(|l| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                escape(&l.product),
                l.quantity,
                money(l.unit_price_cents),
                money(l.unit_price_cents * i64::from(l.quantity)),
            )
        })
        .collect()
}

/// Looks an order up by the id in the path; `None` for a missing order or a non-numeric id.
fn find_order(app: &App, id: &str) -> Option<Order> {
    let id = id.parse().ok()?;
    app.shop().order(id).cloned()
}

pub async fn order(
    State(app): State<Arc<App>>,
    Extension(session): Extension<SessionCtx>,
    Path(id): Path<String>,
) -> Response {
    let config = app.config();
    let Some(order) = find_order(&app, &id) else { return not_found(&config, "Order not found") };
    let number = order.number();
    let notes: String = order.notes.iter().map(|n| format!("<li>{}</li>\n", escape(n))).collect();
    let attachments: String = order
        .attachments
        .iter()
        .map(|file| format!("<li>{} ({} bytes)</li>\n", escape(&file.name), file.size))
        .collect();
    let content = render(
        ORDER,
        &[
            ("number", &number),
            ("customer", &escape(&order.customer)),
            ("status", &escape(&order.status)),
            ("gift", if order.gift { "Yes" } else { "No" }),
            ("total", &money(order.total_cents)),
            ("lines", line_rows(&order).trim_end()),
            ("notes", notes.trim_end()),
            ("attachments", attachments.trim_end()),
        ],
    );
    let title = format!("Order {number}");
    let script = render(ORDER_JS, &[("id", &order.id.to_string())]);
    let page = Page {
        status: StatusCode::OK,
        title: &title,
        nav: true,
        help: false,
        overlay: session.overlay,
        content,
        script,
    };
    finish(&config, page)
}

/// `Drift::ConfirmStep`'s page between the orders list and an order. Without that drift there
/// is no such page.
pub async fn confirm_order(
    State(app): State<Arc<App>>,
    Extension(session): Extension<SessionCtx>,
    Path(id): Path<String>,
) -> Response {
    let config = app.config();
    if !config.has_drift(Drift::ConfirmStep) {
        return not_found(&config, "Page not found");
    }
    let Some(order) = find_order(&app, &id) else { return not_found(&config, "Order not found") };
    let number = order.number();
    let content = render(
        CONFIRM_ORDER,
        &[
            ("id", &order.id.to_string()),
            ("number", &number),
            ("customer", &escape(&order.customer)),
            ("total", &money(order.total_cents)),
            ("status", &escape(&order.status)),
        ],
    );
    let title = format!("Open order {number}?");
    let page = Page {
        status: StatusCode::OK,
        title: &title,
        nav: true,
        help: false,
        overlay: session.overlay,
        content,
        script: CONFIRM_ORDER_JS.to_owned(),
    };
    finish(&config, page)
}

pub async fn invoice(
    State(app): State<Arc<App>>,
    Extension(session): Extension<SessionCtx>,
    Path(id): Path<String>,
) -> Response {
    let config = app.config();
    let Some(order) = find_order(&app, &id) else { return not_found(&config, "Invoice not found") };
    let number = order.number();
    let content = render(
        INVOICE,
        &[
            ("number", &number),
            ("customer", &escape(&order.customer)),
            ("lines", line_rows(&order).trim_end()),
            ("total", &money(order.total_cents)),
        ],
    );
    let title = format!("Invoice {number}");
    let page = Page {
        status: StatusCode::OK,
        title: &title,
        nav: true,
        help: false,
        overlay: session.overlay,
        content,
        script: String::new(),
    };
    finish(&config, page)
}

/// The 404 page. `heading` is a constant, never request input.
pub fn not_found(config: &DemoConfig, heading: &'static str) -> Response {
    let page = Page {
        status: StatusCode::NOT_FOUND,
        title: heading,
        nav: true,
        help: false,
        overlay: false,
        content: render(NOT_FOUND, &[("heading", heading)]),
        script: String::new(),
    };
    finish(config, page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_fills_known_holes_once_and_keeps_unknown_ones() {
        let out = render("<p>{{a}} {{b}} {{a}}</p>", &[("a", "{{b}}"), ("b", "x")]);
        assert_eq!(out, "<p>{{b}} x {{b}}</p>");
        assert_eq!(render("{{missing}} and {{ unclosed", &[]), "{{missing}} and {{ unclosed");
    }

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(escape(r#"<b a="1">'&'</b>"#), "&lt;b a=&quot;1&quot;&gt;&#x27;&amp;&#x27;&lt;/b&gt;");
    }

    #[test]
    fn strip_test_ids_removes_only_the_attribute() {
        // Text content arrives escaped, so a customer named `a data-testid="b"` survives.
        let html =
            r#"<input id="email" data-testid="email"><p data-testid="x" role="status">a data-testid=&quot;b&quot;</p>"#;
        assert_eq!(strip_test_ids(html), r#"<input id="email"><p role="status">a data-testid=&quot;b&quot;</p>"#);
        assert_eq!(strip_test_ids(r#"<a data-testid="open"#), r#"<a data-testid="open"#);
    }

    #[test]
    fn plural_matches_the_result_count_contract() {
        assert_eq!(plural(0), "0 orders");
        assert_eq!(plural(1), "1 order");
        assert_eq!(plural(4), "4 orders");
    }
}
