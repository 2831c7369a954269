//! NewGame: a match set up by its variant, stored with its first log
//! entry (and its request id), then held in memory.

use std::collections::BTreeMap;

use bg_api::v1 as pb;
use bg_engine::clock::Clock;
use bg_engine::game::{CommandError, Cube, Match, MatchSettings, Resume, RulesErrorKind};
use bg_engine::{Board, Geometry, Seat, match_id, position_id, xgid};
use bg_fair_dice::{FairDice, SeatSeeds};
use bg_plugin_host::VariantRules;
use bg_store::{Answer, GameRecord, GameStore, NEW_GAME_SCOPE, RequestRecord, StoreError};
use sha2::{Digest, Sha256};
use tonic::Code;

use super::bots;
use super::cache::Live;
use super::events::{Recorded, Timing, entry};
use super::retries::{
    check_new_game_request_id, fingerprint, kept, new_game_record_id, no_tokens_for_bots,
};
use super::seats::{seat_token, token_hash};
use super::{Games, ServerDice, now_ms, unserialisable};
use crate::convert;
use crate::error::{ApiError, Reason};
use crate::snapshot;

impl<S: GameStore> Games<S> {
    pub async fn new_game(
        &self,
        request: &pb::NewGameRequest,
        caller: Option<&str>,
    ) -> Result<pb::NewGameResponse, ApiError> {
        // A retried NewGame answers with both seat tokens, so its id is as
        // secret as they are: refuse ids easy to guess, before any replay,
        // and keep each certified caller's ids apart.
        check_new_game_request_id(&request.request_id)?;
        let record_id = new_game_record_id(caller, &request.request_id);
        // The options map encodes in no fixed order: digest it sorted.
        let mut canonical = request.clone();
        canonical.options.clear();
        canonical.labels.clear();
        let mut fingerprint = fingerprint("NewGame", &canonical);
        let sorted: BTreeMap<&String, &String> = request.options.iter().collect();
        fingerprint.extend(Sha256::digest(format!("{sorted:?}").as_bytes()));
        if !request.labels.is_empty() {
            // Labels too encode in no fixed order (and were not part of
            // the digest before they existed: a request without them
            // digests as it did).
            let sorted: BTreeMap<&String, &String> = request.labels.iter().collect();
            fingerprint.extend(Sha256::digest(format!("labels {sorted:?}").as_bytes()));
        }
        if !request.request_id.is_empty()
            && let Some(previous) = self
                .store
                .request(NEW_GAME_SCOPE, &record_id)
                .await
                .map_err(ApiError::store)?
        {
            return self.replay_new_game(&previous, &fingerprint).await;
        }
        let plugin = self.plugins.get(&request.variant).ok_or_else(|| {
            let known: Vec<String> = self
                .plugins
                .plugins()
                .iter()
                .map(|p| p.name().to_string())
                .collect();
            ApiError::invalid(
                "variant",
                format!(
                    "unknown variant {} (loaded: {})",
                    crate::error::quote(&request.variant),
                    known.join(", ")
                ),
            )
        })?;
        let read = read(
            request,
            plugin.checkers(),
            plugin.geometry(),
            &self.nets.levels(&plugin),
        )?;
        let (labels, players, settings, options) =
            (read.labels, read.players, read.settings, read.options);
        let (start, taken_up, fair, clock) = (read.start, read.taken_up, read.fair, read.clock);
        let mut rules = VariantRules::new(plugin.clone(), options.clone());
        rules.start = start;
        let net = (!settings.bots.is_empty())
            .then(|| self.nets.of(&plugin))
            .flatten();
        // The variant's work, off the runtime (see `guard`).
        let work = {
            let (rules, taken_up) = (rules.clone(), taken_up);
            move || {
                let mut dice = Recorded::new(ServerDice::new(fair));
                let started = match &taken_up {
                    Some((board, from)) => rules
                        .setup_at(board)
                        .map_err(CommandError::Rules)
                        .and_then(|setup| {
                            Match::resume(settings.clone(), setup, *from, &rules, &mut dice)
                        }),
                    None => Match::new(settings, &rules, &mut dice),
                };
                // The seat the service plays, if it begins.
                let started = started.and_then(|(mut game, mut events)| {
                    let then =
                        bots::play(&mut game, &rules, net.as_deref(), &mut dice, &mut events)?;
                    Ok((game, events, then))
                });
                Ok((started, dice.thrown, dice.source.fair))
            }
        };
        let (started, thrown, fair) = self.off_runtime(&plugin, work).await?;
        let (game, events, then) = started.map_err(|e| {
            // A position the variant refuses is the caller's mistake,
            // not the plugin's fault.
            if let CommandError::InvalidStart(why) = &e {
                return ApiError::invalid(
                    id_field(request),
                    format!("{}: {why}", id_field(request)),
                );
            }
            if let CommandError::Rules(r) = &e
                && (rules.start.is_some() || taken_up.is_some())
                && matches!(
                    r.kind,
                    RulesErrorKind::InvalidInput | RulesErrorKind::Unsupported
                )
            {
                let field = if taken_up.is_some() {
                    id_field(request)
                } else {
                    "start_board"
                };
                return ApiError::invalid(
                    field,
                    format!("the variant refuses this start position: {}", r.message),
                );
            }
            let api = ApiError::from(e);
            if api.code == Code::InvalidArgument {
                ApiError {
                    reason: Reason::InvalidOption,
                    ..api
                }
                .with("field", "options")
            } else {
                api
            }
        })?;
        // Time-ordered (UUID version 7): games created together, the ones
        // being played, share index pages, so a group commit writes fewer.
        let game_id = uuid::Uuid::now_v7().to_string();
        let tokens = [
            seat_token(&self.secret, &game_id, Seat::White),
            seat_token(&self.secret, &game_id, Seat::Black),
        ];
        let record = GameRecord {
            game_id,
            variant: plugin.name().to_string(),
            variant_version: plugin.version().to_string(),
            options: serde_json::to_string(&options).map_err(unserialisable)?,
            version: 1,
            state: String::new(),
            token_hashes: [token_hash(&tokens[0]), token_hash(&tokens[1])],
            start_board: match (&taken_up, rules.start) {
                (Some((board, from)), _) => Some(snapshot::Start::TakenUp(*board, *from)),
                (None, Some(board)) => Some(snapshot::Start::EveryGame(board)),
                (None, None) => None,
            }
            .as_ref()
            .map(snapshot::encode_start)
            .transpose()
            .map_err(unserialisable)?,
            finished: game.phase == bg_engine::game::Phase::MatchOver,
            deadline_ms: None,
            index: bg_store::MatchIndex {
                labels: serde_json::to_string(&labels).map_err(unserialisable)?,
                players,
                owner: caller.unwrap_or("").to_string(),
                to_act: super::seat_index(game.to_act()),
                abandoned: false,
                created_us: super::now_us(),
                updated_us: 0,
            },
        };
        // The clock starts for the seat the new game waits for.
        let clock = clock.map(|mut clock| {
            clock.hand_over(game.to_act(), now_ms());
            clock
        });
        let mut record = record;
        record.index.updated_us = record.index.created_us;
        record.deadline_ms = clock.and_then(|c| c.deadline_ms());
        record.state = snapshot::encode(
            &game,
            fair.as_ref(),
            clock.as_ref(),
            self.seal(&record.game_id),
        )
        .map_err(unserialisable)?;
        let timing = Timing {
            clock,
            took_ms: None,
            at_us: Some(record.index.created_us),
        };
        let (entry, last_events) = entry(1, None, then, thrown, "", events, timing)?;
        let live = Live {
            record,
            match_state: game,
            dice: fair,
            clock,
            rules,
            last_events,
            stale: false,
        };
        let mut response = pb::NewGameResponse {
            game: Some(self.snapshot(&live).await?),
            white_token: tokens[0].clone(),
            black_token: tokens[1].clone(),
        };
        no_tokens_for_bots(&mut response);
        let request_record = (!request.request_id.is_empty()).then(|| RequestRecord {
            scope: NEW_GAME_SCOPE.to_string(),
            request_id: record_id.clone(),
            fingerprint: kept(&fingerprint),
            // A retry reads the game and derives the tokens again.
            answer: Answer::Created(live.record.game_id.clone()),
        });
        match self
            .store
            .create(&live.record, &entry, request_record.as_ref())
            .await
        {
            Ok(()) => {
                crate::metrics::action_committed(&live.record.variant);
                self.wake_feeds();
            }
            Err(StoreError::Duplicate) if request_record.is_some() => {
                // The same request id won a race: answer as it did.
                let previous = self
                    .store
                    .request(NEW_GAME_SCOPE, &record_id)
                    .await
                    .map_err(ApiError::store)?
                    .ok_or_else(|| ApiError::store(StoreError::Duplicate))?;
                return self.replay_new_game(&previous, &fingerprint).await;
            }
            Err(e) => return Err(ApiError::store(e)),
        }
        tracing::info!(game_id = %live.record.game_id, variant = %live.record.variant, "game created");
        let slot = self.slot(&live.record.game_id);
        *slot.live.lock().await = Some(live);
        Ok(response)
    }
}

/// What NewGame reads from its request, every field checked, before the
/// store or the variant is asked.
pub struct Read {
    pub labels: BTreeMap<String, String>,
    /// White's and black's player ids.
    pub players: [String; 2],
    /// With the computer's seats.
    pub settings: MatchSettings,
    /// The variant's options, as given (the variant checks them).
    pub options: BTreeMap<String, String>,
    /// The board every game starts from (`start_board`).
    pub start: Option<Board>,
    /// The match taken up from an XGID or a gnubg ID.
    pub taken_up: Option<(Board, Resume)>,
    pub fair: Option<FairDice>,
    pub clock: Option<Clock>,
}

/// A NewGame request read for a variant of `checkers` checkers a side on
/// a `geometry` board, whose computer player has `levels`: a clear error
/// naming the first field refused.
pub fn read(
    request: &pb::NewGameRequest,
    checkers: u8,
    geometry: Geometry,
    levels: &[String],
) -> Result<Read, ApiError> {
    let labels = crate::fleet::labels::checked_labels(&request.labels)?;
    let players = crate::fleet::labels::checked_players(request.players.as_ref())?;
    let mut settings = convert::from_api::settings(request.settings.as_ref())?;
    let options = request
        .options
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let start = request
        .start_board
        .as_ref()
        .map(|board| convert::from_api::start_board(board, checkers, geometry))
        .transpose()?;
    settings.bots = convert::from_api::bots(&request.bots, levels)?;
    let taken_up = taken_up(request, &mut settings)?;
    let fair = verifiable_dice(request)?;
    let clock = convert::from_api::clock_settings(request.settings.as_ref())?
        .map(|clock| Clock::new(clock, settings.match_length));
    Ok(Read {
        labels,
        players,
        settings,
        options,
        start,
        taken_up,
        fair,
        clock,
    })
}

/// The match's verifiable dice, with a new server seed and the seats'
/// seeds (None when the settings turn them off).
fn verifiable_dice(request: &pb::NewGameRequest) -> Result<Option<FairDice>, ApiError> {
    let on = request
        .settings
        .as_ref()
        .and_then(|s| s.verifiable_dice)
        .unwrap_or(true);
    if !on {
        for (field, seed) in [
            ("white_seed", &request.white_seed),
            ("black_seed", &request.black_seed),
        ] {
            if !seed.is_empty() {
                return Err(ApiError::invalid(
                    field,
                    "seat seeds are for verifiable dice, which these settings turn off",
                ));
            }
        }
        return Ok(None);
    }
    let seeds = SeatSeeds::new(&request.white_seed, &request.black_seed).map_err(|e| {
        let field = match e.seat() {
            Seat::White => "white_seed",
            Seat::Black => "black_seed",
        };
        ApiError::invalid(field, e.to_string())
    })?;
    Ok(Some(FairDice::new(seeds)))
}

/// The field a match taken up came from, for errors.
fn id_field(request: &pb::NewGameRequest) -> &'static str {
    if request.xgid.is_empty() {
        "gnubg_id"
    } else {
        "xgid"
    }
}

/// Where a match given by an XGID or a gnubg ID (`POSITION:MATCH`) is
/// taken up: its first game's board and the score, cube and player to
/// roll. The match length comes from the ID (a different one in the
/// settings is refused). The service throws the dice: a position with
/// dice, a double or a resignation waiting is refused.
fn taken_up(
    request: &pb::NewGameRequest,
    settings: &mut MatchSettings,
) -> Result<Option<(Board, Resume)>, ApiError> {
    let given = [
        !request.xgid.is_empty(),
        !request.gnubg_id.is_empty(),
        request.start_board.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() > 1 {
        return Err(ApiError::invalid(
            id_field(request),
            "give one of start_board, xgid and gnubg_id",
        ));
    }
    let field = id_field(request);
    let invalid = |what: String| ApiError::invalid(field, format!("{field}: {what}"));
    if (given[0] || given[1]) && request.variant != "standard" {
        return Err(invalid(format!(
            "a match is taken up from an XGID or a gnubg ID in standard backgammon only, not {}",
            crate::error::quote(&request.variant)
        )));
    }
    let (board, info) = if !request.xgid.is_empty() {
        let x = xgid::decode(&request.xgid).map_err(|e| invalid(e.to_string()))?;
        if x.dice != xgid::XgDice::ToRoll {
            return Err(invalid(
                "the service throws the dice: give the position to roll or double (dice 00)".into(),
            ));
        }
        if x.match_length == 0 && (x.jacoby, x.beavers) != (settings.jacoby, settings.beavers) {
            return Err(invalid(format!(
                "it says Jacoby {} and beavers {}, the settings {} and {}: set them alike",
                on(x.jacoby),
                on(x.beavers),
                on(settings.jacoby),
                on(settings.beavers)
            )));
        }
        (x.board, x.match_info())
    } else if !request.gnubg_id.is_empty() {
        let Some((position, match_id)) = request.gnubg_id.trim().split_once(':') else {
            return Err(invalid(
                "POSITION_ID:MATCH_ID, e.g. 4HPwATDgc/ABMA:cAkAAAAAAAAA".into(),
            ));
        };
        let info = match_id::decode(match_id).map_err(|e| invalid(e.to_string()))?;
        let waiting = if info.state != match_id::GameState::Playing {
            Some("the game is not in play".to_string())
        } else if let Some((d1, d2)) = info.dice {
            Some(format!(
                "dice {d1}-{d2} are thrown, and the service throws the dice"
            ))
        } else if info.double_offered {
            Some("a double waits for an answer".to_string())
        } else if info.resignation != 0 {
            Some("a resignation waits for an answer".to_string())
        } else {
            None
        };
        if let Some(why) = waiting {
            return Err(invalid(format!(
                "{why}: give a game in play with the player on roll to roll or double"
            )));
        }
        let board =
            position_id::decode(position, info.on_roll).map_err(|e| invalid(e.to_string()))?;
        (board, info)
    } else {
        return Ok(None);
    };
    convert::from_api::start_board(
        &convert::to_api::board(&board, bg_engine::Geometry::Opposed),
        bg_engine::CHECKERS,
        bg_engine::Geometry::Opposed,
    )
    .map_err(|e| invalid(e.message))?;
    let length = request.settings.as_ref().map_or(0, |s| s.match_length);
    if length != 0 && length != info.match_length {
        return Err(invalid(format!(
            "it is a {}-point match, the settings say {length}",
            info.match_length
        )));
    }
    settings.match_length = info.match_length;
    settings
        .validate()
        .map_err(|e| invalid(format!("with its match length: {e}")))?;
    Ok(Some((
        board,
        Resume {
            score: info.score,
            cube: Cube {
                value: info.cube,
                owner: info.cube_owner,
            },
            on_roll: info.on_roll,
            crawford: info.crawford,
        },
    )))
}

fn on(flag: bool) -> &'static str {
    if flag { "on" } else { "off" }
}
