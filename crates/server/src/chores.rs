//! What the server does by itself, beside answering calls: its health as
//! storage comes and goes, and the periodic chores (forgetting idle games
//! and old request ids, ending matches whose time ran out, retiring
//! finished matches, picking up new plugin files). `lib.rs` starts them;
//! each stops when the server does.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bg_plugin_host::PluginHost;
use bg_store::GameStore;
use tokio::sync::watch;
use tonic_health::ServingStatus;

use crate::config::Config;
use crate::{games, metrics};

/// Starts every periodic chore the configuration asks for; each stops
/// when `stop` turns true.
pub(crate) fn start<S: GameStore>(
    config: &Config,
    store: &S,
    games: &Arc<games::Games<S>>,
    plugins: &Arc<PluginHost>,
    stop: &watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let scanned = plugins.clone();
    tokio::spawn(repeat(
        config.plugin_scan_interval,
        stop.clone(),
        move || rescan_plugins(scanned.clone()),
    ));
    if let Some(retention) = config.request_retention {
        let every = (retention / 4).clamp(Duration::from_millis(250), Duration::from_secs(3600));
        let store = store.clone();
        tokio::spawn(repeat(every, stop.clone(), move || {
            forget_old_requests(store.clone(), retention)
        }));
    }
    if let Some(retention) = config.finished_retention {
        if let Some(folder) = &config.archive_dir {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("creating the archive folder {}", folder.display()))?;
        }
        let every = (retention / 4).clamp(Duration::from_millis(250), Duration::from_secs(3600));
        let (games, archive) = (games.clone(), config.archive_dir.clone());
        tokio::spawn(repeat(every, stop.clone(), move || {
            retire_finished_matches(games.clone(), retention, archive.clone())
        }));
    }
    // Clocks: the store's index of deadlines says which ran out, whichever
    // server holds the game (or none); the compare-and-set of each
    // timeout makes it apply once, however many servers sweep.
    let timed = games.clone();
    tokio::spawn(repeat(config.clock_sweep, stop.clone(), move || {
        time_out_due(timed.clone())
    }));
    if let Some(window) = config.feed_window {
        let every = (window / 8).clamp(Duration::from_millis(250), Duration::from_secs(600));
        let trimmed = games.clone();
        tokio::spawn(repeat(every, stop.clone(), move || {
            trim_feed(trimmed.clone())
        }));
    }
    let idle = config.idle_eviction;
    let every = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    let held = games.clone();
    tokio::spawn(repeat(every, stop.clone(), move || {
        evict_idle_games(held.clone(), idle)
    }));
    Ok(())
}

/// The health the server reports: SERVING once ready, NOT_SERVING while
/// storage refuses writes and from the moment it starts shutting down.
pub(crate) struct Health {
    reporter: tonic_health::server::HealthReporter,
    /// Set at shutdown; from then on nothing reports SERVING again.
    stopping: tokio::sync::Mutex<bool>,
}

impl Health {
    pub(crate) fn new(reporter: tonic_health::server::HealthReporter) -> Health {
        Health {
            reporter,
            stopping: tokio::sync::Mutex::new(false),
        }
    }

    /// Sets the health of the server as a whole and of the game service,
    /// unless it is shutting down.
    pub(crate) async fn set(&self, status: ServingStatus) {
        let stopping = self.stopping.lock().await;
        if !*stopping {
            self.report(status).await;
        }
    }

    /// NOT_SERVING for good.
    pub(crate) async fn stop(&self) {
        let mut stopping = self.stopping.lock().await;
        *stopping = true;
        self.report(ServingStatus::NotServing).await;
    }

    async fn report(&self, status: ServingStatus) {
        self.reporter.set_service_status("", status).await;
        self.reporter
            .set_service_status(bg_api::v1::game_service_server::SERVICE_NAME, status)
            .await;
    }
}

/// NOT_SERVING while the store refuses writes (a full disk), SERVING again
/// once it takes them, until the server stops.
pub(crate) async fn follow_storage(
    health: Arc<Health>,
    mut writable: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            changed = writable.changed() => if changed.is_err() {
                // The store's writer is gone: no write can succeed.
                tracing::error!("the store stopped: NOT_SERVING");
                health.set(ServingStatus::NotServing).await;
                return;
            },
            _ = stop.changed() => return,
        }
        let status = if *writable.borrow_and_update() {
            tracing::info!("storage takes writes again: SERVING");
            ServingStatus::Serving
        } else {
            tracing::error!("storage refuses writes: NOT_SERVING until it takes them again");
            ServingStatus::NotServing
        };
        health.set(status).await;
    }
}

/// Runs `chore` every `period` until the server stops.
async fn repeat<F, Chore>(period: Duration, mut stop: watch::Receiver<bool>, mut chore: F)
where
    F: FnMut() -> Chore,
    Chore: std::future::Future<Output = ()>,
{
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = stop.changed() => return,
        }
        chore().await;
    }
}

/// Forgets idle games (they stay in the store).
async fn evict_idle_games<S: GameStore>(games: Arc<games::Games<S>>, idle: Duration) {
    let evicted = games.evict_idle(idle);
    if evicted > 0 {
        tracing::debug!(evicted, live = games.live_games(), "idle games left memory");
    }
}

/// Forgets request ids older than `retention`: a retry that late is
/// judged afresh (its stale version still keeps it from being applied
/// twice), and the id may name another action.
async fn forget_old_requests<S: GameStore>(store: S, retention: Duration) {
    let Some(before) = std::time::SystemTime::now().checked_sub(retention) else {
        return;
    };
    match store.forget_requests(before).await {
        Ok(0) => {}
        Ok(forgotten) => tracing::debug!(forgotten, "old request ids forgotten"),
        Err(e) => {
            tracing::warn!(error = %e, "forgetting old request ids failed; retried later")
        }
    }
}

/// Ends by time the matches whose running seat's time is up.
async fn time_out_due<S: GameStore>(games: Arc<games::Games<S>>) {
    match games.time_out_due().await {
        Ok(0) => {}
        Ok(timed_out) => tracing::debug!(timed_out, "clocks ran out"),
        Err(e) => {
            tracing::warn!(error = %e.message, "looking for clocks that ran out failed; tried again")
        }
    }
}

/// Removes the matches that ended longer than `retention` ago, each
/// written first into `archive` if there is one.
async fn retire_finished_matches<S: GameStore>(
    games: Arc<games::Games<S>>,
    retention: Duration,
    archive: Option<PathBuf>,
) {
    let Some(before) = std::time::SystemTime::now().checked_sub(retention) else {
        return;
    };
    match games.retire_finished(before, archive.as_deref()).await {
        Ok(0) => {}
        Ok(removed) => tracing::info!(removed, "finished matches past their retention removed"),
        Err(e) => {
            tracing::warn!(error = %e.message, "removing finished matches failed; retried later")
        }
    }
}

/// Removes the fleet feed's events older than its window.
async fn trim_feed<S: GameStore>(games: Arc<games::Games<S>>) {
    match games.trim_feed().await {
        Ok(0) => {}
        Ok(trimmed) => tracing::debug!(trimmed, "feed rows past the window removed"),
        Err(e) => tracing::warn!(error = %e.message, "trimming the feed failed; retried later"),
    }
}

/// Picks up plugin files dropped into the folder while the server runs.
async fn rescan_plugins(plugins: Arc<PluginHost>) {
    // Loading runs plugin code and touches the disk: off the async threads.
    match tokio::task::spawn_blocking(move || plugins.scan()).await {
        Ok(Ok(report)) => {
            for plugin in report.loaded {
                metrics::variant_loaded(plugin.name(), plugin.version());
                tracing::info!(variant = plugin.name(), "new variant available");
            }
        }
        Ok(Err(e)) => tracing::warn!(error = %e, "plugin scan skipped"),
        Err(e) => tracing::error!(error = %e, "plugin scan failed"),
    }
}
