//! Faults injected in the writer by the tests: each step of a commit.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sqlite) enum Fault {
    /// The transaction cannot begin.
    BeforeBegin,
    /// A statement fails.
    InStatements,
    /// COMMIT fails and leaves the transaction open.
    AtCommit,
    /// COMMIT succeeds, yet an error is reported (as an fsync error).
    AfterCommit,
    /// The writer's thread panics (a bug) before the transaction.
    Panic,
}

#[cfg(test)]
#[derive(Debug, Default)]
pub(in crate::sqlite) struct Faults {
    /// The faults of the next transactions, in order.
    pub planned: std::sync::Mutex<std::collections::VecDeque<Option<Fault>>>,
    /// SQLite's `max_page_count` for the writer: a database that may
    /// not grow past this many pages fails its writes with "database
    /// or disk is full", as a full disk does.
    pub max_pages: std::sync::Mutex<Option<u64>>,
    /// While set, the writer does not probe (so a test can look at the
    /// writable flag without a race with the probe).
    pub probes_paused: std::sync::atomic::AtomicBool,
}

#[cfg(test)]
impl Faults {
    pub fn next(&self) -> Option<Fault> {
        let mut planned = self.planned.lock().unwrap_or_else(|e| e.into_inner());
        planned.pop_front().flatten()
    }

    pub fn probes_paused(&self) -> bool {
        self.probes_paused.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn limit_pages(&self, connection: &rusqlite::Connection) {
        let limit = *self.max_pages.lock().unwrap_or_else(|e| e.into_inner());
        // 4294967294: SQLite's own largest limit, i.e. none.
        let pages = limit.unwrap_or(4_294_967_294);
        let _ = connection.execute_batch(&format!("PRAGMA max_page_count = {pages}"));
    }
}
