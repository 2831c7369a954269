//! Finds, loads, checks, guards and registers variant plugins.
//!
//! [`PluginHost`] scans a folder for shared libraries, loads each with
//! `RTLD_NOW` (so a missing symbol fails at load, not mid-game), checks
//! the ABI version, and registers it by variant name. Hidden files (a
//! plugin being copied in before it is renamed into place) are not looked
//! at; files that are not plugins are skipped with a reason; a second plugin with a name already
//! loaded is refused; libraries are never unloaded, and each is loaded from
//! a private copy so that its file can be replaced safely. [`Plugin`] wraps
//! every call and reads the plugin's protobuf answers back into the
//! engine's types (`bg_variant_api::wire`, where both sides of the C ABI's
//! message mapping stand together): a
//! panic in the plugin, or an answer that breaks an invariant (a checker
//! count that changed, a seat that is no seat, a play accepted that is
//! not legal: checked by the plugin's own glue when its descriptor has
//! `FLAG_CHECKS_PLAYS`, by the host when it has not), becomes a `RulesError` of kind `VariantFault` for
//! that call, and the host keeps working.
//!
//! This crate must never know a variant's rules, and never touch the
//! network, storage or the clock on a plugin's behalf.

mod backend;
mod call;
mod in_process;
pub mod isolated;
mod load;
mod plugin;
mod registry;
mod rules;

pub use isolated::{WorkerSettings, with_deadline};
pub use load::{LoadError, load, load_isolated};
pub use plugin::{Plugin, Setup, Transition, Unhealthy};
pub use registry::{PluginHost, ScanReport, Skipped};
pub use rules::VariantRules;

/// Plugin faults (panics, broken answers), by variant: a counter for the
/// server's metrics.
pub const PLUGIN_FAULTS: &str = "backgammon_plugin_faults_total";

/// 1 while a variant's plugin is unhealthy (a call ran past its deadline
/// and has not returned), by variant.
pub const PLUGIN_UNHEALTHY: &str = "backgammon_plugin_unhealthy";

/// Describes the metrics this crate records (see the server's `metrics`).
pub fn describe_metrics() {
    metrics::describe_counter!(
        PLUGIN_FAULTS,
        "Variant plugin faults (a panic, an answer breaking the ABI's rules, a call past its deadline), by variant"
    );
    metrics::describe_gauge!(
        PLUGIN_UNHEALTHY,
        "1 while a variant's plugin is unhealthy: a call ran past its deadline and has not returned"
    );
}
