//! Helpers shared by the end-to-end tests: where the real plugin files
//! are, temporary plugin folders, the corpus, and positions written the
//! way docs/rules.md writes them.
//!
//! The plugin crates are dependencies of this package only so that cargo
//! builds their plugin files (`lib<name>.so`) next to the test binaries;
//! no test links them. Tests load them through the plugin host, as the
//! server does.

pub mod certs;
pub mod gnubg;
pub mod postgres;
pub mod receiver;
pub mod server;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bg_engine::{BAR, Board, Dice, Play, Seat};
use bg_plugin_host::{Plugin, PluginHost};
use bg_variant_api::Options;

/// The shipped plugins, by library name (what `cargo xtask plugins`
/// builds, and the image holds).
pub const SHIPPED_PLUGINS: [&str; 7] = [
    "bg_standard",
    "bg_caucasian",
    "bg_plakoto",
    "bg_trictrac",
    "bg_hypergammon",
    "bg_long_nardy",
    "bg_fevga",
];

/// The file name of a plugin library on this platform (`bg_standard` →
/// `libbg_standard.so`).
pub fn library_file_name(lib: &str) -> String {
    format!(
        "{}{lib}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// A plugin file built by cargo for this test run.
pub fn plugin_file(lib: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // Test binaries live in target/<profile>/deps, next to the plugin
    // files cargo builds for this package's dependencies; binaries of
    // other packages' tests too.
    let name = library_file_name(lib);
    let deps = exe.parent().expect("binary folder");
    for dir in [
        deps.to_path_buf(),
        deps.join("deps"),
        deps.join("..").join("deps"),
    ] {
        let path = dir.join(&name);
        if path.is_file() {
            return path;
        }
    }
    panic!(
        "{name} not found next to {}: run the tests with `cargo test --workspace`, which builds the plugins",
        exe.display()
    );
}

/// A fresh temporary folder holding copies of the given plugins, each as
/// `(library name, file name in the folder)`.
pub fn plugin_dir(plugins: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    for (lib, file) in plugins {
        let to = dir.path().join(file);
        copy_plugin(lib, &to);
        // The variant's computer player, beside it as `xtask plugins`
        // ships it.
        if let Some(net) = shipped_net(lib) {
            std::fs::copy(net, to.with_extension("bgnet")).expect("copy the net");
        }
    }
    dir
}

/// The committed net of a shipped plugin's variant, if it has one.
pub fn shipped_net(lib: &str) -> Option<PathBuf> {
    let variant = lib.strip_prefix("bg_")?;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/bot/weights")
        .join(format!("{variant}.bgnet"));
    path.is_file().then_some(path)
}

/// Runs `bgctl plays` (the binary `bgctl`) with the plugins of
/// `plugin_dir` on `corpus`, and checks that it prints the corpus back
/// line for line: the variant's legal plays are the corpus's.
pub fn assert_plays_reproduce(bgctl: &Path, plugin_dir: &Path, variant: &str, corpus: &Path) {
    let output = std::process::Command::new(bgctl)
        .arg("--plugin-dir")
        .arg(plugin_dir)
        .args(["plays", "--variant", variant, "--corpus"])
        .arg(corpus)
        .output()
        .expect("bgctl runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected = std::fs::read_to_string(corpus).expect("the corpus");
    let actual = String::from_utf8(output.stdout).expect("UTF-8");
    assert_eq!(actual.lines().count(), expected.lines().count());
    for (n, (want, got)) in expected.lines().zip(actual.lines()).enumerate() {
        assert_eq!(got, want, "{variant}: corpus line {}", n + 1);
    }
}

/// Runs an offline command of `bgctl` (the binary `bgctl`: `plays`,
/// `jans`, `hint`) for `variant`, whose plugin `lib` (with its net, if it
/// ships one) is put in a folder of its own, on `corpus` given on stdin;
/// its output, the command having succeeded.
pub fn bgctl_offline(
    bgctl: &Path,
    command: &str,
    variant: &str,
    lib: &str,
    corpus: &str,
) -> String {
    use std::io::Write;
    let dir = plugin_dir(&[(lib, &library_file_name(lib))]);
    let mut child = std::process::Command::new(bgctl)
        .arg("--plugin-dir")
        .arg(dir.path())
        .args([command, "--variant", variant, "--corpus", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("bgctl runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(corpus.as_bytes())
        .expect("the corpus written");
    let output = child.wait_with_output().expect("bgctl ends");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// The C plugin of `examples/c-plugin` compiled into `dir`, as its
/// build line says (with warnings as errors), against the C header
/// generated from the ABI's Rust definitions. The C compiler is `$CC`,
/// else `cc`.
pub fn compile_c_plugin(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = dir.join(library_file_name("bg_c_backgammon"));
    let compiler = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let built = std::process::Command::new(&compiler)
        .args([
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-shared",
            "-fPIC",
        ])
        .arg("-I")
        .arg(root.join("crates/variant-api/include"))
        .arg("-o")
        .arg(&out)
        .arg(root.join("examples/c-plugin/backgammon.c"))
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler {compiler:?}: {e}"));
    assert!(
        built.status.success(),
        "the C plugin does not compile:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    out
}

/// Copies a plugin file the way operators should: to a hidden temporary
/// name in the same folder, then renamed into place, so a scan never sees
/// half a file.
pub fn copy_plugin(lib: &str, to: &Path) {
    let name = to.file_name().and_then(|n| n.to_str()).expect("file name");
    let tmp = to.with_file_name(format!(".{name}.partial"));
    std::fs::copy(plugin_file(lib), &tmp).expect("copy plugin");
    std::fs::rename(&tmp, to).expect("rename plugin into place");
}

/// A shipped plugin (by library name, e.g. `bg_plakoto`), loaded once per
/// test binary through the plugin host from a folder of its own, as the
/// server loads it.
pub fn loaded(lib: &str) -> Arc<Plugin> {
    static HOSTS: Mutex<Vec<(String, PluginHost, tempfile::TempDir)>> = Mutex::new(Vec::new());
    let mut hosts = HOSTS.lock().unwrap_or_else(|e| e.into_inner());
    if !hosts.iter().any(|(l, _, _)| l == lib) {
        let dir = plugin_dir(&[(lib, &library_file_name(lib))]);
        let host = PluginHost::new(dir.path());
        let report = host.scan().expect("scan plugin folder");
        assert!(report.skipped.is_empty(), "{:?}", report.skipped);
        hosts.push((lib.to_string(), host, dir));
    }
    let (_, host, _) = hosts.iter().find(|(l, _, _)| l == lib).expect("loaded");
    host.plugins()
        .into_iter()
        .next()
        .expect("one plugin in its folder")
}

/// The standard plugin, loaded through the plugin host from its file.
pub fn standard() -> Arc<Plugin> {
    loaded("bg_standard")
}

/// The results of white's legal plays from `board` with `d1-d2`, in a
/// game set up there with `options`.
pub fn legal_results(
    plugin: &Plugin,
    options: &[(&str, &str)],
    board: &Board,
    d1: u8,
    d2: u8,
) -> BTreeSet<Board> {
    let options: Options = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let setup = plugin
        .setup_position(board, &options)
        .expect("set up the position");
    let mut plays = Vec::new();
    plugin
        .legal_plays(
            &setup.state,
            Seat::White,
            Dice::new(d1, d2).expect("dice"),
            &mut plays,
        )
        .expect("legal plays");
    plays.iter().map(|lp| lp.result).collect()
}

/// GNU Backgammon's hypergammon legal plays (see `tests/data/README.md`).
pub fn hypergammon_corpus_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/hypergammon-legal-plays.txt")
}

/// The standard corpus: GNU Backgammon's legal plays of 5,000 positions
/// (see data/README.md).
pub fn corpus_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/standard-legal-plays.txt")
}

/// A position as docs/rules.md writes it: the player to move (X, here
/// white) and the opponent (O, black), both in X's numbering, as
/// `(point, count)`; `BAR` for X's bar. Checkers not placed are off.
pub fn spec_position(x: &[(u8, u8)], o_in_x_numbering: &[(u8, u8)]) -> Board {
    let o: Vec<(u8, u8)> = o_in_x_numbering
        .iter()
        .map(|&(p, n)| if p == BAR { (BAR, n) } else { (25 - p, n) })
        .collect();
    let board = Board::from_points(x, &o);
    board
        .validate()
        .expect("a docs/rules.md position is a valid board");
    board
}

/// The board after white plays `play` (written in notation) on `board`,
/// computed here independently of any plugin: each move takes one checker
/// from→to and sends a lone black checker where it lands to the bar.
pub fn after_white_plays(board: &Board, play: &str) -> Board {
    let play: Play = play.parse().expect("play notation");
    let mut board = *board;
    for m in play.moves() {
        let (from, to) = (usize::from(m.from), usize::from(m.to));
        assert!(
            board.checkers[0][from] > 0,
            "{play}: no white checker on {from}"
        );
        board.checkers[0][from] -= 1;
        board.checkers[0][to] += 1;
        if to != 0 && board.checkers[1][25 - to] == 1 {
            board.checkers[1][25 - to] = 0;
            board.checkers[1][usize::from(BAR)] += 1;
        }
    }
    board
}
