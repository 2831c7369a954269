//! TLS on the gRPC port, with certificates the test makes (rcgen): a
//! client that trusts the server's CA is served; a plain client is not;
//! under `--client-ca` a caller without a certificate, or with one from
//! another CA, is refused at the handshake; bad files stop the server
//! before it opens anything, naming the file; the health check speaks TLS.

mod common;

use std::path::Path;
use std::process::Command;

use bg_api::v1 as pb;
use bg_api::v1::game_service_client::GameServiceClient;
use bg_tests::certs::{Authority, Pem};
use common::*;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

/// A TLS client's settings: trusting `ca`, presenting `identity` if any.
fn client_tls(ca: &Path, identity: Option<&Pem>) -> ClientTlsConfig {
    let mut tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(std::fs::read(ca).unwrap()))
        .domain_name("localhost");
    if let Some(pem) = identity {
        tls = tls.identity(Identity::from_pem(pem.cert_pem(), pem.key_pem()));
    }
    tls
}

/// Lists the variants over a fresh connection: the variant names, or
/// why the connection or the call failed.
async fn list_variants(url: &str, tls: Option<ClientTlsConfig>) -> Result<Vec<String>, String> {
    let mut endpoint = Endpoint::from_shared(url.to_string()).unwrap();
    if let Some(tls) = tls {
        endpoint = endpoint.tls_config(tls).unwrap();
    }
    let call = async {
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| format!("connect: {e:?}"))?;
        let variants = GameServiceClient::new(channel)
            .list_variants(pb::ListVariantsRequest {})
            .await
            .map_err(|status| format!("call: {status:?}"))?;
        Ok(variants
            .into_inner()
            .variants
            .into_iter()
            .map(|v| v.name)
            .collect())
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), call)
        .await
        .unwrap_or_else(|_| Err("no answer in 20 s".to_string()))
}

/// A client of the server at `url` over TLS, trusting `ca` and showing
/// `site`'s certificate.
async fn client_of(
    url: &str,
    ca: &Authority,
    site: &Pem,
) -> GameServiceClient<tonic::transport::Channel> {
    let channel = Endpoint::from_shared(url.to_string())
        .unwrap()
        .tls_config(client_tls(&ca.cert, Some(site)))
        .unwrap()
        .connect()
        .await
        .unwrap();
    GameServiceClient::new(channel)
}

/// A server speaking TLS with `server`'s certificate, asking callers for
/// one signed by `ca`.
fn start_with_client_ca(server: &Pem, ca: &Authority) -> Fixture {
    start_with_args(&[
        "--tls-cert",
        path(&server.cert),
        "--tls-key",
        path(&server.key),
        "--client-ca",
        path(&ca.cert),
    ])
}

/// Runs `backgammond [server_args] healthcheck [check_args]`: its exit code
/// and stderr.
fn healthcheck(listen: &str, server_args: &[&str], check_args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_backgammond"))
        .args(["--listen", listen])
        .args(server_args)
        .arg("healthcheck")
        .args(check_args)
        .env_remove("BACKGAMMON_TLS_CERT")
        .env_remove("BACKGAMMON_TLS_KEY")
        .env_remove("BACKGAMMON_CLIENT_CA")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[tokio::test]
async fn a_client_trusting_the_servers_ca_plays_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Authority::new(dir.path(), "service");
    let server = ca.server("server");
    let fixture = start_with_args(&[
        "--tls-cert",
        path(&server.cert),
        "--tls-key",
        path(&server.key),
    ]);
    let url = format!("https://{}", host_port(&fixture));

    let channel = Endpoint::from_shared(url.clone())
        .unwrap()
        .tls_config(client_tls(&ca.cert, None))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = GameServiceClient::new(channel);
    let game = new_game(
        &mut client,
        pb::MatchSettings {
            match_length: 3,
            ..Default::default()
        },
    )
    .await;
    let play = game.game.legal_plays[0].notation.clone();
    let moved = client
        .r#move(with_token(
            move_request(&game, &play, "tls-move-1"),
            game.to_act_token(),
        ))
        .await
        .expect("a move over TLS")
        .into_inner();
    assert_eq!(moved.version, game.game.version + 1, "{moved:?}");

    // The health check speaks TLS when the server does.
    let listen = host_port(&fixture);
    let tls_args = [
        "--tls-cert",
        path(&server.cert),
        "--tls-key",
        path(&server.key),
    ];
    let (code, stderr) = healthcheck(&listen, &tls_args, &["--ca", path(&ca.cert)]);
    assert_eq!(code, 0, "{stderr}");
    // Checking the server's certificate against itself is not enough for
    // one a CA signed: the check fails, and says why.
    let (code, stderr) = healthcheck(&listen, &tls_args, &[]);
    assert_eq!(code, 1);
    assert!(stderr.starts_with("healthcheck: "), "{stderr}");
    // A plain check of a TLS port fails.
    let (code, stderr) = healthcheck(&listen, &[], &[]);
    assert_eq!(code, 1, "{stderr}");
}

#[tokio::test]
async fn a_plain_client_cannot_talk_to_a_tls_port() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Authority::new(dir.path(), "service");
    let server = ca.server("server");
    let fixture = start_with_args(&[
        "--tls-cert",
        path(&server.cert),
        "--tls-key",
        path(&server.key),
    ]);
    let hp = host_port(&fixture);
    let plain = list_variants(&format!("http://{hp}"), None).await;
    assert!(plain.is_err(), "a plain client was served: {plain:?}");
    // A client trusting another CA does not accept the server either.
    let other = Authority::new(dir.path(), "other");
    let untrusted = list_variants(
        &format!("https://{hp}"),
        Some(client_tls(&other.cert, None)),
    )
    .await;
    assert!(untrusted.is_err(), "{untrusted:?}");
    // The same port serves a client trusting the right CA.
    let served = list_variants(&format!("https://{hp}"), Some(client_tls(&ca.cert, None))).await;
    assert_eq!(served, Ok(vec!["standard".to_string()]));
}

#[tokio::test]
async fn under_client_ca_only_callers_with_a_certificate_it_signed_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Authority::new(dir.path(), "service");
    let server = ca.server("server");
    let player_site = ca.client("player-site");
    let other = Authority::new(dir.path(), "other");
    let stranger = other.client("stranger");
    let fixture = start_with_client_ca(&server, &ca);
    let hp = host_port(&fixture);
    let url = format!("https://{hp}");

    let served = list_variants(&url, Some(client_tls(&ca.cert, Some(&player_site)))).await;
    assert_eq!(served, Ok(vec!["standard".to_string()]));

    let anonymous = list_variants(&url, Some(client_tls(&ca.cert, None))).await;
    assert!(
        anonymous.is_err(),
        "a caller without a certificate was served: {anonymous:?}"
    );
    let foreign = list_variants(&url, Some(client_tls(&ca.cert, Some(&stranger)))).await;
    assert!(
        foreign.is_err(),
        "a certificate from another CA was accepted: {foreign:?}"
    );
    let plain = list_variants(&format!("http://{hp}"), None).await;
    assert!(plain.is_err(), "{plain:?}");

    // The health check needs a client certificate too.
    let tls_args = [
        "--tls-cert",
        path(&server.cert),
        "--tls-key",
        path(&server.key),
        "--client-ca",
        path(&ca.cert),
    ];
    let (code, stderr) = healthcheck(&hp, &tls_args, &["--ca", path(&ca.cert)]);
    assert_eq!(code, 1, "{stderr}");
    let (code, stderr) = healthcheck(
        &hp,
        &tls_args,
        &[
            "--ca",
            path(&ca.cert),
            "--cert",
            path(&player_site.cert),
            "--key",
            path(&player_site.key),
        ],
    );
    assert_eq!(code, 0, "{stderr}");

    // The server is still serving after the refused handshakes.
    let again = list_variants(&url, Some(client_tls(&ca.cert, Some(&player_site)))).await;
    assert_eq!(again, Ok(vec!["standard".to_string()]));
}

#[test]
fn unusable_tls_files_stop_the_server_before_it_opens_anything_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Authority::new(dir.path(), "service");
    let server = ca.server("server");
    let another = ca.server("another");
    let plugins = bg_tests::plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let missing = dir.path().join("missing.key");
    let garbage = dir.path().join("garbage.crt");
    std::fs::write(&garbage, "not a certificate\n").unwrap();

    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec![
                "--tls-cert",
                path(&server.cert),
                "--tls-key",
                path(&missing),
            ],
            format!("reading {}", missing.display()),
        ),
        (
            vec!["--tls-cert", path(&garbage), "--tls-key", path(&server.key)],
            format!("{} holds no PEM CERTIFICATE block", garbage.display()),
        ),
        (
            // A key that is not the certificate's.
            vec![
                "--tls-cert",
                path(&server.cert),
                "--tls-key",
                path(&another.key),
            ],
            "cannot be used".to_string(),
        ),
        (
            vec![
                "--tls-cert",
                path(&server.cert),
                "--tls-key",
                path(&server.key),
                "--client-ca",
                path(&garbage),
            ],
            "--client-ca".to_string(),
        ),
        // Half a configuration is refused by the argument parser.
        (
            vec!["--tls-cert", path(&server.cert)],
            "--tls-key".to_string(),
        ),
        (
            vec!["--client-ca", path(&ca.cert)],
            "--tls-cert".to_string(),
        ),
    ];
    for (args, expected) in cases {
        let data = tempfile::tempdir().unwrap();
        let (code, stderr) = refused_start_with(data.path(), plugins.path(), &args);
        assert_ne!(code, 0, "{args:?}");
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
        // Nothing was created in the data folder.
        let created: Vec<_> = std::fs::read_dir(data.path()).unwrap().collect();
        assert!(created.is_empty(), "{args:?} left {created:?}");
    }
}

#[test]
fn the_log_says_which_transport_the_port_speaks() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Authority::new(dir.path(), "service");
    let server = ca.server("server");
    let plugins = bg_tests::plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let said = |args: &[&str]| -> String {
        let data = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_backgammond"))
            .args(["--listen", "127.0.0.1:0", "--plugin-dir"])
            .arg(plugins.path())
            .arg("--data-dir")
            .arg(data.path())
            .args(args)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut said = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let line = line.unwrap();
            let done = line.contains("listening");
            said.push_str(&line);
            said.push('\n');
            if done {
                break;
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        said
    };
    let plain = said(&[]);
    assert!(plain.contains("gRPC over plain TCP, no TLS"), "{plain}");
    let tls = said(&[
        "--tls-cert",
        path(&server.cert),
        "--tls-key",
        path(&server.key),
        "--client-ca",
        path(&ca.cert),
    ]);
    assert!(tls.contains("gRPC over TLS"), "{tls}");
    assert!(
        tls.contains("client certificate signed by a CA in"),
        "{tls}"
    );
}

#[tokio::test]
async fn a_self_signed_certificate_serves_and_the_health_check_trusts_it_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let server = bg_tests::certs::self_signed_server(dir.path(), "self-signed");
    let tls_args = [
        "--tls-cert",
        path(&server.cert),
        "--tls-key",
        path(&server.key),
    ];
    let fixture = start_with_args(&tls_args);
    let hp = host_port(&fixture);
    let served = list_variants(
        &format!("https://{hp}"),
        Some(client_tls(&server.cert, None)),
    )
    .await;
    assert_eq!(served, Ok(vec!["standard".to_string()]));
    let (code, stderr) = healthcheck(&hp, &tls_args, &[]);
    assert_eq!(code, 0, "{stderr}");
    // Checked against another name, the certificate does not do.
    let (code, stderr) = healthcheck(&hp, &tls_args, &["--domain", "backgammon.example"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("healthcheck: "), "{stderr}");
}

/// Issue 34: a NewGame request id is the certified caller's own: another
/// site sending the same id gets a game of its own (never the first
/// caller's game and tokens), while a retry by the same caller gets its
/// first answer.
#[tokio::test]
async fn a_new_game_request_id_is_scoped_by_the_callers_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Authority::new(dir.path(), "service");
    let server = ca.server("server");
    let site_a = ca.client("site-a");
    let site_b = ca.client("site-b");
    let fixture = start_with_client_ca(&server, &ca);
    let url = format!("https://{}", host_port(&fixture));
    let request = pb::NewGameRequest {
        variant: "standard".into(),
        request_id: uuid::Uuid::new_v4().to_string(),
        ..Default::default()
    };
    let mut a = client_of(&url, &ca, &site_a).await;
    let mut b = client_of(&url, &ca, &site_b).await;
    let first = a.new_game(request.clone()).await.unwrap().into_inner();
    let again = a.new_game(request.clone()).await.unwrap().into_inner();
    assert_eq!(again, first, "the same caller's retry: the first answer");
    let other = b.new_game(request.clone()).await.unwrap().into_inner();
    let (first_game, other_game) = (first.game.unwrap(), other.game.unwrap());
    assert_ne!(other_game.game_id, first_game.game_id, "a game of its own");
    assert_ne!(other.white_token, first.white_token);
    assert_ne!(other.black_token, first.black_token);
}

/// Issue 46: a backend with a client certificate lists and follows the
/// matches created under it, and no other; the operator's token sees
/// them all.
#[tokio::test]
async fn each_certificate_lists_and_follows_only_the_matches_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Authority::new(dir.path(), "service");
    let server = ca.server("server");
    let site_a = ca.client("site-a");
    let site_b = ca.client("site-b");
    let operator_token = "the-operator-token-of-the-tls-test-0123456789";
    let token_file = dir.path().join("operator.token");
    std::fs::write(&token_file, operator_token).unwrap();
    let fixture = start_with_args(&[
        "--tls-cert",
        path(&server.cert),
        "--tls-key",
        path(&server.key),
        "--client-ca",
        path(&ca.cert),
        "--operator-token-file",
        path(&token_file),
    ]);
    let url = format!("https://{}", host_port(&fixture));
    let mut a = client_of(&url, &ca, &site_a).await;
    let mut b = client_of(&url, &ca, &site_b).await;
    let mut made = [Vec::new(), Vec::new()];
    for site in [0, 0, 1] {
        let client = if site == 0 { &mut a } else { &mut b };
        let game = client
            .new_game(pb::NewGameRequest {
                variant: "standard".into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .game
            .unwrap();
        made[site].push(game.game_id);
    }
    let listed = async |client: &mut GameServiceClient<tonic::transport::Channel>,
                        token: Option<&str>| {
        let mut request = tonic::Request::new(pb::ListMatchesRequest::default());
        if let Some(token) = token {
            request
                .metadata_mut()
                .insert("authorization", format!("Bearer {token}").parse().unwrap());
        }
        let page = client.list_matches(request).await.unwrap().into_inner();
        page.matches
            .into_iter()
            .map(|g| g.game_id)
            .collect::<Vec<_>>()
    };
    assert_eq!(listed(&mut a, None).await, made[0]);
    assert_eq!(listed(&mut b, None).await, made[1]);
    assert_eq!(listed(&mut b, Some(operator_token)).await.len(), 3);
    // The feed too: b hears of its own match only.
    let mut feed = b
        .watch_matches(pb::WatchMatchesRequest {
            from_oldest: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let first = tokio::time::timeout(std::time::Duration::from_secs(10), feed.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.game_id, made[1][0]);
    let next = tokio::time::timeout(std::time::Duration::from_millis(600), feed.message()).await;
    assert!(
        !matches!(next, Ok(Ok(Some(ref e))) if e.kind != pb::MatchEventKind::Unspecified as i32),
        "{next:?}"
    );
}
