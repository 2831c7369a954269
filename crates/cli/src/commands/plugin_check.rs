//! `bgctl plugin check FILE`: a plugin author's conformance suite, run on
//! any plugin file loaded exactly as the server loads it.
//!
//! It checks the plugin's ABI and info, then plays random games through
//! the engine's real match flow (the server's `Match` and the host's
//! `VariantRules`), checking at every step what the host relies on: the
//! host's own checks of every board (15 checkers a side, no point held by
//! both), legal plays the same when asked again and free of duplicate
//! results, a played result reached, every game ending, each outcome
//! among the variant's win levels, a scoreboard using only declared
//! names, a choice not on offer refused. Damaged state bytes, bad
//! options and impossible start positions must be refused with an
//! error, never a fault. It says what it checked and stops at the first
//! failure, naming the game, the action and the position that shows it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bg_engine::game::{
    Command, CommandError, DiceSource, Event, Match, MatchSettings, Phase, RulesErrorKind,
};
use bg_engine::{Board, Dice, LegalPlay, Seat, position_id};
use bg_plugin_host::{Plugin, PluginHost, VariantRules};
use bg_variant_api::{Capabilities, Options};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::parse::parse_options;

/// What `bgctl plugin check` takes.
#[derive(clap::Args)]
pub struct Args {
    /// The plugin file (.so, .dylib or .dll).
    pub file: PathBuf,
    /// Random matches to play.
    #[arg(long, default_value_t = 500)]
    pub games: u32,
    /// The seed of the random matches (a failure says how to replay it).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// An option of the variant, `name=value` (repeatable).
    #[arg(long = "option")]
    pub options: Vec<String>,
    /// Actions after which a game that has not ended fails the check.
    #[arg(long, default_value_t = 20_000)]
    pub max_actions: u32,
}

/// What `bgctl plugin check` is asked.
struct Settings {
    games: u32,
    seed: u64,
    options: Options,
    /// The most actions one game may take before it counts as endless.
    max_actions: u32,
}

/// Dice from a seeded generator: a failure is reproduced with `--seed`.
struct Seeded(StdRng);

impl DiceSource for Seeded {
    fn die(&mut self) -> u8 {
        self.0.random_range(1..=6)
    }
}

/// Time spent in the plugin's legal-play search.
#[derive(Default)]
struct Timing {
    calls: u64,
    total: Duration,
    max: Duration,
}

impl Timing {
    fn add(&mut self, took: Duration) {
        self.calls += 1;
        self.total += took;
        self.max = self.max.max(took);
    }
}

pub fn run(args: Args) -> Result<()> {
    check(
        &args.file,
        &Settings {
            games: args.games,
            seed: args.seed,
            options: parse_options(&args.options)?.into_iter().collect(),
            max_actions: args.max_actions,
        },
    )
}

fn check(file: &Path, settings: &Settings) -> Result<()> {
    let plugin = load(file)?;
    let info = plugin.info();
    let caps = plugin.capabilities();
    println!(
        "loaded {}: variant {} {} (built with bg-variant-api {}), {} option(s), win levels up to {}",
        file.display(),
        plugin.name(),
        plugin.version(),
        plugin.api_version(),
        info.options.len(),
        plugin.max_win_level()
    );
    bad_options(&plugin)?;
    println!("  unknown options and values not allowed: refused as INVALID_OPTION");
    if caps.contains(Capabilities::SETUP_POSITION) {
        println!("  start positions that are no boards: refused with an error");
    }
    let rules = VariantRules::new(plugin.clone(), settings.options.clone());
    let mut rng = StdRng::seed_from_u64(settings.seed);
    let mut timing = Timing::default();
    let (mut actions, mut ended) = (0u64, 0u64);
    for game in 1..=settings.games {
        let played = play_one(&plugin, &rules, caps, settings, &mut rng, &mut timing)
            .with_context(|| {
                format!(
                    "game {game} of seed {} (run again with --seed {} --games {game})",
                    settings.seed, settings.seed
                )
            })?;
        actions += played.actions;
        ended += played.games_ended;
    }
    println!(
        "  {} matches ({} games ended, {actions} actions) through the engine's match flow: every board checked, legal plays the same when asked again and without duplicates, each played result reached, each outcome among the win levels",
        settings.games, ended
    );
    println!(
        "  damaged state bytes: refused with an error, never a fault ({} states tried)",
        settings.games.min(200) * DAMAGES
    );
    if timing.calls > 0 {
        println!(
            "  legal plays: {} calls, {:.1} µs each on average, {:.1} µs at most",
            timing.calls,
            timing.total.as_secs_f64() * 1e6 / timing.calls as f64,
            timing.max.as_secs_f64() * 1e6
        );
    }
    println!("plugin check passed");
    Ok(())
}

/// The plugin, loaded from a folder of its own as the server loads one
/// (a private copy, the ABI and layout checked).
fn load(file: &Path) -> Result<Arc<Plugin>> {
    let folder = tempfile::tempdir().context("a scratch folder")?;
    let name = file
        .file_name()
        .with_context(|| format!("{} names no file", file.display()))?;
    std::fs::copy(file, folder.path().join(name))
        .with_context(|| format!("reading {}", file.display()))?;
    let host = PluginHost::new(folder.path());
    let report = host.scan().context("loading the plugin")?;
    if let Some(skipped) = report.skipped.first() {
        bail!("the server would not load it: {}", skipped.reason);
    }
    let plugin = report
        .loaded
        .first()
        .cloned()
        .context("the server would not load it: no plugin found in the file")?;
    Ok(plugin)
}

/// Unknown options and values outside those allowed are refused.
fn bad_options(plugin: &Plugin) -> Result<()> {
    let refused = |options: Options, what: &str| -> Result<()> {
        match plugin.new_game(&options) {
            Err(e) if e.kind == RulesErrorKind::InvalidOption => Ok(()),
            Err(e) => bail!("{what}: refused as {}, not INVALID_OPTION: {e}", e.reason()),
            Ok(_) => bail!("{what}: accepted"),
        }
    };
    refused(
        Options::from([("no_such_option".to_string(), "1".to_string())]),
        "an unknown option",
    )?;
    for option in &plugin.info().options {
        if option.allowed_values.is_empty() {
            continue;
        }
        refused(
            Options::from([(option.name.clone(), "not-one-of-them".to_string())]),
            &format!("option {} with a value not allowed", option.name),
        )?;
    }
    Ok(())
}

/// What one match came to.
struct Played {
    actions: u64,
    games_ended: u64,
}

/// How many damaged copies of a state are tried.
const DAMAGES: u32 = 4;

fn play_one(
    plugin: &Plugin,
    rules: &VariantRules,
    caps: Capabilities,
    settings: &Settings,
    rng: &mut StdRng,
    timing: &mut Timing,
) -> Result<Played> {
    let mut dice = Seeded(StdRng::seed_from_u64(rng.random()));
    let match_settings = MatchSettings {
        match_length: rng.random_range(1..=5),
        ..MatchSettings::default()
    };
    let (mut m, events) =
        Match::new(match_settings, rules, &mut dice).context("starting a match")?;
    let mut played = Played {
        actions: 0,
        games_ended: 0,
    };
    check_events(plugin, caps, &events, &mut played)?;
    damaged_states(plugin, &m.variant_state, rng)?;
    if caps.contains(Capabilities::SETUP_POSITION) {
        impossible_boards(plugin, &settings.options)?;
    }
    let mut in_game = 0u32;
    while m.phase != Phase::MatchOver {
        in_game += 1;
        if in_game > settings.max_actions {
            bail!(
                "a game went on for {} actions without ending, at {}",
                settings.max_actions,
                position(plugin, &m.variant_state, m.turn)
            );
        }
        let seat = m.to_act().context("a match waiting for nobody")?;
        let mut command = next_command(plugin, &m, rng, timing)?;
        // A double the cube does not allow now: the seat rolls instead.
        if command == Command::Double
            && let Err(CommandError::CubeUnavailable(_)) =
                m.clone().apply(seat, &command, rules, &mut dice)
        {
            command = Command::Roll;
        }
        let events = m.apply(seat, &command, rules, &mut dice).with_context(|| {
            format!(
                "{seat}'s {} refused at {}",
                said(&command),
                position(plugin, &m.variant_state, m.turn)
            )
        })?;
        played.actions += 1;
        if plugin.shows_scoreboard() {
            plugin.scoreboard(&m.variant_state).with_context(|| {
                format!(
                    "the scoreboard at {}",
                    position(plugin, &m.variant_state, m.turn)
                )
            })?;
        }
        if check_events(plugin, caps, &events, &mut played)? {
            in_game = 0;
        }
    }
    Ok(played)
}

/// What the seat to act does: a random legal play, a random choice of a
/// decision, taking or dropping a double, rolling (sometimes doubling).
fn next_command(
    plugin: &Plugin,
    m: &Match,
    rng: &mut StdRng,
    timing: &mut Timing,
) -> Result<Command> {
    Ok(match m.phase {
        Phase::Roll if m.cube_in_play && rng.random_bool(0.05) => Command::Double,
        Phase::Roll => Command::Roll,
        Phase::Move => {
            let dice = m.dice.context("the move phase has no dice")?;
            let legal = legal_plays(plugin, &m.variant_state, m.turn, dice, timing)?;
            let chosen = &legal[rng.random_range(0..legal.len())];
            Command::Move { play: chosen.play }
        }
        Phase::CubeOffered if rng.random_bool(0.7) => Command::Take,
        Phase::CubeOffered => Command::Drop,
        Phase::ResignationOffered => Command::DeclineResignation,
        Phase::Decision => {
            let decision = m
                .pending_decision
                .as_ref()
                .context("the decision phase has no decision")?;
            if decision.choices.is_empty() {
                bail!("a decision with no choices");
            }
            // A choice not on offer is the player's mistake, not a fault.
            match plugin.decide(&m.variant_state, decision.seat, "not-a-choice") {
                Err(e) if e.kind == RulesErrorKind::IllegalDecision => {}
                Err(e) => bail!(
                    "a choice not on offer refused as {}, not ILLEGAL_DECISION: {e}",
                    e.reason()
                ),
                Ok(_) => bail!("a choice not on offer (\"not-a-choice\") accepted"),
            }
            Command::Decide {
                choice: decision.choices[rng.random_range(0..decision.choices.len())].clone(),
            }
        }
        Phase::MatchOver => bail!("the match is over"),
    })
}

/// The legal plays, asked twice (the same answer both times) and without
/// two plays reaching one result.
fn legal_plays(
    plugin: &Plugin,
    state: &[u8],
    seat: Seat,
    dice: Dice,
    timing: &mut Timing,
) -> Result<Vec<LegalPlay>> {
    // The host keeps each thread's last answer: asking other dice first
    // makes each asking reach the plugin.
    let other = Dice::new(dice.d1 % 6 + 1, dice.d2).context("dice")?;
    let mut first = Vec::new();
    let mut scratch = Vec::new();
    plugin.legal_plays(state, seat, other, &mut scratch)?;
    let start = Instant::now();
    plugin
        .legal_plays(state, seat, dice, &mut first)
        .with_context(|| format!("legal plays of {dice} at {}", position(plugin, state, seat)))?;
    timing.add(start.elapsed());
    plugin.legal_plays(state, seat, other, &mut scratch)?;
    let mut again = Vec::new();
    plugin.legal_plays(state, seat, dice, &mut again)?;
    if first != again {
        bail!(
            "the legal plays of {dice} differ when asked again, at {}",
            position(plugin, state, seat)
        );
    }
    if first.is_empty() {
        bail!(
            "no legal play of {dice} (a seat that cannot move has the empty play), at {}",
            position(plugin, state, seat)
        );
    }
    let mut results: Vec<&Board> = first.iter().map(|lp| &lp.result).collect();
    results.sort_unstable();
    if results.windows(2).any(|w| w[0] == w[1]) {
        bail!(
            "two legal plays of {dice} reach the same board (a result is listed once), at {}",
            position(plugin, state, seat)
        );
    }
    Ok(first)
}

/// Checks the outcome of every game that ended; returns whether one did.
fn check_events(
    plugin: &Plugin,
    caps: Capabilities,
    events: &[Event],
    played: &mut Played,
) -> Result<bool> {
    let mut ended = false;
    for event in events {
        if let Event::GameEnded { result, .. } = event {
            played.games_ended += 1;
            ended = true;
            let top = plugin.max_win_level();
            match result.winner {
                None if !caps.contains(Capabilities::DRAWS) => {
                    bail!("a draw, and the variant does not say it has draws")
                }
                Some(_) if result.level == 0 || result.level > top => bail!(
                    "a win at level {}, outside the variant's levels 1 to {top}",
                    result.level
                ),
                _ => {}
            }
        }
    }
    Ok(ended)
}

/// Damaged copies of a good state: each must be refused with an error
/// (or read as some other state), never answered with a fault.
fn damaged_states(plugin: &Plugin, state: &[u8], rng: &mut StdRng) -> Result<()> {
    let mut flipped = state.to_vec();
    if let Some(byte) = flipped.get_mut(rng.random_range(0..state.len().max(1))) {
        *byte ^= 0x5a;
    }
    let junk: Vec<u8> = (0..state.len().max(8)).map(|_| rng.random()).collect();
    let damages = [
        ("empty", Vec::new()),
        ("cut short", state[..state.len() / 2].to_vec()),
        ("a byte flipped", flipped),
        ("random bytes", junk),
    ];
    for (what, bytes) in damages {
        if let Err(e) = plugin.board(&bytes)
            && e.kind == RulesErrorKind::VariantFault
        {
            bail!("state bytes {what} answered with a fault, not an error: {e}");
        }
        let mut plays = Vec::new();
        let dice = Dice::new(3, 1).context("dice")?;
        if let Err(e) = plugin.legal_plays(&bytes, Seat::White, dice, &mut plays)
            && e.kind == RulesErrorKind::VariantFault
        {
            bail!("state bytes {what} answered with a fault, not an error: {e}");
        }
    }
    Ok(())
}

/// Boards that are no boards (a 16th checker, a point held by both
/// sides) given to set up a position: refused with an error, never a
/// fault, never accepted.
fn impossible_boards(plugin: &Plugin, options: &Options) -> Result<()> {
    let mut extra = Board::standard_start();
    extra.checkers[0][6] += 1;
    // A white checker moved onto the point black's 13 is by the
    // variant's geometry (white's 12, or its 1 the same way round), where
    // black has five.
    let mut shared = Board::standard_start();
    let blacks_13 = plugin.geometry().facing(13);
    shared.checkers[0][usize::from(blacks_13)] += 1;
    shared.checkers[0][13] -= 1;
    for (what, board) in [("a 16th checker", extra), ("a point held by both", shared)] {
        match plugin.setup_position(&board, options) {
            Err(e) if e.kind == RulesErrorKind::VariantFault => {
                bail!("a board with {what} set up: a fault, not an error: {e}")
            }
            Err(_) => {}
            Ok(_) => bail!("a board with {what} accepted as a start position"),
        }
    }
    Ok(())
}

/// A position as a user can look at it: gnubg's Position ID from the
/// seat on roll (the board, when the plugin cannot say it).
fn position(plugin: &Plugin, state: &[u8], seat: Seat) -> String {
    match plugin.board(state) {
        Ok(board) => format!(
            "Position ID {} ({seat} on roll)",
            position_id::encode(&board, seat)
        ),
        Err(e) => format!("a state the plugin cannot show ({e})"),
    }
}

/// A command as a player says it.
fn said(command: &Command) -> String {
    match command {
        Command::Move { play } => format!("play {play}"),
        Command::Decide { choice } => format!("decision {choice:?}"),
        other => format!("{other:?}").to_lowercase(),
    }
}
