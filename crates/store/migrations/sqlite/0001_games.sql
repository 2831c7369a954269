-- One row per game: its current snapshot, updated by compare-and-set on
-- `version` (the number of actions applied).
CREATE TABLE games (
    game_id          TEXT    PRIMARY KEY,
    variant          TEXT    NOT NULL,
    variant_version  TEXT    NOT NULL,
    options          TEXT    NOT NULL,
    version          INTEGER NOT NULL,
    state            TEXT    NOT NULL,
    white_token_hash BLOB    NOT NULL,
    black_token_hash BLOB    NOT NULL,
    created_at       TEXT    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at       TEXT    NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- The event log: one row per applied action (the version it produced),
-- holding that action's events in order as a JSON array.
CREATE TABLE game_events (
    game_id TEXT    NOT NULL REFERENCES games (game_id),
    version INTEGER NOT NULL,
    events  TEXT    NOT NULL,
    PRIMARY KEY (game_id, version)
);

-- Client request ids, with the first answer, so a retry is never applied
-- twice. `scope` is the game id and seat (or "new-game" for NewGame).
CREATE TABLE requests (
    scope       TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    response    BLOB NOT NULL,
    PRIMARY KEY (scope, request_id)
);
