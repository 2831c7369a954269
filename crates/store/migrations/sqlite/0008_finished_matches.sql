-- When a match ended (unix seconds; NULL while it runs), so that an
-- operator's retention can remove the matches that ended long ago. A
-- partial index: running matches, the ones written on every action, have
-- no entry in it. Matches that ended before this column existed stay NULL
-- (the store cannot read their state) and are kept.
ALTER TABLE games ADD COLUMN finished_at INTEGER;
CREATE INDEX games_finished ON games (finished_at) WHERE finished_at IS NOT NULL;

-- When the running seat's time runs out (milliseconds since the Unix
-- epoch; NULL: no clock runs), so that the servers find the clocks that
-- are due without a scan: only matches with a running clock are in the
-- index.
ALTER TABLE games ADD COLUMN deadline_at INTEGER;
CREATE INDEX games_deadline ON games (deadline_at) WHERE deadline_at IS NOT NULL;
