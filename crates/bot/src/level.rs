//! The computer player's levels, for people: the strongest searches one
//! roll ahead; the others are the net at 0-ply, with noise on each play's
//! value for the weaker ones (GNU Backgammon's way). Their measured
//! strength is in docs/bot.md.

/// A level: its name, its search (0 or 1 ply), and the noise (standard
/// deviation, in equity) on each play's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    pub name: &'static str,
    pub plies: u8,
    pub noise: f32,
}

/// Every level, weakest first; the last is the strongest (an empty level
/// name means it).
pub const LEVELS: [Level; 5] = [
    Level {
        name: "beginner",
        plies: 0,
        noise: 0.2,
    },
    Level {
        name: "casual",
        plies: 0,
        noise: 0.1,
    },
    Level {
        name: "intermediate",
        plies: 0,
        noise: 0.05,
    },
    Level {
        name: "advanced",
        plies: 0,
        noise: 0.0,
    },
    Level {
        name: "expert",
        plies: 1,
        noise: 0.0,
    },
];

/// The level of a name (empty: the strongest).
pub fn level(name: &str) -> Option<Level> {
    if name.is_empty() {
        return LEVELS.last().copied();
    }
    LEVELS.iter().find(|l| l.name == name).copied()
}
