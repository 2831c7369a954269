//! `bg-bot`: trains the computer player of a variant by self-play, and
//! measures players against each other.
//!
//!     cargo run -p bg-bot-train -- train --variant standard --games 300000 --seed 1
//!     cargo run -p bg-bot-train -- duel --variant standard --games 5000 --against heuristic

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bg_bot::net::Net;
use bg_bot::player::{HeuristicPlayer, Player, RandomPlayer, SearchPlayer};
use bg_bot_train::duel::{DuelResult, duel};
use bg_bot_train::td::Trainer;
use bg_engine::game::RulesError;
use bg_variant_api::Variant;
use clap::{Parser, Subcommand, ValueEnum};
use rand::SeedableRng;
use rand::rngs::StdRng;

#[derive(Parser)]
#[command(name = "bg-bot", about = "Trains and measures the computer player")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum VariantArg {
    Standard,
    Hypergammon,
    Caucasian,
    Plakoto,
    Trictrac,
    #[value(name = "long_nardy")]
    LongNardy,
    Fevga,
}

impl VariantArg {
    /// The variant's name, as its plugin gives it.
    fn name(self) -> &'static str {
        match self {
            VariantArg::Standard => "standard",
            VariantArg::Hypergammon => "hypergammon",
            VariantArg::Caucasian => "caucasian",
            VariantArg::Plakoto => "plakoto",
            VariantArg::Trictrac => "trictrac",
            VariantArg::LongNardy => "long_nardy",
            VariantArg::Fevga => "fevga",
        }
    }
}

/// Runs `$body` with `$v` bound to the variant's rules and `$checkers` to
/// its checkers a side.
macro_rules! with_variant {
    ($arg:expr, |$v:ident, $checkers:ident| $body:expr) => {
        match $arg {
            VariantArg::Standard => {
                let ($v, $checkers) = (&bg_standard_rules::Standard, 15);
                $body
            }
            VariantArg::Hypergammon => {
                let ($v, $checkers) = (&bg_hypergammon::Hypergammon, 3);
                $body
            }
            VariantArg::Caucasian => {
                let ($v, $checkers) = (&bg_caucasian_rules::Caucasian, 15);
                $body
            }
            VariantArg::Plakoto => {
                let ($v, $checkers) = (&bg_plakoto_rules::Plakoto, 15);
                $body
            }
            VariantArg::Trictrac => {
                let ($v, $checkers) = (&bg_trictrac_rules::TricTrac, 15);
                $body
            }
            VariantArg::LongNardy => {
                let ($v, $checkers) = (&bg_same_way_rules::LongNardy, 15);
                $body
            }
            VariantArg::Fevga => {
                let ($v, $checkers) = (&bg_same_way_rules::Fevga, 15);
                $body
            }
        }
    };
}

#[derive(Clone, Copy, ValueEnum)]
enum Against {
    Random,
    Heuristic,
    /// A net at 0-ply: the same one, or `--against-weights`.
    Net,
}

#[derive(Subcommand)]
enum Command {
    /// Trains a net by self-play (TD(0)), from scratch; logs its strength
    /// against the random and the heuristic player, and against the net
    /// of the line before, as it goes, and writes the weights at each
    /// line.
    Train {
        #[arg(long, value_enum)]
        variant: VariantArg,
        #[arg(long, default_value_t = 100_000)]
        games: u32,
        #[arg(long, default_value_t = 80)]
        hidden: usize,
        #[arg(long, default_value_t = 0.1)]
        alpha: f32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Games between two measures of strength (each 500 games).
        #[arg(long, default_value_t = 10_000)]
        every: u32,
        /// Where the weights go (default: crates/bot/weights/VARIANT.bgnet).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Times the net over a legal-plays corpus (`POSITION_ID DIE1 DIE2
    /// ...` lines): one evaluation, a 0-ply choice among all legal plays
    /// and a 1-ply choice (on the first `--one-ply` positions) by the
    /// service's search (what every player runs), and a cube decision
    /// at 0-ply (the net's value before the roll and the match model)
    /// and the model alone. Prints `ns_per_evaluation=... us_per_0ply=...
    /// us_per_1ply=... us_per_cube_0ply=... ns_per_cube_model=...`.
    Bench {
        #[arg(long)]
        corpus: PathBuf,
        #[arg(long, default_value_t = 200)]
        one_ply: usize,
    },
    /// The net's decisions in games against another player, one line
    /// each: `POSITION_ID DIE1 DIE2 CHOSEN_ID RESULT_ID...` (the mover on
    /// roll in every ID, as the legal-plays corpus writes them), for
    /// grading by GNU Backgammon (scripts/bot-grade).
    Decisions {
        #[arg(long, value_enum)]
        variant: VariantArg,
        #[arg(long, default_value_t = 100)]
        games: u32,
        #[arg(long, value_enum, default_value_t = Against::Heuristic)]
        against: Against,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        weights: Option<PathBuf>,
        /// Record the other player's decisions instead of the net's (to
        /// grade it the same way, for comparison).
        #[arg(long)]
        record_other: bool,
        /// The net's search: 0 or 1 (as `duel --plies`).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
        plies: u8,
    },
    /// The net's 0-ply player against another, over `--games` games.
    Duel {
        #[arg(long, value_enum)]
        variant: VariantArg,
        #[arg(long, default_value_t = 5_000)]
        games: u32,
        #[arg(long, value_enum)]
        against: Against,
        #[arg(long, default_value_t = 7)]
        seed: u64,
        #[arg(long)]
        weights: Option<PathBuf>,
        /// With `--against net`: the other net's weights (a net of
        /// another size or training), instead of the same net.
        #[arg(long)]
        against_weights: Option<PathBuf>,
        /// The net's search: 0 (the best play by the net) or 1 (the eight
        /// best looked at one roll ahead).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
        plies: u8,
        /// A weaker level: noise (standard deviation, in equity) added to
        /// each play's value at 0-ply.
        #[arg(long)]
        noise: Option<f32>,
        /// A named level (bg_bot::level::LEVELS: beginner, casual,
        /// intermediate, advanced, expert), instead of --plies and --noise.
        #[arg(long)]
        level: Option<String>,
    },
}

fn weights_path(variant: VariantArg) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../bot/weights/{}.bgnet", variant.name()))
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Train {
            variant,
            games,
            hidden,
            alpha,
            seed,
            every,
            out,
        } => {
            let out = out.unwrap_or_else(|| weights_path(variant));
            with_variant!(variant, |v, checkers| train(
                v, checkers, games, hidden, alpha, seed, every, &out
            ))
        }
        Command::Bench { corpus, one_ply } => bench(&corpus, one_ply),
        Command::Decisions {
            variant,
            games,
            against,
            seed,
            weights,
            record_other,
            plies,
        } => {
            let net = load(variant, weights)?;
            let record = Record {
                against,
                games,
                seed,
                other: record_other,
                plies,
            };
            with_variant!(variant, |v, checkers| decisions(v, &net, checkers, record))
        }
        Command::Duel {
            variant,
            games,
            against,
            seed,
            weights,
            against_weights,
            plies,
            noise,
            level,
        } => {
            let net = load(variant, weights)?;
            let (other_net, other_name) = match against_weights {
                Some(path) if matches!(against, Against::Net) => (
                    load(variant, Some(path.clone()))?,
                    format!("net {}", path.display()),
                ),
                Some(_) => bail!("--against-weights is for --against net"),
                None => (net.clone(), name(against).to_string()),
            };
            let plies = match level.as_deref() {
                Some(name) => {
                    let level =
                        bg_bot::level::level(name).with_context(|| format!("no level {name:?}"))?;
                    Search {
                        plies: level.plies,
                        noise: (level.noise > 0.0).then_some(level.noise),
                    }
                }
                None => Search { plies, noise },
            };
            let result = with_variant!(variant, |v, checkers| measure_at(
                v, &net, &other_net, checkers, plies, against, games, seed
            ))?;
            println!("net ({plies}) against {other_name}: {result}");
            Ok(())
        }
    }
}

/// The net in `weights`, or the committed one of `variant`.
fn load(variant: VariantArg, weights: Option<PathBuf>) -> Result<Net> {
    let path = weights.unwrap_or_else(|| weights_path(variant));
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    Net::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Which decisions `bg-bot decisions` prints.
struct Record {
    against: Against,
    games: u32,
    seed: u64,
    /// The other player's, not the net's.
    other: bool,
    /// The net's search.
    plies: u8,
}

/// Prints the net's decisions (or its opponent's) in games against
/// another player.
fn decisions<V: Variant>(variant: &V, net: &Net, checkers: u8, record: Record) -> Result<()> {
    let Record {
        against,
        games,
        seed,
        other: record_other,
        ..
    } = record;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut other = opponent(against, net, checkers, seed);
    let mut bot: Box<dyn Player<V>> = Box::new(SearchPlayer::<V>::new(net, checkers, record.plies));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for game in 0..games {
        let (mut bot_side, mut other_side) = (
            Recording {
                player: bot.as_mut(),
                lines: (!record_other).then(Vec::new),
            },
            Recording {
                player: other.as_mut(),
                lines: record_other.then(Vec::new),
            },
        );
        let players: [&mut dyn Player<V>; 2] = if game % 2 == 0 {
            [&mut bot_side, &mut other_side]
        } else {
            [&mut other_side, &mut bot_side]
        };
        bg_bot_train::duel::play_game(variant, &mut rng, players, &mut |_, _| {})?;
        let lines = bot_side.lines.or(other_side.lines).unwrap_or_default();
        for line in lines {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// A player whose plays are written down (when `lines` is kept) as
/// `bg-bot decisions` prints them.
struct Recording<'a, V: Variant> {
    player: &'a mut dyn Player<V>,
    lines: Option<Vec<String>>,
}

impl<V: Variant> Player<V> for Recording<'_, V> {
    fn choose(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: bg_engine::Seat,
        dice: bg_engine::Dice,
        plays: &[bg_engine::LegalPlay],
    ) -> Result<usize, RulesError> {
        use bg_engine::position_id::encode;
        let chosen = self.player.choose(variant, state, seat, dice, plays)?;
        if let Some(lines) = &mut self.lines {
            let mut results: Vec<String> =
                plays.iter().map(|lp| encode(&lp.result, seat)).collect();
            results.sort();
            lines.push(format!(
                "{} {} {} {} {}",
                encode(&variant.board(state), seat),
                dice.d1,
                dice.d2,
                encode(&plays[chosen].result, seat),
                results.join(" ")
            ));
        }
        Ok(chosen)
    }

    fn decide(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: bg_engine::Seat,
        dice: bg_engine::Dice,
        decision: &bg_variant_api::Decision,
    ) -> Result<usize, RulesError> {
        self.player.decide(variant, state, seat, dice, decision)
    }
}

fn name(against: Against) -> &'static str {
    match against {
        Against::Random => "random",
        Against::Heuristic => "heuristic",
        Against::Net => "the net at 0-ply",
    }
}

fn measure<V: Variant>(
    variant: &V,
    net: &Net,
    checkers: u8,
    against: Against,
    games: u32,
    seed: u64,
) -> Result<DuelResult> {
    let search = Search {
        plies: 0,
        noise: None,
    };
    measure_at(variant, net, net, checkers, search, against, games, seed)
}

/// How the net plays: its search, or a weaker level.
#[derive(Clone, Copy)]
struct Search {
    plies: u8,
    noise: Option<f32>,
}

impl std::fmt::Display for Search {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.noise {
            Some(noise) => write!(f, "0-ply, noise {noise}"),
            None => write!(f, "{}-ply", self.plies),
        }
    }
}

/// The net, searching as `search` says, against `against` (`other_net`
/// if that is a net).
#[allow(clippy::too_many_arguments)]
fn measure_at<V: Variant>(
    variant: &V,
    net: &Net,
    other_net: &Net,
    checkers: u8,
    search: Search,
    against: Against,
    games: u32,
    seed: u64,
) -> Result<DuelResult> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut player = SearchPlayer::<V>::new(net, checkers, search.plies).with_noise(
        search.noise.unwrap_or(0.0),
        StdRng::seed_from_u64(seed ^ 0x401e),
    );
    let mut other = opponent(against, other_net, checkers, seed);
    duel(variant, &mut player, other.as_mut(), games, &mut rng)
}

/// The player `against` names.
fn opponent<'a, V: Variant>(
    against: Against,
    net: &'a Net,
    checkers: u8,
    seed: u64,
) -> Box<dyn Player<V> + 'a> {
    match against {
        Against::Random => Box::new(RandomPlayer(StdRng::seed_from_u64(seed ^ 0x5eed))),
        Against::Heuristic => Box::new(HeuristicPlayer),
        Against::Net => Box::new(SearchPlayer::<V>::new(net, checkers, 0)),
    }
}

#[allow(clippy::too_many_arguments)]
fn train<V: Variant>(
    variant: &V,
    checkers: u8,
    games: u32,
    hidden: usize,
    alpha: f32,
    seed: u64,
    every: u32,
    out: &std::path::Path,
) -> Result<()> {
    let mut rng = StdRng::seed_from_u64(seed);
    let net = Net::new(hidden, &mut rng);
    let mut trainer = Trainer {
        variant,
        checkers,
        net,
        alpha,
        rng,
    };
    let started = Instant::now();
    println!("training: {games} games, {hidden} hidden units, alpha {alpha}, seed {seed}");
    // The net at the last measure, to measure the next one against.
    let mut previous: Option<Net> = None;
    for game in 1..=games {
        trainer.train_game()?;
        if game % every == 0 || game == games {
            let random = measure(variant, &trainer.net, checkers, Against::Random, 500, 7)?;
            let heuristic = measure(variant, &trainer.net, checkers, Against::Heuristic, 500, 7)?;
            let against_previous = match &previous {
                Some(before) => {
                    let mut now = SearchPlayer::<V>::new(&trainer.net, checkers, 0);
                    let mut then = SearchPlayer::<V>::new(before, checkers, 0);
                    let mut rng = StdRng::seed_from_u64(7);
                    let result = duel(variant, &mut now, &mut then, 500, &mut rng)?;
                    format!(" vs_previous={result}")
                }
                None => String::new(),
            };
            println!(
                "games={game} seconds={:.0} vs_random={random} vs_heuristic={heuristic}{against_previous}",
                started.elapsed().as_secs_f64()
            );
            previous = Some(trainer.net.clone());
            std::io::stdout().flush()?;
            std::fs::write(out, trainer.net.to_bytes())
                .with_context(|| format!("writing {}", out.display()))?;
        }
    }
    println!("weights written to {}", out.display());
    Ok(())
}

/// Standard positions of a corpus, with their dice and legal plays.
type Positions = Vec<(bg_engine::Board, bg_engine::Dice, Vec<bg_engine::LegalPlay>)>;

fn read_positions(corpus: &std::path::Path) -> Result<Positions> {
    use bg_engine::{Dice, Seat, position_id};
    let text =
        std::fs::read_to_string(corpus).with_context(|| format!("reading {}", corpus.display()))?;
    let variant = bg_standard_rules::Standard;
    let mut positions = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 3 {
            continue;
        }
        let board = position_id::decode(fields[0], Seat::White)?;
        let dice = Dice::new(fields[1].parse()?, fields[2].parse()?)?;
        let state = variant
            .setup_position(&board, &bg_variant_api::Options::new())?
            .state;
        let mut plays = Vec::new();
        variant.legal_plays(&state, Seat::White, dice, &mut plays);
        positions.push((board, dice, plays));
    }
    Ok(positions)
}

fn bench(corpus: &std::path::Path, one_ply: usize) -> Result<()> {
    use bg_bot::encode::{INPUTS, encode};
    use bg_engine::Seat;
    let positions = read_positions(corpus)?;
    let net = bg_bot::trained("standard").context("no standard net")?;
    let results: Vec<&bg_engine::Board> = positions
        .iter()
        .flat_map(|(_, _, plays)| plays.iter().map(|lp| &lp.result))
        .collect();
    // One evaluation: encoding and the forward pass, over every result.
    let mut inputs = [0.0; INPUTS];
    let mut sink = 0.0f32;
    let started = Instant::now();
    for board in &results {
        encode(board, Seat::White, 15, &mut inputs);
        sink += net.outputs(&inputs)[0];
    }
    let per_eval = started.elapsed().as_nanos() as f64 / results.len() as f64;
    // The service's own search (`search::rank`, what a bot seat, `Hint`
    // and the duels' players run), the rules in process as the engine's
    // `Rules`: the state as bytes, decoded at each call.
    let some = &positions[..one_ply.min(positions.len())];
    let rules = bg_variant_api::in_process::InProcess::new(bg_standard_rules::Standard);
    let eval = bg_bot::search::Evaluator {
        net: &net,
        checkers: 15,
    };
    let mut service =
        |positions: &[(bg_engine::Board, bg_engine::Dice, Vec<bg_engine::LegalPlay>)],
         plies: u8|
         -> Result<f64> {
            let states = positions
                .iter()
                .map(|(board, _, _)| Ok(rules.setup_at(board)?.state))
                .collect::<Result<Vec<_>>>()?;
            let started = Instant::now();
            for ((_, dice, plays), state) in positions.iter().zip(&states) {
                let ranked =
                    bg_bot::search::rank(&rules, eval, state, Seat::White, *dice, plays, plies)?;
                sink += ranked.first().map_or(0.0, |r| r.value.equity);
            }
            Ok(started.elapsed().as_secs_f64() * 1e6 / positions.len().max(1) as f64)
        };
    let per_zero = service(&positions, 0)?;
    let per_one = service(some, 1)?;
    // A cube decision at 0-ply: the position before the roll valued by
    // the net, then the match model (a 7-point match at 3-away 4-away,
    // the cube centred), and the model alone on those values.
    let met = bg_bot::met::Met::built_in().context("the match equity table")?;
    let score = bg_bot::cube::MatchScore {
        away: [3, 4],
        crawford_played: false,
    };
    let cube = |board: &bg_engine::Board, value: &bg_bot::search::Evaluation| {
        let life = bg_bot::cube::cube_life(board, Seat::White);
        let owner = bg_bot::cube::CubeOwner::Centred;
        bg_bot::cube::CubeEquities::in_match(value, owner, 1, score, met, life)
    };
    let started = Instant::now();
    let mut values = Vec::with_capacity(positions.len());
    for (board, _, _) in &positions {
        let value = eval.before_roll(board, Seat::White);
        sink += cube(board, &value).no_double;
        values.push(value);
    }
    let per_cube = started.elapsed().as_secs_f64() * 1e6 / positions.len() as f64;
    let started = Instant::now();
    for ((board, _, _), value) in positions.iter().zip(&values) {
        sink += cube(board, value).double_take;
    }
    let per_model = started.elapsed().as_nanos() as f64 / positions.len() as f64;
    std::hint::black_box(sink);
    println!(
        "positions={} results={} ns_per_evaluation={per_eval:.0} us_per_0ply={per_zero:.1} us_per_1ply={per_one:.0} (1-ply over {} positions) us_per_cube_0ply={per_cube:.1} ns_per_cube_model={per_model:.0}",
        positions.len(),
        results.len(),
        some.len()
    );
    Ok(())
}
