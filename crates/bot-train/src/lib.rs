//! The computer player's training and measuring, above its player
//! (`bg_bot::player`): games between two players through a variant's own
//! rules ([`duel`]), and self-play training by temporal differences
//! ([`td`]). The `bg-bot` command (main.rs) runs them.
//!
//! This crate owns how nets are trained and measured; it must never be a
//! dependency of the service (the server plays with `bg-bot` alone), and
//! the players it measures are the service's own.

pub mod duel;
pub mod td;
