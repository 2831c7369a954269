//! GNU Backgammon itself, run headless (`gnubg -t -q`), to check that
//! what the service writes (Match IDs, XGIDs, .mat files) is read by the
//! program the field uses as the service meant it.
//!
//! Debian's `gnubg` package (`scripts/gnubg-setup`). Where it is missing a
//! test prints `SKIPPED gnubg test` and passes, unless the environment
//! variable `BACKGAMMON_REQUIRE_GNUBG` is set (CI sets it): then it fails.
//!
//! gnubg runs a Python script (`-p`) against its `gnubg` module: its
//! `command`, `positionid`, `matchid` and `match` functions. Careful: in
//! that module's `match()` player 0 is named "X" and player 1 "O", the
//! reverse of gnubg's board display.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// A gnubg executable.
pub struct Gnubg {
    program: PathBuf,
    home: tempfile::TempDir,
}

impl Gnubg {
    /// gnubg, or `None` (saying so) where it is not installed and not
    /// required.
    pub fn find(test: &str) -> Option<Gnubg> {
        let program = ["/usr/games/gnubg", "/usr/bin/gnubg", "/usr/local/bin/gnubg"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists());
        match program {
            Some(program) => Some(Gnubg {
                program,
                // gnubg keeps settings in $HOME/.gnubg: one of its own.
                home: tempfile::tempdir().expect("a temp folder"),
            }),
            None if std::env::var_os("BACKGAMMON_REQUIRE_GNUBG").is_some_and(|v| !v.is_empty()) => {
                panic!(
                    "gnubg is required (BACKGAMMON_REQUIRE_GNUBG is set) but not installed: run scripts/gnubg-setup"
                )
            }
            None => {
                eprintln!(
                    "SKIPPED gnubg test {test}: GNU Backgammon is not installed (scripts/gnubg-setup); \
                     set BACKGAMMON_REQUIRE_GNUBG=1 to make this a failure"
                );
                None
            }
        }
    }

    /// Runs `script` (Python, with gnubg's module) and returns what it
    /// printed. The script starts with both players human, nothing played
    /// or rolled automatically, and no questions asked.
    pub fn python(&self, script: &str, env: &[(&str, &str)]) -> String {
        let prelude = "import gnubg\n\
            for c in ['set player both human', 'set automatic roll off',\n\
                      'set automatic game off', 'set confirm new off',\n\
                      'set confirm default no', 'set display off']:\n\
            \x20   gnubg.command(c)\n";
        let file = self.home.path().join("script.py");
        std::fs::write(&file, format!("{prelude}{script}")).expect("writing the script");
        let mut command = Command::new(&self.program);
        command
            .args(["-t", "-q", "-p"])
            .arg(&file)
            .env("HOME", self.home.path())
            .stdin(std::process::Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        // Into a file: a pipe nobody reads while gnubg runs could fill.
        let out = self.home.path().join("out.txt");
        let file_out = std::fs::File::create(&out).expect("gnubg's output file");
        let child = command
            .stdout(file_out.try_clone().expect("the output file"))
            .stderr(file_out)
            .spawn()
            .expect("starting gnubg");
        wait_with_timeout(child, Duration::from_secs(120));
        std::fs::read_to_string(&out).expect("gnubg's output")
    }

    /// A folder for files gnubg reads.
    pub fn dir(&self) -> &std::path::Path {
        self.home.path()
    }
}

fn wait_with_timeout(mut child: std::process::Child, limit: Duration) {
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                panic!("gnubg ran for more than {limit:?}");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for gnubg: {e}"),
        }
    }
}
