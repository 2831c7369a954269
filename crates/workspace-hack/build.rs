// Present so that cargo reads this crate's build-dependencies (the features
// the workspace's build scripts share); it does nothing.
fn main() {}
