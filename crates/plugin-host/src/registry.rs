//! The plugin folders and the variants loaded from them.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::isolated::WorkerSettings;
use crate::load::{load, load_isolated};
use crate::plugin::Plugin;

/// The variants loaded from one or more folders. Scanning again picks up
/// files that are new or changed since the last scan; nothing is ever
/// unloaded, so a game can keep using the plugin it started with. A variant
/// keeps the plugin loaded first: within one scan, folders are read in
/// order, so at startup the earlier folder wins a name clash.
pub struct PluginHost {
    dirs: Vec<PathBuf>,
    /// Set: plugins run in worker processes started so.
    isolation: Option<WorkerSettings>,
    state: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    by_name: BTreeMap<String, Arc<Plugin>>,
    /// Files already looked at, with the (modified, length) seen then.
    seen: HashMap<PathBuf, (Option<SystemTime>, u64)>,
    /// Files loaded: never opened again (the loader would return the
    /// library already in memory, not the file on disk).
    loaded: HashSet<PathBuf>,
}

/// What one scan did.
#[derive(Debug, Default)]
pub struct ScanReport {
    pub loaded: Vec<Arc<Plugin>>,
    pub skipped: Vec<Skipped>,
    /// Folders that could not be read (the others were scanned).
    pub unreadable: Vec<Skipped>,
}

/// A file that was not loaded, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

/// Data files a plugin ships beside it, which are not plugins: its
/// variant's computer player (`NAME.bgnet`, read by the server).
pub const COMPANION_EXTENSIONS: &[&str] = &["bgnet"];

fn is_companion(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    COMPANION_EXTENSIONS.contains(&ext)
}

/// File names a plugin may have on this platform.
fn is_library(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    matches!(ext, "so" | "dylib" | "dll")
}

impl PluginHost {
    /// A host for the plugins in `dir` (nothing is loaded until [`scan`](Self::scan)).
    pub fn new(dir: impl Into<PathBuf>) -> PluginHost {
        PluginHost::with_dirs([dir.into()])
    }

    /// A host for the plugins in several folders, searched in this order.
    pub fn with_dirs(dirs: impl IntoIterator<Item = PathBuf>) -> PluginHost {
        PluginHost {
            dirs: dirs.into_iter().collect(),
            isolation: None,
            state: Mutex::new(Registry::default()),
        }
    }

    /// Plugins loaded from now on run in worker processes (see
    /// [`crate::isolated`]), not in this one.
    pub fn isolated(mut self, settings: WorkerSettings) -> PluginHost {
        self.isolation = Some(settings);
        self
    }

    /// The folders scanned, in order.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Loads every plugin file in the folders not seen before (or changed
    /// since), logging each load and each skipped file with its reason.
    /// Hidden files (a name starting with `.`) are not looked at: a plugin
    /// being installed is copied to a hidden name, then renamed into place,
    /// so that no scan reads half a file.
    /// A folder that cannot be read is listed in
    /// [`ScanReport::unreadable`] and the others are scanned; the scan
    /// fails only if no folder can be read (the error names the first).
    pub fn scan(&self) -> std::io::Result<ScanReport> {
        let mut report = ScanReport::default();
        let mut paths = Vec::new();
        let mut first_error = None;
        for dir in &self.dirs {
            let entries = match std::fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(e) => {
                    let reason = format!("cannot read plugin folder {}: {e}", dir.display());
                    tracing::warn!(folder = %dir.display(), error = %e, "plugin folder unreadable");
                    first_error
                        .get_or_insert_with(|| std::io::Error::new(e.kind(), reason.clone()));
                    report.unreadable.push(Skipped {
                        path: dir.clone(),
                        reason,
                    });
                    continue;
                }
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| !is_hidden(path) && !is_companion(path))
                .collect();
            files.sort();
            paths.extend(files);
        }
        if report.unreadable.len() == self.dirs.len()
            && let Some(error) = first_error
        {
            return Err(error);
        }
        for path in paths {
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let stamp = (meta.modified().ok(), meta.len());
            {
                let mut state = self.lock();
                if state.seen.get(&path) == Some(&stamp) {
                    continue;
                }
                state.seen.insert(path.clone(), stamp);
                if state.loaded.contains(&path) {
                    let reason = "changed on disk after it was loaded; restart the server to load the new file \
                                  (install plugins as new files, moved into place)"
                        .to_string();
                    tracing::warn!(path = %path.display(), %reason, "plugin file changed");
                    report.skipped.push(Skipped { path, reason });
                    continue;
                }
            }
            // Loading runs the plugin's code: not under the lock, so games
            // of other variants never wait for it.
            match self.admit(&path) {
                Ok(plugin) => {
                    tracing::info!(
                        variant = plugin.name(),
                        version = plugin.version(),
                        api = plugin.api_version(),
                        path = %path.display(),
                        "variant plugin loaded"
                    );
                    report.loaded.push(plugin);
                }
                Err(reason) => {
                    tracing::warn!(path = %path.display(), %reason, "skipped a file in the plugin folder");
                    report.skipped.push(Skipped { path, reason });
                }
            }
        }
        Ok(report)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn admit(&self, path: &Path) -> Result<Arc<Plugin>, String> {
        if !is_library(path) {
            return Err("not a shared library (.so, .dylib or .dll)".into());
        }
        let plugin = match &self.isolation {
            None => load(path),
            Some(settings) => load_isolated(path, settings),
        }
        .map_err(|e| e.to_string())?;
        let mut state = self.lock();
        state.loaded.insert(path.to_path_buf());
        if let Some(existing) = state.by_name.get(plugin.name()) {
            return Err(format!(
                "variant `{}` is already loaded from {} (version {}); a second plugin with the same name is refused",
                plugin.name(),
                existing.path().display(),
                existing.version()
            ));
        }
        let plugin = Arc::new(plugin);
        state
            .by_name
            .insert(plugin.name().to_string(), plugin.clone());
        Ok(plugin)
    }

    /// The plugin of a variant, by name.
    pub fn get(&self, name: &str) -> Option<Arc<Plugin>> {
        self.lock().by_name.get(name).cloned()
    }

    /// All loaded plugins, by name.
    pub fn plugins(&self) -> Vec<Arc<Plugin>> {
        self.lock().by_name.values().cloned().collect()
    }
}

/// A file whose name starts with `.`: a plugin being copied in, or none.
fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.as_encoded_bytes().starts_with(b"."))
}
