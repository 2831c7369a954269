//! `bgctl` as a client of a running server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bg_api::v1 as pb;
use bg_api::v1::game_service_client::GameServiceClient;
use bg_engine::{Geometry, Seat};
use serde::{Deserialize, Serialize};
use tonic::Request;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic_types::StatusExt;

pub type Client = GameServiceClient<Channel>;

/// How bgctl reaches servers: plain TCP (the default, for local use), or
/// TLS, checking the server's certificate against a CA file (or, for an
/// `https://` address without one, the system's roots) and presenting a
/// client certificate to a server that asks for one.
#[derive(Clone, Debug, Default)]
pub struct Transport {
    tls: Option<ClientTlsConfig>,
}

/// The TLS options as given on the command line.
#[derive(Clone, Debug, Default)]
pub struct TlsOptions {
    pub ca: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub domain: Option<String>,
}

impl Transport {
    /// TLS when any option asks for it or the address says `https://`.
    pub fn new(options: &TlsOptions, addr: &str) -> Result<Transport> {
        let https = addr.contains("https://");
        let asked = options.ca.is_some()
            || options.cert.is_some()
            || options.key.is_some()
            || options.domain.is_some();
        if !https && !asked {
            return Ok(Transport::default());
        }
        if addr.contains("http://") {
            bail!("{addr} says http:// but TLS options are given: write https:// or host:port");
        }
        let read = |path: &Path| {
            std::fs::read(path).with_context(|| format!("reading {}", path.display()))
        };
        let mut tls = ClientTlsConfig::new();
        tls = match &options.ca {
            Some(ca) => tls.ca_certificate(Certificate::from_pem(read(ca)?)),
            None => tls.with_native_roots(),
        };
        if let Some(domain) = &options.domain {
            tls = tls.domain_name(domain.clone());
        }
        match (&options.cert, &options.key) {
            (Some(cert), Some(key)) => {
                tls = tls.identity(Identity::from_pem(read(cert)?, read(key)?));
            }
            (None, None) => {}
            _ => bail!("--tls-cert and --tls-key go together"),
        }
        Ok(Transport { tls: Some(tls) })
    }

    /// The URL of an address as the server prints it (`127.0.0.1:50051`)
    /// or written as one (`http://...`, `https://...`): without a scheme,
    /// `https://` with TLS and `http://` without.
    pub fn url(&self, addr: &str) -> String {
        if addr.contains("://") {
            addr.to_string()
        } else if self.tls.is_some() {
            format!("https://{addr}")
        } else {
            format!("http://{addr}")
        }
    }

    /// An endpoint for `addr`, with TLS if this transport has it.
    pub fn endpoint(&self, addr: &str) -> Result<Endpoint> {
        let endpoint = Endpoint::from_shared(self.url(addr))
            .with_context(|| format!("{addr:?} is not a server address (host:port)"))?;
        match &self.tls {
            Some(tls) => endpoint
                .tls_config(tls.clone())
                .with_context(|| format!("TLS settings for {addr}")),
            None => Ok(endpoint),
        }
    }
}

pub async fn connect(transport: &Transport, addr: &str) -> Result<Client> {
    let channel = transport
        .endpoint(addr)?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .connect()
        .await
        .map_err(|e| anyhow::anyhow!("connecting to {addr}: {}", bg_api::error_chain(&e)))?;
    // A long match's export can pass gRPC's 4 MiB default.
    Ok(GameServiceClient::new(channel).max_decoding_message_size(256 << 20))
}

/// Seat tokens kept between invocations, so two terminals can play one
/// game: `{ game_id: { "white": token, "black": token, "commitment":
/// hex, "white_seed": text, "black_seed": text } }` (for `verify`: the
/// commitment of a match's verifiable dice, and the seeds given through
/// bgctl).
#[derive(Default, Serialize, Deserialize)]
pub struct Tokens(BTreeMap<String, BTreeMap<String, String>>);

impl Tokens {
    pub fn default_path() -> PathBuf {
        std::env::var_os("BGCTL_TOKENS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let home = std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| PathBuf::from("."));
                home.join(".bgctl-tokens.json")
            })
    }

    pub fn load(path: &Path) -> Result<Tokens> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Tokens::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        use std::io::Write;
        let tmp = path.with_extension("tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        // The tokens are secrets: the file is the user's alone from the
        // moment it exists.
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options
            .open(&tmp)
            .with_context(|| format!("writing {}", tmp.display()))?;
        file.write_all(serde_json::to_string_pretty(self)?.as_bytes())?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
        }
        std::fs::rename(&tmp, path)?;
        Ok(())
    }

    pub fn insert(&mut self, game_id: &str, white: &str, black: &str) {
        let seats = self.0.entry(game_id.to_string()).or_default();
        seats.insert("white".into(), white.into());
        seats.insert("black".into(), black.into());
    }

    /// The whole id of the game `id` names: itself when the file holds it,
    /// else the one game of the file whose id starts or ends with it (ids
    /// begin with their creation time, so their ends tell games apart
    /// best). `None` when no game of the file does; an error when several
    /// do.
    pub fn resolve(&self, id: &str) -> Result<Option<String>> {
        if id.is_empty() || self.0.contains_key(id) {
            return Ok(Some(id.to_string()));
        }
        let matching: Vec<&String> = self
            .0
            .keys()
            .filter(|k| k.starts_with(id) || k.ends_with(id))
            .collect();
        match matching.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some((*one).clone())),
            several => bail!(
                "{id} is part of {} game ids in the tokens file: give more of one (e.g. {})",
                several.len(),
                several
                    .iter()
                    .take(3)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The commitment to the server seed `bgctl new` saw, for `verify`.
    pub fn set_commitment(&mut self, game_id: &str, commitment: &str) {
        let game = self.0.entry(game_id.to_string()).or_default();
        game.insert("commitment".into(), commitment.into());
    }

    pub fn commitment(&self, game_id: &str) -> Option<String> {
        self.0.get(game_id)?.get("commitment").cloned()
    }

    /// The seed `seat` gave for the verifiable dice through bgctl.
    pub fn set_seed(&mut self, game_id: &str, seat: &str, seed: &str) {
        let game = self.0.entry(game_id.to_string()).or_default();
        game.insert(format!("{seat}_seed"), seed.into());
    }

    pub fn seed(&self, game_id: &str, seat: &str) -> Option<String> {
        self.0.get(game_id)?.get(&format!("{seat}_seed")).cloned()
    }

    pub fn get(&self, game_id: &str, seat: &str) -> Result<String> {
        let token = self
            .0
            .get(game_id)
            .and_then(|s| s.get(seat))
            .cloned()
            .with_context(|| {
                format!("no {seat} token for game {game_id} in the tokens file (see --tokens)")
            })?;
        if token.is_empty() {
            bail!("{seat} is played by the service in game {game_id}: it has no token");
        }
        Ok(token)
    }
}

/// A request carrying a seat token.
pub fn authorized<T>(message: T, token: &str) -> Result<Request<T>> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse()?);
    Ok(request)
}

/// A readable error: the status message and its stable reason.
pub fn explain(status: tonic::Status) -> anyhow::Error {
    match status.get_details_error_info() {
        Some(info) => anyhow::anyhow!(
            "{} ({}: {:?})",
            status.message(),
            info.reason,
            status.code()
        ),
        None => match std::error::Error::source(&status) {
            // The connection failed under the call (a refused TLS
            // handshake, a plain client on a TLS port): say what failed.
            Some(source) => anyhow::anyhow!(
                "{} ({:?}): {}{}",
                status.message(),
                status.code(),
                bg_api::error_chain(source),
                transport_hint(source)
            ),
            None => anyhow::anyhow!("{} ({:?})", status.message(), status.code()),
        },
    }
}

/// A hint for a connection that failed under a call: a refused handshake
/// or a transport mismatch, which the client sees only as a closed
/// connection (which one depends on timing, so the hint names both).
fn transport_hint(source: &dyn std::error::Error) -> &'static str {
    let text = bg_api::error_chain(source);
    if text.contains("CertificateRequired") {
        " (the server asks for a client certificate: --tls-cert and --tls-key)"
    } else if [
        "broken pipe",
        "reset by peer",
        "connection closed",
        "canceled",
        "frame with invalid size",
    ]
    .iter()
    .any(|sign| text.contains(sign))
    {
        " (the server closed the connection: does it speak TLS (--tls-ca, or an https:// address), or ask for a client certificate (--tls-cert and --tls-key)?)"
    } else {
        ""
    }
}

pub fn seat_name(seat: i32) -> &'static str {
    match pb::Seat::try_from(seat) {
        Ok(pb::Seat::White) => "white",
        Ok(pb::Seat::Black) => "black",
        _ => "-",
    }
}

fn phase_name(phase: i32) -> &'static str {
    match pb::Phase::try_from(phase) {
        Ok(pb::Phase::Roll) => "roll",
        Ok(pb::Phase::Move) => "move",
        Ok(pb::Phase::CubeOffered) => "cube offered",
        Ok(pb::Phase::ResignationOffered) => "resignation offered",
        Ok(pb::Phase::Decision) => "decision",
        Ok(pb::Phase::MatchOver) => "match over",
        _ => "?",
    }
}

/// The board and the state of play, for a terminal.
pub fn render(game: &pb::Game) -> String {
    render_after(None, game)
}

/// The game after an action, its last action told with the board before
/// it (`before`) when the caller has it, so that hits are marked.
pub fn render_after(before: Option<&pb::Board>, game: &pb::Game) -> String {
    let mut out = String::new();
    let cell = |v: i32| match v {
        0 => "  . ".to_string(),
        v if v > 0 => format!("{v:>2}X "),
        v => format!("{:>2}O ", -v),
    };
    let points = game
        .board
        .as_ref()
        .map(|b| b.points.clone())
        .unwrap_or_default();
    let at = |p: usize| points.get(p - 1).copied().unwrap_or(0);
    out.push_str(&format!(
        "game {}  {} {}  version {}  game #{}\n",
        game.game_id, game.variant, game.variant_version, game.version, game.game_number
    ));
    out.push_str(" 13  14  15  16  17  18 | 19  20  21  22  23  24\n");
    let top: String = (13..=18).map(|p| cell(at(p))).collect::<String>()
        + "|"
        + &(19..=24).map(|p| cell(at(p))).collect::<String>();
    out.push_str(&top);
    out.push('\n');
    let bottom: String = (7..=12).rev().map(|p| cell(at(p))).collect::<String>()
        + "|"
        + &(1..=6).rev().map(|p| cell(at(p))).collect::<String>();
    out.push_str(&bottom);
    out.push('\n');
    out.push_str(" 12  11  10   9   8   7 |  6   5   4   3   2   1\n");
    if let Some(b) = &game.board {
        let same_way = game.geometry() == pb::Geometry::SameWay;
        let black_moves = if same_way {
            // Both the same way round: black from white's 12 down to 1,
            // then from 24 down to 13.
            "O = black (moves 12 -> 1, then 24 -> 13: the same way round)"
        } else {
            "O = black (moves 1 -> 24)"
        };
        out.push_str(&format!("X = white (moves 24 -> 1)   {black_moves}\n"));
        // Nothing is hit the same way round: no bar to show.
        if !same_way {
            out.push_str(&format!("bar: X {} O {}   ", b.white_bar, b.black_bar));
        }
        out.push_str(&format!("off: X {} O {}\n", b.white_off, b.black_off));
        for pin in &b.pins {
            out.push_str(&format!(
                "pinned: a {} checker on white's point {}\n",
                seat_name(pin.pinned),
                pin.point
            ));
        }
    }
    for bot in &game.bots {
        out.push_str(&format!(
            "{} is played by the service's computer player ({})\n",
            seat_name(bot.seat),
            if bot.level.is_empty() {
                "its strongest level"
            } else {
                &bot.level
            }
        ));
    }
    if game.variant == "trictrac" {
        out.push_str(
            "tric-trac: white's talon is its 24, black's its 1 (white's numbering); corners: white's 13, black's 12\n",
        );
    }
    if let Some(board) = &game.scoreboard {
        out.push_str(&render_scoreboard(board));
    }
    let score = game.score.unwrap_or_default();
    let cube = game.cube.unwrap_or_default();
    let cube = match (cube.in_play, seat_name(cube.owner)) {
        (false, _) if cube.value == 1 => "none in this game".to_string(),
        (_, "-") => format!("{} (centred)", cube.value),
        (_, owner) => format!("{} ({owner})", cube.value),
    };
    out.push_str(&format!(
        "score: white {} black {}   cube: {cube}\n",
        score.white, score.black,
    ));
    out.push_str(&format!(
        "turn: {}   phase: {}   to act: {}",
        seat_name(game.turn),
        phase_name(game.phase),
        seat_name(game.to_act)
    ));
    if let Some(d) = game.dice {
        out.push_str(&format!("   dice: {}-{}", d.die1, d.die2));
    }
    out.push('\n');
    if !game.last_events.is_empty() {
        let boards = before.zip(game.board.as_ref());
        out.push_str(&format!(
            "last action: {}\n",
            crate::words::describe_action(&game.last_events, boards)
        ));
    }
    if !game.position_id.is_empty() {
        out.push_str(&format!("position id: {}\n", game.position_id));
    }
    if !game.match_id.is_empty() {
        out.push_str(&format!(
            "match id: {}   gnubg id: {}:{}\n",
            game.match_id, game.position_id, game.match_id
        ));
    }
    if !game.xgid.is_empty() {
        out.push_str(&format!("xgid: {}\n", game.xgid));
    }
    if let Some(clock) = &game.clock {
        out.push_str(&render_clock(clock, std::time::SystemTime::now()));
    }
    if let Some(v) = &game.verifiable_dice {
        out.push_str(&render_verifiable_dice(v, &game.game_id));
    }
    if let Some(d) = &game.decision {
        out.push_str(&format!(
            "decision for {}: {} [{}]\n",
            seat_name(d.seat),
            d.prompt,
            d.choices.join(" | ")
        ));
    }
    if !game.legal_plays.is_empty() {
        let plays: Vec<&str> = game
            .legal_plays
            .iter()
            .map(|p| p.notation.as_str())
            .collect();
        out.push_str(&format!(
            "legal plays ({}): {}\n",
            plays.len(),
            plays.join(", ")
        ));
    }
    if let Some(r) = game.results.last() {
        out.push_str(&format!(
            "last game: {} won {} point(s) ({}, {})\n",
            seat_name(r.winner),
            r.points,
            r.kind,
            r.reason
        ));
    }
    if game.phase == pb::Phase::MatchOver as i32 {
        if game.match_winner == pb::Seat::Unspecified as i32 {
            out.push_str("match over: no winner (the score is tied)\n");
        } else {
            out.push_str(&format!(
                "match over: {} wins\n",
                seat_name(game.match_winner)
            ));
        }
    }
    out
}

/// A clock setting as a tournament director writes it (`bgctl new
/// --clock`): `+`-joined parts, each a duration (`30s`, `10m`, `2h`,
/// `1d`, or a sum such as `1m30s`) that is a reserve alone, per match
/// point with `/point`, a cap on a turn with `/turn`, and after a `+`, a
/// delay, or with `/move`, an increment (Fischer): `2m/point+12s` is
/// USBGF's clock, `5m+2s/move` a Fischer one, `1d/turn` days per move.
pub fn parse_clock(text: &str) -> Result<pb::ClockSettings, String> {
    let mut clock = pb::ClockSettings::default();
    for (n, part) in text.split('+').enumerate() {
        if n == 0 && part.is_empty() && text.len() > 1 {
            // No reserve: `+12s` is a delay alone (which the server
            // refuses, saying why).
            continue;
        }
        let (amount, unit) = part.split_once('/').unwrap_or((part, ""));
        let ms = duration_ms(amount)
            .ok_or_else(|| format!("{part:?} is not a duration (as 30s, 10m, 2h, 1d, or 1m30s)"))?;
        let slot = match (n, unit) {
            (_, "point") => &mut clock.reserve_per_point_ms,
            (_, "turn") => &mut clock.turn_limit_ms,
            (_, "move") => &mut clock.increment_ms,
            (0, "") => &mut clock.reserve_ms,
            (_, "") => &mut clock.delay_ms,
            (_, other) => return Err(format!("/{other}: write /point, /turn or /move")),
        };
        *slot += ms;
    }
    Ok(clock)
}

/// `1m30s`, `12s`, `2h`, `1d` in milliseconds.
fn duration_ms(text: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1_000,
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => 86_400_000,
            _ => return None,
        };
        total = total.checked_add(digits.parse::<u64>().ok()?.checked_mul(unit)?)?;
        digits.clear();
    }
    (digits.is_empty() && !text.is_empty()).then_some(total)
}

/// Milliseconds as a clock shows them: `1:05:07`, `13:45`, `0:09.5`.
fn clock_time(ms: u64) -> String {
    let seconds = ms / 1000;
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else if seconds < 10 {
        format!("{m}:{s:02}.{}", ms % 1000 / 100)
    } else {
        format!("{m}:{s:02}")
    }
}

/// Both clocks under the board, as of `now`: the running seat's reserve
/// less what its turn has cost since the answer (`as_of`) once its delay
/// is spent, and the delay left.
fn render_clock(clock: &pb::Clock, now: std::time::SystemTime) -> String {
    let ms_of = |t: &prost_types::Timestamp| {
        (t.seconds.max(0) as u64) * 1000 + (t.nanos.max(0) as u64) / 1_000_000
    };
    let now = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut shown = [clock.white_ms, clock.black_ms];
    let mut note = String::new();
    if let (Some(as_of), Some(deadline)) = (&clock.as_of, &clock.deadline) {
        let (as_of, deadline) = (ms_of(as_of), ms_of(deadline));
        let since = now.saturating_sub(as_of);
        let delay_left = clock.delay_left_ms.saturating_sub(since);
        let running = if clock.running == pb::Seat::White as i32 {
            0
        } else {
            1
        };
        shown[running] = shown[running]
            .saturating_sub(since.saturating_sub(clock.delay_left_ms))
            .min(deadline.saturating_sub(now));
        note = format!(", {}'s time runs", seat_name(clock.running));
        if delay_left > 0 {
            note.push_str(&format!(" (delay {} left)", clock_time(delay_left)));
        }
    }
    format!(
        "clock: white {}, black {}{note}\n",
        clock_time(shown[0]),
        clock_time(shown[1])
    )
}

/// A match's verifiable dice: the commitment, the seats' seeds, and the
/// server seed once revealed.
fn render_verifiable_dice(v: &pb::VerifiableDice, game_id: &str) -> String {
    let seed = |seed: &str, from: u64| match (seed, from) {
        ("", _) => "none".to_string(),
        (seed, 0) => format!("{seed:?}"),
        (seed, from) => format!("{seed:?} (from die {from})"),
    };
    let mut out = format!(
        "verifiable dice: {} thrown, commitment {}\n  seeds: white {}, black {}\n",
        v.dice_thrown,
        v.commitment,
        seed(&v.white_seed, v.white_seed_from),
        seed(&v.black_seed, v.black_seed_from)
    );
    if !v.server_seed.is_empty() {
        out.push_str(&format!(
            "  server seed (revealed): {}\n  check every die: bgctl verify {game_id}\n",
            v.server_seed
        ));
    }
    out
}

/// What the variant shows beside the board: tric-trac's tally in its
/// words (points, holes, bredouille, the flag), then any other variant's
/// tallies, counters and marks by their names, and what the last roll
/// scored.
fn render_scoreboard(b: &pb::Scoreboard) -> String {
    let mut out = if b.white.is_some() || b.black.is_some() {
        render_tric_trac_tally(b)
    } else {
        String::new()
    };
    out.push_str(&render_named(b));
    out.push_str(&render_last_roll(b));
    out
}

/// The names the typed view of the scoreboard shows (tric-trac's).
const TYPED_TALLIES: [&str; 6] = [
    "points",
    "holes",
    "bredouille",
    "rolls",
    "raised_stake",
    "flag",
];

/// Tallies, counters and marks by the variant's names, but those shown
/// typed.
fn render_named(b: &pb::Scoreboard) -> String {
    let mut out = String::new();
    for t in b
        .tallies
        .iter()
        .filter(|t| !TYPED_TALLIES.contains(&t.name.as_str()))
    {
        out.push_str(&format!(
            "{}: white {}, black {}\n",
            t.name, t.white, t.black
        ));
    }
    for c in b.counters.iter().filter(|c| c.name != "round") {
        out.push_str(&format!("{}: {}\n", c.name, c.value));
    }
    if !b.markers.is_empty() {
        let marks: Vec<String> = b
            .markers
            .iter()
            .map(|m| format!("{} {} {}", m.name, seat_name(m.seat), m.point))
            .collect();
        out.push_str(&format!("marked: {}\n", marks.join(", ")));
    }
    out
}

/// Tric-trac's tally: points, holes, bredouille, rolls, the relevé, the
/// pavillon and who can still win en grande bredouille.
fn render_tric_trac_tally(b: &pb::Scoreboard) -> String {
    let tally = |name: &str, t: Option<&pb::SeatTally>| {
        let t = t.cloned().unwrap_or_default();
        format!(
            "{name}: {} points{}, {} holes, {} rolls made in the relevé",
            t.points,
            if t.bredouille { " (bredouille)" } else { "" },
            t.holes,
            t.rolls
        )
    };
    let mut out = format!(
        "{}   {}\n",
        tally("white", b.white.as_ref()),
        tally("black", b.black.as_ref())
    );
    let raised: Vec<&str> = b.raised_stake.iter().map(|&s| seat_name(s)).collect();
    out.push_str(&format!(
        "relevé {}   pavillon: {}   grande bredouille possible for: {}\n",
        b.round,
        match seat_name(b.flag) {
            "-" => "nobody",
            holder => holder,
        },
        if raised.is_empty() {
            "nobody".to_string()
        } else {
            raised.join(", ")
        }
    ));
    out
}

/// What the last roll scored, rule by rule.
fn render_last_roll(b: &pb::Scoreboard) -> String {
    let mut out = String::new();
    if !b.last_roll.is_empty() {
        let jans: Vec<String> = b
            .last_roll
            .iter()
            .map(|j| {
                format!(
                    "{} {} ({} way{}) to {}",
                    j.kind,
                    j.points,
                    j.ways,
                    if j.ways == 1 { "" } else { "s" },
                    seat_name(j.beneficiary)
                )
            })
            .collect();
        out.push_str(&format!("last roll scored: {}\n", jans.join(", ")));
    }
    out
}

/// The board of a gnubg Position ID, read with white on roll, for a
/// variant played with `checkers` a side (0: 15) on a board of
/// `geometry`, in the API's format (white's numbering; black's checkers
/// negative).
pub fn board_of_position_id(id: &str, checkers: u8, geometry: Geometry) -> Result<pb::Board> {
    let checkers = if checkers == 0 {
        bg_engine::CHECKERS
    } else {
        checkers
    };
    let board = bg_engine::position_id::decode_for(id, Seat::White, checkers)
        .with_context(|| format!("{id:?} is not a gnubg Position ID"))?;
    let points = (1..=24u8)
        .map(|p| {
            i32::from(board.count(Seat::White, p))
                - i32::from(board.count(Seat::Black, geometry.for_white(Seat::Black, p)))
        })
        .collect();
    Ok(pb::Board {
        points,
        white_bar: u32::from(board.on_bar(Seat::White)),
        black_bar: u32::from(board.on_bar(Seat::Black)),
        white_off: u32::from(board.off(Seat::White)),
        black_off: u32::from(board.off(Seat::Black)),
        pins: Vec::new(),
    })
}

/// Parses `name=value` options.
pub fn parse_options(options: &[String]) -> Result<BTreeMap<String, String>> {
    let mut parsed = BTreeMap::new();
    for o in options {
        let Some((name, value)) = o.split_once('=') else {
            bail!("options are name=value, not {o:?}");
        };
        if let Some(first) = parsed.insert(name.to_string(), value.to_string()) {
            bail!("--option {name} is given twice ({first:?} and {value:?}): give it once");
        }
    }
    Ok(parsed)
}

/// The variant's options and the match settings in effect for a new game:
/// the options given, the variant's defaults for the others.
pub fn in_effect(game: &pb::Game, variants: &[pb::Variant]) -> String {
    let variant = variants.iter().find(|v| v.name == game.variant);
    let mut options: BTreeMap<String, String> = variant
        .map(|v| {
            v.options
                .iter()
                .map(|o| (o.name.clone(), o.default_value.clone()))
                .collect()
        })
        .unwrap_or_default();
    options.extend(game.options.iter().map(|(k, v)| (k.clone(), v.clone())));
    let options: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let s = game.settings.unwrap_or_default();
    let length = match s.match_length {
        0 => "a money session".to_string(),
        n => format!("a match to {n}"),
    };
    let in_play = game.cube.is_none_or(|c| c.in_play);
    let cube = match (s.cube_max, s.cube_unlimited) {
        _ if !in_play => "no cube".to_string(),
        (_, true) => "cube unlimited".to_string(),
        (Some(0), _) => "no cube".to_string(),
        (Some(max), _) => format!("cube up to {max}"),
        (None, _) => "cube".to_string(),
    };
    let resign = if s.resignation == pb::ResignationMode::Offer as i32 {
        "resignations offered (--level, --accept/--decline)"
    } else {
        "a resignation scored by the position"
    };
    format!(
        "options: {}\nsettings: {length}, {cube}, auto-roll {}, {resign}\n",
        if options.is_empty() {
            "none".to_string()
        } else {
            options.join(" ")
        },
        if s.auto_roll == Some(true) {
            "on"
        } else {
            "off"
        }
    )
}

/// The last eight characters of a game id: random in the ids the server
/// makes, a short name for the game in the tokens file.
pub fn id_end(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    chars[chars.len().saturating_sub(8)..].iter().collect()
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[test]
    fn clocks_are_written_as_tournament_directors_write_them() {
        let usbgf = parse_clock("2m/point+12s").unwrap();
        assert_eq!(
            (usbgf.reserve_per_point_ms, usbgf.delay_ms, usbgf.reserve_ms),
            (120_000, 12_000, 0)
        );
        let fischer = parse_clock("5m+2s/move").unwrap();
        assert_eq!((fischer.reserve_ms, fischer.increment_ms), (300_000, 2_000));
        let correspondence = parse_clock("1d/turn").unwrap();
        assert_eq!(correspondence.turn_limit_ms, 86_400_000);
        let sum = parse_clock("1m30s+1m/point").unwrap();
        assert_eq!((sum.reserve_ms, sum.reserve_per_point_ms), (90_000, 60_000));
        assert_eq!(parse_clock("+12s").unwrap().delay_ms, 12_000);
        for bad in ["", "2x", "5m/game", "m", "+", "12"] {
            assert!(parse_clock(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_running_clock_counts_down_after_the_delay() {
        let at = |ms: u64| prost_types::Timestamp {
            seconds: (ms / 1000) as i64,
            nanos: ((ms % 1000) * 1_000_000) as i32,
        };
        // Answered 2 s into black's turn: 10 s of delay left.
        let clock = pb::Clock {
            white_ms: 840_000,
            black_ms: 600_000,
            running: pb::Seat::Black as i32,
            running_since: Some(at(1_000_000)),
            deadline: Some(at(1_000_000 + 12_000 + 600_000)),
            settings: Some(pb::ClockSettings {
                delay_ms: 12_000,
                ..Default::default()
            }),
            delay_left_ms: 10_000,
            as_of: Some(at(1_002_000)),
        };
        let now = |ms: u64| std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        assert_eq!(
            render_clock(&clock, now(1_005_000)),
            "clock: white 14:00, black 10:00, black's time runs (delay 0:07.0 left)\n"
        );
        assert_eq!(
            render_clock(&clock, now(1_072_000)),
            "clock: white 14:00, black 9:00, black's time runs\n"
        );
    }
}

#[cfg(test)]
mod board_tests {
    use super::*;

    /// Long nardy's start: white's head on its 24 (top right), black's on
    /// white's 12 (bottom left), and the direction of each side said.
    #[test]
    fn a_same_way_board_says_each_sides_direction() {
        let mut points = vec![0; 24];
        points[23] = 15;
        points[11] = -15;
        let game = pb::Game {
            variant: "long_nardy".into(),
            board: Some(pb::Board {
                points,
                ..Default::default()
            }),
            geometry: pb::Geometry::SameWay as i32,
            ..Default::default()
        };
        let text = render(&game);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].ends_with("15X "), "{text}");
        assert!(lines[3].starts_with("15O "), "{text}");
        assert!(text.contains("moves 12 -> 1, then 24 -> 13"), "{text}");
        let opposed = render(&pb::Game {
            geometry: pb::Geometry::Opposed as i32,
            ..game
        });
        assert!(opposed.contains("O = black (moves 1 -> 24)"), "{opposed}");
    }
}
