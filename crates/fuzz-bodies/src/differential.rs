//! The differential target: the standard rules in Rust (the code of the
//! `bg-standard` plugin, linked in here so that libFuzzer sees its
//! branches) and the C plugin of `examples/c-plugin` (loaded from its
//! `.so` through the plugin host, as the server loads it), asked for the
//! legal plays of the same position and dice. Two implementations written
//! apart, from the same rules (docs/rules): any difference is a bug in
//! one of them, or in the host's checks of a plugin's answers.

use std::path::Path;

use bg_engine::{Board, Dice, LegalPlay, Seat};
use bg_plugin_host::Plugin;
use bg_standard_rules::Standard;
use bg_variant_api::{Options, Variant};

/// The environment variable naming the C plugin's file for the fuzz
/// target (`scripts/fuzz-smoke` and docs/testing.md build it).
pub const C_PLUGIN_VAR: &str = "BG_FUZZ_C_PLUGIN";

/// Both implementations, loaded once.
pub struct Differential {
    c: Plugin,
}

impl Differential {
    /// Loads the C plugin from `path` (a compiled `examples/c-plugin`).
    pub fn load(path: &Path) -> Differential {
        let c = bg_plugin_host::load(path)
            .unwrap_or_else(|e| panic!("loading the C plugin {}: {e}", path.display()));
        Differential { c }
    }

    /// The C plugin named by [`C_PLUGIN_VAR`].
    pub fn from_env() -> Differential {
        let path = std::env::var_os(C_PLUGIN_VAR).unwrap_or_else(|| {
            panic!("{C_PLUGIN_VAR} must name the compiled examples/c-plugin (see docs/testing.md)")
        });
        Differential::load(Path::new(&path))
    }

    /// The bytes as a position and dice; both sides' legal plays from it
    /// asked of both implementations, which must agree: on whether the
    /// position can be set up, and on the set of result boards.
    pub fn check(&self, data: &[u8]) {
        let Some((board, dice)) = position(data) else {
            return;
        };
        let options = Options::new();
        let rust = Standard.setup_position(&board, &options);
        let c = self.c.setup_position(&board, &options);
        let (rust, c) = match (rust, c) {
            (Ok(rust), Ok(c)) => (rust.state, c.state),
            (Err(_), Err(_)) => return,
            (rust, c) => panic!(
                "set-up differs on {board:?}: Rust {:?}, C {:?}",
                rust.err(),
                c.err()
            ),
        };
        for seat in [Seat::White, Seat::Black] {
            let mut plays = Vec::new();
            Standard.legal_plays(&rust, seat, dice, &mut plays);
            let want = results(&plays);
            self.c
                .legal_plays(&c, seat, dice, &mut plays)
                .unwrap_or_else(|e| panic!("the C plugin refused {board:?} {dice:?}: {e}"));
            let got = results(&plays);
            assert_eq!(
                want, got,
                "{seat:?} to play {dice:?} on {board:?}: Rust's results, then C's"
            );
        }
    }
}

/// The result boards, sorted (each result once is part of the contract,
/// so repeats are kept to be compared).
fn results(plays: &[LegalPlay]) -> Vec<Board> {
    let mut boards: Vec<Board> = plays.iter().map(|p| p.result).collect();
    boards.sort();
    boards
}

/// Two bytes for the dice, then one a checker (white's 15, then black's),
/// each its place in its own side's numbering, the byte modulo 26 (0 borne
/// off, 1..=24 a point, 25 the bar); missing bytes put checkers on their
/// side's 6-point. A black checker landing where white has checkers goes
/// on to the next point white leaves free. None when a side would have
/// every checker off (no game to play).
pub fn position(data: &[u8]) -> Option<(Board, Dice)> {
    let die = |i: usize| data.get(i).map_or(1, |b| b % 6 + 1);
    let dice = Dice::new(die(0), die(1)).ok()?;
    let mut board = Board::EMPTY;
    let mut places = data.iter().skip(2).map(|b| usize::from(b % 26));
    for _ in 0..15 {
        let place = places.next().unwrap_or(6);
        board.checkers[Seat::White.index()][place] += 1;
    }
    for _ in 0..15 {
        let mut place = places.next().unwrap_or(6);
        // White's number of black's point `p` is 25 - p (off and bar are
        // never shared).
        while (1..=24).contains(&place) && board.checkers[Seat::White.index()][25 - place] > 0 {
            place = if place == 24 { 25 } else { place + 1 };
        }
        board.checkers[Seat::Black.index()][place] += 1;
    }
    if board.off(Seat::White) == 15 || board.off(Seat::Black) == 15 {
        return None;
    }
    Some((board, dice))
}
