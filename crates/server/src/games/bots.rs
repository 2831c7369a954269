//! The seats the service plays (docs/bot.md): each variant's computer
//! player, whose net is the file beside the variant's plugin
//! (`libbg_standard.so` and `libbg_standard.bgnet`), and its turns,
//! played within the action that hands it the turn, as auto-roll throws
//! dice: a person playing it makes one call a turn.
//!
//! The computer player sees the match and its board, never the dice
//! source: it cannot know a die before it is thrown, nor the verifiable
//! dice's secret seed. Its commands are logged with the action (`then`),
//! so that the action can be applied again from the log.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use bg_api::v1 as pb;
use bg_bot::Net;
use bg_bot::act::Bot;
use bg_bot::level::{LEVELS, level};
use bg_bot::search::Evaluator;
use bg_engine::game::{
    Command, CommandError, DiceSource, Event, Match, RulesError, RulesErrorKind,
};
use bg_engine::{LegalPlay, Seat};
use bg_plugin_host::{Plugin, VariantRules};
use bg_variant_api::Capabilities;
use serde::{Deserialize, Serialize};

use crate::convert;
use crate::error::{ApiError, Reason};

/// The extension of a computer player's net, beside its plugin.
pub const NET_EXTENSION: &str = "bgnet";

/// The most actions the computer player makes within one action: more
/// means a game that never waits for the person (a broken variant).
const MAX_BOT_ACTIONS: usize = 256;

/// The nets read so far, by plugin file (read once: a plugin file is
/// never replaced in place while the server runs, nor is its net).
#[derive(Default)]
pub struct Nets {
    read: Mutex<HashMap<PathBuf, Option<Arc<Net>>>>,
}

impl Nets {
    /// The net of `plugin`'s variant, if a readable one lies beside it.
    pub fn of(&self, plugin: &Plugin) -> Option<Arc<Net>> {
        let path = plugin.path().with_extension(NET_EXTENSION);
        let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        read.entry(path)
            .or_insert_with_key(|path| match std::fs::read(path) {
                Ok(bytes) => match Net::from_bytes(&bytes) {
                    Ok(net) => Some(Arc::new(net)),
                    Err(e) => {
                        tracing::warn!(path = %path.display(), error = %e, "a computer player's net is damaged: the variant has no computer player");
                        None
                    }
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "a computer player's net cannot be read: the variant has no computer player");
                    None
                }
            })
            .clone()
    }

    /// The net of `plugin`'s variant, or FAILED_PRECONDITION, `NO_BOT`.
    pub fn needed(&self, plugin: &Plugin) -> Result<Arc<Net>, ApiError> {
        self.of(plugin).ok_or_else(|| {
            ApiError::new(
                Reason::NoBot,
                format!(
                    "this server has no computer player for {} (Variant.bot_levels is empty)",
                    plugin.name()
                ),
            )
        })
    }

    /// The levels `plugin`'s variant can be played at (none without a net).
    pub fn levels(&self, plugin: &Plugin) -> Vec<String> {
        match self.of(plugin) {
            Some(_) => LEVELS.iter().map(|l| l.name.to_string()).collect(),
            None => Vec::new(),
        }
    }
}

/// The search a Hint or an analysis asks for: 0 or 1 ply (unset: 1).
pub fn plies(asked: Option<u32>) -> Result<u8, ApiError> {
    match asked {
        None => Ok(1),
        Some(p @ 0..=1) => Ok(p as u8),
        Some(_) => Err(ApiError::invalid("plies", "0 or 1")),
    }
}

/// A legal play of `seat` as Hint and AnalyzeMatch show it (with its
/// result's Position ID on the standard board).
pub fn shown(rules: &VariantRules, lp: &LegalPlay, seat: Seat) -> pb::Play {
    let standard = rules
        .plugin
        .capabilities()
        .contains(Capabilities::STANDARD_BOARD);
    convert::to_api::play(&lp.play, standard.then_some((&lp.result, seat)))
}

/// An action of a seat the service plays, as the log keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BotAction {
    pub by: Seat,
    #[serde(rename = "do")]
    pub command: Command,
}

/// Plays the seats the service plays while the match waits for one of
/// them, adding their events to `events`; returns their actions in order.
pub fn play(
    m: &mut Match,
    rules: &VariantRules,
    net: Option<&Net>,
    dice: &mut impl DiceSource,
    events: &mut Vec<Event>,
) -> Result<Vec<BotAction>, CommandError> {
    let mut actions = Vec::new();
    let mut rng = rand::rng();
    while let Some(seat) = m.to_act() {
        let Some(level_name) = m.settings.bot(seat) else {
            break;
        };
        if actions.len() == MAX_BOT_ACTIONS {
            return Err(unsupported(format!(
                "the computer player acted {MAX_BOT_ACTIONS} times in one action: the game never waits for the other seat"
            )));
        }
        let (Some(net), Some(level)) = (net, level(level_name)) else {
            return Err(unsupported(format!(
                "{seat} is played by the service, and this server has no computer player for {} at level {level_name:?} \
                 (its net goes beside the plugin, as {})",
                rules.plugin.name(),
                rules.plugin.path().with_extension(NET_EXTENSION).display()
            )));
        };
        let bot = Bot {
            eval: Evaluator {
                net,
                checkers: rules.plugin.checkers(),
            },
            level,
        };
        let board = rules.plugin.board(&m.variant_state)?;
        let command = bot.act(m, &board, seat, rules, &mut rng)?;
        events.extend(m.apply(seat, &command, rules, dice)?);
        actions.push(BotAction { by: seat, command });
    }
    Ok(actions)
}

fn unsupported(message: String) -> CommandError {
    CommandError::Rules(RulesError {
        kind: RulesErrorKind::Unsupported,
        message,
    })
}
