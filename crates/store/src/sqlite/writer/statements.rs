//! The statements of a group's transaction: a game inserted or updated
//! by compare-and-set, its log entry, its request id.

use super::*;

/// BEGIN and the group's statements, write after write (COMMIT is the
/// caller's). A refusal (a version conflict, a duplicate id) stops them:
/// the caller rolls the group back and, for a group of several, applies
/// each write alone to give it its own answer.
///
/// Every statement is compiled once and kept (the connection's cache), and
/// says `OR FAIL`: a refusal rolls the whole transaction back anyway, so
/// SQLite need not keep a statement journal to undo one statement alone.
pub(super) fn statements(
    connection: &Connection,
    ids: &mut UsedIds,
    group: &[Write],
) -> Result<(), Stop> {
    connection.execute_batch("BEGIN IMMEDIATE")?;
    let now = SystemTime::now();
    for write in group {
        let (game, entry, request) = match &write.kind {
            WriteKind::Create {
                game,
                entry,
                request,
            } => {
                insert_game(connection, game, now)?;
                (game, entry, request)
            }
            WriteKind::Commit {
                game,
                expected_version,
                entry,
                request,
            } => {
                update_game(connection, game, *expected_version, now)?;
                (game, entry, request)
            }
        };
        let game_id = game.game_id.as_str();
        insert_feed_row(connection, game_id, entry.version, &entry.feed, now)?;
        let logged = request
            .as_ref()
            .and_then(|request| Some((request, request.logged.as_deref()?)));
        match logged {
            Some((request, rest)) => {
                ids.claim(connection, game_id, rest, request)?;
                insert_log_entry(connection, game_id, entry, Some((rest, request, now)))?;
            }
            None => {
                insert_log_entry(connection, game_id, entry, None)?;
                if let Some(request) = request {
                    insert_request(connection, ids, request, now)?;
                }
            }
        }
    }
    Ok(())
}

pub(super) fn insert_game(
    connection: &Connection,
    game: &GameRecord,
    now: SystemTime,
) -> Result<(), Stop> {
    connection
        .prepare_cached(
            "INSERT OR FAIL INTO games (game_id, variant, variant_version, options, version, state, \
             white_token_hash, black_token_hash, start_board, finished_at, deadline_at, \
             labels, white_player, black_player, owner, to_act, abandoned, created_us, updated_us) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )?
        .execute(params![
            game.game_id,
            game.variant,
            game.variant_version,
            game.options,
            game.version as i64,
            game.state,
            game.token_hashes[0],
            game.token_hashes[1],
            game.start_board,
            finished_at(game, now),
            deadline_at(game),
            game.index.labels,
            game.index.players[0],
            game.index.players[1],
            game.index.owner,
            game.index.to_act,
            game.index.abandoned,
            game.index.created_us,
            game.index.updated_us,
        ])?;
    Ok(())
}

/// The commit's row of the feed: its place is its `seq`, given in commit
/// order (this writer is the only one).
pub(super) fn insert_feed_row(
    connection: &Connection,
    game_id: &str,
    version: u64,
    feed: &crate::Feed,
    now: SystemTime,
) -> Result<(), Stop> {
    connection
        .prepare_cached(
            "INSERT OR FAIL INTO feed (game_id, version, at_ms, kinds, detail) VALUES (?, ?, ?, ?, ?)",
        )?
        .execute(params![
            game_id,
            version as i64,
            unix_millis(now),
            i64::from(feed.kinds),
            (!feed.detail.is_empty()).then_some(feed.detail.as_slice()),
        ])?;
    Ok(())
}

/// Milliseconds since the Unix epoch.
pub(crate) fn unix_millis(at: SystemTime) -> i64 {
    at.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis().min(i64::MAX as u128) as i64)
}

/// When the running seat's time runs out (ms since the epoch; NULL: no
/// clock runs).
pub(super) fn deadline_at(game: &GameRecord) -> Option<i64> {
    game.deadline_ms.map(|ms| ms.min(i64::MAX as u64) as i64)
}

/// When a match that is over ended: `now`, when this write ends it
/// (unix seconds); NULL while it runs.
pub(super) fn finished_at(game: &GameRecord, now: SystemTime) -> Option<i64> {
    game.finished.then(|| unix_seconds(now))
}

/// The compare-and-set: the snapshot changes only if still at `expected`.
pub(super) fn update_game(
    connection: &Connection,
    game: &GameRecord,
    expected: u64,
    now: SystemTime,
) -> Result<(), Stop> {
    let updated = connection
        .prepare_cached(
            "UPDATE OR FAIL games SET version = ?, state = ?, updated_at = CURRENT_TIMESTAMP, \
             finished_at = ?, deadline_at = ?, to_act = ?, abandoned = ?, updated_us = ? \
             WHERE game_id = ? AND version = ?",
        )?
        .execute(params![
            game.version as i64,
            game.state,
            finished_at(game, now),
            deadline_at(game),
            game.index.to_act,
            game.index.abandoned,
            game.index.updated_us,
            game.game_id,
            expected as i64
        ])?;
    if updated == 1 {
        return Ok(());
    }
    let current: Option<i64> = connection
        .prepare_cached("SELECT version FROM games WHERE game_id = ?")?
        .query([&game.game_id])?
        .next()?
        .map(|row| row.get(0))
        .transpose()?;
    Err(Stop::Refused(match current {
        Some(v) => StoreError::Conflict { current: v as u64 },
        None => StoreError::NotFound,
    }))
}

/// The action's row of the event log: the version it made and the
/// server's text for it, kept as it is, and its request id when the log
/// keeps it (the rest of its scope, recorded `now`).
pub(super) fn insert_log_entry(
    connection: &Connection,
    game_id: &str,
    entry: &LogEntry,
    request: Option<(&str, &RequestRow, SystemTime)>,
) -> Result<(), Stop> {
    let (rest, request_id, fingerprint, at) = match request {
        Some((rest, request, now)) => (
            Some(rest),
            Some(request.request_id.as_str()),
            Some(request.fingerprint.as_slice()),
            Some(unix_seconds(now)),
        ),
        None => (None, None, None, None),
    };
    connection
        .prepare_cached(
            "INSERT OR FAIL INTO game_events (game_id, version, events, \
             request_scope, request_id, request_fingerprint, requested_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )?
        .execute(params![
            game_id,
            entry.version as i64,
            entry.text,
            rest,
            request_id,
            fingerprint,
            at
        ])?;
    Ok(())
}

/// A request id as a row of `requests`, stamped `now` (for forgetting it
/// later). An action id there must not be in its game's log either.
pub(super) fn insert_request(
    connection: &Connection,
    ids: &mut UsedIds,
    request: &RequestRow,
    now: SystemTime,
) -> Result<(), Stop> {
    if request.scope != crate::NEW_GAME_SCOPE {
        if let Some((game_id, rest)) = split_scope(&request.scope)
            && in_log(connection, game_id, rest, &request.request_id)?
        {
            return Err(Stop::Refused(StoreError::Duplicate));
        }
        ids.in_table = true;
    }
    connection
        .prepare_cached(
            "INSERT OR FAIL INTO requests (scope, request_id, fingerprint, version, game_id, \
             response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )?
        .execute(params![
            request.scope,
            request.request_id,
            request.fingerprint,
            request.version,
            request.game_id,
            request.response,
            unix_seconds(now),
        ])?;
    Ok(())
}
