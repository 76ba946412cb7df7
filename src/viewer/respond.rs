//! The answers the viewer's handlers give: one-line text, JSON, and pages.

use crate::view::live_csp;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

pub fn text(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body + "\n").into_response()
}

pub fn html(body: String) -> Response {
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(live_csp()));
    response
}

pub fn json(body: String) -> Response {
    json_status(StatusCode::OK, body)
}

pub fn json_status(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
