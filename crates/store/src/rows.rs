//! Stored rows read back, the same way for both stores: a value that does
//! not read as written is [`StoreError::Corrupt`], naming the row and the
//! column, never a panic, and it fails only what touches that row.

use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::{EventRecord, GameRecord, RequestRecord, StoreError};

/// A column of a stored row.
pub(crate) fn column<'r, R, T>(row: &'r R, name: &str, what: &str) -> Result<T, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    T: Decode<'r, R::Database> + Type<R::Database>,
{
    row.try_get(name)
        .map_err(|e| StoreError::Corrupt(format!("{what}, column {name}: {e}")))
}

/// A stored version: at least 1.
pub(crate) fn stored_version<R>(row: &R, what: &str) -> Result<u64, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    let version: i64 = column(row, "version", what)?;
    u64::try_from(version)
        .ok()
        .filter(|&v| v >= 1)
        .ok_or_else(|| StoreError::Corrupt(format!("{what}: version {version} is not a version")))
}

/// A row of `games`.
pub(crate) fn game_record<R>(row: &R, game_id: &str) -> Result<GameRecord, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Vec<u8>: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<String>: Decode<'r, R::Database> + Type<R::Database>,
{
    let what = format!("game {game_id}");
    let what = what.as_str();
    Ok(GameRecord {
        game_id: column(row, "game_id", what)?,
        variant: column(row, "variant", what)?,
        variant_version: column(row, "variant_version", what)?,
        options: column(row, "options", what)?,
        version: stored_version(row, what)?,
        state: column(row, "state", what)?,
        token_hashes: [
            column(row, "white_token_hash", what)?,
            column(row, "black_token_hash", what)?,
        ],
        start_board: column(row, "start_board", what)?,
    })
}

/// Rows of `game_events` (one action each: its version and its events as
/// a JSON array), as the events in order.
pub(crate) fn logged_events<R>(rows: &[R], game_id: &str) -> Result<Vec<EventRecord>, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
{
    let mut events = Vec::new();
    for row in rows {
        let what = format!("events of game {game_id}");
        let version = stored_version(row, &what)?;
        let what = format!("{what} at version {version}");
        let json: String = column(row, "events", &what)?;
        let action: Vec<EventRecord> =
            serde_json::from_str(&json).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))?;
        events.extend(action);
    }
    Ok(events)
}

/// A row of `requests`: the fingerprint and the answer of a request id.
pub(crate) fn request_record<R>(
    row: &R,
    scope: &str,
    request_id: &str,
) -> Result<RequestRecord, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> Vec<u8>: Decode<'r, R::Database> + Type<R::Database>,
{
    let what = format!("request {request_id:?} of {scope}");
    Ok(RequestRecord {
        scope: scope.to_string(),
        request_id: request_id.to_string(),
        fingerprint: column(row, "fingerprint", &what)?,
        response: column(row, "response", &what)?,
    })
}
