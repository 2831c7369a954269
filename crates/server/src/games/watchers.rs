//! Watchers: a game's stored updates from a version on, then live ones,
//! until the client goes away or the server stops.

use std::sync::Arc;

use bg_api::v1 as pb;
use bg_store::GameStore;
use tokio::sync::broadcast;
use tonic::Code;

use super::cache::{Live, Slot};
use super::events::updates_from;
use super::{Games, game_id_of};
use crate::error::ApiError;

/// Updates a watcher may fall behind by before it must resume.
pub(super) const WATCH_BUFFER: usize = 32;

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
            let live = self.current(&slot, &mut guard, game_id, 0).await?;
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
            loop {
                tokio::select! {
                    _ = shutdown.changed() => {
                        let stopping = ApiError::new(Code::Unavailable, "SHUTTING_DOWN", "the server is shutting down; resume from the last version seen");
                        let _ = tx.send(Err(stopping.into())).await;
                        return;
                    }
                    update = updates.recv() => match update {
                        Ok(update) if update.version > current => {
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
