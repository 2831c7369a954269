//! The standard backgammon plugin: the rules of `bg-standard-rules`,
//! exported through the plugin ABI. This crate holds nothing else, so
//! every plugin file contains exactly one entry point.

bg_variant_api::export_variant!(bg_standard_rules::Standard);
