//! The lab's hostile back office, "Meridian", after the one the design seeds describe: a real
//! `<frameset>` (a banner frame and a main frame), table layout, ASP.NET-style generated ids, no
//! test ids, no ARIA, no `<label>`: a form field is named only by the table cell beside it.
//! Posting a payment is a plain form POST answered with a page.
//!
//! It honours the demo's runtime faults: `latency` slows each of its pages, `server-error`
//! answers a posted payment with a 500 page, `interstitial` covers the menu with a system
//! notice (a plain `<div>`, no role) until its OK button is pressed, and `session-expiry` sends
//! the payment page to a log-in page in the main frame (`/lab/meridian/login?ReturnUrl=...`, as
//! ASP.NET forms authentication does) until someone logs in again, which sets a cookie and
//! returns to the page asked for.

use std::sync::Arc;
use std::time::Duration;

use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;

use crate::app::App;
use crate::config::Fault;
use crate::pages::escape;

const FRAMESET: &str = include_str!("pages/lab/meridian/frameset.html");
const BANNER: &str = include_str!("pages/lab/meridian/banner.html");
const MENU: &str = include_str!("pages/lab/meridian/menu.html");
const PAYMENT: &str = include_str!("pages/lab/meridian/payment.html");
const MEMBER: &str = include_str!("pages/lab/meridian/member.html");
const LOGIN: &str = include_str!("pages/lab/meridian/login.html");

/// The cookie a log-in after an expiry sets: the session lasts from then on.
const RELOGGED: &str = "MeridianAuth=again";

/// The notice the `interstitial` fault puts over the menu.
const NOTICE: &str = "<div id=\"ctl00_pnlNotice\" style=\"position:fixed;inset:0;background:rgba(0,0,0,.45)\">\
<div style=\"background:#fff;margin:60px auto;width:320px;padding:12px;border:2px solid #1f3a5f\">\
<b>System notice</b><p>End-of-day batch runs at 18:00.</p>\
<input type=\"button\" id=\"ctl00_btnNoticeOk\" value=\"OK\" \
onclick=\"document.getElementById('ctl00_pnlNotice').remove()\"></div></div>";

async fn slowed(app: &App) {
    if app.config().has_fault(Fault::Latency) {
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// One of its pages, as the faults leave it.
async fn page(app: &App, html: &'static str) -> Response {
    slowed(app).await;
    Html(html).into_response()
}

pub async fn frameset(State(app): State<Arc<App>>) -> Response {
    page(&app, FRAMESET).await
}

pub async fn banner(State(app): State<Arc<App>>) -> Response {
    page(&app, BANNER).await
}

pub async fn menu(State(app): State<Arc<App>>) -> Response {
    if app.config().has_fault(Fault::Interstitial) {
        slowed(&app).await;
        return Html(MENU.replace("</body>", &format!("{NOTICE}</body>"))).into_response();
    }
    page(&app, MENU).await
}

pub async fn payment(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if app.config().has_fault(Fault::SessionExpiry) && !logged_in_again(&headers) {
        slowed(&app).await;
        return Redirect::to("/lab/meridian/login?ReturnUrl=%2flab%2fmeridian%2fpayment").into_response();
    }
    page(&app, PAYMENT).await
}

fn logged_in_again(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|cookies| cookies.split(';').any(|cookie| cookie.trim() == RELOGGED))
}

#[derive(Deserialize)]
pub struct ReturnTo {
    #[serde(rename = "ReturnUrl", default)]
    return_url: String,
}

/// Only a page of the back office is returned to.
fn return_path(asked: &str) -> &str {
    if asked.starts_with("/lab/meridian/") && !asked.contains("//") { asked } else { "/lab/meridian/menu" }
}

pub async fn login(State(app): State<Arc<App>>, Query(to): Query<ReturnTo>) -> Response {
    slowed(&app).await;
    Html(LOGIN.replace("__RETURN__", &escape(return_path(&to.return_url)))).into_response()
}

#[derive(Deserialize)]
pub struct LoggingIn {
    #[serde(rename = "ReturnUrl", default)]
    return_url: String,
    #[serde(rename = "ctl00$MainContent$txtUser", default)]
    user: String,
    #[serde(rename = "ctl00$MainContent$txtPassword", default)]
    password: String,
}

pub async fn post_login(State(app): State<Arc<App>>, Form(form): Form<LoggingIn>) -> Response {
    slowed(&app).await;
    if form.user.trim().is_empty() || form.password.is_empty() {
        let again = format!("/lab/meridian/login?ReturnUrl={}", return_path(&form.return_url));
        return Redirect::to(&again).into_response();
    }
    let cookie = format!("{RELOGGED}; Path=/lab/meridian; HttpOnly");
    ([(header::SET_COOKIE, cookie)], Redirect::to(return_path(&form.return_url))).into_response()
}

pub async fn member(State(app): State<Arc<App>>) -> Response {
    page(&app, MEMBER).await
}

#[derive(Deserialize)]
pub struct Posted {
    #[serde(rename = "ctl00$MainContent$txtMember", default)]
    member: String,
    #[serde(rename = "ctl00$MainContent$txtPayee", default)]
    payee: String,
    #[serde(rename = "ctl00$MainContent$txtAmount", default)]
    amount: String,
}

pub async fn post_payment(State(app): State<Arc<App>>, Form(posted): Form<Posted>) -> Response {
    slowed(&app).await;
    if app.config().has_fault(Fault::ServerError) {
        let body = "<!doctype html><html><body><h2>Server Error in '/' Application.</h2>\
                    <p>Object reference not set to an instance of an object.</p></body></html>";
        return (StatusCode::INTERNAL_SERVER_ERROR, Html(body)).into_response();
    }
    let reference = format!("PAY-{:04}", app.meridian_post());
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Payment posted</title></head>\
         <body style=\"font:13px Verdana,sans-serif\"><table id=\"ctl00_MainContent_tblResult\" cellpadding=\"4\">\
         <tr><td class=\"hdr\" colspan=\"2\">Payment posted</td></tr>\
         <tr><td>Reference</td><td><span id=\"ctl00_MainContent_lblRef\">{reference}</span></td></tr>\
         <tr><td>Member no.</td><td>{}</td></tr><tr><td>Payee</td><td>{}</td></tr><tr><td>Amount</td><td>{}</td></tr>\
         <tr><td></td><td><a id=\"ctl00_MainContent_lnkBack\" href=\"/lab/meridian/menu\">Back to menu</a></td></tr>\
         </table></body></html>",
        escape(&posted.member),
        escape(&posted.payee),
        escape(&posted.amount)
    );
    Html(body).into_response()
}

impl App {
    /// Counts a posted payment; its number.
    pub fn meridian_post(&self) -> u64 {
        self.meridian_posts.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }
}
