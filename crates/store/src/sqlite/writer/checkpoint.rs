//! The checkpointer: a thread of its own that copies committed pages from
//! the log into the database file, told of each commit by the writer.

use super::*;

/// Log pages after which the writer checkpoints itself, should the
/// checkpointer fall behind (64 MiB with 4 KiB pages).
pub(super) const WRITER_CHECKPOINT_PAGES: u32 = 16_384;

/// The least time between two checkpoints.
pub(super) const CHECKPOINT_PAUSE: Duration = Duration::from_millis(100);

/// The checkpointer's thread, and how the writer tells it of commits.
pub(super) struct Checkpoints {
    pub(super) commits: std::sync::mpsc::SyncSender<()>,
    pub(super) thread: std::thread::JoinHandle<()>,
}

/// Copies committed pages from the write-ahead log into the database file
/// (a checkpoint) on a connection of its own, so that the writer, whose
/// commits every caller waits for, never does that copying itself. A
/// passive checkpoint runs beside the writer and readers without blocking
/// them; once it has copied the whole log, the next commit starts the log
/// over from its beginning. Ends (closing its connection) when the writer
/// does.
pub(super) fn checkpoint_loop(connection: Connection, commits: std::sync::mpsc::Receiver<()>) {
    while commits.recv().is_ok() {
        if let Err(e) = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!(error = %e, "checkpoint failed; the next one retries");
        }
        // Let commits pile up: one checkpoint copies many of them.
        std::thread::sleep(CHECKPOINT_PAUSE);
    }
    if let Err((_, e)) = connection.close() {
        tracing::warn!(error = %e, "closing the checkpointer's connection");
    }
}
