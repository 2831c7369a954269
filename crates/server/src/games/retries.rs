//! Retries: a request id recorded with the version its action produced
//! (or the game NewGame created), so a retry is answered as first, the
//! game at that version, and never applied twice.

use bg_api::v1 as pb;
use bg_engine::Seat;
use bg_store::{Answer, GameStore, RequestRecord};
use prost::Message;
use sha2::{Digest, Sha256};

use super::cache::Live;
use super::seats::{seat_token, token_hash};
use super::{Games, corrupt};
use crate::convert;
use crate::error::{ApiError, Reason};
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

/// The fewest distinct characters a NewGame request id may have. A
/// random id of 16 hexadecimal digits has fewer with a probability below
/// one in two million (32 digits, a UUID's: below 1e-15); `0000...`,
/// `abababab...` have one or two.
pub const MIN_NEW_GAME_ID_CHARACTERS: usize = 5;

/// A NewGame request id answers a retry with both seat tokens, so it must
/// be one nobody can guess: at least [`MIN_NEW_GAME_REQUEST_ID`]
/// characters, at least [`MIN_NEW_GAME_ID_CHARACTERS`] distinct ones, and,
/// when it is written as a UUID (with hyphens), a random one (version 4, or 7 whose 74
/// bits after the time are random), not the nil UUID or a time-and-MAC
/// one (version 1). Empty: no retries.
pub fn check_new_game_request_id(request_id: &str) -> Result<(), ApiError> {
    check_request_id(request_id)?;
    if request_id.is_empty() {
        return Ok(());
    }
    let refuse = |why: &str| {
        Err(ApiError::invalid(
            "request_id",
            format!(
                "a NewGame request_id must be random, as a UUID4 is ({why}): a retry answers with the seat tokens"
            ),
        ))
    };
    if request_id.len() < MIN_NEW_GAME_REQUEST_ID {
        return refuse(&format!(
            "at least {MIN_NEW_GAME_REQUEST_ID} characters; this one has {}",
            request_id.len()
        ));
    }
    let mut seen: Vec<char> = request_id.chars().collect();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() < MIN_NEW_GAME_ID_CHARACTERS {
        return refuse(&format!(
            "at least {MIN_NEW_GAME_ID_CHARACTERS} distinct characters; this one has {}",
            seen.len()
        ));
    }
    // Written with hyphens, an id says it is a UUID (32 hex digits alone
    // may be any random hex string).
    if request_id.contains('-')
        && let Ok(uuid) = uuid::Uuid::try_parse(request_id)
        && !(matches!(uuid.get_version_num(), 4 | 7)
            && uuid.get_variant() == uuid::Variant::RFC4122)
    {
        return refuse("a UUID here must be of version 4 or 7");
    }
    Ok(())
}

/// The request id under which a NewGame is recorded: the caller's own
/// when it showed a client certificate (`caller`), so that another caller
/// sending the same id gets a game of its own, never this one and its
/// tokens. The separator is a control character, which no request id may
/// hold: a scoped id never equals one sent without a certificate.
pub fn new_game_record_id(caller: Option<&str>, request_id: &str) -> String {
    match caller {
        Some(caller) => format!("{caller}\u{1f}{request_id}"),
        None => request_id.to_string(),
    }
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

/// Whether a recorded request is this one (rows of the format before
/// digests kept the fingerprint whole).
pub(super) fn is_same(previous: &RequestRecord, fingerprint: &[u8]) -> bool {
    previous.fingerprint == kept(fingerprint) || previous.fingerprint == fingerprint
}

/// Refuses a request id already used for another request.
fn same_request(previous: &RequestRecord, fingerprint: &[u8]) -> Result<(), ApiError> {
    if !is_same(previous, fingerprint) {
        return Err(ApiError::new(
            Reason::RequestIdReused,
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
                    Reason::VersionMismatch,
                    "the game moved on on another server",
                ))
            }
            Answer::Version(version) => {
                let then = self.at_version(live, *version).await?;
                self.view(&then, fields).await
            }
            Answer::Response(bytes) => {
                let mut game = pb::Game::decode(bytes.as_slice()).map_err(corrupt)?;
                convert::to_api::keep_only(&mut game, fields);
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
                let first = self.at_version(live, 1).await?;
                pb::NewGameResponse {
                    game: Some(self.snapshot(&first).await?),
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
        // Derived again from this server's key: the game's own tokens only
        // if the key has not been rotated since the game began.
        let slot = self.slot(&game_id);
        let mut guard = slot.live.lock().await;
        let live = self.fresh(&slot, &mut guard, &game_id).await?;
        if token_hash(&response.white_token) != live.record.token_hashes[Seat::White.index()] {
            return Err(ApiError::new(
                Reason::AnswerUnavailable,
                "this NewGame was answered under the server's previous token key (rotated since): its seat tokens cannot be given again; the tokens first given still work",
            ));
        }
        no_tokens_for_bots(&mut response);
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

/// A seat the service plays has no token: nobody may act for it.
pub(super) fn no_tokens_for_bots(response: &mut pb::NewGameResponse) {
    let bots = response
        .game
        .as_ref()
        .map(|g| g.bots.clone())
        .unwrap_or_default();
    for bot in bots {
        match pb::Seat::try_from(bot.seat) {
            Ok(pb::Seat::White) => response.white_token.clear(),
            Ok(pb::Seat::Black) => response.black_token.clear(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_game_id_must_look_random() {
        for refused in [
            "0000000000000000",
            "aaaaaaaaaaaaaaaaaaaaaaaaab",
            "abcdabcdabcdabcdabcd",
            "0123456789abcde",
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "c232ab00-9414-11ec-b3c8-9f6bdeced846",
            "{c232ab00-9414-11ec-b3c8-9f6bdeced846}",
        ] {
            assert!(check_new_game_request_id(refused).is_err(), "{refused}");
        }
        for taken in [
            "",
            "01234abcde012345",
            "7d444840-9dc0-41db-9b6c-4a8e3a4e1b2f",
            "7D4448409DC041DB9B6C4A8E3A4E1B2F",
            "c232ab00941411ecb3c89f6bdeced846",
            "018f3a6c-1b2e-7c3d-9e4f-5a6b7c8d9e0f",
        ] {
            assert!(check_new_game_request_id(taken).is_ok(), "{taken}");
        }
    }

    #[test]
    fn a_certified_callers_new_game_ids_never_meet_another_callers() {
        let id = "7d444840-9dc0-41db-9b6c-4a8e3a4e1b2f";
        assert_eq!(new_game_record_id(None, id), id);
        let a = new_game_record_id(Some("cert:aa"), id);
        let b = new_game_record_id(Some("cert:bb"), id);
        assert_ne!(a, b);
        // No id sent without a certificate can be a scoped one: those
        // hold a control character, which request ids may not.
        assert!(check_request_id(&a).is_err());
    }
}
