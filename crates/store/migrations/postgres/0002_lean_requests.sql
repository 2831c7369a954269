-- Request ids in fewer bytes. A new server records an action's id with
-- only the version it produced (`version`) and NewGame's with the game it
-- created (`game_id`), and rebuilds the answer from them; rows written by
-- older servers keep their whole encoded answer (`response`). Exactly one
-- of the three is set (the store reads a row that breaks this as corrupt;
-- no CHECK here, which would read the whole table under lock to validate).
ALTER TABLE requests
    ADD COLUMN version BIGINT,
    ADD COLUMN game_id TEXT,
    ALTER COLUMN response DROP NOT NULL;

-- Forgetting finds old action ids by their time; NewGame's are kept for
-- good, so the index leaves them out (a partial index: one entry an
-- action id, none a game).
DROP INDEX requests_by_time;
CREATE INDEX requests_by_time ON requests (created_at) WHERE scope <> 'new-game';
