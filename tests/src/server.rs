//! A real `backgammond` process for end-to-end tests.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server process on a port of its own choosing, with its data and
/// plugin folders. Killed when dropped.
pub struct ServerProcess {
    child: Option<Child>,
    pub addr: String,
    pub data_dir: PathBuf,
    pub plugin_dir: PathBuf,
    binary: PathBuf,
    extra_args: Vec<String>,
    /// Where stderr goes, with the log filter (None: inherited, `warn`).
    log: Option<(String, PathBuf)>,
    /// Environment variables set for the process.
    env: Vec<(String, String)>,
}

impl ServerProcess {
    /// Starts `binary` and waits for its "listening on" line.
    pub fn start(binary: &Path, plugin_dir: &Path, data_dir: &Path) -> ServerProcess {
        ServerProcess::start_with(binary, plugin_dir, data_dir, &[])
    }

    /// Like [`start`](Self::start), with more command-line arguments.
    pub fn start_with(
        binary: &Path,
        plugin_dir: &Path,
        data_dir: &Path,
        extra_args: &[&str],
    ) -> ServerProcess {
        ServerProcess::launched(binary, plugin_dir, data_dir, extra_args, None, &[])
    }

    /// Like [`start_with`](Self::start_with), with environment variables.
    pub fn start_with_env(
        binary: &Path,
        plugin_dir: &Path,
        data_dir: &Path,
        extra_args: &[&str],
        env: &[(&str, &str)],
    ) -> ServerProcess {
        ServerProcess::launched(binary, plugin_dir, data_dir, extra_args, None, env)
    }

    /// Like [`start_with`](Self::start_with), its log written to `log`
    /// (appended to across restarts) at the `RUST_LOG` level `filter`.
    pub fn start_logging(
        binary: &Path,
        plugin_dir: &Path,
        data_dir: &Path,
        extra_args: &[&str],
        filter: &str,
        log: &Path,
    ) -> ServerProcess {
        let log = Some((filter.to_string(), log.to_path_buf()));
        ServerProcess::launched(binary, plugin_dir, data_dir, extra_args, log, &[])
    }

    fn launched(
        binary: &Path,
        plugin_dir: &Path,
        data_dir: &Path,
        extra_args: &[&str],
        log: Option<(String, PathBuf)>,
        env: &[(&str, &str)],
    ) -> ServerProcess {
        let mut server = ServerProcess {
            child: None,
            addr: String::new(),
            data_dir: data_dir.to_path_buf(),
            plugin_dir: plugin_dir.to_path_buf(),
            binary: binary.to_path_buf(),
            extra_args: extra_args.iter().map(|a| a.to_string()).collect(),
            log,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        server.launch();
        server
    }

    fn launch(&mut self) {
        let (filter, stderr) = match &self.log {
            None => ("warn", Stdio::inherit()),
            Some((filter, path)) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .expect("open the server's log file");
                (filter.as_str(), Stdio::from(file))
            }
        };
        let mut child = Command::new(&self.binary)
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--plugin-dir")
            .arg(&self.plugin_dir)
            .arg("--data-dir")
            .arg(&self.data_dir)
            .args(["--plugin-scan-seconds", "0.2"])
            .args(&self.extra_args)
            .env("RUST_LOG", filter)
            .env("NO_COLOR", "1")
            .env("RUST_BACKTRACE", "0")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start backgammond");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("backgammond listening on ") {
                    let _ = tx.send(addr.trim().to_string());
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("backgammond printed its address");
        self.addr = format!("http://{addr}");
        self.child = Some(child);
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Waits up to `within` for the process to end by itself: how it ended
    /// (None if it is still running).
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        let child = self.child.as_mut()?;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                self.child = None;
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the process at once (SIGKILL): no chance to flush anything.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same folders (a new port).
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    /// Stops the process where it stands (SIGSTOP): it reads nothing and
    /// answers nothing until [`resume`](Self::resume), as a machine that
    /// stalls does.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused process go on (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.pid().expect("running").to_string();
        let status = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {signal} {pid}");
    }

    /// Sends SIGTERM and waits for the exit; returns the exit code and the
    /// time it took.
    pub fn terminate(&mut self) -> (Option<i32>, Duration) {
        let mut child = self.child.take().expect("running");
        let start = Instant::now();
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success());
        let deadline = start + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return (status.code(), start.elapsed());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                return (None, start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
