//! Retention of finished matches: those that ended longer ago than the
//! operator keeps them leave the store, each first written out as its
//! JSON record (ExportMatch's) when the operator keeps an archive.

use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use bg_api::v1 as pb;
use bg_store::GameStore;

use super::Games;
use crate::error::{ApiError, Reason};

/// Matches retired per store query.
const BATCH: u32 = 200;

impl<S: GameStore> Games<S> {
    /// Removes the matches that ended before `before`, each written first
    /// as `ARCHIVE/<game id>.json` when there is an archive folder; returns
    /// how many were removed. A match whose record cannot be written stays
    /// (and stops the sweep: the next one tries again), so an archive on a
    /// full disk loses nothing.
    pub async fn retire_finished(
        &self,
        before: SystemTime,
        archive: Option<&Path>,
    ) -> Result<usize, ApiError> {
        let mut removed = 0;
        loop {
            let ended = self
                .store
                .finished_before(before, BATCH)
                .await
                .map_err(ApiError::store)?;
            for game_id in &ended {
                if let Some(folder) = archive {
                    self.archive(game_id, folder).await?;
                }
                if self
                    .store
                    .remove_finished(game_id, &crate::fleet::feed::of_removal())
                    .await
                    .map_err(ApiError::store)?
                {
                    removed += 1;
                    self.wake_feeds();
                }
                self.forget_unknown(game_id);
            }
            if ended.len() < BATCH as usize {
                return Ok(removed);
            }
        }
    }

    /// Writes a match's JSON record into `folder`, durably, under its id;
    /// a record already there (another replica's, or an earlier sweep's)
    /// is written again.
    async fn archive(&self, game_id: &str, folder: &Path) -> Result<(), ApiError> {
        let record = self
            .export(&pb::ExportMatchRequest {
                game_id: game_id.to_string(),
                format: pb::RecordFormat::Json as i32,
                ..Default::default()
            })
            .await?;
        let path = folder.join(format!("{game_id}.json"));
        let write = move || -> std::io::Result<()> {
            let tmp = path.with_extension("json.tmp");
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(record.text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &path)?;
            std::fs::File::open(path.parent().unwrap_or(Path::new(".")))?.sync_all()
        };
        tokio::task::spawn_blocking(write)
            .await
            .map_err(|e| ApiError::new(Reason::Internal, e.to_string()))?
            .map_err(|e| {
                tracing::error!(game_id, error = %e, "a finished match could not be archived; it stays stored");
                ApiError::new(Reason::ArchiveUnavailable,
                    format!("archiving {game_id}: {e}"),
                )
            })
    }
}
