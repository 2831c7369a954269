//! GNU Backgammon's own cube analyses of a set of positions, as the
//! tests' worked examples hold them (tests/data/gnubg-cube-hints.txt,
//! made by `scripts/bot-grade/cubehint.py`; the file's README says its
//! format). The cube model's test gives the model gnubg's chances and
//! expects gnubg's equities back; the service's test asks `Hint` about
//! the same positions. Reads text it is given: it never opens a file.

use bg_engine::{Board, Seat, position_id};

use crate::cube::{CubeEquities, CubeOwner, MatchScore, cube_life};
use crate::met::Met;
use crate::search::Evaluation;

/// One position gnubg analysed before the roll, and what it said.
#[derive(Clone, Debug)]
pub struct GnubgCubeHint {
    /// The line it was read from.
    pub line: String,
    /// The position, the roller (White here) on roll.
    pub board: Board,
    /// 0 for money.
    pub match_length: u32,
    /// The roller's score, then the other side's.
    pub score: [u32; 2],
    pub post_crawford: bool,
    pub cube: u32,
    /// The roller owns the cube (else it is centred).
    pub owned: bool,
    pub jacoby: bool,
    /// gnubg's cubeless chances for the roller: win, win gammon, win
    /// backgammon, lose gammon, lose backgammon (gammons counting
    /// backgammons).
    pub chances: [f32; 5],
    /// gnubg's cubeful equities: no double, double/take, double/pass.
    pub equities: [f32; 3],
}

impl GnubgCubeHint {
    /// The examples in `text`, one a line.
    pub fn read(text: &str) -> Result<Vec<GnubgCubeHint>, String> {
        text.lines()
            .filter(|line| !line.trim().is_empty())
            .map(GnubgCubeHint::parse)
            .collect()
    }

    fn parse(line: &str) -> Result<GnubgCubeHint, String> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [
            id,
            length,
            mine,
            theirs,
            post,
            cube,
            owned,
            jacoby,
            numbers @ ..,
        ] = &fields[..]
        else {
            return Err(format!("{line:?}: too few fields"));
        };
        let number = |s: &str| s.parse::<f32>().map_err(|e| format!("{line:?}: {s}: {e}"));
        let whole = |s: &str| s.parse::<u32>().map_err(|e| format!("{line:?}: {s}: {e}"));
        let numbers = numbers
            .iter()
            .map(|s| number(s))
            .collect::<Result<Vec<f32>, String>>()?;
        let [w, wg, wbg, lg, lbg, nd, dt, dp] = numbers[..] else {
            return Err(format!("{line:?}: not 8 chances and equities"));
        };
        Ok(GnubgCubeHint {
            line: line.to_string(),
            board: position_id::decode(id, Seat::White).map_err(|e| format!("{line:?}: {e}"))?,
            match_length: whole(length)?,
            score: [whole(mine)?, whole(theirs)?],
            post_crawford: *post == "1",
            cube: whole(cube)?,
            owned: *owned == "1",
            jacoby: *jacoby == "1",
            chances: [w, wg, wbg, lg, lbg],
            equities: [nd, dt, dp],
        })
    }

    /// gnubg's chances as an evaluation.
    pub fn value(&self) -> Evaluation {
        let outputs = self.chances;
        Evaluation {
            outputs,
            equity: crate::net::equity(&outputs),
        }
    }

    /// The cube model's equities of the roller valued `value` in this
    /// position, at its score and cube.
    pub fn model_s(&self, value: &Evaluation) -> CubeEquities {
        let owner = if self.owned {
            CubeOwner::Me
        } else {
            CubeOwner::Centred
        };
        let life = cube_life(&self.board, Seat::White);
        match Met::built_in() {
            Some(met) if self.match_length > 0 => {
                let away = |score: u32| i64::from(self.match_length) - i64::from(score);
                let score = MatchScore {
                    away: [away(self.score[0]), away(self.score[1])],
                    crawford_played: self.post_crawford,
                };
                CubeEquities::in_match(value, owner, self.cube, score, met, life)
            }
            _ => CubeEquities::money(value, owner, self.cube, self.jacoby, life),
        }
    }
}
