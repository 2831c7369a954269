-- When a match ended (unix seconds; NULL while it runs), so that an
-- operator's retention can remove the matches that ended long ago. A
-- partial index: running matches, the ones written on every action, have
-- no entry in it. Matches that ended before this column existed stay NULL
-- (the store cannot read their state) and are kept.
ALTER TABLE games ADD COLUMN finished_at INTEGER;
CREATE INDEX games_finished ON games (finished_at) WHERE finished_at IS NOT NULL;
