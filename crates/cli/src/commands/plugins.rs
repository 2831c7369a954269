//! `bgctl plugins` (offline): the variant plugins in the plugin folder,
//! with their options, and the files skipped.

use anyhow::Result;
use bg_plugin_host::PluginHost;

use super::Context;

pub fn run(cx: &Context) -> Result<()> {
    let host = PluginHost::new(&cx.plugin_dir);
    let report = host.scan()?;
    for plugin in host.plugins() {
        println!(
            "{} {}  {}",
            plugin.name(),
            plugin.version(),
            plugin.info().description
        );
        for option in &plugin.info().options {
            println!(
                "    {}={} ({})  {}",
                option.name,
                option.default_value,
                option.allowed_values.join("|"),
                option.description
            );
        }
    }
    for skipped in report.skipped {
        eprintln!("skipped {}: {}", skipped.path.display(), skipped.reason);
    }
    Ok(())
}
