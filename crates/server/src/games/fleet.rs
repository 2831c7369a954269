//! ListMatches and WatchMatches: the fleet read from the store, for a
//! caller who may see all matches (the operator) or those created under
//! its certificate (see `crate::fleet`).

use std::collections::BTreeMap;
use std::time::Duration;

use bg_api::v1 as pb;
use bg_store::{FeedPosition, GameStore, MatchOrder, MatchQuery, MatchRow, MatchState};
use prost::Message;
use tokio::sync::mpsc;

use super::Games;
use super::events::log_api_events;
use crate::convert;
use crate::error::{ApiError, Reason};
use crate::fields::{Fields, GameField};
use crate::fleet::feed::{self, bit};
use crate::fleet::labels::{Selector, checked_player_filter};
use crate::fleet::tokens::{PageToken, query_digest};
use crate::fleet::{Access, Cursor};

/// Matches a page holds by default, and at most.
const DEFAULT_PAGE: u32 = 100;
const MAX_PAGE: u32 = 1000;
/// Matches read past a label selector before a short page is answered.
const MAX_SCANNED: usize = 5000;
/// Matches read a query, at least, while a page is filled.
const SCAN_BATCH: u32 = 500;
/// Feed rows read a query.
const FEED_BATCH: u32 = 500;
/// How often a feed looks for new rows when nothing woke it.
const FEED_POLL: Duration = Duration::from_millis(200);
/// How long a feed gathers commits before its next read, for each row
/// its last read found, up to [`FEED_GATHER_MAX`]: a quiet feed reads a
/// commit at once, a busy one reads in groups (on one 2-core machine, a
/// read a commit cost the server 15% of its actions, a read every 20 ms
/// about 7%).
const FEED_GATHER_PER_ROW: Duration = Duration::from_micros(250);
const FEED_GATHER_MAX: Duration = Duration::from_millis(20);
/// A bookmark is sent after this long without an event passing the filter.
const BOOKMARK_EVERY: Duration = Duration::from_secs(10);

/// The fields a list fills from the index alone.
fn summary() -> Fields {
    Fields::only(&[
        GameField::GameId,
        GameField::Version,
        GameField::Variant,
        GameField::VariantVersion,
        GameField::Options,
        GameField::Labels,
        GameField::Players,
        GameField::CreatedAt,
        GameField::UpdatedAt,
        GameField::State,
        GameField::ToAct,
    ])
}

/// Microseconds since the epoch of a request's time (field named).
fn micros(
    t: Option<&prost_types::Timestamp>,
    field: &'static str,
) -> Result<Option<i64>, ApiError> {
    let Some(t) = t else { return Ok(None) };
    if !(0..1_000_000_000).contains(&t.nanos) {
        return Err(ApiError::invalid(field, "nanos must be 0 to 999,999,999"));
    }
    t.seconds
        .checked_mul(1_000_000)
        .and_then(|s| s.checked_add(i64::from(t.nanos / 1000)))
        .map(Some)
        .ok_or_else(|| ApiError::invalid(field, "out of range"))
}

/// A filter's variants, checked.
fn variants(filter: &pb::MatchFilter) -> Result<Vec<String>, ApiError> {
    if filter.variants.len() > 64 || filter.variants.iter().any(|v| v.is_empty() || v.len() > 64) {
        return Err(ApiError::invalid(
            "variants",
            "at most 64 variant names of 1 to 64 bytes",
        ));
    }
    Ok(filter.variants.clone())
}

impl<S: GameStore> Games<S> {
    /// A page of the matches `access` may see.
    pub async fn list_matches(
        &self,
        access: &Access,
        r: &pb::ListMatchesRequest,
    ) -> Result<pb::ListMatchesResponse, ApiError> {
        let filter = r.filter.clone().unwrap_or_default();
        let selector = Selector::parse(&filter.label_selector)?;
        let page = match r.page_size {
            n if n < 0 => return Err(ApiError::invalid("page_size", "at least 0 (0: 100)")),
            0 => DEFAULT_PAGE,
            n => (n as u32).min(MAX_PAGE),
        };
        let fields = match &r.read_mask {
            Some(mask) if !mask.paths.is_empty() => Fields::from_mask(Some(mask))?,
            _ => summary(),
        };
        let states = filter
            .states
            .iter()
            .map(|s| match pb::MatchState::try_from(*s) {
                Ok(pb::MatchState::InProgress) => Ok(MatchState::InProgress),
                Ok(pb::MatchState::Finished) => Ok(MatchState::Finished),
                Ok(pb::MatchState::Abandoned) => Ok(MatchState::Abandoned),
                _ => Err(ApiError::invalid(
                    "states",
                    format!("{s} is no match state"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let order = match pb::MatchOrder::try_from(r.order_by) {
            Ok(pb::MatchOrder::Unspecified | pb::MatchOrder::Created) => MatchOrder::Created,
            Ok(pb::MatchOrder::Updated) => MatchOrder::Updated,
            Err(_) => return Err(ApiError::invalid("order_by", "CREATED or UPDATED")),
        };
        let mut query = MatchQuery {
            order,
            descending: r.descending,
            after: None,
            // Read in batches of at least SCAN_BATCH: a selector that
            // keeps few matches does not cost a query a match.
            limit: page.max(SCAN_BATCH),
            variants: variants(&filter)?,
            states,
            player: checked_player_filter("player", &filter.player)?,
            to_act_player: checked_player_filter("to_act_player", &filter.to_act_player)?,
            created: (
                micros(filter.created_after.as_ref(), "created_after")?,
                micros(filter.created_before.as_ref(), "created_before")?,
            ),
            updated: (
                micros(filter.updated_after.as_ref(), "updated_after")?,
                micros(filter.updated_before.as_ref(), "updated_before")?,
            ),
            owner: access.owner().map(str::to_string),
        };
        // A token is for this query and this caller only.
        let digest = {
            let mut bytes = filter.encode_to_vec();
            bytes.extend_from_slice(&r.order_by.to_be_bytes());
            bytes.push(u8::from(r.descending));
            bytes.extend_from_slice(access.owner().unwrap_or("").as_bytes());
            query_digest(&bytes)
        };
        let cursor = match r.page_token.as_str() {
            "" => Cursor::after_row(
                self.store
                    .feed_bounds()
                    .await
                    .map_err(ApiError::store)?
                    .head,
            ),
            token => {
                let token = PageToken::decode(token, &self.fleet_key, digest)?;
                query.after = Some(token.after);
                token.cursor
            }
        };
        let mut kept: Vec<MatchRow> = Vec::new();
        let mut scanned = 0;
        // Whether every match after the last one read was read too.
        let mut exhausted = false;
        'read: while kept.len() < page as usize && scanned < MAX_SCANNED {
            let rows = self
                .store
                .list_matches(&query)
                .await
                .map_err(ApiError::store)?;
            let full = rows.len() == query.limit as usize;
            let count = rows.len();
            scanned += count;
            for (i, row) in rows.into_iter().enumerate() {
                query.after = Some((time_of(&row, order), row.game_id.clone()));
                if selector.matches(&feed::labels_of(&row.index.labels)) {
                    kept.push(row);
                    if kept.len() == page as usize {
                        exhausted = !full && i + 1 == count;
                        break 'read;
                    }
                }
            }
            if !full {
                exhausted = true;
                break;
            }
        }
        let next_page_token = match (&query.after, exhausted) {
            (Some(after), false) => PageToken {
                query: digest,
                after: after.clone(),
                cursor,
            }
            .encode(&self.fleet_key),
            _ => String::new(),
        };
        let mut matches = Vec::with_capacity(kept.len());
        for row in kept {
            if fields.within(&summary()) {
                matches.push(summary_of(&row, &fields));
                continue;
            }
            match self.get(&row.game_id, &fields).await {
                Ok(game) => matches.push(game),
                // Removed since it was listed: left out, as a later list
                // would leave it out.
                Err(e) if e.reason == Reason::GameNotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(pb::ListMatchesResponse {
            matches,
            next_page_token,
            cursor: cursor.encode(&self.fleet_key),
        })
    }

    /// The fleet feed for `access`: a channel the stream reads from, fed
    /// by a task that reads the store after the cursor until the caller
    /// leaves or the server stops. Each item holds the events of one read
    /// of the store, so they reach the client in as few writes as they
    /// can.
    pub async fn watch_matches(
        &self,
        access: Access,
        r: &pb::WatchMatchesRequest,
    ) -> Result<mpsc::Receiver<Result<Vec<pb::MatchEvent>, tonic::Status>>, ApiError> {
        let filter = r.filter.clone().unwrap_or_default();
        let selector = Selector::parse(&filter.label_selector)?;
        let variants = variants(&filter)?;
        let player = checked_player_filter("player", &filter.player)?;
        let mut kinds = 0u32;
        for k in &r.kinds {
            match pb::MatchEventKind::try_from(*k) {
                Ok(pb::MatchEventKind::Unspecified) | Err(_) => {
                    return Err(ApiError::invalid("kinds", format!("{k} is no event kind")));
                }
                Ok(kind) => kinds |= bit(kind),
            }
        }
        if kinds == 0 {
            kinds = feed::DEFAULT_KINDS;
        }
        let bounds = self.store.feed_bounds().await.map_err(ApiError::store)?;
        let start = match (r.cursor.as_str(), r.from_oldest) {
            ("", false) => Cursor::after_row(bounds.head),
            ("", true) => Cursor::after_row(bounds.trimmed),
            (text, _) => Cursor::decode(text, &self.fleet_key, "cursor")?,
        };
        if expired_at(start, bounds.trimmed) {
            return Err(expired(&self.fleet_key, bounds.trimmed));
        }
        // A few reads ahead of the client at most (a read is up to
        // FEED_BATCH rows).
        let (tx, rx) = mpsc::channel(4);
        let follower = Follower {
            store: self.store.clone(),
            key: self.fleet_key.clone(),
            wake: self.feed_wake.clone(),
            stop: self.shutdown.clone(),
            access,
            selector,
            variants,
            player,
            // Rows of every kind are read (a row holds several), then
            // its events are kept by kind.
            kinds,
            with_log: kinds & bit(pb::MatchEventKind::Action) != 0,
        };
        tokio::spawn(follower.run(start, tx));
        Ok(rx)
    }

    /// Removes the feed's rows older than its window.
    pub async fn trim_feed(&self) -> Result<u64, ApiError> {
        let Some(window) = self.feed_window else {
            return Ok(0);
        };
        let before =
            super::now_ms().saturating_sub(window.as_millis().min(u128::from(u64::MAX)) as u64);
        self.store.trim_feed(before).await.map_err(ApiError::store)
    }

    /// Feeds read again: a commit was seen (this server's, or another's
    /// notice).
    pub(super) fn wake_feeds(&self) {
        self.feed_wake.notify_waiters();
    }
}

/// Whether events after `at` were trimmed: rows after it up to
/// `trimmed`, or, mid-row, the rest of its row.
fn expired_at(at: Cursor, trimmed: FeedPosition) -> bool {
    at.position < trimmed || (at.position == trimmed && at.event != Cursor::ALL)
}

fn expired(key: &crate::fleet::TokenKey, trimmed: FeedPosition) -> ApiError {
    ApiError::new(
        Reason::CursorExpired,
        "the feed no longer holds the events after this cursor (it keeps them for its window, --feed-window-seconds): list the matches again and follow from the list's cursor",
    )
    .with("oldest_cursor", Cursor::after_row(trimmed).encode(key))
}

/// The order's time of a listed match.
fn time_of(row: &MatchRow, order: MatchOrder) -> i64 {
    match order {
        MatchOrder::Created => row.index.created_us,
        MatchOrder::Updated => row.index.updated_us,
    }
}

/// A listed match as a `Game` of the fields the index holds.
fn summary_of(row: &MatchRow, fields: &Fields) -> pb::Game {
    let has = |f| fields.has(f);
    let options: BTreeMap<String, String> = serde_json::from_str(&row.options).unwrap_or_default();
    let mut game = pb::Game {
        game_id: if has(GameField::GameId) {
            row.game_id.clone()
        } else {
            String::new()
        },
        version: if has(GameField::Version) {
            row.version
        } else {
            0
        },
        variant: if has(GameField::Variant) {
            row.variant.clone()
        } else {
            String::new()
        },
        variant_version: if has(GameField::VariantVersion) {
            row.variant_version.clone()
        } else {
            String::new()
        },
        options: if has(GameField::Options) {
            options.into_iter().collect()
        } else {
            Default::default()
        },
        to_act: if has(GameField::ToAct) {
            i32::from(row.index.to_act)
        } else {
            0
        },
        ..Default::default()
    };
    convert::to_api::index(&mut game, &row.index, row.finished, fields);
    game
}

/// One feed stream's reading of the store.
struct Follower<S> {
    store: S,
    key: crate::fleet::TokenKey,
    wake: std::sync::Arc<tokio::sync::Notify>,
    stop: tokio::sync::watch::Receiver<bool>,
    access: Access,
    selector: Selector,
    variants: Vec<String>,
    player: Option<String>,
    kinds: u32,
    with_log: bool,
}

impl<S: GameStore> Follower<S> {
    async fn run(
        mut self,
        start: Cursor,
        tx: mpsc::Sender<Result<Vec<pb::MatchEvent>, tonic::Status>>,
    ) {
        let mut at = start;
        let mut quiet_since = tokio::time::Instant::now();
        loop {
            // Registered before reading: a commit during the read wakes it.
            let woken = self.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let read_at = tokio::time::Instant::now();
            // Mid-row (after one of its events), the row is read again:
            // from the place just before it (no place lies between).
            let from = match at.event {
                Cursor::ALL => at.position,
                _ => FeedPosition {
                    tx: at.position.tx,
                    seq: at.position.seq.saturating_sub(1),
                },
            };
            let rows = match self
                .store
                .feed_after(from, u32::MAX, self.with_log, FEED_BATCH)
                .await
            {
                Ok(rows) => rows,
                Err(e) => {
                    let _ = tx.send(Err(ApiError::store(e).into())).await;
                    return;
                }
            };
            // Rows between `at` and what was read may have been trimmed
            // before the read: each row says how far the feed was trimmed
            // as of the same read. (With none read, `at` stays, and the
            // next read that finds rows tells.)
            if let Some(first) = rows.first()
                && expired_at(at, first.trimmed)
            {
                let _ = tx.send(Err(expired(&self.key, first.trimmed).into())).await;
                return;
            }
            let full = rows.len() == FEED_BATCH as usize;
            let (from_row, from_event) = (at.position, at.event);
            let mut events = Vec::new();
            for row in &rows {
                at = Cursor::after_row(row.position);
                let visible = self.access.sees(&row.owner)
                    && (self.variants.is_empty()
                        || row
                            .variant
                            .as_ref()
                            .is_some_and(|v| self.variants.contains(v)))
                    && self.player.as_ref().is_none_or(|p| row.players.contains(p))
                    && (self.selector.is_empty()
                        || self.selector.matches(&feed::labels_of(&row.labels)));
                if !visible || row.kinds & self.kinds == 0 {
                    continue;
                }
                let log = match (
                    &row.log,
                    self.with_log && row.kinds & bit(pb::MatchEventKind::Action) != 0,
                ) {
                    (Some(text), true) => log_api_events(row.version, text).unwrap_or_default(),
                    _ => Vec::new(),
                };
                // `from` may be mid-row: the events already sent are not
                // sent again.
                let resumed =
                    (row.position == from_row && from_event != Cursor::ALL).then_some(from_event);
                for (n, event) in feed::events(row, &self.key, self.kinds, log) {
                    if resumed.is_some_and(|seen| n <= seen) {
                        continue;
                    }
                    events.push(event);
                }
            }
            if !events.is_empty() {
                if tx.send(Ok(events)).await.is_err() {
                    return;
                }
                quiet_since = tokio::time::Instant::now();
            } else if !rows.is_empty() && quiet_since.elapsed() >= BOOKMARK_EVERY {
                // Read past events none of which passed the filter: a
                // bookmark lets the client resume from here.
                let bookmark = pb::MatchEvent {
                    cursor: at.encode(&self.key),
                    time: Some(convert::to_api::timestamp(super::now_ms())),
                    ..Default::default()
                };
                if tx.send(Ok(vec![bookmark])).await.is_err() {
                    return;
                }
                quiet_since = tokio::time::Instant::now();
            }
            if full {
                continue;
            }
            let gather = FEED_GATHER_PER_ROW
                .saturating_mul(rows.len().try_into().unwrap_or(u32::MAX))
                .min(FEED_GATHER_MAX);
            let woken = async {
                woken.await;
                tokio::time::sleep_until(read_at + gather).await;
            };
            tokio::select! {
                _ = woken => {}
                _ = tokio::time::sleep(FEED_POLL) => {}
                _ = tx.closed() => return,
                _ = self.stop.changed() => {
                    let stopping = ApiError::new(Reason::ShuttingDown, "the server is shutting down; resume from the last cursor received");
                    let _ = tx.send(Err(stopping.into())).await;
                    return;
                }
            }
        }
    }
}
