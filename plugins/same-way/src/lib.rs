//! Long nardy and Fevga (docs/nardy-fevga.md): the backgammon family's
//! other branch, where both sides move the same way round the board from
//! diagonally opposite starts, a single checker holds a point, and nothing
//! is ever hit. Two variants, [`LongNardy`] and [`Fevga`], each exported by
//! its own plugin (`plugins/long_nardy`, `plugins/fevga`); they share the
//! geometry ([`Geometry::SameWay`], declared in their `VariantInfo`), the
//! movement and the search ([`moves`]), and differ in the rules that
//! restrict it and in their options.
//!
//! Points are each side's own (its start 24, its home 1-6); this crate
//! must never do I/O or keep state between calls.

pub mod moves;

use bg_variant_api::engine::game::FirstMove;
use bg_variant_api::engine::{Board, CHECKERS, Dice, Geometry, LegalPlay, OFF, Play, Seat};
use bg_variant_api::{
    Capabilities, Opening, OptionSpec, Options, Outcome, Setup, Transition, Variant, VariantError,
    VariantInfo, check_option_names, option_value,
};
use serde::{Deserialize, Serialize};

use crate::moves::START;

/// Which of the two games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Game {
    LongNardy,
    Fevga,
}

/// The options of one game (docs/nardy-fevga.md §4), fixed for its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    pub game: Game,
    /// The doubles that let two checkers leave the head on a side's first
    /// turn (long nardy, §2.4): 6-6, 4-4 and 3-3 by default.
    pub head_doubles: [u8; 6],
    /// `head_exception=strict`: the second head checker only when a lone
    /// checker is stopped by the opponent's head.
    pub head_strict: bool,
    /// Long nardy's 3-point result (`koks=on`, §2.7).
    pub koks: bool,
    /// The block rules judged on the play's final position only
    /// (`block_timing=end`) instead of after every move.
    pub block_at_end: bool,
    /// Fevga: release needs a checker strictly past the opponent's start.
    pub release_pass: bool,
    /// Fevga: no six points of one's start quarter while checkers remain
    /// on the start (§3.5 a).
    pub start_quarter: bool,
    /// Fevga: the unblocking duty (§3.5 b).
    pub trap_duty: bool,
    /// Fevga: long nardy's block rule as well (§3.5 c).
    pub nardy_block: bool,
    pub cube: bool,
    /// The starter plays the opening dice instead of throwing afresh.
    pub opening_dice: bool,
}

/// A game in progress: the board and the options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SameWayState {
    pub board: Board,
    pub rules: Rules,
}

bg_variant_api::serde_state!(SameWayState);

/// Each side's 15 checkers on its own 24-point (the head, the mother).
pub fn start_board() -> Board {
    Board::from_points(&[(START, CHECKERS)], &[(START, CHECKERS)])
}

fn option(name: &str, description: &str, allowed: &[&str]) -> OptionSpec {
    OptionSpec {
        name: name.into(),
        description: description.into(),
        allowed_values: allowed.iter().map(|s| s.to_string()).collect(),
        default_value: allowed[0].into(),
    }
}

/// The options both games take.
fn common_options() -> Vec<OptionSpec> {
    vec![
        option(
            "opening",
            "fresh_roll: the winner of the opening throw throws both dice afresh (a double is possible); use_opening_dice: he plays the two dice of the opening throw.",
            &["fresh_roll", "use_opening_dice"],
        ),
        option(
            "block_timing",
            "When the block rules are judged: after every single move (submove), or on the play's final position (end).",
            &["submove", "end"],
        ),
        option(
            "cube",
            "The doubling cube (not used traditionally).",
            &["off", "on"],
        ),
    ]
}

fn on(options: &Options, name: &str, default: &str) -> Result<bool, VariantError> {
    let other = if default == "on" { "off" } else { "on" };
    Ok(option_value(options, name, &[default, other], default)? == "on")
}

fn common_rules(game: Game, options: &Options) -> Result<Rules, VariantError> {
    Ok(Rules {
        game,
        head_doubles: [6, 4, 3, 0, 0, 0],
        head_strict: false,
        koks: false,
        block_at_end: option_value(options, "block_timing", &["submove", "end"], "submove")?
            == "end",
        release_pass: false,
        start_quarter: true,
        trap_duty: true,
        nardy_block: false,
        cube: on(options, "cube", "off")?,
        opening_dice: option_value(
            options,
            "opening",
            &["fresh_roll", "use_opening_dice"],
            "fresh_roll",
        )? == "use_opening_dice",
    })
}

fn long_nardy_rules(options: &Options) -> Result<Rules, VariantError> {
    check_option_names(
        options,
        &[
            "opening",
            "block_timing",
            "cube",
            "head_doubles",
            "head_exception",
            "koks",
        ],
    )?;
    Ok(Rules {
        head_doubles: match option_value(options, "head_doubles", &["643", "64", "all"], "643")? {
            "64" => [6, 4, 0, 0, 0, 0],
            "all" => [1, 2, 3, 4, 5, 6],
            _ => [6, 4, 3, 0, 0, 0],
        },
        head_strict: option_value(options, "head_exception", &["classic", "strict"], "classic")?
            == "strict",
        koks: on(options, "koks", "off")?,
        ..common_rules(Game::LongNardy, options)?
    })
}

fn fevga_rules(options: &Options) -> Result<Rules, VariantError> {
    check_option_names(
        options,
        &[
            "opening",
            "block_timing",
            "cube",
            "release",
            "start_quarter",
            "trap_duty",
            "nardy_block",
        ],
    )?;
    Ok(Rules {
        release_pass: option_value(options, "release", &["reach", "pass"], "reach")? == "pass",
        start_quarter: on(options, "start_quarter", "on")?,
        trap_duty: on(options, "trap_duty", "on")?,
        nardy_block: on(options, "nardy_block", "off")?,
        ..common_rules(Game::Fevga, options)?
    })
}

/// A board of these games: 15 a side, no point shared, no bar.
fn check_board(board: &Board) -> Result<(), VariantError> {
    board
        .validate_in(Geometry::SameWay, CHECKERS)
        .map_err(|e| VariantError::InvalidInput(e.to_string()))
}

fn setup(board: Board, rules: Rules) -> Setup<SameWayState> {
    Setup {
        state: SameWayState { board, rules },
        opening: if rules.opening_dice {
            Opening::PlayOpeningDice
        } else {
            Opening::ThrowAgain
        },
        cube: rules.cube,
        // The winner of a game starts the next (§2.2, §3.2).
        first_move: Some(FirstMove::Winner),
    }
}

/// The result of a game `winner` has won (or would win now, `loser`
/// conceding): 2 when the loser has borne off none (mars, a double), 1
/// otherwise; in long nardy with `koks=on`, 3 when the loser has borne
/// off none and has no checker in his home board either (§2.7, §3.7).
fn result(board: &Board, winner: Seat, rules: &Rules, by_bearing_off: bool) -> Outcome {
    let loser = winner.other();
    let none_off = board.off(loser) == 0;
    let none_home = (1..=6).all(|p| board.count(loser, p) == 0);
    let (level, kind) = match (rules.game, none_off) {
        (Game::LongNardy, true) if rules.koks && none_home => (3, "koks"),
        (Game::LongNardy, true) => (2, "mars"),
        (Game::LongNardy, false) => (1, "oin"),
        (Game::Fevga, true) => (2, "double"),
        (Game::Fevga, false) => (1, "single"),
    };
    Outcome {
        winner: Some(winner),
        level,
        kind: kind.into(),
        by_bearing_off,
    }
}

/// The board `play`'s moves reach from `board`, each one checker of
/// `seat` from one point to a lower one, or off.
fn replay(board: &Board, seat: Seat, play: &Play) -> Result<Board, VariantError> {
    let mut next = *board;
    for m in play.moves() {
        let from = usize::from(m.from);
        if !(1..=24).contains(&m.from) || (m.to != OFF && m.to >= m.from) {
            return Err(VariantError::IllegalPlay(format!(
                "{}/{}: a checker moves from a point down to a lower one, or off",
                m.from, m.to
            )));
        }
        if next.checkers[seat.index()][from] == 0 {
            return Err(VariantError::IllegalPlay(format!(
                "no checker of yours on {}",
                m.from
            )));
        }
        next.checkers[seat.index()][from] -= 1;
        next.checkers[seat.index()][usize::from(m.to)] += 1;
    }
    Ok(next)
}

/// What both games answer alike.
fn after_play(state: &SameWayState, seat: Seat, chosen: &LegalPlay) -> Transition<SameWayState> {
    let next = SameWayState {
        board: chosen.result,
        rules: state.rules,
    };
    let mut transition = Transition::to(next);
    if next.board.off(seat) == CHECKERS {
        transition.outcome = Some(result(&next.board, seat, &next.rules, true));
    }
    transition
}

/// Long nardy (длинные нарды, docs/nardy-fevga.md §2).
#[derive(Default)]
pub struct LongNardy;

/// Fevga (Φεύγα, docs/nardy-fevga.md §3).
#[derive(Default)]
pub struct Fevga;

impl LongNardy {
    /// The rules of a game with `options`.
    pub fn rules(&self, options: &Options) -> Result<Rules, VariantError> {
        long_nardy_rules(options)
    }
}

impl Fevga {
    /// The rules of a game with `options`.
    pub fn rules(&self, options: &Options) -> Result<Rules, VariantError> {
        fevga_rules(options)
    }
}

/// The methods both variants answer alike, over the rules their options
/// make (`Self::rules`).
macro_rules! same_way_methods {
    () => {
        fn capabilities(&self) -> Capabilities {
            Capabilities::CUBE.union(Capabilities::SETUP_POSITION)
        }

        fn new_game(&self, options: &Options) -> Result<Setup<SameWayState>, VariantError> {
            Ok(setup(start_board(), self.rules(options)?))
        }

        fn setup_position(
            &self,
            board: &Board,
            options: &Options,
        ) -> Result<Setup<SameWayState>, VariantError> {
            check_board(board)?;
            Ok(setup(*board, self.rules(options)?))
        }

        fn board(&self, state: &SameWayState) -> Board {
            state.board
        }

        fn legal_plays(
            &self,
            state: &SameWayState,
            seat: Seat,
            dice: Dice,
            out: &mut Vec<LegalPlay>,
        ) {
            moves::legal_plays(&state.board, seat, dice, &state.rules, out);
        }

        fn play_result(
            &self,
            state: &SameWayState,
            seat: Seat,
            play: &Play,
        ) -> Result<Board, VariantError> {
            replay(&state.board, seat, play)
        }

        fn after_play(
            &self,
            state: &SameWayState,
            seat: Seat,
            chosen: &LegalPlay,
        ) -> Transition<SameWayState> {
            after_play(state, seat, chosen)
        }

        fn concede(&self, state: &SameWayState, loser: Seat) -> Outcome {
            result(&state.board, loser.other(), &state.rules, false)
        }
    };
}

impl Variant for LongNardy {
    type State = SameWayState;

    fn info(&self) -> VariantInfo {
        let mut options = common_options();
        options.extend([
            option(
                "head_doubles",
                "The doubles that let two checkers leave the head on a side's first turn: 643 (6-6, 4-4, 3-3), 64, all.",
                &["643", "64", "all"],
            ),
            option(
                "head_exception",
                "classic: the first-turn double always allows a second head checker; strict: only when a lone checker is stopped by the opponent's head.",
                &["classic", "strict"],
            ),
            option(
                "koks",
                "on: 3 points when the loser has borne off none and has no checker in his home board (a minority's rule).",
                &["off", "on"],
            ),
        ]);
        VariantInfo {
            name: "long_nardy".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Long nardy (длинные нарды): both sides move the same way round the board from their heads, one checker holds a point and nothing is hit; one checker a turn leaves the head; no six points in a row unless an opposing checker is past them.".into(),
            options,
            // A resignation offers at most a mars: koks is a minority's
            // rule (`koks=on`), scored by play or by resigning by position.
            max_win_level: 2,
            win_kinds: vec!["oin".into(), "mars".into(), "koks".into()],
            geometry: bg_variant_api::proto::Geometry::SameWay as i32,
            ..Default::default()
        }
    }

    same_way_methods!();
}

impl Variant for Fevga {
    type State = SameWayState;

    fn info(&self) -> VariantInfo {
        let mut options = common_options();
        options.extend([
            option(
                "release",
                "When the first checker frees the others: reach (it gets to the opponent's start point or past it), pass (strictly past it).",
                &["reach", "pass"],
            ),
            option(
                "start_quarter",
                "on: no side may hold all six points of its start quarter while checkers remain on its start (off: Moultezim).",
                &["on", "off"],
            ),
            option(
                "trap_duty",
                "on: a side walling in all the opponent's checkers on one point must open the wall when it can (off: Moultezim).",
                &["on", "off"],
            ),
            option(
                "nardy_block",
                "on: long nardy's rule too: no six points in a row unless an opposing checker is past them.",
                &["off", "on"],
            ),
        ]);
        VariantInfo {
            name: "fevga".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Fevga (Greek tavli's third game): both sides move the same way round the board from their starts, one checker holds a point and nothing is hit; the first checker must reach the opponent's start before another leaves.".into(),
            options,
            max_win_level: 2,
            win_kinds: vec!["single".into(), "double".into()],
            geometry: bg_variant_api::proto::Geometry::SameWay as i32,
            ..Default::default()
        }
    }

    same_way_methods!();
}
