//! Webhook deliveries in the SQLite file (see `crate::webhooks`). Written
//! on the store's one side connection, in `BEGIN IMMEDIATE` transactions
//! (the write lock at once, waiting for the action writer's commit if one
//! is under way), so the action writer keeps its thread to itself. One
//! process owns the file, so a claim needs no more than its lease.

use sqlx::{Connection, QueryBuilder, Sqlite};

use super::SqliteStore;
use crate::rows::delivery;
use crate::webhooks::{RETIRED, columns_of, counts};
use crate::{
    Delivery, DeliveryCounts, DeliveryQuery, FeedPosition, NewDelivery, Settlement, StoreError,
};

fn int(n: u64) -> i64 {
    n.min(i64::MAX as u64) as i64
}

const DELIVERY_COLUMNS: &str = "endpoint, event_id, kind, game_id, payload, state, attempts, \
     queued_ms, next_ms, done_ms, last_error";

impl SqliteStore {
    pub(super) async fn webhook_place_sqlite(
        &self,
        endpoint: &str,
        start: FeedPosition,
        now_ms: u64,
    ) -> Result<FeedPosition, StoreError> {
        let mut connection = self.side.acquire().await?;
        sqlx::query(
            "INSERT INTO webhook_endpoints (name, after_tx, after_seq, active_ms) VALUES (?, 0, ?, ?) \
             ON CONFLICT (name) DO UPDATE SET active_ms = max(active_ms, excluded.active_ms)",
        )
        .bind(endpoint)
        .bind(int(start.seq))
        .bind(int(now_ms))
        .execute(&mut *connection)
        .await?;
        let seq: i64 = sqlx::query_scalar("SELECT after_seq FROM webhook_endpoints WHERE name = ?")
            .bind(endpoint)
            .fetch_one(&mut *connection)
            .await?;
        Ok(FeedPosition {
            tx: 0,
            seq: seq.max(0) as u64,
        })
    }

    pub(super) async fn stage_deliveries_sqlite(
        &self,
        endpoint: &str,
        from: FeedPosition,
        to: FeedPosition,
        deliveries: &[NewDelivery],
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut connection = self.side.acquire().await?;
        let mut transaction = connection.begin_with("BEGIN IMMEDIATE").await?;
        let moved = sqlx::query(
            "UPDATE webhook_endpoints SET after_seq = ?, active_ms = ? WHERE name = ? AND after_seq = ?",
        )
        .bind(int(to.seq))
        .bind(int(now_ms))
        .bind(endpoint)
        .bind(int(from.seq))
        .execute(&mut *transaction)
        .await?
        .rows_affected();
        if moved != 1 {
            transaction.rollback().await?;
            return Ok(false);
        }
        // In chunks: SQLite takes at most 32,766 values a statement.
        for chunk in deliveries.chunks(1000) {
            let mut insert = QueryBuilder::<Sqlite>::new(
                "INSERT INTO webhook_deliveries (endpoint, event_id, kind, game_id, payload, queued_ms, next_ms) ",
            );
            insert.push_values(chunk, |mut row, d| {
                row.push_bind(endpoint)
                    .push_bind(&d.event_id)
                    .push_bind(d.kind)
                    .push_bind(&d.game_id)
                    .push_bind(&d.payload)
                    .push_bind(int(now_ms))
                    .push_bind(int(now_ms));
            });
            insert.push(" ON CONFLICT (endpoint, event_id) DO NOTHING");
            insert.build().execute(&mut *transaction).await?;
        }
        transaction.commit().await?;
        Ok(true)
    }

    pub(super) async fn claim_deliveries_sqlite(
        &self,
        endpoint: &str,
        now_ms: u64,
        lease_until_ms: u64,
        limit: u32,
    ) -> Result<Vec<Delivery>, StoreError> {
        let mut connection = self.side.acquire().await?;
        let mut transaction = connection.begin_with("BEGIN IMMEDIATE").await?;
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE webhook_deliveries SET attempts = attempts + 1, next_ms = ?1 \
             WHERE rowid IN (SELECT rowid FROM webhook_deliveries \
                             WHERE endpoint = ?2 AND state = 0 AND next_ms <= ?3 \
                             ORDER BY next_ms LIMIT ?4) \
             RETURNING {DELIVERY_COLUMNS}"
        )))
        .bind(int(lease_until_ms))
        .bind(endpoint)
        .bind(int(now_ms))
        .bind(i64::from(limit))
        .fetch_all(&mut *transaction)
        .await?;
        transaction.commit().await?;
        let mut claimed = rows.iter().map(delivery).collect::<Result<Vec<_>, _>>()?;
        claimed.sort_by_key(|d| d.queued_ms);
        Ok(claimed)
    }

    pub(super) async fn settle_deliveries_sqlite(
        &self,
        endpoint: &str,
        settled: &[Settlement],
    ) -> Result<(), StoreError> {
        let mut connection = self.side.acquire().await?;
        let mut transaction = connection.begin_with("BEGIN IMMEDIATE").await?;
        for s in settled {
            let (state, next_ms, done_ms, error) = columns_of(&s.outcome);
            sqlx::query(
                "UPDATE webhook_deliveries SET state = ?, next_ms = COALESCE(?, next_ms), \
                 done_ms = ?, last_error = COALESCE(?, last_error) \
                 WHERE endpoint = ? AND event_id = ? AND state = 0 AND attempts = ?",
            )
            .bind(state.code())
            .bind(next_ms.map(int))
            .bind(done_ms.map(int))
            .bind(error)
            .bind(endpoint)
            .bind(&s.event_id)
            .bind(i64::from(s.attempts))
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        Ok(())
    }

    pub(super) async fn delivery_counts_sqlite(
        &self,
        endpoint: &str,
        settled: bool,
    ) -> Result<DeliveryCounts, StoreError> {
        let rows = sqlx::query(if settled {
            "SELECT state, count(*) AS n, min(queued_ms) AS oldest FROM webhook_deliveries \
             WHERE endpoint = ? GROUP BY state"
        } else {
            "SELECT 0 AS state, count(*) AS n, min(queued_ms) AS oldest FROM webhook_deliveries \
             WHERE endpoint = ? AND state = 0"
        })
        .bind(endpoint)
        .fetch_all(&self.readers)
        .await?;
        counts(&rows)
    }

    pub(super) async fn retire_webhook_endpoints_sqlite(
        &self,
        keep: &[String],
        now_ms: u64,
    ) -> Result<u64, StoreError> {
        // `AND column NOT IN (kept names)`, nothing when none is kept.
        fn not_kept(q: &mut QueryBuilder<Sqlite>, column: &str, keep: &[String]) {
            if keep.is_empty() {
                return;
            }
            q.push(format!(" AND {column} NOT IN ("));
            let mut names = q.separated(", ");
            for name in keep {
                names.push_bind(name.clone());
            }
            q.push(")");
        }
        let mut connection = self.side.acquire().await?;
        let mut transaction = connection.begin_with("BEGIN IMMEDIATE").await?;
        let mut retire =
            QueryBuilder::<Sqlite>::new("UPDATE webhook_deliveries SET state = 2, done_ms = ");
        retire
            .push_bind(int(now_ms))
            .push(", last_error = ")
            .push_bind(RETIRED)
            .push(" WHERE state = 0");
        not_kept(&mut retire, "endpoint", keep);
        let retired = retire
            .build()
            .execute(&mut *transaction)
            .await?
            .rows_affected();
        let mut forget = QueryBuilder::<Sqlite>::new("DELETE FROM webhook_endpoints WHERE 1 = 1");
        not_kept(&mut forget, "name", keep);
        forget.build().execute(&mut *transaction).await?;
        transaction.commit().await?;
        Ok(retired)
    }

    pub(super) async fn list_deliveries_sqlite(
        &self,
        query: &DeliveryQuery,
    ) -> Result<Vec<Delivery>, StoreError> {
        let mut select = QueryBuilder::<Sqlite>::new(format!(
            "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE 1 = 1"
        ));
        if let Some(endpoint) = &query.endpoint {
            select.push(" AND endpoint = ").push_bind(endpoint);
        }
        if let Some(state) = query.state {
            select.push(" AND state = ").push_bind(state.code());
        }
        if let Some(game_id) = &query.game_id {
            select.push(" AND game_id = ").push_bind(game_id);
        }
        if let Some(event_id) = &query.event_id {
            select.push(" AND event_id = ").push_bind(event_id);
        }
        select
            .push(" ORDER BY queued_ms DESC, event_id DESC LIMIT ")
            .push_bind(i64::from(query.limit));
        let rows = select.build().fetch_all(&self.readers).await?;
        rows.iter().map(delivery).collect()
    }

    pub(super) async fn forget_deliveries_sqlite(&self, before_ms: u64) -> Result<u64, StoreError> {
        let mut connection = self.side.acquire().await?;
        Ok(
            sqlx::query("DELETE FROM webhook_deliveries WHERE state <> 0 AND done_ms < ?")
                .bind(int(before_ms))
                .execute(&mut *connection)
                .await?
                .rows_affected(),
        )
    }
}
