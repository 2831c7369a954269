//! Developer tasks, run as `cargo xtask <task>` (see `.cargo/config.toml`).
//!
//! - `plugins [--release]`: builds every shipped variant plugin and copies
//!   the plugin files into `target/plugins/`, the folder `bgctl` (and the
//!   server) use by default. Test plugins are not shipped.
//! - `serve [--release] [-- SERVER ARGS]`: the same, builds `backgammond`,
//!   and runs it with those plugins (`cargo serve` is an alias).
//! - `bgctl [ARGS]`: builds `bgctl` and runs it (`cargo bgctl` is an
//!   alias): cargo's progress shows while it compiles, nothing once it is
//!   built.
//!
//! Cargo runs are started without the variables `cargo run` gave this
//! program (`CARGO_MANIFEST_DIR` and the like): a build script that reads
//! one (ring's does) would otherwise see xtask's, and the build would not
//! be the one `cargo test --workspace` made.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// The shipped variant plugins: (cargo package, library name).
const SHIPPED: &[(&str, &str)] = &[
    ("bg-standard", "bg_standard"),
    ("bg-caucasian", "bg_caucasian"),
    ("bg-plakoto", "bg_plakoto"),
    ("bg-trictrac", "bg_trictrac"),
    ("bg-hypergammon", "bg_hypergammon"),
    ("bg-long-nardy", "bg_long_nardy"),
    ("bg-fevga", "bg_fevga"),
];

/// The computer players' nets shipped beside their plugins: (library
/// name, net in `crates/bot/weights/`). The server reads `LIB.bgnet`
/// beside `LIB.so`.
const NETS: &[(&str, &str)] = &[
    ("bg_standard", "standard.bgnet"),
    ("bg_caucasian", "caucasian.bgnet"),
    ("bg_plakoto", "plakoto.bgnet"),
    ("bg_hypergammon", "hypergammon.bgnet"),
    ("bg_trictrac", "trictrac.bgnet"),
    ("bg_long_nardy", "long_nardy.bgnet"),
    ("bg_fevga", "fevga.bgnet"),
];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let release = args.iter().any(|a| a == "--release");
    match args.first().map(String::as_str) {
        Some("plugins") => {
            let dir = build_plugins(release, &[])?;
            println!("{}", dir.display());
            Ok(())
        }
        Some("serve") => serve(release, &args),
        Some("bgctl") => bgctl(&args[1..]),
        _ => bail!(
            "usage: cargo xtask plugins [--release] | cargo xtask serve [--release] [-- SERVER ARGS] | cargo xtask bgctl [ARGS]"
        ),
    }
}

/// Builds bgctl (debug) and runs it with `args`, in the caller's folder.
fn bgctl(args: &[String]) -> Result<()> {
    cargo(false, &["-p", "bgctl"])?;
    let bgctl = target_dir().join(profile(false)).join("bgctl");
    exec(Command::new(&bgctl).args(args), &bgctl)
}

/// Runs `command` in place of this program (on Unix: signals reach it
/// directly), or until it exits.
fn exec(command: &mut Command, program: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let error = command.exec();
        bail!("running {}: {error}", program.display());
    }
    #[cfg(not(unix))]
    {
        let status = command
            .status()
            .with_context(|| format!("running {}", program.display()))?;
        std::process::exit(status.code().unwrap_or(1));
    }
}

/// Builds the plugins and the server, then runs the server on them until
/// it exits (Ctrl-C stops it cleanly).
fn serve(release: bool, args: &[String]) -> Result<()> {
    // One build of the plugins and the server together: the features of
    // their dependencies are then those of `cargo test --workspace`
    // (unified by crates/workspace-hack), so the two share every artifact.
    let plugins = build_plugins(release, &["-p", "bg-server"])?;
    let server = target_dir().join(profile(release)).join("backgammond");
    let passed: Vec<&String> = args.iter().skip_while(|a| *a != "--").skip(1).collect();
    let mut command = Command::new(&server);
    command
        .current_dir(workspace_root())
        .arg("--plugin-dir")
        .arg(&plugins)
        .args(passed);
    exec(&mut command, &server)
}

fn profile(release: bool) -> &'static str {
    if release { "release" } else { "debug" }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

/// `cargo build` of the given packages, in the workspace, with cargo's
/// progress on stderr but not its closing "Finished" line: a build with
/// nothing to do prints nothing.
fn cargo(release: bool, packages: &[&str]) -> Result<()> {
    let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(set_by_cargo_run) {
            build.env_remove(key);
        }
    }
    build.current_dir(workspace_root()).arg("build");
    if release {
        build.arg("--release");
    }
    build.args(packages).stderr(Stdio::piped());
    let mut child = build.spawn().context("running cargo build")?;
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines() {
            let line = line.context("reading cargo's output")?;
            if !line.trim_start().starts_with("Finished ") {
                eprintln!("{line}");
            }
        }
    }
    if !child.wait().context("running cargo build")?.success() {
        bail!("cargo build failed");
    }
    Ok(())
}

/// Whether `cargo run` set the variable `key` for this program (and a
/// cargo started from here must not pass it on).
fn set_by_cargo_run(key: &str) -> bool {
    [
        "CARGO_MANIFEST_",
        "CARGO_PKG_",
        "CARGO_CRATE_",
        "CARGO_BIN_",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_RUSTC_CURRENT_DIR",
    ]
    .iter()
    .any(|prefix| key.starts_with(prefix))
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Builds the shipped plugins (and the packages `also` names, in the same
/// build) and gathers the plugins in `target/plugins`.
fn build_plugins(release: bool, also: &[&str]) -> Result<PathBuf> {
    let mut packages: Vec<&str> = SHIPPED
        .iter()
        .flat_map(|(package, _)| ["-p", *package])
        .collect();
    packages.extend(also);
    cargo(release, &packages)?;
    let built = target_dir().join(profile(release));
    let dir = target_dir().join("plugins");
    std::fs::create_dir_all(&dir)?;
    for (_, lib) in SHIPPED {
        let file = format!(
            "{}{lib}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        // Copy to a hidden name, then rename: a running server may be
        // scanning this folder, and skips hidden files.
        let partial = dir.join(format!(".{file}.partial"));
        std::fs::copy(built.join(&file), &partial).with_context(|| format!("copying {file}"))?;
        std::fs::rename(&partial, dir.join(&file))?;
    }
    let weights = workspace_root().join("crates/bot/weights");
    for (lib, net) in NETS {
        let file = format!("{}{lib}.bgnet", std::env::consts::DLL_PREFIX);
        let partial = dir.join(format!(".{file}.partial"));
        std::fs::copy(weights.join(net), &partial).with_context(|| format!("copying {net}"))?;
        std::fs::rename(&partial, dir.join(&file))?;
    }
    // Which build the folder holds, for the benchmark scripts: debug and
    // release plugins land in this one folder. A hidden file, which the
    // server does not look at.
    std::fs::write(dir.join(PROFILE_MARK), format!("{}\n", profile(release)))?;
    Ok(dir)
}

/// The file in `target/plugins` naming the build of its plugins.
const PROFILE_MARK: &str = ".profile";
