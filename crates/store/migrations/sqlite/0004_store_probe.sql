-- The writer's own small write while the storage fails (a full disk): one
-- row, a counter. When it commits again, the store is writable again.
CREATE TABLE store_probe (
    id     INTEGER PRIMARY KEY,
    writes INTEGER NOT NULL
);
