//! Opening one plugin file and checking its descriptor.

use std::path::{Path, PathBuf};

use std::io::Read;

use bg_variant_api::abi::{self, DescriptorHeader, VariantDescriptor};

use crate::backend::Backend;
use crate::call::Identity;
use crate::in_process::Calls;
use crate::isolated::{WorkerSettings, Workers};
use crate::plugin::Plugin;

/// Why a file could not be loaded as a plugin.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: could not be copied for loading: {source}")]
    Copy {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a loadable library: {source:?}")]
    Open {
        path: PathBuf,
        source: libloading::Error,
    },
    #[error("{path}: not a variant plugin (no `bg_variant_entry` symbol)")]
    NoEntry { path: PathBuf },
    #[error("{path}: the plugin's entry point returned no descriptor")]
    NoDescriptor { path: PathBuf },
    #[error(
        "{path}: plugin ABI version {plugin_major}.{plugin_minor} is not supported by this host (ABI version {host_major}.{host_minor}); rebuild the plugin against bg-variant-api {host_major}.x"
    )]
    AbiMismatch {
        path: PathBuf,
        plugin_major: u32,
        plugin_minor: u32,
        host_major: u32,
        host_minor: u32,
    },
    #[error("{path}: descriptor is {size} bytes, smaller than ABI {major}.{minor} requires")]
    DescriptorTooSmall {
        path: PathBuf,
        size: u32,
        major: u32,
        minor: u32,
    },
    #[error("{path}: the plugin failed to describe itself: {message}")]
    BadInfo { path: PathBuf, message: String },
    #[error("{path}: the plugin's descriptor lacks the `{function}` function")]
    MissingFunction {
        path: PathBuf,
        function: &'static str,
    },
    #[error(
        "{path}: the plugin was built with another layout of the boundary types (fingerprint {plugin:#x}, host {host:#x}); rebuild it against this bg-variant-api"
    )]
    LayoutMismatch {
        path: PathBuf,
        plugin: u64,
        host: u64,
    },
    #[error(
        "{path}: the plugin was built with panic = \"abort\": one bug in it would stop the server; build it with panic = \"unwind\""
    )]
    AbortsOnPanic { path: PathBuf },
    #[error("{path}: {message}")]
    Worker { path: PathBuf, message: String },
}

/// Loads one plugin file into this process. The library is never
/// unloaded, even when it is refused: unloading a library whose code
/// registered thread-local destructors or ran constructors is undefined
/// behaviour waiting to happen (a thread exiting later would call into
/// unmapped code).
pub fn load(path: &Path) -> Result<Plugin, LoadError> {
    let file = std::fs::File::open(path).map_err(|source| LoadError::Copy {
        path: path.to_path_buf(),
        source,
    })?;
    let (descriptor, calls) = open_plugin(path, file)?;
    let identity = Identity::of(descriptor, calls.has_scoreboard());
    Plugin::new(path.to_path_buf(), identity, Backend::InProcess(calls)).map_err(|e| {
        LoadError::BadInfo {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    })
}

/// Loads one plugin file to run in worker processes (see
/// [`crate::isolated`]): this process never maps the library. The file is
/// read once, here; every worker loads these bytes, so a file replaced
/// later changes nothing until the server restarts.
pub fn load_isolated(path: &Path, settings: &WorkerSettings) -> Result<Plugin, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Copy {
        path: path.to_path_buf(),
        source,
    })?;
    let (workers, identity) =
        Workers::start(path, bytes.into(), settings.clone()).map_err(|message| {
            LoadError::Worker {
                path: path.to_path_buf(),
                message,
            }
        })?;
    Plugin::new(
        path.to_path_buf(),
        identity,
        Backend::Isolated(Box::new(workers)),
    )
    .map_err(|e| LoadError::BadInfo {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Maps the library whose bytes `source` reads (named `path` in errors)
/// and checks its descriptor: the functions to call, and the descriptor.
pub(crate) fn open_plugin(
    path: &Path,
    source: impl Read,
) -> Result<(&'static VariantDescriptor, Calls), LoadError> {
    let path_buf = path.to_path_buf();
    let library = open(path, source)?;
    // Leaked on purpose: plugins live as long as the process.
    let library: &'static libloading::os::unix::Library = Box::leak(Box::new(library));
    // SAFETY: the symbol has the type the ABI defines; a library that
    // exports the name with another type is outside what we can check.
    let entry: abi::EntryFn = unsafe {
        *library
            .get::<abi::EntryFn>(abi::ENTRY_SYMBOL)
            .map_err(|_| LoadError::NoEntry {
                path: path_buf.clone(),
            })?
    };
    // SAFETY: calling the entry point the ABI defines, with no arguments.
    let raw = unsafe { entry() };
    if raw.is_null() {
        return Err(LoadError::NoDescriptor { path: path_buf });
    }
    // Read only the shared header until the version is known.
    // SAFETY: every ABI version starts with this header.
    let header = unsafe { std::ptr::read_unaligned(raw as *const DescriptorHeader) };
    if header.abi_major != abi::ABI_MAJOR {
        return Err(LoadError::AbiMismatch {
            path: path_buf,
            plugin_major: header.abi_major,
            plugin_minor: header.abi_minor,
            host_major: abi::ABI_MAJOR,
            host_minor: abi::ABI_MINOR,
        });
    }
    if (header.struct_size as usize) < abi::MIN_DESCRIPTOR_SIZE {
        return Err(LoadError::DescriptorTooSmall {
            path: path_buf,
            size: header.struct_size,
            major: abi::ABI_MAJOR,
            minor: abi::ABI_MINOR,
        });
    }
    // SAFETY: same major version and a large enough struct: the layout is
    // ours, and every field's type accepts any bit pattern (the function
    // pointers are Options).
    let descriptor: &'static VariantDescriptor = unsafe { &*raw };
    if descriptor.layout != abi::layout_fingerprint() {
        return Err(LoadError::LayoutMismatch {
            path: path_buf,
            plugin: descriptor.layout,
            host: abi::layout_fingerprint(),
        });
    }
    if descriptor.flags & abi::FLAG_PANIC_UNWIND == 0 {
        return Err(LoadError::AbortsOnPanic { path: path_buf });
    }
    let calls =
        Calls::from_descriptor(descriptor).map_err(|function| LoadError::MissingFunction {
            path: path_buf,
            function,
        })?;
    Ok((descriptor, calls))
}

/// Opens a private copy of the library, never the plugin's file itself.
///
/// The loader maps the library's file into memory: had it mapped the file
/// in the plugin folder, an operator overwriting that file in place (as
/// `cp` does) would change the running code under the server, which then
/// crashes. So the bytes are copied first, and the copy is what is loaded:
/// whatever happens to the plugin folder afterwards, the code that runs
/// stays the code that was loaded. (A plugin therefore cannot find
/// libraries beside its file through an `$ORIGIN` run path.)
#[cfg(unix)]
fn open(path: &Path, mut source: impl Read) -> Result<libloading::os::unix::Library, LoadError> {
    #[cfg(target_os = "linux")]
    if let Some(opened) = open_sealed_copy(path, &mut source) {
        return opened;
    }
    open_temporary_copy(path, &mut source)
}

/// On Linux: the copy lives in memory (memfd), sealed against any change,
/// and is opened through `/proc/self/fd`: no file system is written, so a
/// read-only root or a `noexec` /tmp does not matter. None when memfds
/// or /proc are not available here.
#[cfg(target_os = "linux")]
fn open_sealed_copy(
    path: &Path,
    source: &mut impl Read,
) -> Option<Result<libloading::os::unix::Library, LoadError>> {
    use rustix::fs::{MemfdFlags, SealFlags, fcntl_add_seals, memfd_create};
    use std::os::fd::AsRawFd;
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    let memfd = memfd_create("bg-plugin", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING).ok()?;
    let mut copy = std::fs::File::from(memfd);
    let copied = std::io::copy(source, &mut copy).and_then(|_| {
        fcntl_add_seals(
            &copy,
            SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL,
        )
        .map_err(std::io::Error::from)
    });
    if let Err(source) = copied {
        return Some(Err(LoadError::Copy {
            path: path.to_path_buf(),
            source,
        }));
    }
    let by_descriptor = format!("/proc/self/fd/{}", copy.as_raw_fd());
    let library = dlopen(path, Path::new(&by_descriptor));
    if library.is_ok() {
        // Kept open for good, like the library: the loader knows it by its
        // /proc name, and another plugin opened later through the same
        // descriptor number would be taken for this one.
        std::mem::forget(copy);
    }
    Some(library)
}

/// Elsewhere: the copy goes into a fresh temporary folder that only this
/// process may enter (mode 0700), is opened from there, and is deleted at
/// once (the mapping keeps the bytes; no one can reach them any more).
#[cfg(unix)]
fn open_temporary_copy(
    path: &Path,
    source: &mut impl Read,
) -> Result<libloading::os::unix::Library, LoadError> {
    let copy_failed = |source| LoadError::Copy {
        path: path.to_path_buf(),
        source,
    };
    let private = tempfile::Builder::new()
        .prefix("bg-plugin-")
        .tempdir()
        .map_err(copy_failed)?;
    let file_name = path
        .file_name()
        .unwrap_or(std::ffi::OsStr::new("plugin.so"));
    let copy = private.path().join(file_name);
    std::fs::File::create(&copy)
        .and_then(|mut file| std::io::copy(source, &mut file))
        .map_err(copy_failed)?;
    let library = dlopen(path, &copy);
    // The folder and the copy go now (the mapping stays); a failure to
    // remove them leaves a stray temporary folder, nothing worse.
    if let Err(e) = private.close() {
        tracing::warn!(path = %path.display(), error = %e, "removing the private copy of a plugin");
    }
    library
}

/// Loads the library at `copy`; errors name the plugin's own `path`.
#[cfg(unix)]
fn dlopen(path: &Path, copy: &Path) -> Result<libloading::os::unix::Library, LoadError> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading runs the library's initialisers; plugins are trusted
    // code from the operator's plugin folder.
    unsafe { Library::open(Some(copy), RTLD_NOW | RTLD_LOCAL) }.map_err(|source| LoadError::Open {
        path: path.to_path_buf(),
        source,
    })
}
