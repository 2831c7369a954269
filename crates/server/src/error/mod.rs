//! One mapping from everything that can go wrong to a gRPC status with a
//! stable machine-readable reason (google.rpc.ErrorInfo, domain
//! `backgammon.v1`), taken from one closed list ([`Reason`]).

mod reason;

pub use reason::{Reason, code_name};

use std::collections::HashMap;

use bg_engine::game::CommandError;
use bg_store::{Applied, StoreError};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

pub const DOMAIN: &str = "backgammon.v1";

/// An error of the service, before it becomes a [`Status`].
#[derive(Debug)]
pub struct ApiError {
    /// The reason's code, but for [`Reason::Transport`] (the code the
    /// transport gave).
    pub code: Code,
    pub reason: Reason,
    pub message: String,
    pub metadata: HashMap<String, String>,
}

impl ApiError {
    pub fn new(reason: Reason, message: impl Into<String>) -> ApiError {
        ApiError {
            code: reason.code(),
            reason,
            message: message.into(),
            metadata: HashMap::new(),
        }
    }

    pub fn with(mut self, key: &str, value: impl ToString) -> ApiError {
        self.metadata.insert(key.to_string(), value.to_string());
        self
    }

    pub fn invalid(field: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(Reason::InvalidArgument, message).with("field", field)
    }

    pub fn not_found(game_id: &str) -> ApiError {
        ApiError::new(Reason::GameNotFound, format!("no game {game_id}")).with("game_id", game_id)
    }

    pub fn version_mismatch(current: u64, expected: u64) -> ApiError {
        ApiError::new(
            Reason::VersionMismatch,
            format!("the game is at version {current}, not {expected}: read it again"),
        )
        .with("current_version", current)
    }

    /// Stored data of one game cannot be read: that game cannot go on;
    /// every other game does.
    pub fn data_loss(what: impl std::fmt::Display) -> ApiError {
        tracing::error!(error = %what, "stored data could not be read");
        ApiError::new(
            Reason::StorageCorrupt,
            "this game's stored data is damaged and cannot be read; the operator must restore it from a backup",
        )
    }

    pub fn store(e: StoreError) -> ApiError {
        match e {
            StoreError::Conflict { current } => ApiError::new(
                Reason::VersionMismatch,
                format!("another action was applied first; the game is at version {current}"),
            )
            .with("current_version", current),
            StoreError::NotFound => ApiError::new(Reason::GameNotFound, "no such game"),
            StoreError::WriteFailed { message, applied } => {
                crate::metrics::storage_error("STORAGE_UNAVAILABLE");
                // The store logged the failure itself, once for its group.
                tracing::debug!(error = %message, %applied, "action not acknowledged");
                let (stored, advice) = match applied {
                    Applied::No => ("no", "the action was not stored; retry later"),
                    Applied::Unknown => (
                        "unknown",
                        "the action may or may not have been stored: retry it with the same request_id (it is answered as first applied, or applied now), or read the game",
                    ),
                };
                ApiError::new(
                    Reason::StorageUnavailable,
                    format!("storage failed: {advice}"),
                )
                .with("stored", stored)
            }
            StoreError::Corrupt(what) => {
                crate::metrics::storage_error("DATA_LOSS");
                ApiError::data_loss(what)
            }
            StoreError::Unreachable(why) => {
                crate::metrics::storage_error("DATABASE_UNREACHABLE");
                tracing::warn!(error = %why, "the database is unreachable");
                ApiError::new(
                    Reason::DatabaseUnreachable,
                    "the database cannot be reached (down, restarting or overloaded): nothing was read or changed; retry later",
                )
            }
            other => {
                crate::metrics::storage_error("STORAGE_UNAVAILABLE");
                tracing::error!(error = %other, "storage error");
                ApiError::new(
                    Reason::StorageUnavailable,
                    "storage is unavailable; retry later",
                )
            }
        }
    }
}

impl From<CommandError> for ApiError {
    fn from(e: CommandError) -> ApiError {
        let reason = Reason::of_command(&e);
        // INVALID_INPUT and VARIANT_FAULT: the server's or the plugin's
        // fault, never the caller's.
        let code = reason.code();
        let message = match &e {
            // Never leak a plugin's internals to clients; the log has them.
            CommandError::Rules(r) if code == Code::Internal => {
                tracing::error!(reason = r.reason(), message = %r.message, "variant failure");
                "the variant's plugin failed on this call; nothing was changed (the server's log says why)"
                    .to_string()
            }
            other => other.to_string(),
        };
        ApiError::new(reason, message)
    }
}

/// The longest part of a caller's input an error quotes.
const QUOTED_CHARS: usize = 48;
/// The longest message and metadata value an error carries: the message
/// travels twice (grpc-message and the details), and the trailers of a
/// response must stay well under the 16 KiB that gRPC's C core accepts
/// (beyond that its clients see RESOURCE_EXHAUSTED and no reason).
const MAX_MESSAGE_CHARS: usize = 1024;
const MAX_METADATA_CHARS: usize = 256;

/// A caller's input as an error quotes it: in quotes, at most a short
/// prefix of it, and how long it was when it is cut.
pub fn quote(input: &str) -> String {
    match input.char_indices().nth(QUOTED_CHARS) {
        None => format!("{input:?}"),
        Some((end, _)) => format!("{:?}... ({} bytes)", &input[..end], input.len()),
    }
}

/// `text` cut to at most `max` characters.
fn cut(mut text: String, max: usize) -> String {
    if let Some((end, _)) = text.char_indices().nth(max) {
        text.truncate(end);
        text.push_str("...");
    }
    text
}

impl From<ApiError> for Status {
    fn from(e: ApiError) -> Status {
        let metadata: HashMap<String, String> = e
            .metadata
            .into_iter()
            .map(|(key, value)| (key, cut(value, MAX_METADATA_CHARS)))
            .collect();
        Status::with_error_details(
            e.code,
            cut(e.message, MAX_MESSAGE_CHARS),
            ErrorDetails::with_error_info(e.reason.as_str(), DOMAIN, metadata),
        )
    }
}

/// Errors tonic answers by itself, before any of the service's code runs,
/// carry no ErrorInfo. This layer gives them one, so that every error a
/// client sees has a stable reason: a request whose bytes are not its
/// message (cut short, badly compressed, not the method's message) is the
/// caller's fault (INVALID_ARGUMENT, `MALFORMED_REQUEST`, where tonic says
/// INTERNAL), a request over the size limit is
/// OUT_OF_RANGE, `REQUEST_TOO_LARGE`.
///
/// It looks only at error responses without details (a response that
/// ends before any message, its status in the headers); the service's
/// own errors always have details and pass untouched.
#[derive(Clone, Copy, Debug, Default)]
pub struct ErrorInfoLayer;

impl<S> tower::Layer<S> for ErrorInfoLayer {
    type Service = ErrorInfoService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ErrorInfoService { inner }
    }
}

#[derive(Clone, Debug)]
pub struct ErrorInfoService<S> {
    inner: S,
}

type BoxFuture<T, E> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, E>> + Send>>;

impl<S, Req, ResBody> tower::Service<Req> for ErrorInfoService<S>
where
    S: tower::Service<Req, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let answer = self.inner.call(request);
        Box::pin(async move {
            let mut response = answer.await?;
            add_error_info(response.headers_mut());
            Ok(response)
        })
    }
}

use tonic::codegen::http;

/// Replaces a status without details in these headers by one with an
/// ErrorInfo.
fn add_error_info(headers: &mut http::HeaderMap) {
    if headers.contains_key("grpc-status-details-bin") {
        return;
    }
    let Some(status) = Status::from_header_map(headers) else {
        return;
    };
    if status.code() == Code::Ok {
        return;
    }
    let detailed: Status = transport_error(&status).into();
    headers.remove("grpc-status");
    headers.remove("grpc-message");
    if detailed.add_header(headers).is_err() {
        tracing::warn!(status = ?status, "could not add error details");
    }
}

/// Whether tonic's INTERNAL error is a request's bytes that are not a
/// message: no message at all, a frame cut short, a bad compression flag,
/// a body that does not decompress, gRPC-Web text that is not base64,
/// bytes that are not the method's message (all said by tonic's and
/// tonic-web's decoders, which on a server decode only requests). Found
/// by the `http` fuzz target: a corrupt gzip body and an empty one were
/// answered INTERNAL.
fn malformed(said: &str) -> bool {
    [
        "failed to decode Protobuf message",
        "Missing request message",
        "Error decompressing",
        "protocol error: received message with",
        "Unexpected EOF decoding stream",
        "tonic-web: ",
    ]
    .iter()
    .any(|start| said.starts_with(start))
}

/// What tonic's own error means for the caller.
fn transport_error(status: &Status) -> ApiError {
    let said = status.message();
    match status.code() {
        Code::OutOfRange => ApiError::new(
            Reason::RequestTooLarge,
            format!(
                "requests are limited to {} bytes ({said})",
                crate::MAX_MESSAGE_BYTES
            ),
        ),
        Code::Internal if malformed(said) => ApiError::new(
            Reason::MalformedRequest,
            format!("the request is not a valid message for this method ({said})"),
        ),
        Code::Unimplemented if said.starts_with("Content is compressed with") => ApiError::new(
            Reason::UnsupportedCompression,
            format!(
                "requests may be compressed with gzip, deflate or zstd, or not at all ({said})"
            ),
        ),
        Code::Unimplemented => ApiError::new(Reason::UnknownMethod, said),
        code => ApiError {
            code,
            ..ApiError::new(Reason::Transport, said)
        },
    }
}
