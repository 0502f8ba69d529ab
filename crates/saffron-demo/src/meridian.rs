//! The lab's hostile back office, "Meridian", after the one the design seeds describe: a real
//! `<frameset>` (a banner frame and a main frame), table layout, ASP.NET-style generated ids, no
//! test ids, no ARIA, no `<label>`: a form field is named only by the table cell beside it.
//! Posting a payment is a plain form POST answered with a page.
//!
//! It honours the demo's runtime faults: `latency` slows each of its pages, `server-error`
//! answers a posted payment with a 500 page, and `interstitial` covers the menu with a system
//! notice (a plain `<div>`, no role) until its OK button is pressed.

use std::sync::Arc;
use std::time::Duration;

use axum::Form;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use crate::app::App;
use crate::config::Fault;
use crate::pages::escape;

const FRAMESET: &str = include_str!("pages/lab/meridian/frameset.html");
const BANNER: &str = include_str!("pages/lab/meridian/banner.html");
const MENU: &str = include_str!("pages/lab/meridian/menu.html");
const PAYMENT: &str = include_str!("pages/lab/meridian/payment.html");
const MEMBER: &str = include_str!("pages/lab/meridian/member.html");

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

pub async fn payment(State(app): State<Arc<App>>) -> Response {
    page(&app, PAYMENT).await
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
