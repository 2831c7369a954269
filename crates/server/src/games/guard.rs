//! A variant's code runs off the async runtime, within a deadline.
//!
//! Every piece of work that calls a plugin (judging an action, showing a
//! game, replaying a log) runs in tokio's blocking pool, and its caller
//! waits for it at most the plugin-call deadline
//! (`--plugin-call-timeout-ms`). A plugin that spins for ever then holds
//! one blocking thread, never a runtime worker: health checks and every
//! other variant's games keep being served. Past the deadline the caller
//! answers `VARIANT_FAULT` at once, with nothing changed (the work had a
//! copy of the game), and the plugin is unhealthy until the call returns:
//! its games are refused rather than sent to it again (an in-process call
//! cannot be stopped; `ListVariants`, the metrics and the log say so).
//! What this cannot contain is a plugin that aborts or corrupts the
//! process: that needs the plugin in a process of its own.

use std::sync::Arc;

use bg_api::v1 as pb;
use bg_engine::game::{MatchSettings, RulesErrorKind};
use bg_plugin_host::Plugin;
use bg_store::GameStore;
use bg_variant_api::Capabilities;
use tonic::Code;

use super::Games;
use super::cache::Live;
use crate::error::ApiError;
use crate::fields::Fields;

impl<S: GameStore> Games<S> {
    /// Runs `work`, which calls `plugin`, in the blocking pool, within the
    /// plugin-call deadline.
    pub(super) async fn off_runtime<T: Send + 'static>(
        &self,
        plugin: &Arc<Plugin>,
        work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        if let Some(why) = plugin.unhealthy() {
            return Err(not_called(format!("variant unavailable: {why}")));
        }
        let mut call = tokio::task::spawn_blocking(work);
        match tokio::time::timeout(self.plugin_deadline, &mut call).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => {
                tracing::error!(error = %e, variant = plugin.name(), "work on a game panicked");
                Err(ApiError::new(
                    Code::Internal,
                    "INTERNAL",
                    "the action failed in the server",
                ))
            }
            Err(_) => {
                plugin.call_overran(self.plugin_deadline);
                let overran = plugin.clone();
                // The call goes on in its thread; when it returns (if it
                // ever does), the plugin is healthy again.
                tokio::spawn(async move {
                    let _ = call.await;
                    overran.overran_call_returned();
                });
                Err(not_called(format!(
                    "a call to variant {} ran past the {} ms deadline; nothing was changed, and the variant is unavailable until the call returns",
                    plugin.name(),
                    self.plugin_deadline.as_millis()
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

/// A variant's failure the server saw itself (a call past its deadline,
/// a call not made): `VARIANT_FAULT`, saying what happened (no plugin's
/// internals in it).
fn not_called(message: String) -> ApiError {
    tracing::warn!(%message, "variant call refused or abandoned");
    ApiError::new(
        Code::Internal,
        RulesErrorKind::VariantFault.reason(),
        message,
    )
}

impl<S: GameStore> Games<S> {
    /// The variants loaded, as ListVariants shows them: each plugin is
    /// asked for its default game off the runtime, and one that is
    /// unhealthy (or becomes so) is listed saying why.
    pub async fn variants(&self) -> Vec<pb::Variant> {
        let mut variants = Vec::new();
        for plugin in self.plugins.plugins() {
            let info = plugin.info();
            let caps = plugin.capabilities();
            let asked = plugin.clone();
            let cube = self
                .off_runtime(&plugin, move || {
                    Ok(asked
                        .new_game(&Default::default())
                        .map_or(caps.contains(Capabilities::CUBE), |setup| setup.cube))
                })
                .await;
            variants.push(pb::Variant {
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
                unhealthy: plugin.unhealthy().unwrap_or_default(),
            });
        }
        variants
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
