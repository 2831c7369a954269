//! A variant's code runs off the async runtime, within a deadline.
//!
//! Every piece of work that calls a plugin (judging an action, showing a
//! game, replaying a log) runs on the plugin threads (as many as the
//! cores, fed from one queue: cheaper than tokio's blocking pool, which
//! doubled an action's CPU), and its caller waits for it at most the
//! plugin-call deadline (`--plugin-call-timeout-ms`). A plugin that spins
//! for ever then holds one plugin thread, which is replaced, never a
//! runtime worker: health checks and every other variant's games keep
//! being served. Past the deadline the caller
//! answers `VARIANT_FAULT` at once, with nothing changed (the work had a
//! copy of the game), and the plugin is unhealthy until the call returns:
//! its games are refused, `VARIANT_UNAVAILABLE` with when to retry,
//! rather than sent to it again (an in-process call cannot be stopped;
//! `ListVariants`, the metrics and the log say so).
//! What this cannot contain is a plugin that aborts or corrupts the
//! process: that needs the plugin in a process of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use bg_api::v1 as pb;
use bg_engine::game::MatchSettings;
use bg_plugin_host::Plugin;
use bg_store::GameStore;
use bg_variant_api::Capabilities;

use super::Games;
use super::cache::Live;
use crate::error::{ApiError, Reason};
use crate::fields::Fields;

impl<S: GameStore> Games<S> {
    /// Runs `work`, which calls `plugin`, on the plugin threads, within
    /// the plugin-call deadline.
    pub(super) async fn off_runtime<T: Send + 'static>(
        &self,
        plugin: &Arc<Plugin>,
        work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        self.off_runtime_within(plugin, self.plugin_deadline, work)
            .await
    }

    /// Runs `work`, which calls `plugin`, on the plugin threads, within
    /// `budget`: the plugin-call deadline, or more for work made of many
    /// calls whose number grows with the match (a whole match analysed).
    pub(super) async fn off_runtime_within<T: Send + 'static>(
        &self,
        plugin: &Arc<Plugin>,
        budget: Duration,
        work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        if let Some(unhealthy) = plugin.unhealthy() {
            return Err(unavailable(&unhealthy, self.plugin_deadline));
        }
        let (answer, mut answered) = tokio::sync::oneshot::channel();
        // Whether the work began: one that waited in the queue past the
        // deadline (the server is overloaded) is dropped unstarted, and is
        // no fault of the plugin's.
        let progress = Arc::new(AtomicU8::new(QUEUED));
        let begun = progress.clone();
        let deadline = Instant::now() + budget;
        self.plugin_threads.run(Box::new(move || {
            if begun
                .compare_exchange(QUEUED, STARTED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                // An isolated plugin's calls are cut at the deadline by
                // the plugin host itself (the worker is killed), so work
                // that starts with no time left is not begun.
                let result = if Instant::now() >= deadline {
                    Err(overloaded())
                } else {
                    bg_plugin_host::with_deadline(deadline, work)
                };
                let _ = answer.send(result);
            }
        }));
        // An isolated plugin's call past the deadline comes back faulted
        // once its worker is killed: waited for a little longer, so that
        // its own answer (which says what happened) is the one given.
        let wait = match plugin.isolated() {
            true => budget + ISOLATED_MARGIN,
            false => budget,
        };
        let answered_in_time = tokio::time::timeout(wait, &mut answered).await;
        if answered_in_time.is_err()
            && progress
                .compare_exchange(QUEUED, DROPPED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            tracing::warn!(
                variant = plugin.name(),
                "plugin work waited past the deadline without starting: overloaded"
            );
            return Err(overloaded());
        }
        match answered_in_time {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => {
                tracing::error!(variant = plugin.name(), "work on a game panicked");
                Err(ApiError::new(
                    Reason::Internal,
                    "the action failed in the server",
                ))
            }
            Err(_) => {
                plugin.call_overran(budget);
                // The thread stays with the call; another takes its place.
                self.plugin_threads.replace_one();
                let overran = plugin.clone();
                // The call goes on in its thread; when it returns (if it
                // ever does), the plugin is healthy again.
                tokio::spawn(async move {
                    let _ = answered.await;
                    overran.overran_call_returned();
                });
                Err(past_deadline(format!(
                    "a call to variant {} ran past the {} ms deadline; nothing was changed, and the variant is unavailable until the call returns",
                    plugin.name(),
                    budget.as_millis()
                )))
            }
        }
    }

    /// The game as clients see it, with only the fields asked for.
    pub(super) async fn view(&self, live: &Live, fields: &Fields) -> Result<pb::Game, ApiError> {
        let (shown, fields) = (live.clone(), *fields);
        self.off_runtime(&live.rules.plugin, move || shown.view(&fields))
            .await
    }

    /// The whole game as clients see it.
    pub(super) async fn snapshot(&self, live: &Live) -> Result<pb::Game, ApiError> {
        self.view(live, &Fields::ALL).await
    }
}

/// How much longer than the deadline the caller of an isolated plugin
/// waits for the plugin host's own answer (killing a worker and reading
/// how it ended takes a moment).
const ISOLATED_MARGIN: Duration = Duration::from_millis(500);

/// Work that waited for a thread past its deadline: no fault of the
/// plugin's.
fn overloaded() -> ApiError {
    ApiError::new(
        Reason::Overloaded,
        "the server is too busy to judge this now; nothing was changed: send it again",
    )
}

/// A call the server gave up on past its deadline: `VARIANT_FAULT`,
/// saying what happened (no plugin's internals in it).
fn past_deadline(message: String) -> ApiError {
    tracing::warn!(%message, "variant call abandoned past its deadline");
    ApiError::new(Reason::VariantFault, message)
}

/// A variant refused before any call, until it is healthy again (a call
/// that overran returns, or its workers' back-off ends): UNAVAILABLE,
/// `VARIANT_UNAVAILABLE`, with when to try again. When a call that
/// overran will return is not known: the plugin deadline is the hint.
fn unavailable(unhealthy: &bg_plugin_host::Unhealthy, deadline: Duration) -> ApiError {
    let retry_after = unhealthy.retry_after.unwrap_or(deadline);
    let ms = retry_after.as_millis().max(1);
    tracing::debug!(why = %unhealthy.why, "variant call refused: unhealthy");
    ApiError::new(
        Reason::VariantUnavailable,
        format!(
            "variant unavailable: {}; nothing was changed: send the same request again in {ms} ms",
            unhealthy.why
        ),
    )
    .with("retry_after_ms", ms)
}

impl<S: GameStore> Games<S> {
    /// The variants loaded, as ListVariants shows them: each plugin is
    /// asked for its default game off the runtime, and one that is
    /// unhealthy (or becomes so) is listed saying why.
    pub async fn variants(&self) -> Vec<pb::Variant> {
        let mut variants = Vec::new();
        for plugin in self.plugins.plugins() {
            variants.push(self.declared(&plugin).await);
        }
        variants
    }

    /// One variant, as ListVariants shows it (None: none of that name is
    /// loaded): only its plugin is asked.
    pub async fn variant(&self, name: &str) -> Option<pb::Variant> {
        let plugin = self
            .plugins
            .plugins()
            .into_iter()
            .find(|p| p.info().name == name)?;
        Some(self.declared(&plugin).await)
    }

    /// What a plugin declares, as the API shows a variant.
    async fn declared(&self, plugin: &std::sync::Arc<bg_plugin_host::Plugin>) -> pb::Variant {
        let info = plugin.info();
        let caps = plugin.capabilities();
        let asked = plugin.clone();
        let cube = self
            .off_runtime(plugin, move || {
                Ok(asked
                    .new_game(&Default::default())
                    .map_or(caps.contains(Capabilities::CUBE), |setup| setup.cube))
            })
            .await;
        pb::Variant {
            name: info.name.clone(),
            version: info.version.clone(),
            description: info.description.clone(),
            options: info
                .options
                .iter()
                .map(|o| pb::VariantOption {
                    name: o.name.clone(),
                    description: o.description.clone(),
                    allowed_values: o.allowed_values.clone(),
                    default_value: o.default_value.clone(),
                })
                .collect(),
            cube: caps.contains(Capabilities::CUBE),
            draws: caps.contains(Capabilities::DRAWS),
            standard_board: caps.contains(Capabilities::STANDARD_BOARD),
            max_win_level: plugin.max_win_level(),
            // The engine's default, for a game set up with the
            // default options and settings.
            auto_roll: MatchSettings::default()
                .auto_roll_default(cube.unwrap_or(caps.contains(Capabilities::CUBE))),
            tallies: labels(&info.tallies),
            counters: labels(&info.counters),
            markers: labels(&info.markers),
            unhealthy: plugin.unhealthy().map(|u| u.why).unwrap_or_default(),
            checkers: u32::from(plugin.checkers()),
            bot_levels: self.nets.levels(plugin),
            geometry: crate::convert::to_api::geometry(plugin.geometry()),
        }
    }
}

/// A variant's declared names, for ListVariants.
fn labels(labels: &[bg_variant_api::Label]) -> Vec<pb::Label> {
    labels
        .iter()
        .map(|l| pb::Label {
            name: l.name.clone(),
            description: l.description.clone(),
        })
        .collect()
}

/// Work that calls a plugin.
type Job = Box<dyn FnOnce() + Send>;

/// Where a piece of plugin work is: waiting, running, or dropped unstarted.
const QUEUED: u8 = 0;
const STARTED: u8 = 1;
const DROPPED: u8 = 2;

/// The threads plugin work runs on, off the async runtime: as many as
/// the machine's cores, taking work from one queue. A thread held by a
/// call past its deadline is replaced, so that the others stay as many.
pub struct PluginThreads {
    queue: Arc<Queue>,
}

#[derive(Default)]
struct Queue {
    jobs: std::sync::Mutex<std::collections::VecDeque<Job>>,
    ready: std::sync::Condvar,
}

impl PluginThreads {
    pub fn new() -> PluginThreads {
        let threads = PluginThreads {
            queue: Arc::new(Queue::default()),
        };
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        for _ in 0..cores.max(2) {
            threads.replace_one();
        }
        threads
    }

    /// Queues `job` for the next free thread.
    fn run(&self, job: Job) {
        let mut jobs = self.queue.jobs.lock().unwrap_or_else(|e| e.into_inner());
        jobs.push_back(job);
        drop(jobs);
        self.queue.ready.notify_one();
    }

    /// Starts one more thread (for one a call holds past its deadline).
    fn replace_one(&self) {
        let queue = self.queue.clone();
        let started = std::thread::Builder::new()
            .name("plugin-work".into())
            .spawn(move || {
                loop {
                    let job = {
                        let mut jobs = queue.jobs.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            match jobs.pop_front() {
                                Some(job) => break job,
                                None => {
                                    jobs = queue.ready.wait(jobs).unwrap_or_else(|e| e.into_inner())
                                }
                            }
                        }
                    };
                    // A panic outside a plugin's own guard ends this job
                    // only (its caller hears of it), not the thread.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            });
        if let Err(e) = started {
            tracing::error!(error = %e, "could not start a thread for plugin work");
        }
    }
}

impl Default for PluginThreads {
    fn default() -> PluginThreads {
        PluginThreads::new()
    }
}
