-- When each request id was recorded (unix seconds), so that old ones can
-- be forgotten. Ids recorded before this column existed count from now.
ALTER TABLE requests ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
UPDATE requests SET created_at = CAST(strftime('%s', 'now') AS INTEGER);
-- Ids are recorded in time order: the forgetting reads the oldest first.
CREATE INDEX requests_by_time ON requests (created_at);
