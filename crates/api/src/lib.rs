//! The public gRPC API, `backgammon.v1`, generated from
//! `proto/backgammon/v1/backgammon.proto`: messages, the client, the
//! server trait, and the encoded descriptor set that server reflection
//! serves; and [`error_chain`], how the server and bgctl write a transport
//! error. This crate owns no other behaviour.

/// Package `backgammon.v1`.
pub mod v1 {
    tonic::include_proto!("backgammon.v1");

    /// The encoded `FileDescriptorSet` of the API, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("backgammon_descriptor");
}

/// An error and its causes on one line, "top: cause: cause" (a transport
/// error's top says only "transport error"; its causes say what: a
/// refused connection, a failed handshake, an unreadable certificate).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}
