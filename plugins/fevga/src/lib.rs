//! The Fevga plugin: the rules of `bg-same-way-rules`, exported through
//! the plugin ABI.

bg_variant_api::export_variant!(bg_same_way_rules::Fevga);
