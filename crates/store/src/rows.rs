//! Stored rows read back, the same way for both stores: a value that does
//! not read as written is [`StoreError::Corrupt`], naming the row and the
//! column, never a panic, and it fails only what touches that row. Also
//! the one way both stores turn an [`Answer`] into its columns, so that
//! what they write is what they read back.

use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::{
    Answer, FeedPosition, FeedRow, GameRecord, LogEntry, MatchIndex, MatchRow, RequestRecord,
    StoreError,
};

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
    as_version(version, what)
}

/// A stored integer as a version: at least 1.
fn as_version(version: i64, what: &str) -> Result<u64, StoreError> {
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
    let finished: i64 = column(row, "finished", what)?;
    let deadline: Option<i64> = column(row, "deadline_at", what)?;
    let index = match_index(row, what)?;
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
        finished: finished != 0,
        deadline_ms: deadline.map(|ms| ms.max(0) as u64),
        index,
    })
}

/// The columns lists read (see [`crate::MatchIndex`]); the flags read as
/// integers (`abandoned` is cast in the queries: PostgreSQL keeps a
/// boolean).
pub(crate) fn match_index<R>(row: &R, what: &str) -> Result<MatchIndex, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
{
    let to_act: i64 = column(row, "to_act", what)?;
    let abandoned: i64 = column(row, "abandoned", what)?;
    Ok(MatchIndex {
        labels: column(row, "labels", what)?,
        players: [
            column(row, "white_player", what)?,
            column(row, "black_player", what)?,
        ],
        owner: column(row, "owner", what)?,
        to_act: u8::try_from(to_act)
            .ok()
            .filter(|&s| s <= 2)
            .ok_or_else(|| StoreError::Corrupt(format!("{what}: to_act {to_act}")))?,
        abandoned: abandoned != 0,
        created_us: column(row, "created_us", what)?,
        updated_us: column(row, "updated_us", what)?,
    })
}

/// A row of a list of matches.
pub(crate) fn match_row<R>(row: &R) -> Result<MatchRow, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
{
    let game_id: String = column(row, "game_id", "a listed match")?;
    let what = format!("game {game_id}");
    let finished: i64 = column(row, "finished", &what)?;
    Ok(MatchRow {
        variant: column(row, "variant", &what)?,
        variant_version: column(row, "variant_version", &what)?,
        options: column(row, "options", &what)?,
        version: stored_version(row, &what)?,
        finished: finished != 0,
        index: match_index(row, &what)?,
        game_id,
    })
}

/// A row of the feed joined with its match's words (`variant` NULL when
/// neither the match nor its removal's record is held).
pub(crate) fn feed_row<R>(row: &R, position: FeedPosition) -> Result<FeedRow, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<String>: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<Vec<u8>>: Decode<'r, R::Database> + Type<R::Database>,
{
    let what = format!("feed row {}/{}", position.tx, position.seq);
    let what = what.as_str();
    let at_ms: i64 = column(row, "at_ms", what)?;
    let kinds: i64 = column(row, "kinds", what)?;
    let detail: Option<Vec<u8>> = column(row, "detail", what)?;
    let labels: Option<String> = column(row, "labels", what)?;
    let white: Option<String> = column(row, "white_player", what)?;
    let black: Option<String> = column(row, "black_player", what)?;
    let owner: Option<String> = column(row, "owner", what)?;
    Ok(FeedRow {
        position,
        game_id: column(row, "game_id", what)?,
        version: stored_version(row, what)?,
        at_ms: u64::try_from(at_ms).unwrap_or(0),
        kinds: u32::try_from(kinds)
            .map_err(|_| StoreError::Corrupt(format!("{what}: kinds {kinds}")))?,
        detail: detail.unwrap_or_default(),
        variant: column(row, "variant", what)?,
        labels: labels.unwrap_or_else(|| "{}".to_string()),
        players: [white.unwrap_or_default(), black.unwrap_or_default()],
        owner: owner.unwrap_or_default(),
        log: column(row, "log", what)?,
        trimmed: match column::<R, Option<Vec<u8>>>(row, "trimmed", what)? {
            Some(bytes) => crate::decode_position(&bytes)?,
            None => FeedPosition::default(),
        },
    })
}

/// Rows of `game_events` (one action each: the version it produced and the
/// server's text for it), as log entries in the order given. The text is
/// returned as stored: the store never reads into it.
pub(crate) fn log_entries<R>(rows: &[R], game_id: &str) -> Result<Vec<LogEntry>, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
{
    rows.iter()
        .map(|row| {
            let what = format!("log of game {game_id}");
            let version = stored_version(row, &what)?;
            let text = column(row, "events", &format!("{what} at version {version}"))?;
            Ok(LogEntry {
                version,
                text,
                feed: crate::Feed::default(),
            })
        })
        .collect()
}

/// An answer as the columns of its row of `requests`: exactly one of
/// `version` (an action's), `game_id` (NewGame's) and `response` (a whole
/// answer, as the format before answers were rebuilt from the log kept it) is set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AnswerColumns<'a> {
    pub version: Option<i64>,
    pub game_id: Option<&'a str>,
    pub response: Option<&'a [u8]>,
}

impl<'a> AnswerColumns<'a> {
    /// The columns of `answer`, or [`StoreError::Corrupt`] for an answer
    /// that could not be read back as written (see [`answer_version`]),
    /// refused before anything is written.
    pub(crate) fn of(answer: &'a Answer) -> Result<AnswerColumns<'a>, StoreError> {
        let none = AnswerColumns {
            version: None,
            game_id: None,
            response: None,
        };
        Ok(match answer {
            Answer::Version(version) => AnswerColumns {
                version: Some(answer_version(*version)?),
                ..none
            },
            Answer::Created(game_id) => AnswerColumns {
                game_id: Some(game_id),
                ..none
            },
            Answer::Response(response) => AnswerColumns {
                response: Some(response),
                ..none
            },
        })
    }
}

/// An answer's version as stored: 0, or one past the columns' range,
/// would not read back as the version written.
fn answer_version(version: u64) -> Result<i64, StoreError> {
    i64::try_from(version)
        .ok()
        .filter(|&v| v >= 1)
        .ok_or_else(|| StoreError::Corrupt(format!("answer version {version} cannot be stored")))
}

/// A row of `requests`: the fingerprint and the answer of a request id.
/// A row with no answer column set, or more than one, is corrupt (no
/// store writes one).
pub(crate) fn request_record<R>(
    row: &R,
    scope: &str,
    request_id: &str,
) -> Result<RequestRecord, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> Vec<u8>: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<i64>: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<String>: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<Vec<u8>>: Decode<'r, R::Database> + Type<R::Database>,
{
    let what = format!("request {request_id:?} of {scope}");
    let version: Option<i64> = column(row, "version", &what)?;
    let game_id: Option<String> = column(row, "game_id", &what)?;
    let response: Option<Vec<u8>> = column(row, "response", &what)?;
    let answer = match (version, game_id, response) {
        (Some(version), None, None) => Answer::Version(as_version(version, &what)?),
        (None, Some(game_id), None) => Answer::Created(game_id),
        (None, None, Some(response)) => Answer::Response(response),
        (version, game_id, response) => {
            let set: Vec<&str> = [
                ("version", version.is_some()),
                ("game_id", game_id.is_some()),
                ("response", response.is_some()),
            ]
            .into_iter()
            .filter_map(|(name, set)| set.then_some(name))
            .collect();
            return Err(StoreError::Corrupt(format!(
                "{what}: answer columns set: {set:?} (exactly one of version, game_id and response must be)"
            )));
        }
    };
    // Read as optional: a NULL (a damaged row) would read as no bytes.
    let fingerprint: Option<Vec<u8>> = column(row, "fingerprint", &what)?;
    let fingerprint =
        fingerprint.ok_or_else(|| StoreError::Corrupt(format!("{what}: no fingerprint")))?;
    Ok(RequestRecord {
        scope: scope.to_string(),
        request_id: request_id.to_string(),
        fingerprint,
        answer,
    })
}

/// A row of `webhook_deliveries` (its integers read as 64 bits: each
/// store casts them so).
pub(crate) fn delivery<R>(row: &R) -> Result<crate::Delivery, StoreError>
where
    R: Row,
    for<'n> &'n str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Vec<u8>: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<i64>: Decode<'r, R::Database> + Type<R::Database>,
{
    let endpoint: String = column(row, "endpoint", "a webhook delivery")?;
    let event_id: String = column(row, "event_id", "a webhook delivery")?;
    let what = format!("webhook delivery {endpoint} {event_id}");
    let what = what.as_str();
    let kind: i64 = column(row, "kind", what)?;
    let state: i64 = column(row, "state", what)?;
    let attempts: i64 = column(row, "attempts", what)?;
    let queued_ms: i64 = column(row, "queued_ms", what)?;
    let next_ms: i64 = column(row, "next_ms", what)?;
    let done_ms: Option<i64> = column(row, "done_ms", what)?;
    Ok(crate::Delivery {
        kind: i32::try_from(kind)
            .map_err(|_| StoreError::Corrupt(format!("{what}: kind {kind}")))?,
        game_id: column(row, "game_id", what)?,
        payload: column(row, "payload", what)?,
        state: crate::DeliveryState::of_code(state)
            .ok_or_else(|| StoreError::Corrupt(format!("{what}: state {state}")))?,
        attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
        queued_ms: u64::try_from(queued_ms).unwrap_or(0),
        next_ms: u64::try_from(next_ms).unwrap_or(0),
        done_ms: done_ms.map(|ms| u64::try_from(ms).unwrap_or(0)),
        last_error: column(row, "last_error", what)?,
        endpoint,
        event_id,
    })
}
