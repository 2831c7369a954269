//! Drawing for a terminal: the board and the state of play ([`render`],
//! [`render_after`]), clocks, scoreboards, the settings in effect, and
//! what happened in players' words ([`words`]). It reads the API's
//! messages only: nothing here talks to a server or reads the tokens file.

mod board;
mod clock;
mod fleet;
mod scoreboard;
mod settings;
pub mod words;

use bg_api::v1 as pb;

pub use board::{render, render_after};
pub use fleet::{match_event, summary, webhook_delivery, webhook_endpoint};
pub use settings::in_effect;

/// A seat as players name it (`-` for none).
pub fn seat_name(seat: i32) -> &'static str {
    match pb::Seat::try_from(seat) {
        Ok(pb::Seat::White) => "white",
        Ok(pb::Seat::Black) => "black",
        _ => "-",
    }
}

/// A phase as the board shows it after `phase:`.
pub fn phase_name(phase: i32) -> &'static str {
    match pb::Phase::try_from(phase) {
        Ok(pb::Phase::Roll) => "roll",
        Ok(pb::Phase::Move) => "move",
        Ok(pb::Phase::CubeOffered) => "cube offered",
        Ok(pb::Phase::ResignationOffered) => "resignation offered",
        Ok(pb::Phase::Decision) => "decision",
        Ok(pb::Phase::MatchOver) => "match over",
        _ => "?",
    }
}

/// The geometry of a game's board (opposed when the answer leaves it out).
pub fn geometry(game: &pb::Game) -> bg_engine::Geometry {
    match game.geometry() {
        pb::Geometry::SameWay => bg_engine::Geometry::SameWay,
        _ => bg_engine::Geometry::Opposed,
    }
}

/// The last eight characters of a game id: random in the ids the server
/// makes, a short name for the game in the tokens file.
pub fn id_end(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    chars[chars.len().saturating_sub(8)..].iter().collect()
}
