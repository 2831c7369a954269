//! What the server counts, for Prometheus: names, descriptions, and the
//! layer that times every RPC.
//!
//! Recording goes through the `metrics` facade: nothing is kept until
//! `backgammond --metrics-listen ADDR` installs the Prometheus exporter
//! (`metrics-exporter-prometheus`), which serves the text format on
//! `http://ADDR/metrics`. docs/operating.md lists every metric.

use std::time::{Duration, Instant};

use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use tonic::codegen::http;

pub const RPCS: &str = "backgammon_rpcs_total";
pub const RPC_SECONDS: &str = "backgammon_rpc_duration_seconds";
pub const ACTIONS: &str = "backgammon_actions_committed_total";
pub const GAMES_IN_MEMORY: &str = "backgammon_games_in_memory";
pub const WATCHERS: &str = "backgammon_watchers";
pub const STORAGE_ERRORS: &str = "backgammon_storage_errors_total";
pub const BUILD_INFO: &str = "backgammon_build_info";
pub const VARIANT_LOADED: &str = "backgammon_variant_loaded";
pub const CONNECTIONS: &str = "backgammon_connections_open";
pub const CONNECTIONS_REFUSED: &str = "backgammon_connections_refused_total";
pub const REFUSED_BY_LIMIT: &str = "backgammon_requests_limited_total";

/// Latency buckets, in seconds (histograms rather than summaries). They
/// start at 0.1 ms: a group commit and its COMMIT on a local disk take
/// 0.15 to 0.5 ms.
pub const BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Says what each metric is (the exporter's HELP lines), and sets the
/// build's info.
pub fn describe() {
    describe_counter!(RPCS, "RPCs answered, by method and gRPC status code");
    describe_histogram!(
        RPC_SECONDS,
        "Time to answer an RPC (to the first response for WatchGame), by method"
    );
    describe_counter!(
        ACTIONS,
        "Actions committed (new versions stored), by variant"
    );
    describe_gauge!(GAMES_IN_MEMORY, "Games held in memory");
    describe_gauge!(WATCHERS, "WatchGame streams open");
    describe_counter!(
        STORAGE_ERRORS,
        "Storage failures answered UNAVAILABLE (writes and reads), by reason"
    );
    describe_gauge!(BUILD_INFO, "1, labelled with the server's version");
    describe_gauge!(
        VARIANT_LOADED,
        "1 for each variant plugin loaded, labelled with its name and version"
    );
    describe_gauge!(CONNECTIONS, "Client connections open");
    describe_counter!(
        CONNECTIONS_REFUSED,
        "Connections closed as they came, over --max-connections"
    );
    describe_counter!(
        REFUSED_BY_LIMIT,
        "Requests refused by an operator's limit (RESOURCE_EXHAUSTED), by limit"
    );
    bg_store::describe_metrics();
    describe_webhooks();
    bg_plugin_host::describe_metrics();
    gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
}

pub fn action_committed(variant: &str) {
    counter!(ACTIONS, "variant" => variant.to_string()).increment(1);
}

pub fn connections_open(count: usize) {
    gauge!(CONNECTIONS).set(count as f64);
}

pub fn connection_refused() {
    counter!(CONNECTIONS_REFUSED).increment(1);
}

/// A request refused by a limit: `watchers_per_game`, `new_games_rate`.
pub fn limited(limit: &'static str) {
    counter!(REFUSED_BY_LIMIT, "limit" => limit).increment(1);
}

pub fn games_in_memory(count: usize) {
    gauge!(GAMES_IN_MEMORY).set(count as f64);
}

/// An open WatchGame stream, counted while it lives.
pub struct Watcher(());

impl Watcher {
    pub fn opened() -> Watcher {
        gauge!(WATCHERS).increment(1.0);
        Watcher(())
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        gauge!(WATCHERS).decrement(1.0);
    }
}

pub fn storage_error(reason: &'static str) {
    counter!(STORAGE_ERRORS, "reason" => reason).increment(1);
}

pub fn variant_loaded(name: &str, version: &str) {
    gauge!(VARIANT_LOADED, "variant" => name.to_string(), "version" => version.to_string())
        .set(1.0);
}

fn rpc(method: String, code: &str, took: Duration) {
    counter!(RPCS, "method" => method.clone(), "code" => code.to_string()).increment(1);
    histogram!(RPC_SECONDS, "method" => method).record(took.as_secs_f64());
}

/// The name of a gRPC status code, from its number.
fn code_name(code: &str) -> &'static str {
    code.parse::<i32>()
        .map(|n| crate::error::code_name(tonic::Code::from(n)))
        .unwrap_or("UNKNOWN")
}

/// Counts and times every RPC: its method (the last part of the path) and
/// the status code its response headers carry. An error is answered with
/// its status in the headers; a success's status comes in the trailers,
/// after the body: a response without one in its headers is counted OK.
#[derive(Clone, Copy, Debug)]
pub struct RpcMetricsLayer;

impl<S> tower::Layer<S> for RpcMetricsLayer {
    type Service = RpcMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RpcMetrics { inner }
    }
}

#[derive(Clone, Debug)]
pub struct RpcMetrics<S> {
    inner: S,
}

type BoxFuture<T, E> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, E>> + Send>>;

impl<S, ReqBody, ResBody> tower::Service<http::Request<ReqBody>> for RpcMetrics<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let method = request
            .uri()
            .path()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string();
        let start = Instant::now();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let code = response
                .headers()
                .get("grpc-status")
                .and_then(|v| v.to_str().ok())
                .map_or("OK", code_name);
            // A path no service has is the caller's to choose: never a
            // label of its own (the label set must stay small).
            let method = if code == "UNIMPLEMENTED" {
                "unknown".to_string()
            } else {
                method
            };
            rpc(method, code, start.elapsed());
            Ok(response)
        })
    }
}

pub const WEBHOOK_ATTEMPTS: &str = "backgammon_webhook_attempts_total";
pub const WEBHOOK_SECONDS: &str = "backgammon_webhook_attempt_duration_seconds";
pub const WEBHOOK_PENDING: &str = "backgammon_webhook_pending";
pub const WEBHOOK_OLDEST_PENDING: &str = "backgammon_webhook_oldest_pending_seconds";
pub const WEBHOOK_EVENTS_MISSED: &str = "backgammon_webhook_events_missed_total";

/// Says what the webhook metrics are.
pub fn describe_webhooks() {
    describe_counter!(
        WEBHOOK_ATTEMPTS,
        "Webhook delivery attempts, by endpoint and outcome (delivered, retried, failed: given up)"
    );
    describe_histogram!(
        WEBHOOK_SECONDS,
        "Time of a webhook delivery attempt, by endpoint"
    );
    describe_gauge!(
        WEBHOOK_PENDING,
        "Webhook deliveries not yet delivered nor given up, by endpoint (all replicas')"
    );
    describe_gauge!(
        WEBHOOK_OLDEST_PENDING,
        "Age of the oldest pending webhook delivery, by endpoint (0: none pending)"
    );
    describe_counter!(
        WEBHOOK_EVENTS_MISSED,
        "Times the feed was trimmed past a webhook endpoint's place (an endpoint idle longer than the feed's window)"
    );
}

/// Counts an attempt's outcome.
pub fn webhook_attempt(endpoint: &str, settled: &bg_store::Settled) {
    let outcome = match settled {
        bg_store::Settled::Delivered { .. } => "delivered",
        bg_store::Settled::Retry { .. } => "retried",
        bg_store::Settled::Failed { .. } => "failed",
    };
    counter!(WEBHOOK_ATTEMPTS, "endpoint" => endpoint.to_string(), "outcome" => outcome)
        .increment(1);
}

/// Sets an endpoint's gauges from its counts.
pub fn webhook_gauges(endpoint: &str, counts: &bg_store::DeliveryCounts, now_ms: u64) {
    gauge!(WEBHOOK_PENDING, "endpoint" => endpoint.to_string()).set(counts.pending as f64);
    let age = counts
        .oldest_pending_ms
        .map_or(0.0, |t| now_ms.saturating_sub(t) as f64 / 1000.0);
    gauge!(WEBHOOK_OLDEST_PENDING, "endpoint" => endpoint.to_string()).set(age);
}

/// Counts a trim past an endpoint's place.
pub fn webhook_events_missed(endpoint: &str) {
    counter!(WEBHOOK_EVENTS_MISSED, "endpoint" => endpoint.to_string()).increment(1);
}
