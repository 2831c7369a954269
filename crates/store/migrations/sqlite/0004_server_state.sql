-- The writer's own small write while the storage fails (a full disk): one
-- row, a counter. When it commits again, the store is writable again.
CREATE TABLE store_probe (
    id     INTEGER PRIMARY KEY,
    writes INTEGER NOT NULL
);

-- Facts about the database as a whole, by name: `token_key_fingerprint`,
-- the SHA-256 fingerprint of the key seat tokens are derived with, so a
-- server started with another key refuses to start.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
