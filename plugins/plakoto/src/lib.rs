//! The Plakoto plugin: the rules of `bg-plakoto-rules`, exported through
//! the plugin ABI.

bg_variant_api::export_variant!(bg_plakoto_rules::Plakoto);
