//! The doubling cube (docs/rules.md §1.5) and resignation (docs/rules.md §1.8).

use super::*;

impl Match {
    /// The value `seat` would double the cube to, or why it cannot
    /// double in this game as it stands (whoever is on turn).
    pub fn double_value(&self, seat: Seat) -> Result<u32, &'static str> {
        if !self.cube_in_play {
            return Err(if self.crawford == Crawford::ThisGame {
                "this is the Crawford game"
            } else {
                "the cube is not used in this game"
            });
        }
        if self.pending_win.is_some() {
            return Err("the game is decided; only the last roll remains");
        }
        if self.cube.owner == Some(seat.other()) {
            return Err("your opponent owns the cube");
        }
        let Some(value) = self
            .cube
            .value
            .checked_mul(2)
            .filter(|&v| self.settings.cube.allows(v))
        else {
            return Err("the cube is at its limit");
        };
        let s = &self.settings;
        if !s.is_money()
            && s.dead_cube_check
            && self.score[seat.index()].saturating_add(self.cube.value) >= s.match_length
        {
            return Err("you already win the match at the current cube value (dead cube)");
        }
        Ok(value)
    }

    pub(super) fn double(
        &mut self,
        seat: Seat,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        self.expect(seat, Phase::Roll)?;
        let value = self
            .double_value(seat)
            .map_err(|why| CommandError::CubeUnavailable(why.to_string()))?;
        self.pending_double = Some(PendingDouble {
            by: seat,
            value,
            beaver: false,
        });
        self.phase = Phase::CubeOffered;
        events.push(Event::DoubleOffered { seat, value });
        Ok(())
    }

    pub(super) fn take(&mut self, seat: Seat, events: &mut Vec<Event>) -> Result<(), CommandError> {
        self.expect(seat, Phase::CubeOffered)?;
        let offer = self.pending_double.take().expect("a double is pending");
        self.cube = Cube {
            value: offer.value,
            // After a beaver the beaverer keeps the cube (docs/rules.md §1.5).
            owner: Some(if offer.beaver { offer.by } else { seat }),
        };
        // The doubler, whose turn it is, now rolls.
        self.phase = Phase::Roll;
        events.push(Event::DoubleTaken {
            seat,
            value: offer.value,
        });
        Ok(())
    }

    pub(super) fn beaver(
        &mut self,
        seat: Seat,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        self.expect(seat, Phase::CubeOffered)?;
        let refuse = |why: &str| Err(CommandError::CubeUnavailable(why.to_string()));
        if !self.settings.is_money() || !self.settings.beavers {
            return refuse("beavers are not allowed in this match");
        }
        let offer = self.pending_double.expect("a double is pending");
        if offer.beaver {
            return refuse("a beaver cannot be beavered (raccoons are not supported)");
        }
        let Some(value) = offer
            .value
            .checked_mul(2)
            .filter(|&v| self.settings.cube.allows(v))
        else {
            return refuse("the cube is at its limit");
        };
        self.pending_double = Some(PendingDouble {
            by: seat,
            value,
            beaver: true,
        });
        events.push(Event::Beavered { seat, value });
        Ok(())
    }

    pub(super) fn drop_double(
        &mut self,
        seat: Seat,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        self.expect(seat, Phase::CubeOffered)?;
        let offer = self.pending_double.take().expect("a double is pending");
        events.push(Event::DoubleDropped { seat });
        let result = self.dropped(&offer);
        self.end_game(result, rules, dice, events)
    }

    /// A game ended by dropping `offer`: the doubler scores the value
    /// before the (last) double, with no gammons (docs/rules.md §1.5; T27).
    pub(super) fn dropped(&self, offer: &PendingDouble) -> GameResult {
        let value = offer.value / 2;
        GameResult {
            game_number: self.game_number,
            winner: Some(offer.by),
            reason: EndReason::Dropped,
            kind: "dropped".into(),
            level: 1,
            cube: value,
            points: value,
        }
    }

    pub(super) fn resign(
        &mut self,
        seat: Seat,
        level: Option<u32>,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        if !matches!(self.phase, Phase::Roll | Phase::Move | Phase::Decision) {
            return Err(CommandError::Resignation(
                "answer the pending double or resignation first".into(),
            ));
        }
        if self.pending_win.is_some() {
            return Err(CommandError::Resignation(
                "the game is decided; only the last roll remains".into(),
            ));
        }
        match self.settings.resignation {
            ResignMode::ByPosition => {
                if level.is_some() {
                    return Err(CommandError::Resignation(
                        "this match resigns by position: give no level".into(),
                    ));
                }
                let outcome = rules.concede(&self.variant_state, seat)?;
                let result = self.score_win(
                    seat.other(),
                    &outcome.kind,
                    outcome.level,
                    EndReason::Resigned,
                );
                self.end_game(result, rules, dice, events)
            }
            ResignMode::Offer => {
                let max = max_level(rules);
                let Some(level) = level.filter(|l| (1..=max).contains(l)) else {
                    return Err(CommandError::Resignation(format!(
                        "offer a level from 1 to {max}: how many times the cube the game is conceded for"
                    )));
                };
                if let Some((declined_by, declined)) = self.declined
                    && declined_by == seat
                    && level <= declined
                {
                    return Err(CommandError::Resignation(format!(
                        "level {declined} was declined; offer more, or play on first"
                    )));
                }
                self.resignation = Some(ResignationOffer {
                    by: seat,
                    level,
                    resume: self.phase,
                });
                self.phase = Phase::ResignationOffered;
                events.push(Event::ResignationOffered { seat, level });
                Ok(())
            }
        }
    }

    pub(super) fn accept_resignation(
        &mut self,
        seat: Seat,
        rules: &impl Rules,
        dice: &mut impl DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        self.expect(seat, Phase::ResignationOffered)?;
        let offer = self.resignation.take().expect("an offer is pending");
        // Never more than the variant allows, whenever the offer was made.
        let level = offer.level.min(max_level(rules));
        // Named by the variant, as the same win played out would be.
        let kind = rules.win_kind(level);
        let result = self.score_win(seat, &kind, level, EndReason::Resigned);
        self.end_game(result, rules, dice, events)
    }

    pub(super) fn decline_resignation(
        &mut self,
        seat: Seat,
        events: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        self.expect(seat, Phase::ResignationOffered)?;
        let offer = self.resignation.take().expect("an offer is pending");
        self.phase = offer.resume;
        self.declined = Some((offer.by, offer.level));
        events.push(Event::ResignationDeclined { seat });
        Ok(())
    }
}

/// The highest resignation level of the variant, kept within 1..=3 whatever
/// its rules say.
fn max_level(rules: &impl Rules) -> u32 {
    rules.max_win_level().clamp(1, 3)
}
