//! What a hostile or careless client can send: bytes that are not a
//! message, requests over the size limit, odd `authorization` headers,
//! game ids in every spelling. Each gets a clear error with a reason (or
//! works), and the server goes on.

mod common;

use bg_api::v1 as pb;
use common::*;
use prost::Message;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

/// A codec that sends and receives raw bytes, whatever they are.
#[derive(Clone, Copy, Default)]
struct Raw;

impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        use bytes::BufMut;
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        use bytes::Buf;
        Ok(Some(src.copy_to_bytes(src.remaining()).to_vec()))
    }
}

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

/// Sends `bytes` as the request of unary `method`.
async fn send_raw(channel: &Channel, method: &str, bytes: Vec<u8>) -> Result<Vec<u8>, Status> {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.unwrap();
    let path = PathAndQuery::try_from(format!("/backgammon.v1.GameService/{method}")).unwrap();
    grpc.unary(Request::new(bytes), path, Raw)
        .await
        .map(|r| r.into_inner())
}

/// Issue 11, item 6: bytes that are not the method's message are the
/// caller's fault: INVALID_ARGUMENT with the reason MALFORMED_REQUEST. Any
/// other error has a reason too, and the game is unchanged.
#[tokio::test]
async fn bytes_that_are_not_a_message_are_invalid_argument_with_a_reason() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let channel = channel(&fixture.server.addr).await;
    let methods = [
        "GetGame",
        "LegalPlays",
        "NewGame",
        "Roll",
        "Move",
        "Double",
        "Resign",
    ];
    for method in methods {
        for bytes in [
            vec![0xff, 0xff, 0xff],
            vec![0x0a, 0xff],
            vec![0x0a, 0x05, 0x41],
        ] {
            let status = send_raw(&channel, method, bytes.clone()).await.unwrap_err();
            assert_eq!(
                (status.code(), reason(&status).as_str()),
                (Code::InvalidArgument, "MALFORMED_REQUEST"),
                "{method} {bytes:02x?}: {status:?}"
            );
        }
    }
    // Random bytes: some happen to decode (unknown fields are skipped);
    // whatever the answer, an error always says why.
    let mut rng = StdRng::seed_from_u64(6);
    for n in 0..300 {
        let method = methods[n % methods.len()];
        let length = rng.random_range(1..40);
        let bytes: Vec<u8> = (0..length).map(|_| rng.random()).collect();
        if let Err(status) = send_raw(&channel, method, bytes.clone()).await {
            assert!(
                status.get_details_error_info().is_some(),
                "{method} {bytes:02x?}: {status:?} has no ErrorInfo"
            );
            assert_ne!(
                status.code(),
                Code::Internal,
                "{method} {bytes:02x?}: {status:?}"
            );
        }
    }
    assert_eq!(get_game(&mut client, &g).await, g.game, "nothing changed");
}

/// A request over the documented 64 KiB limit: OUT_OF_RANGE, with the
/// reason REQUEST_TOO_LARGE; one just under it is judged as usual.
#[tokio::test]
async fn a_request_over_the_size_limit_is_out_of_range_with_a_reason() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let huge = move_request(&g, &"24/23 ".repeat(12_000), "");
    assert!(huge.encoded_len() > 64 * 1024);
    let status = client
        .r#move(with_token(huge, g.to_act_token()))
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::OutOfRange, "REQUEST_TOO_LARGE"),
        "{status:?}"
    );
    assert!(status.message().contains("65536"), "{status:?}");
    let large = move_request(&g, &"24/23 ".repeat(10_000), "");
    assert!(large.encoded_len() < 64 * 1024);
    let status = client
        .r#move(with_token(large, g.to_act_token()))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert_eq!(get_game(&mut client, &g).await, g.game, "nothing changed");
}

#[tokio::test]
async fn an_unknown_method_is_unimplemented_with_a_reason() {
    let fixture = start();
    let channel = channel(&fixture.server.addr).await;
    let status = send_raw(&channel, "Teleport", Vec::new())
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::Unimplemented, "UNKNOWN_METHOD")
    );
}

fn roll_with_header(g: &Game, authorization: &str) -> Request<pb::RollRequest> {
    let mut request = Request::new(pb::RollRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: String::new(),
        dice_seed: String::new(),
    });
    request
        .metadata_mut()
        .insert("authorization", authorization.parse().unwrap());
    request
}

/// Issue 11, item 8: the scheme is case-insensitive (RFC 7235); a scheme
/// without a token is no token at all (UNAUTHENTICATED, as documented).
#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive_and_an_empty_token_is_no_token() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    // The opening roll is thrown: a Roll by the seat on turn shows its
    // dice again (and by the other seat, NOT_YOUR_TURN): the answer shows
    // the token was taken as that seat's.
    let token = g.to_act_token();
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let shown = client
            .roll(roll_with_header(&g, &format!("{scheme} {token}")))
            .await
            .unwrap_or_else(|s| panic!("{scheme}: {s:?}"))
            .into_inner();
        assert_eq!(shown, g.game, "{scheme}");
    }
    for header in ["Bearer ", "Bearer    ", "bearer", "Basic abc", "Bearer"] {
        let status = client.roll(roll_with_header(&g, header)).await.unwrap_err();
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::Unauthenticated, "TOKEN_MISSING"),
            "{header:?}"
        );
    }
}

/// Issue 11, item 8: every spelling of a game's UUID names that game, in
/// reads and in actions; a retry spelled otherwise is the same request.
#[tokio::test]
async fn a_game_id_in_any_spelling_of_its_uuid_names_the_game() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let id = g.id();
    let spellings = [
        id.to_uppercase(),
        id.replace('-', ""),
        format!("{{{id}}}"),
        format!("urn:uuid:{id}"),
    ];
    for spelled in &spellings {
        let game = client
            .get_game(pb::GetGameRequest {
                read_mask: None,
                game_id: spelled.clone(),
            })
            .await
            .unwrap_or_else(|s| panic!("{spelled}: {s:?}"))
            .into_inner();
        assert_eq!(game, g.game, "{spelled}");
    }
    let play = g.game.legal_plays[0].notation.clone();
    let mut request = move_request(&g, &play, "spelled");
    request.game_id = spellings[0].clone();
    let moved = client
        .r#move(with_token(request.clone(), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((moved.game_id.as_str(), moved.version), (id.as_str(), 2));
    request.game_id = spellings[3].clone();
    let retried = client
        .r#move(with_token(request, g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(retried, moved, "the retry is answered as first");
    let status = client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: format!("{id}x"),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
}

/// A request id is stored with its answer: one too long, or with control
/// characters, is refused before anything is stored, on actions and on
/// NewGame alike, and the game has not moved.
#[tokio::test]
async fn a_request_id_too_long_or_with_control_characters_is_refused() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    for bad in [
        "x".repeat(129),
        "nul\0inside".to_string(),
        "line\nbreak".into(),
    ] {
        let refused = client.roll(roll(&g, &bad)).await.unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
        let field = refused
            .get_details_error_info()
            .and_then(|i| i.metadata.get("field").cloned());
        assert_eq!(field.as_deref(), Some("request_id"));
        let refused = client
            .new_game(pb::NewGameRequest {
                variant: "standard".into(),
                request_id: format!("{bad}-0123456789abcdef"),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    }
    assert_eq!(get_game(&mut client, &g).await, g.game);
    // The longest accepted is 128 bytes (the opening roll is thrown
    // already: a Roll now is answered with the game as it is).
    let answered = client.roll(roll(&g, &"y".repeat(128))).await.unwrap();
    assert_eq!(answered.into_inner(), g.game);
}

/// Issue 34: two `authorization` headers are refused, whichever of them
/// is the seat's, and nothing is applied.
#[tokio::test]
async fn two_authorization_headers_are_refused_whatever_their_order() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let token = g.to_act_token();
    let other = g.tokens.iter().find(|t| *t != token).unwrap().clone();
    for pair in [
        [token.to_string(), other.clone()],
        [other, token.to_string()],
    ] {
        let play = g.game.legal_plays[0].notation.clone();
        let mut request = Request::new(move_request(&g, &play, ""));
        for t in &pair {
            request
                .metadata_mut()
                .append("authorization", format!("Bearer {t}").parse().unwrap());
        }
        let status = client.r#move(request).await.unwrap_err();
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::Unauthenticated, "TOKEN_AMBIGUOUS"),
            "{status:?}"
        );
    }
    assert_eq!(get_game(&mut client, &g).await, g.game, "nothing changed");
}

/// Issue 34: requests compressed as gRPC clients compress them (gzip,
/// deflate, zstd) are taken; another compression is refused with a
/// reason that says so, not as an unknown method.
#[tokio::test]
async fn compressed_requests_are_taken_and_an_unknown_compression_is_named() {
    use tonic::codec::CompressionEncoding;
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    for encoding in [
        CompressionEncoding::Gzip,
        CompressionEncoding::Deflate,
        CompressionEncoding::Zstd,
    ] {
        let mut compressed = client.clone().send_compressed(encoding);
        let read = compressed
            .get_game(pb::GetGameRequest {
                game_id: g.id(),
                read_mask: None,
            })
            .await
            .unwrap_or_else(|s| panic!("{encoding:?}: {s:?}"))
            .into_inner();
        assert_eq!(read, g.game, "{encoding:?}");
    }
    // An action, compressed, is applied.
    let play = g.game.legal_plays[0].notation.clone();
    g.game = client
        .clone()
        .send_compressed(CompressionEncoding::Gzip)
        .r#move(with_token(move_request(&g, &play, "gz"), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(g.game.version, 2);

    // A compression the server does not know: the raw bytes, labelled so.
    let mut grpc = tonic::client::Grpc::new(channel(&fixture.server.addr).await);
    grpc.ready().await.unwrap();
    let mut request = Request::new(
        pb::GetGameRequest {
            game_id: g.id(),
            read_mask: None,
        }
        .encode_to_vec(),
    );
    request
        .metadata_mut()
        .insert("grpc-encoding", "snappy".parse().unwrap());
    let path = PathAndQuery::from_static("/backgammon.v1.GameService/GetGame");
    let status = grpc.unary(request, path, Raw).await.unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::Unimplemented, "UNSUPPORTED_COMPRESSION"),
        "{status:?}"
    );
    assert!(status.message().contains("gzip"), "{status:?}");
}

/// Issue 34: an error quotes at most a short prefix of a bad input, so
/// that a long one cannot make the trailers grow past what clients take
/// (gRPC's C core accepts 16 KiB).
#[tokio::test]
async fn an_error_quotes_a_short_prefix_of_a_long_bad_input() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let long = "z".repeat(7_000);
    let mut refusals = Vec::new();
    refusals.push(
        client
            .get_game(pb::GetGameRequest {
                game_id: long.clone(),
                read_mask: None,
            })
            .await
            .unwrap_err(),
    );
    refusals.push(
        client
            .get_game(pb::GetGameRequest {
                game_id: g.id(),
                read_mask: Some(prost_types::FieldMask {
                    paths: vec!["*".into(), long.clone()],
                }),
            })
            .await
            .unwrap_err(),
    );
    refusals.push(
        client
            .new_game(pb::NewGameRequest {
                variant: long.clone(),
                ..Default::default()
            })
            .await
            .unwrap_err(),
    );
    let play = move_request(&g, &"24/23 ".repeat(1_200), "");
    refusals.push(
        client
            .r#move(with_token(play, g.to_act_token()))
            .await
            .unwrap_err(),
    );
    for status in refusals {
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(
            status.message().len() <= 1100 && status.details().len() <= 1600,
            "message {} bytes, details {} bytes: {:?}",
            status.message().len(),
            status.details().len(),
            &status.message()[..200.min(status.message().len())]
        );
    }
    assert_eq!(get_game(&mut client, &g).await, g.game, "nothing changed");
}

/// Issue 34: a NewGame request id answers a retry with both seat tokens,
/// so ids nobody would draw at random are refused and create nothing;
/// random ones (UUIDs of version 4 or 7, 16 random characters) are taken.
#[tokio::test]
async fn a_new_game_request_id_that_cannot_be_random_is_refused() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let request = |id: &str| pb::NewGameRequest {
        variant: "standard".into(),
        request_id: id.into(),
        ..Default::default()
    };
    for guessable in [
        "0000000000000000",
        "abababababababababab",
        "00000000-0000-0000-0000-000000000000",
        "c232ab00-9414-11ec-b3c8-9f6bdeced846",
        "short-id",
    ] {
        let refused = client.new_game(request(guessable)).await.unwrap_err();
        assert_eq!(
            refused.code(),
            Code::InvalidArgument,
            "{guessable}: {refused:?}"
        );
        let info = refused.get_details_error_info().unwrap();
        assert_eq!(
            info.metadata.get("field").map(String::as_str),
            Some("request_id")
        );
    }
    for random in [
        uuid::Uuid::new_v4().to_string(),
        uuid::Uuid::now_v7().to_string(),
        uuid::Uuid::new_v4().simple().to_string()[..16].to_string(),
    ] {
        let first = client
            .new_game(request(&random))
            .await
            .unwrap()
            .into_inner();
        let again = client
            .new_game(request(&random))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(first, again, "{random}");
    }
}

/// Issue 34: a request id is its seat's own in its game: the other seat
/// may send the same id for its own action, which is applied (not
/// answered as the first seat's), and each seat's retry is answered as
/// its own first.
#[tokio::test]
async fn the_same_request_id_from_the_other_seat_is_another_request() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    let play = g.game.legal_plays[0].notation.clone();
    let first = client
        .r#move(with_token(
            move_request(&g, &play, "same-id"),
            g.to_act_token(),
        ))
        .await
        .unwrap()
        .into_inner();
    g.game = first.clone();
    // The other seat is to roll now; it sends the same id.
    let rolled = client.roll(roll(&g, "same-id")).await.unwrap().into_inner();
    assert_eq!(rolled.version, first.version + 1, "applied, not a replay");
    // The first seat's retry is still its own first answer.
    let mut retry = move_request(&g, &play, "same-id");
    retry.expected_version = first.version - 1;
    let token = g
        .tokens
        .iter()
        .find(|t| *t != g.to_act_token())
        .unwrap()
        .clone();
    let again = client
        .r#move(with_token(retry, &token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again, first);
}

/// Issue 34: metadata is limited by HTTP/2 itself (16 KiB, as docs/operating.md
/// says): a call with more is refused before the service sees it, the
/// server goes on, and a call with less is served.
#[tokio::test]
async fn metadata_over_16_kib_is_refused_and_under_it_is_served() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let read = |size: usize| {
        let mut request = Request::new(pb::GetGameRequest {
            game_id: g.id(),
            read_mask: None,
        });
        request
            .metadata_mut()
            .insert("x-padding", "p".repeat(size).parse().unwrap());
        request
    };
    assert!(client.get_game(read(8 * 1024)).await.is_ok());
    let refused = client.get_game(read(20 * 1024)).await;
    assert!(refused.is_err(), "{refused:?}");
    let mut fresh = connect(&fixture.server.addr).await;
    assert_eq!(get_game(&mut fresh, &g).await, g.game, "the server goes on");
}
