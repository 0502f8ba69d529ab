//! The lab's ledger: a server-rendered back office where a payment is posted by a plain form
//! (POST, then 303 to the payment's page), behind its own sign-in. Two switches interrupt a
//! posting *after* the server accepted it, the case where clearing an interruption and doing
//! the action again would post the payment twice:
//!
//! - `notice`: the redirect after the post goes through a "Scheduled maintenance" notice page
//!   whose Continue link leads on to the payment;
//! - `expire`: the session ends with the post, so the payment's page sends the browser to the
//!   sign-in page (`?expired=1`).
//!
//! `GET /lab/ledger/payments.json` lists what was posted, for a test to count;
//! `POST /lab/ledger/switches?notice=1&expire=1` sets the switches (and empties the ledger).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::header::{LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use crate::app::{App, lock};
use crate::pages::escape;

/// The ledger's state: payments, signed-in sessions and the switches.
#[derive(Debug, Default)]
pub struct Ledger {
    payments: Vec<(String, String)>,
    sessions: HashSet<String>,
    next_session: u64,
    notice: bool,
    expire: bool,
}

const COOKIE: &str = "ledger";

fn session(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

fn signed_in(app: &App, headers: &HeaderMap) -> bool {
    session(headers).is_some_and(|token| lock(&app.ledger).sessions.contains(&token))
}

fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(LOCATION, value);
    }
    response
}

fn expired() -> Response {
    see_other("/lab/ledger/login?expired=1")
}

fn page(title: &str, body: &str) -> Response {
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1>{body}</body></html>"
    ))
    .into_response()
}

pub async fn login_page(Query(query): Query<HashMap<String, String>>) -> Response {
    let notice = if query.get("expired").is_some_and(|v| v == "1") { "<p>Your session expired</p>" } else { "" };
    page(
        "Ledger sign-in",
        &format!(
            "{notice}<form method=\"post\" action=\"/lab/ledger/login\">\
             <label>User <input name=\"user\"></label> <label>Password <input name=\"password\" type=\"password\"></label>\
             <button type=\"submit\">Sign in</button></form>"
        ),
    )
}

#[derive(Deserialize)]
pub struct SignIn {
    user: String,
}

pub async fn sign_in(State(app): State<Arc<App>>, Form(form): Form<SignIn>) -> Response {
    if form.user.trim().is_empty() {
        return see_other("/lab/ledger/login");
    }
    let token = {
        let mut ledger = lock(&app.ledger);
        ledger.next_session += 1;
        let token = format!("s{}", ledger.next_session);
        ledger.sessions.insert(token.clone());
        token
    };
    let mut response = see_other("/lab/ledger");
    if let Ok(cookie) = HeaderValue::from_str(&format!("{COOKIE}={token}; Path=/lab/ledger; HttpOnly")) {
        response.headers_mut().insert(SET_COOKIE, cookie);
    }
    response
}

pub async fn form_page(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if !signed_in(&app, &headers) {
        return see_other("/lab/ledger/login");
    }
    page(
        "Post a payment",
        "<form method=\"post\" action=\"/lab/ledger/payments\">\
         <label>Payee <input name=\"payee\"></label> <label>Amount <input name=\"amount\"></label>\
         <button type=\"submit\">Post payment</button></form>",
    )
}

#[derive(Deserialize)]
pub struct Payment {
    payee: String,
    amount: String,
}

pub async fn post_payment(State(app): State<Arc<App>>, headers: HeaderMap, Form(form): Form<Payment>) -> Response {
    let Some(token) = session(&headers).filter(|token| lock(&app.ledger).sessions.contains(token)) else {
        return expired();
    };
    let mut ledger = lock(&app.ledger);
    ledger.payments.push((form.payee, form.amount));
    let id = ledger.payments.len();
    if ledger.expire {
        ledger.sessions.remove(&token);
    }
    let payment = format!("/lab/ledger/payments/{id}");
    if ledger.notice {
        return see_other(&format!("/lab/ledger/notice?next={payment}"));
    }
    see_other(&payment)
}

pub async fn notice(Query(query): Query<HashMap<String, String>>) -> Response {
    let next = query.get("next").filter(|next| next.starts_with("/lab/ledger/")).cloned().unwrap_or_default();
    page(
        "Scheduled maintenance",
        &format!("<p>The ledger closes at 22:00 tonight.</p><a href=\"{}\">Continue</a>", escape(&next)),
    )
}

pub async fn payment_page(State(app): State<Arc<App>>, headers: HeaderMap, Path(id): Path<usize>) -> Response {
    if !signed_in(&app, &headers) {
        return expired();
    }
    let found = lock(&app.ledger).payments.get(id.wrapping_sub(1)).cloned();
    match found {
        Some((payee, amount)) => page(
            &format!("Payment {id} posted"),
            &format!("<p>{} to {}</p><a href=\"/lab/ledger\">Post another</a>", escape(&amount), escape(&payee)),
        ),
        None => (StatusCode::NOT_FOUND, "no such payment").into_response(),
    }
}

pub async fn payments(State(app): State<Arc<App>>) -> Response {
    let list: Vec<serde_json::Value> = lock(&app.ledger)
        .payments
        .iter()
        .map(|(payee, amount)| serde_json::json!({ "payee": payee, "amount": amount }))
        .collect();
    axum::Json(list).into_response()
}

pub async fn switches(State(app): State<Arc<App>>, Query(query): Query<HashMap<String, String>>) -> Response {
    let on = |name: &str| query.get(name).is_some_and(|value| value == "1");
    app.ledger_switches(on("notice"), on("expire"));
    StatusCode::NO_CONTENT.into_response()
}

impl App {
    pub fn ledger_switches(&self, notice: bool, expire: bool) {
        let mut ledger = lock(&self.ledger);
        ledger.notice = notice;
        ledger.expire = expire;
        ledger.payments.clear();
    }

    pub fn ledger_payments(&self) -> Vec<(String, String)> {
        lock(&self.ledger).payments.clone()
    }
}
