//! A game as it stood at an earlier version, rebuilt from its log: the
//! match started again with the settings, options and start position it
//! was created with, and every logged action applied again with the dice
//! it threw (with the actions of a seat the service plays that followed
//! it, as logged). Each step must give the events the log holds, and the
//! variant's plugin must be the version the game began with; otherwise
//! (another plugin version, an entry written before commands were
//! logged, a damaged log) the version cannot be rebuilt.
//!
//! A rebuild reads the whole log and applies it again under the game's
//! lock: a retry after the game moved on costs a replay of the match so
//! far (a few microseconds an action), which is rare by nature.
//!
//! This is how a request id's first answer is given again once the game
//! has moved on: the store keeps the version an action produced, not its
//! answer (the answer is most of an action's bytes).

use bg_engine::game::{Command, DiceSource, Match};
use bg_store::{GameStore, LogEntry};

use super::cache::Live;
use super::events::{Entry, Rethrown};
use super::{Games, unserialisable};
use crate::error::{ApiError, Reason};
use crate::snapshot;

/// Why a version cannot be rebuilt.
fn not_rebuilt(version: u64, why: impl std::fmt::Display) -> ApiError {
    tracing::warn!(version, %why, "an earlier version of a game could not be rebuilt");
    ApiError::new(
        Reason::AnswerUnavailable,
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
        // The plugin that made the game may have played otherwise in ways
        // the events do not show (its own state, the legal plays).
        if live.rules.plugin.version() != live.record.variant_version {
            return Err(not_rebuilt(
                version,
                format!(
                    "the game began with version {} of its variant, and {} is loaded",
                    live.record.variant_version,
                    live.rules.plugin.version()
                ),
            ));
        }
        let game_id = &live.record.game_id;
        let log = self
            .store
            .log_after(game_id, 0)
            .await
            .map_err(ApiError::store)?;
        // The replay calls the variant: off the runtime (see `guard`).
        let base = live.clone();
        let key = self.seed_key.clone();
        self.off_runtime(&live.rules.plugin, move || {
            rebuild(&base, &log, version, &key)
        })
        .await
    }
}

/// `live`'s match at `version`, replayed from its log (the dice as logged).
fn rebuild(
    live: &Live,
    log: &[LogEntry],
    version: u64,
    key: &crate::snapshot::SeedKey,
) -> Result<Live, ApiError> {
    replay(live, log, version, &mut |_, _, _, _| Ok(()), key)
}

/// What [`replay`] shows of each logged command before it applies it: the
/// version its entry made, the match as it stood, the seat and the command.
pub(super) type Visit<'a> =
    dyn FnMut(u64, &Match, bg_engine::Seat, &Command) -> Result<(), ApiError> + 'a;

/// [`rebuild`], showing `visit` each command on the way.
pub(super) fn replay(
    live: &Live,
    log: &[LogEntry],
    version: u64,
    visit: &mut Visit<'_>,
    key: &crate::snapshot::SeedKey,
) -> Result<Live, ApiError> {
    let mut game: Option<Match> = None;
    // Every die of the match is logged: the dice thrown by `version`.
    let mut thrown = 0u64;
    let mut last_events = Vec::new();
    // The clock as the entry of `version` left it, and when it was made.
    let mut clock = None;
    let mut at_us = None;
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
        thrown += logged.dice.len() as u64;
        clock = logged.clock;
        at_us = logged.at_us;
        let mut dice = Rethrown::new(logged.dice.clone());
        let mut events = match (&mut game, logged.by, &logged.command()) {
            (None, None, None) => {
                let (started, events) =
                    started_again(live, &mut dice).map_err(|e| not_rebuilt(version, e))?;
                game = Some(started);
                events
            }
            (Some(game), Some(by), Some(command)) => {
                visit(expected, game, by, command)?;
                game.apply(by, command, &live.rules, &mut dice)
                    .map_err(|e| not_rebuilt(version, e))?
            }
            _ => {
                return Err(not_rebuilt(
                    version,
                    format!("log entry {expected} is out of place"),
                ));
            }
        };
        // The seat the service plays, as it played then.
        if let Some(game) = &mut game {
            for then in &logged.then {
                visit(expected, game, then.by, &then.command)?;
                events.extend(
                    game.apply(then.by, &then.command, &live.rules, &mut dice)
                        .map_err(|e| not_rebuilt(version, e))?,
                );
            }
        }
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
    // Changed when that version was made (not known for versions logged
    // before the fleet: then not shown, as their first answers did not).
    record.index.updated_us = at_us.unwrap_or(0);
    // The seeds as they were: one a seat gave after `version` is not.
    let mut later_seeds = Vec::new();
    for stored in log.iter().filter(|e| e.version > version) {
        if let Entry::Logged(logged) = Entry::read(stored)?
            && !logged.dice_seed.is_empty()
        {
            later_seeds.extend(logged.by);
        }
    }
    let dice = live.dice.clone().map(|mut dice| {
        dice.thrown = thrown;
        for seat in later_seeds {
            *dice.seeds.of_mut(seat) = Default::default();
        }
        dice
    });
    record.state = snapshot::encode(
        &game,
        dice.as_ref(),
        clock.as_ref(),
        crate::snapshot::Seal {
            key,
            game_id: &live.record.game_id,
        },
    )
    .map_err(unserialisable)?;
    record.finished = game.phase == bg_engine::game::Phase::MatchOver;
    record.deadline_ms = clock.and_then(|c| c.deadline_ms());
    Ok(Live {
        record,
        match_state: game,
        dice,
        clock,
        rules: live.rules.clone(),
        last_events,
        stale: false,
    })
}

/// The match as it was created: from the variant's setup (or the position
/// every game starts from), or taken up where it was.
fn started_again(
    live: &Live,
    dice: &mut impl DiceSource,
) -> Result<(Match, Vec<bg_engine::game::Event>), String> {
    // The settings as the match began: auto-roll and who starts later
    // games were settled by the first game and are kept as they were.
    let settings = live.match_state.settings.clone();
    let start = match &live.record.start_board {
        Some(text) => Some(snapshot::decode_start(text).map_err(|e| e.to_string())?),
        None => None,
    };
    match start {
        Some(snapshot::Start::TakenUp(board, from)) => {
            let setup = live.rules.setup_at(&board).map_err(|e| e.to_string())?;
            Match::resume(settings, setup, from, &live.rules, dice).map_err(|e| e.to_string())
        }
        _ => Match::new(settings, &live.rules, dice).map_err(|e| e.to_string()),
    }
}

impl<S: GameStore> Games<S> {
    /// The whole game at `version` (None: as it stands), for pictures of
    /// it. A version the game has not reached is `INVALID_ARGUMENT`,
    /// field `version`.
    pub async fn game_at(
        &self,
        game_id: &str,
        version: Option<u64>,
    ) -> Result<bg_api::v1::Game, ApiError> {
        let game_id = &super::game_id_of(game_id)?;
        let slot = self.slot(game_id);
        let mut guard = slot.live.lock().await;
        let live = self.fresh(&slot, &mut guard, game_id).await?;
        let all = crate::fields::Fields::ALL;
        match version {
            None => self.view(live, &all).await,
            Some(v) if v == live.record.version => self.view(live, &all).await,
            Some(v) if v == 0 || v > live.record.version => Err(ApiError::invalid(
                "version",
                format!(
                    "version {v} is not one of this game's (1 to {})",
                    live.record.version
                ),
            )),
            Some(v) => {
                let then = self.at_version(live, v).await?;
                self.view(&then, &all).await
            }
        }
    }
}

impl<S: GameStore> Games<S> {
    /// Seals the server seeds stored in the clear of matches in progress
    /// (stored before seeds were sealed), then compacts the database so
    /// that no copy of them is left in its files. Run at startup; returns
    /// how many were sealed. A game that moved on meanwhile (another
    /// replica) was stored sealed by its action.
    pub async fn seal_plain_seeds(&self) -> Result<u64, ApiError> {
        self.store_seeds_again(|state, _| {
            snapshot::sealed::holds_plain_seed(state).then_some(&self.seed_key)
        })
        .await
    }

    /// Seals again under this server's key the seeds of matches in
    /// progress sealed under `old`, the token key before this one
    /// (`backgammond rotate-key`, every server stopped), then compacts
    /// the database so that no copy sealed under `old` is left in its
    /// files. A seed that opens with this server's key already (a
    /// rotation interrupted and run again) is left as it is. Returns how
    /// many were sealed again.
    pub async fn reseal_seeds(&self, old: &snapshot::SeedKey) -> Result<u64, ApiError> {
        self.store_seeds_again(|state, game_id| {
            let opens = snapshot::decode(state, self.seal(game_id)).is_ok();
            (!opens).then_some(old)
        })
        .await
    }

    /// Stores again, its seed sealed under this server's key, each match
    /// in progress for which `opener` (given the stored state and the
    /// game id) names the key its seed opens with; then compacts the
    /// database if any was. Returns how many.
    async fn store_seeds_again<'k>(
        &'k self,
        opener: impl Fn(&str, &str) -> Option<&'k snapshot::SeedKey>,
    ) -> Result<u64, ApiError> {
        let mut stored = 0;
        let mut after = None;
        loop {
            let page = self
                .store
                .list_matches(&bg_store::MatchQuery {
                    states: vec![bg_store::MatchState::InProgress],
                    after: after.clone(),
                    limit: 500,
                    ..Default::default()
                })
                .await
                .map_err(ApiError::store)?;
            let Some(last) = page.last() else {
                break;
            };
            after = Some((last.index.created_us, last.game_id.clone()));
            for row in &page {
                // A game that cannot be read is left as it is: it fails
                // only what touches it (DATA_LOSS), never the startup.
                let record = match self.store.load(&row.game_id).await {
                    Ok(Some(record)) => record,
                    Ok(None) => continue,
                    Err(bg_store::StoreError::Corrupt(e)) => {
                        tracing::warn!(game_id = %row.game_id, error = %e, "a stored game is unreadable; its seed is left as it is");
                        continue;
                    }
                    Err(e) => return Err(ApiError::store(e)),
                };
                let Some(key) = opener(&record.state, &record.game_id) else {
                    continue;
                };
                let opened = snapshot::Seal {
                    key,
                    game_id: &record.game_id,
                };
                let (game, dice, clock) = match snapshot::decode(&record.state, opened) {
                    Ok(stored) => stored,
                    Err(e) => {
                        tracing::warn!(game_id = %record.game_id, error = %e, "a stored game is unreadable; its seed is left as it is");
                        continue;
                    }
                };
                let seal = self.seal(&record.game_id);
                let state = snapshot::encode(&game, dice.as_ref(), clock.as_ref(), seal)
                    .map_err(unserialisable)?;
                if self
                    .store
                    .rewrite_state(&record.game_id, record.version, &state)
                    .await
                    .map_err(ApiError::store)?
                {
                    stored += 1;
                }
            }
        }
        if stored > 0 {
            self.store.compact().await.map_err(ApiError::store)?;
        }
        Ok(stored)
    }
}
