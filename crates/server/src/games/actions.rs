//! Actions: a seat's command applied to the game as stored, the result
//! stored (with its log entry and its request id), and only then cached
//! and told to the watchers.

use std::sync::Arc;

use bg_api::v1 as pb;
use bg_engine::Seat;
use bg_engine::game::{Command, Event, Match, OnTimeout, Phase};
use bg_fair_dice::FairDice;
use bg_store::{Answer, GameStore, LogEntry, RequestRecord, StoreError, action_scope};

use super::bots::{self, BotAction};
use super::cache::{Live, Slot};
use super::events::{Recorded, Timing, entry};
use super::retries::{is_same, kept};
use super::{Games, ServerDice, game_id_of, now_ms, unserialisable};
use crate::convert;
use crate::error::{ApiError, Reason};
use crate::fields::Fields;
use crate::snapshot;

/// Who is asking for an action, and how to recognise a retry.
pub struct Action {
    pub game_id: String,
    pub token: Option<String>,
    pub expected_version: u64,
    pub request_id: String,
    /// A digest of the whole request: a retry must match it.
    pub fingerprint: Vec<u8>,
    /// The command, or why the request does not make one (told only to
    /// the seat's own token holder).
    pub command: Result<Command, ApiError>,
    /// The seat's seed for the verifiable dice, given with a roll or a
    /// move (empty: none).
    pub dice_seed: String,
    /// The fields of the game to answer with (not part of the request a
    /// request id names: a retry may ask for others).
    pub fields: Fields,
}

/// What an action comes to on one copy of the game.
enum Judged {
    /// A new version to store, with its log entry and its answer.
    Apply(Box<Next>),
    /// An answer with no new version: a refusal, the first answer to a
    /// retry, a stale version.
    Answer(Box<Result<pb::Game, ApiError>>),
    /// The running seat's time ran out before the action came: the
    /// timeout to store (the action is refused once it is).
    TimedOut(Box<Next>),
}

/// A new version, made and shown off the runtime (see `guard`), to
/// commit: the game after the action, its log entry, the answer (and the
/// whole game for the watchers, when there are some).
struct Next {
    live: Live,
    entry: LogEntry,
    answer: pb::Game,
    whole: Option<pb::Game>,
}

/// The answer to an action that made `next`, and the whole game for the
/// watchers when someone watches. Built before the commit, so that a game
/// that cannot be shown is not stored; the whole game is built only if
/// someone watches (no one can start watching while an action holds the
/// game); the answer is then cut from it, otherwise built with only its
/// fields.
fn shown(next: Live, entry: LogEntry, fields: &Fields, watched: bool) -> Result<Next, ApiError> {
    let (answer, whole) = if watched {
        let whole = next.view(&Fields::ALL)?;
        let mut answer = whole.clone();
        convert::to_api::keep_only(&mut answer, fields);
        (answer, Some(whole))
    } else {
        (next.view(fields)?, None)
    };
    Ok(Next {
        live: next,
        entry,
        answer,
        whole,
    })
}

/// Every action names the version it acted on: 0 is no version.
fn require_version(expected_version: u64) -> Result<(), ApiError> {
    if expected_version == 0 {
        return Err(ApiError::invalid(
            "expected_version",
            "give the version of the game you acted on (Game.version)",
        ));
    }
    Ok(())
}

impl<S: GameStore> Games<S> {
    /// Applies an action for the seat its token belongs to.
    ///
    /// The work runs in a task of its own: a caller that goes away (a
    /// deadline, a cancel) cannot stop it between the commit and the
    /// update of the cache and the watchers.
    pub async fn act(self: &Arc<Self>, action: Action) -> Result<pb::Game, ApiError> {
        let games = self.clone();
        tokio::spawn(async move { games.act_to_the_end(action).await })
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "action task failed");
                ApiError::new(Reason::Internal, "the action failed")
            })?
    }

    async fn act_to_the_end(&self, action: Action) -> Result<pb::Game, ApiError> {
        let game_id = &game_id_of(&action.game_id)?;
        let slot = self.slot(game_id);
        let mut guard = slot.live.lock().await;
        // Tokens never change: any copy of the game can tell the seat, so
        // the request is judged only after its token.
        let seat = self
            .current(&slot, &mut guard, game_id, 0)
            .await?
            .seat(action.token.as_deref())?;
        let command = match action.command {
            Ok(ref command) => command.clone(),
            Err(e) => return Err(e),
        };
        require_version(action.expected_version)?;
        // On a store other servers write too, the copy in memory may be
        // out of date. A commit made on it cannot apply (the store's
        // compare-and-set refuses it), so it is used as it is; any other
        // answer (a refusal, a stale version) is given only once the
        // stored version says the copy is the latest, and otherwise the
        // request is judged again on the game read afresh.
        let mut checked = !self.store.shared();
        // A commit lost to another writer is judged again on the game as
        // stored (it moved on: a retry's first answer, or a stale version).
        let mut lost_commits = 0;
        loop {
            let live = self
                .current(&slot, &mut guard, game_id, action.expected_version)
                .await?;
            let watched = slot.updates.receiver_count() > 0;
            match self.judge(live, seat, &command, &action, watched).await {
                Judged::TimedOut(next) => match self.commit(&slot, live, *next, None).await {
                    Err(Lost::ToAnotherWriter(e)) if lost_commits < MAX_LOST_COMMITS => {
                        tracing::debug!(game_id, error = %e, "timeout lost to another writer");
                        lost_commits += 1;
                    }
                    Err(Lost::ToAnotherWriter(e)) => return Err(ApiError::store(e)),
                    Err(Lost::Answered(answer)) => return answer,
                    Ok(_) => return Err(time_expired()),
                },
                Judged::Apply(next) => {
                    match self.commit(&slot, live, *next, Some((seat, &action))).await {
                        Err(Lost::ToAnotherWriter(e)) if lost_commits < MAX_LOST_COMMITS => {
                            tracing::debug!(game_id, error = %e, "commit lost to another writer");
                            lost_commits += 1;
                        }
                        Err(Lost::ToAnotherWriter(e)) => return Err(ApiError::store(e)),
                        Err(Lost::Answered(answer)) => return answer,
                        Ok(answer) => return Ok(answer),
                    }
                }
                Judged::Answer(answer) if checked || self.is_latest(live).await? => return *answer,
                Judged::Answer(_) => checked = true,
            }
        }
    }

    /// Whether the copy in memory is the stored version; if not, it is
    /// marked to be read again.
    async fn is_latest(&self, live: &mut Live) -> Result<bool, ApiError> {
        let stored = self
            .store
            .version(&live.record.game_id)
            .await
            .map_err(ApiError::store)?;
        live.stale = stored != Some(live.record.version);
        Ok(!live.stale)
    }

    /// The action judged on this copy of the game: a new version to
    /// commit, or an answer without one.
    async fn judge(
        &self,
        live: &Live,
        seat: Seat,
        command: &Command,
        action: &Action,
        watched: bool,
    ) -> Judged {
        let scope = action_scope(&live.record.game_id, seat);
        // A request applied before moved the game past the version it
        // expected, so one that expects the current version is not a retry:
        // the store's request log is read first only for the others (a
        // retry, or a stale version). At the current version, an id used
        // before is caught by the commit (the id is already stored), or
        // looked up below when nothing is committed.
        if action.expected_version != live.record.version {
            return Judged::Answer(Box::new(
                match self.previous_answer(&scope, &action.request_id).await {
                    Ok(Some(previous)) => {
                        self.answer_again(live, &previous, &action.fingerprint, &action.fields)
                            .await
                    }
                    Ok(None) => Err(ApiError::version_mismatch(
                        live.record.version,
                        action.expected_version,
                    )),
                    Err(e) => Err(e),
                },
            ));
        }
        // Too late: the running seat's time is up (whoever asks). The
        // timeout is applied first; of it and an action just in time,
        // the store's compare-and-set lets one through, never both.
        match self.timeout(live, now_ms(), watched).await {
            Ok(Some(next)) => return Judged::TimedOut(Box::new(next)),
            Ok(None) => {}
            Err(e) => return Judged::Answer(Box::new(Err(e))),
        }
        let fair = match with_seed(live.dice.clone(), seat, &action.dice_seed) {
            Ok(fair) => fair,
            Err(e) => return Judged::Answer(Box::new(Err(e))),
        };
        // The variant's work, off the runtime (see `guard`), on a copy:
        // the action applied, and when it made a new version, that
        // version and its answer, in one go.
        let net = self.bot_net(live);
        let work = {
            let (live, command) = (live.clone(), command.clone());
            let (dice_seed, fields) = (action.dice_seed.clone(), action.fields);
            let key = self.seed_key.clone();
            move || {
                let mut match_state = live.match_state.clone();
                let mut dice = Recorded::new(ServerDice::new(fair));
                let applied = match_state.apply(seat, &command, &live.rules, &mut dice);
                match applied {
                    Ok(mut events) if !events.is_empty() => {
                        // The seat the service plays, if it is its turn now.
                        let then = match bots::play(
                            &mut match_state,
                            &live.rules,
                            net.as_deref(),
                            &mut dice,
                            &mut events,
                        ) {
                            Ok(then) => then,
                            Err(e) => return Ok(Err(Err(e))),
                        };
                        let applied = Applied {
                            match_state,
                            dice: dice.source.fair,
                            thrown: dice.thrown,
                            events,
                            then,
                        };
                        let (next, entry) = next_version(
                            &live,
                            applied,
                            seat,
                            &command,
                            &dice_seed,
                            now_ms(),
                            &key,
                        )?;
                        shown(next, entry, &fields, watched).map(Ok)
                    }
                    other => Ok(Err(other)),
                }
            }
        };
        let applied = match self.off_runtime(&live.rules.plugin, work).await {
            Ok(Ok(next)) => return Judged::Apply(Box::new(next)),
            Ok(Err(applied)) => applied,
            Err(e) => return Judged::Answer(Box::new(Err(e))),
        };
        // Refused, or nothing changed (a second Roll in one turn): no new
        // version, unless the id belongs to another request.
        Judged::Answer(Box::new(
            match self.previous_answer(&scope, &action.request_id).await {
                Ok(Some(previous)) => {
                    self.answer_again(live, &previous, &action.fingerprint, &action.fields)
                        .await
                }
                Ok(None) => match applied {
                    Ok(_) => {
                        self.unchanged(live, &action.dice_seed, &action.fields)
                            .await
                    }
                    Err(e) => Err(ApiError::from(e)),
                },
                Err(e) => Err(e),
            },
        ))
    }

    /// Stores the new version (with the request id and the version it
    /// made), then makes it the copy in memory and tells the watchers.
    async fn commit(
        &self,
        slot: &Slot,
        live: &mut Live,
        next: Next,
        by: Option<(Seat, &Action)>,
    ) -> Result<pb::Game, Lost> {
        let game_id = &live.record.game_id;
        let Next {
            live: next,
            entry,
            answer,
            whole,
        } = next;
        let entry = &entry;
        let request = by.and_then(|(seat, action)| {
            (!action.request_id.is_empty()).then(|| RequestRecord {
                scope: action_scope(game_id, seat),
                request_id: action.request_id.clone(),
                fingerprint: kept(&action.fingerprint),
                answer: Answer::Version(next.record.version),
            })
        });
        let expected = live.record.version;
        if let Err(e) = self
            .store
            .commit(&next.record, expected, entry, request.as_ref())
            .await
        {
            // The store may hold another version (another writer, or a
            // write whose outcome is unknown): read it again next time.
            live.stale = true;
            return Err(match e {
                // Another writer moved the game on: judged again on the
                // game as stored, as a single server judges a stale one.
                StoreError::Conflict { .. } => Lost::ToAnotherWriter(e),
                // The id is taken: by this very request, applied by
                // another writer (judged again, it gets that answer), or
                // by another request (refused).
                StoreError::Duplicate => {
                    let Some((seat, action)) = by else {
                        return Err(Lost::Answered(Err(ApiError::store(e))));
                    };
                    let scope = action_scope(game_id, seat);
                    match self.previous_answer(&scope, &action.request_id).await {
                        Ok(Some(previous)) if is_same(&previous, &action.fingerprint) => {
                            Lost::ToAnotherWriter(e)
                        }
                        Ok(Some(previous)) => Lost::Answered(
                            self.answer_again(live, &previous, &action.fingerprint, &action.fields)
                                .await,
                        ),
                        Ok(None) => Lost::Answered(Err(ApiError::store(e))),
                        Err(read) => Lost::Answered(Err(read)),
                    }
                }
                e => Lost::Answered(Err(ApiError::store(e))),
            });
        }
        match by {
            Some((seat, _)) => {
                tracing::debug!(game_id, %seat, version = next.record.version, "action applied")
            }
            None => tracing::info!(game_id, version = next.record.version, "time ran out"),
        }
        crate::metrics::action_committed(&next.record.variant);
        self.wake_feeds();
        *live = next;
        // Watchers get the update; with none, it is not even built.
        if let Some(game) = whole {
            let update = pb::GameUpdate {
                version: live.record.version,
                events: live.last_events.clone(),
                game: Some(game),
            };
            let _ = slot.updates.send(Arc::new(vec![update]));
        }
        Ok(answer)
    }
}

/// The match's dice with the seat's seed given in the action, if any: it
/// applies from the action's first die. Kept only if the action is.
fn with_seed(dice: Option<FairDice>, seat: Seat, seed: &str) -> Result<Option<FairDice>, ApiError> {
    if seed.is_empty() {
        return Ok(dice);
    }
    let Some(mut dice) = dice else {
        return Err(ApiError::invalid(
            "dice_seed",
            "this match's dice are not verifiable: it takes no seed",
        ));
    };
    dice.give_seed(seat, seed)
        .map_err(|e| ApiError::invalid("dice_seed", e.to_string()))?;
    Ok(Some(dice))
}

/// What an action did to a copy of the match.
struct Applied {
    match_state: Match,
    /// The match's verifiable dice after it (the dice thrown, a seed given).
    dice: Option<FairDice>,
    /// The dice it threw, in order.
    thrown: Vec<u8>,
    events: Vec<Event>,
    /// The actions of the seat the service plays that followed it.
    then: Vec<BotAction>,
}

/// The copy of the game after an action, and the action's log entry.
fn next_version(
    live: &Live,
    applied: Applied,
    seat: Seat,
    command: &Command,
    dice_seed: &str,
    now: u64,
    key: &crate::snapshot::SeedKey,
) -> Result<(Live, LogEntry), ApiError> {
    let Applied {
        match_state,
        dice,
        thrown,
        events,
        then,
    } = applied;
    // The clock: the turn that ended is charged (all of the flagged seat's
    // reserve, on a timeout) and the seat the game waits for next starts.
    let mut clock = live.clock;
    let took_ms = clock.as_mut().and_then(|clock| {
        let used = match command {
            Command::TimeExpired { costs } => {
                let used = clock.flag(now);
                // It paid with the game: the next one with its time anew.
                if let (Some(used), OnTimeout::Game) = (used, costs) {
                    clock.refill(used.seat, match_state.settings.match_length);
                }
                used
            }
            _ => None,
        };
        // The seat the service plays took its turns at once, within the
        // action: the acting seat's turn ended when the first began.
        let handed = match then.first() {
            Some(bot) => {
                let handed = clock.hand_over(Some(bot.by), now);
                clock.hand_over(match_state.to_act(), now);
                handed
            }
            None => clock.hand_over(match_state.to_act(), now),
        };
        used.or(handed).map(|used| used.took_ms)
    });
    let mut record = live.record.clone();
    record.version = live.record.version + 1;
    record.state = snapshot::encode(
        &match_state,
        dice.as_ref(),
        clock.as_ref(),
        crate::snapshot::Seal {
            key,
            game_id: &live.record.game_id,
        },
    )
    .map_err(unserialisable)?;
    record.finished = match_state.phase == Phase::MatchOver;
    record.deadline_ms = clock.and_then(|c| c.deadline_ms());
    record.index.to_act = super::seat_index(match_state.to_act());
    record.index.abandoned |= events
        .iter()
        .any(|e| matches!(e, bg_engine::game::Event::MatchAbandoned { .. }));
    record.index.updated_us = super::now_us().max(record.index.updated_us);
    let (entry, last_events) = entry(
        record.version,
        Some((seat, command)),
        then,
        thrown,
        dice_seed,
        events,
        Timing {
            clock,
            took_ms,
            at_us: Some(record.index.updated_us),
        },
    )?;
    let next = Live {
        record,
        match_state,
        dice,
        clock,
        rules: live.rules.clone(),
        last_events,
        stale: false,
    };
    Ok((next, entry))
}

/// Clocks that ran out, applied per sweep (the rest at the next).
const DUE_BATCH: u32 = 500;

/// The refusal of an action that came after the acting seat's time, or
/// its opponent's, ran out.
fn time_expired() -> ApiError {
    ApiError::new(
        Reason::TimeExpired,
        "time ran out before this action came: the game was ended by time (read it again)",
    )
}

impl<S: GameStore> Games<S> {
    /// The answer to an action that changed nothing (a second Roll in one
    /// turn): the game as it is, unless the action carried a seed, which
    /// it cannot keep without a new version.
    async fn unchanged(
        &self,
        live: &Live,
        dice_seed: &str,
        fields: &Fields,
    ) -> Result<pb::Game, ApiError> {
        if !dice_seed.is_empty() {
            return Err(ApiError::invalid(
                "dice_seed",
                "this turn's dice are thrown already, so this roll cannot carry a seed: \
                 give it with the move, or with a later roll",
            ));
        }
        self.view(live, fields).await
    }

    /// The timeout of `live`'s running seat, if its time is up at `now`:
    /// the next version, its log entry and how it is shown.
    async fn timeout(
        &self,
        live: &Live,
        now: u64,
        watched: bool,
    ) -> Result<Option<Next>, ApiError> {
        let Some(clock) = live.clock.filter(|clock| self.restart.expired(clock, now)) else {
            return Ok(None);
        };
        let Some((seat, _)) = clock.running else {
            return Ok(None);
        };
        let command = Command::TimeExpired {
            costs: clock.settings.on_timeout,
        };
        let net = self.bot_net(live);
        let work = {
            let live = live.clone();
            let key = self.seed_key.clone();
            move || {
                let mut match_state = live.match_state.clone();
                let mut dice = Recorded::new(ServerDice::new(live.dice.clone()));
                let mut events = match_state
                    .apply(seat, &command, &live.rules, &mut dice)
                    .map_err(ApiError::from)?;
                // The next game may begin with the seat the service plays.
                let then = bots::play(
                    &mut match_state,
                    &live.rules,
                    net.as_deref(),
                    &mut dice,
                    &mut events,
                )
                .map_err(ApiError::from)?;
                let applied = Applied {
                    match_state,
                    dice: dice.source.fair,
                    thrown: dice.thrown,
                    events,
                    then,
                };
                let (next, entry) = next_version(&live, applied, seat, &command, "", now, &key)?;
                shown(next, entry, &Fields::ALL, watched)
            }
        };
        self.off_runtime(&live.rules.plugin, work).await.map(Some)
    }
}

impl<S: GameStore> Games<S> {
    /// Applies the timeouts of the games whose clocks ran out, as the
    /// store's index of deadlines says; returns how many it applied.
    pub async fn time_out_due(&self) -> Result<usize, ApiError> {
        let due = self
            .store
            .due_before(now_ms(), DUE_BATCH)
            .await
            .map_err(ApiError::store)?;
        let mut applied = 0;
        for game_id in due {
            match self.time_out(&game_id).await {
                Ok(true) => applied += 1,
                Ok(false) => {}
                // One game's trouble (a damaged row) stops no other.
                Err(e) => {
                    tracing::warn!(game_id, error = %e.message, "a clock that ran out could not be applied")
                }
            }
        }
        Ok(applied)
    }

    /// Applies the timeout of a game whose running seat's time is up, as
    /// the server's own action (no request, no token): a new version,
    /// committed by the same compare-and-set as every action, told to the
    /// watchers. Nothing when its time is not up (another server applied
    /// it, or an action came first). Returns whether it applied one.
    pub async fn time_out(&self, game_id: &str) -> Result<bool, ApiError> {
        let slot = self.slot(game_id);
        let mut guard = slot.live.lock().await;
        let live = self.fresh(&slot, &mut guard, game_id).await?;
        let watched = slot.updates.receiver_count() > 0;
        let Some(next) = self.timeout(live, now_ms(), watched).await? else {
            return Ok(false);
        };
        match self.commit(&slot, live, next, None).await {
            Ok(_) => Ok(true),
            // Another server moved the game on first: its version stands.
            Err(Lost::ToAnotherWriter(_)) => Ok(false),
            Err(Lost::Answered(answer)) => answer.map(|_| false),
        }
    }
}

/// Why a commit did not apply.
#[allow(clippy::large_enum_variant)] // returned once, at once matched
enum Lost {
    /// Another writer got there first: judge the action again.
    ToAnotherWriter(StoreError),
    /// The answer, without a new version.
    Answered(Result<pb::Game, ApiError>),
}

/// How many times an action is judged again after losing its commit to
/// other writers before it gives up (each time, the game moved on).
const MAX_LOST_COMMITS: u32 = 8;
