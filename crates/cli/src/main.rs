//! `bgctl`: a client for humans and scripts, and offline tools that load
//! variants through the plugin host exactly as the server does.
//!
//! It owns argument parsing, output formats and the local tokens file;
//! rules come from the plugins, the game flow from the server. This file
//! parses the global options and hands each command to its module under
//! `commands/`.

mod commands;
mod connection;
mod corpus;
mod parse;
mod render;
mod tokens;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use commands::act::{self, Action};
use commands::{
    Context, analyze, bench, export, feed, hint, jans, matches, new, plays, plugin_check, plugins,
    show, variants, verify, watch, webhooks,
};
use connection::TlsOptions;

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

#[derive(Subcommand)]
enum Command {
    /// Lists the server's variants and their options.
    Variants,
    /// Creates a game; its seat tokens go to the tokens file.
    New(new::Args),
    /// Shows a game, its board drawn in the terminal.
    Show(show::Args),
    /// Rolls for your seat.
    Roll(act::Roll),
    /// Plays a whole turn, e.g. `bgctl move GAME --as white 13/7 8/7`.
    Move(act::Move),
    /// Offers a double, or answers one.
    Double(act::Double),
    /// Resigns (or offers a level, or answers an offer).
    Resign(act::Resign),
    /// Answers a decision the variant asks of your seat, e.g. tric-trac's
    /// `bgctl decide GAME --as black stay` (or `go`), by the seat the
    /// game shows deciding.
    Decide(act::Decide),
    /// Leaves the match: the game in progress is conceded as resigning
    /// would concede it, and the match ends at once (a match goes to the
    /// other seat, a money session to the leader).
    Abandon(act::Abandon),
    /// Prints the game's updates: those after a version (`--from`), then
    /// live ones as they happen.
    Watch(watch::Args),
    /// Lists the matches the server holds (with the operator's token, or
    /// a client certificate's own): filtered by variant, state, labels,
    /// players; a page at a time, or `--all`.
    Matches(matches::Args),
    /// Follows the fleet feed: an event a line (a match created, a game
    /// or the match ended, a match removed; `--kind action` for every
    /// action), each with its cursor, to resume from with `--after`.
    Feed(feed::Args),
    /// Where the server's webhook deliveries stand (the operator's
    /// token): each endpoint's counts, then each delivery, the newest
    /// first, with its attempts and last error.
    Webhooks(webhooks::Args),
    /// Writes the whole match to stdout in a format other programs read:
    /// `json` (the service's record, any variant), `mat` (the .mat text
    /// GNU Backgammon and eXtreme Gammon import) or `sgf` (gnubg's own), e.g.
    /// `bgctl export GAME --format mat > match.mat`.
    Export(export::Args),
    /// Checks a finished match's verifiable dice: the server seed it
    /// revealed hashes to the commitment published at NewGame, and every
    /// die is the one the seeds give. Exit 0 when all match, 1 otherwise.
    Verify(verify::Args),
    /// Lists the variant plugins in the plugin folder (offline), and the files skipped.
    Plugins,
    /// A plugin author's tools (offline).
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Prints the legal plays of each corpus line (offline): `POSITION_ID
    /// DIE1 DIE2 COUNT RESULT_ID...`, results sorted (the gnubg corpus format).
    Plays(plays::Args),
    /// Every decision of a match judged by the computer player: the
    /// mistakes (equity lost of 0.02 or more; `--all` for every decision)
    /// and each player's error rates (mean equity lost x 500). A match in
    /// progress needs its `hints` setting on.
    Analyze(analyze::Args),
    /// The computer player's ranking of the plays for the seat to act in
    /// GAME (the match must give hints: `bgctl new --hints`), with the
    /// cube decision, or the variant's decision (tric-trac's stay or go),
    /// when there is one. Or, with --corpus, its choice for each corpus
    /// line (offline): input `POSITION_ID DIE1 DIE2` (tric-trac: `... ROLL`,
    /// as `jans` takes it); output those fields, the chosen play's result
    /// Position ID (as `plays` prints them) and its equity (cubeless,
    /// 0-ply, for the side on roll), for a variant whose net lies beside
    /// its plugin.
    Hint(hint::Args),
    /// Prints what each corpus line's roll scores (offline), for a variant
    /// scoring during play: input `POSITION_ID DIE1 DIE2 ROLL` (ROLL: the
    /// roll's number in the relevé, from 1); output those four fields, the
    /// roller's points, the opponent's, then each jan as
    /// `name:beneficiary:ways:points` (beneficiary `roller` or `opponent`).
    Jans(jans::Args),
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        bench: bench::Command,
    },
}

#[derive(Subcommand)]
enum PluginCommand {
    /// Checks a plugin file as the server would load it: its ABI and
    /// info, then random matches through the engine's match flow with
    /// every invariant the server relies on, damaged state bytes and bad
    /// options. Exits 1 naming the first failure and its position.
    Check(plugin_check::Args),
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
    let Cli {
        addr,
        plugin_dir,
        tokens,
        tls_ca,
        tls_cert,
        tls_key,
        tls_domain,
        command,
    } = Cli::parse();
    let cx = Context {
        addr,
        plugin_dir,
        tokens,
        tls: TlsOptions {
            ca: tls_ca,
            cert: tls_cert,
            key: tls_key,
            domain: tls_domain,
        },
    };
    match command {
        Command::Variants => variants::run(&cx),
        Command::New(args) => new::run(&cx, args),
        Command::Show(args) => show::run(&cx, args),
        Command::Roll(args) => act::run(&cx, Action::Roll(args)),
        Command::Move(args) => act::run(&cx, Action::Move(args)),
        Command::Double(args) => act::run(&cx, Action::Double(args)),
        Command::Resign(args) => act::run(&cx, Action::Resign(args)),
        Command::Decide(args) => act::run(&cx, Action::Decide(args)),
        Command::Abandon(args) => act::run(&cx, Action::Abandon(args)),
        Command::Watch(args) => watch::run(&cx, args),
        Command::Matches(args) => matches::run(&cx, args),
        Command::Feed(args) => feed::run(&cx, args),
        Command::Webhooks(args) => webhooks::run(&cx, args),
        Command::Export(args) => export::run(&cx, args),
        Command::Verify(args) => verify::run(&cx, args),
        Command::Plugins => plugins::run(&cx),
        Command::Plugin {
            command: PluginCommand::Check(args),
        } => plugin_check::run(args),
        Command::Plays(args) => plays::run(&cx, args),
        Command::Analyze(args) => analyze::run(&cx, args),
        Command::Hint(args) => hint::run(&cx, args),
        Command::Jans(args) => jans::run(&cx, args),
        Command::Bench { bench } => bench::run(&cx, bench),
    }
}
