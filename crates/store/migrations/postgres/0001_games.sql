-- The PostgreSQL schema: the same tables as SQLite's migrations 0001-0004
-- (one schema, two dialects), for a database shared by several servers.

-- One row per game: its current snapshot, updated by compare-and-set on
-- `version` (the number of actions applied).
CREATE TABLE games (
    game_id          TEXT        PRIMARY KEY,
    variant          TEXT        NOT NULL,
    variant_version  TEXT        NOT NULL,
    options          TEXT        NOT NULL,
    version          BIGINT      NOT NULL,
    state            TEXT        NOT NULL,
    white_token_hash BYTEA       NOT NULL,
    black_token_hash BYTEA       NOT NULL,
    -- A game set up from a position: the board every game of its match
    -- starts from (JSON), or NULL for the variant's own setup.
    start_board      TEXT,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The event log: one row per applied action (the version it produced),
-- holding that action's events in order as a JSON array.
CREATE TABLE game_events (
    game_id TEXT   NOT NULL REFERENCES games (game_id),
    version BIGINT NOT NULL,
    events  TEXT   NOT NULL,
    PRIMARY KEY (game_id, version)
);

-- Client request ids, with the first answer, so a retry is never applied
-- twice, whichever server it reaches. `scope` is the game id and seat (or
-- "new-game" for NewGame); `created_at` is in unix seconds, so that old
-- ids can be forgotten.
CREATE TABLE requests (
    scope       TEXT   NOT NULL,
    request_id  TEXT   NOT NULL,
    fingerprint BYTEA  NOT NULL,
    response    BYTEA  NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (scope, request_id)
);
CREATE INDEX requests_by_time ON requests (created_at);

-- The store's own small write, to learn whether the database takes
-- writes: one row, a counter.
CREATE TABLE store_probe (
    id     INTEGER PRIMARY KEY,
    writes BIGINT  NOT NULL
);

-- Facts about the database as a whole, by name: `token_key_fingerprint`,
-- the SHA-256 fingerprint of the key seat tokens are derived with, so a
-- server started with another key refuses to start.
CREATE TABLE settings (
    name  TEXT  PRIMARY KEY,
    value BYTEA NOT NULL
);
