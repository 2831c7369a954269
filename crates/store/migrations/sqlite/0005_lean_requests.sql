-- Request ids in fewer bytes. A new server records an action's id with
-- only the version it produced (`version`) and NewGame's with the game it
-- created (`game_id`), and rebuilds the answer from them; rows written by
-- older servers keep their whole encoded answer (`response`). Exactly one
-- of the three is set.
--
-- The table is rebuilt WITHOUT ROWID: its rows live in the primary key's
-- b-tree, instead of in a rowid table plus a second b-tree repeating the
-- key. The index by time goes too: a secondary index of a WITHOUT ROWID
-- table repeats the whole key (about 70 bytes an action), and the point of
-- this change is to bring the bytes stored for each action under 400.
-- Forgetting old ids walks the table in key order instead (see
-- `SqliteStore::forget_requests`).
CREATE TABLE requests_lean (
    scope       TEXT    NOT NULL,
    request_id  TEXT    NOT NULL,
    fingerprint BLOB    NOT NULL,
    version     INTEGER,
    game_id     TEXT,
    response    BLOB,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (scope, request_id)
) WITHOUT ROWID;

-- The old rows, answer kept (in key order: each lands at the b-tree's end).
INSERT INTO requests_lean (scope, request_id, fingerprint, response, created_at)
SELECT scope, request_id, fingerprint, response, created_at
FROM requests
ORDER BY scope, request_id;

-- Dropping the table drops its index `requests_by_time` with it.
DROP TABLE requests;
ALTER TABLE requests_lean RENAME TO requests;
