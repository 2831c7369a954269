//! Actions: a seat's command applied to the game as stored, the result
//! stored (with its request id), and only then cached and told to the
//! watchers.

use std::sync::Arc;

use bg_api::v1 as pb;
use bg_engine::game::Command;
use bg_store::{GameStore, RequestRecord, StoreError};
use prost::Message;
use tonic::Code;

use super::cache::Live;
use super::events::{api_events, event_records};
use super::retries::replay;
use super::{Games, ServerDice, game_id_of, unserialisable};
use crate::error::ApiError;
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
                ApiError::new(Code::Internal, "INTERNAL", "the action failed")
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
        let command = action.command?;
        require_version(action.expected_version)?;
        let live = self
            .current(&slot, &mut guard, game_id, action.expected_version)
            .await?;
        let scope = format!("{game_id}/{seat}");
        // A request applied before moved the game past the version it
        // expected, so one that expects the current version is not a retry:
        // the store's request log is read first only for the others (a
        // retry, or a stale version). At the current version, an id used
        // before is caught by the commit (the id is already stored), or
        // looked up below when nothing is committed.
        if action.expected_version != live.record.version {
            if let Some(previous) = self.previous_answer(&scope, &action.request_id).await? {
                return replay(&previous, &action.fingerprint);
            }
            return Err(ApiError::version_mismatch(
                live.record.version,
                action.expected_version,
            ));
        }
        let mut game = live.game.clone();
        let applied = game.apply(seat, &command, &live.rules, &mut ServerDice(rand::rng()));
        let events = match applied {
            Ok(events) if !events.is_empty() => events,
            // Refused, or nothing changed (a second Roll in one turn): no
            // new version, unless the id belongs to another request.
            answer => {
                if let Some(previous) = self.previous_answer(&scope, &action.request_id).await? {
                    return replay(&previous, &action.fingerprint);
                }
                answer?;
                return live.snapshot();
            }
        };
        let expected = live.record.version;
        let mut record = live.record.clone();
        record.version = expected + 1;
        record.state = snapshot::encode(&game).map_err(unserialisable)?;
        let records = event_records(record.version, &events);
        let next = Live {
            record,
            game,
            rules: live.rules.clone(),
            last_events: api_events(&records),
            stale: false,
        };
        let snapshot = next.snapshot()?;
        let request = (!action.request_id.is_empty()).then(|| RequestRecord {
            scope: scope.clone(),
            request_id: action.request_id.clone(),
            fingerprint: action.fingerprint.clone(),
            response: snapshot.encode_to_vec(),
        });
        if let Err(e) = self
            .store
            .commit(&next.record, expected, &records, request.as_ref())
            .await
        {
            // The store may hold another version (another writer, or a
            // write whose outcome is unknown): read it again next time.
            live.stale = true;
            // The same request may have been applied there: answer as it was.
            if matches!(e, StoreError::Conflict { .. } | StoreError::Duplicate)
                && let Ok(Some(previous)) = self.previous_answer(&scope, &action.request_id).await
            {
                return replay(&previous, &action.fingerprint);
            }
            return Err(ApiError::store(e));
        }
        tracing::debug!(game_id, %seat, version = next.record.version, "action applied");
        *live = next;
        // Watchers get the update; with none, it is not even built.
        if slot.updates.receiver_count() > 0 {
            let update = Arc::new(pb::GameUpdate {
                version: live.record.version,
                events: live.last_events.clone(),
                game: Some(snapshot.clone()),
            });
            let _ = slot.updates.send(update);
        }
        Ok(snapshot)
    }
}
