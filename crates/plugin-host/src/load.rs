//! Opening one plugin file and checking its descriptor.

use std::path::{Path, PathBuf};

use bg_variant_api::abi::{self, DescriptorHeader, VariantDescriptor};

use crate::plugin::Plugin;

/// Why a file could not be loaded as a plugin.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: not a loadable library: {source}")]
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
}

/// Loads one plugin file. The library is never unloaded, even when it is
/// refused (unloading is unsafe with thread-locals and constructors; see
/// architecture.md §3.3).
pub fn load(path: &Path) -> Result<Plugin, LoadError> {
    let path_buf = path.to_path_buf();
    let library = open(path)?;
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
    let header = unsafe { *(raw as *const DescriptorHeader) };
    if header.abi_major != abi::ABI_MAJOR {
        return Err(LoadError::AbiMismatch {
            path: path_buf,
            plugin_major: header.abi_major,
            plugin_minor: header.abi_minor,
            host_major: abi::ABI_MAJOR,
            host_minor: abi::ABI_MINOR,
        });
    }
    if (header.struct_size as usize) < std::mem::size_of::<VariantDescriptor>() {
        return Err(LoadError::DescriptorTooSmall {
            path: path_buf,
            size: header.struct_size,
            major: abi::ABI_MAJOR,
            minor: abi::ABI_MINOR,
        });
    }
    // SAFETY: same major version and a large enough struct: the layout is ours.
    let descriptor: &'static VariantDescriptor = unsafe { &*raw };
    Plugin::new(path_buf.clone(), descriptor).map_err(|e| LoadError::BadInfo {
        path: path_buf,
        message: e.to_string(),
    })
}

#[cfg(unix)]
fn open(path: &Path) -> Result<libloading::os::unix::Library, LoadError> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading runs the library's initialisers; plugins are trusted
    // code from the operator's plugin folder.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(|source| LoadError::Open {
        path: path.to_path_buf(),
        source,
    })
}
