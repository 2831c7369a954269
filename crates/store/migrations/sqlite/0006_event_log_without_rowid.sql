-- The event log, rebuilt WITHOUT ROWID: rows keyed by (game_id, version)
-- alone keep the key once. A rowid table keeps its primary key a second
-- time, in an index of its own (about 50 bytes an action, a game id being
-- 36 characters). The upgrade copies the whole log once, in key order,
-- in one transaction: it needs free space of about twice the log.
CREATE TABLE game_events_keyed (
    game_id TEXT    NOT NULL REFERENCES games (game_id),
    version INTEGER NOT NULL,
    events  TEXT    NOT NULL,
    PRIMARY KEY (game_id, version)
) WITHOUT ROWID;
INSERT INTO game_events_keyed (game_id, version, events)
    SELECT game_id, version, events FROM game_events ORDER BY game_id, version;
DROP TABLE game_events;
ALTER TABLE game_events_keyed RENAME TO game_events;
