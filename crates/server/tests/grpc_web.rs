//! gRPC-Web on the gRPC port (issue 47, item 1), end to end against a
//! server process: a browser's calls as bytes over HTTP/1.1 (what
//! `@connectrpc/connect-web`'s gRPC-Web transport sends), unary and
//! server streaming, an error with its reason; and CORS: a preflight from
//! a listed origin answered, from another one not.

mod common;

use bg_api::v1 as pb;
use common::*;
use prost::Message;
use tonic_types::StatusExt;

const SITE: &str = "http://play.site.example";

/// A gRPC-Web call: POST with the message in one frame.
fn grpc_web_request(
    addr: &str,
    method: &str,
    message: &impl Message,
    token: Option<&str>,
) -> Vec<u8> {
    let bytes = message.encode_to_vec();
    let mut body = vec![0u8];
    body.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    body.extend_from_slice(&bytes);
    let auth = token.map_or(String::new(), |t| format!("authorization: Bearer {t}\r\n"));
    let mut request = format!(
        "POST /backgammon.v1.GameService/{method} HTTP/1.1\r\nhost: {addr}\r\norigin: {SITE}\r\n\
         content-type: application/grpc-web+proto\r\nx-grpc-web: 1\r\n{auth}\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    request
}

/// The frames of a gRPC-Web answer: its messages, and its trailers.
fn frames(body: &[u8]) -> (Vec<Vec<u8>>, String) {
    let (mut messages, mut trailers, mut rest) = (Vec::new(), String::new(), body);
    while rest.len() >= 5 {
        let len = u32::from_be_bytes(rest[1..5].try_into().unwrap()) as usize;
        let data = rest[5..5 + len].to_vec();
        if rest[0] & 0x80 != 0 {
            trailers.push_str(&String::from_utf8(data).unwrap());
        } else {
            messages.push(data);
        }
        rest = &rest[5 + len..];
    }
    (messages, trailers.to_lowercase())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_browser_calls_the_api_over_grpc_web_on_the_same_port() {
    let fixture = start_with_args(&["--cors-origin", SITE]);
    let addr = host_port(&fixture);
    // Unary: ListVariants, with the CORS headers for the listed origin.
    let (status, headers, body) = http(
        &addr,
        &grpc_web_request(&addr, "ListVariants", &pb::ListVariantsRequest {}, None),
    );
    assert!(status.contains(" 200 "), "{status}");
    assert_eq!(header(&headers, "access-control-allow-origin"), Some(SITE));
    let (messages, trailers) = frames(&body);
    let variants = pb::ListVariantsResponse::decode(messages[0].as_slice()).unwrap();
    assert!(variants.variants.iter().any(|v| v.name == "standard"));
    assert!(trailers.contains("grpc-status:0"), "{trailers}");
    // A match made over gRPC-Web, then read and watched the same way.
    let (_, _, body) = http(
        &addr,
        &grpc_web_request(
            &addr,
            "NewGame",
            &pb::NewGameRequest {
                variant: "standard".into(),
                ..Default::default()
            },
            None,
        ),
    );
    let (messages, _) = frames(&body);
    let made = pb::NewGameResponse::decode(messages[0].as_slice()).unwrap();
    let game = made.game.unwrap();
    // Server streaming: WatchGame from version 0 sends the catch-up.
    let (_, _, body) = http(
        &addr,
        &grpc_web_request(
            &addr,
            "WatchGame",
            &pb::WatchGameRequest {
                game_id: game.game_id.clone(),
                from_version: 0,
                read_mask: None,
            },
            None,
        ),
    );
    let (updates, _) = frames(&body);
    let first = pb::GameUpdate::decode(updates[0].as_slice()).unwrap();
    assert_eq!(first.version, 1, "the catch-up's first update");
    // An error: the status and its reason, in the answer's headers (a
    // gRPC "trailers-only" answer) or its trailers frame.
    let (_, headers, body) = http(
        &addr,
        &grpc_web_request(
            &addr,
            "GetGame",
            &pb::GetGameRequest {
                game_id: uuid::Uuid::new_v4().to_string(),
                read_mask: None,
            },
            None,
        ),
    );
    let (messages, trailers) = frames(&body);
    assert!(messages.is_empty());
    let from_trailers = |name: &str| {
        trailers
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .map(|v| v.trim().to_string())
    };
    let field = |name: &str| {
        header(&headers, name)
            .map(str::to_string)
            .or_else(|| from_trailers(name))
    };
    assert_eq!(
        field("grpc-status").as_deref(),
        Some("5"),
        "NOT_FOUND: {headers:?} {trailers}"
    );
    assert_eq!(
        header(&headers, "access-control-expose-headers")
            .map(|h| h.contains("grpc-status-details-bin")),
        Some(true),
        "a page may read the error's details"
    );
    let details = field("grpc-status-details-bin").expect("the error's details");
    let status =
        tonic::Status::with_details(tonic::Code::NotFound, "", base64_decode(&details).into());
    assert_eq!(
        status.get_details_error_info().unwrap().reason,
        "GAME_NOT_FOUND"
    );
}

/// Base64 as gRPC sends binary headers (standard alphabet, padding
/// optional).
fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(text.trim_end_matches('='))
        .unwrap()
}

#[test]
fn a_cors_preflight_is_answered_for_a_listed_origin_only() {
    let fixture = start_with_args(&["--cors-origin", SITE]);
    let addr = host_port(&fixture);
    let preflight = |origin: &str| {
        let request = format!(
            "OPTIONS /backgammon.v1.GameService/GetGame HTTP/1.1\r\nhost: {addr}\r\norigin: {origin}\r\n\
             access-control-request-method: POST\r\n\
             access-control-request-headers: content-type,x-grpc-web,authorization\r\n\
             connection: close\r\n\r\n"
        );
        http(&addr, request.as_bytes())
    };
    let (_, headers, _) = preflight(SITE);
    assert_eq!(header(&headers, "access-control-allow-origin"), Some(SITE));
    let allowed = header(&headers, "access-control-allow-headers").unwrap_or_default();
    assert!(
        allowed.contains("authorization") && allowed.contains("x-grpc-web"),
        "{allowed}"
    );
    let (_, headers, _) = preflight("http://evil.example");
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        None,
        "{headers:?}"
    );
    // Without --cors-origin: no origin is answered.
    let plain = start_with_args(&[]);
    let addr = host_port(&plain);
    let request = format!(
        "OPTIONS /backgammon.v1.GameService/GetGame HTTP/1.1\r\nhost: {addr}\r\norigin: {SITE}\r\n\
         access-control-request-method: POST\r\nconnection: close\r\n\r\n"
    );
    let (_, headers, _) = http(&addr, request.as_bytes());
    assert_eq!(header(&headers, "access-control-allow-origin"), None);
}

#[test]
fn a_mistyped_cors_origin_stops_the_server_at_startup() {
    let data = tempfile::tempdir().unwrap();
    let plugins = bg_tests::plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let (code, stderr) = refused_start_with(
        data.path(),
        plugins.path(),
        &["--cors-origin", "play.site.example/path"],
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("origin"), "{stderr}");
}

/// Found by the `http` fuzz target: a body whose frame is broken (a gzip
/// body that does not decompress, a frame cut short, a compression flag
/// that is neither 0 nor 1) was INTERNAL; it is the caller's bytes that
/// are not a message: INVALID_ARGUMENT, MALFORMED_REQUEST, as bytes that
/// decode to no message were already.
#[tokio::test(flavor = "multi_thread")]
async fn a_broken_frame_is_a_malformed_request_not_an_internal_error() {
    let fixture = start();
    let addr = host_port(&fixture);
    let (binary, text) = ("application/grpc-web+proto", "application/grpc-web-text");
    let broken: [(&str, &str, &str, &[u8]); 5] = [
        (
            "gzip that is not",
            binary,
            "gzip",
            b"\x01\x00\x00\x00\x05hello",
        ),
        (
            "a frame cut short",
            binary,
            "identity",
            b"\x00\x00\x00\x00\x09\x0a",
        ),
        (
            "compression flag 7",
            binary,
            "identity",
            b"\x07\x00\x00\x00\x00",
        ),
        ("no frame", binary, "identity", b""),
        ("text not base64", text, "identity", b"*not base64*"),
    ];
    for (what, kind, encoding, body) in broken {
        let mut request = format!(
            "POST /backgammon.v1.GameService/GetGame HTTP/1.1\r\nhost: {addr}\r\n\
             content-type: {kind}\r\nx-grpc-web: 1\r\n\
             grpc-encoding: {encoding}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        let (_, headers, answer) = http(&addr, &request);
        let (_, trailers) = frames(&answer);
        let field = |name: &str| {
            header(&headers, name).map(str::to_string).or_else(|| {
                trailers
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("{name}:")))
                    .map(|v| v.trim().to_string())
            })
        };
        assert_eq!(
            field("grpc-status").as_deref(),
            Some("3"),
            "{what}: {headers:?} {trailers}"
        );
        let details = field("grpc-status-details-bin").expect("the error's details");
        let status = tonic::Status::with_details(
            tonic::Code::InvalidArgument,
            "",
            base64_decode(&details).into(),
        );
        assert_eq!(
            status.get_details_error_info().unwrap().reason,
            "MALFORMED_REQUEST",
            "{what}"
        );
    }
}
