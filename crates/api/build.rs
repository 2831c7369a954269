//! Compiles proto/backgammon/v1/backgammon.proto with protox (pure Rust,
//! no `protoc` needed), and keeps the descriptor set for server reflection.

use prost::Message;

fn main() {
    let root = "../../proto";
    let file = "../../proto/backgammon/v1/backgammon.proto";
    println!("cargo:rerun-if-changed={file}");
    let descriptors = protox::compile([file], [root]).expect("backgammon.proto compiles");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(
        out.join("backgammon_descriptor.bin"),
        descriptors.encode_to_vec(),
    )
    .expect("write descriptor set");
    tonic_prost_build::configure()
        // A game's options encode in key order: the same game is always
        // the same bytes (a retry's answer, rebuilt, is the first one's).
        .btree_map(".backgammon.v1.Game.options")
        .compile_fds(descriptors)
        .expect("tonic generates the service");
}
