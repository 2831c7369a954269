//! Seat tokens: derived from the server's key, the game and the seat,
//! never stored (only their hashes are); a token tells its seat.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bg_engine::Seat;
use sha2::{Digest, Sha256};

use super::cache::Live;
use crate::error::{ApiError, Reason};

pub(super) fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// A seat's token: derived from the server's secret, the game and the
/// seat, so it is never stored and a retried NewGame can be answered
/// again without keeping tokens anywhere.
pub(super) fn seat_token(secret: &[u8; 32], game_id: &str, seat: Seat) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(b"backgammon seat token v1\0");
    mac.update(game_id.as_bytes());
    mac.update(&[0, seat as u8]);
    URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// Equal in time independent of where the inputs differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Live {
    /// The seat a token belongs to.
    pub(super) fn seat(&self, token: Option<&str>) -> Result<Seat, ApiError> {
        let token = token.ok_or_else(|| {
            ApiError::new(
                Reason::TokenMissing,
                "actions need a seat token: metadata `authorization: Bearer <token>`",
            )
        })?;
        let hash = token_hash(token);
        for seat in Seat::BOTH {
            if same(&hash, &self.record.token_hashes[seat.index()]) {
                return Ok(seat);
            }
        }
        Err(ApiError::new(
            Reason::TokenInvalid,
            "this token belongs to no seat of this game",
        ))
    }
}
