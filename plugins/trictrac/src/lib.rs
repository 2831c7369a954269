//! The tric-trac plugin: the rules of `bg-trictrac-rules`, exported through
//! the plugin ABI.

bg_variant_api::export_variant!(bg_trictrac_rules::TricTrac);
