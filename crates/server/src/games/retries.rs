//! Retries: a request id recorded with the version its action produced
//! (or the game NewGame created), so a retry is answered as first, the
//! game at that version, and never applied twice.

use bg_api::v1 as pb;
use bg_engine::Seat;
use bg_store::{Answer, GameStore, RequestRecord};
use prost::Message;
use sha2::{Digest, Sha256};
use tonic::Code;

use super::cache::Live;
use super::seats::seat_token;
use super::{Games, corrupt};
use crate::convert;
use crate::error::ApiError;
use crate::fields::Fields;

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

/// What the store keeps of a request's fingerprint: 128 bits of a digest
/// of it, enough to tell another request apart.
pub(super) fn kept(fingerprint: &[u8]) -> Vec<u8> {
    Sha256::digest(fingerprint)[..16].to_vec()
}

/// Whether a recorded request is this one (rows of older servers kept the
/// fingerprint whole).
pub(super) fn is_same(previous: &RequestRecord, fingerprint: &[u8]) -> bool {
    previous.fingerprint == kept(fingerprint) || previous.fingerprint == fingerprint
}

/// Refuses a request id already used for another request.
fn same_request(previous: &RequestRecord, fingerprint: &[u8]) -> Result<(), ApiError> {
    if !is_same(previous, fingerprint) {
        return Err(ApiError::new(
            Code::InvalidArgument,
            "REQUEST_ID_REUSED",
            "this request_id was used for another request",
        )
        .with("field", "request_id"));
    }
    Ok(())
}

/// A recorded answer of the wrong kind for its scope.
fn misplaced(previous: &RequestRecord) -> ApiError {
    corrupt(format!(
        "request {:?} of {} has an answer of another kind",
        previous.request_id, previous.scope
    ))
}

impl<S: GameStore> Games<S> {
    /// The first answer to a retried action, if it is the same request:
    /// the game at the version the action produced, from `live` (the game
    /// as this server holds it), rebuilt if the game has moved on since.
    pub(super) async fn answer_again(
        &self,
        live: &Live,
        previous: &RequestRecord,
        fingerprint: &[u8],
        fields: &Fields,
    ) -> Result<pb::Game, ApiError> {
        same_request(previous, fingerprint)?;
        match &previous.answer {
            Answer::Version(version) if *version > live.record.version => {
                // Only a copy another server moved past can be behind its
                // own answers: the caller reads the game again.
                Err(ApiError::new(
                    Code::Aborted,
                    "VERSION_MISMATCH",
                    "the game moved on on another server",
                ))
            }
            Answer::Version(version) => self.at_version(live, *version).await?.view(fields),
            Answer::Response(bytes) => {
                let mut game = pb::Game::decode(bytes.as_slice()).map_err(corrupt)?;
                convert::keep_only(&mut game, fields);
                Ok(game)
            }
            Answer::Created(_) => Err(misplaced(previous)),
        }
    }

    /// The first answer to a retried NewGame, with its tokens derived again.
    pub(super) async fn replay_new_game(
        &self,
        previous: &RequestRecord,
        fingerprint: &[u8],
    ) -> Result<pb::NewGameResponse, ApiError> {
        same_request(previous, fingerprint)?;
        let mut response = match &previous.answer {
            Answer::Created(game_id) => {
                let slot = self.slot(game_id);
                let mut guard = slot.live.lock().await;
                let live = self.fresh(&slot, &mut guard, game_id).await?;
                pb::NewGameResponse {
                    game: Some(self.at_version(live, 1).await?.snapshot()?),
                    ..Default::default()
                }
            }
            Answer::Response(bytes) => {
                pb::NewGameResponse::decode(bytes.as_slice()).map_err(corrupt)?
            }
            Answer::Version(_) => return Err(misplaced(previous)),
        };
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
