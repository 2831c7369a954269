//! Grand Trictrac (docs/trictrac.md): the French game on the backgammon
//! board where nothing is captured and the partie is won on points.
//!
//! - Movement (§2, [`moves`]): 15 checkers on each talon; a doublet is two
//!   moves; any opposing checker blocks; tout d'une through a rest; the
//!   rest-corner laws (taken and left two at once, never the opponent's,
//!   by power only when not by effect); the opponent's jans closed while
//!   he can still fill them; the most dice, the larger die, fill or keep;
//!   bearing off by the Parisian method.
//! - Scoring (§3, [`jans`]): every jan of the table, judged on the
//!   position before the move, for the roller or his opponent.
//! - Marking (§4, [`tally`]): the roller marks first; a hole won on his own
//!   roll asks him to stay or go (a [`Decision`]); then he plays; then the
//!   opponent marks what the roll gave him. Twelve points a hole, with
//!   bredouille; twelve holes the partie, with the pavillon and the
//!   stake. Going, or bearing off the last checker first, resets the
//!   checkers (a relevé) and the same player rolls again.
//!
//! Fields are the mover's (f1 his talon ... f24); on the engine's board
//! field f is the mover's point `25 - f` ([`view`]). This crate must never
//! do I/O or keep state between calls.

pub mod jans;
pub mod moves;
pub mod tally;
pub mod view;

use bg_variant_api::engine::{Board, CHECKERS, Dice, LegalPlay, Move, OFF, Play, Seat};
use bg_variant_api::{
    Capabilities, Counter, Decision, FirstMove, Opening, OptionSpec, Options, Outcome, ScoreEvent,
    Scoreboard, Setup, StateCodec, Transition, Variant, VariantError, VariantInfo,
    check_option_names, option_value,
};
use serde::{Deserialize, Serialize};

use crate::jans::Scored;
use crate::tally::{PARTIE, Pavillon, SeatTally, Stake};
use crate::view::View;

/// The variant.
#[derive(Default)]
pub struct TricTrac;

/// The options of one game that hold for its whole length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    pub stake: Stake,
    /// The pile de misère scores (§3.8; off by default).
    pub pile_de_misere: bool,
    /// The winner of the opening throw throws both dice afresh instead of
    /// playing the opening dice (the older method, §1).
    pub throw_again: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            stake: Stake::Simple,
            pile_de_misere: false,
            throw_again: false,
        }
    }
}

/// A partie in progress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TricTracState {
    pub board: Board,
    pub rules: Rules,
    /// Points, holes, bredouille and rolls of the relevé, white first.
    pub tally: [SeatTally; 2],
    pub pavillon: Pavillon,
    /// The relevé in progress, from 1.
    pub round: u32,
    /// Everything the last roll scored, for both players.
    pub last_roll: Vec<ScoreEvent>,
    /// What the roll in progress gives the roller's opponent, marked once
    /// the roller has played (§4's marking order).
    pub gift: Vec<ScoreEvent>,
    /// The seat that must say whether it stays or goes.
    pub awaiting: Option<Seat>,
}

const STATE_VERSION: u8 = 1;
pub const STAY: &str = "stay";
pub const GO: &str = "go";

const OPTIONS: [&str; 8] = [
    "stake",
    "pile_de_misere",
    "opening",
    "start_points",
    "start_holes",
    "start_bredouille",
    "start_rolls",
    "start_pavillon",
];

/// Each side's 15 checkers on its talon (its 24-point).
pub fn start_board() -> Board {
    Board::from_points(&[(24, CHECKERS)], &[(24, CHECKERS)])
}

/// A "white,black" pair of numbers, each at most `max`.
fn pair(options: &Options, name: &str, max: u32) -> Result<[u32; 2], VariantError> {
    let Some(text) = options.get(name) else {
        return Ok([0, 0]);
    };
    let bad = |message: String| VariantError::InvalidOption {
        name: name.to_string(),
        message,
    };
    let numbers: Vec<u32> = text
        .split(',')
        .map(|n| n.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad(format!("`{text}` is not two numbers `white,black`")))?;
    match numbers[..] {
        [w, b] if w <= max && b <= max => Ok([w, b]),
        [_, _] => Err(bad(format!("`{text}`: each number must be at most {max}"))),
        _ => Err(bad(format!("`{text}` is not two numbers `white,black`"))),
    }
}

fn seat_named(name: &str) -> Option<Seat> {
    match name {
        "white" => Some(Seat::White),
        "black" => Some(Seat::Black),
        _ => None,
    }
}

/// The game's state from its options: the rules, and where the partie
/// starts (points, holes, bredouille, rolls and pavillon, so that any
/// position of a partie can be set up).
fn read_options(options: &Options, board: Board) -> Result<TricTracState, VariantError> {
    check_option_names(options, &OPTIONS)?;
    let rules = Rules {
        stake: match option_value(options, "stake", &["simple", "4321"], "simple")? {
            "4321" => Stake::Scale4321,
            _ => Stake::Simple,
        },
        pile_de_misere: option_value(options, "pile_de_misere", &["off", "on"], "off")? == "on",
        throw_again: option_value(options, "opening", &["primaute", "throw_again"], "primaute")?
            == "throw_again",
    };
    let points = pair(options, "start_points", tally::HOLE - 1)?;
    let holes = pair(options, "start_holes", PARTIE - 1)?;
    let rolls = pair(options, "start_rolls", 10_000)?;
    let bredouille = match option_value(
        options,
        "start_bredouille",
        &["auto", "white", "black", "none"],
        "auto",
    )? {
        "auto" => match points {
            [w, 0] if w > 0 => Some(Seat::White),
            [0, b] if b > 0 => Some(Seat::Black),
            _ => None,
        },
        name => seat_named(name),
    };
    let pavillon = match option_value(
        options,
        "start_pavillon",
        &[
            "auto",
            "nobody",
            "white",
            "black",
            "flag_white",
            "flag_black",
            "closed",
        ],
        "auto",
    )? {
        "auto" => match holes {
            [0, 0] => Pavillon::Nobody,
            [_, 0] => Pavillon::Open(Seat::White),
            [0, _] => Pavillon::Open(Seat::Black),
            _ => Pavillon::Closed,
        },
        "nobody" => Pavillon::Nobody,
        "white" => Pavillon::Open(Seat::White),
        "black" => Pavillon::Open(Seat::Black),
        "flag_white" => Pavillon::Flag(Seat::White),
        "flag_black" => Pavillon::Flag(Seat::Black),
        _ => Pavillon::Closed,
    };
    let tally = |seat: Seat| SeatTally {
        points: points[seat.index()],
        holes: holes[seat.index()],
        bredouille: bredouille == Some(seat),
        rolls: rolls[seat.index()],
    };
    Ok(TricTracState {
        board,
        rules,
        tally: [tally(Seat::White), tally(Seat::Black)],
        pavillon,
        round: 1,
        last_roll: Vec::new(),
        gift: Vec::new(),
        awaiting: None,
    })
}

fn event(seat: Seat, jan: &Scored) -> ScoreEvent {
    ScoreEvent {
        seat,
        points: jan.points,
        reason: jan.kind.name().to_string(),
        ways: jan.ways,
    }
}

/// The jans `dice` make for `seat` on its `roll_number`-th roll of the
/// relevé, on `board`: the roller's first, then the opponent's, as they
/// are marked.
pub fn roll_events(
    board: &Board,
    seat: Seat,
    dice: Dice,
    roll_number: u32,
    pile: bool,
) -> Vec<ScoreEvent> {
    let view = View::of(board, seat);
    let points = jans::score(&view, dice, roll_number, pile);
    let (opponent, roller): (Vec<&Scored>, Vec<&Scored>) =
        points.jans.iter().partition(|j| j.kind.for_opponent());
    roller
        .into_iter()
        .map(|j| event(seat, j))
        .chain(opponent.into_iter().map(|j| event(seat.other(), j)))
        .collect()
}

fn total(events: &[ScoreEvent]) -> u32 {
    events.iter().map(|e| e.points).sum()
}

impl TricTracState {
    /// Marks `events` for `seat`: the holes won, and the outcome when they
    /// win the partie.
    fn mark(&mut self, seat: Seat, events: &[ScoreEvent]) -> (u32, Option<Outcome>) {
        let holes = tally::mark(&mut self.tally, seat, total(events));
        if holes == 0 {
            return (0, None);
        }
        self.pavillon = self.pavillon.after_holes(seat);
        let over = (self.tally[seat.index()].holes >= PARTIE).then(|| self.outcome(seat));
        (holes, over)
    }

    fn outcome(&self, winner: Seat) -> Outcome {
        let loser_holes = self.tally[winner.other().index()].holes;
        let level = self
            .rules
            .stake
            .multiplier(winner, self.pavillon, loser_holes);
        Outcome {
            winner: Some(winner),
            level,
            kind: WIN_KINDS[level as usize - 1].to_string(),
            by_bearing_off: false,
        }
    }

    /// A relevé: all checkers back to the talons and the roll counts to
    /// zero; after a go, points and bredouille too (holes always stay).
    fn releve(&mut self, reset_points: bool) {
        self.board = start_board();
        self.gift.clear();
        self.awaiting = None;
        self.round += 1;
        for t in &mut self.tally {
            t.rolls = 0;
            if reset_points {
                t.points = 0;
                t.bredouille = false;
            }
        }
    }
}

/// The names of a win at each level (the stake's multiplier).
const WIN_KINDS: [&str; 4] = ["single", "double", "triple", "quadruple"];

fn stay_or_go(seat: Seat) -> Decision {
    Decision {
        seat,
        choices: vec![STAY.into(), GO.into()],
        prompt: "You won a hole with your own roll: stay (keep your remaining points and play the roll) or go (all points and checkers reset, and you roll first)".into(),
    }
}

impl Variant for TricTrac {
    type State = TricTracState;

    fn info(&self) -> VariantInfo {
        let option = |name: &str, description: &str, allowed: &[&str], default: &str| OptionSpec {
            name: name.into(),
            description: description.into(),
            allowed_values: allowed.iter().map(|s| s.to_string()).collect(),
            default_value: default.into(),
        };
        let (tallies, counters) = tally::labels();
        VariantInfo {
            name: "trictrac".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Grand Trictrac (French tric-trac): no checker is ever captured; points are scored on every roll (hits, filling and keeping jans, what the opponent cannot play), twelve points make a hole, twelve holes win the partie.".into(),
            options: vec![
                option("stake", "How a won partie is paid: simple (x2 en grande bredouille, else x1) or 4321 (x4 if the loser won no hole, x3 en grande bredouille with the flag, x2 if the loser has fewer than 6 holes, else x1).", &["simple", "4321"], "simple"),
                option("pile_de_misere", "Score the pile de misere (all 15 checkers on the corner): 4/6 made, 4/6 kept.", &["off", "on"], "off"),
                option("opening", "primaute: the winner of the opening throw plays its two dice (no opening doublet); throw_again: he throws both dice afresh.", &["primaute", "throw_again"], "primaute"),
                option("start_points", "Points each player starts with, `white,black`, 0 to 11 each (setting up a position).", &[], "0,0"),
                option("start_holes", "Holes each player starts with, `white,black`, 0 to 11 each.", &[], "0,0"),
                option("start_bredouille", "Who starts in bredouille; auto: the only player with points.", &["auto", "white", "black", "none"], "auto"),
                option("start_rolls", "Rolls each player has already made in the relevé, `white,black` (the next roll of white is its number + 1: 2 makes it the third, for the jan de six tables).", &[], "0,0"),
                option("start_pavillon", "Who can still win en grande bredouille: auto (from the holes), nobody yet (both), white or black (the only one with holes), flag_white or flag_black (holds the flag), closed.", &["auto", "nobody", "white", "black", "flag_white", "flag_black", "closed"], "auto"),
            ],
            max_win_level: 4,
            win_kinds: WIN_KINDS.iter().map(|k| k.to_string()).collect(),
            tallies,
            counters,
            ..Default::default()
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::SCORES_DURING_PLAY
            .union(Capabilities::DECISIONS)
            .union(Capabilities::STANDARD_BOARD)
            .union(Capabilities::SETUP_POSITION)
    }

    fn new_game(&self, options: &Options) -> Result<Setup<TricTracState>, VariantError> {
        let state = read_options(options, start_board())?;
        Ok(setup(state))
    }

    fn setup_position(
        &self,
        board: &Board,
        options: &Options,
    ) -> Result<Setup<TricTracState>, VariantError> {
        board
            .validate()
            .map_err(|e| VariantError::InvalidInput(e.to_string()))?;
        for seat in Seat::BOTH {
            if board.count(seat, bg_variant_api::engine::BAR) > 0 {
                return Err(VariantError::InvalidInput(
                    "tric-trac has no bar: no checker can be on it".into(),
                ));
            }
            let view = View::of(board, seat);
            if view.mine[view::CORNER] == 1 {
                return Err(VariantError::InvalidInput(format!(
                    "{seat} has a lone checker on its rest corner, which the rules never allow"
                )));
            }
            if view.mine[view::THEIR_CORNER] > 0 {
                return Err(VariantError::InvalidInput(format!(
                    "{seat} has checkers on the opponent's rest corner, which the rules never allow"
                )));
            }
        }
        Ok(setup(read_options(options, *board)?))
    }

    fn board(&self, state: &TricTracState) -> Board {
        state.board
    }

    fn legal_plays(&self, state: &TricTracState, seat: Seat, dice: Dice, out: &mut Vec<LegalPlay>) {
        moves::legal_plays(&state.board, seat, dice, state.rules.pile_de_misere, out);
    }

    fn play_result(
        &self,
        state: &TricTracState,
        seat: Seat,
        play: &Play,
    ) -> Result<Board, VariantError> {
        let mut board = state.board;
        for m in play.moves() {
            make_move(&mut board, seat, *m)?;
        }
        Ok(board)
    }

    fn after_roll(
        &self,
        state: &TricTracState,
        seat: Seat,
        dice: Dice,
    ) -> Transition<TricTracState> {
        let mut next = state.clone();
        next.tally[seat.index()].rolls += 1;
        let rolls = next.tally[seat.index()].rolls;
        let events = roll_events(&next.board, seat, dice, rolls, next.rules.pile_de_misere);
        let (mine, gift): (Vec<ScoreEvent>, Vec<ScoreEvent>) =
            events.iter().cloned().partition(|e| e.seat == seat);
        next.last_roll = events;
        next.gift = gift;
        let (holes, outcome) = next.mark(seat, &mine);
        let decision = (holes > 0 && outcome.is_none()).then(|| {
            next.awaiting = Some(seat);
            stay_or_go(seat)
        });
        Transition {
            state: next,
            events: mine,
            outcome,
            decision,
            next_roller: None,
        }
    }

    fn after_play(
        &self,
        state: &TricTracState,
        seat: Seat,
        chosen: &LegalPlay,
    ) -> Transition<TricTracState> {
        let mut next = state.clone();
        next.board = chosen.result;
        let gift = std::mem::take(&mut next.gift);
        let (_, outcome) = next.mark(seat.other(), &gift);
        let mut transition = Transition {
            events: gift,
            outcome,
            decision: None,
            next_roller: None,
            state: next,
        };
        if transition.outcome.is_none() && transition.state.board.off(seat) == CHECKERS {
            // The exit (§3.7): checkers back to the talons, points kept,
            // and the player who bore off first rolls again.
            transition.state.releve(false);
            transition.next_roller = Some(seat);
        }
        transition
    }

    fn decide(
        &self,
        state: &TricTracState,
        seat: Seat,
        choice: &str,
    ) -> Result<Transition<TricTracState>, VariantError> {
        if state.awaiting != Some(seat) {
            return Err(VariantError::IllegalDecision(format!(
                "{seat} has no decision to make"
            )));
        }
        let mut next = state.clone();
        next.awaiting = None;
        match choice {
            STAY => Ok(Transition::to(next)),
            GO => {
                // Going (§4): the remainder and the opponent's gift are
                // void, everything but the holes resets, and the goer
                // rolls first.
                next.releve(true);
                Ok(Transition {
                    next_roller: Some(seat),
                    ..Transition::to(next)
                })
            }
            other => Err(VariantError::IllegalDecision(format!(
                "`{other}` is not a choice: stay or go"
            ))),
        }
    }

    fn concede(&self, state: &TricTracState, loser: Seat) -> Outcome {
        // What the winner would be paid had he won the partie now.
        let winner = loser.other();
        let mut won = state.clone();
        won.pavillon = won.pavillon.after_holes(winner);
        won.outcome(winner)
    }

    fn scoreboard(&self, state: &TricTracState) -> Option<Scoreboard> {
        Some(Scoreboard {
            tallies: tally::tallies(&state.tally, state.pavillon),
            counters: vec![Counter {
                name: "round".into(),
                value: i64::from(state.round),
            }],
            markers: Vec::new(),
            last_roll: state.last_roll.clone(),
        })
    }
}

impl StateCodec for TricTracState {
    fn encode(&self) -> Vec<u8> {
        let state = self;
        let mut bytes = vec![STATE_VERSION];
        // Serialising plain data to a Vec cannot fail.
        bytes.extend(serde_json::to_vec(state).unwrap_or_default());
        bytes
    }

    fn decode(bytes: &[u8]) -> Result<TricTracState, VariantError> {
        let bad =
            |why: String| VariantError::InvalidInput(format!("not a tric-trac game state: {why}"));
        let Some((&STATE_VERSION, json)) = bytes.split_first() else {
            return Err(bad("unknown state version".into()));
        };
        let state: TricTracState = serde_json::from_slice(json).map_err(|e| bad(e.to_string()))?;
        state.board.validate().map_err(|e| bad(e.to_string()))?;
        Ok(state)
    }
}

fn setup(state: TricTracState) -> Setup<TricTracState> {
    Setup {
        opening: if state.rules.throw_again {
            Opening::ThrowAgain
        } else {
            Opening::PlayOpeningDice
        },
        cube: false,
        // Each partie opens with the primauté throw.
        first_move: Some(FirstMove::OpeningRoll),
        state,
    }
}

/// Moves one of `seat`'s checkers, in its numbering; refuses a move with
/// no checker to make it or that goes backwards.
fn make_move(board: &mut Board, seat: Seat, m: Move) -> Result<(), VariantError> {
    let illegal = |why: &str| VariantError::IllegalPlay(format!("{m}: {why}"));
    if m.from == OFF || m.from > 24 || m.to >= m.from {
        return Err(illegal(
            "not a move of tric-trac (checkers only move forward, from a point 1 to 24)",
        ));
    }
    let own = &mut board.checkers[seat.index()];
    if own[usize::from(m.from)] == 0 {
        return Err(illegal("no checker there"));
    }
    own[usize::from(m.from)] -= 1;
    own[usize::from(m.to)] += 1;
    Ok(())
}
