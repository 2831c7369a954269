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

-- Ids arrive in time order, so the rows' `created_at` follows their place
-- in the table: a BRIN index (a summary per range of pages, a few pages in
-- all) finds the old ones for forgetting as well as the b-tree did, which
-- repeated every row's time and place.
DROP INDEX requests_by_time;
CREATE INDEX requests_by_time ON requests USING brin (created_at);
