//! `bgctl`: a client for humans and scripts, and offline tools that load
//! variants through the plugin host exactly as the server does.
//!
//! It owns argument parsing, output formats and the local tokens file;
//! rules come from the plugins, the game flow from the server.

mod bench;
mod check;
mod client;
mod commands;
mod offline;
mod verify;
mod view;
mod words;

use std::path::PathBuf;

use anyhow::{Context, Result};
use bg_api::v1 as pb;
use clap::{Parser, Subcommand, ValueEnum};

use client::{TlsOptions, Tokens, Transport};
use commands::{Online, act, analyze, export, hint, new, show, variants, watch};

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
    New(new::Args),
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
        /// (docs/fair-dice.md).
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
    /// `bgctl decide GAME --as black stay` (or `go`), by the seat the
    /// game shows deciding.
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
    /// A plugin author's tools (offline).
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Prints the legal plays of each corpus line (offline): `POSITION_ID
    /// DIE1 DIE2 COUNT RESULT_ID...`, results sorted (the gnubg corpus format).
    Plays {
        #[arg(long, default_value = "standard")]
        variant: String,
        /// Lines whose first three fields are `POSITION_ID DIE1 DIE2`; `-` for stdin.
        #[arg(long)]
        corpus: PathBuf,
    },
    /// Every decision of a match judged by the computer player: the
    /// mistakes (equity lost of 0.02 or more; `--all` for every decision)
    /// and each player's error rates (mean equity lost x 500). A match in
    /// progress needs its `hints` setting on.
    Analyze {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        game: String,
        /// 0 or 1, as for `hint`.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1))]
        plies: u32,
        /// List every decision judged, not only the mistakes.
        #[arg(long)]
        all: bool,
    },
    /// The computer player's ranking of the plays for the seat to act in
    /// GAME (the match must give hints: `bgctl new --hints`), with the
    /// cube decision, or the variant's decision (tric-trac's stay or go),
    /// when there is one. Or, with --corpus, its choice for each corpus
    /// line (offline): input `POSITION_ID DIE1 DIE2` (tric-trac: `... ROLL`,
    /// as `jans` takes it); output those fields, the chosen play's result
    /// Position ID (as `plays` prints them) and its equity (cubeless,
    /// 0-ply, for the side on roll), for a variant whose net lies beside
    /// its plugin.
    Hint {
        /// The game id, or any start or end of it that is one game's in
        /// the tokens file.
        #[arg(required_unless_present = "corpus", conflicts_with = "corpus")]
        game: Option<String>,
        /// 0: each play's result valued by the net; 1: the best looked at
        /// over the opponent's 21 rolls.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1))]
        plies: u32,
        /// Plays to show, best first.
        #[arg(long, default_value_t = 5)]
        top: usize,
        #[arg(long, default_value = "standard")]
        variant: String,
        /// Lines whose first three fields are `POSITION_ID DIE1 DIE2`; `-` for stdin.
        #[arg(long)]
        corpus: Option<PathBuf>,
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
enum PluginCommand {
    /// Checks a plugin file as the server would load it: its ABI and
    /// info, then random matches through the engine's match flow with
    /// every invariant the server relies on, damaged state bytes and bad
    /// options. Exits 1 naming the first failure and its position.
    Check {
        /// The plugin file (.so, .dylib or .dll).
        file: PathBuf,
        /// Random matches to play.
        #[arg(long, default_value_t = 500)]
        games: u32,
        /// The seed of the random matches (a failure says how to replay it).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// An option of the variant, `name=value` (repeatable).
        #[arg(long = "option")]
        options: Vec<String>,
        /// Actions after which a game that has not ended fails the check.
        #[arg(long, default_value_t = 20_000)]
        max_actions: u32,
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
        /// Games played at once (one worker each). Every figure in
        /// docs/benchmarks.md is at the default: with fewer, the server waits for its
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
        /// As --auto-roll, black played by the service's computer player
        /// (its strongest level): each Move call of white's is answered
        /// with black's reply.
        #[arg(long, conflicts_with = "auto_roll")]
        bot: bool,
        /// With --bot: the computer player's level (none: the strongest).
        #[arg(long, requires = "bot", default_value = "")]
        bot_level: String,
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
    /// Hint calls on a corpus's positions (`POSITION_ID DIE1 DIE2 ...`,
    /// white to play; standard backgammon): at 0-ply, then 1-ply, then
    /// health checks, `--seconds` each; prints the rates and their ratios
    /// to the health checks'.
    Hint {
        #[arg(long)]
        corpus: PathBuf,
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
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
        Command::Plugin {
            command:
                PluginCommand::Check {
                    file,
                    games,
                    seed,
                    options,
                    max_actions,
                },
        } => check::run(
            &file,
            &check::Settings {
                games,
                seed,
                options: client::parse_options(&options)?.into_iter().collect(),
                max_actions,
            },
        ),
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
            commands::verify::print_verified(&record, given, &tokens, &cli.plugin_dir)
        }
        Command::Plays { variant, corpus } => offline::plays(&cli.plugin_dir, &variant, &corpus),
        Command::Hint {
            variant,
            corpus: Some(corpus),
            ..
        } => offline::hint(&cli.plugin_dir, &variant, &corpus),
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
                    bot,
                    bot_level,
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
                    mode: match (auto_roll, bot) {
                        (_, true) => bench::Mode::Bot,
                        (true, false) => bench::Mode::AutoRoll,
                        (false, false) => bench::Mode::Classic,
                    },
                    bot_level,
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
            bench:
                Bench::Hint {
                    corpus,
                    seconds,
                    concurrency,
                },
        } => tokio::runtime::Runtime::new()?.block_on(bench::hint(
            &transport?,
            &addresses(&cli.addr),
            &corpus,
            seconds,
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
            let tokens = cli.tokens.clone().unwrap_or_else(Tokens::default_path);
            let transport = transport?;
            tokio::runtime::Runtime::new()?.block_on(async {
                let mut o =
                    Online::connect(&transport, &cli.addr, &tokens, &cli.plugin_dir).await?;
                run_online(&mut o, online).await
            })
        }
    }
}

/// A command that talks to the server, to its module.
async fn run_online(o: &mut Online, command: Command) -> Result<()> {
    match command {
        Command::Variants => variants::run(o).await,
        Command::New(args) => new::run(o, args).await,
        Command::Show { game } => show::run(o, &game).await,
        Command::Analyze { game, plies, all } => analyze::run(o, &game, plies, all).await,
        Command::Hint {
            game: Some(game),
            plies,
            top,
            ..
        } => hint::run(o, &game, plies, top).await,
        Command::Watch { game, from } => watch::run(o, &game, from).await,
        Command::Export {
            game,
            format,
            white,
            black,
        } => export::run(o, &game, format, white, black).await,
        Command::Verify {
            game,
            commitment,
            white_seed,
            black_seed,
            ..
        } => {
            let given = verify::Known {
                commitment,
                white_seed,
                black_seed,
                opening: None,
            };
            commands::verify::online(o, game, given).await
        }
        action => act::run(o, action).await,
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

/// `--addr A,B,...`: the benchmarks take several servers.
fn addresses(addr: &str) -> Vec<String> {
    addr.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(String::from)
        .collect()
}
