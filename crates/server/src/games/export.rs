//! ExportMatch: the match as a record other programs read, written from
//! the event log (the formats themselves are `bg-records`').

use bg_api::v1 as pb;
use bg_engine::Seat;
use bg_engine::game::Event;
use bg_store::GameStore;
use serde_json::json;

use super::events::Entry;
use super::{Games, corrupt, game_id_of};
use crate::error::{ApiError, Reason};

/// One stored action: the version it made, who acted, what happened.
struct Action {
    version: u64,
    by: Option<Seat>,
    /// The dice thrown in the action, in order.
    dice: Vec<u8>,
    /// The seat's seed for the verifiable dice given with it (empty: none).
    dice_seed: String,
    events: Vec<Event>,
    /// The time the acting seat took for its turn (matches with a clock).
    took_ms: Option<u64>,
}

impl<S: GameStore> Games<S> {
    /// The match up to its current version, in `request.format`.
    pub async fn export(
        &self,
        request: &pb::ExportMatchRequest,
    ) -> Result<pb::ExportMatchResponse, ApiError> {
        let game_id = &game_id_of(&request.game_id)?;
        let format = match pb::RecordFormat::try_from(request.format) {
            Ok(f @ (pb::RecordFormat::Json | pb::RecordFormat::Mat | pb::RecordFormat::Sgf)) => f,
            _ => {
                return Err(ApiError::invalid(
                    "format",
                    "format: RECORD_FORMAT_JSON, RECORD_FORMAT_MAT or RECORD_FORMAT_SGF",
                ));
            }
        };
        let names = [
            name(&request.white_name, "White", "white_name")?,
            name(&request.black_name, "Black", "black_name")?,
        ];
        let slot = self.slot(game_id);
        let (record, settings, proof) = {
            let mut guard = slot.live.lock().await;
            let live = self.fresh(&slot, &mut guard, game_id).await?;
            let over = live.match_state.phase == bg_engine::game::Phase::MatchOver;
            let proof = match &live.dice {
                Some(dice) => {
                    let rules = live.rules.clone();
                    let opening = self
                        .off_runtime(&live.rules.plugin, move || opening_rule(&rules))
                        .await?;
                    Some((crate::convert::to_api::verifiable_dice(dice, over), opening))
                }
                None => None,
            };
            (
                live.record.clone(),
                live.match_state.settings.clone(),
                proof,
            )
        };
        let log = self
            .store
            .log_after(game_id, 0)
            .await
            .map_err(ApiError::store)?;
        let actions = log
            .iter()
            .filter(|e| e.version <= record.version)
            .map(|e| {
                let entry = Entry::read(e)?;
                Ok(Action {
                    version: e.version,
                    by: entry.by(),
                    dice: entry.dice().to_vec(),
                    dice_seed: entry.dice_seed().to_string(),
                    took_ms: entry.took_ms(),
                    events: entry.events()?,
                })
            })
            .collect::<Result<Vec<Action>, ApiError>>()?;
        let (text, extension) = match format {
            pb::RecordFormat::Mat | pb::RecordFormat::Sgf => {
                if let Some(why) = not_for_gnubg(&record, &settings) {
                    return Err(ApiError::new(
                        Reason::UnsupportedFormat,
                        format!(
                            "this match cannot be written as .mat or SGF: {why}; export it as JSON"
                        ),
                    ));
                }
                let events: Vec<Event> = actions.into_iter().flat_map(|a| a.events).collect();
                let info = bg_records::MatchInfo {
                    match_length: settings.match_length,
                    crawford: settings.crawford,
                    nackgammon: setup(&record) == "nackgammon",
                    jacoby: settings.jacoby,
                    names,
                    date: None,
                };
                let (written, extension) = if format == pb::RecordFormat::Mat {
                    (bg_records::mat(&info, &events), "mat")
                } else {
                    (bg_records::sgf(&info, &events), "sgf")
                };
                let text = written.map_err(|e| ApiError::new(Reason::UnsupportedFormat, e.0))?;
                (text, extension)
            }
            _ => (
                json_record(&record, &settings, proof.as_ref(), &actions)?,
                "json",
            ),
        };
        Ok(pb::ExportMatchResponse {
            version: record.version,
            format: format as i32,
            file_name: format!("{game_id}-match.{extension}"),
            text,
        })
    }
}

/// Why a .mat (or SGF) file would not hold this match as played, if it
/// would not: they hold standard backgammon from its usual setup or
/// nackgammon's (gnubg's NackGammon variation), played by gnubg's rules
/// (no start position, no scoring limit, automatic doubles or last-roll
/// draw). Caucasian, Plakoto, tric-trac and the others export as JSON.
fn not_for_gnubg(
    record: &bg_store::GameRecord,
    settings: &bg_engine::game::MatchSettings,
) -> Option<String> {
    use bg_engine::game::ScoringLimit;
    if record.variant != "standard" {
        return Some(format!("{} is not standard backgammon", record.variant));
    }
    let setup = setup(record);
    if !matches!(setup.as_str(), "standard" | "nackgammon") {
        return Some(format!("setup {setup} is not one gnubg plays"));
    }
    if record.start_board.is_some() {
        return Some("it began from a given position, which these files cannot hold".into());
    }
    if settings.scoring_limit != ScoringLimit::Cox {
        return Some("its scoring limit is not gnubg's (gammons and backgammons count)".into());
    }
    if settings.auto_doubles > 0 {
        return Some("automatic doubles are not in these files".into());
    }
    if settings.draw_on_last_roll {
        return Some("the last-roll draw is not a rule gnubg plays".into());
    }
    None
}

/// The standard variant's `setup` option (its default: "standard").
fn setup(record: &bg_store::GameRecord) -> String {
    let options: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&record.options).unwrap_or_default();
    options
        .get("setup")
        .cloned()
        .unwrap_or_else(|| "standard".to_string())
}

/// A player's name for the record: one word, or the default.
fn name<'a>(given: &'a str, default: &'a str, field: &'static str) -> Result<&'a str, ApiError> {
    if given.is_empty() {
        return Ok(default);
    }
    if given.len() > 64 || given.contains(|c: char| c.is_whitespace() || c.is_control()) {
        return Err(ApiError::invalid(
            field,
            format!("{field}: one word of at most 64 bytes, no spaces"),
        ));
    }
    Ok(given)
}

/// How the variant's games begin, as the record's verifiable dice say it:
/// whether the starter plays the opening throw or throws afresh, so that
/// a checker can tell a roll that shows the opening throw again from one
/// of its own.
fn opening_rule(rules: &bg_plugin_host::VariantRules) -> Result<&'static str, ApiError> {
    use bg_engine::game::{CommandError, Rules};
    let setup = rules
        .new_game()
        .map_err(|e| ApiError::from(CommandError::Rules(e)))?;
    Ok(setup.opening.name())
}

/// The service's own record: every action with its version and events.
fn json_record(
    record: &bg_store::GameRecord,
    settings: &bg_engine::game::MatchSettings,
    proof: Option<&(pb::VerifiableDice, &str)>,
    actions: &[Action],
) -> Result<String, ApiError> {
    let options: serde_json::Value = serde_json::from_str(&record.options).map_err(corrupt)?;
    let start_board: serde_json::Value = match &record.start_board {
        Some(board) => serde_json::from_str(board).map_err(corrupt)?,
        None => serde_json::Value::Null,
    };
    let actions: Vec<serde_json::Value> = actions
        .iter()
        .map(|a| {
            let mut action = json!({
                "version": a.version,
                "by": a.by,
                "dice": a.dice,
                "events": a.events,
            });
            if !a.dice_seed.is_empty() {
                action["dice_seed"] = json!(a.dice_seed);
            }
            if let Some(took_ms) = a.took_ms {
                action["took_ms"] = json!(took_ms);
            }
            action
        })
        .collect();
    let value = json!({
        "record": "backgammon-service match",
        "record_version": 1,
        "game_id": record.game_id,
        "variant": record.variant,
        "variant_version": record.variant_version,
        "options": options,
        "settings": settings,
        "start_board": start_board,
        // The site's words on the match (issue 46): its labels and its
        // players' ids (empty: none).
        "labels": crate::fleet::feed::labels_of(&record.index.labels),
        "players": {"white": record.index.players[0], "black": record.index.players[1]},
        "version": record.version,
        // The match's verifiable dice (null without them): every die it
        // threw is in the actions' "dice", in order; the server seed is
        // there once the match is over.
        "verifiable_dice": proof.map(|(p, opening)| json!({
            "scheme": p.scheme,
            "opening": opening,
            "commitment": p.commitment,
            "white_seed": p.white_seed,
            "white_seed_from": p.white_seed_from,
            "black_seed": p.black_seed,
            "black_seed_from": p.black_seed_from,
            "server_seed": p.server_seed,
            "dice_thrown": p.dice_thrown,
        })),
        "actions": actions,
    });
    serde_json::to_string_pretty(&value).map_err(corrupt)
}
