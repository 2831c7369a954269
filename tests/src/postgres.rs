//! A private, real PostgreSQL server per test (never a mock), for the
//! tests of the PostgreSQL storage.
//!
//! [`PgCluster::start`] runs Debian's `postgresql` package binaries
//! (`initdb`, `pg_ctl`, `psql`) on a new cluster in a temporary folder,
//! listening on a free TCP port of 127.0.0.1 with trust authentication,
//! superuser `postgres`. The binaries are found with `pg_config --bindir`,
//! else in the highest-numbered `/usr/lib/postgresql/*/bin`. When they are
//! missing, `start` returns `None` and the test skips itself, saying so on
//! stderr, unless the environment variable `BACKGAMMON_REQUIRE_POSTGRES`
//! is set (non-empty), when it panics instead: CI must run these tests.
//!
//! Root and `nobody`: PostgreSQL refuses to run as root. When the tests
//! run as root (effective uid 0, as in containers), every PostgreSQL
//! program is run as user `nobody` through `runuser -u nobody --`, and the
//! cluster folder (created under /tmp, mode 0755) is given to `nobody`.
//! Otherwise the programs run as the current user.
//!
//! The server can be stopped as a crash would stop it
//! ([`PgCluster::stop_immediate`]) and started again on the same folder
//! and port ([`PgCluster::start_again`]), which runs crash recovery.
//! Dropping a cluster stops it (immediate) and removes its folder.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The superuser made by `initdb -U`.
const SUPERUSER: &str = "postgres";

/// How many free ports `start` tries when the one it picked is taken
/// before the server binds it.
const START_ATTEMPTS: usize = 5;

/// How long to wait for a started server to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Lines of the server log quoted in panic messages.
const LOG_TAIL_LINES: usize = 40;

/// Environment variables of libpq and the server that would change what
/// the programs do; removed from their environment.
const PG_ENV: &[&str] = &[
    "PGDATA",
    "PGHOST",
    "PGHOSTADDR",
    "PGPORT",
    "PGDATABASE",
    "PGUSER",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGSERVICE",
    "PGSERVICEFILE",
    "PGOPTIONS",
    "PGSSLMODE",
    "PGREQUIRESSL",
    "PGTARGETSESSIONATTRS",
    "PGCLIENTENCODING",
    "PGTZ",
    "PGDATESTYLE",
    "PSQLRC",
    "PSQL_HISTORY",
];

/// The programs used, and whether they run as `nobody`.
#[derive(Debug, Clone)]
struct Tools {
    initdb: PathBuf,
    pg_ctl: PathBuf,
    psql: PathBuf,
    /// `runuser`, when running as root.
    runuser: Option<PathBuf>,
}

impl Tools {
    /// Finds the PostgreSQL programs, or says why they cannot be used.
    fn find() -> Result<Tools, String> {
        let bin = postgres_bin_dir()?;
        let psql = if bin.join("psql").is_file() {
            bin.join("psql")
        } else {
            find_in_path("psql")
                .ok_or_else(|| format!("psql is neither in {} nor on PATH", bin.display()))?
        };
        let runuser = if effective_uid_is_root() {
            let runuser = find_in_path("runuser")
                .or_else(|| {
                    ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"]
                        .iter()
                        .map(PathBuf::from)
                        .find(|p| p.is_file())
                })
                .ok_or(
                    "running as root, and PostgreSQL refuses root, but runuser \
                     (to run it as nobody) was not found",
                )?;
            let nobody = Command::new("id")
                .args(["-u", "nobody"])
                .stdin(Stdio::null())
                .output();
            if !nobody.is_ok_and(|o| o.status.success()) {
                return Err(
                    "running as root, and PostgreSQL refuses root, but there is no user nobody"
                        .to_string(),
                );
            }
            Some(runuser)
        } else {
            None
        };
        Ok(Tools {
            initdb: bin.join("initdb"),
            pg_ctl: bin.join("pg_ctl"),
            psql,
            runuser,
        })
    }
}

/// The folder of `initdb` and `pg_ctl`: `pg_config --bindir` when it holds
/// them, else the highest-numbered `/usr/lib/postgresql/*/bin` that does.
fn postgres_bin_dir() -> Result<PathBuf, String> {
    let has_server = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    if let Ok(out) = Command::new("pg_config")
        .arg("--bindir")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        && out.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if has_server(&dir) {
            return Ok(dir);
        }
    }
    let root = Path::new("/usr/lib/postgresql");
    let mut found: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let version: Option<Vec<u64>> = name.split('.').map(|p| p.parse().ok()).collect();
            let bin = entry.path().join("bin");
            match version {
                Some(version) if has_server(&bin) => Some((version, bin)),
                _ => None,
            }
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "no initdb and pg_ctl found (neither in `pg_config --bindir` nor in \
         /usr/lib/postgresql/*/bin; install Debian's postgresql package)"
            .to_string()
    })
}

/// An executable file named `name` in a folder of PATH.
fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Whether this process runs as root (`id -u` prints 0).
fn effective_uid_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A port of 127.0.0.1 free right now (the OS picks it; the listener is
/// closed again, so another process could take it before the server does).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 to find a free port");
    listener.local_addr().expect("local address").port()
}

/// Whether a server log says the server could not bind its port.
fn port_was_taken(log: &str) -> bool {
    log.contains("Address already in use") || log.contains("could not create any TCP/IP sockets")
}

/// `value` in a libpq connection string.
fn conninfo_value(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// `name` as an SQL identifier.
fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` percent-encoded for a URL path segment.
fn percent_encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A command's exit status and output, for panic messages.
fn describe(output: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout).trim_end(),
        String::from_utf8_lossy(&output.stderr).trim_end()
    )
}

/// A private PostgreSQL cluster in a temp folder, on a free TCP port of
/// 127.0.0.1, stopped (immediate) and removed when dropped.
pub struct PgCluster {
    /// Holds `data` (the cluster), `sock` (its Unix socket) and `log`.
    dir: tempfile::TempDir,
    tools: Tools,
    port: u16,
    running: bool,
}

impl PgCluster {
    /// Starts a new cluster, or None when PostgreSQL is not installed
    /// (prints a line to stderr saying the test is skipped and why). When
    /// the environment variable BACKGAMMON_REQUIRE_POSTGRES is set (to
    /// anything non-empty), a missing PostgreSQL panics instead (CI must
    /// run these tests).
    pub fn start() -> Option<PgCluster> {
        let tools = match Tools::find() {
            Ok(tools) => tools,
            Err(why) => {
                let required =
                    std::env::var_os("BACKGAMMON_REQUIRE_POSTGRES").is_some_and(|v| !v.is_empty());
                if required {
                    panic!(
                        "PostgreSQL is required (BACKGAMMON_REQUIRE_POSTGRES is set) but: {why}"
                    );
                }
                let thread = std::thread::current();
                let test = thread.name().unwrap_or("this test");
                eprintln!(
                    "SKIPPED PostgreSQL test {test}: PostgreSQL is not available ({why}); \
                     set BACKGAMMON_REQUIRE_POSTGRES=1 to make this a failure"
                );
                return None;
            }
        };
        let mut cluster = PgCluster {
            dir: make_cluster_dir(tools.runuser.is_some()),
            tools,
            port: 0,
            running: false,
        };
        cluster.initdb();
        for attempt in 1..=START_ATTEMPTS {
            cluster.port = free_port();
            let log_before = cluster.log_len();
            match cluster.pg_ctl_start() {
                Ok(()) => {
                    cluster.running = true;
                    break;
                }
                Err(error) => {
                    let new_log = cluster.log_since(log_before);
                    if attempt < START_ATTEMPTS && port_was_taken(&new_log) {
                        continue;
                    }
                    cluster.fail(&format!(
                        "could not start PostgreSQL on port {} (attempt {attempt}): {error}",
                        cluster.port
                    ));
                }
            }
        }
        cluster.wait_ready();
        Some(cluster)
    }

    /// A URL for the `postgres` database as the superuser:
    /// `postgres://USER@127.0.0.1:PORT/postgres` (trust auth on loopback;
    /// no password).
    pub fn url(&self) -> String {
        self.database_url("postgres")
    }

    /// Creates a fresh database (name given) and returns its URL (same
    /// form). Tests use one database each so they can share a cluster.
    pub fn create_database(&self, name: &str) -> String {
        assert!(!name.is_empty(), "a database needs a name");
        self.psql(
            "postgres",
            &format!("CREATE DATABASE {}", quote_identifier(name)),
        );
        self.database_url(name)
    }

    /// Runs SQL through psql against the named database, returns stdout
    /// (psql -X -A -t -q -v ON_ERROR_STOP=1: one line per row, columns
    /// separated by `|`, no headers, no command tags); panics with psql's
    /// stderr on failure.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        match self.try_psql(database, sql) {
            Ok(stdout) => stdout,
            Err(error) => {
                let shown: String = sql.chars().take(2000).collect();
                self.fail(&format!(
                    "psql failed on database {database:?}: {error}\nSQL:\n{shown}"
                ))
            }
        }
    }

    /// Stops the server at once, as a crash would (pg_ctl stop -m
    /// immediate): no checkpoint; in-flight connections die.
    pub fn stop_immediate(&mut self) {
        if !self.running {
            return;
        }
        if let Err(error) = self.pg_ctl_stop_immediate() {
            self.fail(&format!("could not stop PostgreSQL (immediate): {error}"));
        }
        self.running = false;
    }

    /// Starts the server again on the same folder and port (crash recovery
    /// runs), and waits until it accepts connections.
    pub fn start_again(&mut self) {
        if self.running {
            self.fail("start_again: the server is running; stop it first (stop_immediate)");
        }
        if let Err(error) = self.pg_ctl_start() {
            self.fail(&format!(
                "could not start PostgreSQL again on port {}: {error}",
                self.port
            ));
        }
        self.running = true;
        self.wait_ready();
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    fn database_url(&self, database: &str) -> String {
        format!(
            "postgres://{SUPERUSER}@127.0.0.1:{}/{}",
            self.port,
            percent_encode(database)
        )
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn socket_dir(&self) -> PathBuf {
        self.dir.path().join("sock")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("log")
    }

    /// A command running `program` as the user PostgreSQL runs as, in the
    /// cluster folder, without the caller's libpq settings.
    fn command(&self, program: &Path) -> Command {
        let mut command = match &self.tools.runuser {
            Some(runuser) => {
                let mut command = Command::new(runuser);
                command.args(["-u", "nobody", "--"]).arg(program);
                command
            }
            None => Command::new(program),
        };
        command.current_dir(self.dir.path()).stdin(Stdio::null());
        for var in PG_ENV {
            command.env_remove(var);
        }
        command
    }

    fn initdb(&self) {
        let output = self
            .command(&self.tools.initdb)
            .arg("-D")
            .arg(self.data_dir())
            .args(["-A", "trust", "-U", SUPERUSER, "--no-sync", "-E", "UTF8"])
            .arg("--locale=C")
            .output();
        match output {
            Ok(output) if output.status.success() => {}
            Ok(output) => self.fail(&format!("initdb failed: {}", describe(&output))),
            Err(error) => self.fail(&format!(
                "could not run {}: {error}",
                self.tools.initdb.display()
            )),
        }
    }

    /// The server's settings, for `pg_ctl -o` (which passes them through
    /// /bin/sh, hence the quotes).
    fn server_options(&self) -> String {
        // fsync=off: these are test clusters. A server killed by a test is a
        // crashed process, not a power cut: what it wrote is in the OS page
        // cache and crash recovery finds it, so syncing buys nothing here.
        let socket_dir = self.socket_dir().to_string_lossy().replace('\'', r"'\''");
        format!(
            "-c listen_addresses=127.0.0.1 -c port={} -c unix_socket_directories='{socket_dir}' \
             -c fsync=off -c max_connections=200 -c shared_buffers=32MB",
            self.port
        )
    }

    /// `pg_ctl start`, waiting (60 s at most) until the server is ready.
    fn pg_ctl_start(&self) -> Result<(), String> {
        let output = self
            .command(&self.tools.pg_ctl)
            .arg("start")
            .args(["-w", "-t", "60", "-D"])
            .arg(self.data_dir())
            .arg("-l")
            .arg(self.log_path())
            .arg("-o")
            .arg(self.server_options())
            .output()
            .map_err(|e| format!("could not run {}: {e}", self.tools.pg_ctl.display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!("pg_ctl start: {}", describe(&output)))
        }
    }

    fn pg_ctl_stop_immediate(&self) -> Result<(), String> {
        let output = self
            .command(&self.tools.pg_ctl)
            .arg("stop")
            .args(["-m", "immediate", "-w", "-t", "60", "-D"])
            .arg(self.data_dir())
            .output()
            .map_err(|e| format!("could not run {}: {e}", self.tools.pg_ctl.display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!("pg_ctl stop: {}", describe(&output)))
        }
    }

    /// Runs `sql` (fed on stdin) through psql over TCP; stdout, or the
    /// reason it failed.
    fn try_psql(&self, database: &str, sql: &str) -> Result<String, String> {
        let conninfo = format!(
            "host=127.0.0.1 port={} user={} dbname={} connect_timeout=10",
            self.port,
            conninfo_value(SUPERUSER),
            conninfo_value(database)
        );
        let mut child = self
            .command(&self.tools.psql)
            .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"])
            .arg("-d")
            .arg(conninfo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("could not run {}: {e}", self.tools.psql.display()))?;
        let mut stdin = child.stdin.take().expect("psql stdin");
        let input = sql.to_string();
        // Written from a thread so that a large output cannot block psql
        // while we are still writing its input.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
            let _ = stdin.write_all(b"\n");
        });
        let output = child
            .wait_with_output()
            .map_err(|e| format!("waiting for psql: {e}"))?;
        let _ = writer.join();
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(describe(&output))
        }
    }

    /// Waits until a TCP connection to the port succeeds and `SELECT 1`
    /// works through psql.
    fn wait_ready(&self) {
        let deadline = Instant::now() + READY_TIMEOUT;
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        loop {
            let error = match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                Err(error) => format!("TCP connection to {addr}: {error}"),
                Ok(stream) => {
                    drop(stream);
                    match self.try_psql("postgres", "SELECT 1") {
                        Ok(out) if out.trim() == "1" => return,
                        Ok(out) => format!("SELECT 1 printed {out:?}"),
                        Err(error) => format!("SELECT 1: {error}"),
                    }
                }
            };
            if Instant::now() >= deadline {
                self.fail(&format!(
                    "PostgreSQL on port {} did not accept connections within {READY_TIMEOUT:?}; last error: {error}",
                    self.port
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_len(&self) -> usize {
        std::fs::read(self.log_path()).map_or(0, |log| log.len())
    }

    /// What the server logged after the first `from` bytes.
    fn log_since(&self, from: usize) -> String {
        let log = std::fs::read(self.log_path()).unwrap_or_default();
        String::from_utf8_lossy(log.get(from..).unwrap_or_default()).into_owned()
    }

    /// The last lines of the server log.
    fn log_tail(&self) -> String {
        match std::fs::read(self.log_path()) {
            Ok(log) => {
                let log = String::from_utf8_lossy(&log);
                let lines: Vec<&str> = log.lines().collect();
                lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
            }
            Err(error) => format!("(no log: {error})"),
        }
    }

    /// Panics with `message` and the tail of the server log.
    fn fail(&self, message: &str) -> ! {
        panic!(
            "{message}\n--- last lines of {} ---\n{}\n---",
            self.log_path().display(),
            self.log_tail()
        )
    }
}

/// A new folder for a cluster, with its `sock` folder. As root (PostgreSQL
/// then runs as nobody) it is made under /tmp, mode 0755, and given to
/// nobody.
fn make_cluster_dir(for_nobody: bool) -> tempfile::TempDir {
    let parent = if Path::new("/tmp").is_dir() {
        PathBuf::from("/tmp")
    } else {
        std::env::temp_dir()
    };
    let dir = tempfile::Builder::new()
        .prefix("bg-pg-")
        .tempdir_in(&parent)
        .unwrap_or_else(|e| panic!("create a cluster folder in {}: {e}", parent.display()));
    std::fs::create_dir(dir.path().join("sock"))
        .unwrap_or_else(|e| panic!("create {}/sock: {e}", dir.path().display()));
    if for_nobody {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // tempfile makes the folder 0700; nobody must be able to enter it.
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                .unwrap_or_else(|e| panic!("chmod 755 {}: {e}", dir.path().display()));
        }
        let output = Command::new("chown")
            .args(["-R", "nobody"])
            .arg(dir.path())
            .stdin(Stdio::null())
            .output();
        match output {
            Ok(output) if output.status.success() => {}
            Ok(output) => panic!(
                "chown -R nobody {} failed: {}",
                dir.path().display(),
                describe(&output)
            ),
            Err(error) => panic!("could not run chown: {error}"),
        }
    }
    dir
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if self.running {
            // Errors ignored: the folder goes anyway (TempDir's drop).
            let _ = self.pg_ctl_stop_immediate();
            self.running = false;
        }
    }
}
