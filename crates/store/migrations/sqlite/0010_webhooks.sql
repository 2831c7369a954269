-- Webhooks (issue 46): each endpoint the operator configures is fed from
-- the feed, which is written in each action's own transaction (the
-- outbox). Its events are staged into `webhook_deliveries` (one row an
-- event and endpoint, with the body to POST) as the feed is read, and
-- the endpoint's place in the feed moves in the same transaction, so an
-- event is staged once, whichever server stages it.
--
-- `after_tx`, `after_seq`: the feed place staged up to (rows at or before
-- it are staged); `active_ms`: when it last moved or was first seen, in
-- milliseconds since the Unix epoch. The feed's trim keeps the rows an
-- endpoint active within the feed's window has not staged yet.
CREATE TABLE webhook_endpoints (
    name      TEXT    PRIMARY KEY,
    after_tx  INTEGER NOT NULL,
    after_seq INTEGER NOT NULL,
    active_ms INTEGER NOT NULL
);

-- `state`: 0 pending, 1 delivered, 2 failed (gave up). `next_ms`: when a
-- pending delivery is due; while one is being sent, when its lease runs
-- out (a server that dies mid-delivery leaves it due again then).
-- `attempts`: the attempts begun. `done_ms`: when it was delivered or
-- given up. `last_error`: the last failed attempt's reason.
CREATE TABLE webhook_deliveries (
    endpoint   TEXT    NOT NULL,
    event_id   TEXT    NOT NULL,
    kind       INTEGER NOT NULL,
    game_id    TEXT    NOT NULL,
    payload    BLOB    NOT NULL,
    state      INTEGER NOT NULL DEFAULT 0,
    attempts   INTEGER NOT NULL DEFAULT 0,
    queued_ms  INTEGER NOT NULL,
    next_ms    INTEGER NOT NULL,
    done_ms    INTEGER,
    last_error TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (endpoint, event_id)
);
CREATE INDEX webhook_due ON webhook_deliveries (endpoint, next_ms) WHERE state = 0;
CREATE INDEX webhook_queued ON webhook_deliveries (queued_ms);
-- Settled deliveries are forgotten by when they settled.
CREATE INDEX webhook_settled ON webhook_deliveries (done_ms) WHERE state <> 0;
