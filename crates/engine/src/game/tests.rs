//! The match state machine with a fake variant: no plugin file, no board
//! rules, only what the engine itself decides (turns, the cube, match
//! scoring, resignations), each test in microseconds.

use std::collections::VecDeque;

use super::*;
use crate::{Board, LegalPlay};

/// A race to zero: each side starts `START` pips away and every play takes
/// the dice's sum off. The state is the two counts, white first. A side
/// that wins before the other has moved at all wins "two" (level 2), else
/// "one"; conceding is judged the same way.
struct Race;

const START: u8 = 20;

fn left(state: &[u8], seat: Seat) -> u8 {
    state[seat.index()]
}

impl Race {
    fn outcome(state: &[u8], winner: Seat) -> Outcome {
        let level = if left(state, winner.other()) == START {
            2
        } else {
            1
        };
        Outcome {
            winner: Some(winner),
            level,
            kind: Race.win_kind(level),
            by_bearing_off: true,
        }
    }
}

impl Rules for Race {
    fn new_game(&self) -> Result<Setup<Vec<u8>>, RulesError> {
        Ok(Setup {
            state: vec![START, START],
            opening: Opening::PlayOpeningDice,
            cube: true,
            first_move: None,
        })
    }

    fn legal_plays(&self, _: &[u8], _: Seat, _: Dice) -> Result<Vec<LegalPlay>, RulesError> {
        // One play: the race has no choices ("24/23" stands for it).
        Ok(vec![LegalPlay {
            play: "24/23".parse().map_err(|_| fault("play"))?,
            result: Board::default(),
        }])
    }

    fn apply_play(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
        _: &Play,
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        let mut next = state.to_vec();
        next[seat.index()] = left(state, seat).saturating_sub(dice.d1 + dice.d2);
        let outcome = (next[seat.index()] == 0).then(|| Race::outcome(&next, seat));
        Ok(Transition {
            outcome,
            ..Transition::to(next)
        })
    }

    fn after_roll(
        &self,
        state: &[u8],
        _: Seat,
        _: Dice,
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        Ok(Transition::to(state.to_vec()))
    }

    fn decide(&self, _: &[u8], _: Seat, _: &str) -> Result<Transition<Vec<u8>>, RulesError> {
        Err(RulesError {
            kind: RulesErrorKind::IllegalDecision,
            message: "the race asks nothing".into(),
        })
    }

    fn concede(&self, state: &[u8], loser: Seat) -> Result<Outcome, RulesError> {
        Ok(Race::outcome(state, loser.other()))
    }

    fn max_win_level(&self) -> u32 {
        2
    }

    fn win_kind(&self, level: u32) -> String {
        if level >= 2 { "two" } else { "one" }.into()
    }
}

fn fault(what: &str) -> RulesError {
    RulesError {
        kind: RulesErrorKind::VariantFault,
        message: what.into(),
    }
}

/// Dice thrown in the order given.
struct Script(VecDeque<u8>);

impl DiceSource for Script {
    fn die(&mut self) -> u8 {
        self.0.pop_front().expect("the test scripted enough dice")
    }
}

fn script(dice: &[u8]) -> Script {
    Script(dice.iter().copied().collect())
}

fn settings(match_length: u32, resignation: ResignMode) -> MatchSettings {
    MatchSettings {
        match_length,
        resignation,
        ..MatchSettings::default()
    }
}

/// A match whose opening throw is 6-1 for white: white on roll to move.
fn started(settings: MatchSettings) -> (Match, Script) {
    let mut dice = script(&[6, 1]);
    let (game, _) = Match::new(settings, &Race, &mut dice).unwrap();
    assert_eq!((game.turn, game.phase), (Seat::White, Phase::Move));
    (game, dice)
}

fn act(game: &mut Match, seat: Seat, command: Command, dice: &mut Script) -> Vec<Event> {
    game.apply(seat, &command, &Race, dice).unwrap()
}

fn play() -> Command {
    Command::Move {
        play: "24/23".parse().unwrap(),
    }
}

/// A resignation accepted at a level is named by the variant, as the same
/// win played out: "two" here, never the standard board's "gammon".
#[test]
fn an_accepted_resignation_takes_the_variants_name_for_its_level() {
    let (mut game, mut dice) = started(settings(5, ResignMode::Offer));
    act(
        &mut game,
        Seat::White,
        Command::Resign { level: Some(2) },
        &mut dice,
    );
    assert_eq!(game.phase, Phase::ResignationOffered);
    act(
        &mut game,
        Seat::Black,
        Command::AcceptResignation,
        &mut dice,
    );
    let result = &game.results[0];
    assert_eq!(
        (
            result.winner,
            result.kind.as_str(),
            result.level,
            result.points
        ),
        (Some(Seat::Black), "two", 2, 2)
    );
    assert_eq!(game.score, [0, 2]);
}

/// A win played out carries the variant's name as well ("one": black had
/// moved, so level 1).
#[test]
fn a_win_played_out_carries_the_variants_name_too() {
    let (mut game, mut dice) = started(settings(5, ResignMode::ByPosition));
    // White 6-1 (13 left), black 1-2 (17), white 6-6 (1), black 1-1 (15),
    // white 1-1: home.
    act(&mut game, Seat::White, play(), &mut dice);
    for (seat, thrown) in [
        (Seat::Black, [1, 2]),
        (Seat::White, [6, 6]),
        (Seat::Black, [1, 1]),
        (Seat::White, [1, 1]),
    ] {
        dice.0.extend(thrown);
        act(&mut game, seat, Command::Roll, &mut dice);
        act(&mut game, seat, play(), &mut dice);
    }
    let result = &game.results[0];
    assert_eq!(
        (result.winner, result.kind.as_str(), result.level),
        (Some(Seat::White), "one", 1)
    );
}

/// An offer above the variant's highest level is refused, and changes
/// nothing.
#[test]
fn a_resignation_above_the_variants_highest_level_is_refused() {
    let (mut game, mut dice) = started(settings(5, ResignMode::Offer));
    let before = game.clone();
    let refused = game
        .apply(
            Seat::White,
            &Command::Resign { level: Some(3) },
            &Race,
            &mut dice,
        )
        .unwrap_err();
    assert!(
        matches!(refused, CommandError::Resignation(_)),
        "{refused:?}"
    );
    assert_eq!(game, before);
}

/// Resigning by position asks the variant what the position concedes.
#[test]
fn resigning_by_position_concedes_what_the_variant_says() {
    let (mut game, mut dice) = started(settings(5, ResignMode::ByPosition));
    act(&mut game, Seat::White, play(), &mut dice);
    // Black resigns before moving: white wins "two".
    dice.0.extend([3, 2]);
    act(
        &mut game,
        Seat::Black,
        Command::Resign { level: None },
        &mut dice,
    );
    let result = &game.results[0];
    assert_eq!(
        (result.winner, result.kind.as_str(), result.points),
        (Some(Seat::White), "two", 2)
    );
}

/// A refused command changes nothing, whatever it was (the engine works on
/// a copy).
#[test]
fn a_refused_command_changes_nothing() {
    let (mut game, mut dice) = started(settings(3, ResignMode::ByPosition));
    let before = game.clone();
    for (seat, command) in [
        (Seat::Black, play()),
        (Seat::White, Command::Take),
        (Seat::White, Command::AcceptResignation),
        (Seat::White, Command::Decide { choice: "x".into() }),
    ] {
        assert!(game.apply(seat, &command, &Race, &mut dice).is_err());
        assert_eq!(game, before, "{command:?}");
    }
}

/// Answering an offer when none is made is WRONG_PHASE, saying nothing
/// is offered, for either seat (not NOT_YOUR_TURN: there is nothing to
/// wait for).
#[test]
fn an_answer_with_nothing_offered_says_nothing_is_offered() {
    let (mut game, mut dice) = started(settings(3, ResignMode::Offer));
    for seat in [Seat::White, Seat::Black] {
        for (command, says) in [
            (Command::Take, "no double is offered"),
            (Command::Drop, "no double is offered"),
            (Command::AcceptResignation, "no resignation is offered"),
            (Command::DeclineResignation, "no resignation is offered"),
            (
                Command::Decide {
                    choice: "go".into(),
                },
                "no decision",
            ),
        ] {
            let error = game.apply(seat, &command, &Race, &mut dice).unwrap_err();
            assert_eq!(error.reason(), "WRONG_PHASE", "{command:?}");
            assert!(error.to_string().contains(says), "{command:?}: {error}");
        }
    }
}

/// Abandoning ends the match at once, whoever is on turn and whatever
/// waits, the game in progress conceded by the leaver as resigning by
/// position would concede it: a match goes to the other seat by forfeit;
/// nothing more can be done in it.
#[test]
fn an_abandoned_match_is_over_at_once_and_goes_to_the_other_seat() {
    let (mut game, mut dice) = started(settings(5, ResignMode::Offer));
    act(
        &mut game,
        Seat::White,
        Command::Resign { level: Some(1) },
        &mut dice,
    );
    // Black, asked to answer the offer, leaves instead.
    let events = act(&mut game, Seat::Black, Command::Abandon, &mut dice);
    let kinds: Vec<_> = events.iter().map(std::mem::discriminant).collect();
    assert_eq!(
        kinds,
        [
            std::mem::discriminant(&Event::MatchAbandoned { seat: Seat::Black }),
            std::mem::discriminant(&Event::GameEnded {
                result: game.results[0].clone(),
                score: game.score,
            }),
            std::mem::discriminant(&Event::MatchEnded {
                winner: None,
                score: game.score,
            }),
        ]
    );
    assert_eq!(game.phase, Phase::MatchOver);
    assert_eq!(game.winner, Some(Seat::White));
    let conceded = &game.results[0];
    assert_eq!(
        (conceded.winner, conceded.reason),
        (Some(Seat::White), EndReason::Resigned)
    );
    assert!(game.resignation.is_none() && game.dice.is_none());
    game.check().unwrap();
    let again = game.apply(Seat::White, &Command::Abandon, &Race, &mut dice);
    assert_eq!(again, Err(CommandError::MatchOver));
}

/// In a money session leaving costs what resigning would: the leader
/// cannot leave a game it is losing for free, and a double the leaver was
/// to answer counts as dropped; the session goes to whoever leads then.
#[test]
fn abandoning_a_money_session_concedes_the_game_in_progress_first() {
    let money = || {
        let (mut game, dice) = started(settings(0, ResignMode::ByPosition));
        game.settings.money_games = 0;
        (game, dice)
    };
    // Black doubles, white drops: black leads 1-0; in the next game black
    // (the leader) leaves before white has even moved.
    let (mut game, mut dice) = money();
    act(&mut game, Seat::White, play(), &mut dice);
    act(&mut game, Seat::Black, Command::Double, &mut dice);
    dice.0.extend([5, 2]);
    act(&mut game, Seat::White, Command::Drop, &mut dice);
    assert_eq!(game.score, [0, 1]);
    act(&mut game, Seat::Black, Command::Abandon, &mut dice);
    let conceded = &game.results[1];
    assert_eq!(
        (conceded.winner, conceded.reason),
        (Some(Seat::White), EndReason::Resigned)
    );
    assert!(game.score[0] >= 1, "{:?}", game.score);
    let leader = match game.score[0].cmp(&game.score[1]) {
        std::cmp::Ordering::Greater => Some(Seat::White),
        std::cmp::Ordering::Less => Some(Seat::Black),
        std::cmp::Ordering::Equal => None,
    };
    assert_eq!((game.phase, game.winner), (Phase::MatchOver, leader));

    // A double waiting for the leaver's answer counts as dropped.
    let (mut game, mut dice) = money();
    act(&mut game, Seat::White, play(), &mut dice);
    act(&mut game, Seat::Black, Command::Double, &mut dice);
    act(&mut game, Seat::White, Command::Abandon, &mut dice);
    let conceded = &game.results[0];
    assert_eq!(
        (conceded.winner, conceded.reason, conceded.points),
        (Some(Seat::Black), EndReason::Dropped, 1)
    );
    assert_eq!((game.score, game.winner), ([0, 1], Some(Seat::Black)));
}

fn cubeless(auto_roll: Option<bool>) -> MatchSettings {
    MatchSettings {
        cube: CubeLimit::Off,
        auto_roll,
        ..settings(0, ResignMode::ByPosition)
    }
}

/// Auto-roll, left unset, is on where the game has no cube, and off where
/// it has one; the settings show the value in effect.
#[test]
fn auto_roll_defaults_to_on_without_a_cube_and_off_with_one() {
    let (game, _) = started(cubeless(None));
    assert_eq!(game.settings.auto_roll, Some(true));
    let (game, _) = started(settings(0, ResignMode::ByPosition));
    assert_eq!(game.settings.auto_roll, Some(false));
    let (game, _) = started(MatchSettings {
        auto_roll: Some(true),
        ..settings(0, ResignMode::ByPosition)
    });
    assert_eq!(game.settings.auto_roll, Some(true));
}

/// The move that ends a turn throws the dice for the next player, who
/// cannot double: the same action's events end with their roll.
#[test]
fn auto_roll_throws_for_the_next_player_in_the_action_that_began_the_turn() {
    let (mut game, mut dice) = started(cubeless(None));
    dice.0.extend([3, 2]);
    let events = act(&mut game, Seat::White, play(), &mut dice);
    assert_eq!(
        events.last(),
        Some(&Event::Rolled {
            seat: Seat::Black,
            dice: Dice::new(3, 2).unwrap()
        })
    );
    assert_eq!((game.turn, game.phase), (Seat::Black, Phase::Move));
    // Off, the same move leaves black to roll.
    let (mut game, mut dice) = started(cubeless(Some(false)));
    act(&mut game, Seat::White, play(), &mut dice);
    assert_eq!((game.turn, game.phase), (Seat::Black, Phase::Roll));
}

/// A player who can double rolls by hand; once the opponent owns the cube
/// they cannot, and the take itself throws their dice.
#[test]
fn auto_roll_leaves_a_player_who_can_double_to_roll_by_hand() {
    let (mut game, mut dice) = started(MatchSettings {
        auto_roll: Some(true),
        ..settings(0, ResignMode::ByPosition)
    });
    act(&mut game, Seat::White, play(), &mut dice);
    // The cube is centred: black may double, so black is left to choose.
    assert_eq!((game.turn, game.phase), (Seat::Black, Phase::Roll));
    act(&mut game, Seat::Black, Command::Double, &mut dice);
    dice.0.extend([4, 1]);
    let events = act(&mut game, Seat::White, Command::Take, &mut dice);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!((game.turn, game.phase), (Seat::Black, Phase::Move));
    // White owns the cube now: white's turn is left for white to begin.
    act(&mut game, Seat::Black, play(), &mut dice);
    assert_eq!((game.turn, game.phase), (Seat::White, Phase::Roll));
    dice.0.extend([6, 5]);
    act(&mut game, Seat::White, Command::Roll, &mut dice);
    dice.0.extend([2, 2]);
    act(&mut game, Seat::White, play(), &mut dice);
    // Black, who doubled, cannot redouble: rolled for.
    assert_eq!(game.cube.owner, Some(Seat::White));
    assert_eq!((game.turn, game.phase), (Seat::Black, Phase::Move));
    assert_eq!(game.dice, Some(Dice::new(2, 2).unwrap()));
}

/// The race where nobody can ever move: every throw passes.
struct Stuck;

impl Rules for Stuck {
    fn new_game(&self) -> Result<Setup<Vec<u8>>, RulesError> {
        Race.new_game()
    }
    fn legal_plays(&self, _: &[u8], _: Seat, _: Dice) -> Result<Vec<LegalPlay>, RulesError> {
        Ok(vec![LegalPlay {
            play: Play::EMPTY,
            result: Board::default(),
        }])
    }
    fn apply_play(
        &self,
        state: &[u8],
        _: Seat,
        _: Dice,
        _: &Play,
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        Ok(Transition::to(state.to_vec()))
    }
    fn after_roll(
        &self,
        state: &[u8],
        s: Seat,
        d: Dice,
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        Race.after_roll(state, s, d)
    }
    fn decide(&self, state: &[u8], s: Seat, c: &str) -> Result<Transition<Vec<u8>>, RulesError> {
        Race.decide(state, s, c)
    }
    fn concede(&self, state: &[u8], loser: Seat) -> Result<Outcome, RulesError> {
        Race.concede(state, loser)
    }
    fn win_kind(&self, level: u32) -> String {
        Race.win_kind(level)
    }
}

/// Where neither player can ever move, auto-roll stops after
/// MAX_AUTO_ROLLS throws in one action and leaves the next to roll by hand.
#[test]
fn auto_roll_stops_after_its_most_throws_in_one_action() {
    let mut dice = script(&[6, 1]);
    dice.0.extend(std::iter::repeat_n(2, 2 * MAX_AUTO_ROLLS));
    let (game, events) = Match::new(cubeless(None), &Stuck, &mut dice).unwrap();
    let passes = events
        .iter()
        .filter(|e| matches!(e, Event::Passed { .. }))
        .count();
    // The opening pass, then one for each throw.
    assert_eq!(passes, 1 + MAX_AUTO_ROLLS);
    assert_eq!(game.phase, Phase::Roll);
    assert!(dice.0.is_empty());
}

/// Running out of time costs the match by default (USBGF): the game in
/// progress is conceded on time, the other seat wins the match, and
/// nothing more can be done in it.
#[test]
fn time_running_out_costs_the_match_by_default() {
    let (mut game, mut dice) = started(settings(5, ResignMode::ByPosition));
    let events = act(
        &mut game,
        Seat::White,
        Command::TimeExpired {
            costs: OnTimeout::Match,
        },
        &mut dice,
    );
    assert_eq!(events[0], Event::TimeExpired { seat: Seat::White });
    assert!(matches!(events[1], Event::GameEnded { .. }));
    assert!(matches!(events[2], Event::MatchEnded { .. }));
    assert_eq!(
        (game.phase, game.winner),
        (Phase::MatchOver, Some(Seat::Black))
    );
    let conceded = &game.results[0];
    assert_eq!(
        (conceded.winner, conceded.reason),
        (Some(Seat::Black), EndReason::Time)
    );
    game.check().unwrap();
}

/// With `on_timeout: game`, the game in progress is lost on time, scored
/// as a resignation by position, and the next game starts.
#[test]
fn time_running_out_may_cost_the_game_only() {
    let (mut game, mut dice) = started(settings(5, ResignMode::Offer));
    dice.0.extend([3, 5]);
    let events = act(
        &mut game,
        Seat::White,
        Command::TimeExpired {
            costs: OnTimeout::Game,
        },
        &mut dice,
    );
    assert_eq!(events[0], Event::TimeExpired { seat: Seat::White });
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::GameStarted { game_number: 2, .. }))
    );
    assert_ne!(game.phase, Phase::MatchOver);
    assert_eq!(game.results[0].reason, EndReason::Time);
    assert_eq!(game.results[0].winner, Some(Seat::Black));
    assert!(game.score[1] >= 1);
    game.check().unwrap();
}
