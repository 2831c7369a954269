-- The fleet (issue 46): the same as SQLite's migration 0009.
ALTER TABLE games
    ADD COLUMN labels       TEXT    NOT NULL DEFAULT '{}',
    ADD COLUMN white_player TEXT    NOT NULL DEFAULT '',
    ADD COLUMN black_player TEXT    NOT NULL DEFAULT '',
    ADD COLUMN owner        TEXT    NOT NULL DEFAULT '',
    ADD COLUMN to_act       INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN abandoned    BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN created_us   BIGINT  NOT NULL DEFAULT 0,
    ADD COLUMN updated_us   BIGINT  NOT NULL DEFAULT 0;
UPDATE games SET created_us = (extract(epoch FROM created_at) * 1000000)::bigint,
                 updated_us = (extract(epoch FROM updated_at) * 1000000)::bigint;
CREATE INDEX games_created ON games (created_us, game_id);
CREATE INDEX games_updated ON games (updated_us, game_id);
CREATE INDEX games_white_player ON games (white_player) WHERE white_player <> '';
CREATE INDEX games_black_player ON games (black_player) WHERE black_player <> '';

-- The feed. Its order is (tx, seq), not seq alone: a sequence number is
-- taken before commit, so a lower one can commit after a higher one was
-- read. `tx` is the writing transaction's id, and readers read only rows
-- of transactions older than every transaction still in flight
-- (pg_snapshot_xmin): once such a row is read, no row can appear before
-- it. A match's versions commit one after the other (each read the one
-- before it committed), so their transactions, and rows, are in version
-- order.
CREATE TABLE feed (
    tx      xid8     NOT NULL DEFAULT pg_current_xact_id(),
    seq     BIGSERIAL NOT NULL,
    game_id TEXT     NOT NULL,
    version BIGINT   NOT NULL,
    at_ms   BIGINT   NOT NULL,
    kinds   INTEGER  NOT NULL,
    detail  BYTEA,
    PRIMARY KEY (tx, seq)
);

CREATE TABLE removed_matches (
    game_id      TEXT   PRIMARY KEY,
    variant      TEXT   NOT NULL,
    labels       TEXT   NOT NULL,
    white_player TEXT   NOT NULL,
    black_player TEXT   NOT NULL,
    owner        TEXT   NOT NULL,
    -- The place of its removal's row: the words go when it is trimmed.
    removal_tx   xid8   NOT NULL,
    removal_seq  BIGINT NOT NULL
);
