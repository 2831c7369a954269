//! Retries: a request id recorded with the answer it got, so a retry is
//! answered as first and never applied twice.

use bg_api::v1 as pb;
use bg_engine::Seat;
use bg_store::{GameStore, RequestRecord};
use prost::Message;
use sha2::{Digest, Sha256};
use tonic::Code;

use super::seats::seat_token;
use super::{Games, corrupt};
use crate::error::ApiError;

/// The shortest NewGame request id accepted (a UUID has 36 characters).
pub const MIN_NEW_GAME_REQUEST_ID: usize = 16;

/// The longest request id accepted, in bytes (a UUID has 36).
pub const MAX_REQUEST_ID: usize = 128;

/// A request id is stored with its answer: at most [`MAX_REQUEST_ID`]
/// bytes, and no control characters (which no store need take).
pub fn check_request_id(request_id: &str) -> Result<(), ApiError> {
    if request_id.len() > MAX_REQUEST_ID || request_id.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            "request_id",
            format!(
                "a request_id is at most {MAX_REQUEST_ID} bytes, without control characters (a UUID is what to send)"
            ),
        ));
    }
    Ok(())
}

/// SHA-256 of a request's method and bytes.
pub fn fingerprint(method: &str, message: &impl Message) -> Vec<u8> {
    let mut hash = Sha256::new();
    hash.update(method.as_bytes());
    hash.update(message.encode_to_vec());
    hash.finalize().to_vec()
}

/// The stored answer to a retried request, if it is the same request.
pub(super) fn replay<M: Message + Default>(
    previous: &RequestRecord,
    fingerprint: &[u8],
) -> Result<M, ApiError> {
    if previous.fingerprint != fingerprint {
        return Err(ApiError::new(
            Code::InvalidArgument,
            "REQUEST_ID_REUSED",
            "this request_id was used for another request",
        )
        .with("field", "request_id"));
    }
    M::decode(previous.response.as_slice()).map_err(corrupt)
}

impl<S: GameStore> Games<S> {
    /// The first answer to a retried NewGame, with its tokens derived again.
    pub(super) fn replay_new_game(
        &self,
        previous: &RequestRecord,
        fingerprint: &[u8],
    ) -> Result<pb::NewGameResponse, ApiError> {
        let mut response: pb::NewGameResponse = replay(previous, fingerprint)?;
        let game_id = response
            .game
            .as_ref()
            .map(|g| g.game_id.clone())
            .unwrap_or_default();
        response.white_token = seat_token(&self.secret, &game_id, Seat::White);
        response.black_token = seat_token(&self.secret, &game_id, Seat::Black);
        Ok(response)
    }

    /// The stored answer to a request id already used in `scope`.
    pub(super) async fn previous_answer(
        &self,
        scope: &str,
        request_id: &str,
    ) -> Result<Option<RequestRecord>, ApiError> {
        if request_id.is_empty() {
            return Ok(None);
        }
        self.store
            .request(scope, request_id)
            .await
            .map_err(ApiError::store)
    }
}
