//! Pure game logic shared by every variant of the backgammon family.
//!
//! This crate owns the vocabulary the rest of the workspace speaks:
//! [`Seat`], [`Board`], [`Dice`], [`Move`], [`Play`], [`LegalPlay`],
//! the gnubg [`position_id`] and [`match_id`] encodings, and eXtreme
//! Gammon's [`xgid`], and a match [`clock`]'s arithmetic.
//!
//! It must never do I/O, read the clock, draw random numbers or know the
//! rules of a particular variant beyond what all of them share (24 points,
//! 15 checkers a side, a bar and an "off" tray). The board types are
//! `#[repr(C)]` because they cross the plugin boundary unchanged on the hot
//! path (see `bg-variant-api`).

mod board;
pub mod clock;
mod dice;
pub mod game;
pub mod match_id;
mod play;
pub mod position_id;
pub mod xgid;

pub use board::{BAR, Board, BoardError, CHECKERS, Geometry, OFF, POINTS, Seat};
pub use dice::{Dice, DiceError};
pub use play::{LegalPlay, MAX_MOVES, Move, Play, PlayParseError};
