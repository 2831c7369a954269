//! Delivering webhooks: for each endpoint, a stager that turns the feed's
//! rows into delivery rows, and a sender that claims due deliveries,
//! POSTs them and records what came of each.
//!
//! The promises, and what keeps them:
//! - **Durable.** An event's feed row is committed with its action (the
//!   outbox); the stager writes its deliveries and moves the endpoint's
//!   place in one transaction; the feed's trim keeps rows an active
//!   endpoint has not staged. A crash between any two steps leaves either
//!   the row unstaged (staged again) or the delivery pending (sent again).
//! - **At least once, one replica at a time.** A claim holds a delivery
//!   for a lease (longer than an attempt may take): a server that dies
//!   mid-delivery leaves it due again when the lease runs out, so a
//!   receiver may see an event twice and deduplicates by `webhook-id`.
//! - **Never slows the game.** Both loops run beside the actions, read
//!   what was committed and write on their own connection; an action
//!   never waits for a delivery.
//!
//! Deliveries are not sent in order (retries overtake): an event's
//! version orders a match's events.

use std::sync::Arc;
use std::time::Duration;

use bg_api::v1 as pb;
use bg_store::{
    Delivery, DeliveryQuery, DeliveryState, FeedRow, GameStore, NewDelivery, Settled, Settlement,
};
use prost::Message;
use tokio::sync::{Notify, watch};

use super::Games;
use super::events::log_api_events;
use crate::error::{ApiError, Reason};
use crate::fleet::Access;
use crate::fleet::feed::{self, bit};
use crate::fleet::webhooks::Endpoint;
use crate::fleet::webhooks::post::{Attempt, Poster};
use crate::metrics;

/// Feed rows read a time.
const STAGE_BATCH: u32 = 500;
/// Attempts in flight at once, per endpoint and server.
const IN_FLIGHT: u32 = 32;
/// How long attempts that end are gathered to be settled in one write.
const SETTLE_GATHER: Duration = Duration::from_millis(20);
/// The least time between two reads of the feed (commits wake the
/// stager; it reads them in groups).
const STAGE_EVERY: Duration = Duration::from_millis(100);
/// How often loops look again without being woken (another replica's
/// commits and deliveries falling due).
const POLL: Duration = Duration::from_secs(1);
/// The longest a place may stay unwritten while only rows with nothing
/// to deliver are read.
const PLACE_EVERY: Duration = Duration::from_secs(1);
/// How often an endpoint is noted active while the feed is quiet.
const ACTIVE_EVERY: Duration = Duration::from_secs(10);
/// How often the gauges are read.
const GAUGES_EVERY: Duration = Duration::from_secs(5);
/// How often settled deliveries older than [`KEEP_SETTLED`] are forgotten.
const FORGET_EVERY: Duration = Duration::from_secs(60);
/// How long deliveries delivered or given up are kept (for the operator's
/// look, `ListWebhookDeliveries`).
pub const KEEP_SETTLED: Duration = Duration::from_secs(3 * 24 * 3600);

/// The proto's JSON mapping of a `MatchEvent`, from the API's descriptor
/// set (the body every webhook carries).
#[derive(Clone)]
pub(crate) struct JsonBodies {
    descriptor: prost_reflect::MessageDescriptor,
}

impl JsonBodies {
    pub(crate) fn new() -> anyhow::Result<JsonBodies> {
        let pool = prost_reflect::DescriptorPool::decode(pb::FILE_DESCRIPTOR_SET)?;
        let descriptor = pool
            .get_message_by_name("backgammon.v1.MatchEvent")
            .ok_or_else(|| anyhow::anyhow!("the API's descriptors lack MatchEvent"))?;
        Ok(JsonBodies { descriptor })
    }

    pub(crate) fn of(&self, event: &pb::MatchEvent) -> anyhow::Result<Vec<u8>> {
        let bytes = event.encode_to_vec();
        let message =
            prost_reflect::DynamicMessage::decode(self.descriptor.clone(), bytes.as_slice())?;
        Ok(serde_json::to_vec(&message)?)
    }
}

impl<S: GameStore> Games<S> {
    /// Starts each endpoint's stager, sender and gauges, and the
    /// forgetting of settled deliveries; they stop when the server does
    /// (and start again after a panic, logged). Endpoints stored but no
    /// longer configured are forgotten first, their pending deliveries
    /// given up.
    pub async fn start_webhooks(&self) -> anyhow::Result<()> {
        let keep: Vec<String> = self.webhooks.iter().map(|e| e.name.clone()).collect();
        match self
            .store
            .retire_webhook_endpoints(&keep, super::now_ms())
            .await
        {
            Ok(0) => {}
            Ok(n) => tracing::warn!(
                given_up = n,
                "pending webhook deliveries of endpoints no longer configured were given up"
            ),
            Err(e) => tracing::warn!(error = %e, "endpoints no longer configured not forgotten"),
        }
        if self.webhooks.is_empty() {
            return Ok(());
        }
        let bodies = JsonBodies::new()?;
        for endpoint in self.webhooks.iter() {
            let poster = Poster::new(endpoint)?;
            let staged = Arc::new(Notify::new());
            let stager = Stager {
                store: self.store.clone(),
                endpoint: endpoint.clone(),
                key: self.fleet_key.clone(),
                wake: self.feed_wake.clone(),
                staged: staged.clone(),
                bodies: bodies.clone(),
                stop: self.shutdown.clone(),
            };
            supervise("stager", &endpoint.name, self.shutdown.clone(), move || {
                stager.clone().run()
            });
            let sender = Sender {
                store: self.store.clone(),
                endpoint: endpoint.clone(),
                poster,
                staged,
                stop: self.shutdown.clone(),
            };
            supervise("sender", &endpoint.name, self.shutdown.clone(), move || {
                sender.clone().run()
            });
            let (store, e, stop) = (self.store.clone(), endpoint.clone(), self.shutdown.clone());
            supervise("gauges", &endpoint.name, self.shutdown.clone(), move || {
                gauges(store.clone(), e.clone(), stop.clone())
            });
        }
        let (store, stop) = (self.store.clone(), self.shutdown.clone());
        supervise("forgetting", "", self.shutdown.clone(), move || {
            forget_settled(store.clone(), stop.clone())
        });
        Ok(())
    }

    /// The endpoints' counts and deliveries, for the operator only.
    pub async fn list_webhook_deliveries(
        &self,
        access: Access,
        r: &pb::ListWebhookDeliveriesRequest,
    ) -> Result<pb::ListWebhookDeliveriesResponse, ApiError> {
        if access != Access::Operator {
            return Err(ApiError::new(
                Reason::FleetAccessDenied,
                "webhook deliveries are the operator's to see: send the operator's token",
            ));
        }
        if !r.endpoint.is_empty() && !self.webhooks.iter().any(|e| e.name == r.endpoint) {
            return Err(ApiError::invalid(
                "endpoint",
                format!("no webhook endpoint is named {:?}", r.endpoint),
            ));
        }
        let limit = match r.page_size {
            n if n < 0 => return Err(ApiError::invalid("page_size", "page_size is negative")),
            0 => 100,
            n => (n as u32).min(1000),
        };
        let state = match pb::DeliveryState::try_from(r.state) {
            Ok(pb::DeliveryState::Unspecified) => None,
            Ok(pb::DeliveryState::Pending) => Some(DeliveryState::Pending),
            Ok(pb::DeliveryState::Delivered) => Some(DeliveryState::Delivered),
            Ok(pb::DeliveryState::Failed) => Some(DeliveryState::Failed),
            Err(_) => {
                return Err(ApiError::invalid(
                    "state",
                    format!("{} is no delivery state", r.state),
                ));
            }
        };
        let text = |field: &'static str, value: &str| -> Result<Option<String>, ApiError> {
            if value.len() > 256 || value.chars().any(char::is_control) {
                return Err(ApiError::invalid(
                    field,
                    format!("{field}: at most 256 bytes, no control characters"),
                ));
            }
            Ok((!value.is_empty()).then(|| value.to_string()))
        };
        let query = DeliveryQuery {
            endpoint: text("endpoint", &r.endpoint)?,
            state,
            game_id: text("game_id", &r.game_id)?,
            event_id: text("event_id", &r.event_id)?,
            limit,
        };
        let deliveries = self
            .store
            .list_deliveries(&query)
            .await
            .map_err(ApiError::store)?;
        let mut endpoints = Vec::new();
        for e in self.webhooks.iter() {
            let counts = self
                .store
                .delivery_counts(&e.name, true)
                .await
                .map_err(ApiError::store)?;
            endpoints.push(pb::WebhookEndpoint {
                name: e.name.clone(),
                url: e.shown_url(),
                pending: counts.pending,
                delivered: counts.delivered,
                failed: counts.failed,
                oldest_pending: counts
                    .oldest_pending_ms
                    .map(crate::convert::to_api::timestamp),
            });
        }
        Ok(pb::ListWebhookDeliveriesResponse {
            endpoints,
            deliveries: deliveries.iter().map(delivery_to_api).collect(),
        })
    }
}

fn delivery_to_api(d: &Delivery) -> pb::WebhookDelivery {
    use crate::convert::to_api::timestamp;
    pb::WebhookDelivery {
        endpoint: d.endpoint.clone(),
        event_id: d.event_id.clone(),
        kind: d.kind,
        game_id: d.game_id.clone(),
        state: match d.state {
            DeliveryState::Pending => pb::DeliveryState::Pending,
            DeliveryState::Delivered => pb::DeliveryState::Delivered,
            DeliveryState::Failed => pb::DeliveryState::Failed,
        } as i32,
        attempts: d.attempts,
        queued_at: Some(timestamp(d.queued_ms)),
        next_attempt_at: (d.state == DeliveryState::Pending).then(|| timestamp(d.next_ms)),
        settled_at: d.done_ms.map(timestamp),
        last_error: d.last_error.clone(),
    }
}

/// Runs `task` on its own until the server stops; started again (after
/// a second) if it panics, so that a bug in one delivery never stops an
/// endpoint for good.
fn supervise<F, Fut>(what: &'static str, endpoint: &str, stop: watch::Receiver<bool>, task: F)
where
    F: Fn() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let endpoint = endpoint.to_string();
    tokio::spawn(async move {
        loop {
            match tokio::spawn(task()).await {
                Ok(()) => return,
                Err(e) if e.is_panic() => {
                    tracing::error!(what, %endpoint, "a webhook task panicked; starting it again");
                }
                Err(_) => return,
            }
            if *stop.borrow() {
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
}

/// Turns an endpoint's feed rows into its deliveries.
#[derive(Clone)]
struct Stager<S> {
    store: S,
    endpoint: Arc<Endpoint>,
    key: crate::fleet::TokenKey,
    wake: Arc<Notify>,
    staged: Arc<Notify>,
    bodies: JsonBodies,
    stop: watch::Receiver<bool>,
}

impl<S: GameStore> Stager<S> {
    async fn run(self) {
        let name = self.endpoint.name.clone();
        let wake = self.wake.clone();
        let mut stop = self.stop.clone();
        // Where it stands: stored, or, for a new endpoint, the feed's
        // head (events from its configuration on).
        let mut stored = loop {
            let placed = async {
                let head = self.store.feed_bounds().await?.head;
                self.store.webhook_place(&name, head, super::now_ms()).await
            };
            match placed.await {
                Ok(place) => break place,
                Err(e) => {
                    tracing::warn!(endpoint = %name, error = %e, "webhook endpoint's place unreadable; trying again");
                    if pause(&mut stop, POLL).await {
                        return;
                    }
                }
            }
        };
        let mut read_to = stored;
        let mut pending: Vec<NewDelivery> = Vec::new();
        let mut written = tokio::time::Instant::now();
        let with_log = self.endpoint.kinds & bit(pb::MatchEventKind::Action) != 0;
        loop {
            let woken = wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            // Only rows of the endpoint's kinds are read. A read that comes
            // back short has seen every such row up to the head as it
            // stood before the read (all of it committed and visible to
            // the read), so the place moves on to that head: the rows of
            // no interest between are passed without being read.
            let read = async {
                let head = self.store.feed_bounds().await?.head;
                let rows = self
                    .store
                    .feed_after(read_to, self.endpoint.kinds, with_log, STAGE_BATCH)
                    .await?;
                Ok::<_, bg_store::StoreError>((head, rows))
            };
            let (head, rows) = match read.await {
                Ok(read) => read,
                Err(e) => {
                    tracing::warn!(endpoint = %name, error = %e, "webhook staging could not read the feed");
                    if pause(&mut stop, POLL).await {
                        return;
                    }
                    continue;
                }
            };
            if let Some(first) = rows.first()
                && first.trimmed > read_to
            {
                // Only if the endpoint was idle longer than the feed's
                // window while the server ran (the trim keeps what an
                // active endpoint has not staged).
                tracing::error!(endpoint = %name, "the feed was trimmed past this webhook endpoint's place: events between were not delivered");
                metrics::webhook_events_missed(&name);
            }
            let full = rows.len() == STAGE_BATCH as usize;
            let mut unreadable = false;
            for row in &rows {
                match self.deliveries_of(row) {
                    Ok(more) => pending.extend(more),
                    Err(e) => {
                        // Never staged without its body: the place stays
                        // before this row, and it is read again.
                        tracing::error!(endpoint = %name, game_id = %row.game_id, version = row.version, error = %e, "a webhook body could not be made");
                        unreadable = true;
                        break;
                    }
                }
                read_to = row.position;
            }
            if !full && !unreadable {
                read_to = read_to.max(head);
            }
            // Written when there is something to deliver, and now and
            // then otherwise: the place moves on past rows of no interest,
            // and the endpoint is noted active (the feed's trim keeps what
            // an active endpoint has yet to stage).
            let due_write = !pending.is_empty()
                || (read_to != stored && written.elapsed() >= PLACE_EVERY)
                || written.elapsed() >= ACTIVE_EVERY;
            if due_write {
                match self
                    .store
                    .stage_deliveries(&name, stored, read_to, &pending, super::now_ms())
                    .await
                {
                    Ok(true) => {
                        stored = read_to;
                        if !pending.is_empty() {
                            self.staged.notify_one();
                        }
                    }
                    Ok(false) => {
                        // Another server staged from here first: on from
                        // its place.
                        match self
                            .store
                            .webhook_place(&name, stored, super::now_ms())
                            .await
                        {
                            Ok(place) => {
                                stored = place;
                                read_to = place;
                            }
                            Err(_) => read_to = stored,
                        }
                    }
                    Err(e) => {
                        tracing::warn!(endpoint = %name, error = %e, "webhook staging failed; trying again");
                        read_to = stored;
                        pending.clear();
                        if pause(&mut stop, POLL).await {
                            return;
                        }
                        continue;
                    }
                }
                pending.clear();
                written = tokio::time::Instant::now();
            }
            if unreadable {
                if pause(&mut stop, POLL).await {
                    return;
                }
                continue;
            }
            if full {
                continue;
            }
            // Commits wake it; it reads them in groups.
            if pause(&mut stop, STAGE_EVERY).await {
                return;
            }
            tokio::select! {
                _ = &mut woken => {}
                _ = tokio::time::sleep(POLL) => {}
                _ = stop.changed() => return,
            }
        }
    }

    /// The deliveries of one feed row for this endpoint.
    fn deliveries_of(&self, row: &FeedRow) -> anyhow::Result<Vec<NewDelivery>> {
        let e = &self.endpoint;
        if row.kinds & e.kinds == 0 {
            return Ok(Vec::new());
        }
        let wanted = (e.variants.is_empty()
            || row.variant.as_ref().is_some_and(|v| e.variants.contains(v)))
            && (e.selector.is_empty() || e.selector.matches(&feed::labels_of(&row.labels)));
        if !wanted {
            return Ok(Vec::new());
        }
        // An action's events, from its log entry (as the feed sends
        // them; an entry this server cannot read sends the action
        // without them, as the feed does).
        let action = bit(pb::MatchEventKind::Action);
        let log = match &row.log {
            Some(text) if row.kinds & e.kinds & action != 0 => {
                log_api_events(row.version, text).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        feed::events(row, &self.key, e.kinds, log)
            .into_iter()
            .map(|(_, event)| {
                Ok(NewDelivery {
                    payload: self.bodies.of(&event)?,
                    event_id: event.event_id,
                    kind: event.kind,
                    game_id: event.game_id,
                })
            })
            .collect()
    }
}

/// Waits `d`; true when the server stops meanwhile.
async fn pause(stop: &mut watch::Receiver<bool>, d: Duration) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(d) => *stop.borrow(),
        _ = stop.changed() => true,
    }
}

/// Sends an endpoint's due deliveries, at most [`IN_FLIGHT`] at once: a
/// slot freed by an attempt that ends is filled by the next due one, so
/// a slow attempt holds up only itself.
#[derive(Clone)]
struct Sender<S> {
    store: S,
    endpoint: Arc<Endpoint>,
    poster: Poster,
    staged: Arc<Notify>,
    stop: watch::Receiver<bool>,
}

/// A claimed delivery's attempt, done.
struct Done {
    delivery: Delivery,
    attempt: Attempt,
}

impl<S: GameStore> Sender<S> {
    async fn run(self) {
        let name = self.endpoint.name.clone();
        let mut stop = self.stop.clone();
        let mut attempts: tokio::task::JoinSet<Done> = tokio::task::JoinSet::new();
        loop {
            let woken = self.staged.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let free = IN_FLIGHT.saturating_sub(attempts.len() as u32);
            let mut claimed_any = false;
            if free > 0 {
                let now = super::now_ms();
                let lease = self.endpoint.lease.as_millis() as u64;
                match self
                    .store
                    .claim_deliveries(&name, now, now + lease, free)
                    .await
                {
                    Ok(claimed) => {
                        claimed_any = !claimed.is_empty();
                        for delivery in claimed {
                            let (poster, endpoint) = (self.poster.clone(), self.endpoint.clone());
                            attempts.spawn(async move {
                                let attempt = poster
                                    .post(&endpoint, &delivery.event_id, &delivery.payload)
                                    .await;
                                Done { delivery, attempt }
                            });
                        }
                    }
                    Err(e) => {
                        tracing::warn!(endpoint = %name, error = %e, "webhook deliveries could not be claimed");
                    }
                }
            }
            // Wait for an attempt to end (then settle every one ended), or,
            // with slots free, for new deliveries or the next poll.
            let mut ended = Vec::new();
            if attempts.is_empty() || (free > 0 && !claimed_any) {
                tokio::select! {
                    Some(done) = attempts.join_next(), if !attempts.is_empty() => ended.push(done),
                    _ = &mut woken => {}
                    _ = tokio::time::sleep(POLL) => {}
                    _ = stop.changed() => return,
                }
            } else if free > 0 {
                // Claimed some: go round to fill the slots left, unless
                // one ended meanwhile.
                if let Some(done) = attempts.try_join_next() {
                    ended.push(done);
                }
            } else {
                tokio::select! {
                    Some(done) = attempts.join_next() => ended.push(done),
                    _ = stop.changed() => return,
                }
            }
            // Settled together: what ends within a moment shares one write.
            if !ended.is_empty() && !attempts.is_empty() {
                let gather = tokio::time::sleep(SETTLE_GATHER);
                tokio::pin!(gather);
                loop {
                    tokio::select! {
                        Some(done) = attempts.join_next() => ended.push(done),
                        _ = &mut gather => break,
                    }
                    if attempts.is_empty() {
                        break;
                    }
                }
            }
            while let Some(done) = attempts.try_join_next() {
                ended.push(done);
            }
            let settled: Vec<Settlement> = ended
                .into_iter()
                .filter_map(|done| match done {
                    Ok(done) => Some(done),
                    // A panicked attempt: its lease runs out, and it is
                    // claimed again.
                    Err(e) => {
                        tracing::error!(endpoint = %name, error = %e, "a webhook attempt's task failed");
                        None
                    }
                })
                .map(|done| Settlement {
                    event_id: done.delivery.event_id.clone(),
                    attempts: done.delivery.attempts,
                    outcome: self.judge(&done.delivery, done.attempt),
                })
                .collect();
            if settled.is_empty() {
                continue;
            }
            for s in &settled {
                metrics::webhook_attempt(&name, &s.outcome);
            }
            // A settlement that fails leaves its deliveries claimed: due
            // again when the lease runs out (sent again: at least once).
            if let Err(e) = self.store.settle_deliveries(&name, &settled).await {
                tracing::warn!(endpoint = %name, error = %e, "webhook deliveries' outcomes not recorded; they will be sent again");
            }
        }
    }

    /// What an attempt makes of a delivery: delivered; or failed, and
    /// due again after the endpoint's growing wait, but never after the
    /// end of its retry time, at which it is given up.
    fn judge(&self, d: &Delivery, outcome: Attempt) -> Settled {
        let now = super::now_ms();
        match outcome {
            Attempt::Delivered => Settled::Delivered { at_ms: now },
            Attempt::Failed(error) => {
                let wait = self.endpoint.retry_wait(d.attempts).as_millis() as u64;
                let give_up_at = d
                    .queued_ms
                    .saturating_add(self.endpoint.retry_for.as_millis() as u64);
                if now >= give_up_at {
                    tracing::warn!(endpoint = %self.endpoint.name, event_id = %d.event_id, %error, "webhook delivery given up");
                    Settled::Failed { at_ms: now, error }
                } else {
                    Settled::Retry {
                        next_ms: now.saturating_add(wait).min(give_up_at),
                        error,
                    }
                }
            }
        }
    }
}

/// Reads an endpoint's gauges now and then (its pending deliveries
/// only: a short count, by their index).
async fn gauges<S: GameStore>(store: S, endpoint: Arc<Endpoint>, mut stop: watch::Receiver<bool>) {
    loop {
        match store.delivery_counts(&endpoint.name, false).await {
            Ok(counts) => metrics::webhook_gauges(&endpoint.name, &counts, super::now_ms()),
            Err(e) => {
                tracing::warn!(endpoint = %endpoint.name, error = %e, "webhook counts unreadable")
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(GAUGES_EVERY) => {}
            _ = stop.changed() => return,
        }
    }
}

/// Forgets deliveries settled more than [`KEEP_SETTLED`] ago, now and
/// then (by their index of settlement times).
async fn forget_settled<S: GameStore>(store: S, mut stop: watch::Receiver<bool>) {
    loop {
        let keep = KEEP_SETTLED.as_millis() as u64;
        if let Err(e) = store
            .forget_deliveries(super::now_ms().saturating_sub(keep))
            .await
        {
            tracing::warn!(error = %e, "settled webhook deliveries not forgotten");
        }
        tokio::select! {
            _ = tokio::time::sleep(FORGET_EVERY) => {}
            _ = stop.changed() => return,
        }
    }
}
