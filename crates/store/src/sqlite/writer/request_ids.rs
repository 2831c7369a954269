//! Request ids at the writer: the row a write records ([`RequestRow`]),
//! and which ids are used already ([`UsedIds`], digests of each game's
//! logged ids), so that a used id is refused without a lookup per commit.

use super::*;

/// A request id to record, as its columns: made when the write is queued,
/// so that an answer that cannot be stored is refused to its caller alone
/// and the writer only binds values.
#[derive(Debug)]
pub(in crate::sqlite) struct RequestRow {
    pub(super) scope: String,
    pub(super) request_id: String,
    pub(super) fingerprint: Vec<u8>,
    /// The rest of the scope after "<game id>/" (the seat) when the id is
    /// kept in its action's log row: an action's id in a scope of the game
    /// it is committed with, answered by the version of that log entry.
    /// Otherwise (NewGame's ids, any other) it is a row of `requests`.
    pub(super) logged: Option<String>,
    pub(super) version: Option<i64>,
    pub(super) game_id: Option<String>,
    pub(super) response: Option<Vec<u8>>,
}

impl RequestRow {
    pub(super) fn new(
        request: &RequestRecord,
        game_id: &str,
        version: u64,
    ) -> Result<RequestRow, StoreError> {
        let answer = AnswerColumns::of(&request.answer)?;
        let logged = split_scope(&request.scope)
            .filter(|(game, _)| *game == game_id)
            .filter(|_| request.answer == Answer::Version(version))
            .map(|(_, rest)| rest.to_string());
        Ok(RequestRow {
            scope: request.scope.clone(),
            request_id: request.request_id.clone(),
            fingerprint: request.fingerprint.clone(),
            logged,
            version: answer.version,
            game_id: answer.game_id.map(str::to_string),
            response: answer.response.map(<[u8]>::to_vec),
        })
    }

    /// The columns of a request id, if there is one, recorded with the log
    /// entry of `version` of `game_id`.
    pub fn of(
        request: Option<&RequestRecord>,
        game_id: &str,
        version: u64,
    ) -> Result<Option<RequestRow>, StoreError> {
        request
            .map(|request| RequestRow::new(request, game_id, version))
            .transpose()
    }
}

/// An action scope's game id and the rest (see [`crate::action_scope`]).
/// A game id holding a '/' never matches: its scopes cannot say where it
/// ends, so their ids are kept in `requests`.
pub(in crate::sqlite) fn split_scope(scope: &str) -> Option<(&str, &str)> {
    scope.split_once('/')
}

/// The most games whose logged request ids the writer keeps digests of
/// (8 bytes an id: about 1 MiB for a thousand games of 100 actions). A
/// game left out is read again, its log's ids once, when next written.
pub(super) const KNOWN_GAMES: usize = 16_384;

/// Which request ids are used, for the writer to refuse one used before
/// without a lookup for every commit: the ids of each game's log as 64-bit
/// digests, for the games written lately. A digest found is only a hint
/// (two ids may share one, and an id forgotten since leaves its digest):
/// the game's log is then read for the id itself. Never misses an id: a
/// game's digests are read from its whole log the first time it is
/// written, and every id logged since is added.
#[derive(Debug, Default)]
pub(super) struct UsedIds {
    pub(super) games: std::collections::HashMap<String, std::collections::HashSet<u64>>,
    /// Whether `requests` may hold action ids (in the format before
    /// they moved into log rows, or in scopes that name no game): each action id is looked for there too.
    pub(super) in_table: bool,
}

impl UsedIds {
    /// Reads whether `requests` holds action ids (anything but NewGame's).
    pub(super) fn open(connection: &Connection) -> rusqlite::Result<UsedIds> {
        // Two range reads of the key, where `scope <> ?` would read all.
        let any = |sql: &str| -> rusqlite::Result<bool> {
            connection.prepare(sql)?.exists([crate::NEW_GAME_SCOPE])
        };
        let in_table = any("SELECT 1 FROM requests WHERE scope < ? LIMIT 1")?
            || any("SELECT 1 FROM requests WHERE scope > ? LIMIT 1")?;
        Ok(UsedIds {
            games: Default::default(),
            in_table,
        })
    }

    /// Takes the id of `request` for its log row in `game_id`: refused
    /// (Duplicate) if it is used already, otherwise counted as used from
    /// now (should the write not land after all, its digest is only a
    /// hint too much).
    pub(super) fn claim(
        &mut self,
        connection: &Connection,
        game_id: &str,
        rest: &str,
        request: &RequestRow,
    ) -> Result<(), Stop> {
        let duplicate = || Err(Stop::Refused(StoreError::Duplicate));
        if self.in_table && in_requests(connection, request)? {
            return duplicate();
        }
        let digest = digest(rest, &request.request_id);
        let known = match self.games.get_mut(game_id) {
            Some(known) => known,
            None => {
                let known = logged_digests(connection, game_id)?;
                self.know(game_id, known)
            }
        };
        if !known.insert(digest) && in_log(connection, game_id, rest, &request.request_id)? {
            return duplicate();
        }
        Ok(())
    }

    /// A game just created: no id is logged in it yet.
    pub(super) fn created(&mut self, game_id: &str) {
        if !self.games.contains_key(game_id) {
            self.know(game_id, Default::default());
        }
    }

    /// Keeps a game's digests (another game's go, past [`KNOWN_GAMES`]).
    pub(super) fn know(
        &mut self,
        game_id: &str,
        known: std::collections::HashSet<u64>,
    ) -> &mut std::collections::HashSet<u64> {
        if self.games.len() >= KNOWN_GAMES {
            // Any game will do: it is read again when next written.
            if let Some(other) = self.games.keys().next().cloned() {
                self.games.remove(&other);
            }
        }
        self.games.entry(game_id.to_string()).or_insert(known)
    }
}

/// The digest of a logged request id (SipHash with fixed keys: the same
/// in every process, though only this one's memory holds them).
pub(super) fn digest(rest: &str, request_id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    (rest, request_id).hash(&mut hasher);
    hasher.finish()
}

/// The digests of the ids in a game's log.
pub(super) fn logged_digests(
    connection: &Connection,
    game_id: &str,
) -> rusqlite::Result<std::collections::HashSet<u64>> {
    let mut statement = connection.prepare_cached(
        "SELECT request_scope, request_id FROM game_events \
         WHERE game_id = ? AND request_id IS NOT NULL",
    )?;
    let mut rows = statement.query([game_id])?;
    let mut known = std::collections::HashSet::new();
    while let Some(row) = rows.next()? {
        // A value of another type (a damaged row) reads as no id: the
        // exact lookup in `in_log` would not find it either.
        let rest: Option<String> = row.get(0).ok();
        let request_id: Option<String> = row.get(1).ok();
        if let (Some(rest), Some(request_id)) = (rest, request_id) {
            known.insert(digest(&rest, &request_id));
        }
    }
    Ok(known)
}

/// Whether a game's log holds a request id.
pub(super) fn in_log(
    connection: &Connection,
    game_id: &str,
    rest: &str,
    request_id: &str,
) -> rusqlite::Result<bool> {
    connection
        .prepare_cached(
            "SELECT 1 FROM game_events \
             WHERE game_id = ? AND request_scope = ? AND request_id = ?",
        )?
        .exists([game_id, rest, request_id])
}

/// Whether `requests` holds a request id.
pub(super) fn in_requests(connection: &Connection, request: &RequestRow) -> rusqlite::Result<bool> {
    connection
        .prepare_cached("SELECT 1 FROM requests WHERE scope = ? AND request_id = ?")?
        .exists([&request.scope, &request.request_id])
}
