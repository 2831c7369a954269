//! Watchers: a game's stored updates from a version on, then live ones,
//! until the client goes away or the server stops.

use std::sync::Arc;

use bg_api::v1 as pb;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bg_store::{Change, GameStore};
use tokio::sync::{broadcast, watch};

use super::cache::{Live, Slot};
use super::events::updates_from;
use super::{Games, game_id_of};
use crate::convert;
use crate::error::{ApiError, Reason};
use crate::fields::Fields;

impl<S: GameStore> Games<S> {
    /// Tells this server's watchers of a game what another server did to
    /// it, from `from` (the version they saw) to the game just read back.
    pub(super) async fn catch_up_watchers(
        &self,
        slot: &Slot,
        from: u64,
        reloaded: &Live,
    ) -> Result<(), ApiError> {
        if slot.updates.receiver_count() == 0 || reloaded.record.version <= from {
            return Ok(());
        }
        let game_id = &reloaded.record.game_id;
        let past = self
            .store
            .log_after(game_id, from)
            .await
            .map_err(ApiError::store)?;
        let now = self.snapshot(reloaded).await?;
        let updates = updates_from(&past, reloaded.record.version, now)?;
        // One batch: however many versions another server made, a
        // watcher reading as fast as it can is not left behind by them.
        let _ = slot.updates.send(Arc::new(updates));
        Ok(())
    }

    /// Follows the commits of every server on a shared store, until the
    /// server stops: the watchers of a game another server moved on get
    /// its updates from the event log, in version order. After notices
    /// may have been lost, and every `resync` in case one was lost
    /// unnoticed (its server died before sending it), every watched game
    /// is read again.
    pub async fn follow_changes(
        self: Arc<Self>,
        mut changes: broadcast::Receiver<Change>,
        resync: Duration,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut every = tokio::time::interval(resync);
        loop {
            let change = tokio::select! {
                change = changes.recv() => change,
                _ = every.tick() => Ok(Change::Resync),
                _ = stop.changed() => return,
            };
            // Another server's commit: the fleet feeds read again.
            self.wake_feeds();
            match change {
                Ok(Change::Game { game_id, .. }) => self.refresh_watched(game_id),
                Ok(Change::Resync) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    for game_id in self.watched_games() {
                        self.refresh_watched(game_id);
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// The games this server has watchers of.
    fn watched_games(&self) -> Vec<String> {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots
            .iter()
            .filter(|(_, slot)| slot.updates.receiver_count() > 0)
            .map(|(game_id, _)| game_id.clone())
            .collect()
    }

    /// Brings a game held here up to its stored version, telling its
    /// watchers what they missed, in a task of its own: a game whose lock
    /// a slow call holds delays no other. One refresh of a game waits at
    /// a time: a notice that comes while one waits is covered by it, since
    /// it reads the stored version once it holds the game.
    fn refresh_watched(self: &Arc<Self>, game_id: String) {
        let slot = {
            let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            match slots.get(&game_id) {
                Some(slot) => slot.clone(),
                None => return,
            }
        };
        if slot.refresh_waiting.swap(true, Ordering::AcqRel) {
            return;
        }
        let games = self.clone();
        tokio::spawn(async move {
            let mut guard = slot.live.lock().await;
            // A notice from now on starts another refresh.
            slot.refresh_waiting.store(false, Ordering::Release);
            // Counted under the lock: a watcher subscribing while the
            // notice came is counted now.
            if slot.updates.receiver_count() == 0 {
                return;
            }
            if let Err(e) = games.fresh(&slot, &mut guard, &game_id).await {
                tracing::debug!(game_id, error = %e.message, "watched game not refreshed; retried later");
            }
        });
    }

    /// The updates after `from_version`, then live ones, until the client
    /// goes away or the server shuts down, each one's game cut to `fields`.
    pub async fn watch(
        &self,
        game_id: &str,
        from_version: u64,
        fields: Fields,
    ) -> Result<tokio::sync::mpsc::Receiver<Result<pb::GameUpdate, tonic::Status>>, ApiError> {
        let game_id = &game_id_of(game_id)?;
        let slot = self.slot(game_id);
        // Subscribe while holding the game: nothing can slip in between.
        let (mut updates, current, snapshot) = {
            let mut guard = slot.live.lock().await;
            let live = self.fresh(&slot, &mut guard, game_id).await?;
            // Counted under the lock: two watchers cannot both take the
            // last place.
            if slot.updates.receiver_count() >= self.watchers_per_game {
                crate::metrics::limited("watchers_per_game");
                return Err(ApiError::new(
                    Reason::TooManyWatchers,
                    format!(
                        "this game has {} watchers on this server, the most allowed (--max-watchers-per-game)",
                        self.watchers_per_game
                    ),
                ));
            }
            let current = live.record.version;
            // The game as it stands ends a catch-up (none when there is none).
            let snapshot = if from_version < current {
                Some(self.snapshot(live).await?)
            } else {
                None
            };
            (slot.updates.subscribe(), current, snapshot)
        };
        // Exactly the versions after `from_version`: none of them when the
        // watcher has seen the current one already (live ones follow), and
        // a version the game has not reached is the caller's mistake.
        if from_version > current {
            return Err(ApiError::new(Reason::VersionAhead,
                format!(
                    "the game is at version {current}: there is nothing after version {from_version} yet; watch from a version up to {current}"
                ),
            )
            .with("current_version", current));
        }
        let catch_up = match snapshot {
            Some(snapshot) => {
                let past = self
                    .store
                    .log_after(game_id, from_version)
                    .await
                    .map_err(ApiError::store)?;
                updates_from(&past, current, snapshot)?
            }
            None => Vec::new(),
        };
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let mut shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            let _counted = crate::metrics::Watcher::opened();
            for update in catch_up {
                if tx.send(Ok(cut(update, &fields))).await.is_err() {
                    return;
                }
            }
            // The last version sent: an update is never sent twice, nor
            // out of order.
            let mut sent = current;
            loop {
                tokio::select! {
                    _ = shutdown.changed() => {
                        let stopping = ApiError::new(Reason::ShuttingDown, "the server is shutting down; resume from the last version seen");
                        let _ = tx.send(Err(stopping.into())).await;
                        return;
                    }
                    batch = updates.recv() => match batch {
                        Ok(batch) => {
                            for update in batch.iter() {
                                if update.version <= sent {
                                    continue;
                                }
                                sent = update.version;
                                if tx.send(Ok(cut(update.clone(), &fields))).await.is_err() {
                                    return;
                                }
                            }
                        }
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            let behind = ApiError::new(Reason::WatcherBehind, "this watcher fell behind; resume from the last version seen");
                            let _ = tx.send(Err(behind.into())).await;
                            return;
                        }
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    _ = tx.closed() => return,
                }
            }
        });
        Ok(rx)
    }
}

/// An update with its game cut to the fields a watcher asked for (the
/// updates are built whole, once for every watcher of the game).
fn cut(mut update: pb::GameUpdate, fields: &Fields) -> pb::GameUpdate {
    if let Some(game) = update.game.as_mut() {
        convert::to_api::keep_only(game, fields);
    }
    update
}
