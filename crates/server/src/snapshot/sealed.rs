//! The server seed of a match in progress, sealed at rest (format 6).
//! With it anyone would predict every die still to come, so a copy of
//! the database (a backup, a PostgreSQL dump, a `games.db` carried off)
//! must not hold it: the stored snapshot keeps it encrypted with
//! ChaCha20-Poly1305 (RFC 8439, RustCrypto's `chacha20poly1305`) under a
//! key that is not in the database: derived from the server's token key
//! (the key file beside the database, or the one the operator gives;
//! replicas share it), for this use only. The game id is the associated
//! data, so a sealed seed moved to another game does not open.
//!
//! Stored as `sealed1:` and the base64 of a random 12-byte nonce and the
//! ciphertext with its tag. Once the match is over the seed is revealed
//! (provably fair dice require it) and stored in the clear, as before.

use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hmac::Mac;
use rand::RngCore;

/// The prefix of a sealed seed (a plain one is hex).
pub const PREFIX: &str = "sealed1:";

/// The key seeds are sealed with (never shown).
#[derive(Clone)]
pub struct SeedKey(Key);

impl std::fmt::Debug for SeedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SeedKey(..)")
    }
}

impl SeedKey {
    /// The key of the server's token key, for sealing seeds only.
    pub fn derive(secret: &[u8; 32]) -> SeedKey {
        let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(secret)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(b"backgammon/dice-seeds/chacha20poly1305/v1");
        SeedKey(mac.finalize().into_bytes())
    }
}

/// The game a seed is sealed for, and the key: what sealing and opening
/// need.
#[derive(Clone, Copy, Debug)]
pub struct Seal<'a> {
    pub key: &'a SeedKey,
    pub game_id: &'a str,
}

impl Seal<'_> {
    /// `seed` (hex) sealed.
    pub fn seal(&self, seed: &str) -> String {
        let cipher = ChaCha20Poly1305::new(&self.key.0);
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let sealed = cipher
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: seed.as_bytes(),
                    aad: self.game_id.as_bytes(),
                },
            )
            .unwrap_or_else(|_| unreachable!("a 32-byte seed always encrypts"));
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        format!("{PREFIX}{}", STANDARD_NO_PAD.encode(bytes))
    }

    /// The seed (hex) of a stored one: opened if sealed, as it is if not
    /// (stored before sealing, or revealed).
    pub fn open(&self, stored: &str) -> Result<String, String> {
        let Some(encoded) = stored.strip_prefix(PREFIX) else {
            return Ok(stored.to_string());
        };
        let bytes = STANDARD_NO_PAD
            .decode(encoded)
            .map_err(|_| "a sealed server seed that is not base64".to_string())?;
        let (nonce, sealed) = bytes
            .split_at_checked(12)
            .ok_or_else(|| "a sealed server seed too short".to_string())?;
        let nonce: [u8; 12] = nonce
            .try_into()
            .map_err(|_| "a sealed server seed too short".to_string())?;
        let opened = ChaCha20Poly1305::new(&self.key.0)
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: sealed,
                    aad: self.game_id.as_bytes(),
                },
            )
            .map_err(|_| {
                "the server seed does not open with this server's key (another token key, or damaged)"
                    .to_string()
            })?;
        String::from_utf8(opened).map_err(|_| "a sealed server seed that is not text".to_string())
    }
}

/// Whether a stored snapshot holds a server seed in the clear (one to
/// seal, if its match is in progress).
pub fn holds_plain_seed(state: &str) -> bool {
    state.contains("\"server_seed\":\"") && !state.contains(&format!("\"server_seed\":\"{PREFIX}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_seed_opens_only_with_its_key_and_game() {
        let key = SeedKey::derive(&[7; 32]);
        let seed = "ab".repeat(32);
        let sealed = Seal {
            key: &key,
            game_id: "g1",
        }
        .seal(&seed);
        assert!(sealed.starts_with(PREFIX) && !sealed.contains(&seed));
        let open = |key: &SeedKey, game_id| Seal { key, game_id }.open(&sealed);
        assert_eq!(open(&key, "g1").unwrap(), seed);
        assert!(open(&key, "g2").is_err(), "moved to another game");
        assert!(
            open(&SeedKey::derive(&[8; 32]), "g1").is_err(),
            "another key"
        );
        // Two sealings of one seed differ (a fresh nonce each).
        assert_ne!(
            sealed,
            Seal {
                key: &key,
                game_id: "g1"
            }
            .seal(&seed)
        );
        // A plain one reads as it is.
        assert_eq!(open(&key, "g1").unwrap(), seed);
        assert_eq!(
            Seal {
                key: &key,
                game_id: "g1"
            }
            .open(&seed)
            .unwrap(),
            seed
        );
        // Damaged: refused, never a panic.
        for bad in [
            "sealed1:",
            "sealed1:!!",
            "sealed1:AAAA",
            &sealed[..sealed.len() - 2],
        ] {
            assert!(
                Seal {
                    key: &key,
                    game_id: "g1"
                }
                .open(bad)
                .is_err(),
                "{bad}"
            );
        }
    }
}
