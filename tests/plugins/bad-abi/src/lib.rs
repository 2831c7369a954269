//! A test plugin from "the future": its descriptor declares the next major
//! ABI version, which the host must refuse, naming both versions, before
//! reading anything past the header.

use bg_variant_api::abi::{ABI_MAJOR, DescriptorHeader};

static HEADER: DescriptorHeader = DescriptorHeader {
    abi_major: ABI_MAJOR + 1,
    abi_minor: 3,
    struct_size: std::mem::size_of::<DescriptorHeader>() as u32,
};

/// The entry point, by hand, as a plugin of another ABI would have it.
///
/// # Safety
/// Called by the plugin host through `dlsym`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bg_variant_entry() -> *const DescriptorHeader {
    &HEADER
}
