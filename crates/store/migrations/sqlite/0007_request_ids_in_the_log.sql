-- An action's request id, kept in the action's own row of the event log
-- instead of a row of `requests`: a commit then writes two b-trees (the
-- game's snapshot and its log) instead of three, and each action stores
-- its id without repeating the game id. `request_scope` is the rest of the
-- request's scope after "<game id>/" (the seat); `requested_at` is when it
-- was recorded (unix seconds, as `requests.created_at`), for forgetting it:
-- the four columns are then set back to NULL. Rows without a request id, and
-- rows written before this change, leave all four NULL.
--
-- `requests` keeps NewGame's ids, the ids older servers recorded, and any
-- id whose scope does not name the game it was committed with.
ALTER TABLE game_events ADD COLUMN request_scope TEXT;
ALTER TABLE game_events ADD COLUMN request_id TEXT;
ALTER TABLE game_events ADD COLUMN request_fingerprint BLOB;
ALTER TABLE game_events ADD COLUMN requested_at INTEGER;
