-- When each request id was recorded (unix seconds), so that old ones can
-- be forgotten. Ids recorded before this column existed read as 0: the
-- first sweep forgets them (rewriting every row here instead would make
-- the upgrade of a large database slow).
ALTER TABLE requests ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
-- Ids are recorded in time order: the forgetting reads the oldest first.
CREATE INDEX requests_by_time ON requests (created_at);
