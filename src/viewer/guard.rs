//! Who may ask: every request must name the server by its own address (`Host`, so a page of
//! another site whose name was rebound to this address gets nothing) and carry the access
//! token. Refusals say why in one line and hold nothing of the store.

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use std::sync::Arc;

/// The token and the `Host` values this server answers to.
pub struct Access {
    token: String,
    hosts: Vec<String>,
}

impl Access {
    pub fn new(addr: SocketAddr, token: String) -> Self {
        let mut hosts = vec![authority(addr)];
        // `localhost` cannot be rebound by a foreign site; editors and people type it.
        if addr.ip().is_loopback() {
            hosts.push(format!("localhost:{}", addr.port()));
        }
        Access { token, hosts }
    }

    fn host_allowed(&self, host: Option<&str>) -> bool {
        host.is_some_and(|host| self.hosts.iter().any(|own| own.eq_ignore_ascii_case(host)))
    }

    fn token_matches(&self, given: &str) -> bool {
        // Compared in full whatever the first difference, so timing tells nothing.
        given.len() == self.token.len()
            && given.bytes().zip(self.token.bytes()).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
    }
}

/// `host:port` as a URL and a `Host` header write it (IPv6 in brackets).
pub fn authority(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(v4) => format!("{}:{}", v4.ip(), v4.port()),
        SocketAddr::V6(v6) => format!("[{}]:{}", v6.ip(), v6.port()),
    }
}

/// The `token` query parameter, if any.
pub fn query_token(query: Option<&str>) -> Option<&str> {
    query?.split('&').find_map(|pair| pair.strip_prefix("token="))
}

pub async fn guard(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok());
    let uri_host = request.uri().authority().map(|a| a.as_str());
    if !access.host_allowed(host) || uri_host.is_some_and(|a| !access.host_allowed(Some(a))) {
        return refuse(StatusCode::FORBIDDEN, "forbidden: this server answers only to its own address");
    }
    match query_token(request.uri().query()) {
        None => return refuse(StatusCode::UNAUTHORIZED, "unauthorized: the URL needs the access token"),
        Some(token) if !access.token_matches(token) => {
            return refuse(StatusCode::FORBIDDEN, "forbidden: wrong access token")
        }
        Some(_) => {}
    }
    let mut response = next.run(request).await;
    protect(&mut response);
    response
}

fn refuse(status: StatusCode, reason: &'static str) -> Response {
    let mut response =
        (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{reason}\n")).into_response();
    protect(&mut response);
    response
}

/// Headers on every answer: never cached, never sniffed as another type, the token-bearing URL
/// never sent on as a referrer. No CORS header is ever set.
fn protect(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_servers_own_names_and_the_exact_token_pass() {
        let access = Access::new("127.0.0.1:8123".parse().unwrap(), "abc123".into());
        assert!(access.host_allowed(Some("127.0.0.1:8123")));
        assert!(access.host_allowed(Some("LOCALHOST:8123")));
        assert!(!access.host_allowed(Some("evil.example:8123")));
        assert!(!access.host_allowed(Some("127.0.0.1:8124")));
        assert!(!access.host_allowed(Some("127.0.0.1")));
        assert!(!access.host_allowed(None));
        assert!(access.token_matches("abc123"));
        assert!(!access.token_matches("abc12"));
        assert!(!access.token_matches("abc124"));
        let v6 = Access::new("[::1]:9000".parse().unwrap(), "t".into());
        assert!(v6.host_allowed(Some("[::1]:9000")));
        assert_eq!(query_token(Some("from=3&token=xyz")), Some("xyz"));
        assert_eq!(query_token(Some("tokens=xyz")), None);
    }
}
