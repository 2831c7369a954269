//! Starting and ending games: the opening, who starts, scoring, the
//! last-roll draw, Crawford, and the end of the match.

use super::*;

impl Match {
    /// Sets up the next game and decides who starts it (docs/rules.md §1.2, §4.3).
    pub(super) fn start_game(
        &mut self,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let setup = rules.new_game()?;
        self.game_number += 1;
        self.variant_state = setup.state;
        self.cube = Cube {
            value: 1,
            owner: None,
        };
        self.cube_in_play = setup.cube
            && self.settings.cube != CubeLimit::Off
            && self.crawford != Crawford::ThisGame;
        self.pending_double = None;
        self.resignation = None;
        self.declined = None;
        self.pending_decision = None;
        self.decision_after_play = false;
        self.pending_win = None;
        self.dice = None;

        let previous = self.results.last().and_then(|r| r.winner);
        // Who starts later games: the match's setting, else the variant's,
        // else the loser; settled once, so the settings show it.
        let later = *self
            .settings
            .first_move
            .get_or_insert(setup.first_move.unwrap_or(FirstMove::Loser));
        // Auto-roll, when the settings leave it open: on where there is
        // no cube to turn before rolling.
        let auto_roll = self.settings.auto_roll_default(setup.cube);
        self.settings.auto_roll.get_or_insert(auto_roll);
        let rule = if self.game_number == 1 {
            FirstMove::OpeningRoll
        } else {
            later
        };
        let designated = match (rule, previous) {
            (FirstMove::Loser, Some(winner)) => Some(winner.other()),
            (FirstMove::Winner, Some(winner)) => Some(winner),
            (FirstMove::Alternate, _) => Some(self.starter.other()),
            // The first game, a new opening every game, or after a draw.
            _ => None,
        };
        let crawford = self.crawford == Crawford::ThisGame;
        match designated {
            Some(starter) => {
                // The designated starter throws both dice fresh and may
                // double first (docs/rules.md §4.3).
                self.begin_game(starter);
                events.push(Event::GameStarted {
                    game_number: self.game_number,
                    starter,
                    opening: None,
                    crawford,
                });
                Ok(())
            }
            None => {
                let mut automatic_doubles = 0;
                let (white, black) = loop {
                    let (w, b) = (dice.die(), dice.die());
                    if w != b {
                        break (w, b);
                    }
                    // A tie is thrown again; in a money session with
                    // automatic doubles it doubles the centred cube first
                    // (docs/rules.md §1.5, §1.7).
                    if let Some(doubled) = self.cube.value.checked_mul(2)
                        && automatic_doubles < self.settings.auto_doubles
                        && self.cube_in_play
                        && self.settings.is_money()
                        && self.settings.cube.allows(doubled)
                    {
                        automatic_doubles += 1;
                        self.cube.value = doubled;
                    }
                    events.push(Event::OpeningTie {
                        dice: [w, b],
                        cube: self.cube.value,
                    });
                };
                let starter = if white > black {
                    Seat::White
                } else {
                    Seat::Black
                };
                self.begin_game(starter);
                events.push(Event::GameStarted {
                    game_number: self.game_number,
                    starter,
                    opening: Some([white, black]),
                    crawford,
                });
                match setup.opening {
                    Opening::ThrowAgain => Ok(()),
                    Opening::PlayOpeningDice => {
                        let (high, low) = (white.max(black), white.min(black));
                        let thrown = Dice::new(high, low).expect("opening dice are 1..=6");
                        events.push(Event::Rolled {
                            seat: starter,
                            dice: thrown,
                        });
                        self.begin_move(thrown, rules, dice, events)
                    }
                }
            }
        }
    }

    /// Takes up a match where `from` says, its first game in the position
    /// `setup` holds, with no opening throw: `from.on_roll` is to roll (or
    /// double). Later games go as in any match.
    pub(super) fn take_up(
        &mut self,
        setup: Setup<Vec<u8>>,
        from: Resume,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let invalid = |what: String| Err(CommandError::InvalidStart(what));
        let length = self.settings.match_length;
        if length > 0 && from.score.iter().any(|&s| s >= length) {
            return invalid(format!(
                "a score of {:?} is not below the match length {length}",
                from.score
            ));
        }
        let at_match_point = length > 0 && from.score.contains(&(length - 1));
        let both_at_match_point = length > 0 && from.score == [length - 1; 2];
        if from.crawford && !(self.settings.crawford && at_match_point && !both_at_match_point) {
            return invalid(
                "a Crawford game needs the Crawford rule and one player at match point".into(),
            );
        }
        let cube_in_play = setup.cube && self.settings.cube != CubeLimit::Off && !from.crawford;
        let cube = from.cube;
        let plain = cube.value == 1 && cube.owner.is_none();
        if !cube.value.is_power_of_two()
            || (cube.value > 1 && !self.settings.cube.allows(cube.value))
        {
            return invalid(format!(
                "a cube of {} is beyond this match's cube",
                cube.value
            ));
        }
        if !cube_in_play && !plain {
            return invalid("the cube is not in play in this game: it must be 1, centred".into());
        }
        if cube.owner.is_some() && cube.value == 1 {
            return invalid("a cube of 1 is centred".into());
        }
        if cube.owner.is_none() && cube.value > 1 && (length > 0 || self.settings.auto_doubles == 0)
        {
            return invalid(format!(
                "a centred cube of {} comes only from automatic doubles in money play",
                cube.value
            ));
        }
        self.score = from.score;
        self.crawford = match (from.crawford, at_match_point && self.settings.crawford) {
            (true, _) => Crawford::ThisGame,
            (false, true) => Crawford::Post,
            (false, false) => Crawford::Before,
        };
        self.game_number = 1;
        self.variant_state = setup.state;
        self.cube = cube;
        self.cube_in_play = cube_in_play;
        let later = setup.first_move.unwrap_or(FirstMove::Loser);
        self.settings.first_move.get_or_insert(later);
        let auto_roll = self.settings.auto_roll_default(setup.cube);
        self.settings.auto_roll.get_or_insert(auto_roll);
        self.begin_game(from.on_roll);
        events.push(Event::GameStarted {
            game_number: 1,
            starter: from.on_roll,
            opening: None,
            crawford: from.crawford,
        });
        Ok(())
    }

    fn begin_game(&mut self, starter: Seat) {
        self.starter = starter;
        self.first_mover = starter;
        self.turn = starter;
        self.phase = Phase::Roll;
    }

    /// The variant says the game is over.
    pub(super) fn game_over(
        &mut self,
        outcome: Outcome,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let Some(winner) = outcome.winner else {
            return self.end_game(self.draw(), rules, dice, events);
        };
        if let Some(first) = self.pending_win.take() {
            // The last roll bore everything off too: a draw (docs/rules.md §4.2).
            debug_assert_ne!(first.winner, Some(winner));
            return self.end_game(self.draw(), rules, dice, events);
        }
        let result = self.score_win(winner, &outcome.kind, outcome.level, EndReason::Played);
        if self.settings.draw_on_last_roll && winner == self.first_mover && outcome.by_bearing_off {
            // The win is judged now, on the loser's position before the
            // last roll; that roll only decides draw or not (docs/rules.md §4.2).
            self.pending_win = Some(result);
            self.turn = winner.other();
            self.dice = None;
            self.phase = Phase::Roll;
            events.push(Event::LastRoll {
                seat: winner.other(),
            });
            return Ok(());
        }
        self.end_game(result, rules, dice, events)
    }

    /// A win's value: the natural level capped by the scoring limit and
    /// Jacoby, times the cube (docs/rules.md §1.4, §1.7, §4.1).
    pub(super) fn score_win(
        &self,
        winner: Seat,
        kind: &str,
        level: u32,
        reason: EndReason,
    ) -> GameResult {
        let mut level = self.settings.scoring_limit.cap(level.max(1));
        if self.settings.is_money() && self.settings.jacoby && self.cube.owner.is_none() {
            level = 1;
        }
        GameResult {
            game_number: self.game_number,
            winner: Some(winner),
            reason,
            kind: kind.to_string(),
            level,
            cube: self.cube.value,
            points: level.saturating_mul(self.cube.value),
        }
    }

    fn draw(&self) -> GameResult {
        GameResult {
            game_number: self.game_number,
            winner: None,
            reason: EndReason::Played,
            kind: "draw".into(),
            level: 0,
            cube: self.cube.value,
            points: 0,
        }
    }

    /// Scores a finished game, then starts the next or ends the match.
    pub(super) fn end_game(
        &mut self,
        result: GameResult,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        self.score_game(result, events);
        if self.is_over() {
            self.winner = self.leader();
            self.phase = Phase::MatchOver;
            events.push(Event::MatchEnded {
                winner: self.winner,
                score: self.score,
            });
            return Ok(());
        }
        self.start_game(rules, dice, events)
    }

    /// Adds a finished game to the score and the results.
    fn score_game(&mut self, result: GameResult, events: &mut Vec<Event>) {
        if let Some(winner) = result.winner {
            self.score[winner.index()] = self.score[winner.index()].saturating_add(result.points);
        }
        self.update_crawford(&result);
        self.pending_win = None;
        self.dice = None;
        events.push(Event::GameEnded {
            result: result.clone(),
            score: self.score,
        });
        self.results.push(result);
    }

    /// `seat` leaves the match: the game in progress is scored as `seat`
    /// concedes it, then the match ends at once. A match to N points goes
    /// to the other seat, by forfeit; a money session to whoever leads.
    pub(super) fn abandon(
        &mut self,
        seat: Seat,
        rules: &impl Rules,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let result = self.conceded_by(seat, rules)?;
        self.pending_double = None;
        self.resignation = None;
        self.pending_decision = None;
        events.push(Event::MatchAbandoned { seat });
        self.forfeit(seat, result, events);
        Ok(())
    }

    /// Scores the game `seat` concedes, then ends the match at once: a
    /// match to N points goes to the other seat; a money session to
    /// whoever leads.
    fn forfeit(&mut self, seat: Seat, result: GameResult, events: &mut Vec<Event>) {
        self.score_game(result, events);
        self.phase = Phase::MatchOver;
        self.winner = if self.settings.is_money() {
            self.leader()
        } else {
            Some(seat.other())
        };
        events.push(Event::MatchEnded {
            winner: self.winner,
            score: self.score,
        });
    }

    /// `seat`'s time ran out: the game in progress is scored as `seat`
    /// concedes it (as when leaving; a game it lost on the board stays as
    /// played, one it concedes is lost on time); then the match ends as
    /// when leaving, or the next game starts.
    pub(super) fn time_expired(
        &mut self,
        seat: Seat,
        costs: OnTimeout,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let mut result = self.conceded_by(seat, rules)?;
        if result.reason == EndReason::Resigned {
            result.reason = EndReason::Time;
        }
        self.pending_double = None;
        self.resignation = None;
        self.pending_decision = None;
        events.push(Event::TimeExpired { seat });
        match costs {
            OnTimeout::Game => self.end_game(result, rules, dice, events),
            OnTimeout::Match => {
                self.forfeit(seat, result, events);
                Ok(())
            }
        }
    }

    /// The game in progress as `seat`, leaving, concedes it: a game
    /// already decided (a last roll to come) as decided; a double `seat`
    /// was to answer as dropped; otherwise as a resignation by position
    /// (what the position concedes, times the cube), so that leaving never
    /// costs less than resigning.
    fn conceded_by(&self, seat: Seat, rules: &impl Rules) -> Result<GameResult, CommandError> {
        if let Some(win) = &self.pending_win {
            return Ok(win.clone());
        }
        if let (Phase::CubeOffered, Some(offer)) = (self.phase, &self.pending_double)
            && offer.by != seat
        {
            return Ok(self.dropped(offer));
        }
        let outcome = rules.concede(&self.variant_state, seat)?;
        Ok(self.score_win(
            seat.other(),
            &outcome.kind,
            outcome.level,
            EndReason::Resigned,
        ))
    }

    /// docs/rules.md §1.6: the game after a player first reaches N-1 (the other
    /// not) is the Crawford game; a drawn Crawford game is replayed as one.
    fn update_crawford(&mut self, result: &GameResult) {
        let n = self.settings.match_length;
        if self.settings.is_money() || !self.settings.crawford {
            return;
        }
        match self.crawford {
            Crawford::ThisGame if result.winner.is_some() => self.crawford = Crawford::Post,
            Crawford::Before => {
                let at_match_point = self.score.map(|s| s + 1 == n);
                if at_match_point[0] != at_match_point[1] && self.score.iter().all(|&s| s < n) {
                    self.crawford = Crawford::ThisGame;
                } else if at_match_point[0] && at_match_point[1] {
                    self.crawford = Crawford::Post;
                }
            }
            _ => {}
        }
    }

    fn is_over(&self) -> bool {
        if self.settings.is_money() {
            self.settings.money_games != 0 && self.results.len() as u32 >= self.settings.money_games
        } else {
            self.score.iter().any(|&s| s >= self.settings.match_length)
        }
    }

    fn leader(&self) -> Option<Seat> {
        match self.score[0].cmp(&self.score[1]) {
            std::cmp::Ordering::Greater => Some(Seat::White),
            std::cmp::Ordering::Less => Some(Seat::Black),
            std::cmp::Ordering::Equal => None,
        }
    }
}
