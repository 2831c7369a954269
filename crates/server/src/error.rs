//! One mapping from everything that can go wrong to a gRPC status with a
//! stable machine-readable reason (google.rpc.ErrorInfo, domain
//! `backgammon.v1`).

use std::collections::HashMap;

use bg_engine::game::GameError;
use bg_store::StoreError;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

pub const DOMAIN: &str = "backgammon.v1";

/// An error of the service, before it becomes a [`Status`].
#[derive(Debug)]
pub struct ApiError {
    pub code: Code,
    pub reason: &'static str,
    pub message: String,
    pub metadata: HashMap<String, String>,
}

impl ApiError {
    pub fn new(code: Code, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
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
        ApiError::new(Code::InvalidArgument, "INVALID_ARGUMENT", message).with("field", field)
    }

    pub fn not_found(game_id: &str) -> ApiError {
        ApiError::new(
            Code::NotFound,
            "GAME_NOT_FOUND",
            format!("no game {game_id}"),
        )
        .with("game_id", game_id)
    }

    pub fn version_mismatch(current: u64, expected: u64) -> ApiError {
        ApiError::new(
            Code::Aborted,
            "VERSION_MISMATCH",
            format!("the game is at version {current}, not {expected}: read it again"),
        )
        .with("current_version", current)
    }

    pub fn store(e: StoreError) -> ApiError {
        match e {
            StoreError::Conflict { current } => ApiError::new(
                Code::Aborted,
                "VERSION_MISMATCH",
                format!("another action was applied first; the game is at version {current}"),
            )
            .with("current_version", current),
            StoreError::NotFound => ApiError::new(Code::NotFound, "GAME_NOT_FOUND", "no such game"),
            other => {
                tracing::error!(error = %other, "storage error");
                ApiError::new(
                    Code::Unavailable,
                    "STORAGE_UNAVAILABLE",
                    "storage is unavailable; retry later",
                )
            }
        }
    }
}

impl From<GameError> for ApiError {
    fn from(e: GameError) -> ApiError {
        let code = match &e {
            GameError::Rules(r) if r.reason == "VARIANT_FAULT" => Code::Internal,
            GameError::Rules(r) if r.reason == "INVALID_INPUT" => Code::Internal,
            GameError::Rules(r) if r.reason == "INVALID_OPTION" => Code::InvalidArgument,
            _ => Code::FailedPrecondition,
        };
        let message = match &e {
            // Never leak a plugin's internals to clients; the log has them.
            GameError::Rules(r) if code == Code::Internal => {
                tracing::error!(reason = r.reason, message = %r.message, "variant failure");
                "the variant failed; this game cannot go on until its plugin is fixed".to_string()
            }
            other => other.to_string(),
        };
        ApiError::new(code, e.reason(), message)
    }
}

impl From<ApiError> for Status {
    fn from(e: ApiError) -> Status {
        Status::with_error_details(
            e.code,
            e.message,
            ErrorDetails::with_error_info(e.reason, DOMAIN, e.metadata),
        )
    }
}
