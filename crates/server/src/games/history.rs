//! A game as it stood at an earlier version, rebuilt from its log: the
//! match started again with the settings, options and start position it
//! was created with, and every logged action applied again with the dice
//! it threw. Each step must give the events the log holds; if one does
//! not (a variant plugin that now plays differently, an entry written
//! before commands were logged), the version cannot be rebuilt.
//!
//! This is how a request id's first answer is given again once the game
//! has moved on: the store keeps the version an action produced, not its
//! answer (the answer is most of an action's bytes).

use bg_engine::game::Match;
use bg_store::GameStore;
use tonic::Code;

use super::cache::Live;
use super::events::{Entry, Rethrown};
use super::{Games, unserialisable};
use crate::error::ApiError;
use crate::snapshot;

/// Why a version cannot be rebuilt.
fn not_rebuilt(version: u64, why: impl std::fmt::Display) -> ApiError {
    tracing::warn!(version, %why, "an earlier version of a game could not be rebuilt");
    ApiError::new(
        Code::FailedPrecondition,
        "ANSWER_UNAVAILABLE",
        format!(
            "this request was answered at version {version}, and the game has moved on since; that answer cannot be given again ({why}): read the game (GetGame)"
        ),
    )
}

impl<S: GameStore> Games<S> {
    /// `live`'s game as it stood at `version` (at most its own).
    pub(super) async fn at_version(&self, live: &Live, version: u64) -> Result<Live, ApiError> {
        if version == live.record.version {
            return Ok(live.clone());
        }
        let game_id = &live.record.game_id;
        let log = self
            .store
            .log_after(game_id, 0)
            .await
            .map_err(ApiError::store)?;
        let mut game: Option<Match> = None;
        let mut last_events = Vec::new();
        let mut reached = 0;
        for (n, stored) in log.iter().take_while(|e| e.version <= version).enumerate() {
            let expected = n as u64 + 1;
            if stored.version != expected {
                return Err(not_rebuilt(
                    version,
                    format!("version {expected} is not logged"),
                ));
            }
            let entry = Entry::read(stored)?;
            let Entry::Logged(logged) = &entry else {
                return Err(not_rebuilt(version, "its log predates logged commands"));
            };
            let mut dice = Rethrown::new(logged.dice.clone());
            let events = match (&mut game, logged.by, &logged.command()) {
                (None, None, None) => {
                    let settings = live.game.settings.clone();
                    let (started, events) = Match::new(settings, &live.rules, &mut dice)
                        .map_err(|e| not_rebuilt(version, e))?;
                    game = Some(started);
                    events
                }
                (Some(game), Some(by), Some(command)) => game
                    .apply(by, command, &live.rules, &mut dice)
                    .map_err(|e| not_rebuilt(version, e))?,
                _ => {
                    return Err(not_rebuilt(
                        version,
                        format!("log entry {expected} is out of place"),
                    ));
                }
            };
            if events != logged.events || !dice.all_used() {
                return Err(not_rebuilt(
                    version,
                    format!("version {expected} does not apply as logged"),
                ));
            }
            last_events = entry.api_events();
            reached = expected;
        }
        let (Some(game), true) = (game, reached == version) else {
            return Err(not_rebuilt(version, "the log ends before it"));
        };
        let mut record = live.record.clone();
        record.version = version;
        record.state = snapshot::encode(&game).map_err(unserialisable)?;
        Ok(Live {
            record,
            game,
            rules: live.rules.clone(),
            last_events,
            stale: false,
        })
    }
}
