//! The stored game format: the text the server writes into a game's
//! snapshot row (its `state`) and start position (`start_board`), which
//! every store, SQLite and PostgreSQL, keeps as it is.
//!
//! The format has types of its own, with field names fixed in
//! [`formats_0_to_5`] (stored formats 0 to 5), and a version in every
//! snapshot. The engine's types are converted to and from them in
//! `convert.rs` only, so renaming or reshaping a field of the engine's
//! `Match` changes the conversions, never a stored game; changing the
//! stored types means a new format version, with a migration from the
//! older ones in [`decode`].
//!
//! **Format 6** (the current one): format 4 or 5 with the server seed of
//! a match in progress sealed (`"server_seed": "sealed1:..."`, see
//! [`sealed`]). Written for every match with verifiable dice still in
//! progress; a match over is written as before (its seed revealed), in
//! format 4 or 5.
//!
//! **Format 5**: format 4 and, in the settings, the
//! seats the service plays (`"bots": [{"seat", "level"}]`) and `hints`.
//! Only a match with a seat played by the service is written in format
//! 5; the others are written in format 4, which older servers read.
//!
//! **Format 4**: format 3 and, for a match with a
//! clock, `"clock":` [`stored::Clock`] (its settings, each seat's reserve,
//! the seat whose time runs and since when); a game result's reason may
//! be `time`.
//!
//! **Format 3**: `{"format": 3, "match": MATCH, "dice":
//! DICE}`, where MATCH is the object described by [`stored::Match`], with the
//! settings' `auto_roll`, and DICE, left out for a match whose dice come
//! from the server's CSPRNG alone, is [`stored::FairDice`]: the secret server
//! seed of a match with verifiable dice, the seats' seeds and the dice
//! thrown so far. The server seed is in the stored game only: snapshots
//! sent to clients show it once the match is over.
//!
//! **Format 2**: the same without `dice` (every game before verifiable
//! dice).
//!
//! **Format 1**: the same without `auto_roll` (games made before it: read
//! with auto-roll off, as they were played).
//!
//! **Format 0** (games stored before formats had versions): MATCH alone,
//! with the same fields as format 1. It is read as format 1.
//!
//! A start position is [`stored::Board`], without an envelope (its shape has
//! not changed since positions were first stored): every game of the
//! match starts from it. A match taken up at a position, score and cube
//! (from a Match ID or an XGID) is stored as `{"taken_up":`
//! [`stored::TakenUp`]`}`: its first game only starts there.

use bg_engine::Board;
use bg_engine::clock::Clock;
use bg_engine::game::Match;
use bg_fair_dice::FairDice;

mod convert;
pub mod formats_0_to_5;
pub mod sealed;
#[cfg(test)]
mod tests;

use formats_0_to_5 as stored;
pub use sealed::{Seal, SeedKey};

/// The format written.
pub const FORMAT: u32 = 6;

/// Why a stored snapshot cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("not a stored game: {0}")]
    Malformed(#[from] serde_json::Error),
    #[error(
        "stored in format {0}, newer than this server reads (up to {FORMAT}): upgrade the server"
    )]
    Newer(u64),
    #[error("not a stored game: {0}")]
    Invalid(String),
}

/// A match as stored (format 4, 5 or 6), with its verifiable dice and
/// its clock if it has them; the server seed of a match in progress
/// sealed for its game (`seal`).
pub fn encode(
    game: &Match,
    dice: Option<&FairDice>,
    clock: Option<&Clock>,
    seal: Seal,
) -> Result<String, serde_json::Error> {
    let over = game.phase == bg_engine::game::Phase::MatchOver;
    let dice = dice.map(|d| {
        let mut stored = stored::FairDice::from(d);
        if !over {
            stored.server_seed = seal.seal(&stored.server_seed);
        }
        stored
    });
    serde_json::to_string(&Envelope {
        // A sealed seed needs a server that opens it; a match the service
        // plays a seat of one that knows it; the others stay readable by
        // servers of format 4.
        format: if dice.is_some() && !over {
            FORMAT
        } else if game.settings.bots.is_empty() {
            4
        } else {
            5
        },
        game: stored::Match::from(game),
        dice,
        clock: clock.map(stored::Clock::from),
    })
}

/// A stored match: the match, its verifiable dice, its clock.
pub type Stored = (Match, Option<FairDice>, Option<Clock>);

/// A stored match, in any format this server knows, and its verifiable
/// dice if it has them (a sealed server seed opened for its game).
pub fn decode(text: &str, seal: Seal) -> Result<Stored, SnapshotError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    let (stored, dice, clock) = match value.get("format") {
        // Format 0: the match alone.
        None => (serde_json::from_value::<stored::Match>(value)?, None, None),
        Some(format) => match format.as_u64() {
            // Format 1 lacks `auto_roll`, read as off; 1 and 2 lack `dice`;
            // 1 to 3 lack `clock`; 1 to 4 lack `bots`; 1 to 5 hold no
            // sealed seed.
            Some(1..=6) => {
                let envelope = serde_json::from_value::<Envelope>(value)?;
                (envelope.game, envelope.dice, envelope.clock)
            }
            Some(newer) if newer > u64::from(FORMAT) => return Err(SnapshotError::Newer(newer)),
            _ => return Err(SnapshotError::Invalid(format!("format {format}"))),
        },
    };
    let dice = dice
        .map(|mut d| {
            d.server_seed = seal.open(&d.server_seed)?;
            FairDice::try_from(d)
        })
        .transpose()
        .map_err(SnapshotError::Invalid)?;
    Ok((
        Match::try_from(stored).map_err(SnapshotError::Invalid)?,
        dice,
        clock.map(Clock::from),
    ))
}

/// Where a match starts: a position every game starts from, or a match
/// taken up at a position, score and cube (its first game only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    EveryGame(Board),
    TakenUp(Board, bg_engine::game::Resume),
}

pub fn encode_start(start: &Start) -> Result<String, serde_json::Error> {
    match start {
        Start::EveryGame(board) => encode_board(board),
        Start::TakenUp(board, from) => serde_json::to_string(&stored::TakenUpEnvelope {
            taken_up: stored::TakenUp {
                board: stored::Board::from(board),
                score: from.score,
                cube: from.cube.value,
                cube_owner: from.cube.owner.map(stored::Seat::from),
                on_roll: from.on_roll.into(),
                crawford: from.crawford,
            },
        }),
    }
}

pub fn decode_start(text: &str) -> Result<Start, SnapshotError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    if value.get("taken_up").is_none() {
        return decode_board(text).map(Start::EveryGame);
    }
    let t = serde_json::from_value::<stored::TakenUpEnvelope>(value)?.taken_up;
    Ok(Start::TakenUp(
        Board::from(t.board),
        bg_engine::game::Resume {
            score: t.score,
            cube: bg_engine::game::Cube {
                value: t.cube,
                owner: t.cube_owner.map(bg_engine::Seat::from),
            },
            on_roll: t.on_roll.into(),
            crawford: t.crawford,
        },
    ))
}

/// A start position as stored.
pub fn encode_board(board: &Board) -> Result<String, serde_json::Error> {
    serde_json::to_string(&stored::Board::from(board))
}

pub fn decode_board(text: &str) -> Result<Board, SnapshotError> {
    let board: stored::Board = serde_json::from_str(text)?;
    Ok(Board::from(board))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Envelope {
    format: u32,
    #[serde(rename = "match")]
    game: stored::Match,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dice: Option<stored::FairDice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    clock: Option<stored::Clock>,
}
