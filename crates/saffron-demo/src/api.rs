//! The JSON API the pages call, and the `/__demo/` control plane.
//!
//! Bodies are read as bytes and parsed here rather than with axum's `Json` extractor, so every
//! malformed body gets the app's own `{"error": ...}` shape with 400 (axum would answer 415 or
//! 422 in plain text), whatever Content-Type the client sent.

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, extract::rejection::QueryRejection};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::app::{App, SessionCtx};
use crate::config::{DEMO_EMAIL, Defect, DemoConfig, Drift, Fault};
use crate::shop::{ExportStatus, OrderView, money, product};

/// Surcharge `Defect::WrongTotal` adds to every new order.
pub const WRONG_TOTAL_SURCHARGE_CENTS: i64 = 100;

/// An error response: `{"error": message}` with `status`.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    ApiError::new(status, message).into_response()
}

/// A refused API call, so handlers can use `?`; it becomes `{"error": message}` with `status`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }

    fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

type ApiResult = Result<Response, ApiError>;

fn parse<T: DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("invalid request body: {e}")))
}

/// Order ids in paths; anything that is not one is an order that does not exist.
fn order_id(raw: &str) -> Result<u32, ApiError> {
    raw.parse().map_err(|_| ApiError::not_found(format!("order #{raw} not found")))
}

/// The field `POST /api/orders` reads the quantity from right now.
pub fn quantity_field(config: &DemoConfig) -> &'static str {
    if config.has_drift(Drift::RenamedApiField) { "count" } else { "quantity" }
}

/// What `Defect::WrongTotal` adds to a new order's total right now (0 while it is off).
pub fn surcharge_cents(config: &DemoConfig) -> i64 {
    if config.has_defect(Defect::WrongTotal) { WRONG_TOTAL_SURCHARGE_CENTS } else { 0 }
}

/// A new order's total: server-computed, never taken from the client.
pub fn order_total(config: &DemoConfig, unit_price_cents: i64, quantity: u32) -> i64 {
    unit_price_cents * i64::from(quantity) + surcharge_cents(config)
}

#[derive(Deserialize)]
struct SignIn {
    email: String,
    password: String,
}

/// The demo user's e-mail and password are what `body` holds, or the sign-in's refusal.
fn check_credentials(app: &App, body: &Bytes) -> Result<(), ApiError> {
    let form: SignIn = parse(body)?;
    let config = app.config();
    // E-mail addresses are compared case-insensitively as mail systems do; passwords exactly.
    if !form.email.trim().eq_ignore_ascii_case(DEMO_EMAIL) || form.password != config.password {
        return Err(ApiError::new(StatusCode::UNAUTHORIZED, "Email or password is wrong"));
    }
    Ok(())
}

/// `POST /api/token`: the sign-in of an API client, whose answer is a bearer token that the
/// API takes in `Authorization: Bearer …` as it takes the session cookie.
pub async fn token(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> ApiResult {
    check_credentials(&app, &body)?;
    let token = app.new_session(crate::app::expired_before(&headers));
    Ok((StatusCode::CREATED, Json(json!({ "token": token, "tokenType": "Bearer" }))).into_response())
}

pub async fn sign_in(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> ApiResult {
    check_credentials(&app, &body)?;
    let token = app.new_session(crate::app::expired_before(&headers));
    let cookie = HeaderValue::from_str(&format!("session={token}; HttpOnly; Path=/; SameSite=Lax"))
        .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "could not create a session"))?;
    Ok(([(SET_COOKIE, cookie)], Json(json!({ "email": DEMO_EMAIL }))).into_response())
}

#[derive(Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
}

pub async fn list_orders(State(app): State<Arc<App>>, query: Result<Query<SearchQuery>, QueryRejection>) -> ApiResult {
    let Query(query) = query.map_err(|_| ApiError::bad_request("invalid query string"))?;
    let shop = app.shop();
    let orders: Vec<OrderView> = shop.search(&query.q).into_iter().map(OrderView::from).collect();
    Ok(Json(json!({ "count": orders.len(), "orders": orders })).into_response())
}

pub async fn get_order(State(app): State<Arc<App>>, Path(id): Path<String>) -> ApiResult {
    let id = order_id(&id)?;
    let shop = app.shop();
    let order = shop.order(id).ok_or_else(|| ApiError::not_found(format!("order #{id} not found")))?;
    Ok(Json(OrderView::from(order)).into_response())
}

/// All fields optional so each missing one gets the same message the form shows, not serde's.
#[derive(Deserialize)]
struct NewOrder {
    customer: Option<String>,
    quantity: Option<i64>,
    /// The quantity under drift `renamed-api-field`.
    count: Option<i64>,
    product: Option<String>,
    #[serde(default)]
    gift: bool,
}

pub async fn create_order(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    let config = app.config();
    if config.has_fault(Fault::ServerError) {
        return Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error"));
    }
    let form: NewOrder = parse(&body)?;
    let customer = form.customer.as_deref().map(str::trim).unwrap_or_default();
    if customer.is_empty() {
        return Err(ApiError::bad_request("Customer is required"));
    }
    let (quantity, missing) = if config.has_drift(Drift::RenamedApiField) {
        (form.count, "Quantity is required (the field is `count` now)")
    } else {
        (form.quantity, "Quantity is required")
    };
    let quantity = match quantity {
        None => return Err(ApiError::bad_request(missing)),
        Some(q) if q < 1 => return Err(ApiError::bad_request("Quantity must be at least 1")),
        Some(q) => u32::try_from(q).map_err(|_| ApiError::bad_request("Quantity is too large"))?,
    };
    let name = form.product.as_deref().ok_or_else(|| ApiError::bad_request("Product is required"))?;
    let product = product(name).ok_or_else(|| ApiError::bad_request(format!("Unknown product: {name}")))?;

    let total = order_total(&config, product.price_cents, quantity);
    let id = {
        let mut shop = app.shop();
        let order = shop.new_order(customer, product, quantity, form.gift, total);
        let id = order.id;
        // `Defect::SaveFails`: the answer is exactly that of a successful save, only the store
        // is skipped, so nothing but looking for the order afterwards can catch it.
        if !config.has_defect(Defect::SaveFails) {
            shop.store(order);
        }
        id
    };
    let body = Json(json!({ "id": id, "number": format!("#{id}"), "total": money(total), "total_cents": total }));
    let mut response = (StatusCode::CREATED, body).into_response();
    if let Ok(location) = HeaderValue::from_str(&format!("/orders/{id}")) {
        response.headers_mut().insert(LOCATION, location);
    }
    Ok(response)
}

pub async fn delete_order(State(app): State<Arc<App>>, Path(id): Path<String>) -> ApiResult {
    let id = order_id(&id)?;
    app.shop().delete(id).ok_or_else(|| ApiError::not_found(format!("order #{id} not found")))?;
    Ok(Json(json!({ "id": id, "deleted": true })).into_response())
}

#[derive(Deserialize)]
struct NewNote {
    text: Option<String>,
}

pub async fn add_note(State(app): State<Arc<App>>, Path(id): Path<String>, body: Bytes) -> ApiResult {
    let id = order_id(&id)?;
    let note: NewNote = parse(&body)?;
    let text = note.text.as_deref().map(str::trim).unwrap_or_default();
    if text.is_empty() {
        return Err(ApiError::bad_request("Note is required"));
    }
    let mut shop = app.shop();
    let order = shop.add_note(id, text).ok_or_else(|| ApiError::not_found(format!("order #{id} not found")))?;
    Ok((StatusCode::CREATED, Json(json!({ "text": text, "count": order.notes.len() }))).into_response())
}

#[derive(Debug, Deserialize)]
pub struct AttachmentQuery {
    name: Option<String>,
}

/// A file attached to an order, sent as the request's body with its name in the query (as a
/// page uploads a file straight from its file input).
pub async fn add_attachment(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    query: Result<Query<AttachmentQuery>, QueryRejection>,
    body: Bytes,
) -> ApiResult {
    let id = order_id(&id)?;
    let Query(query) = query.map_err(|_| ApiError::bad_request("invalid query string"))?;
    let name = query.name.as_deref().map(str::trim).unwrap_or_default();
    if name.is_empty() {
        return Err(ApiError::bad_request("The file needs a name"));
    }
    let mut shop = app.shop();
    let order =
        shop.attach(id, name, body.len()).ok_or_else(|| ApiError::not_found(format!("order #{id} not found")))?;
    let count = order.attachments.len();
    Ok((StatusCode::CREATED, Json(json!({ "name": name, "size": body.len(), "count": count }))).into_response())
}

pub async fn start_export(State(app): State<Arc<App>>) -> Response {
    let id = app.shop().start_export(Instant::now());
    (StatusCode::ACCEPTED, Json(json!({ "id": id, "status": "RUNNING" }))).into_response()
}

pub async fn export_status(State(app): State<Arc<App>>, Path(raw): Path<String>) -> ApiResult {
    let not_found = || ApiError::not_found(format!("export {raw} not found"));
    let id: u32 = raw.parse().map_err(|_| not_found())?;
    let status = app.shop().export_status(id, Instant::now()).ok_or_else(not_found)?;
    let body = match status {
        ExportStatus::Running => json!({ "id": id, "status": "RUNNING" }),
        ExportStatus::Ready { rows } => json!({ "id": id, "status": "READY", "rows": rows }),
    };
    Ok(Json(body).into_response())
}

/// The export's file, once it is ready: a CSV line per order, downloaded as `orders.csv`.
pub async fn export_file(State(app): State<Arc<App>>, Path(raw): Path<String>) -> ApiResult {
    let not_found = || ApiError::not_found(format!("export {raw} not found"));
    let id: u32 = raw.parse().map_err(|_| not_found())?;
    let shop = app.shop();
    if !shop.export_ready(id, Instant::now()).ok_or_else(not_found)? {
        return Err(ApiError::not_found(format!("export {id} is not ready")));
    }
    let mut csv = String::from("number,customer,total,status\n");
    for order in shop.search("") {
        let view = OrderView::from(order);
        let fields = [view.number, view.customer, view.total, view.status].map(|field| csv_field(&field));
        csv.push_str(&fields.join(","));
        csv.push('\n');
    }
    let headers =
        [(CONTENT_TYPE, "text/csv; charset=utf-8"), (CONTENT_DISPOSITION, "attachment; filename=\"orders.csv\"")];
    Ok((headers, csv).into_response())
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.to_owned() }
}

/// Accepts the cookie-consent interstitial for this session.
pub async fn consent(State(app): State<Arc<App>>, Extension(session): Extension<SessionCtx>) -> Response {
    app.consent(&session.token);
    StatusCode::NO_CONTENT.into_response()
}

pub async fn get_config(State(app): State<Arc<App>>) -> Response {
    Json(app.config()).into_response()
}

/// Replaces the whole configuration; fields left out take their defaults, unknown fields and
/// unknown switch names are refused so a typo cannot silently leave a switch off.
pub async fn put_config(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    let config: DemoConfig = parse(&body)?;
    app.set_config(config.clone());
    Ok(Json(config).into_response())
}

pub async fn get_requests(State(app): State<Arc<App>>) -> Response {
    Json(app.requests()).into_response()
}

pub async fn reset(State(app): State<Arc<App>>) -> Response {
    app.reset();
    StatusCode::NO_CONTENT.into_response()
}
