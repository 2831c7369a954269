//! Watchers: a game's stored updates from a version on, then live ones,
//! until the client goes away or the server stops.

use std::sync::Arc;

use bg_api::v1 as pb;
use std::time::Duration;

use bg_store::{Change, GameStore};
use tokio::sync::{broadcast, watch};
use tonic::Code;

use super::cache::{Live, Slot};
use super::events::updates_from;
use super::{Games, game_id_of};
use crate::error::ApiError;

/// Updates a watcher may fall behind by before it must resume.
pub(super) const WATCH_BUFFER: usize = 32;

/// On a shared store, how often watched games are read again should a
/// notice of another server's commit have been lost unnoticed.
const RESYNC_INTERVAL: Duration = Duration::from_secs(5);

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
            .events_after(game_id, from)
            .await
            .map_err(ApiError::store)?;
        let updates = updates_from(&past, reloaded.record.version, reloaded.snapshot()?);
        for update in updates {
            let _ = slot.updates.send(Arc::new(update));
        }
        Ok(())
    }

    /// Follows the commits of every server on a shared store, until the
    /// server stops: the watchers of a game another server moved on get
    /// its updates from the event log, in version order. After notices
    /// may have been lost, and every [`RESYNC_INTERVAL`] in case one was
    /// lost unnoticed, every watched game is read again.
    pub async fn follow_changes(
        self: Arc<Self>,
        mut changes: broadcast::Receiver<Change>,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut resync = tokio::time::interval(RESYNC_INTERVAL);
        loop {
            let change = tokio::select! {
                change = changes.recv() => change,
                _ = resync.tick() => Ok(Change::Resync),
                _ = stop.changed() => return,
            };
            match change {
                Ok(Change::Game { game_id, version }) => {
                    self.refresh_watched(&game_id, Some(version)).await
                }
                Ok(Change::Resync) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    for game_id in self.watched_games() {
                        self.refresh_watched(&game_id, None).await;
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

    /// Brings a watched game up to `version` (or to the stored version),
    /// telling its watchers what they missed. A failure (the database
    /// down) is left to the next notice or resync.
    async fn refresh_watched(&self, game_id: &str, version: Option<u64>) {
        let slot = {
            let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            match slots.get(game_id) {
                Some(slot) if slot.updates.receiver_count() > 0 => slot.clone(),
                _ => return,
            }
        };
        let mut guard = slot.live.lock().await;
        let refreshed = match version {
            Some(version) => self.current(&slot, &mut guard, game_id, version).await,
            None => self.fresh(&slot, &mut guard, game_id).await,
        };
        if let Err(e) = refreshed {
            tracing::debug!(game_id, error = %e.message, "watched game not refreshed; retried later");
        }
    }

    /// The updates after `from_version`, then live ones, until the client
    /// goes away or the server shuts down.
    pub async fn watch(
        &self,
        game_id: &str,
        from_version: u64,
    ) -> Result<tokio::sync::mpsc::Receiver<Result<pb::GameUpdate, tonic::Status>>, ApiError> {
        let game_id = &game_id_of(game_id)?;
        let slot = self.slot(game_id);
        // Subscribe while holding the game: nothing can slip in between.
        let (mut updates, current, snapshot) = {
            let mut guard = slot.live.lock().await;
            let live = self.fresh(&slot, &mut guard, game_id).await?;
            (
                slot.updates.subscribe(),
                live.record.version,
                live.snapshot()?,
            )
        };
        let past = self
            .store
            .events_after(game_id, from_version)
            .await
            .map_err(ApiError::store)?;
        let catch_up = updates_from(&past, current, snapshot);
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let mut shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            for update in catch_up {
                if tx.send(Ok(update)).await.is_err() {
                    return;
                }
            }
            // The last version sent: an update is never sent twice, nor
            // out of order.
            let mut sent = current;
            loop {
                tokio::select! {
                    _ = shutdown.changed() => {
                        let stopping = ApiError::new(Code::Unavailable, "SHUTTING_DOWN", "the server is shutting down; resume from the last version seen");
                        let _ = tx.send(Err(stopping.into())).await;
                        return;
                    }
                    update = updates.recv() => match update {
                        Ok(update) if update.version > sent => {
                            sent = update.version;
                            if tx.send(Ok((*update).clone())).await.is_err() {
                                return;
                            }
                        }
                        Ok(_) => {}
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            let behind = ApiError::new(Code::ResourceExhausted, "WATCHER_BEHIND", "this watcher fell behind; resume from the last version seen");
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
