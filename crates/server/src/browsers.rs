//! What browsers need to call the API: CORS for the origins the
//! operator lists (`--cors-origin`). gRPC-Web itself is tonic-web's layer,
//! set up beside this in `lib.rs`: a page calls the same service, on the
//! same port, with an ordinary gRPC-Web client.

use std::time::Duration;

use anyhow::Context;
use tonic::codegen::http::{HeaderName, HeaderValue, Method};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The headers a gRPC-Web client sends: its content type and marker, the
/// seat token, the deadline, and the client's name.
const ALLOWED_HEADERS: [&str; 5] = [
    "content-type",
    "x-grpc-web",
    "x-user-agent",
    "authorization",
    "grpc-timeout",
];

/// The headers a page may read: the status and its details.
const EXPOSED_HEADERS: [&str; 3] = ["grpc-status", "grpc-message", "grpc-status-details-bin"];

/// The CORS layer for `origins` (None for none: no cross-origin call is
/// answered with CORS headers, so browsers refuse them).
pub(crate) fn cors(origins: &[String]) -> anyhow::Result<Option<CorsLayer>> {
    if origins.is_empty() {
        return Ok(None);
    }
    let allowed = origins
        .iter()
        .map(|o| HeaderValue::from_str(o).with_context(|| format!("the CORS origin {o:?}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(allowed))
            .allow_methods([Method::POST])
            .allow_headers(ALLOWED_HEADERS.map(HeaderName::from_static))
            .expose_headers(EXPOSED_HEADERS.map(HeaderName::from_static))
            .max_age(Duration::from_secs(24 * 3600)),
    ))
}
