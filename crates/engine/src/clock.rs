//! A match clock: each seat's reserve of time, the seat whose time runs,
//! and when it runs out. Pure arithmetic on instants the caller gives
//! (milliseconds since the Unix epoch): the host owns time; this module
//! never reads a clock.
//!
//! The rules (USBGF clock rules, 2013; PlayStrategy's and lichess's delay
//! and Fischer clocks): a seat's time runs while the game waits for it.
//! At each of its turns the first `delay_ms` cost nothing (simple delay);
//! then its reserve runs. After each completed turn `increment_ms` is
//! added to its reserve (Fischer). `turn_limit_ms` caps any single turn
//! whatever the reserve. The reserve starts at `reserve_ms` plus
//! `reserve_per_point_ms` for each point of the match length.

use serde::{Deserialize, Serialize};

use crate::Seat;

/// What running out of time costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnTimeout {
    /// The match (USBGF): the other seat wins it.
    Match,
    /// The game in progress, scored as a resignation by position; play
    /// goes on with the next game.
    Game,
}

/// A clock's settings, as a match is created with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockSettings {
    pub reserve_ms: u64,
    pub reserve_per_point_ms: u64,
    pub delay_ms: u64,
    pub increment_ms: u64,
    /// 0: no cap on a turn.
    pub turn_limit_ms: u64,
    pub on_timeout: OnTimeout,
}

/// The longest any setting may be: 30 days (correspondence play gives
/// days per move, not months).
pub const MAX_SETTING_MS: u64 = 30 * 24 * 3600 * 1000;

/// Settings that make no sense, naming the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ClockSettingsError {
    pub field: &'static str,
    pub message: String,
}

impl ClockSettings {
    /// Refuses a clock with no time in it, and settings beyond
    /// [`MAX_SETTING_MS`].
    pub fn check(&self) -> Result<(), ClockSettingsError> {
        for (field, value) in [
            ("reserve_ms", self.reserve_ms),
            ("reserve_per_point_ms", self.reserve_per_point_ms),
            ("delay_ms", self.delay_ms),
            ("increment_ms", self.increment_ms),
            ("turn_limit_ms", self.turn_limit_ms),
        ] {
            if value > MAX_SETTING_MS {
                return Err(ClockSettingsError {
                    field,
                    message: format!("at most {MAX_SETTING_MS} ms (30 days), not {value}"),
                });
            }
        }
        if self.reserve_ms == 0
            && self.reserve_per_point_ms == 0
            && self.delay_ms == 0
            && self.increment_ms == 0
            && self.turn_limit_ms == 0
        {
            return Err(ClockSettingsError {
                field: "clock",
                message:
                    "a clock needs some time: a reserve, a delay, an increment or a turn limit"
                        .into(),
            });
        }
        if self.reserve_ms == 0 && self.reserve_per_point_ms == 0 && self.turn_limit_ms == 0 {
            // Only a delay or an increment: the first turn longer than the
            // delay would lose at once. Say so rather than surprise.
            return Err(ClockSettingsError {
                field: "reserve_ms",
                message: "a clock with a delay or an increment needs a reserve (or a turn limit)"
                    .into(),
            });
        }
        Ok(())
    }

    /// A seat's reserve at the start of a match to `match_length` points
    /// (0: a money session, which gets `reserve_ms` alone). A clock with
    /// no reserve at all (a turn limit alone) never runs out of it:
    /// `u64::MAX`.
    pub fn starting_reserve(&self, match_length: u32) -> u64 {
        if self.reserve_ms == 0 && self.reserve_per_point_ms == 0 {
            return u64::MAX;
        }
        self.reserve_ms.saturating_add(
            self.reserve_per_point_ms
                .saturating_mul(u64::from(match_length)),
        )
    }
}

/// A running match's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    pub settings: ClockSettings,
    /// Each seat's reserve, white first, as of when its last turn ended
    /// (for the running seat: as of `since`).
    pub reserve_ms: [u64; 2],
    /// The seat whose time runs, and since when (ms since the epoch):
    /// None when the game waits for nobody (the match is over).
    pub running: Option<(Seat, u64)>,
}

/// What a turn cost, once it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Used {
    pub seat: Seat,
    /// Time the seat took (wall time, delay included).
    pub took_ms: u64,
    /// What its reserve lost (after the delay; before the increment).
    pub charged_ms: u64,
}

impl Clock {
    /// A clock at the start of a match, running for nobody yet.
    pub fn new(settings: ClockSettings, match_length: u32) -> Clock {
        let reserve = settings.starting_reserve(match_length);
        Clock {
            settings,
            reserve_ms: [reserve, reserve],
            running: None,
        }
    }

    /// The instant `seat`'s time, running since `since`, runs out: after
    /// the delay and its reserve, or at the turn limit if that is sooner.
    fn runs_out(&self, seat: Seat, since: u64) -> u64 {
        let by_reserve = since
            .saturating_add(self.settings.delay_ms)
            .saturating_add(self.reserve_ms[seat.index()]);
        match self.settings.turn_limit_ms {
            0 => by_reserve,
            limit => by_reserve.min(since.saturating_add(limit)),
        }
    }

    /// When the running seat's time runs out (None: no time runs).
    pub fn deadline_ms(&self) -> Option<u64> {
        self.running.map(|(seat, since)| self.runs_out(seat, since))
    }

    /// Whether the running seat's time is up at `now`.
    pub fn expired(&self, now: u64) -> bool {
        self.deadline_ms().is_some_and(|deadline| now >= deadline)
    }

    /// Each seat's time as of `now`, white first: its reserve (the running
    /// seat's less what its turn has cost so far, and never more than what
    /// is left before its deadline; a waiting seat's never more than a
    /// turn limit), and the delay left in the running seat's turn.
    pub fn remaining(&self, now: u64) -> ([u64; 2], u64) {
        let mut reserve = self.reserve_ms;
        if self.settings.turn_limit_ms > 0 {
            reserve = reserve.map(|r| r.min(self.settings.turn_limit_ms));
        }
        let mut delay_left = 0;
        if let Some((seat, since)) = self.running {
            let took = now.saturating_sub(since);
            delay_left = self.settings.delay_ms.saturating_sub(took);
            let charged = took.saturating_sub(self.settings.delay_ms);
            let left = self.runs_out(seat, since).saturating_sub(now);
            reserve[seat.index()] = self.reserve_ms[seat.index()]
                .saturating_sub(charged)
                .min(left);
        }
        (reserve, delay_left)
    }

    /// The game now waits for `next` (None: for nobody) from `now`: the
    /// running seat's turn ends at `now` (charged, then given the
    /// increment if it completed a turn, that is, if the game waits for
    /// the other seat next or for nobody), and `next`'s time starts. When
    /// the game still waits for the same seat (it rolled, and now moves),
    /// its turn goes on: nothing is charged and its time keeps running.
    pub fn hand_over(&mut self, next: Option<Seat>, now: u64) -> Option<Used> {
        let running = self.running;
        if let (Some((seat, _)), Some(next)) = (running, next)
            && seat == next
        {
            return None;
        }
        let used = running.map(|(seat, since)| {
            let took_ms = now.saturating_sub(since);
            let charged_ms = took_ms.saturating_sub(self.settings.delay_ms);
            let reserve = &mut self.reserve_ms[seat.index()];
            *reserve = reserve
                .saturating_sub(charged_ms)
                .saturating_add(self.settings.increment_ms);
            Used {
                seat,
                took_ms,
                charged_ms,
            }
        });
        self.running = next.map(|seat| (seat, now));
        used
    }

    /// `seat`'s reserve back to what a match to `match_length` starts
    /// with: after it lost a game on time ([`OnTimeout::Game`]), it plays
    /// the next with its time anew rather than losing each at once.
    pub fn refill(&mut self, seat: Seat, match_length: u32) {
        self.reserve_ms[seat.index()] = self.settings.starting_reserve(match_length);
    }

    /// The running seat's time is up at `now`: its reserve is spent and
    /// the clock stops. Returns the seat and what its turn took.
    pub fn flag(&mut self, now: u64) -> Option<Used> {
        let (seat, since) = self.running.take()?;
        let took_ms = now.saturating_sub(since);
        let charged_ms = self.reserve_ms[seat.index()];
        self.reserve_ms[seat.index()] = 0;
        Some(Used {
            seat,
            took_ms,
            charged_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> ClockSettings {
        ClockSettings {
            reserve_ms: 60_000,
            reserve_per_point_ms: 0,
            delay_ms: 0,
            increment_ms: 0,
            turn_limit_ms: 0,
            on_timeout: OnTimeout::Match,
        }
    }

    /// USBGF: 2 minutes per match point and a 12-second delay per move; a
    /// 7-point match gives each seat 14 minutes.
    #[test]
    fn usbgf_a_seven_point_match_gives_fourteen_minutes_and_a_twelve_second_delay() {
        let usbgf = ClockSettings {
            reserve_ms: 0,
            reserve_per_point_ms: 120_000,
            delay_ms: 12_000,
            ..settings()
        };
        assert_eq!(usbgf.check(), Ok(()));
        let mut clock = Clock::new(usbgf, 7);
        assert_eq!(clock.reserve_ms, [840_000, 840_000]);
        clock.hand_over(Some(Seat::White), 1_000);
        // The flag falls after the delay and the whole reserve.
        assert_eq!(clock.deadline_ms(), Some(1_000 + 12_000 + 840_000));
        // A 10-second turn costs nothing: it is within the delay.
        let used = clock.hand_over(Some(Seat::Black), 11_000).unwrap();
        assert_eq!(
            (used.seat, used.took_ms, used.charged_ms),
            (Seat::White, 10_000, 0)
        );
        assert_eq!(clock.reserve_ms[0], 840_000);
        // A 20-second turn costs 8 seconds.
        let used = clock.hand_over(Some(Seat::White), 31_000).unwrap();
        assert_eq!((used.seat, used.charged_ms), (Seat::Black, 8_000));
        assert_eq!(clock.reserve_ms[1], 832_000);
    }

    /// A delay that is not used is lost; the reserve shown counts down only
    /// after it.
    #[test]
    fn simple_delay_runs_first_and_is_not_banked() {
        let mut clock = Clock::new(
            ClockSettings {
                delay_ms: 5_000,
                ..settings()
            },
            0,
        );
        clock.hand_over(Some(Seat::White), 0);
        assert_eq!(clock.remaining(2_000), ([60_000, 60_000], 3_000));
        assert_eq!(clock.remaining(7_000), ([58_000, 60_000], 0));
        clock.hand_over(Some(Seat::Black), 1_000);
        assert_eq!(
            clock.reserve_ms,
            [60_000, 60_000],
            "the unused delay is not added"
        );
    }

    /// Fischer: the increment is added after each completed turn, also to
    /// a turn that used less than it.
    #[test]
    fn fischer_increment_is_added_after_each_completed_turn() {
        let mut clock = Clock::new(
            ClockSettings {
                increment_ms: 2_000,
                ..settings()
            },
            0,
        );
        clock.hand_over(Some(Seat::White), 0);
        clock.hand_over(Some(Seat::Black), 5_000);
        assert_eq!(clock.reserve_ms[0], 57_000);
        clock.hand_over(Some(Seat::White), 6_000);
        assert_eq!(clock.reserve_ms[1], 61_000);
        assert_eq!(clock.deadline_ms(), Some(6_000 + 57_000));
    }

    /// The same seat acting twice in a row (it rolled, then moves) is one
    /// turn: charged once, one increment.
    #[test]
    fn a_roll_then_a_move_by_the_same_seat_is_one_turn() {
        let mut clock = Clock::new(
            ClockSettings {
                increment_ms: 1_000,
                ..settings()
            },
            0,
        );
        clock.hand_over(Some(Seat::White), 0);
        assert_eq!(clock.hand_over(Some(Seat::White), 4_000), None);
        let used = clock.hand_over(Some(Seat::Black), 9_000).unwrap();
        assert_eq!(used.took_ms, 9_000);
        assert_eq!(clock.reserve_ms[0], 60_000 - 9_000 + 1_000);
    }

    /// The turn limit caps a turn whatever the reserve.
    #[test]
    fn the_turn_limit_caps_a_turn_whatever_the_reserve() {
        let mut clock = Clock::new(
            ClockSettings {
                turn_limit_ms: 10_000,
                ..settings()
            },
            0,
        );
        clock.hand_over(Some(Seat::Black), 100);
        assert_eq!(clock.deadline_ms(), Some(10_100));
        assert!(!clock.expired(10_099));
        assert!(clock.expired(10_100));
        assert_eq!(clock.remaining(5_100).0[1], 5_000, "the turn's time left");
        // With a small reserve, the reserve decides.
        clock.reserve_ms[1] = 3_000;
        assert_eq!(clock.deadline_ms(), Some(3_100));
    }

    /// Losing a game on time, a seat plays the next with its time anew.
    #[test]
    fn a_seat_that_lost_a_game_on_time_gets_its_reserve_back() {
        let mut clock = Clock::new(
            ClockSettings {
                reserve_per_point_ms: 10_000,
                on_timeout: OnTimeout::Game,
                ..settings()
            },
            3,
        );
        clock.hand_over(Some(Seat::White), 0);
        clock.flag(90_000);
        assert_eq!(clock.reserve_ms[0], 0);
        clock.refill(Seat::White, 3);
        assert_eq!(clock.reserve_ms, [90_000, 90_000]);
    }

    #[test]
    fn the_flag_spends_the_reserve_and_stops_the_clock() {
        let mut clock = Clock::new(settings(), 0);
        clock.hand_over(Some(Seat::White), 0);
        let used = clock.flag(60_000).unwrap();
        assert_eq!(
            (used.seat, used.took_ms, used.charged_ms),
            (Seat::White, 60_000, 60_000)
        );
        assert_eq!(clock.reserve_ms, [0, 60_000]);
        assert_eq!(clock.deadline_ms(), None);
    }

    #[test]
    fn settings_that_make_no_sense_are_refused_naming_the_field() {
        let empty = ClockSettings {
            reserve_ms: 0,
            ..settings()
        };
        assert_eq!(empty.check().unwrap_err().field, "clock");
        let delay_only = ClockSettings {
            delay_ms: 1_000,
            ..empty
        };
        assert_eq!(delay_only.check().unwrap_err().field, "reserve_ms");
        let huge = ClockSettings {
            increment_ms: MAX_SETTING_MS + 1,
            ..settings()
        };
        assert_eq!(huge.check().unwrap_err().field, "increment_ms");
        let limit_only = ClockSettings {
            turn_limit_ms: 86_400_000,
            ..empty
        };
        assert_eq!(limit_only.check(), Ok(()), "days per move");
    }

    /// Days per move: a turn limit alone, no reserve to run out of.
    #[test]
    fn a_turn_limit_alone_gives_each_turn_that_long() {
        let day = 86_400_000;
        let mut clock = Clock::new(
            ClockSettings {
                reserve_ms: 0,
                turn_limit_ms: day,
                ..settings()
            },
            5,
        );
        clock.hand_over(Some(Seat::White), 0);
        assert_eq!(clock.deadline_ms(), Some(day));
        clock.hand_over(Some(Seat::Black), day - 1);
        assert_eq!(clock.deadline_ms(), Some(2 * day - 1));
        assert_eq!(clock.remaining(day - 1), ([day, day], 0));
    }
}
