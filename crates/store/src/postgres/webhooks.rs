//! Webhook deliveries in PostgreSQL (see `crate::webhooks`). Several
//! replicas share the rows: staging moves an endpoint's place by
//! compare-and-set, and a claim takes due rows with `FOR UPDATE SKIP
//! LOCKED` and a lease, so each delivery is sent by one replica at a
//! time.

use sqlx::Connection;

use super::{Deadline, PgStore};
use crate::rows::delivery;
use crate::webhooks::{RETIRED, columns_of, counts};
use crate::{
    Delivery, DeliveryCounts, DeliveryQuery, FeedPosition, NewDelivery, Settlement, StoreError,
};

fn int(n: u64) -> i64 {
    n.min(i64::MAX as u64) as i64
}

const RETURNED: &str = "d.endpoint, d.event_id, d.kind::int8 AS kind, d.game_id, d.payload, \
     d.state::int8 AS state, d.attempts::int8 AS attempts, d.queued_ms, d.next_ms, d.done_ms, d.last_error";

impl PgStore {
    pub(super) async fn webhook_place_pg(
        &self,
        endpoint: &str,
        start: FeedPosition,
        now_ms: u64,
    ) -> Result<FeedPosition, StoreError> {
        sqlx::query(
            "INSERT INTO webhook_endpoints (name, after_tx, after_seq, active_ms) \
             VALUES ($1, $2::text::xid8, $3, $4) \
             ON CONFLICT (name) DO UPDATE SET active_ms = GREATEST(webhook_endpoints.active_ms, excluded.active_ms)",
        )
        .bind(endpoint)
        .bind(start.tx.to_string())
        .bind(int(start.seq))
        .bind(int(now_ms))
        .execute(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.write_failed(e))?;
        let row = sqlx::query(
            "SELECT after_tx::text AS tx, after_seq AS seq FROM webhook_endpoints WHERE name = $1",
        )
        .bind(endpoint)
        .fetch_one(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.read_failed(e))?;
        super::feed_position(&row)
    }

    pub(super) async fn stage_deliveries_pg(
        &self,
        endpoint: &str,
        from: FeedPosition,
        to: FeedPosition,
        deliveries: &[NewDelivery],
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut connection = self.connection().await?;
        let staged = async {
            let mut transaction = connection.begin().await?;
            let moved = sqlx::query(
                "UPDATE webhook_endpoints SET after_tx = $1::text::xid8, after_seq = $2, active_ms = $3 \
                 WHERE name = $4 AND after_tx = $5::text::xid8 AND after_seq = $6",
            )
            .bind(to.tx.to_string())
            .bind(int(to.seq))
            .bind(int(now_ms))
            .bind(endpoint)
            .bind(from.tx.to_string())
            .bind(int(from.seq))
            .execute(&mut *transaction)
            .await?
            .rows_affected();
            if moved != 1 {
                transaction.rollback().await?;
                return Ok(false);
            }
            let ids: Vec<&str> = deliveries.iter().map(|d| d.event_id.as_str()).collect();
            let kinds: Vec<i32> = deliveries.iter().map(|d| d.kind).collect();
            let games: Vec<&str> = deliveries.iter().map(|d| d.game_id.as_str()).collect();
            let payloads: Vec<&[u8]> = deliveries.iter().map(|d| d.payload.as_slice()).collect();
            sqlx::query(
                "INSERT INTO webhook_deliveries (endpoint, event_id, kind, game_id, payload, queued_ms, next_ms) \
                 SELECT $1, e, k, g, p, $6, $6 FROM UNNEST($2::text[], $3::int4[], $4::text[], $5::bytea[]) AS u(e, k, g, p) \
                 ON CONFLICT (endpoint, event_id) DO NOTHING",
            )
            .bind(endpoint)
            .bind(ids)
            .bind(kinds)
            .bind(games)
            .bind(payloads)
            .bind(int(now_ms))
            .execute(&mut *transaction)
            .await?;
            transaction.commit().await?;
            Ok(true)
        }
        .by_deadline()
        .await;
        staged.map_err(|e| self.write_failed(e))
    }

    pub(super) async fn claim_deliveries_pg(
        &self,
        endpoint: &str,
        now_ms: u64,
        lease_until_ms: u64,
        limit: u32,
    ) -> Result<Vec<Delivery>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_ms = $1 \
             FROM (SELECT endpoint, event_id FROM webhook_deliveries \
                   WHERE endpoint = $2 AND state = 0 AND next_ms <= $3 \
                   ORDER BY next_ms LIMIT $4 FOR UPDATE SKIP LOCKED) c \
             WHERE d.endpoint = c.endpoint AND d.event_id = c.event_id \
             RETURNING {RETURNED}"
        )))
        .bind(int(lease_until_ms))
        .bind(endpoint)
        .bind(int(now_ms))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.write_failed(e))?;
        let mut claimed = rows.iter().map(delivery).collect::<Result<Vec<_>, _>>()?;
        claimed.sort_by_key(|d| d.queued_ms);
        Ok(claimed)
    }

    pub(super) async fn settle_deliveries_pg(
        &self,
        endpoint: &str,
        settled: &[Settlement],
    ) -> Result<(), StoreError> {
        let mut connection = self.connection().await?;
        let done = async {
            let mut transaction = connection.begin().await?;
            for s in settled {
                let (state, next_ms, done_ms, error) = columns_of(&s.outcome);
                sqlx::query(
                    "UPDATE webhook_deliveries SET state = $1, next_ms = COALESCE($2, next_ms), \
                     done_ms = $3, last_error = COALESCE($4, last_error) \
                     WHERE endpoint = $5 AND event_id = $6 AND state = 0 AND attempts = $7",
                )
                .bind(state.code())
                .bind(next_ms.map(int))
                .bind(done_ms.map(int))
                .bind(error)
                .bind(endpoint)
                .bind(&s.event_id)
                .bind(i32::try_from(s.attempts).unwrap_or(i32::MAX))
                .execute(&mut *transaction)
                .await?;
            }
            transaction.commit().await
        }
        .by_deadline()
        .await;
        done.map_err(|e| self.write_failed(e))
    }

    pub(super) async fn delivery_counts_pg(
        &self,
        endpoint: &str,
        settled: bool,
    ) -> Result<DeliveryCounts, StoreError> {
        let rows = sqlx::query(if settled {
            "SELECT state::int8 AS state, count(*) AS n, min(queued_ms) AS oldest \
             FROM webhook_deliveries WHERE endpoint = $1 GROUP BY state"
        } else {
            "SELECT 0::int8 AS state, count(*) AS n, min(queued_ms) AS oldest \
             FROM webhook_deliveries WHERE endpoint = $1 AND state = 0"
        })
        .bind(endpoint)
        .fetch_all(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.read_failed(e))?;
        counts(&rows)
    }

    pub(super) async fn retire_webhook_endpoints_pg(
        &self,
        keep: &[String],
        now_ms: u64,
    ) -> Result<u64, StoreError> {
        let mut connection = self.connection().await?;
        let retired = async {
            let mut transaction = connection.begin().await?;
            let retired = sqlx::query(
                "UPDATE webhook_deliveries SET state = 2, done_ms = $1, last_error = $2 \
                 WHERE state = 0 AND NOT (endpoint = ANY($3))",
            )
            .bind(int(now_ms))
            .bind(RETIRED)
            .bind(keep)
            .execute(&mut *transaction)
            .await?
            .rows_affected();
            sqlx::query("DELETE FROM webhook_endpoints WHERE NOT (name = ANY($1))")
                .bind(keep)
                .execute(&mut *transaction)
                .await?;
            transaction.commit().await?;
            Ok(retired)
        }
        .by_deadline()
        .await;
        retired.map_err(|e| self.write_failed(e))
    }

    pub(super) async fn list_deliveries_pg(
        &self,
        query: &DeliveryQuery,
    ) -> Result<Vec<Delivery>, StoreError> {
        let mut select = sqlx::QueryBuilder::<sqlx::Postgres>::new(format!(
            "SELECT {RETURNED} FROM webhook_deliveries d WHERE true"
        ));
        if let Some(endpoint) = &query.endpoint {
            select.push(" AND d.endpoint = ").push_bind(endpoint);
        }
        if let Some(state) = query.state {
            select.push(" AND d.state = ").push_bind(state.code());
        }
        if let Some(game_id) = &query.game_id {
            select.push(" AND d.game_id = ").push_bind(game_id);
        }
        if let Some(event_id) = &query.event_id {
            select.push(" AND d.event_id = ").push_bind(event_id);
        }
        select
            .push(" ORDER BY d.queued_ms DESC, d.event_id DESC LIMIT ")
            .push_bind(i64::from(query.limit));
        let rows = select
            .build()
            .fetch_all(&self.pool)
            .by_deadline()
            .await
            .map_err(|e| self.read_failed(e))?;
        rows.iter().map(delivery).collect()
    }

    pub(super) async fn forget_deliveries_pg(&self, before_ms: u64) -> Result<u64, StoreError> {
        Ok(
            sqlx::query("DELETE FROM webhook_deliveries WHERE state <> 0 AND done_ms < $1")
                .bind(int(before_ms))
                .execute(&self.pool)
                .by_deadline()
                .await
                .map_err(|e| self.write_failed(e))?
                .rows_affected(),
        )
    }
}
