//! A computer player for the variants on the standard board: a small
//! neural net that evaluates a position, as TD-Gammon did (trained by
//! self-play with temporal-difference learning, in `bg-bot-train`); the
//! search above it (0-ply and 1-ply, [`search`]), the cube ([`cube`]) and
//! the player of a seat ([`act`]); and the players of duels ([`player`]):
//! the same search as the service's seat, and the random and one-ply
//! heuristic players it is measured against. One pipeline: the bot seat,
//! `Hint`, `AnalyzeMatch`, the duels and the trainer all choose through
//! [`act::choose_play`] and [`search::rank`]. In a variant scored during
//! play (tric-trac) the net also reads the scoreboard, and a play is
//! valued by the state it leads to.
//!
//! Why TD(0) self-play rather than rollout-supervised training (wildbg's
//! way): it needs nothing but the rules, it learns the variant's own win
//! levels from the games' outcomes, and a small net reaches an
//! intermediate strength in minutes on one core (Tesauro, "Temporal
//! Difference Learning and TD-Gammon", CACM 38(3), 1995); rollouts need a
//! player worth rolling out first, which this is.
//!
//! The crate is generic over [`bg_variant_api::Variant`]: it asks the
//! variant for legal plays and outcomes and never knows its rules. It must
//! never read dice not yet thrown, nor know the network or storage.

pub mod act;
pub mod cube;
pub mod cube_examples;
pub mod encode;
pub mod level;
pub mod met;
pub mod net;
pub mod player;
pub mod scored;
pub mod search;

pub use net::Net;

/// The trained net of a variant, as committed (`weights/VARIANT.bgnet`,
/// built into this crate), or `None` for a variant without one yet.
pub fn trained(variant: &str) -> Option<Net> {
    let bytes: &[u8] = match variant {
        "standard" => include_bytes!("../weights/standard.bgnet"),
        "hypergammon" => include_bytes!("../weights/hypergammon.bgnet"),
        "caucasian" => include_bytes!("../weights/caucasian.bgnet"),
        "plakoto" => include_bytes!("../weights/plakoto.bgnet"),
        "trictrac" => include_bytes!("../weights/trictrac.bgnet"),
        "long_nardy" => include_bytes!("../weights/long_nardy.bgnet"),
        "fevga" => include_bytes!("../weights/fevga.bgnet"),
        _ => return None,
    };
    Net::from_bytes(bytes).ok()
}
