//! Between the API's messages and the engine's types, one module a
//! direction: [`from_api`] reads requests (refusing a bad field by name),
//! [`to_api`] shows the engine's state in answers. A function is named
//! after what it converts (`settings`, `play`, `board`); its module says
//! which way.

pub mod from_api;
pub mod to_api;
