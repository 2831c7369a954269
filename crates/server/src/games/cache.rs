//! The games held in memory: one slot per game (its lock and its
//! watchers' channel), the game as stored, read from the store when it is
//! not there or may be out of date, and forgotten when idle.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bg_api::v1 as pb;
use bg_engine::LegalPlay;
use bg_engine::game::{CommandError, Match, Phase, Rules, RulesError, RulesErrorKind, Scoreboard};
use bg_fair_dice::FairDice;
use bg_plugin_host::VariantRules;
use bg_store::{GameRecord, GameStore};
use bg_variant_api::Capabilities;
use tokio::sync::broadcast;

use super::events::Entry;
use super::{Games, corrupt, game_id_of, lost};
use crate::convert::{self, to_api::GameMeta};
use crate::error::{ApiError, Reason};
use crate::fields::{Fields, GameField};
use crate::snapshot;

/// A game in memory, as stored.
#[derive(Clone)]
pub(super) struct Live {
    pub(super) record: GameRecord,
    /// The match at `record.version`.
    pub(super) match_state: Match,
    pub(super) rules: VariantRules,
    /// The match's verifiable dice (None: dice from the CSPRNG alone).
    /// Holds the secret server seed: never logged, shown only through
    /// [`Live::snapshot`], which hides it until the match is over.
    pub(super) dice: Option<FairDice>,
    /// The match's clock (None: no clock).
    pub(super) clock: Option<bg_engine::clock::Clock>,
    /// The events of the action that made this version.
    pub(super) last_events: Vec<pb::GameEvent>,
    /// A write of this game failed, or lost to another writer: the store
    /// may hold another version. Read it again before using it.
    pub(super) stale: bool,
}

/// Batches of updates a watcher may fall behind by before it must resume.
const WATCH_BUFFER: usize = 32;

/// Updates sent to a game's watchers at once, in version order: the one
/// a commit here made, or all those another server's commits made, read
/// back in one catch-up (however many: a watcher that reads as fast as
/// it can never falls behind because this server caught up in bulk).
pub(super) type Batch = Arc<Vec<pb::GameUpdate>>;

/// One game's lock and its watchers' channel.
pub(super) struct Slot {
    pub(super) live: tokio::sync::Mutex<Option<Live>>,
    pub(super) updates: broadcast::Sender<Batch>,
    /// When the game was last used (for evicting idle games).
    pub(super) last_used: Mutex<Instant>,
    /// A refresh for another server's commit waits for the game's lock.
    pub(super) refresh_waiting: AtomicBool,
}

/// The variant's answers a snapshot shows.
struct VariantView {
    board: bg_engine::Board,
    legal: Vec<LegalPlay>,
    scoreboard: Option<Scoreboard>,
}

impl Live {
    fn meta<'a>(&'a self, options: &'a BTreeMap<String, String>) -> GameMeta<'a> {
        GameMeta {
            game_id: &self.record.game_id,
            version: self.record.version,
            variant: &self.record.variant,
            variant_version: &self.record.variant_version,
            options,
            standard_board: self
                .rules
                .plugin
                .capabilities()
                .contains(Capabilities::STANDARD_BOARD),
            geometry: self.rules.plugin.geometry(),
            last_events: &self.last_events,
            dice: self.dice.as_ref(),
            clock: self.clock.as_ref(),
            now_ms: super::now_ms(),
            index: &self.record.index,
        }
    }

    /// What the variant makes of the game: its board, the legal plays of
    /// the seat on turn (none outside the move phase), and the scoreboard
    /// of a variant that shows one (tallies, counters, markers).
    fn variant_view(&self) -> Result<VariantView, RulesError> {
        let board = self.rules.plugin.board(&self.match_state.variant_state)?;
        let scoreboard = if self.rules.plugin.shows_scoreboard() {
            self.rules.scoreboard(&self.match_state.variant_state)?
        } else {
            None
        };
        let legal = match (self.match_state.phase, self.match_state.dice) {
            (Phase::Move, Some(dice)) => self.rules.legal_plays(
                &self.match_state.variant_state,
                self.match_state.turn,
                dice,
            )?,
            _ => Vec::new(),
        };
        Ok(VariantView {
            board,
            legal,
            scoreboard,
        })
    }

    /// The game as clients see it, with only the fields asked for.
    pub(super) fn view(&self, fields: &Fields) -> Result<pb::Game, ApiError> {
        let view = self
            .variant_view()
            .map_err(|e| ApiError::from(CommandError::Rules(e)))?;
        let mut game = convert::to_api::game(
            &self.meta(&self.rules.options),
            &self.match_state,
            &view.board,
            &view.legal,
            fields,
        );
        if fields.has(GameField::Scoreboard) {
            let geometry = self.rules.plugin.geometry();
            game.scoreboard = view
                .scoreboard
                .as_ref()
                .map(|b| convert::to_api::scoreboard(b, geometry));
        }
        Ok(game)
    }
}

impl<S: GameStore> Games<S> {
    pub(super) fn slot(&self, game_id: &str) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slot = slots
            .entry(game_id.to_string())
            .or_insert_with(|| {
                Arc::new(Slot {
                    live: tokio::sync::Mutex::new(None),
                    updates: broadcast::channel(WATCH_BUFFER).0,
                    last_used: Mutex::new(Instant::now()),
                    refresh_waiting: AtomicBool::new(false),
                })
            })
            .clone();
        crate::metrics::games_in_memory(slots.len());
        *slot.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        slot
    }

    /// Forgets games nobody used for `idle`: no call in flight, no
    /// watcher. They stay in the store and are read again when asked for,
    /// so an idle game costs no memory.
    pub fn evict_idle(&self, idle: Duration) -> usize {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let before = slots.len();
        slots.retain(|_, slot| {
            let in_use = Arc::strong_count(slot) > 1 || slot.updates.receiver_count() > 0;
            let last = *slot.last_used.lock().unwrap_or_else(|e| e.into_inner());
            in_use || last.elapsed() < idle
        });
        crate::metrics::games_in_memory(slots.len());
        before - slots.len()
    }

    /// Drops the slot a call for an unknown game made, unless another call
    /// holds it too (then the idle eviction does): asking for ids that do
    /// not exist must not fill the memory.
    pub(super) fn forget_unknown(&self, game_id: &str) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        // Held by the map and by the one call that is failing.
        if slots
            .get(game_id)
            .is_some_and(|slot| Arc::strong_count(slot) <= 2 && slot.updates.receiver_count() == 0)
        {
            slots.remove(game_id);
            crate::metrics::games_in_memory(slots.len());
        }
    }

    /// Games held in memory.
    pub fn live_games(&self) -> usize {
        self.slots.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Reads a stored game into memory.
    pub(super) async fn load(&self, game_id: &str) -> Result<Live, ApiError> {
        let Some(record) = self.store.load(game_id).await.map_err(ApiError::store)? else {
            self.forget_unknown(game_id);
            return Err(ApiError::not_found(game_id));
        };
        let plugin = self.plugins.get(&record.variant).ok_or_else(|| {
            ApiError::new(
                Reason::VariantNotLoaded,
                format!(
                    "this game's variant `{}` is not loaded on this server",
                    record.variant
                ),
            )
        })?;
        if plugin.version() != record.variant_version {
            tracing::warn!(
                game_id,
                variant = %record.variant,
                started_with = %record.variant_version,
                loaded = plugin.version(),
                "game continues on another version of its variant"
            );
        }
        let options: BTreeMap<String, String> =
            serde_json::from_str(&record.options).map_err(corrupt)?;
        let (game, dice, clock): snapshot::Stored =
            snapshot::decode(&record.state, self.seal(game_id)).map_err(|e| match e {
                // Not damage: a newer server wrote it.
                snapshot::SnapshotError::Newer(_) => ApiError::new(
                    Reason::StorageFormatNewer,
                    format!("game {game_id} was stored by a newer server ({e}); upgrade this one"),
                ),
                e => corrupt(e),
            })?;
        game.check()
            .map_err(|e| ApiError::data_loss(format!("game {game_id}: {e}")))?;
        let mut rules = VariantRules::new(plugin, options);
        if let Some(start) = &record.start_board {
            // A match taken up somewhere plays its later games from the
            // variant's setup: only `EveryGame` is the rules' business.
            if let snapshot::Start::EveryGame(board) =
                snapshot::decode_start(start).map_err(corrupt)?
            {
                rules.start = Some(board);
            }
        }
        let last_events = match self
            .store
            .log_after(game_id, record.version - 1)
            .await
            .map_err(ApiError::store)?
            .iter()
            .find(|e| e.version == record.version)
        {
            Some(entry) => Entry::read(entry)?.api_events(),
            None => Vec::new(),
        };
        let live = Live {
            rules,
            record,
            match_state: game,
            dice,
            clock,
            last_events,
            stale: false,
        };
        // A state that reads as JSON may still be one its variant refuses
        // (a die of 9, a board cut short): damaged data, not a plugin bug.
        let checked = live.clone();
        let refused = self
            .off_runtime(&live.rules.plugin, move || {
                Ok(checked
                    .variant_view()
                    .err()
                    .is_some_and(|e| e.kind == RulesErrorKind::InvalidInput))
            })
            .await?;
        if refused {
            return Err(ApiError::data_loss(format!(
                "game {game_id}: its variant refuses the stored state"
            )));
        }
        Ok(live)
    }

    /// The game as stored now, with the fields asked for.
    pub async fn get(&self, game_id: &str, fields: &Fields) -> Result<pb::Game, ApiError> {
        let game_id = &game_id_of(game_id)?;
        let slot = self.slot(game_id);
        let mut guard = slot.live.lock().await;
        let live = self.fresh(&slot, &mut guard, game_id).await?;
        self.view(live, fields).await
    }

    /// The game as stored now. Like [`current`](Self::current), and on a
    /// store other servers write too (replicas), the copy in memory is
    /// used only after the stored version says it is still the latest:
    /// a read shows every action acknowledged before it began, whichever
    /// server applied it.
    pub(super) async fn fresh<'a>(
        &self,
        slot: &Slot,
        guard: &'a mut Option<Live>,
        game_id: &str,
    ) -> Result<&'a mut Live, ApiError> {
        if self.store.shared()
            && let Some(live) = guard.as_mut()
            && !live.stale
        {
            let stored = self.store.version(game_id).await.map_err(ApiError::store)?;
            if stored != Some(live.record.version) {
                live.stale = true;
            }
        }
        self.current(slot, guard, game_id, 0).await
    }

    /// The game in memory, read from the store first when it is not there,
    /// when its last write failed (the store is the truth), or when the
    /// caller has seen a version beyond it (another server moved it on).
    /// This server's watchers hear of versions they missed.
    pub(super) async fn current<'a>(
        &self,
        slot: &Slot,
        guard: &'a mut Option<Live>,
        game_id: &str,
        seen: u64,
    ) -> Result<&'a mut Live, ApiError> {
        let cached = match guard.as_ref() {
            None => None,
            Some(live) if live.stale || seen > live.record.version => Some(live.record.version),
            Some(_) => return guard.as_mut().ok_or_else(lost),
        };
        let loaded = self.load(game_id).await?;
        if let Some(cached) = cached {
            self.catch_up_watchers(slot, cached, &loaded).await?;
        }
        Ok(guard.insert(loaded))
    }
}
