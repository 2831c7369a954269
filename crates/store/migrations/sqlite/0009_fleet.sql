-- The fleet (issue 46): the site's words on a match, the index lists
-- read, and the feed of every match's commits.
--
-- `labels`: a JSON object of the site's labels; `white_player` and
-- `black_player`: the site's player ids ('' none); `owner`: who created
-- the match (its client certificate's id, '' without one), so that each
-- caller lists only its own; `to_act`: the seat the match waits for (0
-- none, 1 white, 2 black); `abandoned`: 1 when a seat left; `created_us`
-- and `updated_us`: microseconds since the Unix epoch, the orders lists
-- page by (with game_id after them). Matches stored before this take
-- their times from the text columns and no labels.
ALTER TABLE games ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';
ALTER TABLE games ADD COLUMN white_player TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN black_player TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN to_act INTEGER NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN abandoned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN created_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN updated_us INTEGER NOT NULL DEFAULT 0;
UPDATE games SET created_us = CAST(strftime('%s', created_at) AS INTEGER) * 1000000,
                 updated_us = CAST(strftime('%s', updated_at) AS INTEGER) * 1000000;
CREATE INDEX games_created ON games (created_us, game_id);
CREATE INDEX games_updated ON games (updated_us, game_id);
CREATE INDEX games_white_player ON games (white_player) WHERE white_player <> '';
CREATE INDEX games_black_player ON games (black_player) WHERE black_player <> '';

-- The feed: one row a commit, in commit order (`seq`: one writer
-- commits, so its order is the commit order). `kinds`: a bit a kind of
-- event the commit holds; `detail`: the server's bytes for them (opaque
-- here). Trimmed by age (`at_ms`), from the oldest in commit order up
-- to the first row young enough (no index by time: it would cost every
-- action about 20 bytes, and the trim walks only what it removes).
CREATE TABLE feed (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT    NOT NULL,
    version INTEGER NOT NULL,
    at_ms   INTEGER NOT NULL,
    kinds   INTEGER NOT NULL,
    detail  BLOB
);

-- A removed match's words, kept while the feed may still show its
-- events (the feed's window), so that they carry its labels and players.
CREATE TABLE removed_matches (
    game_id      TEXT    PRIMARY KEY,
    variant      TEXT    NOT NULL,
    labels       TEXT    NOT NULL,
    white_player TEXT    NOT NULL,
    black_player TEXT    NOT NULL,
    owner        TEXT    NOT NULL,
    -- The place of its removal's row: the words go when it is trimmed.
    removal_seq  INTEGER NOT NULL
);
