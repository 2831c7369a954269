//! The data folder: the games database (`games.db`) and the key seat
//! tokens derive from (`server.key`), which belong together, and the lock
//! that keeps a second server out.
//!
//! One server at a time uses a data folder: it holds an exclusive lock on
//! `DATA_DIR/lock` while it runs (several replicas are for a shared
//! database server, not a shared file). At startup the key and the
//! database are checked against each other, so that a lost or replaced
//! key, or a lost database, stops the server with a message instead of
//! answering with tokens that do not work.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use bg_store::{GameStore, TOKEN_KEY_FINGERPRINT};
use sha2::{Digest, Sha256};

/// A data folder this process holds the lock of (until it is dropped).
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    _lock: File,
}

impl DataDir {
    /// Creates the folder if needed and takes its lock, or says which
    /// process holds it.
    pub fn lock(path: &Path) -> anyhow::Result<DataDir> {
        private_folder(path)?;
        let lock = take_lock(&path.join("lock"), path)?;
        Ok(DataDir {
            path: path.to_path_buf(),
            _lock: lock,
        })
    }

    /// Locks a SQLite file given outside the data folder (`--database
    /// sqlite:PATH`), with `PATH.lock` beside it: one server per file,
    /// whatever its data folder.
    pub fn lock_file_of(database: &Path) -> anyhow::Result<File> {
        let mut name = database.as_os_str().to_owned();
        name.push(".lock");
        take_lock(Path::new(&name), database)
    }

    pub fn database(&self) -> PathBuf {
        self.path.join("games.db")
    }

    pub fn key_file(&self) -> PathBuf {
        self.path.join("server.key")
    }
}

/// Creates a missing data folder for its owner alone (0700), whatever the
/// umask: the database in it holds every running match's secret dice
/// seed. An existing folder is the operator's: it is left as it is, with
/// a warning when other users may enter it (the files in it are private
/// anyway: see the store).
fn private_folder(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if !path.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .with_context(|| format!("creating data directory {}", path.display()))?;
    }
    let mode = std::fs::metadata(path)
        .with_context(|| format!("reading data directory {}", path.display()))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        tracing::warn!(
            folder = %path.display(),
            mode = format!("{:o}", mode & 0o7777),
            "the data directory is open to other users; 0700 is advised (its files are 0600)"
        );
    }
    Ok(())
}

/// Takes the exclusive lock `lock_path` of `what` (a data folder, or a
/// database file), or says which process holds it.
fn take_lock(lock_path: &Path, what: &Path) -> anyhow::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut lock = std::fs::OpenOptions::new()
        .mode(0o600)
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = lock.read_to_string(&mut holder);
            bail!(
                "another backgammond (pid {}) is using {}: one server per data folder and per SQLite file (stop it first, or give this one another --data-dir or --database)",
                holder.trim(),
                what.display()
            );
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("locking {}", lock_path.display()));
        }
    }
    // Who holds it, for the message above (best effort).
    let _ = lock.set_len(0);
    let _ = lock.rewind();
    let _ = write!(lock, "{}", std::process::id());
    Ok(lock)
}

/// Refuses a key whose database is gone: a missing or empty SQLite file
/// beside an existing key means the database was lost.
pub fn check_database_present(database: &Path, key_file: &Path) -> anyhow::Result<()> {
    let empty = std::fs::metadata(database).map_or(true, |m| m.len() == 0);
    if empty && key_file.exists() {
        bail!(
            "{} is missing or empty, yet {} exists: the games database was lost. Restore games.db from a backup (with the server.key taken with it); to start afresh with no games, move server.key away",
            database.display(),
            key_file.display()
        );
    }
    Ok(())
}

/// The token key in `path`, checked against the database.
///
/// A store of this process alone (SQLite): the key is created on first
/// use, and refused when the database holds games and the key is missing
/// or not the one their tokens were made with.
///
/// A shared store (PostgreSQL, several replicas): every replica must use
/// the same key, so it is never created here (a missing file stops the
/// server), and its fingerprint must be the one the database recorded
/// first (the first replica ever started records it).
pub async fn token_key(path: &Path, store: &impl GameStore) -> anyhow::Result<[u8; 32]> {
    if store.shared() {
        return shared_token_key(path, store).await;
    }
    let holds_games = store.holds_games().await?;
    let recorded = store.setting(TOKEN_KEY_FINGERPRINT).await?;
    let key = match read_key(path)? {
        Some(key) => key,
        None if holds_games => bail!(
            "{} is missing, but the database holds games whose seat tokens derive from it: restore the server.key that was kept with games.db (backgammond refuses to make a new key, which would make every token fail)",
            path.display()
        ),
        None => create_key(path)?,
    };
    let fingerprint = fingerprint(&key);
    match recorded {
        Some(recorded) if recorded == fingerprint => {}
        Some(_) if holds_games => bail!(
            "{} is not the key this database's games were made with (its fingerprint differs): restore the server.key that was kept with games.db",
            path.display()
        ),
        _ => store
            .set_setting(TOKEN_KEY_FINGERPRINT, &fingerprint)
            .await
            .context("recording the token key's fingerprint")?,
    }
    Ok(key)
}

async fn shared_token_key(path: &Path, store: &impl GameStore) -> anyhow::Result<[u8; 32]> {
    let Some(key) = read_key(path)? else {
        bail!(
            "the seat-token key file {} does not exist. With a PostgreSQL database every replica must derive seat tokens from the same key: create one once (`backgammond token-key FILE`), give the same file to every replica with --token-key-file (or BACKGAMMON_TOKEN_KEY_FILE), and keep it with your database backups",
            path.display()
        );
    };
    let fingerprint = fingerprint(&key);
    let recorded = store
        .claim_setting(TOKEN_KEY_FINGERPRINT, &fingerprint)
        .await
        .context("recording the token key's fingerprint")?;
    if recorded != fingerprint {
        bail!(
            "{} is not the key this database's servers use (its fingerprint differs from the one the database recorded): give every replica the same --token-key-file",
            path.display()
        );
    }
    Ok(key)
}

/// The two keys of a rotation (`backgammond rotate-key`): the one in
/// `current` (the key the servers use), checked against the database,
/// and the new one in `new_file`. A rotation interrupted after the
/// database recorded the new key is taken up again (the database then
/// names the new key, the file still holds the old one).
pub async fn rotation_keys(
    current: &Path,
    new_file: &Path,
    store: &impl GameStore,
) -> anyhow::Result<([u8; 32], [u8; 32])> {
    let Some(old) = read_key(current)? else {
        bail!(
            "{} does not exist: rotate-key replaces the key the servers use (--token-key-file, or server.key in --data-dir)",
            current.display()
        );
    };
    let Some(new) = read_key(new_file)? else {
        bail!(
            "{} does not exist: make the new key first with `backgammond token-key {}`",
            new_file.display(),
            new_file.display()
        );
    };
    if old == new {
        bail!(
            "{} holds the key in use already: nothing to rotate",
            new_file.display()
        );
    }
    let recorded = store.setting(TOKEN_KEY_FINGERPRINT).await?;
    match recorded {
        Some(recorded) if recorded == fingerprint(&old) || recorded == fingerprint(&new) => {}
        Some(_) => bail!(
            "{} is not the key this database's games were made with (its fingerprint differs): rotate from the key in use",
            current.display()
        ),
        None => bail!("this database has recorded no key yet: there is nothing to rotate"),
    }
    Ok((old, new))
}

/// Records `key` as the one this database's servers use.
pub async fn record_key(key: &[u8; 32], store: &impl GameStore) -> anyhow::Result<()> {
    store
        .set_setting(TOKEN_KEY_FINGERPRINT, &fingerprint(key))
        .await
        .context("recording the token key's fingerprint")
}

/// SHA-256 of the key, with a label: names the key, reveals nothing of it.
fn fingerprint(key: &[u8; 32]) -> Vec<u8> {
    let mut hash = Sha256::new();
    hash.update(b"backgammon token key fingerprint v1\0");
    hash.update(key);
    hash.finalize().to_vec()
}

fn read_key(path: &Path) -> anyhow::Result<Option<[u8; 32]>> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let key = bytes
                .try_into()
                .map_err(|_| anyhow::anyhow!("{} is not a 32-byte key", path.display()))?;
            Ok(Some(key))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// A new random key, written whole (temporary file, fsync, rename), readable
/// by its owner only.
pub fn create_key(path: &Path) -> anyhow::Result<[u8; 32]> {
    use rand::Rng;
    let key: [u8; 32] = rand::rng().random();
    write_key(path, &key)?;
    Ok(key)
}

pub fn write_key(path: &Path, key: &[u8; 32]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    // A file left by an interrupted write may have any mode: start anew,
    // so the key is created with the owner's rights only.
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("removing {}", tmp.display())),
    }
    {
        #[cfg(unix)]
        use std::os::unix::fs::OpenOptionsExt;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(0o600);
        let mut file = options
            .open(&tmp)
            .with_context(|| format!("creating {}", tmp.display()))?;
        file.write_all(key)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    sync_folder(path)
}

/// Makes a rename or a new file in `path`'s folder survive a power cut.
fn sync_folder(path: &Path) -> anyhow::Result<()> {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
    let folder = folder.unwrap_or(Path::new("."));
    File::open(folder)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("syncing {}", folder.display()))
}

/// `backgammond backup`: a consistent copy of a data folder (the database,
/// compacted, and the key) into a new folder, while a server may go on
/// using the original. The copy is itself a data folder: start a server
/// on it (or copy its two files back) to restore.
///
/// `database` and `key_file` are the server's (by default `games.db` and
/// `server.key` in its data folder); the copy holds them under those two
/// names.
pub async fn backup(database: &Path, key_file: &Path, target: &Path) -> anyhow::Result<()> {
    if !database.exists() {
        bail!("{} does not exist: no games database", database.display());
    }
    let key = read_key(key_file)?
        .ok_or_else(|| anyhow::anyhow!("{} does not exist: no token key", key_file.display()))?;
    std::fs::create_dir(target).with_context(|| {
        format!(
            "creating {} (the backup goes into a new folder)",
            target.display()
        )
    })?;
    let copy = target.join("games.db");
    bg_store::SqliteStore::backup(database, &copy)
        .await
        .with_context(|| format!("copying {}", database.display()))?;
    // On the disk before the command says it is done.
    File::open(&copy)
        .and_then(|file| file.sync_all())
        .with_context(|| format!("syncing {}", copy.display()))?;
    sync_folder(&copy)?;
    write_key(&target.join("server.key"), &key)?;
    Ok(())
}
