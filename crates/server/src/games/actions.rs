//! Actions: a seat's command applied to the game as stored, the result
//! stored (with its request id), and only then cached and told to the
//! watchers.

use std::sync::Arc;

use bg_api::v1 as pb;
use bg_engine::Seat;
use bg_engine::game::Command;
use bg_store::{EventRecord, GameStore, RequestRecord, StoreError};
use prost::Message;
use tonic::Code;

use super::cache::{Live, Slot};
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

/// What an action comes to on one copy of the game.
enum Judged {
    /// A new version to store, with its events.
    Apply(Live, Vec<EventRecord>),
    /// An answer with no new version: a refusal, the first answer to a
    /// retry, a stale version.
    Answer(Result<pb::Game, ApiError>),
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
        loop {
            let live = self
                .current(&slot, &mut guard, game_id, action.expected_version)
                .await?;
            match self.judge(live, seat, &command, &action).await {
                Judged::Apply(next, events) => {
                    return self.commit(&slot, live, next, &events, seat, &action).await;
                }
                Judged::Answer(answer) if checked || self.is_latest(live).await? => return answer,
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
    async fn judge(&self, live: &Live, seat: Seat, command: &Command, action: &Action) -> Judged {
        let scope = format!("{}/{seat}", live.record.game_id);
        // A request applied before moved the game past the version it
        // expected, so one that expects the current version is not a retry:
        // the store's request log is read first only for the others (a
        // retry, or a stale version). At the current version, an id used
        // before is caught by the commit (the id is already stored), or
        // looked up below when nothing is committed.
        if action.expected_version != live.record.version {
            return Judged::Answer(
                match self.previous_answer(&scope, &action.request_id).await {
                    Ok(Some(previous)) => replay(&previous, &action.fingerprint),
                    Ok(None) => Err(ApiError::version_mismatch(
                        live.record.version,
                        action.expected_version,
                    )),
                    Err(e) => Err(e),
                },
            );
        }
        let mut game = live.game.clone();
        let applied = game.apply(seat, command, &live.rules, &mut ServerDice(rand::rng()));
        let events = match applied {
            Ok(events) if !events.is_empty() => events,
            // Refused, or nothing changed (a second Roll in one turn): no
            // new version, unless the id belongs to another request.
            answer => {
                return Judged::Answer(
                    match self.previous_answer(&scope, &action.request_id).await {
                        Ok(Some(previous)) => replay(&previous, &action.fingerprint),
                        Ok(None) => answer.map_err(ApiError::from).and_then(|_| live.snapshot()),
                        Err(e) => Err(e),
                    },
                );
            }
        };
        let mut record = live.record.clone();
        record.version = live.record.version + 1;
        record.state = match snapshot::encode(&game) {
            Ok(state) => state,
            Err(e) => return Judged::Answer(Err(unserialisable(e))),
        };
        let records = event_records(record.version, &events);
        let next = Live {
            record,
            game,
            rules: live.rules.clone(),
            last_events: api_events(&records),
            stale: false,
        };
        Judged::Apply(next, records)
    }

    /// Stores the new version (with the request id and its answer), then
    /// makes it the copy in memory and tells the watchers.
    async fn commit(
        &self,
        slot: &Slot,
        live: &mut Live,
        next: Live,
        records: &[EventRecord],
        seat: Seat,
        action: &Action,
    ) -> Result<pb::Game, ApiError> {
        let game_id = &live.record.game_id;
        let scope = format!("{game_id}/{seat}");
        let snapshot = next.snapshot()?;
        let request = (!action.request_id.is_empty()).then(|| RequestRecord {
            scope: scope.clone(),
            request_id: action.request_id.clone(),
            fingerprint: action.fingerprint.clone(),
            response: snapshot.encode_to_vec(),
        });
        let expected = live.record.version;
        if let Err(e) = self
            .store
            .commit(&next.record, expected, records, request.as_ref())
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
            // Another writer moved the game on: answered as a stale
            // version is on a single server.
            if let StoreError::Conflict { current } = e {
                return Err(ApiError::version_mismatch(current, action.expected_version));
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
