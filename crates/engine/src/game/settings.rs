//! The match and cube settings a game is created with (docs/rules.md §1.5-1.8
//! and §4), the same for every variant.

use serde::{Deserialize, Serialize};

/// The doubling cube's limit (docs/rules.md §4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CubeLimit {
    /// No cube in this match.
    Off,
    /// The cube may reach this value (2, 4, ... 64).
    Max(u32),
    Unlimited,
}

impl CubeLimit {
    /// Whether the cube may be turned to `value`.
    pub fn allows(self, value: u32) -> bool {
        match self {
            CubeLimit::Off => false,
            CubeLimit::Max(max) => value <= max,
            CubeLimit::Unlimited => true,
        }
    }
}

/// The highest win type that counts (docs/rules.md §4.1: the seeds' Oin, Mars, Cox).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoringLimit {
    /// Every win counts as a single game.
    Oin,
    /// Gammons count, backgammons count as gammons.
    Mars,
    /// Singles, gammons and backgammons all count (gnubg).
    Cox,
}

impl ScoringLimit {
    pub fn cap(self, level: u32) -> u32 {
        match self {
            ScoringLimit::Oin => level.min(1),
            ScoringLimit::Mars => level.min(2),
            ScoringLimit::Cox => level,
        }
    }
}

/// How a player resigns (docs/rules.md §1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResignMode {
    /// Resigning ends the game at once; its value is read off the position.
    ByPosition,
    /// The resigner offers a level (1, 2, 3); the opponent accepts or declines.
    Offer,
}

/// Who starts the games after the first (docs/rules.md §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstMove {
    /// The loser of the previous game throws both dice and moves first.
    Loser,
    /// Starters alternate game by game.
    Alternate,
    /// The previous winner starts.
    Winner,
    /// A new opening roll every game.
    OpeningRoll,
}

/// Everything about a match that is not the variant's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchSettings {
    /// Points to win the match; 0 for a money session.
    pub match_length: u32,
    /// Games in a money session (0: no limit). Ignored in match play.
    pub money_games: u32,
    pub cube: CubeLimit,
    /// Refuse a double that cannot help the doubler (docs/rules.md §1.5 rule 5).
    pub dead_cube_check: bool,
    pub crawford: bool,
    /// Money only: gammons count single with a centred cube (docs/rules.md §1.7).
    pub jacoby: bool,
    /// Money only: the doubled player may redouble at once (docs/rules.md §1.5).
    pub beavers: bool,
    /// Money only: each tied opening throw doubles the centred cube, at
    /// most this many times a game (gnubg's automatic doubles; 0: none).
    pub auto_doubles: u32,
    pub scoring_limit: ScoringLimit,
    pub resignation: ResignMode,
    /// The player who moved second gets a last roll to draw (docs/rules.md §4.2).
    pub draw_on_last_roll: bool,
    /// Who starts later games; None: the variant's default, else the loser
    /// (filled in when the match starts).
    pub first_move: Option<FirstMove>,
    /// The match rolls for a player whose turn begins when they cannot
    /// double (FIBS's autoroll): None: on when the first game has no cube
    /// (the variant's or the settings'), off otherwise (filled in when the
    /// match starts).
    pub auto_roll: Option<bool>,
    /// The seats the service plays itself, each at a level of its computer
    /// player (an empty level: the strongest).
    pub bots: Vec<BotSeat>,
    /// Whether a seat may ask for a hint while the match is in progress
    /// (off for rated play; a finished match can always be analysed).
    pub hints: bool,
}

/// A seat the service plays (docs/bot.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotSeat {
    pub seat: crate::Seat,
    /// The computer player's level (empty: the strongest).
    pub level: String,
}

impl Default for MatchSettings {
    fn default() -> Self {
        MatchSettings {
            match_length: 0,
            money_games: 1,
            cube: CubeLimit::Max(64),
            dead_cube_check: true,
            crawford: true,
            jacoby: false,
            beavers: false,
            auto_doubles: 0,
            scoring_limit: ScoringLimit::Cox,
            resignation: ResignMode::ByPosition,
            draw_on_last_roll: false,
            first_move: None,
            auto_roll: None,
            bots: Vec::new(),
            hints: false,
        }
    }
}

/// Why settings were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct SettingsError {
    pub field: &'static str,
    pub message: String,
}

impl MatchSettings {
    /// Auto-roll's value when the settings leave it open: on where a game
    /// with this variant's setup (`variant_cube`: whether it uses the cube)
    /// and these settings has no cube to turn before rolling.
    pub fn auto_roll_default(&self, variant_cube: bool) -> bool {
        !(variant_cube && self.cube != CubeLimit::Off)
    }

    pub fn is_money(&self) -> bool {
        self.match_length == 0
    }

    /// Checks the settings hang together.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let error = |field, message: &str| {
            Err(SettingsError {
                field,
                message: message.to_string(),
            })
        };
        if self.match_length > 255 {
            return error("match_length", "at most 255 points");
        }
        if let CubeLimit::Max(max) = self.cube
            && !(2..=4096).contains(&max) | !max.is_power_of_two()
        {
            return error("cube", "the cube limit is a power of two from 2 to 4096");
        }
        if !self.is_money() {
            for (field, set) in [
                ("jacoby", self.jacoby),
                ("beavers", self.beavers),
                ("auto_doubles", self.auto_doubles > 0),
            ] {
                if set {
                    return error(field, "applies to money sessions only (match_length 0)");
                }
            }
        }
        if let [a, b] = self.bots.as_slice()
            && a.seat == b.seat
        {
            return error("bots", "a seat is played by one computer player");
        }
        if self.bots.len() > 2 {
            return error("bots", "there are two seats");
        }
        Ok(())
    }

    /// The level of the computer player on `seat`, if the service plays it.
    pub fn bot(&self, seat: crate::Seat) -> Option<&str> {
        self.bots
            .iter()
            .find(|b| b.seat == seat)
            .map(|b| b.level.as_str())
    }
}
