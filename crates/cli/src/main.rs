//! `bgctl`: a client for humans and scripts, and offline tools that load
//! variants through the plugin host exactly as the server does.
//!
//! It owns argument parsing, output formats and the local tokens file;
//! rules come from the plugins, the game flow from the server.

mod bench;
mod client;
mod offline;
mod verify;
mod view;
mod words;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use bg_api::v1 as pb;
use clap::{Parser, Subcommand, ValueEnum};

use client::{TlsOptions, Tokens, Transport, authorized, connect, explain, render, render_after};

#[derive(Parser)]
#[command(
    name = "bgctl",
    version,
    about = "Backgammon service client and offline tools"
)]
struct Cli {
    /// Server address, `host:port` as the server prints it (or a URL,
    /// `http://host:port`); `bench load` and `bench watch` take several,
    /// comma-separated: replicas of one service.
    #[arg(
        long,
        global = true,
        env = "BACKGAMMON_ADDR",
        default_value = "127.0.0.1:50051"
    )]
    addr: String,
    /// Folder holding the variant plugins, for the offline tools.
    #[arg(
        long,
        global = true,
        env = "BACKGAMMON_PLUGIN_DIR",
        default_value = "target/plugins"
    )]
    plugin_dir: PathBuf,
    /// Where seat tokens of the games created here are kept.
    #[arg(long, global = true, env = "BGCTL_TOKENS")]
    tokens: Option<PathBuf>,
    /// Speak TLS, checking the server's certificate against this CA file
    /// (PEM). An `https://` address without it trusts the system's CAs.
    #[arg(long, global = true, env = "BGCTL_TLS_CA")]
    tls_ca: Option<PathBuf>,
    /// A client certificate (PEM) for a server that asks for one
    /// (`backgammond --client-ca`); with --tls-key.
    #[arg(long, global = true, env = "BGCTL_TLS_CERT")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, global = true, env = "BGCTL_TLS_KEY")]
    tls_key: Option<PathBuf>,
    /// The name the server's certificate must carry, when it is not the
    /// address's host (for example when connecting by IP address).
    #[arg(long, global = true, env = "BGCTL_TLS_DOMAIN")]
    tls_domain: Option<String>,

    #[command(subcommand)]
    command: Command,
}

/// What running out of time costs (`bgctl new --on-timeout`).
#[derive(Clone, Copy, ValueEnum)]
enum OnTimeoutArg {
    Match,
    Game,
}

#[derive(Clone, Copy, ValueEnum)]
enum SeatArg {
    White,
    Black,
}

impl SeatArg {
    fn name(self) -> &'static str {
        match self {
            SeatArg::White => "white",
            SeatArg::Black => "black",
        }
    }

    fn pb(self) -> pb::Seat {
        match self {
            SeatArg::White => pb::Seat::White,
            SeatArg::Black => pb::Seat::Black,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Json,
    Mat,
    Sgf,
}

#[derive(Clone, Copy, ValueEnum)]
enum CubeAction {
    Offer,
    Take,
    Drop,
    Beaver,
}

#[derive(Subcommand)]
enum Command {
    /// Lists the server's variants and their options.
    Variants,
    /// Creates a game; its seat tokens go to the tokens file.
    New {
        #[arg(long, default_value = "standard")]
        variant: String,
        /// Points to win; 0 for a money session.
        #[arg(long = "match", default_value_t = 0)]
        match_length: u32,
        /// A variant option, `name=value` (repeatable).
        #[arg(long = "option")]
        options: Vec<String>,
        /// Resign by offering a level instead of by position.
        #[arg(long)]
        resign_offers: bool,
        /// Highest cube value; 0 for no cube.
        #[arg(long)]
        cube_max: Option<u32>,
        /// Let the server roll for a player who cannot double (`true` or
        /// `false`; default: on where the game has no cube).
        #[arg(long)]
        auto_roll: Option<bool>,
        /// Start every game of the match from this gnubg Position ID (read
        /// with white on roll), instead of the variant's setup; for the
        /// variants on the standard board.
        #[arg(long, conflicts_with_all = ["xgid", "gnubg_id"])]
        position_id: Option<String>,
        /// Take up a match where this XGID says (position, score, cube,
        /// player to roll, match length; dice 00), e.g.
        /// `XGID=-b----E-C---eE---c-e----B-:0:0:1:00:2:1:0:5:10`.
        #[arg(long, conflicts_with = "gnubg_id", allow_hyphen_values = true)]
        xgid: Option<String>,
        /// The same from gnubg's `POSITION_ID:MATCH_ID`.
        #[arg(long)]
        gnubg_id: Option<String>,
        /// Verifiable dice (`true` or `false`; default: on): the server
        /// commits to its seed now and reveals it at the end (`bgctl verify`).
        #[arg(long)]
        verifiable_dice: Option<bool>,
        /// White's seed for the verifiable dice (any text).
        #[arg(long, default_value = "")]
        white_seed: String,
        /// Black's seed for the verifiable dice (any text).
        #[arg(long, default_value = "")]
        black_seed: String,
        /// A match clock, as a tournament director writes it: a reserve
        /// (`10m`), per match point (`2m/point`), a delay (`+12s`), an
        /// increment (`+2s/move`), a cap on a turn (`1d/turn`), joined:
        /// `2m/point+12s` is USBGF's clock. Durations in s, m, h or d.
        #[arg(long, value_parser = client::parse_clock)]
        clock: Option<pb::ClockSettings>,
        /// With --clock: what running out costs, `match` (the default) or
        /// `game`.
        #[arg(long, value_enum, requires = "clock")]
        on_timeout: Option<OnTimeoutArg>,
    },
    /// Shows a game, its board drawn in the terminal.
    Show {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
    },
    /// Rolls for your seat.
    Roll {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
        #[arg(long = "as", value_enum)]
        seat: SeatArg,
        /// Your seat's seed for the verifiable dice (once a match, any
        /// text up to 256 bytes): the dice from this roll on depend on it
        /// (README "Provably fair dice").
        #[arg(long, value_name = "TEXT", default_value = "")]
        dice_seed: String,
    },
    /// Plays a whole turn, e.g. `bgctl move GAME --as white 13/7 8/7`.
    Move {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
        #[arg(long = "as", value_enum)]
        seat: SeatArg,
        /// The moves, in the usual notation.
        #[arg(required = true)]
        play: Vec<String>,
        /// Your seat's seed for the verifiable dice, as with `roll` (for a
        /// seat whose dice auto-roll throws): it applies from the next die.
        #[arg(long, value_name = "TEXT", default_value = "")]
        dice_seed: String,
    },
    /// Offers a double, or answers one.
    Double {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
        #[arg(long = "as", value_enum)]
        seat: SeatArg,
        #[arg(value_enum, default_value_t = CubeAction::Offer)]
        action: CubeAction,
    },
    /// Resigns (or offers a level, or answers an offer).
    Resign {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
        #[arg(long = "as", value_enum)]
        seat: SeatArg,
        /// Offer mode: 1 single, 2 gammon, 3 backgammon.
        #[arg(long, default_value_t = 0)]
        level: u32,
        #[arg(long, conflicts_with = "decline")]
        accept: bool,
        #[arg(long)]
        decline: bool,
    },
    /// Answers a decision the variant asks of your seat, e.g. tric-trac's
    /// `bgctl decide GAME --as white stay` (or `go`).
    Decide {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
        #[arg(long = "as", value_enum)]
        seat: SeatArg,
        /// One of the choices the game shows.
        choice: String,
    },
    /// Leaves the match: the game in progress is conceded as resigning
    /// would concede it, and the match ends at once (a match goes to the
    /// other seat, a money session to the leader).
    Abandon {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
        #[arg(long = "as", value_enum)]
        seat: SeatArg,
    },
    /// Prints the game's updates: those after a version (`--from`), then
    /// live ones as they happen.
    Watch {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
        /// Start after this version (0: from the game's creation on).
        #[arg(long, default_value_t = 0)]
        from: u64,
    },
    /// Writes the whole match to stdout in a format other programs read:
    /// `json` (the service's record, any variant), `mat` (the .mat text
    /// GNU Backgammon and eXtreme Gammon import) or `sgf` (gnubg's own), e.g.
    /// `bgctl export GAME --format mat > match.mat`.
    Export {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
        #[arg(long, value_enum, default_value_t = FormatArg::Json)]
        format: FormatArg,
        /// White's name in the record (one word).
        #[arg(long, default_value = "")]
        white: String,
        /// Black's name in the record (one word).
        #[arg(long, default_value = "")]
        black: String,
    },
    /// Checks a finished match's verifiable dice: the server seed it
    /// revealed hashes to the commitment published at NewGame, and every
    /// die is the one the seeds give. Exit 0 when all match, 1 otherwise.
    Verify {
        /// The game id (or any start or end of it in the tokens file);
        /// its record is read from the server.
        #[arg(required_unless_present = "file")]
        game: Option<String>,
        /// Check a JSON record saved with `bgctl export` instead (offline).
        #[arg(long, conflicts_with = "game")]
        file: Option<PathBuf>,
        /// The commitment published when the match was created (as
        /// `bgctl show` printed it then); default: the one `bgctl new`
        /// saved in the tokens file, if it made the match.
        #[arg(long, value_name = "HEX")]
        commitment: Option<String>,
        /// White's seed as white gave it ("" for none); default: the one
        /// given through bgctl, if any (saved in the tokens file).
        #[arg(long, value_name = "TEXT")]
        white_seed: Option<String>,
        /// Black's seed, as `--white-seed`.
        #[arg(long, value_name = "TEXT")]
        black_seed: Option<String>,
    },
    /// Lists the variant plugins in the plugin folder (offline), and the files skipped.
    Plugins,
    /// Prints the legal plays of each corpus line (offline): `POSITION_ID
    /// DIE1 DIE2 COUNT RESULT_ID...`, results sorted (the gnubg corpus format).
    Plays {
        #[arg(long, default_value = "standard")]
        variant: String,
        /// Lines whose first three fields are `POSITION_ID DIE1 DIE2`; `-` for stdin.
        #[arg(long)]
        corpus: PathBuf,
    },
    /// Prints what each corpus line's roll scores (offline), for a variant
    /// scoring during play: input `POSITION_ID DIE1 DIE2 ROLL` (ROLL: the
    /// roll's number in the relevé, from 1); output those four fields, the
    /// roller's points, the opponent's, then each jan as
    /// `name:beneficiary:ways:points` (beneficiary `roller` or `opponent`).
    Jans {
        #[arg(long, default_value = "trictrac")]
        variant: String,
        /// Lines `POSITION_ID DIE1 DIE2 ROLL`, the roller on roll (white); `-` for stdin.
        #[arg(long)]
        corpus: PathBuf,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        bench: Bench,
    },
}

#[derive(Subcommand)]
enum Bench {
    /// Times legal-play generation through the plugin boundary over a
    /// corpus (offline); last line `ns_per_position=<f> positions=<n> plays=<total>`.
    Movegen {
        #[arg(long, default_value = "standard")]
        variant: String,
        #[arg(long)]
        corpus: PathBuf,
        /// Timed passes over the corpus (after one untimed warm-up pass); the median pass is reported.
        #[arg(long, default_value_t = 20)]
        repeat: u32,
    },
    /// Plays complete games against a running server and calls
    /// grpc.health.v1/Check the same way, the two taking turns; the first
    /// line counts the moves and the actions the server stored, the last is
    /// `move_rps=<x> health_rps=<y> ratio=<x/y>`. With `--addr A,B,...`
    /// (replicas of one service), the games and checks are spread over
    /// them. A call the server could not answer (it restarts, a connection
    /// is lost, RATE_LIMITED) is sent again with its request id, for up to
    /// a minute (`retries=` counts them). With --tokens, the seat tokens of
    /// the games played are saved there.
    Load {
        /// Games played at once (one worker each). Every figure in the
        /// README is at the default: with fewer, the server waits for its
        /// callers and the ratio says more of the round trip than of it.
        #[arg(long, default_value_t = 64)]
        concurrency: usize,
        /// Stop after this many games in all (0: no limit).
        #[arg(long, default_value_t = 0)]
        games: u64,
        /// Seconds for each of the two measurements.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Moves and health checks take turns in windows this long, so
        /// that both see the same machine (a shared machine's speed
        /// changes within seconds); equal to --seconds, all the moves are
        /// measured first, then all the health checks.
        #[arg(long, default_value_t = 1.0)]
        slice_seconds: f64,
        /// Cubeless games with auto-roll on (one Move call a turn) instead
        /// of money games with the cube (a Roll and a Move call a turn).
        #[arg(long)]
        auto_roll: bool,
        /// Verifiable dice in the games played (`true`, the server's
        /// default, or `false`: dice from its CSPRNG alone).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        verifiable_dice: bool,
        /// Roll and Move answered with the whole game, instead of only the
        /// fields the players read (version, phase, seat to act, the
        /// plays' notation), which they ask for with a read mask.
        #[arg(long)]
        whole_answers: bool,
    },
    /// Plays a match on the first `--addr` and watches it on the last one
    /// (`--addr A,B`: two replicas); prints the delay from each action's
    /// answer to the watcher's update, `watch_delay_ms p50=.. p99=..`.
    Watch {
        /// Actions to time.
        #[arg(long, default_value_t = 500)]
        actions: usize,
    },
    /// Creates matches whose clocks run and are left to run (a day each):
    /// the load `scripts/bench-clocks` measures the server under, idle
    /// clocks by the hundred thousand. Prints `clocks=N seconds=S`.
    Clocks {
        /// Matches to create.
        #[arg(long, default_value_t = 100_000)]
        games: u64,
        /// Matches created at once.
        #[arg(long, default_value_t = 64)]
        concurrency: usize,
    },
}

/// mimalloc instead of the C library's allocator, as in backgammond:
/// `bench load` decodes every answer on the machine whose server it
/// measures, so its allocations compete with the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A mistake of the user's (or a server's refusal) is one line on stderr
/// and exit code 1, never a backtrace, whatever RUST_BACKTRACE says.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bgctl: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let transport = cli.transport();
    match cli.command {
        Command::Plugins => offline::plugins(&cli.plugin_dir),
        Command::Verify {
            file: Some(file),
            commitment,
            white_seed,
            black_seed,
            ..
        } => {
            let record = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            // The tokens file only for what `bgctl new` saved: an
            // unreadable one is no reason not to check the file.
            let tokens = Tokens::load(&cli.tokens.clone().unwrap_or_else(Tokens::default_path))
                .unwrap_or_default();
            let given = verify::Known {
                commitment,
                white_seed,
                black_seed,
                opening: None,
            };
            print_verified(&record, given, &tokens, &cli.plugin_dir)
        }
        Command::Plays { variant, corpus } => offline::plays(&cli.plugin_dir, &variant, &corpus),
        Command::Jans { variant, corpus } => offline::jans(&cli.plugin_dir, &variant, &corpus),
        Command::Bench {
            bench:
                Bench::Movegen {
                    variant,
                    corpus,
                    repeat,
                },
        } => offline::bench_movegen(&cli.plugin_dir, &variant, &corpus, repeat),
        Command::Bench {
            bench:
                Bench::Load {
                    concurrency,
                    games,
                    seconds,
                    slice_seconds,
                    auto_roll,
                    verifiable_dice,
                    whole_answers,
                },
        } => {
            let created = tokio::runtime::Runtime::new()?.block_on(bench::load(
                &transport?,
                &addresses(&cli.addr),
                concurrency,
                games,
                seconds,
                slice_seconds,
                bench::Setup {
                    mode: if auto_roll {
                        bench::Mode::AutoRoll
                    } else {
                        bench::Mode::Classic
                    },
                    verifiable_dice,
                    whole_answers,
                },
            ))?;
            if let Some(path) = &cli.tokens {
                // Asked for: the games stay playable (`bgctl show`, `move`).
                let mut saved = Tokens::load(path)?;
                for (game_id, [white, black]) in &created {
                    saved.insert(game_id, white, black);
                }
                saved.save(path)?;
                eprintln!(
                    "seat tokens of {} games saved in {}",
                    created.len(),
                    path.display()
                );
            }
            Ok(())
        }
        Command::Bench {
            bench: Bench::Clocks { games, concurrency },
        } => tokio::runtime::Runtime::new()?.block_on(bench::clocks(
            &transport?,
            &addresses(&cli.addr),
            games,
            concurrency,
        )),
        Command::Bench {
            bench: Bench::Watch { actions },
        } => tokio::runtime::Runtime::new()?.block_on(bench::watch(
            &transport?,
            &addresses(&cli.addr),
            actions,
        )),
        online => {
            let runtime = tokio::runtime::Runtime::new()?;
            let tokens = cli.tokens.clone().unwrap_or_else(Tokens::default_path);
            let transport = transport?;
            runtime.block_on(run_online(
                &transport,
                &cli.addr,
                &tokens,
                &cli.plugin_dir,
                online,
            ))
        }
    }
}

impl Cli {
    /// Plain TCP, or TLS as the options and the address say.
    fn transport(&self) -> Result<Transport> {
        Transport::new(
            &TlsOptions {
                ca: self.tls_ca.clone(),
                cert: self.tls_cert.clone(),
                key: self.tls_key.clone(),
                domain: self.tls_domain.clone(),
            },
            &self.addr,
        )
    }
}

/// Checks a JSON record's dice against what the user knows (given on the
/// command line, else saved by bgctl in the tokens file, and the
/// variant's plugin in the plugin folder) and says what it checked; a
/// mismatch is an error.
fn print_verified(
    record: &str,
    given: verify::Known,
    tokens: &Tokens,
    plugin_dir: &Path,
) -> Result<()> {
    let game_id = serde_json::from_str::<serde_json::Value>(record)
        .ok()
        .and_then(|r| {
            r.get("game_id")
                .and_then(|id| id.as_str())
                .map(String::from)
        })
        .unwrap_or_default();
    let opening = match verify::variant_of(record) {
        Some((variant, options)) => offline::opening_rule(plugin_dir, &variant, &options)?,
        None => None,
    };
    let known = verify::Known {
        commitment: given.commitment.or_else(|| tokens.commitment(&game_id)),
        white_seed: given.white_seed.or_else(|| tokens.seed(&game_id, "white")),
        black_seed: given.black_seed.or_else(|| tokens.seed(&game_id, "black")),
        opening: given.opening.or(opening),
    };
    let verified = verify::record(record, &known).context("NOT verified")?;
    let seed = |s: &bg_fair_dice::SeatSeed, known: &Option<String>| {
        let told = if known.is_some() { ", as given" } else { "" };
        match (s.seed.as_str(), s.from) {
            ("", _) => format!("none{told}"),
            (seed, from) => format!("{seed:?} from die {from}{told}"),
        }
    };
    println!(
        "verified: all {} dice of match {} are the ones its seeds give ({})",
        verified.dice, verified.game_id, verified.scheme
    );
    println!(
        "  the server seed it revealed hashes to {}",
        if known.commitment.is_some() {
            "the commitment published when the match was created"
        } else {
            "the record's commitment (give --commitment to check it against the one published when the match was created)"
        }
    );
    let unchecked = known.white_seed.is_none() || known.black_seed.is_none();
    println!(
        "  seeds: white {}, black {}{}",
        seed(&verified.seeds.white, &known.white_seed),
        seed(&verified.seeds.black, &known.black_seed),
        if unchecked {
            " (give --white-seed/--black-seed to check a seed you gave)"
        } else {
            ""
        }
    );
    match known.opening {
        Some(_) => println!("  opening rule: the {} plugin's", verified.variant),
        None => println!(
            "  opening rule: as the record states it (no {} plugin in {} to check it against)",
            verified.variant,
            plugin_dir.display()
        ),
    }
    Ok(())
}

/// `--addr A,B,...`: the benchmarks take several servers.
fn addresses(addr: &str) -> Vec<String> {
    addr.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(String::from)
        .collect()
}

async fn run_online(
    transport: &Transport,
    addr: &str,
    tokens_path: &std::path::Path,
    plugin_dir: &Path,
    command: Command,
) -> Result<()> {
    let mut client = connect(transport, addr).await?;
    let tokens = Tokens::load(tokens_path)?;
    // A game id as given, or the whole id of the game of the tokens file
    // it is the start of.
    let whole_id =
        |id: &str| -> Result<String> { Ok(tokens.resolve(id)?.unwrap_or_else(|| id.to_string())) };
    let game_of = |id: &str| pb::GetGameRequest {
        read_mask: None,
        game_id: id.to_string(),
    };
    match command {
        Command::Variants => {
            let variants = client
                .list_variants(pb::ListVariantsRequest {})
                .await
                .map_err(explain)?;
            for v in variants.into_inner().variants {
                println!("{} {}  {}", v.name, v.version, v.description);
                println!(
                    "    cube: {}   auto-roll by default: {}",
                    if v.cube { "yes" } else { "no" },
                    if v.auto_roll { "on" } else { "off" }
                );
                for o in v.options {
                    println!(
                        "    {}={} ({})  {}",
                        o.name,
                        o.default_value,
                        o.allowed_values.join("|"),
                        o.description
                    );
                }
            }
        }
        Command::New {
            variant,
            match_length,
            options,
            resign_offers,
            cube_max,
            auto_roll,
            position_id,
            xgid,
            gnubg_id,
            verifiable_dice,
            white_seed,
            black_seed,
            clock,
            on_timeout,
        } => {
            let clock = clock.map(|clock| pb::ClockSettings {
                on_timeout: match on_timeout {
                    Some(OnTimeoutArg::Game) => pb::OnTimeout::Game,
                    _ => pb::OnTimeout::Match,
                } as i32,
                ..clock
            });
            let start_board = position_id
                .as_deref()
                .map(client::board_of_position_id)
                .transpose()?;
            let request = pb::NewGameRequest {
                variant,
                options: client::parse_options(&options)?.into_iter().collect(),
                settings: Some(pb::MatchSettings {
                    match_length,
                    cube_max,
                    auto_roll,
                    verifiable_dice,
                    clock,
                    resignation: if resign_offers {
                        pb::ResignationMode::Offer as i32
                    } else {
                        pb::ResignationMode::ByPosition as i32
                    },
                    ..Default::default()
                }),
                request_id: String::new(),
                start_board,
                xgid: xgid.unwrap_or_default(),
                gnubg_id: gnubg_id.unwrap_or_default(),
                white_seed,
                black_seed,
            };
            let response = client
                .new_game(request)
                .await
                .map_err(explain)?
                .into_inner();
            let game = response.game.unwrap_or_default();
            let mut tokens = tokens;
            tokens.insert(&game.game_id, &response.white_token, &response.black_token);
            if let Some(dice) = &game.verifiable_dice {
                tokens.set_commitment(&game.game_id, &dice.commitment);
                for (seat, seed) in [("white", &dice.white_seed), ("black", &dice.black_seed)] {
                    if !seed.is_empty() {
                        tokens.set_seed(&game.game_id, seat, seed);
                    }
                }
            }
            tokens.save(tokens_path)?;
            print!("{}", render(&game));
            let variants = client
                .list_variants(pb::ListVariantsRequest {})
                .await
                .map_err(explain)?
                .into_inner()
                .variants;
            print!("{}", client::in_effect(&game, &variants));
            println!("seat tokens saved in {}", tokens_path.display());
            println!("game id: {}", game.game_id);
            println!(
                "(bgctl takes any start or end of it that is one game's, e.g. {})",
                client::id_end(&game.game_id)
            );
        }
        Command::Export {
            game,
            format,
            white,
            black,
        } => {
            let record = client
                .export_match(pb::ExportMatchRequest {
                    game_id: whole_id(&game)?,
                    format: match format {
                        FormatArg::Json => pb::RecordFormat::Json,
                        FormatArg::Mat => pb::RecordFormat::Mat,
                        FormatArg::Sgf => pb::RecordFormat::Sgf,
                    } as i32,
                    white_name: white,
                    black_name: black,
                })
                .await
                .map_err(explain)?
                .into_inner();
            print!("{}", record.text);
        }
        Command::Verify {
            game,
            commitment,
            white_seed,
            black_seed,
            ..
        } => {
            let game = game.context("give a game id, or --file")?;
            let record = client
                .export_match(pb::ExportMatchRequest {
                    game_id: whole_id(&game)?,
                    format: pb::RecordFormat::Json as i32,
                    ..Default::default()
                })
                .await
                .map_err(explain)?
                .into_inner();
            let given = verify::Known {
                commitment,
                white_seed,
                black_seed,
                opening: None,
            };
            print_verified(&record.text, given, &tokens, plugin_dir)?;
        }
        Command::Show { game } => {
            let game = client
                .get_game(game_of(&whole_id(&game)?))
                .await
                .map_err(explain)?
                .into_inner();
            print!("{}", render(&game));
        }
        Command::Watch { game, from } => {
            let mut stream = client
                .watch_game(pb::WatchGameRequest {
                    game_id: whole_id(&game)?,
                    from_version: from,
                    read_mask: None,
                })
                .await
                .map_err(explain)?
                .into_inner();
            // The board before each update, when the stream has given it,
            // so that a move's hits are marked.
            let mut board: Option<pb::Board> = None;
            while let Some(update) = stream.message().await.map_err(explain)? {
                let after = update.game.as_ref().and_then(|g| g.board.as_ref());
                let boards = board.as_ref().zip(after);
                println!(
                    "v{} {}",
                    update.version,
                    words::describe_action(&update.events, boards)
                );
                board = after.cloned();
                if let Some(game) = &update.game {
                    print!("{}", render(game));
                }
            }
        }
        action => {
            let (game_id, seat) = match &action {
                Command::Roll { game, seat, .. }
                | Command::Move { game, seat, .. }
                | Command::Double { game, seat, .. }
                | Command::Resign { game, seat, .. }
                | Command::Decide { game, seat, .. }
                | Command::Abandon { game, seat } => (game.clone(), *seat),
                _ => unreachable!("offline commands are handled before"),
            };
            let Some(game_id) = tokens.resolve(&game_id)? else {
                anyhow::bail!(
                    "no game {game_id} in the tokens file {}: give the whole game id, or its start \
                     or end if `bgctl new` made it here (see --tokens)",
                    tokens_path.display()
                );
            };
            let token = tokens.get(&game_id, seat.name())?;
            let current = client
                .get_game(game_of(&game_id))
                .await
                .map_err(explain)?
                .into_inner();
            if let (Command::Roll { dice_seed, .. }, Some(dice)) = (&action, current.dice)
                && current.to_act == seat.pb() as i32
                && current.phase == pb::Phase::Move as i32
            {
                if !dice_seed.is_empty() {
                    anyhow::bail!(
                        "{}'s dice are already thrown ({}-{}), so this roll cannot carry your seed: give it with your move (`bgctl move ... --dice-seed`) or your next roll",
                        seat.name(),
                        dice.die1,
                        dice.die2
                    );
                }
                // Auto-roll (or the opening throw) has thrown for this seat.
                print!("{}", render(&current));
                println!(
                    "{}'s dice are already thrown: {}-{}; play them with `bgctl move {} --as {} ...`",
                    seat.name(),
                    dice.die1,
                    dice.die2,
                    game_id,
                    seat.name()
                );
                return Ok(());
            }
            let version = current.version;
            let request_id = uuid_like();
            // A seed given for the verifiable dice, kept for `verify`.
            let seed_given = match &action {
                Command::Roll { dice_seed, .. } | Command::Move { dice_seed, .. } => {
                    dice_seed.clone()
                }
                _ => String::new(),
            };
            let game = match action {
                Command::Roll { dice_seed, .. } => {
                    client
                        .roll(authorized(
                            pb::RollRequest {
                                read_mask: None,
                                game_id,
                                expected_version: version,
                                request_id,
                                dice_seed,
                            },
                            &token,
                        )?)
                        .await
                }
                Command::Move {
                    play, dice_seed, ..
                } => {
                    client
                        .r#move(authorized(
                            pb::MoveRequest {
                                read_mask: None,
                                game_id,
                                expected_version: version,
                                request_id,
                                notation: play.join(" "),
                                moves: Vec::new(),
                                dice_seed,
                            },
                            &token,
                        )?)
                        .await
                }
                Command::Double { action, .. } => {
                    client
                        .double(authorized(
                            pb::DoubleRequest {
                                read_mask: None,
                                game_id,
                                expected_version: version,
                                request_id,
                                action: match action {
                                    CubeAction::Offer => pb::DoubleAction::Offer,
                                    CubeAction::Take => pb::DoubleAction::Take,
                                    CubeAction::Drop => pb::DoubleAction::Drop,
                                    CubeAction::Beaver => pb::DoubleAction::Beaver,
                                } as i32,
                            },
                            &token,
                        )?)
                        .await
                }
                Command::Resign {
                    level,
                    accept,
                    decline,
                    ..
                } => {
                    client
                        .resign(authorized(
                            pb::ResignRequest {
                                read_mask: None,
                                game_id,
                                expected_version: version,
                                request_id,
                                action: if accept {
                                    pb::ResignAction::Accept
                                } else if decline {
                                    pb::ResignAction::Decline
                                } else {
                                    pb::ResignAction::Resign
                                } as i32,
                                level,
                            },
                            &token,
                        )?)
                        .await
                }
                Command::Decide { choice, .. } => {
                    client
                        .decide(authorized(
                            pb::DecideRequest {
                                read_mask: None,
                                game_id,
                                expected_version: version,
                                request_id,
                                choice,
                            },
                            &token,
                        )?)
                        .await
                }
                Command::Abandon { .. } => {
                    client
                        .abandon(authorized(
                            pb::AbandonRequest {
                                read_mask: None,
                                game_id,
                                expected_version: version,
                                request_id,
                            },
                            &token,
                        )?)
                        .await
                }
                _ => unreachable!(),
            }
            .map_err(explain)?
            .into_inner();
            if !seed_given.is_empty() {
                let mut tokens = Tokens::load(tokens_path)?;
                tokens.set_seed(&game.game_id, seat.name(), &seed_given);
                tokens.save(tokens_path)?;
            }
            print!("{}", render_after(current.board.as_ref(), &game));
        }
    }
    Ok(())
}

/// A unique request id for one invocation (retries of it are the caller's).
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("bgctl-{}-{nanos}", std::process::id())
}
