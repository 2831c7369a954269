//! Compiles proto/variant/v1/variant.proto with protox (pure Rust), so
//! building needs no `protoc` on the machine.

fn main() {
    let root = "../../proto";
    let file = "../../proto/variant/v1/variant.proto";
    println!("cargo:rerun-if-changed={file}");
    let descriptors = protox::compile([file], [root]).expect("variant.proto compiles");
    prost_build::Config::new()
        .compile_fds(descriptors)
        .expect("prost generates the variant messages");
}
