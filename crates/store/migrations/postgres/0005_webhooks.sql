-- Webhooks (issue 46): the same as SQLite's migration 0010. A delivery
-- being sent is claimed with FOR UPDATE SKIP LOCKED and a lease
-- (`next_ms`), so that of several replicas one sends it at a time.
CREATE TABLE webhook_endpoints (
    name      TEXT   PRIMARY KEY,
    after_tx  xid8   NOT NULL,
    after_seq BIGINT NOT NULL,
    active_ms BIGINT NOT NULL
);

CREATE TABLE webhook_deliveries (
    endpoint   TEXT    NOT NULL,
    event_id   TEXT    NOT NULL,
    kind       INTEGER NOT NULL,
    game_id    TEXT    NOT NULL,
    payload    BYTEA   NOT NULL,
    state      SMALLINT NOT NULL DEFAULT 0,
    attempts   INTEGER NOT NULL DEFAULT 0,
    queued_ms  BIGINT  NOT NULL,
    next_ms    BIGINT  NOT NULL,
    done_ms    BIGINT,
    last_error TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (endpoint, event_id)
);
CREATE INDEX webhook_due ON webhook_deliveries (endpoint, next_ms) WHERE state = 0;
CREATE INDEX webhook_queued ON webhook_deliveries (queued_ms);
-- Settled deliveries are forgotten by when they settled.
CREATE INDEX webhook_settled ON webhook_deliveries (done_ms) WHERE state <> 0;
