//! The public gRPC API, `backgammon.v1`, generated from
//! `proto/backgammon/v1/backgammon.proto`: messages, the client, the
//! server trait, and the encoded descriptor set that server reflection
//! serves. This crate owns no behaviour.

/// Package `backgammon.v1`.
pub mod v1 {
    tonic::include_proto!("backgammon.v1");

    /// The encoded `FileDescriptorSet` of the API, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("backgammon_descriptor");
}
