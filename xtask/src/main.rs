//! Developer tasks, run as `cargo xtask <task>` (see `.cargo/config.toml`).
//!
//! - `plugins [--release]`: builds every shipped variant plugin and copies
//!   the plugin files into `target/plugins/`, the folder `bgctl` (and the
//!   server) use by default. Test plugins are not shipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The shipped variant plugins: (cargo package, library name).
const SHIPPED: &[(&str, &str)] = &[("bg-standard", "bg_standard")];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let release = args.iter().any(|a| a == "--release");
    match args.first().map(String::as_str) {
        Some("plugins") => {
            let dir = build_plugins(release)?;
            println!("{}", dir.display());
            Ok(())
        }
        _ => bail!("usage: cargo xtask plugins [--release]"),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Builds the shipped plugins and gathers them in `target/plugins`.
fn build_plugins(release: bool) -> Result<PathBuf> {
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build.current_dir(&root).arg("build");
    if release {
        build.arg("--release");
    }
    for (package, _) in SHIPPED {
        build.args(["-p", package]);
    }
    let status = build.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build failed");
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let profile = target.join(if release { "release" } else { "debug" });
    let dir = target.join("plugins");
    std::fs::create_dir_all(&dir)?;
    for (_, lib) in SHIPPED {
        let file = format!(
            "{}{lib}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        // Copy then rename: a running server may be scanning this folder.
        let partial = dir.join(format!("{file}.partial"));
        std::fs::copy(profile.join(&file), &partial).with_context(|| format!("copying {file}"))?;
        std::fs::rename(&partial, dir.join(&file))?;
    }
    Ok(dir)
}
