//! What the store keeps of webhooks: each endpoint's place in the feed
//! (how far its events are staged) and one delivery row an event and
//! endpoint, with the body to send and where its sending stands.
//!
//! The feed row of an action is written in the action's transaction: it
//! is the outbox. Staging reads the feed after an endpoint's place and,
//! in one transaction, writes the deliveries and moves the place, if it
//! is still where the stager read it (compare-and-set): of several
//! servers staging at once, one stages each row. Sending claims due
//! deliveries for a lease (PostgreSQL: `FOR UPDATE SKIP LOCKED`), so one
//! server sends a delivery at a time; a server that dies mid-delivery
//! leaves it due again when the lease runs out (at least once).
//!
//! The store never reads a body or judges an attempt: the server says
//! what came of each.

use crate::StoreError;
use crate::rows::column;

/// Where a delivery stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryState {
    /// Not delivered yet: due at `next_ms` (or being sent until then).
    Pending,
    /// A 2xx answer came.
    Delivered,
    /// Given up after its retry time.
    Failed,
}

impl DeliveryState {
    pub(crate) fn code(self) -> i16 {
        match self {
            DeliveryState::Pending => 0,
            DeliveryState::Delivered => 1,
            DeliveryState::Failed => 2,
        }
    }

    pub(crate) fn of_code(code: i64) -> Option<DeliveryState> {
        match code {
            0 => Some(DeliveryState::Pending),
            1 => Some(DeliveryState::Delivered),
            2 => Some(DeliveryState::Failed),
            _ => None,
        }
    }
}

/// An event staged for an endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewDelivery {
    /// The event's id (the `webhook-id` sent): unique per endpoint.
    pub event_id: String,
    /// The event's kind, as the API numbers it.
    pub kind: i32,
    pub game_id: String,
    /// The body to POST.
    pub payload: Vec<u8>,
}

/// A delivery row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub endpoint: String,
    pub event_id: String,
    pub kind: i32,
    pub game_id: String,
    pub payload: Vec<u8>,
    pub state: DeliveryState,
    /// Attempts begun (a claim counts one).
    pub attempts: u32,
    /// When it was staged, in milliseconds since the Unix epoch.
    pub queued_ms: u64,
    /// Pending: when it is due (or its lease runs out).
    pub next_ms: u64,
    /// When it was delivered or given up.
    pub done_ms: Option<u64>,
    /// The last failed attempt's reason (empty: none failed).
    pub last_error: String,
}

/// What came of an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settled {
    Delivered {
        at_ms: u64,
    },
    /// Failed; due again at `next_ms`.
    Retry {
        next_ms: u64,
        error: String,
    },
    /// Failed, and the retry time is over.
    Failed {
        at_ms: u64,
        error: String,
    },
}

/// What came of one claimed attempt: the delivery's event id, the
/// attempts it was claimed at, and the outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settlement {
    pub event_id: String,
    pub attempts: u32,
    pub outcome: Settled,
}

/// An endpoint's deliveries, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeliveryCounts {
    pub pending: u64,
    pub delivered: u64,
    pub failed: u64,
    /// When the oldest pending one was staged.
    pub oldest_pending_ms: Option<u64>,
}

/// Which deliveries to list, newest staged first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeliveryQuery {
    pub endpoint: Option<String>,
    pub state: Option<DeliveryState>,
    pub game_id: Option<String>,
    pub event_id: Option<String>,
    pub limit: u32,
}

/// A settled attempt as the columns it sets: the state, the next due
/// time (None: kept), when it was done, and the error (None: kept).
pub(crate) fn columns_of(
    outcome: &Settled,
) -> (DeliveryState, Option<u64>, Option<u64>, Option<&str>) {
    match outcome {
        Settled::Delivered { at_ms } => (DeliveryState::Delivered, None, Some(*at_ms), None),
        Settled::Retry { next_ms, error } => {
            (DeliveryState::Pending, Some(*next_ms), None, Some(error))
        }
        Settled::Failed { at_ms, error } => {
            (DeliveryState::Failed, None, Some(*at_ms), Some(error))
        }
    }
}

/// The message a delivery of an endpoint no longer configured is given
/// up with.
pub(crate) const RETIRED: &str = "its endpoint is no longer configured (--webhooks-file)";

/// Counts read as (state, n, oldest) rows.
pub(crate) fn counts<R>(rows: &[R]) -> Result<DeliveryCounts, StoreError>
where
    R: sqlx::Row,
    for<'n> &'n str: sqlx::ColumnIndex<R>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let mut counts = DeliveryCounts::default();
    for row in rows {
        let state: i64 = column(row, "state", "webhook delivery counts")?;
        let n: i64 = column(row, "n", "webhook delivery counts")?;
        let n = n.max(0) as u64;
        match DeliveryState::of_code(state) {
            Some(DeliveryState::Pending) => {
                counts.pending = n;
                let oldest: Option<i64> = column(row, "oldest", "webhook delivery counts")?;
                counts.oldest_pending_ms = oldest.map(|ms| ms.max(0) as u64);
            }
            Some(DeliveryState::Delivered) => counts.delivered = n,
            Some(DeliveryState::Failed) => counts.failed = n,
            None => {
                return Err(StoreError::Corrupt(format!(
                    "webhook deliveries in state {state}"
                )));
            }
        }
    }
    Ok(counts)
}
