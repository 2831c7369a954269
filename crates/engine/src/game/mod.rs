//! The game and match state machine, the same for every variant.
//!
//! A [`Match`] is a series of games under one set of [`MatchSettings`]:
//! the opening roll, turns, passes, the doubling cube (docs/rules.md §1.5), match
//! play with Crawford (§1.6), money options (§1.7), resignation (§1.8),
//! scoring limits, the last-roll draw and who starts later games (§4).
//! It asks the variant ([`Rules`]) for everything about the board and is
//! given the dice ([`DiceSource`]), so it stays pure and deterministic:
//! the same commands and dice always give the same events.
//!
//! The variant's answers are this module's types, shared with plugin
//! authors through `bg-variant-api`: a [`Setup`], a [`Transition`] (with
//! its [`ScoreEvent`]s, its [`Outcome`] when the game ends, a [`Decision`]
//! when a player must choose), or a [`RulesError`] of a [`RulesErrorKind`].

mod contract;
mod cube;
mod games;
mod settings;

use serde::{Deserialize, Serialize};

pub use contract::{
    Counter, Decision, Marker, Opening, Outcome, Rules, RulesError, RulesErrorKind, ScoreEvent,
    Scoreboard, Setup, Tally, Transition,
};
pub use settings::{
    BotSeat, CubeLimit, FirstMove, MatchSettings, ResignMode, ScoringLimit, SettingsError,
};

pub use crate::clock::OnTimeout;
use crate::{Dice, Play, Seat};

/// What the match does after taking in a variant's [`Transition`].
enum Next {
    /// The game is over.
    Over(Outcome),
    /// A player must decide first.
    Decide,
    /// This seat throws afresh.
    Roller(Seat),
    /// The turn goes on as usual.
    Usual,
}

/// The most throws auto-roll makes in one action (see
/// [`MatchSettings::auto_roll`]).
pub const MAX_AUTO_ROLLS: usize = 16;

/// Where dice come from: a CSPRNG in the server, a script in tests.
pub trait DiceSource {
    /// One die, 1 to 6.
    fn die(&mut self) -> u8;
}

/// What a player asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "command")]
pub enum Command {
    Roll,
    Move {
        play: Play,
    },
    /// Offer a double (or a redouble).
    Double,
    Take,
    Drop,
    /// Redouble at once instead of taking (money sessions with beavers).
    Beaver,
    /// Resign: by position, or offering `level` (1-3) in offer mode.
    Resign {
        level: Option<u32>,
    },
    AcceptResignation,
    DeclineResignation,
    Decide {
        choice: String,
    },
    /// Leave the match (either seat, whoever is on turn, in any phase):
    /// the game in progress is scored as the leaver concedes it (a game
    /// already decided as decided, a double the leaver was to answer as
    /// dropped, otherwise as resigning by position), then the match ends
    /// at once: a match to N points goes to the other seat, by forfeit; a
    /// money session to whoever leads (no one on a tie).
    Abandon,
    /// The seat's time ran out (the host's clock says so, not a player):
    /// the game in progress is scored as the seat concedes it, as for
    /// [`Command::Abandon`]; then the match ends the same way
    /// ([`OnTimeout::Match`]), or play goes on with the next game
    /// ([`OnTimeout::Game`]).
    TimeExpired {
        costs: OnTimeout,
    },
}

/// The phase of a match: what happens next, and who acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The player on turn rolls (or doubles first).
    Roll,
    /// The player on turn moves with the dice shown.
    Move,
    /// The opponent of the player on turn answers a double.
    CubeOffered,
    /// The opponent of the resigner answers a resignation offer.
    ResignationOffered,
    /// A player answers a variant decision.
    Decision,
    /// The match (or money session) is over.
    MatchOver,
}

/// Where the match stands on the Crawford rule (docs/rules.md §1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Crawford {
    /// No one has reached match point yet (or Crawford is off).
    Before,
    /// This game is the Crawford game: no doubling.
    ThisGame,
    /// After the Crawford game.
    Post,
}

/// Where a match is taken up (from a gnubg Match ID or an XGID): the
/// score, the cube, the player to roll, and whether this first game is
/// the Crawford game. The first game's position is the variant's
/// [`Setup`] given beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resume {
    pub score: [u32; 2],
    pub cube: Cube,
    pub on_roll: Seat,
    pub crawford: bool,
}

/// The doubling cube.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cube {
    pub value: u32,
    /// `None`: in the middle.
    pub owner: Option<Seat>,
}

/// A double waiting for an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingDouble {
    /// Who doubled (or beavered) last: the answer is the other seat's.
    pub by: Seat,
    /// The cube value if the double is taken.
    pub value: u32,
    /// Whether this is a beaver (a take keeps the cube with the beaverer).
    pub beaver: bool,
}

/// A resignation offer waiting for an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResignationOffer {
    pub by: Seat,
    pub level: u32,
    /// The phase to go back to if declined.
    pub resume: Phase,
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The winner finished the game on the board.
    Played,
    /// A double was dropped.
    Dropped,
    Resigned,
    /// The loser's time ran out.
    Time,
}

/// A finished game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResult {
    pub game_number: u32,
    /// `None` for a draw.
    pub winner: Option<Seat>,
    pub reason: EndReason,
    /// The variant's name of the win ("single", "gammon", ... "draw").
    pub kind: String,
    /// The level that counted, after the scoring limit and Jacoby.
    pub level: u32,
    pub cube: u32,
    pub points: u32,
}

/// Something that happened, in the order it happened. Events are the
/// game's history: they are stored, streamed to watchers, and enough to
/// audit every roll.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum Event {
    GameStarted {
        game_number: u32,
        starter: Seat,
        /// The opening throw, white's die first, when there was one.
        opening: Option<[u8; 2]>,
        crawford: bool,
    },
    /// The opening throw was a tie (white's die, black's) and is thrown
    /// again; `cube` is the cube's value after any automatic double.
    OpeningTie {
        dice: [u8; 2],
        cube: u32,
    },
    Rolled {
        seat: Seat,
        dice: Dice,
    },
    Moved {
        seat: Seat,
        play: Play,
    },
    /// No legal move: the turn passed.
    Passed {
        seat: Seat,
        dice: Dice,
    },
    Scored {
        seat: Seat,
        points: u32,
        reason: String,
        /// How many ways (0 when the rule has none; absent in events
        /// stored before it was recorded).
        #[serde(default)]
        ways: u32,
    },
    DecisionRequired {
        decision: Decision,
    },
    Decided {
        seat: Seat,
        choice: String,
    },
    DoubleOffered {
        seat: Seat,
        value: u32,
    },
    Beavered {
        seat: Seat,
        value: u32,
    },
    DoubleTaken {
        seat: Seat,
        value: u32,
    },
    DoubleDropped {
        seat: Seat,
    },
    ResignationOffered {
        seat: Seat,
        level: u32,
    },
    ResignationDeclined {
        seat: Seat,
    },
    /// The first mover finished: the other player has one last turn to draw.
    LastRoll {
        seat: Seat,
    },
    GameEnded {
        result: GameResult,
        score: [u32; 2],
    },
    MatchEnded {
        winner: Option<Seat>,
        score: [u32; 2],
    },
    /// A seat left the match: followed by the game in progress, as it
    /// conceded it (`GameEnded`), and `MatchEnded`.
    MatchAbandoned {
        seat: Seat,
    },
    /// A seat's time ran out: followed by the game in progress, as it
    /// conceded it (`GameEnded`, reason `time`), and `MatchEnded` when the
    /// match ends with it.
    TimeExpired {
        seat: Seat,
    },
}

impl Event {
    /// The seat the event names as its `seat`: who rolled, moved, passed,
    /// scored, decided, doubled, resigned or left. None for the events of
    /// the game or match as a whole (started, a tie, a decision asked,
    /// ended), whose seats are fields of other names.
    pub fn seat(&self) -> Option<Seat> {
        match self {
            Event::Rolled { seat, .. }
            | Event::Moved { seat, .. }
            | Event::Passed { seat, .. }
            | Event::Scored { seat, .. }
            | Event::Decided { seat, .. }
            | Event::DoubleOffered { seat, .. }
            | Event::Beavered { seat, .. }
            | Event::DoubleTaken { seat, .. }
            | Event::DoubleDropped { seat }
            | Event::ResignationOffered { seat, .. }
            | Event::ResignationDeclined { seat }
            | Event::LastRoll { seat }
            | Event::MatchAbandoned { seat }
            | Event::TimeExpired { seat } => Some(*seat),
            Event::GameStarted { .. }
            | Event::OpeningTie { .. }
            | Event::DecisionRequired { .. }
            | Event::GameEnded { .. }
            | Event::MatchEnded { .. } => None,
        }
    }
}

/// Why a command was refused. Nothing changes when a command is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// Another seat must act first; the text says who, and what the game
    /// waits for (e.g. "black to move").
    #[error("it is not your turn: the game waits for {0}")]
    NotYourTurn(String),
    #[error("{0}")]
    WrongPhase(String),
    #[error("you cannot double now: {0}")]
    CubeUnavailable(String),
    #[error("{0}")]
    Resignation(String),
    #[error("the match is over")]
    MatchOver,
    /// A match cannot be taken up in the state given (see [`Resume`]).
    #[error("cannot start the match there: {0}")]
    InvalidStart(String),
    #[error(transparent)]
    Rules(#[from] RulesError),
}

impl CommandError {
    /// A stable machine-readable reason for API errors.
    pub fn reason(&self) -> &'static str {
        match self {
            CommandError::NotYourTurn(_) => "NOT_YOUR_TURN",
            CommandError::WrongPhase(_) => "WRONG_PHASE",
            CommandError::CubeUnavailable(_) => "CUBE_UNAVAILABLE",
            CommandError::Resignation(_) => "RESIGNATION_NOT_ALLOWED",
            CommandError::MatchOver => "MATCH_OVER",
            CommandError::InvalidStart(_) => "INVALID_START",
            CommandError::Rules(e) => e.reason(),
        }
    }
}

/// A match in progress: everything but the variant's rules. Not a storage
/// format: the server stores matches in a versioned format of its own
/// (`bg_server::snapshot`), converted from and to this.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Match {
    pub settings: MatchSettings,
    pub score: [u32; 2],
    /// The game being played, from 1.
    pub game_number: u32,
    pub crawford: Crawford,
    /// The player on turn.
    pub turn: Seat,
    pub phase: Phase,
    /// The dice of the turn, once rolled.
    pub dice: Option<Dice>,
    pub cube: Cube,
    /// Whether the cube may be used in this game.
    pub cube_in_play: bool,
    pub pending_double: Option<PendingDouble>,
    pub resignation: Option<ResignationOffer>,
    /// After a declined offer: that seat may not offer this level or lower
    /// again before the next action.
    pub declined: Option<(Seat, u32)>,
    pub pending_decision: Option<Decision>,
    /// Whether the pending decision came after the play (answering it ends
    /// the turn) rather than after the roll (the dice are still to play).
    pub decision_after_play: bool,
    /// Who moved first in this game (for the last-roll draw).
    pub first_mover: Seat,
    /// The first mover's win, waiting for the other's last roll.
    pub pending_win: Option<GameResult>,
    /// The starter of this game (for alternating starts).
    pub starter: Seat,
    pub variant_state: Vec<u8>,
    pub results: Vec<GameResult>,
    pub winner: Option<Seat>,
}

impl Match {
    /// Starts a match: the first game is set up and its opening rolled.
    pub fn new(
        settings: MatchSettings,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
    ) -> Result<(Match, Vec<Event>), CommandError> {
        let mut m = Match::blank(settings);
        let mut events = Vec::new();
        m.start_game(rules, dice, &mut events)?;
        m.auto_roll(rules, dice, &mut events)?;
        Ok((m, events))
    }

    /// A match before its first game.
    fn blank(settings: MatchSettings) -> Match {
        Match {
            settings,
            score: [0, 0],
            game_number: 0,
            crawford: Crawford::Before,
            turn: Seat::White,
            phase: Phase::Roll,
            dice: None,
            cube: Cube {
                value: 1,
                owner: None,
            },
            cube_in_play: false,
            pending_double: None,
            resignation: None,
            declined: None,
            pending_decision: None,
            decision_after_play: false,
            first_mover: Seat::White,
            pending_win: None,
            starter: Seat::White,
            variant_state: Vec::new(),
            results: Vec::new(),
            winner: None,
        }
    }

    /// A match taken up where `from` says (the score, the cube, who is to
    /// roll), its first game from `setup` (the variant's state of the
    /// position to start from): positions from a gnubg Match ID or an
    /// XGID. Later games start as in [`Match::new`].
    pub fn resume(
        settings: MatchSettings,
        setup: Setup<Vec<u8>>,
        from: Resume,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
    ) -> Result<(Match, Vec<Event>), CommandError> {
        let mut m = Match::blank(settings);
        let mut events = Vec::new();
        m.take_up(setup, from, &mut events)?;
        m.auto_roll(rules, dice, &mut events)?;
        Ok((m, events))
    }

    /// The seat that must act now.
    pub fn to_act(&self) -> Option<Seat> {
        match self.phase {
            Phase::Roll | Phase::Move => Some(self.turn),
            Phase::CubeOffered => self.pending_double.map(|d| d.by.other()),
            Phase::ResignationOffered => self.resignation.map(|r| r.by.other()),
            Phase::Decision => self.pending_decision.as_ref().map(|d| d.seat),
            Phase::MatchOver => None,
        }
    }

    /// Applies `command` from `seat`. On success returns the events (none
    /// when the command changed nothing, like a second Roll in one turn);
    /// on error the match is unchanged.
    pub fn apply(
        &mut self,
        seat: Seat,
        command: &Command,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
    ) -> Result<Vec<Event>, CommandError> {
        if self.phase == Phase::MatchOver {
            return Err(CommandError::MatchOver);
        }
        // Work on a copy so a refused command changes nothing.
        let mut next = self.clone();
        let mut events = Vec::new();
        match command {
            Command::Roll => next.roll(seat, rules, dice, &mut events)?,
            Command::Move { play } => next.play(seat, play, rules, dice, &mut events)?,
            Command::Double => next.double(seat, &mut events)?,
            Command::Take => next.take(seat, &mut events)?,
            Command::Beaver => next.beaver(seat, &mut events)?,
            Command::Drop => next.drop_double(seat, rules, dice, &mut events)?,
            Command::Resign { level } => next.resign(seat, *level, rules, dice, &mut events)?,
            Command::AcceptResignation => {
                next.accept_resignation(seat, rules, dice, &mut events)?
            }
            Command::DeclineResignation => next.decline_resignation(seat, &mut events)?,
            Command::Decide { choice } => next.decide(seat, choice, rules, dice, &mut events)?,
            Command::Abandon => next.abandon(seat, rules, &mut events)?,
            Command::TimeExpired { costs } => {
                next.time_expired(seat, *costs, rules, dice, &mut events)?
            }
        }
        if !events.is_empty() {
            next.auto_roll(rules, dice, &mut events)?;
            if !matches!(
                command,
                Command::DeclineResignation | Command::Resign { .. }
            ) {
                // A declined offer bars the same offer until the next action.
                next.declined = None;
            }
            *self = next;
        }
        Ok(events)
    }

    // ----- turns -------------------------------------------------------

    /// Checks what every match the engine makes holds, for a match read
    /// back from storage: each phase has what it waits on (the dice to
    /// move with, the double or the offer to answer, the decision to
    /// make), and dice show 1 to 6. A match that fails this was damaged
    /// outside the engine.
    pub fn check(&self) -> Result<(), String> {
        let missing = match self.phase {
            Phase::Move if self.dice.is_none() => Some("the move phase has no dice"),
            Phase::CubeOffered if self.pending_double.is_none() => {
                Some("a double is waiting, but none is recorded")
            }
            Phase::ResignationOffered if self.resignation.is_none() => {
                Some("a resignation is waiting, but none is recorded")
            }
            Phase::Decision if self.pending_decision.is_none() => {
                Some("a decision is waiting, but none is recorded")
            }
            _ => None,
        };
        if let Some(missing) = missing {
            return Err(missing.to_string());
        }
        // A declined resignation resumes this phase: only one the engine
        // itself leaves for an offer, with what it waits on.
        if let Some(offer) = &self.resignation {
            let resumable = match offer.resume {
                Phase::Roll => true,
                Phase::Move => self.dice.is_some(),
                Phase::Decision => self.pending_decision.is_some(),
                Phase::CubeOffered | Phase::ResignationOffered | Phase::MatchOver => false,
            };
            if !resumable {
                return Err(format!(
                    "a resignation offer resumes {:?}, which cannot be resumed here",
                    offer.resume
                ));
            }
        }
        if let Some(dice) = self.dice
            && Dice::new(dice.d1, dice.d2).is_err()
        {
            return Err(format!("dice {}-{} are not dice", dice.d1, dice.d2));
        }
        Ok(())
    }

    /// Whether `seat` may act in `phase` now. The seat comes first: a seat
    /// that is not the one to act hears NOT_YOUR_TURN (wait), whatever it
    /// asked; WRONG_PHASE is for the seat to act asking the wrong thing.
    /// An answer (to a double, a resignation offer, a decision) when
    /// nothing of the kind is offered is WRONG_PHASE whoever sends it:
    /// there is nothing to wait for.
    fn expect(&self, seat: Seat, phase: Phase) -> Result<(), CommandError> {
        if self.phase != phase {
            let nothing = match phase {
                Phase::CubeOffered => Some("no double is offered: there is nothing to answer"),
                Phase::ResignationOffered => {
                    Some("no resignation is offered: there is nothing to answer")
                }
                Phase::Decision => Some("no decision is asked for: there is nothing to decide"),
                _ => None,
            };
            if let Some(nothing) = nothing {
                return Err(CommandError::WrongPhase(nothing.into()));
            }
        }
        if let Some(to_act) = self.to_act().filter(|&to_act| to_act != seat) {
            let waits = match self.phase {
                Phase::Roll => "to roll (or double)",
                Phase::Move => "to move",
                Phase::CubeOffered => "to answer the double",
                Phase::ResignationOffered => "to answer the resignation",
                Phase::Decision => "to decide",
                Phase::MatchOver => "nothing",
            };
            return Err(CommandError::NotYourTurn(format!("{to_act} {waits}")));
        }
        if self.phase != phase {
            return Err(CommandError::WrongPhase(match self.phase {
                Phase::Roll => "the player on turn must roll (or double) first".into(),
                Phase::Move => "the dice are rolled: the player on turn must move".into(),
                Phase::CubeOffered => "a double is waiting for an answer".into(),
                Phase::ResignationOffered => "a resignation is waiting for an answer".into(),
                Phase::Decision => "a decision is waiting".into(),
                Phase::MatchOver => "the match is over".into(),
            }));
        }
        Ok(())
    }

    /// With auto-roll on, throws the dice for the player on turn when
    /// they have nothing to do before rolling (they cannot double), as
    /// part of the action that began their turn. A turn that passes at
    /// once begins the next one, which may be rolled for too, up to
    /// [`MAX_AUTO_ROLLS`] throws an action (two players who both cannot
    /// move, in a position set up so, then roll by hand).
    fn auto_roll(
        &mut self,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        for _ in 0..MAX_AUTO_ROLLS {
            let rolls_itself = self.settings.auto_roll == Some(true)
                && self.phase == Phase::Roll
                && self.double_value(self.turn).is_err();
            if !rolls_itself {
                break;
            }
            self.roll(self.turn, rules, dice, events)?;
        }
        Ok(())
    }

    fn roll(
        &mut self,
        seat: Seat,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        if self.phase == Phase::Move && self.turn == seat {
            // Rolling again shows the same dice: nothing happens.
            return Ok(());
        }
        self.expect(seat, Phase::Roll)?;
        let thrown = Dice::new(dice.die(), dice.die()).expect("dice source gives 1..=6");
        events.push(Event::Rolled { seat, dice: thrown });
        self.begin_move(thrown, rules, dice, events)
    }

    /// The dice are on the board: let the variant react, then wait for a
    /// move, or pass when there is none.
    fn begin_move(
        &mut self,
        thrown: Dice,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let seat = self.turn;
        self.dice = Some(thrown);
        self.phase = Phase::Move;
        let step = rules.after_roll(&self.variant_state, seat, thrown)?;
        match self.absorb(step, events) {
            Next::Over(outcome) => self.game_over(outcome, rules, dice, events),
            Next::Decide => Ok(()),
            Next::Roller(seat) => self.hand_dice_to(seat, rules, dice, events),
            Next::Usual => self.pass_if_blocked(thrown, rules, dice, events),
        }
    }

    /// With no legal move, plays the empty play and ends the turn.
    fn pass_if_blocked(
        &mut self,
        thrown: Dice,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let seat = self.turn;
        let legal = rules.legal_plays(&self.variant_state, seat, thrown)?;
        if legal.len() == 1 && legal[0].play.is_empty() {
            let step = rules.apply_play(&self.variant_state, seat, thrown, &Play::EMPTY)?;
            events.push(Event::Passed { seat, dice: thrown });
            return self.after_play(step, rules, dice, events);
        }
        Ok(())
    }

    fn play(
        &mut self,
        seat: Seat,
        play: &Play,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        self.expect(seat, Phase::Move)?;
        let thrown = self.dice.expect("dice are set in the move phase");
        let step = rules.apply_play(&self.variant_state, seat, thrown, play)?;
        events.push(Event::Moved { seat, play: *play });
        self.after_play(step, rules, dice, events)
    }

    /// The play (or the pass) is made: the variant's answer ends the game,
    /// asks a decision, hands the dice to a seat, or ends the turn.
    fn after_play(
        &mut self,
        step: Transition<Vec<u8>>,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        match self.absorb(step, events) {
            Next::Over(outcome) => self.game_over(outcome, rules, dice, events),
            Next::Decide => {
                self.decision_after_play = true;
                Ok(())
            }
            Next::Roller(seat) => self.hand_dice_to(seat, rules, dice, events),
            Next::Usual => self.end_turn(rules, dice, events),
        }
    }

    fn decide(
        &mut self,
        seat: Seat,
        choice: &str,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        self.expect(seat, Phase::Decision)?;
        let step = rules.decide(&self.variant_state, seat, choice)?;
        events.push(Event::Decided {
            seat,
            choice: choice.to_string(),
        });
        self.pending_decision = None;
        let after_play = std::mem::take(&mut self.decision_after_play);
        self.phase = if self.dice.is_some() {
            Phase::Move
        } else {
            Phase::Roll
        };
        match self.absorb(step, events) {
            Next::Over(outcome) => return self.game_over(outcome, rules, dice, events),
            Next::Decide => {
                // Another decision, at the same point of the turn.
                self.decision_after_play = after_play;
                return Ok(());
            }
            Next::Roller(seat) => return self.hand_dice_to(seat, rules, dice, events),
            Next::Usual => {}
        }
        match (after_play, self.dice) {
            // The play was made: the turn is over.
            (true, _) => self.end_turn(rules, dice, events),
            // Decided after the roll: the dice are still to be played, or
            // the turn passes if they cannot be.
            (false, Some(thrown)) => self.pass_if_blocked(thrown, rules, dice, events),
            (false, None) => Ok(()),
        }
    }

    /// Takes a variant's answer in: new state, score events, a decision;
    /// says what comes next.
    fn absorb(&mut self, step: Transition<Vec<u8>>, events: &mut Vec<Event>) -> Next {
        self.variant_state = step.state;
        for e in step.events {
            events.push(Event::Scored {
                seat: e.seat,
                points: e.points,
                reason: e.reason,
                ways: e.ways,
            });
        }
        if let Some(outcome) = step.outcome {
            return Next::Over(outcome);
        }
        if let Some(decision) = step.decision {
            events.push(Event::DecisionRequired {
                decision: decision.clone(),
            });
            self.pending_decision = Some(decision);
            self.phase = Phase::Decision;
            return Next::Decide;
        }
        match step.next_roller {
            Some(seat) => Next::Roller(seat),
            None => Next::Usual,
        }
    }

    /// The variant spent the turn's dice and hands them to `seat`, who
    /// throws afresh (a pending last-roll win still ends the game first).
    fn hand_dice_to(
        &mut self,
        seat: Seat,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        if let Some(win) = self.pending_win.take() {
            return self.end_game(win, rules, dice, events);
        }
        self.turn = seat;
        self.dice = None;
        self.phase = Phase::Roll;
        Ok(())
    }

    fn end_turn(
        &mut self,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        // A pending last-roll win (the last roll did not draw) stands.
        self.hand_dice_to(self.turn.other(), rules, dice, events)
    }
}

#[cfg(test)]
mod tests;
