//! Provably fair dice: a commitment scheme that lets anyone check, once a
//! match is over, that every die the server threw was fixed before the
//! match began and mixed with the seats' own seeds.
//!
//! This crate owns the scheme (the seed, its commitment, the derivation
//! of each die, the check, a match record's dice read and checked) and
//! nothing else: it never knows a board, a variant's rules or a store. The server keeps the state ([`FairDice`]) beside the
//! game; `bgctl verify` checks a finished match's record with
//! [`record::record`] (its JSON read, then [`verify`]).
//!
//! # The scheme (`hmac-sha256/v1`)
//!
//! 1. At NewGame the server draws a secret **server seed** of 32 bytes from
//!    the operating system's CSPRNG and publishes its **commitment**,
//!    `SHA-256(server seed)` in hex, in every snapshot of the match.
//! 2. Each seat may give a **seat seed** (any text up to
//!    [`MAX_SEAT_SEED_BYTES`] bytes, empty for none): when the match is
//!    created, or later (once it has seen the commitment) with one of its
//!    rolls or moves. A seed applies from the next die to be thrown, numbered
//!    `from` (0 for one given at creation); dice before it are derived
//!    with that seat's seed empty. Seeds and their `from` are public.
//! 3. The match's dice form one sequence, numbered from 0 in the order the
//!    server throws them: opening throws and their ties, automatic
//!    doubles, every roll (by the seat or auto-rolled), re-rolls. Die
//!    number `n` is
//!
//!    ```text
//!    for c = 0, 1, 2, ...:
//!        block = HMAC-SHA256(key = server seed,
//!                            "backgammon-dice/v1" 0x00
//!                            || u64be(n) || u32be(c)
//!                            || u32be(len(white seed)) || white seed
//!                            || u32be(len(black seed)) || black seed)
//!        (a seat's seed is empty for a die numbered below its `from`)
//!        for each byte b of block: if b < 252, the die is b mod 6 + 1
//!    ```
//!
//!    (252 is the largest multiple of 6 below 256: bytes 252-255 are
//!    skipped so that each face has probability exactly 1/6; a whole block
//!    of them, chance 2^-192, moves on to the next `c`.) HMAC (RFC 2104)
//!    over SHA-256 (FIPS 180-4) is a pseudo-random function keyed by the
//!    server seed: without it the dice cannot be predicted from the seeds.
//! 4. When the match ends, the server reveals the server seed in the
//!    snapshot and in the match record; anyone can check that it hashes to
//!    the commitment and derive every die again ([`verify`]).
//!
//! What it proves: the server fixed all the dice of the match before the
//! first throw (it cannot choose later dice after seeing the play), and
//! the dice after a seed a seat gave once it had seen the commitment are
//! mixed with a value the server could not know when it chose its seed.
//! What it does not: the server knows every die before the players do (it
//! holds the seed), so it must still be trusted not to tell anyone; seeds
//! given in the request that creates the match reach the server before it
//! commits (a dishonest server could try seeds until it liked the dice);
//! and seat seeds given by the service that creates the match are only as
//! independent as that service.

pub use bg_engine::Seat;
pub mod record;

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

/// The scheme's name, as records and snapshots carry it.
pub const SCHEME: &str = "hmac-sha256/v1";
/// The longest seat seed, in bytes.
pub const MAX_SEAT_SEED_BYTES: usize = 256;
/// Bytes below this give a die (a multiple of 6: no face is favoured).
const ACCEPTED_BELOW: u8 = 252;
const DOMAIN: &[u8] = b"backgammon-dice/v1\0";

/// The server's secret seed for one match.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ServerSeed(pub [u8; 32]);

impl std::fmt::Debug for ServerSeed {
    /// Never prints the seed: it is secret until the match ends.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerSeed(commitment {})", self.commitment())
    }
}

impl ServerSeed {
    /// A new seed from the operating system's CSPRNG.
    pub fn generate() -> ServerSeed {
        let mut seed = [0u8; 32];
        rand::fill(&mut seed);
        ServerSeed(seed)
    }

    /// `SHA-256(seed)`, in lower-case hex: what the server publishes.
    pub fn commitment(&self) -> String {
        hex::encode(Sha256::digest(self.0))
    }

    /// The seed in lower-case hex: what the server reveals at the end.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    pub fn from_hex(text: &str) -> Result<ServerSeed, VerifyError> {
        let bytes = unhex(text).ok_or(VerifyError::BadSeed)?;
        Ok(ServerSeed(
            bytes.try_into().map_err(|_| VerifyError::BadSeed)?,
        ))
    }
}

/// One seat's seed: any text (empty for none), and the number of the
/// first die it applies to (0 for a seed given when the match was
/// created; a seed given with a later roll applies from that roll's first
/// die, and the dice before it were derived without it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeatSeed {
    pub seed: String,
    pub from: u64,
}

impl SeatSeed {
    /// The seed's text as die number `n` uses it: empty before `from`.
    fn for_die(&self, n: u64) -> &[u8] {
        if n >= self.from {
            self.seed.as_bytes()
        } else {
            &[]
        }
    }
}

/// The seats' seeds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeatSeeds {
    pub white: SeatSeed,
    pub black: SeatSeed,
}

/// Why a seat seed is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    #[error("the {0} seed is longer than {MAX_SEAT_SEED_BYTES} bytes")]
    TooLong(Seat),
    #[error("{0} has given a seed already: a seat gives one a match")]
    AlreadyGiven(Seat),
}

impl SeedError {
    /// The seat whose seed is refused.
    pub fn seat(&self) -> Seat {
        match self {
            SeedError::TooLong(seat) | SeedError::AlreadyGiven(seat) => *seat,
        }
    }
}

impl SeatSeeds {
    /// Seeds given when the match is created (they apply from die 0),
    /// within [`MAX_SEAT_SEED_BYTES`].
    pub fn new(white: &str, black: &str) -> Result<SeatSeeds, SeedError> {
        let mut seeds = SeatSeeds::default();
        seeds.give(Seat::White, white, 0)?;
        seeds.give(Seat::Black, black, 0)?;
        Ok(seeds)
    }

    pub fn of(&self, seat: Seat) -> &SeatSeed {
        match seat {
            Seat::White => &self.white,
            Seat::Black => &self.black,
        }
    }

    pub fn of_mut(&mut self, seat: Seat) -> &mut SeatSeed {
        match seat {
            Seat::White => &mut self.white,
            Seat::Black => &mut self.black,
        }
    }

    /// `seat`'s seed, applying from die number `from`. A seat gives one
    /// seed at most (an empty one is none).
    pub fn give(&mut self, seat: Seat, seed: &str, from: u64) -> Result<(), SeedError> {
        if seed.len() > MAX_SEAT_SEED_BYTES {
            return Err(SeedError::TooLong(seat));
        }
        let slot = self.of_mut(seat);
        if !slot.seed.is_empty() {
            return Err(SeedError::AlreadyGiven(seat));
        }
        if !seed.is_empty() {
            *slot = SeatSeed {
                seed: seed.to_string(),
                from,
            };
        }
        Ok(())
    }
}

/// Die number `n` of the match (see the crate's documentation).
pub fn die(server: &ServerSeed, seeds: &SeatSeeds, n: u64) -> u8 {
    let mut base = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(&server.0)
        .expect("HMAC takes a key of any length");
    base.update(DOMAIN);
    base.update(&n.to_be_bytes());
    for c in 0u32.. {
        let mut mac = base.clone();
        mac.update(&c.to_be_bytes());
        for seed in [seeds.white.for_die(n), seeds.black.for_die(n)] {
            mac.update(&(seed.len() as u32).to_be_bytes());
            mac.update(seed);
        }
        let block = mac.finalize().into_bytes();
        if let Some(b) = block.iter().find(|&&b| b < ACCEPTED_BELOW) {
            return b % 6 + 1;
        }
    }
    unreachable!("some block has a byte below 252")
}

/// A match's dice: its seeds, and how many dice it has thrown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FairDice {
    pub server: ServerSeed,
    pub seeds: SeatSeeds,
    /// Dice thrown so far: the number of the next die.
    pub thrown: u64,
}

impl FairDice {
    /// A new match's dice, with a fresh server seed.
    pub fn new(seeds: SeatSeeds) -> FairDice {
        FairDice {
            server: ServerSeed::generate(),
            seeds,
            thrown: 0,
        }
    }

    /// `seat`'s seed, given now: it applies from the next die.
    pub fn give_seed(&mut self, seat: Seat, seed: &str) -> Result<(), SeedError> {
        self.seeds.give(seat, seed, self.thrown)
    }

    /// The next die.
    pub fn next_die(&mut self) -> u8 {
        let die = die(&self.server, &self.seeds, self.thrown);
        self.thrown += 1;
        die
    }
}

/// Why a record's dice do not check out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("the server seed is not 64 hex digits")]
    BadSeed,
    #[error("the revealed server seed does not hash to the commitment {commitment}")]
    Commitment { commitment: String },
    #[error("die {n} (counting from 0) was {recorded}; the seeds give {derived}")]
    Die { n: u64, recorded: u8, derived: u8 },
}

/// Checks a finished match: the revealed `server_seed` (hex) hashes to
/// `commitment`, and `dice`, every die thrown in order, are the ones the
/// seeds give. The first die that differs is named.
pub fn verify(
    commitment: &str,
    server_seed: &str,
    seeds: &SeatSeeds,
    dice: &[u8],
) -> Result<(), VerifyError> {
    let server = ServerSeed::from_hex(server_seed)?;
    if !server.commitment().eq_ignore_ascii_case(commitment.trim()) {
        return Err(VerifyError::Commitment {
            commitment: commitment.to_string(),
        });
    }
    for (n, &recorded) in dice.iter().enumerate() {
        let derived = die(&server, seeds, n as u64);
        if derived != recorded {
            return Err(VerifyError::Die {
                n: n as u64,
                recorded,
                derived,
            });
        }
    }
    Ok(())
}

/// Hex of either case, surrounding whitespace ignored.
fn unhex(text: &str) -> Option<Vec<u8>> {
    hex::decode(text.trim()).ok()
}

#[cfg(test)]
mod tests;
