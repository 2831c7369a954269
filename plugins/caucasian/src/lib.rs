//! The Caucasian plugin: the rules of `bg-caucasian-rules`, exported
//! through the plugin ABI.

bg_variant_api::export_variant!(bg_caucasian_rules::Caucasian);
